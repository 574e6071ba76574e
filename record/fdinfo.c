/* Names for the fd arguments of slow syscalls (see record/fdinfo.h).
 *
 * The cache is direct-mapped by (pid, fd): a slot remembers the last name
 * /proc gave for that fd and the inode it belonged to, which is what a
 * later event needs once the program has closed the fd.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/fdinfo.h"

#define FDINFO_SLOTS 1024
#define FDINFO_NAME 256

struct fdinfo_slot {
	uint32_t pid;
	int fd;
	uint64_t ino;
	char name[FDINFO_NAME];
};

struct nsk_fdinfo {
	struct fdinfo_slot slots[FDINFO_SLOTS];
};

int nsk_fdinfo__fd_arg(uint32_t nr)
{
	switch (nr) {
	/* The first argument is the fd. */
#define FD0(name) case SYS_##name:
	FD0(read) FD0(write) FD0(pread64) FD0(pwrite64) FD0(readv)
	FD0(writev) FD0(preadv) FD0(pwritev) FD0(preadv2) FD0(pwritev2)
	FD0(fsync) FD0(fdatasync) FD0(sync_file_range) FD0(syncfs)
	FD0(ftruncate) FD0(fallocate) FD0(lseek) FD0(getdents64)
	FD0(ioctl) FD0(fcntl) FD0(flock) FD0(fstatfs)
	FD0(sendto) FD0(recvfrom) FD0(sendmsg) FD0(recvmsg) FD0(sendmmsg)
	FD0(recvmmsg) FD0(connect) FD0(accept) FD0(accept4) FD0(bind)
	FD0(listen) FD0(shutdown) FD0(getsockopt) FD0(setsockopt)
	FD0(epoll_wait) FD0(epoll_pwait) FD0(epoll_ctl) FD0(splice)
	FD0(tee) FD0(copy_file_range) FD0(fadvise64) FD0(readahead)
	FD0(io_uring_enter) FD0(inotify_add_watch)
#ifdef SYS_epoll_pwait2
	FD0(epoll_pwait2)
#endif
#undef FD0
		return 0;
#ifdef SYS_sendfile
	case SYS_sendfile: /* out_fd, in_fd: the file read is the slow one */
		return 1;
#endif
	default:
		return -1;
	}
}

int nsk_fdinfo__new(struct nsk_fdinfo **out)
{
	struct nsk_fdinfo *fi = calloc(1, sizeof(*fi));

	if (!fi)
		return -ENOMEM;
	*out = fi;
	return 0;
}

void nsk_fdinfo__free(struct nsk_fdinfo *fi)
{
	free(fi);
}

static size_t from_bpf(uint64_t ino, uint32_t mode, const char *dname,
		       char *buf, size_t len)
{
	int n;

	switch (mode & S_IFMT) {
	case S_IFSOCK:
		n = snprintf(buf, len, "socket:[%llu]", (unsigned long long)ino);
		break;
	case S_IFIFO:
		n = snprintf(buf, len, "pipe:[%llu]", (unsigned long long)ino);
		break;
	default:
		/* Only the last component is known: say so with ".../". */
		if (dname && *dname)
			n = snprintf(buf, len, ".../%s", dname);
		else
			n = snprintf(buf, len, "inode:[%llu]",
				     (unsigned long long)ino);
		break;
	}
	return n < 0 ? 0 : strnlen(buf, len);
}

size_t nsk_fdinfo__describe(struct nsk_fdinfo *fi, uint32_t pid, int fd,
			    uint64_t ino, uint32_t mode, const char *dname,
			    char *buf, size_t len)
{
	struct fdinfo_slot *slot;
	char path[64];
	struct stat sb;
	ssize_t n;

	if (!len)
		return 0;
	buf[0] = 0;
	if (fd < 0)
		return 0;
	if (!ino) {
		/* Nothing from BPF (an fd that is not the first argument):
		 * /proc alone, unverified. */
		snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
		n = readlink(path, buf, len - 1);
		buf[n > 0 ? n : 0] = 0;
		return n > 0 ? (size_t)n : 0;
	}
	slot = &fi->slots[((uint64_t)pid * 31 + (uint32_t)fd) % FDINFO_SLOTS];
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
	if (stat(path, &sb) == 0 && sb.st_ino == ino) {
		n = readlink(path, slot->name, sizeof(slot->name) - 1);
		if (n > 0) {
			slot->name[n] = 0;
			slot->pid = pid;
			slot->fd = fd;
			slot->ino = ino;
			snprintf(buf, len, "%s", slot->name);
			return strnlen(buf, len);
		}
	}
	if (slot->pid == pid && slot->fd == fd && slot->ino == ino) {
		snprintf(buf, len, "%s", slot->name);
		return strnlen(buf, len);
	}
	return from_bpf(ino, mode, dname, buf, len);
}
