/* libFuzzer target for `nusku info`: any bytes as the file it describes,
 * in text, JSON and --chunks form (the last byte picks).  What it prints
 * goes to /dev/null; ASan and UBSan watch the collecting and printing. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/commands.h"
#include "tests/fuzz/fuzz_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = size ? data[size - 1] : 0;
	char path[64], a0[] = "info", a1[] = "--chunks", a2[] = "--format",
	     a3[] = "json";
	char *argv[6] = { a0 };
	int argc = 1, fd, out;

	fd = fuzz_mem__file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	if (mode & 1)
		argv[argc++] = a1;
	if (mode & 2) {
		argv[argc++] = a2;
		argv[argc++] = a3;
	}
	argv[argc++] = path;
	fflush(stdout);
	out = dup(STDOUT_FILENO);
	dup2(fileno(fuzz_mem__null()), STDOUT_FILENO);
	(void)cmd_info(argc, argv);
	fflush(stdout);
	if (out >= 0) {
		dup2(out, STDOUT_FILENO);
		close(out);
	}
	close(fd);
	return 0;
}
