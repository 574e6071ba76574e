/* Allocation workload with answers known by construction.
 *
 *   alloc_sites [SCALE] [--wait]
 *
 * With SCALE = s (default 1), each site below runs s times its base count:
 *
 *   site_small    malloc(64)  x 1000s, all freed after the loop (peak 64000s)
 *   site_calloc   calloc(10, 100) x 300s, freed one by one (peak 1000)
 *   site_aligned  posix_memalign(64, 256) x 200s, then aligned_alloc(64, 256)
 *                 x 200s: 400s blocks of 256 bytes, all freed
 *   site_leak     malloc(1000) x 10s, never freed: the leak (10000s bytes)
 *   site_grow     realloc(NULL, 16) then realloc doubling to 8192: 10
 *                 allocations, 16368 bytes, freed at the end by realloc(p, 0)
 *   site_fail     malloc, calloc (overflowing) and posix_memalign of
 *                 impossible sizes: 3 failed calls, no bytes (not scaled)
 *   site_thread   from two threads, malloc(128) x 1000s each, all freed
 *   site_mmap     3 anonymous mmaps of 1 MiB, 2 unmapped: 1 MiB stays
 *                 (not scaled)
 *
 * With --wait (attach tests), site_pre first allocates 100 x 512 bytes, the
 * program writes "ready\n" on stdout and waits for a byte on stdin; after it
 * frees the pre blocks and runs the sites.  Nothing here uses stdio, which
 * allocates on its own.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long scale = 1;

/* Keep the compiler from removing allocations it can see through. */
static void *volatile sink;

__attribute__((noinline)) static void site_small(void)
{
	long n = 1000 * scale;
	void **v = malloc(n * sizeof(*v)); /* one more: 8000s bytes */

	for (long i = 0; i < n; i++)
		sink = v[i] = malloc(64);
	for (long i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

__attribute__((noinline)) static void site_calloc(void)
{
	for (long i = 0; i < 300 * scale; i++) {
		sink = calloc(10, 100);
		free(sink);
	}
}

__attribute__((noinline)) static void site_aligned(void)
{
	for (long i = 0; i < 200 * scale; i++) {
		void *p = NULL;

		if (posix_memalign(&p, 64, 256) == 0)
			free(p);
		sink = aligned_alloc(64, 256);
		free(sink);
	}
}

__attribute__((noinline)) static void site_leak(void)
{
	for (long i = 0; i < 10 * scale; i++)
		sink = malloc(1000);
}

__attribute__((noinline)) static void site_grow(void)
{
	void *p = NULL;

	for (size_t sz = 16; sz <= 8192; sz *= 2) {
		void *q = realloc(p, sz);

		if (!q)
			break;
		p = q;
		memset(p, 1, sz);
	}
	sink = realloc(p, 0); /* glibc: frees p, returns NULL */
}

/* Sizes the compiler cannot see, so it does not warn or fold the calls. */
static volatile size_t huge = (size_t)-1 / 2;

__attribute__((noinline)) static void site_fail(void)
{
	void *p = NULL;

	sink = malloc(huge);
	sink = calloc(huge, 4); /* the product overflows */
	if (posix_memalign(&p, 64, huge) == 0)
		free(p);
}

__attribute__((noinline)) static void site_thread(void)
{
	for (long i = 0; i < 1000 * scale; i++) {
		void *p = malloc(128); /* a local: sink is shared by the threads */

		sink = p;
		free(p);
	}
}

__attribute__((noinline)) static void site_mmap(void)
{
	void *m[3];

	for (int i = 0; i < 3; i++) {
		m[i] = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m[i] == MAP_FAILED)
			_exit(1);
	}
	munmap(m[0], 1 << 20);
	munmap(m[2], 1 << 20);
	sink = m[1];
}

static void *thread_main(void *arg)
{
	(void)arg;
	site_thread();
	return NULL;
}

__attribute__((noinline)) static void **site_pre(void)
{
	void **v = malloc(100 * sizeof(*v));

	for (int i = 0; i < 100 && v; i++)
		v[i] = malloc(512);
	return v;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;
	void **pre = NULL;
	int wait = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else
			scale = atol(argv[i]) > 0 ? atol(argv[i]) : 1;
	}
	if (wait) {
		char c;

		pre = site_pre();
		if (write(1, "ready\n", 6) != 6 || read(0, &c, 1) != 1)
			return 1;
		for (int i = 0; i < 100 && pre; i++)
			free(pre[i]);
		free(pre);
	}
	site_small();
	site_calloc();
	site_aligned();
	site_leak();
	site_grow();
	site_fail();
	site_mmap();
	if (pthread_create(&t1, NULL, thread_main, NULL) ||
	    pthread_create(&t2, NULL, thread_main, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return 0;
}
