/* Unit tests of nusku report: a synthetic recording with known samples and
 * stacks (tests/report/synth.c: an inline frame, recursion, a frame without
 * a symbol, an unknown frame id, an unknown stack id, losses) goes through
 * the real writer and reader into the loader, and every view's output is
 * compared exactly with the answer known by construction. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/db.h"
#include "report/idmap.h"
#include "report/load.h"
#include "report/report.h"
#include "tests/report/synth.h"

static char path[64];
static sqlite3 *db;
static struct nsk_report_opts opts;
static struct nsk_report rep;
static char *out;
static size_t outlen;

static void write_known(const char *p, int with_end)
{
	struct nsk_writer *w;

	ck_assert_int_eq(synth__open(p, &w), 0);
	ck_assert_int_eq(synth__known(w, with_end), 0);
	ck_assert_int_eq(nsk_writer__close(w), 0);
}

static void setup(void)
{
	char msg[256];
	int fd;

	snprintf(path, sizeof(path), "/tmp/nsk-report-test.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	write_known(path, 1);
	ck_assert_int_eq(nsk_db__open(&db), 0);
	ck_assert_msg(!nsk_load__file(db, path, msg, sizeof(msg)), "%s", msg);
	memset(&opts, 0, sizeof(opts));
	opts.since = opts.until = -1;
	opts.limit = -1;
	memset(&rep, 0, sizeof(rep));
	rep.db = db;
	rep.opts = &opts;
	rep.out.fmt = NSK_FMT_CSV;
	rep.out.width = 80;
}

static void teardown(void)
{
	sqlite3_close(db);
	unlink(path);
	free(out);
	out = NULL;
}

/* Runs a view (NULL: --sql/--tree/--folded by the flags) into out. */
static void run(const char *view, int mode)
{
	const struct nsk_view *v = nsk_view__find(view ? view : "function");
	int err;

	ck_assert_ptr_nonnull(v);
	free(out);
	out = NULL;
	rep.out.f = open_memstream(&out, &outlen);
	ck_assert_ptr_nonnull(rep.out.f);
	ck_assert_int_eq(nsk_filter__apply(&rep), 0);
	if (mode == 't')
		err = nsk_stacks__tree(&rep, v);
	else if (mode == 'f')
		err = nsk_stacks__folded(&rep, v);
	else
		err = v->run(&rep, v);
	fclose(rep.out.f);
	ck_assert_msg(!err, "view failed: %s", rep.err);
}

static void run_sql(const char *sql)
{
	free(out);
	out = NULL;
	rep.out.f = open_memstream(&out, &outlen);
	ck_assert_int_eq(nsk_filter__apply(&rep), 0);
	ck_assert_msg(!nsk_report__sql(&rep, sql), "%s", rep.err);
	fclose(rep.out.f);
}

static int64_t info(const char *key)
{
	return nsk_report__info(&rep, key);
}

START_TEST(function_view)
{
	run("function", 0);
	ck_assert_str_eq(out,
		"self_samples,self_pct,total_samples,total_pct,function,module\n"
		"43,43,53,53,hot_a,cpu_hot\n"
		"20,20,20,20,hot_b,cpu_hot\n"
		"10,10,10,10,helper,cpu_hot\n"
		"10,10,10,10,libc.so.6+0x1234,libc.so.6\n"
		"10,10,10,10,recurse,cpu_hot\n"
		"5,5,5,5,[unknown frame 99],\n"
		"2,2,2,2,[unknown stack 77],\n"
		"0,0,98,98,__libc_start_main,libc.so.6\n"
		"0,0,98,98,main,cpu_hot\n"
		"0,0,10,10,hot_c,cpu_hot\n");
}
END_TEST

