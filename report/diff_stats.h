/* The statistics of `nusku diff` (report/diff_stats.c): pure functions of
 * counts, no SQL, tested against values computed independently
 * (tests/unit/test_diff_stats.c).
 *
 *   a share:     Fisher's exact test of a 2x2 table (the events of one
 *                key against the rest, in base and in new): exact for any
 *                count, conservative, so a share is compared, not raw
 *                counts of recordings of different lengths;
 *   a duration:  the Mann-Whitney U (rank) test of two samples given as
 *                tie groups (exact durations, or histogram buckets),
 *                normal approximation with tie and continuity correction;
 *   many rows:   Holm's step-down correction of the p-values. */
#ifndef NUSKU_REPORT_DIFF_STATS_H
#define NUSKU_REPORT_DIFF_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Two-sided p of Fisher's exact test of the table
 *     a      A - a
 *     b      B - b
 * (a of A events in base, b of B in new): the probability, with the margins
 * fixed, of every table no more likely than this one.  1 when the table
 * says nothing (a + b = 0, or A or B is 0).  a <= A and b <= B. */
double nsk_stats__fisher(uint64_t a, uint64_t A, uint64_t b, uint64_t B);

/* One value shared by c1 events of the first sample and c2 of the
 * second; groups are given in ascending order of value. */
struct nsk_stats_tie {
	uint64_t c1, c2;
};

/* The Mann-Whitney test of the first sample against the second.  Returns
 * the two-sided p; *z (may be NULL) gets the standardized U of the first
 * sample: > 0 when its values tend to be larger.  p = 1 and z = 0 when
 * either sample is empty or every value is one tie. */
double nsk_stats__mann_whitney(const struct nsk_stats_tie *g, size_t n,
			       double *z);

/* Holm's adjustment of n p-values, in place: each becomes the smallest
 * family-wise level at which its hypothesis is rejected (monotone, at most
 * 1).  0 or -ENOMEM. */
int nsk_stats__holm(double *p, size_t n);

/* Two-sided normal tail: P(|Z| >= |z|). */
double nsk_stats__norm_p(double z);

#endif
