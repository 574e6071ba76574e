/* timed OUT PROGRAM [ARGS...]: runs PROGRAM as a child and writes to OUT
 * the nanoseconds from just before its exec to its exit, and its exit
 * status: the program's own run time, apart from the start-up and
 * shut-down of a tool that launched us (bench/default.sh puts it between
 * each tool and the program; every tool there follows children).
 * A third field: the CPU time (user + system) of the program and every
 * child it waited for, which in-kernel probes are charged to, and which
 * other work on a busy machine disturbs less than the wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long t0, t1, cpu;
	struct rusage ru;
	int status;
	FILE *f;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: timed OUT PROGRAM [ARGS...]\n");
		return 2;
	}
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		;
	t1 = now_ns();
	cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	f = fopen(argv[1], "w");
	if (!f)
		return 127;
	fprintf(f, "%lld %d %lld\n", t1 - t0, WIFEXITED(status) ? WEXITSTATUS(status) : 128,
		cpu);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
