/* The syscall views: per syscall (and per thread and syscall) counts,
 * errors, total and percentile latencies with the code path that spent the
 * most time in it; per code path; and the slow calls one by one.
 *
 * Percentiles come from the merged log2 histograms: the bucket that holds
 * the q-th call is found from the cumulative counts, and the value is
 * interpolated linearly inside it ([2^b, 2^(b+1)) ns), capped by the
 * largest call seen.  So a percentile is exact to within its bucket, and
 * the interpolation assumes calls spread evenly in the bucket.
 *
 * Code paths come from syscall_path: time charged to paths by sampling
 * (exact in expectation; every call with --syscall-sample 1ns), apart from
 * the exact counts, errors and histograms of syscall_stat.
 *
 * Names are the recorded kernel's own when the recording carries them;
 * else those generated from the kernel headers of the build's
 * architecture, and a recording from another architecture (its
 * "syscall.arch" meta differs) shows "syscall_N" instead. */
#include <errno.h>
#include <stdio.h>

#include "report/report.h"
#include "report/syscall_names.h"
#include "report/views.h"

#define SC_WEIGHTS \
	"SELECT stack_id, sum(total_ns) AS weight, pid FROM f_syscall_path " \
	"GROUP BY stack_id, pid"

/* The name of syscall number column X, as SQL. */
#define SC_NAME(x) NSK_SYSCALL_NAME_SQL(x)

/* A duration in ns as short text for the text table ("1.50ms"). */
#define SC_DUR(x)                                                             \
	"CASE WHEN " x " IS NULL THEN '' "                                    \
	"WHEN " x " >= 1e9 THEN printf('%%.2fs', " x " / 1e9) "               \
	"WHEN " x " >= 1e6 THEN printf('%%.2fms', " x " / 1e6) "              \
	"WHEN " x " >= 1e4 THEN printf('%%.1fus', " x " / 1e3) "              \
	"ELSE printf('%%dns', " x ") END"

/* For exports: syscall time and calls (estimated, see docs/schema.md) per
 * code path, by syscall. */
static char *syscall_sql(struct nsk_report *rep)
{
	return sqlite3_mprintf(
		"SELECT stack_id, pid, tid, comm_id, " SC_NAME("nr") " AS sc, "
		"sum(count), sum(total_ns) FROM f_syscall_path "
		"GROUP BY stack_id, pid, tid, comm_id, nr", nsk_syscall_arch);
}

static const struct nsk_measure syscall_measure = {
	.name = "syscall",
	.title = "Syscall time",
	.help = "syscall time per code path (calls, syscall)",
	.sql = syscall_sql,
	.labels = { "syscall" },
	.values = { { "calls", "count" }, { "syscall", "nanoseconds" } },
	.nvalues = 2,
	.shown = 1,
	.graphed = 1,
	.period_type = -1,
	.colour_label = -1,
};
const struct nsk_measure *const nsk_measure_syscall = &syscall_measure;

/* The first user-space frame of stack X outside the C library, the
 * dynamic loader and the sanitizers' interceptors: the code that made the
 * call (the leaf is the libc wrapper). */
#define SC_CALLER(x)                                                          \
	"(SELECT f.name FROM stack_frame sf JOIN func f ON f.id = sf.func_id " \
	"WHERE sf.stack_id = " x " AND f.kernel = 0 AND f.unresolved = 0 "     \
	"AND f.module NOT GLOB 'libc.so*' AND f.module NOT GLOB 'libc-*' "     \
	"AND f.module NOT GLOB 'libpthread*' "                                 \
	"AND f.module NOT GLOB 'ld-linux*' AND f.module NOT GLOB 'ld-*.so*' "  \
	"AND f.module NOT GLOB 'lib[atlu]san.so*' "                            \
	"ORDER BY sf.pos LIMIT 1)"

/* Per group of `keys` (a column list of f_syscall_stat and
 * f_syscall_path): count, errors, total, p50, p99, max, errnos and the
 * path with the most time. */
