/* The off-CPU views (docs/blocking.md).
 *
 *   --by blocking               per reason: total blocked time and share of
 *                               the recording's wall time; under each, one
 *                               row per code path (count, total, max, top
 *                               wakers).  Rows: depth 0 = reason, 1 = path.
 *   --by blocking --per-thread  per thread: its wall time split into time
 *                               on CPU and off CPU for each reason.
 *   --by blocking --folded/--tree: stacks weighted by off-CPU microseconds.
 *
 * A code path is named by its function: the first user-space frame that is
 * the program's own, skipping the C library, the dynamic loader and the
 * language runtimes when a caller exists (pthread_mutex_lock is charged to
 * whoever called it).
 */
#include <errno.h>
#include <stdio.h>

#include "report/report.h"
#include "report/views.h"

#define OFFCPU_WEIGHTS \
	"SELECT stack_id, duration / 1000 AS weight, pid FROM f_offcpu"

/* Modules whose frames are wrappers, not the program's own code: the C
 * and C++ runtimes, the loader, the sanitizers' interceptors (the SQL goes
 * through printf: %% is a LIKE wildcard). */
#define SYSLIB(m)                                                          \
	"(" m " LIKE 'libc.so%%' OR " m " LIKE 'libc-%%' OR " m " LIKE "       \
	"'ld-linux%%' OR " m " LIKE 'ld-musl%%' OR " m " LIKE 'libpthread%%' "   \
	"OR " m " LIKE 'librt%%' OR " m " LIKE 'libstdc++%%' OR " m " LIKE "    \
	"'libgcc_s%%' OR " m " LIKE 'libc++%%' OR " m " GLOB 'lib[atlu]san.so*')"

/* fn(stack_id, function): the program's own function of each stack of the
 * selected intervals; the first user frame when every one is a wrapper. */
#define OWN_FUNCTION_CTE                                                   \
	"sf AS (SELECT x.stack_id, x.pos, f.name, " SYSLIB("f.module")       \
	" AS sys FROM stack_frame x JOIN func f ON f.id = x.func_id "        \
	"WHERE f.kernel = 0 AND x.stack_id IN (SELECT stack_id FROM o)), "   \
	"fn AS (SELECT stack_id, coalesce("                                  \
	"(SELECT name FROM sf b WHERE b.stack_id = a.stack_id AND NOT b.sys " \
	"ORDER BY pos LIMIT 1), "                                            \
	"(SELECT name FROM sf b WHERE b.stack_id = a.stack_id "              \
	"ORDER BY pos LIMIT 1)) AS function "                                \
	"FROM (SELECT DISTINCT stack_id FROM o) a)"

/* For nusku diff: temp.bfn(stack_id, function), the own function of each
 * stack of the selected intervals, as the paths of --by blocking name it. */
