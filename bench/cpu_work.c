/* cpu_work: a fixed amount of CPU work for the benchmark, so that a
 * recorder's cost shows as a longer run.  Two threads each run ROUNDS
 * rounds; a round descends a chain of distinct functions (and a recursion)
 * to a realistic stack depth (~25 frames) and burns there.  Prints its own
 * elapsed time and CPU time (getrusage of itself), so that a harness can
 * tell the workload's cost from the recorder's.
 *   cpu_work [ROUNDS]   (default 2000) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile uint64_t sink;
static long rounds = 2000;

__attribute__((noinline)) static void burn(long n, uint64_t mul)
{
	uint64_t x = (uint64_t)n;

	for (long i = 0; i < n; i++) {
		x = x * mul + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

__attribute__((noinline)) static void recurse(int depth, long n, uint64_t mul)
{
	if (depth > 0)
		recurse(depth - 1, n, mul);
	else
		burn(n, mul);
	__asm__ volatile("");
}

#define LEVEL(name, next)                                               \
	__attribute__((noinline)) static void name(int k, long n)       \
	{                                                               \
		if (k % 3 == 0)                                         \
			burn(n / 4, 6364136223846793005ull);            \
		next(k, n);                                             \
		__asm__ volatile("");                                   \
	}

static void leaf(int k, long n)
{
	recurse(8 + k % 4, n, 2862933555777941757ull + (uint64_t)k);
}
LEVEL(level9, leaf)
LEVEL(level8, level9)
LEVEL(level7, level8)
LEVEL(level6, level7)
LEVEL(level5, level6)
LEVEL(level4, level5)
LEVEL(level3, level4)
LEVEL(level2, level3)
LEVEL(level1, level2)

static void *worker(void *arg)
{
	(void)arg;
	for (long r = 0; r < rounds; r++)
		for (int k = 0; k < 8; k++)
			level1(k, 20000);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	pthread_t t;
	double start;

	if (argc > 1)
		rounds = atol(argv[1]);
	start = now();
	if (pthread_create(&t, NULL, worker, NULL)) {
		perror("pthread_create");
		return 1;
	}
	worker(NULL);
	pthread_join(t, NULL);
	getrusage(RUSAGE_SELF, &ru);
	printf("cpu_work: elapsed_us %.0f cpu_us %.0f\n", (now() - start) * 1e6,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return 0;
}
