/* The live views on a database with known rows: each view's first row and
 * numbers, the "last window" cut, the thread filter, the sort orders, and
 * "no data" for a signal whose tables are missing or empty.
 *
 * The schema is the report's own (nsk_schema__create); a signal table the
 * schema does not have yet is created here with the columns the live view
 * reads, so this test fails as soon as a landed schema and the live view
 * disagree. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "report/db.h"
#include "report/live_db.h"
#include "report/schema.h"
#include "tests/report/synth.h"

static struct nsk_live_db ldb;

static void exec(const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(ldb.sql, sql, NULL, NULL, &msg) != SQLITE_OK)
		ck_abort_msg("%s: %s", sql, msg);
}

static int has(const char *table)
{
	sqlite3_stmt *st;
	int found;

	sqlite3_prepare_v2(ldb.sql, "SELECT 1 FROM sqlite_master WHERE name = ?",
			   -1, &st, NULL);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

#define S 1000000000ll /* ns in a second */

static void setup(void)
{
	char *msg = NULL;

	memset(&ldb, 0, sizeof(ldb));
	ck_assert_int_eq(nsk_db__open(&ldb.sql), 0);
	ck_assert_int_eq(nsk_schema__create(ldb.sql, &msg), 0);
	/* Functions: main, work_a, work_b, malloc (libc); stacks leaf first. */
	exec("INSERT INTO func VALUES (1, 'main', 'app', 0, 0),"
	     "(2, 'work_a', 'app', 0, 0), (3, 'work_b', 'app', 0, 0),"
	     "(4, 'malloc', 'libc.so.6', 0, 0)");
	exec("INSERT INTO stack (id, leaf_func_id) VALUES (1, 2), (2, 3), "
	     "(3, 4), (4, 4)");
	exec("INSERT INTO stack_frame (stack_id, pos, func_id) VALUES "
	     "(1, 0, 2), (1, 1, 1), (2, 0, 3), (2, 1, 1), "
	     "(3, 0, 4), (3, 1, 2), (3, 2, 1), (4, 0, 4), (4, 1, 3), (4, 2, 1)");
	exec("INSERT INTO comm VALUES (1, 'app'), (2, 'worker')");
	ldb.last_time = 10 * S;
}

static void teardown(void)
{
	sqlite3_close(ldb.sql);
}

static void query(int view, int sort, uint32_t tid, struct nsk_live_table *t)
{
	struct nsk_live_query q = { .view = view, .sort = sort, .tid = tid,
				    .window_ns = 2 * S, .limit = 10 };

	ck_assert_int_eq(nsk_live_view__query(&ldb, &q, t), 0);
}

START_TEST(test_no_data)
{
	struct nsk_live_table t;

	for (int v = 0; v < NSK_LIVE_NVIEWS; v++) {
		query(v, 0, 0, &t);
		ck_assert_int_eq(t.nrows, 0);
		ck_assert_msg(strstr(t.note, "no data for this signal in this recording"),
			      "view %d: %s", v, t.note);
		nsk_live_table__release(&t);
	}
}
END_TEST

START_TEST(test_cpu)
{
	struct nsk_live_table t;

	/* Overall: work_a 6 ms, work_b 4 ms; last 2 s: work_b 3, work_a 1. */
	exec("INSERT INTO sample (time, pid, tid, stack_id, weight) VALUES "
	     "(1000000000, 1, 1, 1, 5000000), (9000000000, 1, 1, 1, 1000000),"
	     "(2000000000, 1, 2, 2, 1000000), (9500000000, 1, 2, 2, 3000000)");
	query(NSK_LIVE_CPU, 0, 0, &t);
	ck_assert_int_eq(t.nrows, 2);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 3), "work_b");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 0), "75.0%");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 1), "40.0%");
	nsk_live_table__release(&t);
	query(NSK_LIVE_CPU, 1, 0, &t);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 3), "work_a");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 1), "60.0%");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 2), "6.0ms");
	nsk_live_table__release(&t);
	query(NSK_LIVE_CPU, 0, 1, &t); /* thread 1 only */
	ck_assert_int_eq(t.nrows, 1);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 3), "work_a");
	nsk_live_table__release(&t);
}
END_TEST

/* The tables of the allocation signal, when the schema has not made them. */
static void alloc_tables(void)
{
	if (!has("alloc"))
		exec("CREATE TABLE alloc (id INTEGER PRIMARY KEY, time INTEGER, "
		     "pid INTEGER, tid INTEGER, comm_id INTEGER, addr INTEGER, "
		     "size INTEGER, weight INTEGER, stack_id INTEGER, fn TEXT)");
	if (!has("free"))
		exec("CREATE TABLE free (time INTEGER, pid INTEGER, tid INTEGER, "
		     "comm_id INTEGER, addr INTEGER, size INTEGER, fn TEXT, "
		     "alloc_id INTEGER)");
}

