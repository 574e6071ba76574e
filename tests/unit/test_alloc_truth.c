/* Unit tests of memory truth: the loader's live-at-exit rows (a late free
 * after the exit record, an exec, a pid reused), reservations and commits
 * (report/load_alloc.c), and the recorder's reservation set
 * (record/alloc_reserve.c).  Records go straight into the loader. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "record/alloc_reserve.h"
#include "report/db.h"
#include "report/load.h"

static sqlite3 *db;
static struct nsk_load *ld;

static void setup(void)
{
	ck_assert_int_eq(nsk_db__open(&db), 0);
	ck_assert_int_eq(nsk_load__new(db, &ld), 0);
}

static void teardown(void)
{
	nsk_load__free(ld);
	sqlite3_close(db);
}

static void alloc(uint64_t t, uint32_t pid, uint64_t addr, uint64_t size,
		  uint32_t fn)
{
	struct nsk_record r = { .type = NSK_REC_ALLOC };

	r.alloc = (struct nsk_rec_alloc){ .time = t, .pid = pid, .tid = pid,
		.addr = addr, .size = size, .weight = size, .fn = fn };
	ck_assert_int_eq(nsk_load__record(ld, &r), 0);
}

static void release(uint64_t t, uint32_t pid, uint64_t addr, uint64_t size,
		    uint32_t fn)
{
	struct nsk_record r = { .type = NSK_REC_FREE };

	r.free = (struct nsk_rec_free){ .time = t, .pid = pid, .tid = pid,
		.addr = addr, .size = size, .fn = fn };
	ck_assert_int_eq(nsk_load__record(ld, &r), 0);
}

static void exit_of(uint64_t t, uint32_t pid)
{
	struct nsk_record r = { .type = NSK_REC_EXIT };

	r.exit = (struct nsk_rec_exit){ .time = t, .pid = pid, .tid = pid };
	ck_assert_int_eq(nsk_load__record(ld, &r), 0);
}

/* The free row of allocation id, as "fn@time", or "live". */
static const char *fate(int64_t id)
{
	static char buf[64];
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT fn, time FROM free WHERE "
					    "alloc_id = ?", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(buf, sizeof(buf), "%s@%lld", sqlite3_column_text(st, 0),
			 (long long)sqlite3_column_int64(st, 1));
	else
		snprintf(buf, sizeof(buf), "live");
	ck_assert_int_ne(sqlite3_step(st), SQLITE_ROW); /* one fate each */
	sqlite3_finalize(st);
	return buf;
}

static void finish(void)
{
	ck_assert_int_eq(nsk_load__finish(ld, "x", NULL, NULL), 0);
}

#define S 1000000000ull /* one second, in ns */

START_TEST(live_at_exit)
{
	alloc(1 * S, 10, 0x1000, 100, NSK_ALLOC_MALLOC);	/* id 1 */
	alloc(1 * S + 10, 10, 0x2000, 200, NSK_ALLOC_MALLOC);	/* id 2 */
	alloc(1 * S + 20, 10, 0x3000, 4096, NSK_ALLOC_MMAP);	/* id 3 */
	exit_of(2 * S, 10);
	/* drained after the exit record, from the other ring buffer */
	release(1 * S + 50, 10, 0x1000, 0, NSK_ALLOC_FREE);
	/* pid 10 again, a new process: its block at a reused address */
	alloc(3 * S, 10, 0x2000, 300, NSK_ALLOC_MALLOC);	/* id 4 */
	/* another process, still running at the end */
	alloc(3 * S, 11, 0x5000, 50, NSK_ALLOC_MALLOC);	/* id 5 */
	finish();
	ck_assert_str_eq(fate(1), "free@1000000050");
	ck_assert_str_eq(fate(2), "exit@2000000000");
	ck_assert_str_eq(fate(3), "exit@2000000000");
	ck_assert_str_eq(fate(4), "live");
	ck_assert_str_eq(fate(5), "live");
}
END_TEST

START_TEST(exit_waits_for_late_records)
{
	/* an exit is applied once the stream is past it by the margin */
	alloc(1 * S, 10, 0x1000, 100, NSK_ALLOC_MALLOC);	/* id 1 */
	exit_of(2 * S, 10);
	alloc(3 * S, 11, 0x5000, 50, NSK_ALLOC_MALLOC);	/* id 2 */
	ck_assert_str_eq(fate(1), "live");
	alloc(5 * S, 11, 0x6000, 50, NSK_ALLOC_MALLOC);	/* id 3 */
	ck_assert_str_eq(fate(1), "exit@2000000000");
	finish();
}
END_TEST