START_TEST(counts_and_unresolved)
{
	ck_assert_int_eq(info("unresolved_frames"), 1); /* libc+0x1234 */
	ck_assert_int_eq(info("unknown_frames"), 1);	/* 99 */
	ck_assert_int_eq(info("unknown_stacks"), 1);	/* 77 */
	ck_assert_int_eq(info("ended"), 1);
	ck_assert_int_eq(info("truncated_bytes"), 0);
	ck_assert_int_eq(info("truncated_stack_events"), 10); /* S4 */
	ck_assert_int_eq(info("no_stack_events"), 0);
	ck_assert_int_eq(info("time_start_ns"), SYNTH_T0);
	ck_assert_int_eq(info("time_end_ns"), SYNTH_T0 + 1000000000);
	run_sql("SELECT source, sum(count) AS n FROM loss GROUP BY source "
		"ORDER BY source");
	ck_assert_str_eq(out, "source,n\ncpu.ringbuf,7\ncpu.stack,3\n");
	/* the inline frame has a row of its own, above its parent */
	run_sql("SELECT pos, level, f.name, inlined FROM stack_frame sf "
		"JOIN func f ON f.id = sf.func_id WHERE stack_id = 3 ORDER BY pos");
	ck_assert_str_eq(out, "pos,level,name,inlined\n0,0,helper,1\n"
			 "1,0,hot_c,0\n2,1,main,0\n3,2,__libc_start_main,0\n");
}
END_TEST

START_TEST(stack_view)
{
	run("stack", 0);
	ck_assert_str_eq(out,
		"samples,pct,chain,function,module,path\n"
		"43,43,hot_a <- main <- __libc_start_main,hot_a,cpu_hot,"
		"__libc_start_main;main;hot_a\n"
		"20,20,hot_b <- main <- __libc_start_main,hot_b,cpu_hot,"
		"__libc_start_main;main;hot_b\n"
		"10,10,libc.so.6+0x1234 <- hot_a <- main <- __libc_start_main,"
		"libc.so.6+0x1234,libc.so.6,"
		"__libc_start_main;main;hot_a;libc.so.6+0x1234\n"
		"10,10,helper <- hot_c <- main <- __libc_start_main,helper,cpu_hot,"
		"__libc_start_main;main;hot_c;helper\n"
		"10,10,recurse <- recurse <- recurse <- main <- __libc_start_main,"
		"recurse,cpu_hot,__libc_start_main;main;recurse;recurse;recurse\n"
		"5,5,[unknown frame 99] <- main <- __libc_start_main,"
		"[unknown frame 99],,__libc_start_main;main;[unknown frame 99]\n"
		"2,2,[unknown stack 77],[unknown stack 77],,[unknown stack 77]\n");
}
END_TEST

START_TEST(stack_view_text_cut)
{
	rep.out.fmt = NSK_FMT_TEXT;
	rep.out.width = 50;
	run("stack", 0);
	/* a chain keeps its leaf end and loses its root end */
	ck_assert_ptr_nonnull(strstr(out, "     10  10.00%  recurse <- recurse <- "
				     "recurse ...\n"));
}
END_TEST

START_TEST(folded)
{
	run(NULL, 'f');
	ck_assert_str_eq(out,
		/* the process is the root: "other" does not merge in */
		"cpu_hot;__libc_start_main;main;[unknown frame 99] 5\n"
		"cpu_hot;__libc_start_main;main;hot_a 40\n"
		"cpu_hot;__libc_start_main;main;hot_a;libc.so.6+0x1234 10\n"
		"cpu_hot;__libc_start_main;main;hot_b 20\n"
		"cpu_hot;__libc_start_main;main;hot_c;helper 10\n"
		"cpu_hot;__libc_start_main;main;recurse;recurse;recurse 10\n"
		"other;[unknown stack 77] 2\n"
		"other;__libc_start_main;main;hot_a 3\n");
}
END_TEST