START_TEST(test_alloc)
{
	struct nsk_live_table t;

	alloc_tables();
	/* work_a (through malloc): 1000 live + 500 freed; work_b: 300 live,
	 * allocated in the last window; a failed call counts nowhere. */
	exec("INSERT INTO alloc (id, time, pid, tid, addr, size, weight, stack_id) "
	     "VALUES (1, 1000000000, 1, 1, 4096, 1000, 1000, 3),"
	     "(2, 2000000000, 1, 1, 8192, 500, 500, 3),"
	     "(3, 9000000000, 1, 2, 12288, 300, 300, 4),"
	     "(4, 9000000000, 1, 2, 0, 99999, 99999, 4)");
	exec("INSERT INTO free (time, pid, tid, addr, alloc_id) VALUES "
	     "(9500000000, 1, 1, 8192, 2)");
	query(NSK_LIVE_ALLOC, 0, 0, &t);
	ck_assert_int_eq(t.nrows, 2);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 4), "work_a");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 0), "1000B");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 1), "-500B");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 2), "1.5K");
	nsk_live_table__release(&t);
	query(NSK_LIVE_ALLOC, 1, 0, &t); /* by growth */
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 4), "work_b");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 1), "+300B");
	nsk_live_table__release(&t);
}
END_TEST

/* The recording names its allocator (meta alloc.allocator, a library no
 * list knows): its frames are not the site, in live as in report. */
START_TEST(test_alloc_allocator)
{
	struct nsk_live_table t;

	alloc_tables();
	exec("INSERT INTO meta (key, value) VALUES ('alloc.allocator', "
	     "'/opt/lib/libpoolalloc.so.2')");
	exec("INSERT INTO func VALUES (5, 'pool_get', 'libpoolalloc.so.2', 0, 0)");
	exec("INSERT INTO stack (id, leaf_func_id) VALUES (5, 5)");
	exec("INSERT INTO stack_frame (stack_id, pos, func_id) VALUES "
	     "(5, 0, 5), (5, 1, 3), (5, 2, 1)");
	exec("INSERT INTO alloc (id, time, pid, tid, addr, size, weight, stack_id) "
	     "VALUES (1, 1000000000, 1, 1, 4096, 700, 700, 5)");
	query(NSK_LIVE_ALLOC, 0, 0, &t);
	ck_assert_int_eq(t.nrows, 1);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 4), "work_b");
	nsk_live_table__release(&t);
}
END_TEST

START_TEST(test_offcpu)
{
	struct nsk_live_table t;

	if (!has("offcpu"))
		exec("CREATE TABLE offcpu (time INTEGER, duration INTEGER, "
		     "pid INTEGER, tid INTEGER, comm_id INTEGER, reason TEXT, "
		     "stack_id INTEGER)");
	/* Thread 2 blocked 3 s overall, 1.5 s of it lately, on a lock last. */
	exec("INSERT INTO offcpu (time, duration, pid, tid, comm_id, reason, stack_id) "
	     "VALUES (1000000000, 1500000000, 1, 2, 2, 'disk', 1),"
	     "(8500000000, 1500000000, 1, 2, 2, 'lock', 1),"
	     "(9000000000, 100000000, 1, 1, 1, 'sleep', 2)");
	query(NSK_LIVE_OFFCPU, 0, 0, &t);
	ck_assert_int_eq(t.nrows, 2);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 0), "2");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 2), "3.00s");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 3), "lock");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 5), "worker");
	nsk_live_table__release(&t);
}
END_TEST

START_TEST(test_syscall)
{
	struct nsk_live_table t;

	if (!has("syscall_stat"))
		exec("CREATE TABLE syscall_stat (time INTEGER, pid INTEGER, "
		     "tid INTEGER, comm_id INTEGER, nr INTEGER, stack_id INTEGER, "
		     "window_ns INTEGER, count INTEGER, errors INTEGER, "
		     "total_ns INTEGER, max_ns INTEGER)");
	/* read (0): 10 calls, max 5 ms; write (1): 2 calls, max 20 ms. */
	exec("INSERT INTO syscall_stat (time, pid, tid, nr, count, errors, "
	     "total_ns, max_ns) VALUES (9000000000, 1, 1, 0, 10, 1, 20000000, 5000000),"
	     "(3000000000, 1, 1, 1, 2, 0, 30000000, 20000000)");
	query(NSK_LIVE_SYSCALL, 0, 0, &t);
	ck_assert_int_eq(t.nrows, 2);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 6), "write");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 0), "20.0ms");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 1), "-");
	nsk_live_table__release(&t);
	query(NSK_LIVE_SYSCALL, 2, 0, &t); /* by calls */
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 6), "read");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 4), "1");
	nsk_live_table__release(&t);
}
END_TEST

