/* The syscall-heavy loop the syscall benchmark times: N getpid through
 * syscall(2) (no libc caching), timed inside the process with the vDSO
 * clock so a tool's start-up and tear-down are not counted.
 *
 *   sc_loop N      prints "ns_per_call X" (wall clock) and
 *                  "cpu_ns_per_call Y" (the thread's CPU time, which a
 *                  loaded machine inflates much less) on stdout
 *
 * With SC_WAIT_FILE set, it waits for that file to exist before starting,
 * so a tool that attaches to a running pid can be ready first.  With
 * SC_MIX set, the N calls are getpid, a 4 KiB read of /dev/zero and a
 * 4 KiB write to /dev/null in turn (calls that spend longer in the kernel,
 * so a sampler of syscall time takes more stacks). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
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
	int mix = getenv("SC_MIX") != NULL, zero = -1, null = -1;
	static char buf[4096];
	double t0, t1, c0, c1;

	if (n <= 0) {
		fprintf(stderr, "usage: sc_loop N\n");
		return 2;
	}
	if (mix && ((zero = open("/dev/zero", O_RDONLY)) < 0 ||
		    (null = open("/dev/null", O_WRONLY)) < 0)) {
		perror("sc_loop: /dev/zero, /dev/null");
		return 1;
	}
	while (wait && access(wait, F_OK))
		usleep(10000);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++) {
		if (!mix || i % 3 == 0)
			syscall(SYS_getpid);
		else if (i % 3 == 1)
			syscall(SYS_read, zero, buf, sizeof(buf));
		else
			syscall(SYS_write, null, buf, sizeof(buf));
	}
	t1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	printf("ns_per_call %.1f\ncpu_ns_per_call %.1f\n", (t1 - t0) / n,
	       (c1 - c0) / n);
	return 0;
}
