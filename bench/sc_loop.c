/* The syscall-heavy loop the syscall benchmark times: N getpid through
 * syscall(2) (no libc caching), timed inside the process with the vDSO
 * clock so a tool's start-up and tear-down are not counted.
 *
 *   sc_loop N      prints "ns_per_call X" (wall clock) and
 *                  "cpu_ns_per_call Y" (the thread's CPU time, which a
 *                  loaded machine inflates much less) on stdout
 *
 * With SC_WAIT_FILE set, it waits for that file to exist before starting,
 * so a tool that attaches to a running pid can be ready first. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *wait = getenv("SC_WAIT_FILE");
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	double t0, t1, c0, c1;

	if (n <= 0) {
		fprintf(stderr, "usage: sc_loop N\n");
		return 2;
	}
	while (wait && access(wait, F_OK))
		usleep(10000);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	t1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	printf("ns_per_call %.1f\ncpu_ns_per_call %.1f\n", (t1 - t0) / n,
	       (c1 - c0) / n);
	return 0;
}
