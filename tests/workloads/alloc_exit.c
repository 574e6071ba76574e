/* Memory that outlives its process, and memory that is only reserved:
 * answers known by construction.
 *
 *   alloc_exit fork      the parent allocates 100 x 1000 bytes at
 *                        parent_site and frees them all; child A allocates
 *                        300 x 10000 bytes at child_a_site and exits without
 *                        freeing; once it is gone child B allocates 500 x
 *                        10000 bytes at child_b_site and exits likewise.
 *                        Live at exit: A 3000000 bytes, B 5000000; nothing
 *                        live at the end.
 *   alloc_exit reserve   reserve_site maps 1 GiB PROT_NONE; commit_site
 *                        makes its first 8 MiB writable with mprotect and
 *                        touches them: 8388608 bytes of heap, 1 GiB only
 *                        reserved.
 *   alloc_exit batch     a child allocates 40 x 5000 bytes at
 *                        freed_site, frees them all after its last
 *                        allocation and leaves by _exit: 40 frees, nothing
 *                        live at its exit (the sampler's batch of frees is
 *                        told at _exit, which runs no destructor).
 *   alloc_exit threads   4 threads each allocate 2000 x 100 bytes at
 *                        thread_site and free them all, freeing while the
 *                        others allocate: 8000 frees, nothing live.
 *
 * Nothing here uses stdio, which allocates on its own.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Keep the compiler from removing allocations it can see through. */
static void *volatile sink;

__attribute__((noinline)) static void parent_site(void **v, int n)
{
	for (int i = 0; i < n; i++)
		sink = v[i] = malloc(1000);
}

__attribute__((noinline)) static void child_a_site(void)
{
	for (int i = 0; i < 300; i++)
		sink = malloc(10000);
}

__attribute__((noinline)) static void child_b_site(void)
{
	for (int i = 0; i < 500; i++)
		sink = malloc(10000);
}

static int child(void (*site)(void))
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		site();
		_exit(0);
	}
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? 0 : -1;
}

static int run_fork(void)
{
	void *v[100];

	parent_site(v, 100);
	if (child(child_a_site) || child(child_b_site))
		return 1;
	for (int i = 0; i < 100; i++)
		free(v[i]);
	return 0;
}

#define RESERVE (1UL << 30)
#define COMMIT (8UL << 20)

__attribute__((noinline)) static char *reserve_site(void)
{
	void *p = mmap(NULL, RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

__attribute__((noinline)) static int commit_site(char *p)
{
	if (mprotect(p, COMMIT, PROT_READ | PROT_WRITE))
		return -1;
	memset(p, 1, COMMIT);
	return 0;
}

__attribute__((noinline)) static void freed_site(void **v, int n)
{
	for (int i = 0; i < n; i++)
		sink = v[i] = malloc(5000);
}

static int run_batch(void)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return 1;
	if (pid == 0) {
		void *v[40];

		freed_site(v, 40);
		for (int i = 0; i < 40; i++)
			free(v[i]);
		_exit(0);
	}
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}

__attribute__((noinline)) static void *thread_site(void)
{
	return malloc(100);
}

static void *thread_run(void *arg)
{
	static void *held[4][64];
	void **v = held[(long)arg];

	/* allocate and free in turns of 50, so frees of one thread wait in
	 * the batch while the others allocate */
	for (int round = 0; round < 2000 / 50; round++) {
		for (int i = 0; i < 50; i++)
			sink = v[i] = thread_site();
		for (int i = 0; i < 50; i++)
			free(v[i]);
	}
	return NULL;
}

static int run_threads(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, thread_run, (void *)i))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	char *p;

	if (argc > 1 && !strcmp(argv[1], "fork"))
		return run_fork();
	if (argc > 1 && !strcmp(argv[1], "batch"))
		return run_batch();
	if (argc > 1 && !strcmp(argv[1], "threads"))
		return run_threads();
	if (argc > 1 && !strcmp(argv[1], "reserve")) {
		p = reserve_site();
		return !p || commit_site(p);
	}
	return 2;
}