int nsk_blocking__own_functions(struct nsk_report *rep)
{
	char *msg = NULL, *sql;
	int err = 0;

	/* a format: the macros' %% are LIKE wildcards */
	sql = sqlite3_mprintf("DROP TABLE IF EXISTS temp.bfn; CREATE TEMP TABLE "
			      "bfn AS WITH o AS (SELECT stack_id FROM f_offcpu), "
			      OWN_FUNCTION_CTE " SELECT stack_id, function FROM fn");
	if (!sql) {
		snprintf(rep->err, sizeof(rep->err), "out of memory");
		return -ENOMEM;
	}
	if (sqlite3_exec(rep->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(rep->err, sizeof(rep->err), "%s", msg ? msg : "SQL error");
		err = -EIO;
	}
	sqlite3_free(msg);
	sqlite3_free(sql);
	return err;
}

/* Who woke it: "comm[pid]", or "[timer]" / "[irq]" as recorded. */
#define WHO                                                                \
	"(coalesce(o.waker_comm, '?') || CASE WHEN o.waker_pid > 0 THEN "    \
	"'[' || o.waker_pid || ']' ELSE '' END)"

/* For exports: intervals and their time, by reason and waker. */
static char *offcpu_sql(struct nsk_report *rep)
{
	return sqlite3_mprintf(
		"SELECT stack_id, pid, tid, comm_id, reason, " WHO " AS waker, "
		"count(*), sum(duration) FROM f_offcpu o "
		"GROUP BY stack_id, pid, tid, comm_id, reason, waker");
}

static const struct nsk_measure offcpu_measure = {
	.name = "offcpu",
	.title = "Off-CPU time, coloured by reason",
	.help = "off-CPU time by reason and waker (intervals, off_cpu)",
	.sql = offcpu_sql,
	.labels = { "reason", "waker" },
	.values = { { "intervals", "count" }, { "off_cpu", "nanoseconds" } },
	.nvalues = 2,
	.shown = 1,
	.graphed = 1,
	.period_type = -1,
	.colour_label = 0,
};
const struct nsk_measure *const nsk_measure_offcpu = &offcpu_measure;

static int run_reasons(struct nsk_report *rep, const struct nsk_view *v)
{
	static const struct nsk_col_hint h[] = {
		{ "total_ms", "total ms", NSK_COL_TEXT_ONLY },
		{ "wall_pct", "wall%", NSK_COL_PCT },
		{ "count", NULL, 0 },
		{ "max_ms", "max ms", NSK_COL_TEXT_ONLY },
		{ "what", "reason / code path", NSK_COL_TEXT_ONLY | NSK_COL_INDENT |
			NSK_COL_FLEX },
		{ "top_waker", "top waker", NSK_COL_TEXT_ONLY | NSK_COL_NARROW },
		{ "depth", NULL, NSK_COL_DATA_ONLY },
		{ "reason", NULL, NSK_COL_DATA_ONLY },
		{ "function", NULL, NSK_COL_DATA_ONLY },
		{ "detail", NULL, NSK_COL_DATA_ONLY },
		{ "wait_addrs", NULL, NSK_COL_DATA_ONLY },
		{ "total_ns", NULL, NSK_COL_DATA_ONLY },
		{ "max_ns", NULL, NSK_COL_DATA_ONLY },
		{ "waker", NULL, NSK_COL_DATA_ONLY },
		{ "waker_pid", NULL, NSK_COL_DATA_ONLY },
		{ "waker_tid", NULL, NSK_COL_DATA_ONLY },
		{ "wakers", NULL, NSK_COL_DATA_ONLY },
		{ "waker_stack", NULL, NSK_COL_DATA_ONLY },
		{ "stack", NULL, NSK_COL_DATA_ONLY },
		{ "stack_id", NULL, NSK_COL_DATA_ONLY },
		{ NULL, NULL, 0 }
	};
	sqlite3_stmt *st;

	/* A code path is the user-space call path: the kernel side of one
	 * wait varies (which folio, which bio) and is summed up by the
	 * details.  The reason rows sum their paths. */
	st = nsk_report__prepare(rep,
		"WITH o AS (SELECT * FROM f_offcpu), "
		OWN_FUNCTION_CTE ", "
		"up AS (SELECT stack_id, group_concat(name, ' <- ') AS chain "
		"FROM (SELECT * FROM sf ORDER BY stack_id, pos) GROUP BY stack_id), "
		"wall AS (SELECT max(1, (SELECT value FROM recording WHERE key = "
		"'time_end_ns') - (SELECT value FROM recording WHERE key = "
		"'time_start_ns')) AS ns), "
		"oo AS (SELECT o.*, coalesce(up.chain, '') AS path, "
		"fn.function AS function, " WHO " AS who FROM o "
		"LEFT JOIN up ON up.stack_id = o.stack_id "
		"LEFT JOIN fn ON fn.stack_id = o.stack_id), "
		"p AS (SELECT reason, path, min(stack_id) AS stack_id, "
		"max(function) AS function, group_concat(DISTINCT detail) AS "
		"detail, count(*) AS n, sum(duration) AS total, max(duration) AS mx, "
		"group_concat(DISTINCT CASE WHEN wait_addr THEN printf('0x%%x', "
		"wait_addr) END) AS addrs "
		"FROM oo GROUP BY reason, path), "
		"r AS (SELECT reason, count(*) AS n, sum(duration) AS total, "
		"max(duration) AS mx FROM oo GROUP BY reason), "
		/* wakers per path and per reason, ranked by the time they ended */
		"wp AS (SELECT reason, path, who, max(waker_pid) AS wpid, "
		"max(waker_tid) AS wtid, max(waker_comm) AS wcomm, count(*) AS n, "
		"max(waker_stack_id) AS wstack, "
		"row_number() OVER (PARTITION BY reason, path ORDER BY "
		"sum(duration) DESC, who) AS rk FROM oo WHERE waker_comm IS NOT "
		"NULL GROUP BY reason, path, who), "
		"wr AS (SELECT reason, who, max(waker_pid) AS wpid, "
		"max(waker_tid) AS wtid, max(waker_comm) AS wcomm, count(*) AS n, "
		"max(waker_stack_id) AS wstack, "
		"row_number() OVER (PARTITION BY reason ORDER BY sum(duration) "
		"DESC, who) AS rk FROM oo WHERE waker_comm IS NOT NULL "
		"GROUP BY reason, who), "
		"rows AS ("
		"SELECT r.total AS rtotal, 0 AS depth, r.reason, NULL AS addrs, "
		"NULL AS function, "
		"NULL AS detail, NULL AS stack, NULL AS stack_id, r.n, r.total, "
		"r.mx, r.reason AS what, "
		"(SELECT group_concat(who || ' x' || n, ', ') FROM (SELECT * FROM "
		"wr WHERE wr.reason = r.reason AND rk <= 3 ORDER BY rk)) AS wakers, "
		"(SELECT who || ' x' || n FROM wr WHERE wr.reason = r.reason AND "
		"rk = 1) AS top, "
		"(SELECT wcomm FROM wr WHERE wr.reason = r.reason AND rk = 1) AS waker, "
		"(SELECT wpid FROM wr WHERE wr.reason = r.reason AND rk = 1) AS wpid, "
		"(SELECT wtid FROM wr WHERE wr.reason = r.reason AND rk = 1) AS wtid, "
		"(SELECT wstack FROM wr WHERE wr.reason = r.reason AND rk = 1) AS wstack "
		"FROM r "
		"UNION ALL "
		"SELECT r.total, 1, p.reason, p.addrs, p.function, p.detail, p.path, "
		"p.stack_id, p.n, p.total, p.mx, "
		"coalesce(p.function, '[no user stack]') || coalesce(' (' || "
		"p.detail || ')', ''), "
		"(SELECT group_concat(who || ' x' || n, ', ') FROM (SELECT * FROM "
		"wp WHERE wp.reason = p.reason AND wp.path = p.path AND rk <= 3 "
		"ORDER BY rk)), "
		"(SELECT who || ' x' || n FROM wp WHERE wp.reason = p.reason AND "
		"wp.path = p.path AND rk = 1), "
		"(SELECT wcomm FROM wp WHERE wp.reason = p.reason AND wp.path = "
		"p.path AND rk = 1), "
		"(SELECT wpid FROM wp WHERE wp.reason = p.reason AND wp.path = "
		"p.path AND rk = 1), "
		"(SELECT wtid FROM wp WHERE wp.reason = p.reason AND wp.path = "
		"p.path AND rk = 1), "
		"(SELECT wstack FROM wp WHERE wp.reason = p.reason AND wp.path = "
		"p.path AND rk = 1) "
		"FROM p JOIN r ON r.reason = p.reason) "
		"SELECT round(total / 1e6, 1) AS total_ms, "
		"round(100.0 * total / wall.ns, 2) AS wall_pct, n AS count, "
		"round(mx / 1e6, 1) AS max_ms, what, top AS top_waker, depth, "
		"reason, function, detail, addrs AS wait_addrs, total AS total_ns, "
		"mx AS max_ns, waker, "
		"wpid AS waker_pid, wtid AS waker_tid, wakers, "
		"(SELECT chain FROM stack WHERE id = wstack) AS waker_stack, "
		"stack, stack_id "
		"FROM rows, wall "
		"ORDER BY rtotal DESC, reason, depth, total DESC, stack LIMIT %ld",
		rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

/* One column per reason: <reason>_ns in the data, and a "split" summary for
 * people. */
#define REASON_NS(name, col) \
	"coalesce(sum(CASE WHEN reason = '" name "' THEN ns END), 0) AS " \
	col "_ns, "

static int run_threads(struct nsk_report *rep, const struct nsk_view *v)
{
	static const struct nsk_col_hint h[] = {
		{ "pid", NULL, 0 },
		{ "tid", NULL, 0 },
		{ "comm", NULL, NSK_COL_NARROW },
		{ "wall_ms", "wall ms", NSK_COL_TEXT_ONLY },
		{ "on_cpu_pct", "cpu%", NSK_COL_PCT },
		{ "split", "off CPU: share of wall time by reason", NSK_COL_FLEX },
		{ "wall_ns", NULL, NSK_COL_DATA_ONLY },
		{ "on_cpu_ns", NULL, NSK_COL_DATA_ONLY },
		{ "off_cpu_ns", NULL, NSK_COL_DATA_ONLY },
		{ "lock_ns", NULL, NSK_COL_DATA_ONLY },
		{ "disk_ns", NULL, NSK_COL_DATA_ONLY },
		{ "process_ns", NULL, NSK_COL_DATA_ONLY },
		{ "network_ns", NULL, NSK_COL_DATA_ONLY },
		{ "sleep_ns", NULL, NSK_COL_DATA_ONLY },
		{ "poll_ns", NULL, NSK_COL_DATA_ONLY },
		{ "runqueue_ns", NULL, NSK_COL_DATA_ONLY },
		{ "page_fault_ns", NULL, NSK_COL_DATA_ONLY },
		{ "other_ns", NULL, NSK_COL_DATA_ONLY },
		{ NULL, NULL, 0 }
	};
	sqlite3_stmt *st;

	/* A thread is named by its last name (the name it gave itself), and
	 * its wall time runs from the first to the last thing seen of
	 * it (its thread record, intervals, exit); on-CPU time is what is left
	 * of it after the recorded intervals, so it includes waits shorter than
	 * --min-block. */
	st = nsk_report__prepare(rep,
		"WITH o AS (SELECT * FROM f_offcpu), "
		"tids AS (SELECT DISTINCT pid, tid FROM o), "
		"span AS (SELECT pid, tid, min(t0) AS t0, max(t1) AS t1 FROM ("
		"SELECT pid, tid, time AS t0, time + duration AS t1 FROM o "
		"UNION ALL SELECT pid, tid, time, time FROM thread "
		"WHERE (pid, tid) IN (SELECT pid, tid FROM tids) "
		"UNION ALL SELECT pid, tid, time, time FROM exit "
		"WHERE (pid, tid) IN (SELECT pid, tid FROM tids)) "
		"GROUP BY pid, tid), "
		"r AS (SELECT pid, tid, reason, sum(duration) AS ns FROM o "
		"GROUP BY pid, tid, reason), "
		"t AS (SELECT s.pid, s.tid, max(1, s.t1 - s.t0) AS wall, "
		"(SELECT total(ns) FROM r WHERE r.pid = s.pid AND r.tid = s.tid) "
		"AS off FROM span s) "
		"SELECT t.pid, t.tid, coalesce((SELECT name FROM thread h WHERE "
		"h.pid = t.pid AND h.tid = t.tid ORDER BY h.time DESC LIMIT 1), "
		"(SELECT group_concat(DISTINCT c.name) FROM o JOIN comm c ON "
		"c.id = o.comm_id WHERE o.tid = t.tid AND o.pid = t.pid)) AS comm, round(t.wall / 1e6, 1) AS wall_ms, "
		"round(100.0 * max(0, t.wall - t.off) / t.wall, 2) AS on_cpu_pct, "
		"(SELECT group_concat(reason || ' ' || printf('%%.1f%%%%', 100.0 * "
		"ns / t.wall), ', ') FROM (SELECT * FROM r WHERE r.pid = t.pid AND "
		"r.tid = t.tid ORDER BY ns DESC)) AS split, "
		REASON_NS("lock", "lock")
		REASON_NS("disk", "disk")
		REASON_NS("process", "process")
		REASON_NS("network", "network")
		REASON_NS("sleep", "sleep")
		REASON_NS("poll", "poll")
		REASON_NS("runqueue", "runqueue")
		REASON_NS("page-fault", "page_fault")
		REASON_NS("other", "other")
		"t.wall AS wall_ns, max(0, t.wall - t.off) AS on_cpu_ns, "
		"CAST(t.off AS INTEGER) AS off_cpu_ns FROM t LEFT JOIN r ON r.pid = t.pid AND r.tid = t.tid "
		"GROUP BY t.pid, t.tid ORDER BY t.off DESC, t.pid, t.tid LIMIT %ld",
		rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

static int run_blocking(struct nsk_report *rep, const struct nsk_view *v)
{
	if (rep->opts->per_thread)
		return run_threads(rep, v);
	return run_reasons(rep, v);
}

const struct nsk_view nsk_view_blocking = {
	.name = "blocking",
	.signal = "offcpu",
	.help = "off-CPU time by reason (lock, disk, process, network, sleep, "
		"poll, runqueue, page-fault) and code path, with wakers; "
		"--per-thread: each thread's wall time split by reason",
	.run = run_blocking,
	.weights = OFFCPU_WEIGHTS,
	.unit = "us",
	.per_thread = 1,
	.reads = NSK_VIEW_READS_OFFCPU,
	.measure = &offcpu_measure,
};
