/* vdso_clock: reads CLOCK_MONOTONIC in a loop for SECONDS (default 1), so
 * nearly all of its CPU time is in the vdso's clock_gettime: the kernel's
 * code mapped into the process, with no file behind it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec start, now;
	unsigned long calls = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		clock_gettime(CLOCK_MONOTONIC, &now);
		calls++;
	} while ((double)(now.tv_sec - start.tv_sec) +
			 (double)(now.tv_nsec - start.tv_nsec) / 1e9 < secs);
	printf("%lu calls\n", calls);
	return 0;
}
