/* For the fuzz targets of the commands' reader paths: the input as a file
 * they can open by name (a memfd, so nothing touches the disk), and a sink
 * for what they print. */
#ifndef NUSKU_TESTS_FUZZ_MEM_H
#define NUSKU_TESTS_FUZZ_MEM_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* A memfd holding data, its name "/proc/self/fd/N" in path; the fd or -1. */
static inline int fuzz_mem__file(const uint8_t *data, size_t size, char *path,
				 size_t len)
{
	int fd = memfd_create("nsk-fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* Where output goes: /dev/null, opened once (the harness keeps stderr). */
static inline FILE *fuzz_mem__null(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

#endif
