/* A program that is gone about a millisecond after its exec: three
 * allocation sites of known counts and sizes, and a hot function.
 *
 *   site_small: 64 x 48 bytes, freed      site_medium: 16 x 4000, freed
 *   site_large: 4 x 100000, never freed   burn: ~1 ms of arithmetic
 *
 * Run many times in a row (sh loop) it gives a recording whose every frame
 * is known, from processes that live shorter than any /proc read after the
 * fact would take.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *keep[128];
static int nkeep;
volatile unsigned long sink;

/* The compiler may not elide a malloc/free pair it can see through. */
__attribute__((noinline)) static void touch(char *p, size_t n)
{
	memset(p, 1, n);
	__asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void site_small(void)
{
	for (int i = 0; i < 64; i++) {
		char *p = malloc(48);

		touch(p, 48);
		free(p);
	}
}

__attribute__((noinline)) static void site_medium(void)
{
	for (int i = 0; i < 16; i++) {
		char *p = malloc(4000);

		touch(p, 4000);
		free(p);
	}
}

__attribute__((noinline)) static void site_large(void)
{
	for (int i = 0; i < 4; i++) {
		keep[nkeep] = malloc(100000);
		touch(keep[nkeep], 100000);
		nkeep++;
	}
}

__attribute__((noinline)) static void burn(void)
{
	struct timespec t0, t;
	unsigned long x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink += x;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000l + (t.tv_nsec - t0.tv_nsec) < 1000000l);
}

int main(void)
{
	site_small();
	site_medium();
	site_large();
	burn();
	return 0;
}
