/* Opening a recording to read (include/nusku/infile.h): never blocked
 * by a FIFO without a writer, never reading a device.  Beside outfile.c
 * in format/, the room info, report and live all stand on. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nusku/infile.h>

int nsk_infile__open(const char *path, int timeout_ms, int *is_fifo,
		     char *err, size_t errlen)
{
	struct pollfd pfd;
	struct stat st;
	int fd, res, n;

	if (is_fifo)
		*is_fifo = 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		res = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-res));
		return res;
	}
	if (fstat(fd, &st) < 0) {
		res = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-res));
		goto fail;
	}
	if (S_ISFIFO(st.st_mode)) {
		if (is_fifo)
			*is_fifo = 1;
		/* A FIFO's poll says POLLIN at the first byte and POLLHUP
		 * only after a writer came and went: no writer, no event. */
		pfd.fd = fd;
		pfd.events = POLLIN;
		do
			n = poll(&pfd, 1, timeout_ms);
		while (n < 0 && errno == EINTR);
		if (n <= 0) {
			res = n < 0 ? -errno : -ETIMEDOUT;
			snprintf(err, errlen, "%s is a FIFO and nothing was "
				 "written to it in %d s (no writer?)", path,
				 timeout_ms / 1000);
			goto fail;
		}
	} else if (!S_ISREG(st.st_mode)) {
		res = -EINVAL;
		snprintf(err, errlen, "%s is not a regular file or a FIFO",
			 path);
		goto fail;
	}
	/* Reads wait for data from here on, as on any pipe or file. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		res = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-res));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return res;
}