START_TEST(tree)
{
	run(NULL, 't');
	ck_assert_str_eq(out,
		"total_samples,total_pct,self_samples,self_pct,depth,function,"
		"module,id,parent\n"
		"98,98,0,0,0,__libc_start_main,libc.so.6,1,\n"
		"98,98,0,0,1,main,cpu_hot,2,1\n"
		"53,53,43,43,2,hot_a,cpu_hot,3,2\n"
		"10,10,10,10,3,libc.so.6+0x1234,libc.so.6,10,3\n"
		"20,20,20,20,2,hot_b,cpu_hot,4,2\n"
		"10,10,0,0,2,hot_c,cpu_hot,5,2\n"
		"10,10,10,10,3,helper,cpu_hot,6,5\n"
		"10,10,0,0,2,recurse,cpu_hot,7,2\n"
		"10,10,0,0,3,recurse,cpu_hot,8,7\n"
		"10,10,10,10,4,recurse,cpu_hot,9,8\n"
		"5,5,5,5,2,[unknown frame 99],,11,2\n"
		"2,2,2,2,0,[unknown stack 77],,12,\n");
	/* pruned under 6% */
	opts.min_pct = 6;
	run(NULL, 't');
	ck_assert_ptr_null(strstr(out, "unknown"));
}
END_TEST

START_TEST(filters)
{
	opts.pids = "200";
	run("function", 0);
	ck_assert_str_eq(out,
		"self_samples,self_pct,total_samples,total_pct,function,module\n"
		"3,60,3,60,hot_a,cpu_hot\n"
		"2,40,2,40,[unknown stack 77],\n"
		"0,0,3,60,__libc_start_main,libc.so.6\n"
		"0,0,3,60,main,cpu_hot\n");
	opts.pids = NULL;
	opts.tids = "101";
	run_sql("SELECT count(*) AS n FROM f_sample");
	ck_assert_str_eq(out, "n\n25\n");
	opts.tids = NULL;
	opts.comms = "worker";
	run_sql("SELECT count(*) AS n FROM f_sample");
	ck_assert_str_eq(out, "n\n25\n");
	opts.comms = "cpu_hot,other";
	run_sql("SELECT count(*) AS n FROM f_sample");
	ck_assert_str_eq(out, "n\n75\n");
	opts.comms = NULL;
	/* samples 70..94 are the worker's: 0.695 s .. 0.945 s */
	opts.since = 0.695;
	opts.until = 0.945;
	run("thread", 0);
	ck_assert_str_eq(out, "samples,pct,pid,tid,comm\n25,100,100,101,worker\n");
}
END_TEST

START_TEST(thread_view)
{
	run("thread", 0);
	ck_assert_str_eq(out, "samples,pct,pid,tid,comm\n70,70,100,100,cpu_hot\n"
			 "25,25,100,101,worker\n5,5,200,200,other\n");
}
END_TEST

/* By construction (synth.c): pid 100 has 95 samples on two threads, 40
 * of them in hot_a; pid 200 has 5, 3 in hot_a and 2 on a stack never
 * defined. */
START_TEST(process_view)
{
	run("process", 0);
	ck_assert_str_eq(out, "samples,pct,pid,threads,comm,top_function,top_pct\n"
			 "95,95,100,2,cpu_hot,hot_a,42.11\n"
			 "5,5,200,1,other,hot_a,60\n");
}
END_TEST

