/* cpu_split: one thread burning CPU in shares set on the command line, for
 * nusku diff's tests.
 *
 *   cpu_split PCT [SECONDS]    (PCT 0..40, default 30; SECONDS default 2.5)
 *
 * Each round does 100 units of work: PCT in moved, 40 in steady_a, 20 in
 * steady_b and 40 - PCT in filler.  A unit is the same dependent
 * multiply-add chain in each, so each function's share of the CPU is its
 * share of the units by construction: moving PCT from 30 to 15 halves
 * moved's share, gives filler 15 points more and leaves steady_a (40%) and
 * steady_b (20%) untouched.  The bodies differ in their constants so the
 * compiler cannot fold them into one function.
 *
 * A round is a cycle of those 100 units, begun at a unit drawn at random
 * (and ended just before it): the same units every round, but no fixed
 * phase.  Begun at the same place each round, a round of about twice
 * the sampling period (999 Hz) kept step with the samples for seconds,
 * which then fell on the same part of the round: filler got 7.2% of the
 * samples in one run, 10.7% in the next (nusku diff's "same build"
 * check failed 2 runs in 4 here). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 20000L

static volatile uint64_t sink;

/* Not leaves: gcc drops a leaf's frame pointer even when told not to. */
__attribute__((noinline)) void keep(uint64_t x)
{
	sink = x;
	__asm__ volatile("");
}

#define BURN(n, mul, add)                                                \
	do {                                                             \
		uint64_t x = (n);                                        \
		for (long i = 0; i < (n); i++) {                         \
			x = x * (mul) + (add);                           \
			__asm__ volatile("" : "+r"(x));                  \
		}                                                        \
		keep(x);                                                 \
	} while (0)

__attribute__((noinline)) void moved(long n)
{
	BURN(n, 6364136223846793005ull, 1442695040888963407ull);
}

__attribute__((noinline)) void steady_a(long n)
{
	BURN(n, 2862933555777941757ull, 3037000493ull);
}

__attribute__((noinline)) void steady_b(long n)
{
	BURN(n, 3935559000370003845ull, 2691343689449507681ull);
}

__attribute__((noinline)) void filler(long n)
{
	BURN(n, 2685821657736338717ull, 1181783497276652981ull);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long pct = argc > 1 ? atol(argv[1]) : 30;
	double secs = argc > 2 ? atof(argv[2]) : 2.5, end;
	long rounds = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull;

	if (pct < 0 || pct > 40 || secs <= 0) {
		fprintf(stderr, "usage: cpu_split PCT(0..40) [SECONDS]\n");
		return 2;
	}
	end = now() + secs;
	do {
		void (*const fn[4])(long) = { moved, steady_a, steady_b, filler };
		const long len[4] = { pct, 40, 20, 40 - pct };
		long off, left = 100, n;
		int seg = 0;

		/* xorshift: the unit the round begins at */
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		off = (long)(rng % 100);
		while (off >= len[seg])
			off -= len[seg++];
		for (n = len[seg] - off; left > 0; seg = (seg + 1) % 4, n = len[seg]) {
			if (n > left)
				n = left;
			if (n)
				fn[seg](n * UNIT);
			left -= n;
		}
		rounds++;
	} while (now() < end);
	printf("%ld rounds\n", rounds);
	return 0;
}
