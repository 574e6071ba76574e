/* The two functions of libm the sampler needs (preload/sampler.c), here
 * so tests/unit/test_sampling_math can hold them against libm.
 */
#ifndef NUSKU_PRELOAD_SAMPLING_MATH_H
#define NUSKU_PRELOAD_SAMPLING_MATH_H

#include <stdint.h>

/* The two functions of libm wanted here, to within 1e-12 or so: linking
 * libm would load it into every program launched, most of which never
 * use it.  ln(u) for u in (0, 1]: u = m 2^e with m in [sqrt(1/2),
 * sqrt(2)), ln m = 2 atanh((m - 1) / (m + 1)) by its series. */
static inline double nsk_ln01(double u)
{
	union { double d; uint64_t b; } v = { .d = u };
	int e = (int)((v.b >> 52) & 0x7ff) - 1023;
	double m, s, s2, sum;

	v.b = (v.b & ((1ull << 52) - 1)) | (1023ull << 52); /* m in [1, 2) */
	m = v.d;
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	s = (m - 1) / (m + 1);
	s2 = s * s;
	sum = 1.0 / 15;
	for (int k = 13; k >= 1; k -= 2)
		sum = 1.0 / k + s2 * sum;
	return 2 * s * sum + e * 0.6931471805599453;
}

/* 1 - exp(-x) for x >= 0, accurate for small x too (libm's -expm1(-x)). */
static inline double nsk_one_minus_exp(double x)
{
	double t, sum;
	int k;

	if (x < 0.5) { /* x - x^2/2! + x^3/3! - ..., 14 terms */
		sum = 0;
		for (k = 14; k >= 1; k--)
			sum = x / k * (1 - sum);
		return sum;
	}
	if (x > 700)
		return 1;
	/* exp(-x) = 2^-n exp(-r), r in [0, ln 2) */
	k = (int)(x / 0.6931471805599453);
	t = x - k * 0.6931471805599453;
	sum = 1;
	for (int i = 20; i >= 1; i--)
		sum = 1 - t / i * sum;
	while (k-- > 0)
		sum *= 0.5;
	return 1 - sum;
}

#endif