START_TEST(json_keys)
{
	static const char *const keys[] = {
		"\"rows\": [", "\"function\": \"hot_a\"", "\"module\": \"cpu_hot\"",
		"\"self_samples\": 43", "\"total_samples\": 53",
		"\"self_pct\": 43", "\"total_pct\": 53",
		"\"lost\": {\"cpu.ringbuf\": 7, \"cpu.stack\": 3}",
		"\"lost_total\": 10", "\"unresolved_frames\": 2",
		"\"time_span\": {\"start_ns\": 1000000000, \"end_ns\": 2000000000",
		"\"complete\": true",
	};

	rep.out.fmt = NSK_FMT_JSON;
	run("function", 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		ck_assert_msg(strstr(out, keys[i]), "no %s in %s", keys[i], out);
}
END_TEST

START_TEST(json_bytes)
{
	/* names are bytes: invalid UTF-8 must not make the JSON invalid */
	rep.out.fmt = NSK_FMT_JSON;
	run_sql("SELECT CAST(x'41ff42' AS TEXT) AS bad, 'caf\xc3\xa9 \"q\"\t' "
		"AS good");
	ck_assert_ptr_nonnull(strstr(out, "\"bad\": \"A\\ufffdB\""));
	ck_assert_ptr_nonnull(strstr(out, "\"good\": \"caf\xc3\xa9 \\\"q\\\"\\t\""));
}
END_TEST

START_TEST(text_summary)
{
	char *line;

	rep.out.fmt = NSK_FMT_TEXT;
	rep.out.width = 80;
	run("function", 0);
	ck_assert_ptr_nonnull(strstr(out, "# CPU samples: 100\n"));
	ck_assert_ptr_nonnull(strstr(out, "# lost events: 10 (cpu.ringbuf 7, "
				     "cpu.stack 3)\n"));
	ck_assert_ptr_nonnull(strstr(out, "# unresolved frames: 2 (1 without a "
				     "symbol, 1 never defined)\n"));
	ck_assert_ptr_nonnull(strstr(out, "# stacks cut short: 10 events"));
	ck_assert_ptr_nonnull(strstr(out, "  43  43.00%     53  53.00%  hot_a"));
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		ck_assert_msg(strlen(line) <= 80, "too wide: %s", line);
}
END_TEST

START_TEST(text_fits_width)
{
	char *line;

	rep.out.fmt = NSK_FMT_TEXT;
	rep.out.width = 60;
	run_sql("SELECT 12345 AS self, 'std::vector<std::pair<int, long>, "
		"std::allocator<std::pair<int, long> > >::_M_realloc_insert("
		"int const&, long&&)' AS function, 'libstdc++.so.6' AS module");
	ck_assert_ptr_nonnull(strstr(out, "std::vector<...>::_M_realloc_insert"));
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		ck_assert_msg(line[0] == '#' || strlen(line) <= 60,
			      "too wide: %s", line);
}
END_TEST

START_TEST(shorten)
{
	char buf[128];

	nsk_out__shorten("short", 10, buf);
	ck_assert_str_eq(buf, "short");
	nsk_out__shorten("ns::f(int, char const*)", 12, buf);
	ck_assert_str_eq(buf, "ns::f(...)");
	nsk_out__shorten("a<b<c>, d>::method(x)", 16, buf);
	ck_assert_str_eq(buf, "a<...>::method"); /* "(...)" gives way */
	nsk_out__shorten("a<b<c>, d>::method(x)", 19, buf);
	ck_assert_str_eq(buf, "a<...>::method(...)");
	nsk_out__shorten("a_really_long_function_name_without_brackets", 20, buf);
	ck_assert_uint_eq(strlen(buf), 20);
	ck_assert_ptr_nonnull(strstr(buf, "..."));
	ck_assert(!strncmp(buf, "a_re", 4));
	ck_assert_ptr_nonnull(strstr(buf, "brackets"));
	nsk_out__shorten("    indented_function_name_long", 16, buf);
	ck_assert(!strncmp(buf, "    ", 4));
	ck_assert_uint_eq(strlen(buf), 16);
}
END_TEST

/* Call chains keep whole frames, as many as fit, from the leaf. */
START_TEST(fit_frames)
{
	const char *chain = "leaf_fn <- middle <- main";
	char buf[128];

	nsk_out__fit_frames(chain, 40, buf);
	ck_assert_str_eq(buf, chain);
	nsk_out__fit_frames(chain, 24, buf);
	ck_assert_str_eq(buf, "leaf_fn <- middle ...");
	nsk_out__fit_frames(chain, 20, buf);
	ck_assert_str_eq(buf, "leaf_fn ...");
	nsk_out__fit_frames(chain, 11, buf);
	ck_assert_str_eq(buf, "leaf_fn ...");
	/* not even the leaf with its marker: the leaf alone, shortened */
	nsk_out__fit_frames(chain, 7, buf);
	ck_assert_str_eq(buf, "leaf_fn");
	nsk_out__fit_frames(chain, 5, buf);
	ck_assert_uint_eq(strlen(buf), 5);
	ck_assert_ptr_null(strstr(buf, "<-"));
	/* a name without a chain: as nsk_out__shorten */
	nsk_out__fit_frames("ns::f(int, char const*)", 12, buf);
	ck_assert_str_eq(buf, "ns::f(...)");
	for (size_t w = 1; w < 30; w++) {
		nsk_out__fit_frames(chain, w, buf);
		ck_assert_uint_le(strlen(buf), w);
	}
	ck_assert_uint_eq(nsk_out__first_frame(chain), 7);
	ck_assert_uint_eq(nsk_out__first_frame("main"), 4);
}
END_TEST

START_TEST(sql_and_db)
{
	char dbpath[80], msg[256];
	sqlite3 *copy;
	sqlite3_stmt *st;

	run_sql("CREATE TEMP TABLE x AS SELECT count(*) AS n FROM sample; "
		"SELECT n * 2 AS twice FROM x;");
	ck_assert_str_eq(out, "twice\n200\n");
	free(out);
	out = NULL;
	rep.out.f = open_memstream(&out, &outlen);
	ck_assert_int_ne(nsk_report__sql(&rep, "SELEC nothing"), 0);
	fclose(rep.out.f);
	ck_assert_ptr_nonnull(strstr(rep.err, "syntax error"));

	snprintf(dbpath, sizeof(dbpath), "%s.sqlite", path);
	ck_assert_int_eq(nsk_db__save(db, dbpath, msg, sizeof(msg)), 0);
	ck_assert_int_eq(sqlite3_open_v2(dbpath, &copy, SQLITE_OPEN_READONLY,
					 NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(copy, "SELECT count(*) FROM sample "
			 "s JOIN stack_func sf ON sf.stack_id = s.stack_id JOIN "
			 "func f ON f.id = sf.func_id WHERE f.name = 'main'", -1,
			 &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(st, 0), 98);
	sqlite3_finalize(st);
	sqlite3_close(copy);
	unlink(dbpath);
}
END_TEST

START_TEST(truncated)
{
	char p2[80], msg[256];
	sqlite3 *db2;
	long size;
	FILE *f;

	/* No END record and the last bytes cut: says both. */
	snprintf(p2, sizeof(p2), "%s.cut", path);
	write_known(p2, 0);
	f = fopen(p2, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	ck_assert_int_eq(truncate(p2, size - 7), 0);
	ck_assert_int_eq(nsk_db__open(&db2), 0);
	ck_assert_msg(!nsk_load__file(db2, p2, msg, sizeof(msg)), "%s", msg);
	sqlite3_close(db);
	db = rep.db = db2;
	ck_assert_int_eq(info("ended"), 0);
	ck_assert_int_gt(info("truncated_bytes") + info("problems"), 0);
	rep.out.fmt = NSK_FMT_TEXT;
	run("function", 0);
	ck_assert_ptr_nonnull(strstr(out, "# WARNING: no end record"));
	ck_assert_ptr_nonnull(strstr(out, "# WARNING: recording truncated"));
	unlink(p2);
}
END_TEST

START_TEST(unknown_type_and_direct_records)
{
	struct nsk_load *ld;
	struct nsk_record r = { .type = 250 };
	sqlite3 *db2;

	/* The loader also takes records from code (no file): an unknown type
	 * is counted, a sample on an undefined stack gets a placeholder. */
	ck_assert_int_eq(nsk_db__open(&db2), 0);
	ck_assert_int_eq(nsk_load__new(db2, &ld), 0);
	ck_assert_int_eq(nsk_load__record(ld, &r), 0);
	r.type = NSK_REC_SAMPLE;
	r.sample.stack_id = 5;
	r.sample.time = 42;
	ck_assert_int_eq(nsk_load__record(ld, &r), 0);
	ck_assert_int_eq(nsk_load__counts(ld)->ignored, 1);
	ck_assert_int_eq(nsk_load__counts(ld)->unknown_stacks, 1);
	ck_assert_int_eq(nsk_load__finish(ld, "x", NULL, NULL), 0);
	nsk_load__free(ld);
	sqlite3_close(db);
	db = rep.db = db2;
	run("function", 0);
	ck_assert_str_eq(out,
		"self_samples,self_pct,total_samples,total_pct,function,module\n"
		"1,100,1,100,[unknown stack 5],\n");
}
END_TEST

/* Nusku's own cost: the marked stack is one [nusku] row, with its share
 * and the cost in the header (report/own_cost.c). */
static void setup_own(void)
{
	struct nsk_writer *w;
	char msg[256];
	int fd;

	snprintf(path, sizeof(path), "/tmp/nsk-report-test.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(synth__open(path, &w), 0);
	ck_assert_int_eq(synth__own(w), 0);
	ck_assert_int_eq(nsk_writer__close(w), 0);
	ck_assert_int_eq(nsk_db__open(&db), 0);
	ck_assert_msg(!nsk_load__file(db, path, msg, sizeof(msg)), "%s", msg);
	memset(&opts, 0, sizeof(opts));
	opts.since = opts.until = -1;
	opts.limit = -1;
	memset(&rep, 0, sizeof(rep));
	rep.db = db;
	rep.opts = &opts;
	rep.out.fmt = NSK_FMT_CSV;
	rep.out.width = 80;
}

START_TEST(own_one_row)
{
	run("stack", 0);
	ck_assert_str_eq(out, "samples,pct,chain,function,module,path\n"
			      "7,70,main,main,prog,main\n"
			      "3,30,[nusku],[nusku],,[nusku]\n");
	run("function", 0);
	ck_assert_ptr_null(strstr(out, "uprobe_prog_run"));
	ck_assert_ptr_nonnull(strstr(out, ",[nusku],"));
}
END_TEST

START_TEST(own_header)
{
	struct nsk_own_summary o;

	rep.out.fmt = NSK_FMT_TEXT;
	run("function", 0);
	ck_assert_ptr_nonnull(strstr(out, "# nusku's own probes: 30.0% of CPU "
				     "samples (3 of 10, shown as [nusku])\n"));
	ck_assert_ptr_nonnull(strstr(out, "# recording cost: 5.000 ms of BPF "
				     "program time over 1000 runs (5000 "
				     "ns/run; estimated from 5.0% of the "
				     "time)\n"));
	ck_assert_int_eq(nsk_report__own(&rep, &o), 0);
	ck_assert_int_eq(o.own_samples, 3);
	ck_assert_int_eq(o.run_ns, 5000000);
	ck_assert_int_eq(o.runs, 1000);
	ck_assert_int_eq(o.window_on_ns, 100000000);
	ck_assert_int_eq(o.window_total_ns, 2000000000);
}
END_TEST

START_TEST(empty_string_body)
{
	struct nsk_record r = { .type = NSK_REC_STRING };
	struct nsk_strtab t = { 0 };
	struct nsk_load *ld;
	sqlite3 *db2;

	/* An empty STRING body reaches the loader as NULL, length 0 (UBSan
	 * once saw that NULL go to strnlen). */
	ck_assert_uint_ne(nsk_strtab__intern(&t, NULL, 0), 0);
	ck_assert_str_eq(nsk_strtab__get(&t, nsk_strtab__intern(&t, NULL, 0)), "");
	nsk_strtab__release(&t);
	ck_assert_int_eq(nsk_db__open(&db2), 0);
	ck_assert_int_eq(nsk_load__new(db2, &ld), 0);
	r.string.id = 5;
	ck_assert_int_eq(nsk_load__record(ld, &r), 0);
	ck_assert_int_eq(nsk_load__finish(ld, "x", NULL, NULL), 0);
	nsk_load__free(ld);
	sqlite3_close(db2);
}
END_TEST

/* A continuous recording's directory with segments of two recorder runs
 * (another recording id each), which number their strings, frames,
 * stacks and mappings alike: each run's samples keep their own function
 * and module, and a run after a reboot (its clock another) is refused. */
static void write_run(const char *dir, const char *name, uint64_t t0,
		      uint64_t realtime, const char *func, const char *module,
		      uint64_t n)
{
	char p[256];
	struct nsk_writer *w;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	ck_assert_int_eq(synth__open(p, &w), 0);
	ck_assert_int_eq(synth__run(w, t0, realtime, func, module, n), 0);
	ck_assert_int_eq(nsk_writer__close(w), 0);
}

static char *query_text(sqlite3 *d, const char *sql)
{
	static char buf[512];
	sqlite3_stmt *st;
	size_t len = 0;

	buf[0] = '\0';
	ck_assert_int_eq(sqlite3_prepare_v2(d, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && len < sizeof(buf) - 1) {
		int n = snprintf(buf + len, sizeof(buf) - len, "%s;",
				 (const char *)sqlite3_column_text(st, 0));

		len += n > 0 ? (size_t)n : 0;
	}
	sqlite3_finalize(st);
	return buf;
}

START_TEST(two_runs)
{
	static const char a[] = "nusku-20231114T221320.000Z-20231114T221321.000Z.nsk",
			  b[] = "nusku-20231114T221324.000Z-20231114T221325.000Z.nsk",
			  c[] = "nusku-20231114T231324.000Z-20231114T231325.000Z.nsk";
	const uint64_t rt = 1700000000000000000ull;
	char dir[] = "/tmp/nsk-runs-test.XXXXXX", msg[512], p[300];
	sqlite3 *d;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_run(dir, a, 1000000000ull, rt, "alpha", "/bin/a", 3);
	/* the same boot: 4 s later on both clocks, ids alike */
	write_run(dir, b, 5000000000ull, rt + 4000000000ull, "beta", "/bin/b", 5);
	ck_assert_int_eq(nsk_db__open(&d), 0);
	ck_assert_msg(!nsk_load__file(d, dir, msg, sizeof(msg)), "%s", msg);
	ck_assert_str_eq(query_text(d,
		"SELECT f.name || ' ' || f.module || ' ' || count(*) FROM sample s "
		"JOIN stack t ON t.id = s.stack_id JOIN func f ON f.id = t.leaf_func_id "
		"GROUP BY f.id ORDER BY f.name"), "alpha /bin/a 3;beta /bin/b 5;");
	ck_assert_str_eq(query_text(d, "SELECT path FROM stack ORDER BY id"),
			 "main;alpha;main;beta;");
	ck_assert_str_eq(query_text(d, "SELECT count(*) FROM mapping"), "2;");
	ck_assert_str_eq(query_text(d, "SELECT value FROM recording "
				    "WHERE key = 'recorder_runs'"), "2;");
	sqlite3_close(d);

	/* a third run an hour of wall-clock later but 10 s of monotonic: the
	 * machine was down in between */
	write_run(dir, c, 15000000000ull, rt + 3604000000000ull, "gamma", "/bin/c", 2);
	ck_assert_int_eq(nsk_db__open(&d), 0);
	ck_assert_int_eq(nsk_load__file(d, dir, msg, sizeof(msg)), -EXDEV);
	ck_assert_msg(strstr(msg, c) && strstr(msg, "reboot") && !strchr(msg, '\n'),
		      "%s", msg);
	sqlite3_close(d);
	/* clocks a file may hold that no machine has (realtime before the
	 * epoch's start, below monotonic): the offsets still compare, the
	 * same boot's runs join, and the reboot is still told */
	write_run(dir, a, 1000000000ull, 0, "alpha", "/bin/a", 3);
	write_run(dir, b, 5000000000ull, 4000000000ull, "beta", "/bin/b", 5);
	write_run(dir, c, 15000000000ull, UINT64_MAX, "gamma", "/bin/c", 2);
	ck_assert_int_eq(nsk_db__open(&d), 0);
	ck_assert_int_eq(nsk_load__file(d, dir, msg, sizeof(msg)), -EXDEV);
	sqlite3_close(d);
	snprintf(p, sizeof(p), "%s/%s", dir, c);
	unlink(p);
	ck_assert_int_eq(nsk_db__open(&d), 0);
	ck_assert_msg(!nsk_load__file(d, dir, msg, sizeof(msg)), "%s", msg);
	ck_assert_str_eq(query_text(d, "SELECT value FROM recording "
				    "WHERE key = 'recorder_runs'"), "2;");
	sqlite3_close(d);
	snprintf(p, sizeof(p), "%s/%s", dir, a);
	unlink(p);
	snprintf(p, sizeof(p), "%s/%s", dir, b);
	unlink(p);
	rmdir(dir);
}
END_TEST

START_TEST(escapes)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain_name", "plain_name" },
		{ "\x1b]0;pwned\x07\x1b[2J", "\\x1b]0;pwned\\x07\\x1b[2J" },
		{ "tab\there\nnl\r", "tab\\x09here\\x0anl\\x0d" },
		{ "del\x7f", "del\\x7f" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" }, /* UTF-8 kept */
		{ "c1\xc2\x9b" "2J", "c1\\xc2\\x9b2J" },	/* U+009B: CSI */
		{ "bad\xff\xc3", "bad\\xff\\xc3" },	/* not UTF-8 */
	};
	char *json = NULL, *e;
	size_t len;
	FILE *f;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		e = nsk_out__escaped(cases[i].in);
		ck_assert_ptr_nonnull(e);
		ck_assert_str_eq(e, cases[i].out);
		ck_assert_int_eq(nsk_out__needs_escape(cases[i].in),
				 strcmp(cases[i].in, cases[i].out) != 0);
		free(e);
	}
	f = open_memstream(&json, &len);
	nsk_out__json_str(f, "a\x1b\x7f\xc2\x9b\xc3\xa9");
	fclose(f);
	ck_assert_str_eq(json, "\"a\\u001b\\u007f\\u009b\xc3\xa9\"");
	free(json);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("known");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, function_view);
	tcase_add_test(tc, counts_and_unresolved);
	tcase_add_test(tc, stack_view);
	tcase_add_test(tc, stack_view_text_cut);
	tcase_add_test(tc, folded);
	tcase_add_test(tc, tree);
	tcase_add_test(tc, filters);
	tcase_add_test(tc, thread_view);
	tcase_add_test(tc, process_view);
	tcase_add_test(tc, json_keys);
	tcase_add_test(tc, json_bytes);
	tcase_add_test(tc, text_summary);
	tcase_add_test(tc, text_fits_width);
	tcase_add_test(tc, shorten);
	tcase_add_test(tc, fit_frames);
	tcase_add_test(tc, sql_and_db);
	tcase_add_test(tc, truncated);
	tcase_add_test(tc, unknown_type_and_direct_records);
	tcase_add_test(tc, empty_string_body);
	tcase_add_test(tc, escapes);
	suite_add_tcase(s, tc);
	tc = tcase_create("own");
	tcase_add_checked_fixture(tc, setup_own, teardown);
	tcase_add_test(tc, own_one_row);
	tcase_add_test(tc, own_header);
	suite_add_tcase(s, tc);
	tc = tcase_create("runs");
	tcase_add_test(tc, two_runs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
