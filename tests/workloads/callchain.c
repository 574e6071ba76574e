/* callchain: main -> outer -> inner -> leaf, where leaf spends its time
 * half in its own loop and half inside libc's memset.
 *
 * Built twice (tests/Makefile block "tests: unwind"): with frame pointers
 * and with -fomit-frame-pointer.  Every CPU sample taken in leaf or in the
 * memset it calls must show the same path in both builds; a frame-pointer
 * walk gets the second build wrong, and gets even the first wrong inside
 * memset, whose Debian build keeps no frame pointer (leaf's frame is
 * skipped).  Usage: callchain SECONDS (default 2) of CPU time, so a busy
 * machine stretches the run instead of thinning the samples.
 */
#include <stdint.h>
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

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2, end = cpu_now() + seconds;

	for (int round = 0; cpu_now() < end; round++)
		outer(round);
	return 0;
}
