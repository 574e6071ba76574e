/* The tests behind nusku diff's verdicts (report/diff_stats.h).  Fisher's
 * test sums hypergeometric probabilities from the observed table outward
 * and stops when the terms no longer change the sum: they fall
 * geometrically away from the mode, so a table of millions of events costs
 * a few thousand terms. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "report/diff_stats.h"

double nsk_stats__norm_p(double z)
{
	return erfc(fabs(z) / sqrt(2.0));
}

static double lchoose(double n, double k)
{
	return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

/* log P(X = x) of the hypergeometric law: x of the k marked events fall in
 * the first row of A, of N in all. */
struct hyper {
	double A, k, N, lnorm;
};

static double lpmf(const struct hyper *h, double x)
{
	return lchoose(h->k, x) + lchoose(h->N - h->k, h->A - x) - h->lnorm;
}

/* Sum of exp(lpmf(x) - ref) from x in steps of dir to end (inclusive),
 * stopped when a term is negligible: the terms fall monotonically away
 * from the mode, which every caller starts beyond. */
static double tail(const struct hyper *h, double x, double end, int dir,
		   double ref)
{
	double s = 0;

	for (;; x += dir) {
		double t = exp(lpmf(h, x) - ref);

		s += t;
		if (t < 1e-17 * s || x == end)
			break;
	}
	return s;
}

double nsk_stats__fisher(uint64_t a, uint64_t A, uint64_t b, uint64_t B)
{
	struct hyper h;
	double lo, hi, mode, x = (double)a, lobs, cut, s, l, r, p;

	if (!A || !B || a + b == 0 || a > A || b > B)
		return 1;
	h.A = (double)A;
	h.k = (double)(a + b);
	h.N = (double)A + (double)B;
	h.lnorm = lchoose(h.N, h.A);
	lo = h.k - (double)B > 0 ? h.k - (double)B : 0;
	hi = h.k < h.A ? h.k : h.A;
	mode = floor((h.k + 1) * (h.A + 1) / (h.N + 2));
	if (mode > hi)
		mode = hi;
	if (mode < lo)
		mode = lo;
	lobs = lpmf(&h, x);
	/* tables as likely as this one up to rounding count as as likely */
	cut = lobs + 1e-7;
	if (x == mode || lpmf(&h, mode) <= cut)
		return 1;
	/* this side: from x outward */
	s = tail(&h, x, x < mode ? lo : hi, x < mode ? -1 : 1, lobs);
	/* the other side: the first value past the mode no more likely than
	 * x (binary search: monotone there), then outward */
	if (x < mode && lpmf(&h, hi) <= cut) {
		l = mode; /* more likely than x */
		r = hi;	  /* no more likely */
		while (r - l > 1) {
			double m = floor((l + r) / 2);

			if (lpmf(&h, m) <= cut)
				r = m;
			else
				l = m;
		}
		s += tail(&h, r, hi, 1, lobs);
	} else if (x > mode && lpmf(&h, lo) <= cut) {
		l = lo;
		r = mode;
		while (r - l > 1) {
			double m = floor((l + r) / 2);

			if (lpmf(&h, m) <= cut)
				l = m;
			else
				r = m;
		}
		s += tail(&h, l, lo, -1, lobs);
	}
	p = exp(lobs) * s;
	return p < 1 ? p : 1;
}

double nsk_stats__mann_whitney(const struct nsk_stats_tie *g, size_t n,
			       double *z)
{
	double n1 = 0, n2 = 0, N, r1 = 0, below = 0, ties = 0, u, var, d;

	if (z)
		*z = 0;
	for (size_t i = 0; i < n; i++) {
		n1 += (double)g[i].c1;
		n2 += (double)g[i].c2;
	}
	N = n1 + n2;
	if (n1 == 0 || n2 == 0)
		return 1;
	for (size_t i = 0; i < n; i++) {
		double t = (double)g[i].c1 + (double)g[i].c2;

		/* the group's ranks are below + 1 .. below + t: their mean */
		r1 += (double)g[i].c1 * (below + (t + 1) / 2);
		ties += t * t * t - t;
		below += t;
	}
	u = r1 - n1 * (n1 + 1) / 2;
	var = n1 * n2 / 12 * ((N + 1) - ties / (N * (N - 1)));
	if (!(var > 0))
		return 1;
	d = u - n1 * n2 / 2;
	/* continuity correction: half a unit towards the mean */
	d = d > 0.5 ? d - 0.5 : d < -0.5 ? d + 0.5 : 0;
	if (z)
		*z = d / sqrt(var);
	return nsk_stats__norm_p(d / sqrt(var));
}

static int cmp_idx(const void *x, const void *y, void *arg)
{
	const double *p = arg;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;

	return p[i] < p[j] ? -1 : p[i] > p[j] ? 1 : (i > j) - (i < j);
}

int nsk_stats__holm(double *p, size_t n)
{
	size_t *idx;
	double run = 0;

	if (!n)
		return 0;
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_idx, p);
	for (size_t j = 0; j < n; j++) {
		double q = (double)(n - j) * p[idx[j]];

		if (q > 1)
			q = 1;
		if (q > run)
			run = q;
		p[idx[j]] = run;
	}
	free(idx);
	return 0;
}
