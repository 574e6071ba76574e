/* Opening a recording to read, without hanging on what is not a file.
 *
 * info, report and live take a path from the user.  open() of a FIFO
 * with no writer blocks until one comes, maybe forever, and a device
 * (/dev/tty, a tape) is nothing to read a recording from.  So the path
 * is opened O_NONBLOCK | O_NOCTTY; a regular file is read as usual, a
 * FIFO is given timeout_ms for its writer's first bytes, and anything
 * else is refused.
 */
#ifndef NUSKU_INFILE_H
#define NUSKU_INFILE_H

#include <stddef.h>

/* The default wait for a FIFO's writer. */
#define NSK_INFILE_FIFO_WAIT_MS 5000

/* A blocking, close-on-exec descriptor on path, or a negative errno with a
 * one-line message in err: -EINVAL not a regular file or a FIFO,
 * -ETIMEDOUT a FIFO whose writer sent nothing in timeout_ms, or open()'s
 * error.  *is_fifo (may be NULL) says which it was. */
int nsk_infile__open(const char *path, int timeout_ms, int *is_fifo,
		     char *err, size_t errlen);

#endif
