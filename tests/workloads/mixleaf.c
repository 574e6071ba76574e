/* mixleaf: one hot leaf, two callers, 70% and 30% of its calls.
 *
 * Built with -O2 -fno-omit-frame-pointer, as a program that keeps frame
 * pointers is: gcc still sets up no frame in a leaf (mix_leaf has no push
 * %rbp), so a sample inside it has rbp pointing at its caller's frame, and
 * a frame-pointer walk from there skips that caller.  Every call does the
 * same work, and caller_a makes 7 of every 10 calls, so by construction
 * 70% of mix_leaf's samples have caller_a as its caller and 30% caller_b.
 * Usage: mixleaf SECONDS (default 2) of CPU time.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

/* The leaf: no calls, so no frame. */
__attribute__((noipa)) uint64_t mix_leaf(uint64_t x)
{
	for (int i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + (uint64_t)i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* The callers add to sink after the call, so the call is no tail call. */
__attribute__((noipa)) void caller_a(uint64_t x)
{
	sink += mix_leaf(x);
}

__attribute__((noipa)) void caller_b(uint64_t x)
{
	sink += mix_leaf(x ^ 1);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = cpu_now() + (argc > 1 ? atof(argv[1]) : 2);

	for (uint64_t round = 0; cpu_now() < end; round++)
		for (int i = 0; i < 10; i++) {
			if (i < 7)
				caller_a(round + (uint64_t)i);
			else
				caller_b(round + (uint64_t)i);
		}
	return 0;
}