static int run_grouped(struct nsk_report *rep, const struct nsk_view *v,
		       const char *keys, const char *join_keys,
		       const char *cols)
{
	static const struct nsk_col_hint h[] = {
		{ "nr", NULL, NSK_COL_DATA_ONLY },
		{ "comm", NULL, NSK_COL_NARROW },
		{ "total_ns", NULL, NSK_COL_DATA_ONLY },
		{ "p50_ns", NULL, NSK_COL_DATA_ONLY },
		{ "p99_ns", NULL, NSK_COL_DATA_ONLY },
		{ "max_ns", NULL, NSK_COL_DATA_ONLY },
		{ "total", NULL, NSK_COL_TEXT_ONLY },
		{ "p50", NULL, NSK_COL_TEXT_ONLY },
		{ "p99", NULL, NSK_COL_TEXT_ONLY },
		{ "max", NULL, NSK_COL_TEXT_ONLY },
		{ "errnos", NULL, NSK_COL_NARROW },
		{ "stack_id", NULL, NSK_COL_DATA_ONLY },
		{ "stack", NULL, NSK_COL_DATA_ONLY },
		{ "caller", "top caller (most time)", NSK_COL_FLEX | NSK_COL_WHOLE },
		{ NULL, NULL, 0 }
	};
	sqlite3_stmt *st;

	st = nsk_report__prepare(rep,
		"WITH s AS (SELECT * FROM f_syscall_stat), "
		"agg AS (SELECT %s, max(comm_id) AS comm_id, sum(count) AS count, "
		"sum(errors) AS errors, sum(total_ns) AS total_ns, "
		"max(max_ns) AS max_ns FROM s GROUP BY %s), "
		"h AS (SELECT %s, hh.bucket, sum(hh.count) AS n FROM syscall_hist hh "
		"JOIN s ON hh.stat_id = s.id GROUP BY %s, hh.bucket), "
		"c AS (SELECT *, sum(n) OVER (PARTITION BY %s ORDER BY bucket) AS cum, "
		"sum(n) OVER (PARTITION BY %s) AS tot FROM h), "
		"p50 AS (SELECT %s, (1 << bucket) * (1.0 + (0.5 * tot - (cum - n)) / n) "
		"AS v FROM c WHERE cum >= 0.5 * tot AND cum - n < 0.5 * tot), "
		"p99 AS (SELECT %s, (1 << bucket) * (1.0 + (0.99 * tot - (cum - n)) / n) "
		"AS v FROM c WHERE cum >= 0.99 * tot AND cum - n < 0.99 * tot), "
		"e1 AS (SELECT %s, ee.name, sum(ee.count) AS n FROM syscall_errno ee "
		"JOIN s ON ee.stat_id = s.id GROUP BY %s, ee.name ORDER BY n DESC), "
		"e AS (SELECT %s, group_concat(name || ':' || n, ' ') AS errnos "
		"FROM e1 GROUP BY %s), "
		"paths AS (SELECT %s, stack_id, sum(total_ns) AS t FROM "
		"f_syscall_path GROUP BY %s, stack_id), "
		"top AS (SELECT *, row_number() OVER (PARTITION BY %s "
		"ORDER BY t DESC, stack_id) AS rn FROM paths) "
		"SELECT *, " SC_DUR("total_ns") " AS total, " SC_DUR("p50_ns")
		" AS p50, " SC_DUR("p99_ns") " AS p99, " SC_DUR("max_ns") " AS max, "
		"COALESCE(" SC_CALLER("r.stack_id") ", r.stack) AS caller FROM ("
		"SELECT %s, " SC_NAME("a.nr") " AS syscall, a.count, a.errors, "
		"a.total_ns, CAST(min(p50.v, a.max_ns) AS INTEGER) AS p50_ns, "
		"CAST(min(p99.v, a.max_ns) AS INTEGER) AS p99_ns, a.max_ns, "
		"COALESCE(e.errnos, '') AS errnos, top.stack_id AS stack_id, "
		"COALESCE(k.chain, '[no stack]') AS stack "
		"FROM agg a LEFT JOIN comm cm ON cm.id = a.comm_id "
		"LEFT JOIN p50 USING (%s) LEFT JOIN p99 USING (%s) "
		"LEFT JOIN e USING (%s) "
		"LEFT JOIN top ON top.rn = 1 AND %s "
		"LEFT JOIN stack k ON k.id = top.stack_id "
		"ORDER BY a.total_ns DESC, a.count DESC LIMIT %ld) r",
		keys, keys, keys, keys, keys, keys, keys, keys, keys, keys, keys,
		keys, keys, keys, keys, cols, nsk_syscall_arch, keys, keys, keys,
		join_keys, rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

static int run_syscall(struct nsk_report *rep, const struct nsk_view *v)
{
	/* Columns are qualified where a join makes them ambiguous. */
	return run_grouped(rep, v, "nr", "top.nr = a.nr", "a.nr AS nr");
}

static int run_thread(struct nsk_report *rep, const struct nsk_view *v)
{
	return run_grouped(rep, v, "pid, tid, nr",
			   "top.pid = a.pid AND top.tid = a.tid AND top.nr = a.nr",
			   "a.pid AS pid, a.tid AS tid, cm.name AS comm, a.nr AS nr");
}

/* Syscall time by code path: sampled, so count is an estimate. */
static int run_path(struct nsk_report *rep, const struct nsk_view *v)
{
	static const struct nsk_col_hint h[] = {
		{ "total_ns", NULL, NSK_COL_DATA_ONLY },
		{ "total", NULL, NSK_COL_TEXT_ONLY },
		{ "pct", "% of syscall", NSK_COL_PCT },
		{ "stack_id", NULL, NSK_COL_DATA_ONLY },
		{ "stack", NULL, NSK_COL_FLEX },
		{ NULL, NULL, 0 }
	};
	sqlite3_stmt *st;

	st = nsk_report__prepare(rep,
		"WITH p AS (SELECT nr, stack_id, sum(count) AS count, "
		"sum(total_ns) AS total_ns FROM f_syscall_path "
		"GROUP BY nr, stack_id), "
		"t AS (SELECT nr, total(total_ns) AS all_ns FROM p GROUP BY nr) "
		"SELECT " SC_NAME("p.nr") " AS syscall, p.count, "
		"p.total_ns, " SC_DUR("p.total_ns") " AS total, "
		"round(100.0 * p.total_ns / max(t.all_ns, 1), 2) AS pct, "
		"p.stack_id, COALESCE(k.chain, '[no stack]') AS stack "
		"FROM p JOIN t USING (nr) LEFT JOIN stack k ON k.id = p.stack_id "
		"ORDER BY p.total_ns DESC, p.count DESC LIMIT %ld",
		nsk_syscall_arch, rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

static int run_slow(struct nsk_report *rep, const struct nsk_view *v)
{
	static const struct nsk_col_hint h[] = {
		{ "pid", NULL, NSK_COL_DATA_ONLY },
		{ "comm", NULL, NSK_COL_NARROW },
		{ "duration_ns", NULL, NSK_COL_DATA_ONLY },
		{ "duration", NULL, NSK_COL_TEXT_ONLY },
		{ "ret", NULL, NSK_COL_DATA_ONLY },
		{ "arg0", NULL, NSK_COL_DATA_ONLY },
		{ "arg1", NULL, NSK_COL_DATA_ONLY },
		{ "arg2", NULL, NSK_COL_DATA_ONLY },
		{ "stack_id", NULL, NSK_COL_DATA_ONLY },
		{ "caller", NULL, NSK_COL_FLEX | NSK_COL_WHOLE },
		{ "stack", NULL, NSK_COL_DATA_ONLY },
		{ NULL, NULL, 0 }
	};
	sqlite3_stmt *st;

	st = nsk_report__prepare(rep,
		"SELECT round((s.time - %lld) / 1e9, 6) AS time_s, s.pid, s.tid, "
		"cm.name AS comm, " SC_NAME("s.nr") " AS syscall, "
		"s.duration AS duration_ns, " SC_DUR("s.duration") " AS duration, "
		"s.ret, COALESCE(s.errno, '') AS errno, "
		"COALESCE(s.target, '') AS target, s.arg0, s.arg1, s.arg2, "
		"s.stack_id, COALESCE(" SC_CALLER("s.stack_id") ", k.chain, "
		"'[no stack]') AS caller, "
		"COALESCE(k.chain, '[no stack]') AS stack "
		"FROM f_syscall_slow s LEFT JOIN comm cm ON cm.id = s.comm_id "
		"LEFT JOIN stack k ON k.id = s.stack_id "
		"ORDER BY s.duration DESC, s.time LIMIT %ld",
		(long long)nsk_report__info(rep, "time_start_ns"),
		nsk_syscall_arch, rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

const struct nsk_view nsk_view_syscall = {
	.name = "syscall",
	.signal = "syscall",
	.help = "syscalls: count, errors, total/p50/p99/max latency, the "
		"path with the most time",
	.run = run_syscall,
	.weights = SC_WEIGHTS,
	.unit = "ns",
	.measure = &syscall_measure,
};

const struct nsk_view nsk_view_syscall_thread = {
	.name = "syscall-thread",
	.signal = "syscall",
	.help = "syscalls per thread: count, errors, latency, top path",
	.run = run_thread,
	.weights = SC_WEIGHTS,
	.unit = "ns",
	.measure = &syscall_measure,
};

const struct nsk_view nsk_view_syscall_path = {
	.name = "syscall-path",
	.signal = "syscall",
	.help = "syscall time per calling code path",
	.run = run_path,
	.weights = SC_WEIGHTS,
	.unit = "ns",
	.measure = &syscall_measure,
};

const struct nsk_view nsk_view_syscall_slow = {
	.name = "syscall-slow",
	.signal = "syscall",
	.help = "syscalls slower than --slow-syscall, with file/socket and stack",
	.run = run_slow,
	.weights = SC_WEIGHTS,
	.unit = "ns",
	.measure = &syscall_measure,
};
