/* What a file descriptor argument of a slow syscall refers to.
 *
 * The recorder names the file or socket behind the fd of a slow call
 * ("/var/lib/db/wal", "socket:[1234]", "pipe:[99]").  /proc/PID/fd/N is read
 * at event time, which is a little after the call returned: by then the fd
 * may be closed or reused, so the name is taken only when that entry still
 * names the inode the BPF side saw, else the last name seen for the same
 * (pid, fd, inode) is reused, else a name is built from what BPF read (the
 * dentry's own name, or the kind and inode for pipes and sockets).
 */
#ifndef NUSKU_RECORD_FDINFO_H
#define NUSKU_RECORD_FDINFO_H

#include <stddef.h>
#include <stdint.h>

/* Which argument of syscall nr (this architecture) is an fd: 0..5, or -1
 * when none is. */
int nsk_fdinfo__fd_arg(uint32_t nr);

struct nsk_fdinfo;

int nsk_fdinfo__new(struct nsk_fdinfo **out);
void nsk_fdinfo__free(struct nsk_fdinfo *fi); /* NULL is fine */

/* Writes the name of fd of pid into buf (always NUL-terminated).  ino, mode
 * and dname are what BPF read from the fd table at the call's exit; ino 0:
 * BPF read nothing, /proc is read unverified.  Returns the length, 0 if
 * nothing is known. */
size_t nsk_fdinfo__describe(struct nsk_fdinfo *fi, uint32_t pid, int fd,
			    uint64_t ino, uint32_t mode, const char *dname,
			    char *buf, size_t len);

#endif
