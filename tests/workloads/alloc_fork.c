/* alloc_fork: allocations in a process, in a child it forks, and in a
 * grandchild made by a raw clone(2) (no fork handlers run), none of which
 * exec (tests/e2e/alloc_fork.sh).
 *
 *   alloc_fork N
 *
 * Each process makes N allocations of 1000 bytes at its own site
 * (site_parent, site_child, site_clone) and frees them, in rounds of 64,
 * then holds one block of 7000 bytes at site_kept until it exits.  The
 * parent first allocates, then forks, so the child starts from a process
 * whose probe points have been hit.  It prints the three pids and exits
 * with 0 when both descendants exited with 0 (a descendant killed by a
 * signal shows in the status).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

/* Not leaves, and not tail calls: each is its own frame in the stack. */
__attribute__((noinline)) void *site_parent(size_t n) { void *p = malloc(n); sink = p; return p; }
__attribute__((noinline)) void *site_child(size_t n) { void *p = malloc(n); sink = p; return p; }
__attribute__((noinline)) void *site_clone(size_t n) { void *p = malloc(n); sink = p; return p; }
__attribute__((noinline)) void *site_kept(size_t n) { void *p = malloc(n); sink = p; return p; }

static void churn(long n, void *(*site)(size_t))
{
	void *v[64];

	for (long done = 0; done < n;) {
		int k = 0;

		for (; k < 64 && done < n; k++, done++)
			v[k] = site(1000);
		while (k > 0)
			free(v[--k]);
	}
}

static int reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	void *kept;
	pid_t child, clone_pid;
	int bad = 0;

	churn(n, site_parent);
	kept = site_kept(7000);
	fflush(stdout);
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		void *mine = site_kept(7000);

		churn(n, site_child);
		/* a raw clone: glibc's fork handlers do not run in it */
		clone_pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
		if (clone_pid < 0)
			_exit(2);
		if (clone_pid == 0) {
			void *its = site_kept(7000);

			churn(n, site_clone);
			sink = its;
			_exit(0);
		}
		bad = reap(clone_pid);
		printf("alloc_fork: child %d, clone %d\n", (int)getpid(), (int)clone_pid);
		fflush(stdout);
		sink = mine;
		_exit(bad);
	}
	bad = reap(child);
	printf("alloc_fork: parent %d\n", (int)getpid());
	sink = kept;
	return bad;
}
