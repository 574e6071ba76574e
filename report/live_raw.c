/* nusku live --raw (live.h): a recording's bytes copied out as they come.
 *
 * What `nusku live FILE|NAME --ssh HOST` runs on HOST: the file is
 * followed there exactly as a local `nusku live FILE` follows it (the
 * source's end rule: no writer left and nothing new), and the view is
 * built here from the stream.  Leaving the view closes the connection;
 * the next write here then fails and this ends, while the session it
 * followed goes on recording. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report/live.h"

static int write_all(const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(STDOUT_FILENO, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int nsk_live__raw(const struct nsk_live_opts *o)
{
	struct nsk_live_source *src = NULL;
	static char buf[1 << 16];
	char err[320] = "";
	struct nsk_io *io;
	int ret = 1;

	if (nsk_live_source__open(o, &src, err, sizeof(err)) < 0)
		goto cleanup;
	io = nsk_live_source__io(src);
	if (!io) {
		snprintf(err, sizeof(err), "out of memory");
		goto cleanup;
	}
	for (;;) {
		ssize_t n = io->read(io->ctx, buf, sizeof(buf));

		if (n == -EAGAIN) {
			poll(NULL, 0, 100); /* a file has nothing to poll on */
			continue;
		}
		if (n < 0) {
			snprintf(err, sizeof(err), "%s: read: %s",
				 nsk_live_source__name(src), strerror((int)-n));
			goto cleanup;
		}
		if (n == 0)
			break;
		if (write_all(buf, (size_t)n) < 0) {
			ret = 0; /* the reader left: what it asked for */
			goto cleanup;
		}
	}
	ret = 0;
cleanup:
	nsk_live_source__free(src);
	if (ret && err[0])
		fprintf(stderr, "nusku live: %s\n", err);
	return ret;
}
