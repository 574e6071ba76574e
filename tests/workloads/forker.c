/* forker: CPU burnt in three processes, so a recording can tell them
 * apart.  The parent burns in parent_work, a forked child (no exec) in
 * child_work, and a child that re-executes this program burns in
 * exec_child_work; each for SECONDS.  The parent exits with status 3 when
 * both children succeeded, so a test also sees the status passed through.
 * Usage: forker SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

/* Not leaves, so gcc keeps their frame pointers (see cpu_hot.c). */
__attribute__((noinline)) void keep(uint64_t x)
{
	sink = x;
	__asm__ volatile("");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define BURN_FOR(secs, mul)                                              \
	do {                                                             \
		double end = now() + (secs);                             \
		uint64_t x = 1;                                          \
		while (now() < end)                                      \
			for (int i = 0; i < 100000; i++) {               \
				x = x * (mul) + 1;                       \
				__asm__ volatile("" : "+r"(x));          \
			}                                                \
		keep(x);                                                 \
	} while (0)

__attribute__((noinline)) void parent_work(double s)
{
	BURN_FOR(s, 6364136223846793005ull);
}

__attribute__((noinline)) void child_work(double s)
{
	BURN_FOR(s, 2862933555777941757ull);
}

__attribute__((noinline)) void exec_child_work(double s)
{
	BURN_FOR(s, 3935559000370003845ull);
}

int main(int argc, char **argv)
{
	double s = argc > 1 ? atof(argv[1]) : 1;
	pid_t a, b;
	int st_a = 0, st_b = 0;

	if (argc > 2 && !strcmp(argv[2], "exec-child")) {
		exec_child_work(s);
		return 0;
	}
	a = fork();
	if (a == 0) {
		child_work(s);
		_exit(0);
	}
	b = fork();
	if (b == 0) {
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		/* by its real name, so the new comm is "forker" */
		self[n > 0 ? n : 0] = 0;
		execl(self, argv[0], argc > 1 ? argv[1] : "1", "exec-child",
		      (char *)NULL);
		perror("exec");
		_exit(127);
	}
	if (a < 0 || b < 0) {
		perror("fork");
		return 1;
	}
	parent_work(s);
	waitpid(a, &st_a, 0);
	waitpid(b, &st_b, 0);
	printf("forker: parent %d, child %d, exec child %d\n", (int)getpid(),
	       (int)a, (int)b);
	return st_a == 0 && st_b == 0 ? 3 : 1;
}
