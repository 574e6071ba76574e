/* The set of process ids (record/pidset.c): members found, removed ones
 * gone, removals and re-adds over many rounds (tombstones reused and
 * dropped by rebuilds), against a plain array as the oracle; and a set of
 * processes that come and go keeps the size of those alive at once. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "record/pidset.h"

START_TEST(test_against_an_array)
{
	static uint8_t in[1 << 16];
	struct nsk_pidset s = { 0 };
	uint64_t x = 88172645463325252ull;

	for (int round = 0; round < 200000; round++) {
		uint32_t pid;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		pid = (uint32_t)(x % (1 << 16));
		if (x >> 63) {
			ck_assert_int_eq(nsk_pidset__add(&s, pid), 0);
			in[pid] = pid != 0;
		} else {
			nsk_pidset__remove(&s, pid);
			in[pid] = 0;
		}
		if (round % 1000 == 0)
			for (uint32_t p = 0; p < (1 << 16); p += 97)
				ck_assert_int_eq(nsk_pidset__has(&s, p), in[p]);
	}
	for (uint32_t p = 0; p < (1 << 16); p++)
		ck_assert_int_eq(nsk_pidset__has(&s, p), in[p]);
	ck_assert_int_eq(nsk_pidset__has(&s, UINT32_MAX), 0);
	ck_assert_int_eq(nsk_pidset__add(&s, UINT32_MAX - 1), 0);
	ck_assert_int_eq(nsk_pidset__has(&s, UINT32_MAX - 1), 0);
	nsk_pidset__free(&s);
	ck_assert_int_eq(nsk_pidset__has(&s, 5), 0);
}
END_TEST

/* 100,000 processes, at most 8 alive at once: the set stays small (it
 * grew by doubling at every rebuild, with the tombstones of the dead). */
START_TEST(test_comings_and_goings)
{
	struct nsk_pidset s = { 0 };

	for (uint32_t pid = 1; pid <= 100000; pid++) {
		ck_assert_int_eq(nsk_pidset__add(&s, pid), 0);
		if (pid > 8)
			nsk_pidset__remove(&s, pid - 8);
		ck_assert_int_eq(nsk_pidset__has(&s, pid), 1);
	}
	for (uint32_t pid = 1; pid <= 100000; pid++)
		ck_assert_int_eq(nsk_pidset__has(&s, pid), pid > 100000 - 8);
	ck_assert_uint_le(s.n, 64);
	nsk_pidset__free(&s);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("pidset");
	TCase *tc = tcase_create("pidset");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_against_an_array);
	tcase_add_test(tc, test_comings_and_goings);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
