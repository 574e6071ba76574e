/* The statistics of nusku diff (report/diff_stats.c) against values
 * computed independently with python3: Fisher's exact p by exact rational
 * sums of math.comb over every table, Mann-Whitney's U by counting pairs
 * with the same tie and continuity correction (its normal p from
 * math.erfc), and Holm's adjustment by hand. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "report/diff_stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void near(double got, double want)
{
	double tol = fmax(1e-9 * want, 1e-300);

	ck_assert_msg(fabs(got - want) <= tol, "got %.17g, want %.17g", got, want);
}

START_TEST(test_fisher)
{
	/* R's fisher.test(matrix(c(3, 7, 7, 3), 2)): 0.1789 */
	near(nsk_stats__fisher(3, 10, 7, 10), 0.17889540799757517);
	near(nsk_stats__fisher(1, 20, 9, 20), 0.00836173416818578);
	near(nsk_stats__fisher(0, 5, 5, 5), 0.007936507936507936);
	near(nsk_stats__fisher(30, 100, 15, 100), 0.017149022768408403);
	/* 30% against 15% of 2000 samples each */
	near(nsk_stats__fisher(600, 2000, 300, 2000), 3.8646994706239064e-30);
	near(nsk_stats__fisher(10, 10, 0, 10), 1.082508822446903e-05);
	near(nsk_stats__fisher(700, 2500, 760, 2600), 0.3368913479557214);
	/* the same share: nothing to see */
	near(nsk_stats__fisher(50, 1000, 60, 1200), 1.0);
	/* symmetric in the two recordings */
	near(nsk_stats__fisher(300, 2000, 600, 2000), 3.8646994706239064e-30);
	/* degenerate tables */
	ck_assert(nsk_stats__fisher(0, 100, 0, 100) == 1);
	ck_assert(nsk_stats__fisher(0, 0, 5, 10) == 1);
	ck_assert(nsk_stats__fisher(10, 10, 20, 20) == 1);
}
END_TEST

START_TEST(test_fisher_large)
{
	/* millions of samples: finite, tiny, and fast (early stop) */
	double p = nsk_stats__fisher(3000000, 10000000, 3010000, 10000000);

	ck_assert(p > 0 && p < 1e-3);
	ck_assert(nsk_stats__fisher(3000000, 10000000, 3000100, 10000000) > 0.5);
}
END_TEST

START_TEST(test_mann_whitney)
{
	/* 1..5 against 6..10: U = 0 */
	struct nsk_stats_tie a[10];
	/* {1,1,2,2,3,9} against {2,3,3,4,4,4,5}: U = 10 */
	struct nsk_stats_tie b[] = { { 2, 0 }, { 2, 1 }, { 1, 2 }, { 0, 3 },
				     { 0, 1 }, { 1, 0 } };
	/* {5,5,5,6} against {5,6,6,7,7}: U = 3.5 */
	struct nsk_stats_tie c[] = { { 3, 1 }, { 1, 2 }, { 0, 2 } };
	double z;

	for (int i = 0; i < 10; i++)
		a[i] = (struct nsk_stats_tie){ i < 5, i >= 5 };
	near(nsk_stats__mann_whitney(a, N(a), &z), 0.012185780355344818);
	near(z, -2.5067182457620487);
	near(nsk_stats__mann_whitney(b, N(b), &z), 0.12663045794761724);
	near(z, -1.5275252316519465);
	near(nsk_stats__mann_whitney(c, N(c), &z), 0.11614344287756079);
	near(z, -1.5711688096991452);
	/* swapped samples: the same p, z the other way */
	for (int i = 0; i < 10; i++)
		a[i] = (struct nsk_stats_tie){ i >= 5, i < 5 };
	near(nsk_stats__mann_whitney(a, N(a), &z), 0.012185780355344818);
	near(z, 2.5067182457620487);
	/* one tie, or an empty sample */
	c[0] = (struct nsk_stats_tie){ 4, 4 };
	ck_assert(nsk_stats__mann_whitney(c, 1, &z) == 1 && z == 0);
	c[0] = (struct nsk_stats_tie){ 4, 0 };
	ck_assert(nsk_stats__mann_whitney(c, 1, &z) == 1);
}
END_TEST

START_TEST(test_holm)
{
	/* sorted 0.01, 0.02, 0.03, 0.5: x4 0.04, x3 0.06, x2 0.06 (monotone),
	 * x1 0.5 */
	double p[] = { 0.03, 0.5, 0.01, 0.02 };

	ck_assert_int_eq(nsk_stats__holm(p, N(p)), 0);
	near(p[0], 0.06);
	near(p[1], 0.5);
	near(p[2], 0.04);
	near(p[3], 0.06);
	p[0] = 0.4;
	p[1] = 0.9;
	ck_assert_int_eq(nsk_stats__holm(p, 2), 0);
	near(p[0], 0.8);
	near(p[1], 0.9);
	ck_assert_int_eq(nsk_stats__holm(p, 0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("diff_stats");
	TCase *tc = tcase_create("tests");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fisher);
	tcase_add_test(tc, test_fisher_large);
	tcase_add_test(tc, test_mann_whitney);
	tcase_add_test(tc, test_holm);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