START_TEST(exec_ends_the_image)
{
	struct nsk_record r = { .type = NSK_REC_PROCESS };

	alloc(1 * S, 30, 0x1000, 100, NSK_ALLOC_MALLOC);	/* id 1 */
	r.process = (struct nsk_rec_process){ .time = 2 * S, .pid = 30,
		.how = NSK_PROC_EXECED };
	ck_assert_int_eq(nsk_load__record(ld, &r), 0);
	alloc(2 * S + 5, 30, 0x1000, 100, NSK_ALLOC_MALLOC);	/* id 2 */
	finish();
	ck_assert_str_eq(fate(1), "exit@2000000000");
	ck_assert_str_eq(fate(2), "live");
}
END_TEST

START_TEST(reservations_and_commits)
{
	uint64_t base = 0x10000000, mib = 1 << 20;

	alloc(1 * S, 20, base, 1024 * mib, NSK_ALLOC_RESERVE);	/* id 1 */
	alloc(1 * S + 1, 20, base, 8 * mib, NSK_ALLOC_MPROTECT);	/* id 2 */
	/* made writable again: the same bytes, not twice */
	alloc(1 * S + 2, 20, base, 8 * mib, NSK_ALLOC_MPROTECT);	/* id 3 */
	alloc(1 * S + 3, 20, base + 8 * mib, mib, NSK_ALLOC_MPROTECT); /* id 4 */
	/* back to PROT_NONE: the commit ends, the reservation stays */
	release(1 * S + 4, 20, base + 8 * mib, mib, NSK_ALLOC_MPROTECT);
	release(1 * S + 5, 20, base, 1024 * mib, NSK_ALLOC_MUNMAP);
	/* a new mapping replaces the regions that start in it */
	alloc(1 * S + 6, 20, base, 64 * mib, NSK_ALLOC_RESERVE);	/* id 5 */
	alloc(1 * S + 7, 20, base, 64 * mib, NSK_ALLOC_MMAP);	/* id 6 */
	finish();
	ck_assert_str_eq(fate(1), "munmap@1000000005");
	ck_assert_str_eq(fate(2), "implied@1000000002");
	ck_assert_str_eq(fate(3), "munmap@1000000005");
	ck_assert_str_eq(fate(4), "mprotect@1000000004");
	ck_assert_str_eq(fate(5), "implied@1000000007");
	ck_assert_str_eq(fate(6), "live");
}
END_TEST

START_TEST(reserve_set)
{
	struct nsk_alloc_reserve set = { 0 };

	ck_assert_int_eq(nsk_alloc_reserve__add(&set, 1, 1000, 1000), 0);
	ck_assert(nsk_alloc_reserve__covers(&set, 1, 1000, 1000));
	ck_assert(!nsk_alloc_reserve__covers(&set, 2, 1000, 10)); /* per pid */
	ck_assert(!nsk_alloc_reserve__covers(&set, 1, 1900, 200));
	ck_assert(nsk_alloc_reserve__meets(&set, 1, 1900, 200));
	/* a hole in the middle splits it */
	ck_assert_int_eq(nsk_alloc_reserve__remove(&set, 1, 1400, 200), 0);
	ck_assert(nsk_alloc_reserve__covers(&set, 1, 1000, 400));
	ck_assert(!nsk_alloc_reserve__meets(&set, 1, 1400, 200));
	ck_assert(nsk_alloc_reserve__covers(&set, 1, 1600, 400));
	/* trimmed at both ends */
	ck_assert_int_eq(nsk_alloc_reserve__remove(&set, 1, 900, 200), 0);
	ck_assert_int_eq(nsk_alloc_reserve__remove(&set, 1, 1900, 500), 0);
	ck_assert(!nsk_alloc_reserve__meets(&set, 1, 900, 200));
	ck_assert(nsk_alloc_reserve__covers(&set, 1, 1100, 300));
	ck_assert(nsk_alloc_reserve__covers(&set, 1, 1600, 300));
	ck_assert(!nsk_alloc_reserve__meets(&set, 1, 1900, 500));
	/* no overflow at the top of the address space */
	ck_assert_int_eq(nsk_alloc_reserve__add(&set, 3, UINT64_MAX - 10, 100), 0);
	ck_assert(nsk_alloc_reserve__covers(&set, 3, UINT64_MAX - 5, 1));
	nsk_alloc_reserve__forget(&set, 1);
	ck_assert(!nsk_alloc_reserve__meets(&set, 1, 0, UINT64_MAX));
	ck_assert(nsk_alloc_reserve__meets(&set, 3, 0, UINT64_MAX));
	nsk_alloc_reserve__release(&set);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("alloc-truth");
	TCase *tc = tcase_create("load");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, live_at_exit);
	tcase_add_test(tc, exit_waits_for_late_records);
	tcase_add_test(tc, exec_ends_the_image);
	tcase_add_test(tc, reservations_and_commits);
	suite_add_tcase(s, tc);
	tc = tcase_create("reserve");
	tcase_add_test(tc, reserve_set);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
