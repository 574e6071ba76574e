/* cpu_hot: three functions burning CPU in known proportions, 60/30/10.
 *
 * Each round calls hot_a for 6 units of work, hot_b for 3 and hot_c for 1;
 * a unit is the same dependent multiply-add chain in each, so the CPU time
 * of each function is its share of the units by construction.  hot_c is
 * reached through dispatch_c, a helper marked always_inline: it exists in
 * the binary only as an inlined frame inside worker.  Two threads run the
 * rounds.  Usage: cpu_hot SECONDS (default 3).  At the end it prints the
 * rounds done per second, so a benchmark can see what a profiler costs it.
 *
 * The three bodies differ in their constants so the compiler cannot fold
 * them into one function (identical code folding).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 20000L

static volatile uint64_t sink;

/* The hot functions call this so they are not leaves: gcc 12 drops the
 * frame pointer of a leaf even with -fno-omit-frame-pointer, and a
 * frame-pointer walk then loses the leaf's caller. */
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

__attribute__((noinline)) void hot_a(long n)
{
	BURN(n, 6364136223846793005ull, 1442695040888963407ull);
}

__attribute__((noinline)) void hot_b(long n)
{
	BURN(n, 2862933555777941757ull, 3037000493ull);
}

__attribute__((noinline)) void hot_c(long n)
{
	BURN(n, 3935559000370003845ull, 2691343689449507681ull);
}

static inline __attribute__((always_inline)) void dispatch_c(long n)
{
	hot_c(n);
	__asm__ volatile(""); /* keep the call a call, not a tail jump */
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double seconds = 3;
static long rounds;

/* One round: the cycle of 10 units (6 in hot_a, 3 in hot_b, 1 in hot_c)
 * begun at unit off and ended just before it, so the units are the same
 * every round but the phase is not (as in cpu_split.c): begun at the same
 * place each time, a round near a whole number of sampling periods keeps
 * step with the samples for a while, and hot_a got 65.2% of a CI run's
 * samples.  A macro, not a function: the stacks stay worker -> hot_a and
 * worker -> dispatch_c (inline) -> hot_c, with no frame of its own. */
#define ONE_ROUND(off)                                                      \
	do {                                                                \
		static const long len_[3] = { 6, 3, 1 };                    \
		long o_ = (off), left_ = 10, n_;                            \
		int seg_ = 0;                                               \
                                                                            \
		while (o_ >= len_[seg_])                                    \
			o_ -= len_[seg_++];                                 \
		for (n_ = len_[seg_] - o_; left_ > 0;                       \
		     seg_ = (seg_ + 1) % 3, n_ = len_[seg_]) {              \
			if (n_ > left_)                                     \
				n_ = left_;                                 \
			if (seg_ == 0)                                      \
				hot_a(n_ * UNIT);                           \
			else if (seg_ == 1)                                 \
				hot_b(n_ * UNIT);                           \
			else                                                \
				dispatch_c(n_ * UNIT);                      \
			left_ -= n_;                                        \
		}                                                           \
	} while (0)

__attribute__((noinline)) static void *worker(void *arg)
{
	double end = now() + seconds;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&end;
	long n = 0;

	(void)arg;
	while (now() < end) {
		for (int r = 0; r < 10; r++) {
			/* xorshift: the unit the round begins at */
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			ONE_ROUND((long)(rng % 10));
		}
		n += 10;
	}
	__atomic_add_fetch(&rounds, n, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (pthread_create(&t, NULL, worker, NULL)) {
		perror("pthread_create");
		return 1;
	}
	worker(NULL);
	pthread_join(t, NULL);
	printf("cpu_hot: %.0f rounds/s\n", rounds / seconds);
	return 0;
}
