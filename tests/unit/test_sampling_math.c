/* The sampler's own ln and 1 - exp(-x) (preload/sampling_math.h) against
 * libm: the intervals it draws and the weights it gives samples depend on
 * them, and it does without libm so as not to load it into every program.
 * Relative error below 1e-12 over the whole range each is used on: ln of
 * uniforms in (0, 1] down to 2^-53, and 1 - exp(-S/R) from S/R = 2^-40
 * (a 16-byte block at a 16 TiB interval) to 40 (where the sampler stops
 * asking). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "preload/sampling_math.h"

static double rel(double got, double want)
{
	return want == 0 ? fabs(got) : fabs(got - want) / fabs(want);
}

START_TEST(test_ln_against_libm)
{
	uint64_t x = 88172645463325252ull;
	double worst = 0;

	for (int i = 0; i < 2000000; i++) {
		double u, r;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		u = (double)((x >> 11) + 1) * 0x1p-53;
		if (i % 4 == 0)
			u = ldexp(u, -(int)(x % 53)); /* small ones too */
		if (u == 1.0)
			continue;
		r = rel(nsk_ln01(u), log(u));
		if (r > worst)
			worst = r;
	}
	ck_assert_double_eq(nsk_ln01(1.0), 0.0);
	ck_assert_msg(worst < 1e-12, "ln: worst relative error %g", worst);
}
END_TEST

START_TEST(test_one_minus_exp_against_libm)
{
	double worst = 0;

	for (double x = 0x1p-40; x < 40; x *= 1.0001) {
		double r = rel(nsk_one_minus_exp(x), -expm1(-x));

		if (r > worst)
			worst = r;
	}
	ck_assert_msg(worst < 1e-12, "1 - exp(-x): worst relative error %g", worst);
	ck_assert_double_eq(nsk_one_minus_exp(800), 1.0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sampling_math");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_ln_against_libm);
	tcase_add_test(tc, test_one_minus_exp_against_libm);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
