/* Allocation-heavy workload for bench/alloc.sh: N malloc/free pairs over a
 * sliding window of live blocks, sizes 16..1039 bytes from a fixed
 * pseudo-random sequence, so every run does the same work.
 *
 *   alloc_churn [N]      (default 1000000)
 *
 * It prints nothing; its run time is the measurement.
 */
#include <stdint.h>
#include <stdlib.h>

#define WINDOW 4096

static void *volatile sink;

__attribute__((noinline)) static void *churn_alloc(size_t n)
{
	return malloc(n);
}

int main(int argc, char **argv)
{
	static void *live[WINDOW];
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	uint32_t x = 12345;

	for (long i = 0; i < n; i++) {
		size_t k = (size_t)i % WINDOW;

		x = x * 1103515245u + 12345u;
		free(live[k]);
		live[k] = churn_alloc(16 + ((x >> 16) & 1023));
		sink = live[k];
	}
	for (size_t k = 0; k < WINDOW; k++)
		free(live[k]);
	return 0;
}