static long long rows(const char *table)
{
	char sql[64];
	sqlite3_stmt *st;
	long long n;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	sqlite3_prepare_v2(ldb.sql, sql, -1, &st, NULL);
	sqlite3_step(st);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* Rows the running totals hold and no window reaches go (live_agg.c): the
 * views then answer as they did with every row, and a block allocated
 * early and freed late still leaves the live bytes. */
START_TEST(test_prune)
{
	struct nsk_live_table t;

	alloc_tables();
	/* the first turn: events up to 2 s */
	exec("INSERT INTO sample (time, pid, tid, stack_id, weight) VALUES "
	     "(1000000000, 1, 1, 1, 5000000), (2000000000, 1, 2, 2, 1000000)");
	exec("INSERT INTO alloc (id, time, pid, tid, addr, size, weight, stack_id) "
	     "VALUES (1, 1000000000, 1, 1, 4096, 1000, 1000, 3),"
	     "(2, 1500000000, 1, 1, 8192, 500, 500, 3),"
	     "(3, 1600000000, 1, 2, 0, 99999, 99999, 4)");
	exec("INSERT INTO free (time, pid, tid, addr, alloc_id) VALUES "
	     "(1800000000, 1, 1, 8192, 2)");
	ldb.last_time = 2 * S;
	ck_assert_int_eq(nsk_live_agg__prune(&ldb, 1 * S), 0);
	ck_assert_int_eq(rows("sample"), 2); /* no mark before the window yet */
	/* the second turn: up to 10 s; block 1 freed now */
	exec("INSERT INTO sample (time, pid, tid, stack_id, weight) VALUES "
	     "(9000000000, 1, 1, 1, 1000000), (9500000000, 1, 2, 2, 3000000)");
	exec("INSERT INTO alloc (id, time, pid, tid, addr, size, weight, stack_id) "
	     "VALUES (4, 9000000000, 1, 2, 12288, 300, 300, 4)");
	exec("INSERT INTO free (time, pid, tid, addr, alloc_id) VALUES "
	     "(9500000000, 1, 1, 4096, 1)");
	ldb.last_time = 10 * S;
	ck_assert_int_eq(nsk_live_agg__prune(&ldb, 3 * S), 0);
	/* what the first turn brought is summed and before 7 s: gone, but
	 * block 1 (freed in the window) and the window's rows */
	ck_assert_int_eq(rows("sample"), 2);
	ck_assert_int_eq(rows("free"), 1);
	ck_assert_int_eq(rows("alloc"), 2);
	/* the numbers of test_cpu: overall work_a 6 ms, work_b 4 ms, the
	 * last 2 s work_b 3 of 4 */
	query(NSK_LIVE_CPU, 0, 0, &t);
	ck_assert_int_eq(t.nrows, 2);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 3), "work_b");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 0), "75.0%");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 1), "40.0%");
	nsk_live_table__release(&t);
	/* memory: work_a 1500 allocated, nothing live (freed in the window:
	 * -1000 growth); work_b 300 live */
	query(NSK_LIVE_ALLOC, 0, 0, &t);
	ck_assert_int_eq(t.nrows, 2);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 4), "work_b");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 0), "300B");
	ck_assert_str_eq(nsk_live_table__cell(&t, 1, 4), "work_a");
	ck_assert_str_eq(nsk_live_table__cell(&t, 1, 0), "0B");
	ck_assert_str_eq(nsk_live_table__cell(&t, 1, 1), "-1000B");
	ck_assert_str_eq(nsk_live_table__cell(&t, 1, 2), "1.5K");
	nsk_live_table__release(&t);
}
END_TEST

/* live DIR following a continuous recording into the segment of another
 * recorder run (its ids numbered from 1 again): both runs' stacks and
 * mappings stay apart, as report DIR keeps them (load_runs.c). */
static void run_file(char *path, const char *func, const char *module,
		     uint64_t t0, uint64_t n)
{
	struct nsk_writer *w;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(synth__open(path, &w), 0);
	ck_assert_int_eq(synth__run(w, t0, 1700000000000000000ull + t0, func,
				    module, n), 0);
	ck_assert_int_eq(nsk_writer__close(w), 0);
}

