/* The recorder's table of file descriptors (see fdtable.h). */
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "record/fdtable.h"

#define NSK_FDTABLE_SLOTS 4096

void nsk_fdtable__reserve(void)
{
	struct rlimit rl;
	rlim_t slots = NSK_FDTABLE_SLOTS;
	int src, fd;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < slots)
		slots = rl.rlim_cur;
	if (slots < 2)
		return;
	src = eventfd(0, EFD_CLOEXEC); /* any descriptor of our own */
	if (src < 0)
		return;
	/* the lowest free descriptor at or above slots - 1: the table grows
	 * to hold it, and keeps that size once it is closed */
	fd = fcntl(src, F_DUPFD_CLOEXEC, (int)(slots - 1));
	if (fd >= 0)
		close(fd);
	close(src);
}
