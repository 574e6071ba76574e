/* callchain: main -> outer -> inner -> leaf, where leaf spends its time
 * half in its own loop and half inside libc's memset.
 *
 * Built twice (tests/Makefile block "tests: unwind"): with frame pointers
 * and with -fomit-frame-pointer.  Every CPU sample taken in leaf or in the
 * memset it calls must show the same path in both builds; a frame-pointer
 * walk gets the second build wrong, and gets even the first wrong inside
 * memset, whose Debian build keeps no frame pointer (leaf's frame is
 * skipped).  Usage: callchain SECONDS (default 2) of CPU time, so a busy
 * machine stretches the run instead of thinning the samples; or
 * callchain -n ROUNDS, a fixed amount of work that prints the CPU and
 * elapsed time it took (for bench/unwind.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;
static char buf[1 << 15];

__attribute__((noipa)) void leaf(int round)
{
	uint64_t x = (uint64_t)round;

	for (int i = 0; i < 2000; i++) {
		memset(buf, round + i, sizeof(buf));
		for (int j = 0; j < 1500; j++) {
			x = x * 6364136223846793005ull + (uint64_t)buf[j];
			__asm__ volatile("" : "+r"(x));
		}
	}
	sink = x;
}

__attribute__((noipa)) void inner(int round)
{
	leaf(round + 1);
	sink++;
}

__attribute__((noipa)) void outer(int round)
{
	inner(round + 1);
	sink++;
}

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end, t0 = now(CLOCK_MONOTONIC);

	if (argc > 2 && argv[1][0] == '-' && argv[1][1] == 'n') {
		long rounds = atol(argv[2]);

		for (int round = 0; round < rounds; round++)
			outer(round);
		printf("callchain: cpu_us %.0f elapsed_us %.0f\n",
		       now(CLOCK_PROCESS_CPUTIME_ID) * 1e6,
		       (now(CLOCK_MONOTONIC) - t0) * 1e6);
		return 0;
	}
	end = now(CLOCK_PROCESS_CPUTIME_ID) + (argc > 1 ? atof(argv[1]) : 2);
	for (int round = 0; now(CLOCK_PROCESS_CPUTIME_ID) < end; round++)
		outer(round);
	return 0;
}