static void pump_file(struct nsk_live_db *db, const char *path)
{
	struct nsk_reader *r = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), res;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(nsk_reader__new(nsk_io__from_fd(fd, 1), NULL, &r), 0);
	while ((res = nsk_live_db__pump(db, r, 50000000ull)) == 1)
		;
	ck_assert_int_eq(res, -ENODATA); /* the segment's END */
	nsk_reader__free(r);
}

START_TEST(test_two_runs)
{
	char a[] = "/tmp/nsk-live-run-a.XXXXXX", b[] = "/tmp/nsk-live-run-b.XXXXXX";
	struct nsk_live_db *db;
	sqlite3_stmt *st;
	char got[256] = "";

	run_file(a, "alpha", "/bin/a", 1000000000ull, 3);
	run_file(b, "beta", "/bin/b", 5000000000ull, 5);
	ck_assert_int_eq(nsk_live_db__new(&db), 0);
	nsk_live_db__keep(db, 100 * S);
	ck_assert_int_eq(nsk_live_db__follow_segments(db), 0);
	pump_file(db, a);
	ck_assert_int_eq(nsk_live_db__next_segment(db, 1), 0);
	pump_file(db, b);
	ck_assert_int_eq(nsk_live_db__end(db), 0);
	ck_assert_int_eq(sqlite3_prepare_v2(db->sql,
		"SELECT group_concat(x, ';') FROM (SELECT f.name || ' ' || "
		"f.module || ' ' || count(*) AS x FROM sample s JOIN stack t ON "
		"t.id = s.stack_id JOIN func f ON f.id = t.leaf_func_id GROUP BY "
		"f.id ORDER BY f.name) UNION ALL SELECT group_concat(path, ';') "
		"FROM (SELECT path FROM stack ORDER BY id) UNION ALL SELECT "
		"count(*) FROM mapping", -1, &st, NULL), SQLITE_OK);
	for (size_t n = 0; sqlite3_step(st) == SQLITE_ROW;)
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s|",
				      (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	ck_assert_str_eq(got, "alpha /bin/a 3;beta /bin/b 5|main;alpha;main;beta|2|");
	nsk_live_db__free(db);
	unlink(a);
	unlink(b);
}
END_TEST

START_TEST(test_net)
{
	struct nsk_live_table t;

	if (!has("conn"))
		exec("CREATE TABLE conn (id INTEGER PRIMARY KEY, family INTEGER, "
		     "local TEXT, remote TEXT, pid INTEGER, tid INTEGER, "
		     "comm_id INTEGER, state TEXT, first_time INTEGER, "
		     "last_time INTEGER)");
	if (!has("retransmit"))
		exec("CREATE TABLE retransmit (time INTEGER, pid INTEGER, "
		     "tid INTEGER, comm_id INTEGER, conn_id INTEGER, kind TEXT, "
		     "state TEXT, srtt_us INTEGER, rto_us INTEGER)");
	exec("INSERT INTO conn (id, local, remote, pid, tid, comm_id, state, "
	     "first_time, last_time) VALUES "
	     "(1, '10.0.0.1:5000', '10.0.0.2:80', 1, 1, 1, 'ESTABLISHED', 1, 2),"
	     "(2, '10.0.0.1:5001', '10.0.0.3:80', 1, 1, 1, 'ESTABLISHED', 1, 2)");
	exec("INSERT INTO retransmit (time, pid, tid, conn_id, rto_us) VALUES "
	     "(9000000000, 1, 1, 2, 200000), (9100000000, 1, 1, 2, 400000),"
	     "(1000000000, 1, 1, 1, 200000)");
	query(NSK_LIVE_NET, 0, 0, &t);
	ck_assert_int_eq(t.nrows, 2);
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 5), "10.0.0.1:5001 > 10.0.0.3:80");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 0), "2");
	ck_assert_str_eq(nsk_live_table__cell(&t, 0, 2), "400.0ms");
	ck_assert_str_eq(nsk_live_table__cell(&t, 1, 1), "1");
	nsk_live_table__release(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("live_views");
	TCase *tc = tcase_create("views");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_no_data);
	tcase_add_test(tc, test_cpu);
	tcase_add_test(tc, test_alloc);
	tcase_add_test(tc, test_alloc_allocator);
	tcase_add_test(tc, test_offcpu);
	tcase_add_test(tc, test_syscall);
	tcase_add_test(tc, test_net);
	tcase_add_test(tc, test_prune);
	suite_add_tcase(s, tc);
	tc = tcase_create("runs");
	tcase_add_test(tc, test_two_runs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
