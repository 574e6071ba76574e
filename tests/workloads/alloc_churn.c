/* Allocation-heavy workload for bench/alloc.sh: N malloc/free pairs over a
 * sliding window of live blocks, sizes 16..1039 bytes from a fixed
 * pseudo-random sequence, so every run does the same work.
 *
 *   alloc_churn [N] [--wait]      (default N = 1000000)
 *
 * It times its own loop and prints "alloc_churn: N pairs in T us" on
 * stdout, so a tool's start-up and shutdown are not counted.  With --wait it
 * first reads a byte from stdin (a tool attaching with -p gets ready).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 4096

static void *volatile sink;

__attribute__((noinline)) static void *churn_alloc(size_t n)
{
	return malloc(n);
}

int main(int argc, char **argv)
{
	static void *live[WINDOW];
	long n = 1000000;
	uint32_t x = 12345;
	struct timespec t0, t1;
	char line[96];
	int len;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait")) {
			char c;

			if (read(0, &c, 1) != 1)
				return 1;
		} else {
			n = atol(argv[i]);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);

	for (long i = 0; i < n; i++) {
		size_t k = (size_t)i % WINDOW;

		x = x * 1103515245u + 12345u;
		free(live[k]);
		live[k] = churn_alloc(16 + ((x >> 16) & 1023));
		sink = live[k];
	}
	for (size_t k = 0; k < WINDOW; k++)
		free(live[k]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* snprintf + write: stdio's buffer would be one more allocation. */
	len = snprintf(line, sizeof(line), "alloc_churn: %ld pairs in %lld us\n", n,
		       (long long)((t1.tv_sec - t0.tv_sec) * 1000000LL +
				   (t1.tv_nsec - t0.tv_nsec) / 1000));
	return write(1, line, (size_t)len) == len ? 0 : 1;
}
