/* The CPU views: samples by function, by call path, by process, by thread.  --tree and
 * --folded of these views use the samples' weights below. */
#include <errno.h>

#include "report/report.h"
#include "report/views.h"

/* One per sample; stacks.c sums them per stack. */
#define CPU_WEIGHTS "SELECT stack_id, 1, pid FROM f_sample"

/* For exports: samples, and the CPU time they stand for: the sampling
 * period (1 s / the recording's cpu.freq_hz) each, else the periods the
 * kernel gave the samples. */
static char *cpu_sql(struct nsk_report *rep)
{
	return sqlite3_mprintf(
		"SELECT stack_id, pid, tid, comm_id, count(*), "
		"coalesce(count(*) * (SELECT 1000000000 / nullif(CAST(value AS "
		"INTEGER), 0) FROM meta WHERE key = 'cpu.freq_hz' LIMIT 1), "
		"sum(weight)) FROM f_sample GROUP BY stack_id, pid, tid, comm_id");
}

static const struct nsk_measure cpu_measure = {
	.name = "cpu",
	.title = "CPU samples",
	.help = "CPU samples and time (samples, cpu)",
	.sql = cpu_sql,
	.values = { { "samples", "count" }, { "cpu", "nanoseconds" } },
	.nvalues = 2,
	.shown = 1,
	.graphed = 0,
	.period_type = 1,
	.colour_label = -1,
};
const struct nsk_measure *const nsk_measure_cpu = &cpu_measure;

static int run_thread(struct nsk_report *rep, const struct nsk_view *v)
{
	static const struct nsk_col_hint h[] = {
		{ "pct", NULL, NSK_COL_PCT },
		{ "comm", NULL, NSK_COL_FLEX },
		{ NULL, NULL, 0 }
	};
	sqlite3_stmt *st;

	st = nsk_report__prepare(rep,
		"WITH s AS (SELECT pid, tid, comm_id, count(*) AS n "
		"FROM f_sample GROUP BY pid, tid, comm_id), "
		"t AS (SELECT total(n) AS total FROM s) "
		"SELECT sum(n) AS samples, round(100.0 * sum(n) / t.total, 2) "
		"AS pct, pid, tid, group_concat(DISTINCT c.name) AS comm "
		"FROM s LEFT JOIN comm c ON c.id = s.comm_id, t "
		"GROUP BY pid, tid ORDER BY 1 DESC, pid, tid LIMIT %ld",
		rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

/* One row per process: what a recording of every process (record -a) is
 * first read by, as perf report --sort comm.  Its name is its newest
 * PROCESS record's (a kernel thread's, or a process the recording only
 * saw run, its threads' names); top is the function it ran most (self). */
static int run_process(struct nsk_report *rep, const struct nsk_view *v)
{
	static const struct nsk_col_hint h[] = {
		{ "pct", NULL, NSK_COL_PCT },
		{ "top_pct", NULL, NSK_COL_PCT },
		{ "comm", NULL, NSK_COL_FLEX },
		{ "top_function", NULL, NSK_COL_FLEX },
		{ NULL, NULL, 0 }
	};
	sqlite3_stmt *st;

	st = nsk_report__prepare(rep,
		"WITH s AS (SELECT pid, stack_id, count(*) AS n, "
		"min(comm_id) AS comm_id "
		"FROM f_sample GROUP BY pid, stack_id), "
		"p AS (SELECT pid, sum(n) AS n, min(comm_id) AS comm_id "
		"FROM s GROUP BY pid), "
		"t AS (SELECT total(n) AS total FROM p), "
		"lf AS (SELECT s.pid, k.leaf_func_id AS fid, sum(s.n) AS n "
		"FROM s JOIN stack k ON k.id = s.stack_id "
		"GROUP BY s.pid, k.leaf_func_id), "
		/* SQLite: the bare column comes from the row of the max */
		"top AS (SELECT pid, fid, max(n) AS n FROM lf GROUP BY pid) "
		"SELECT p.n AS samples, round(100.0 * p.n / t.total, 2) AS pct, "
		"p.pid AS pid, "
		"(SELECT count(DISTINCT tid) FROM f_sample x WHERE x.pid = p.pid) "
		"AS threads, "
		"coalesce((SELECT r.comm FROM process r WHERE r.pid = p.pid "
		"ORDER BY r.time DESC LIMIT 1), c.name) AS comm, "
		"fn.name AS top_function, "
		"round(100.0 * top.n / p.n, 2) AS top_pct "
		"FROM p JOIN t LEFT JOIN comm c ON c.id = p.comm_id "
		"LEFT JOIN top ON top.pid = p.pid "
		"LEFT JOIN func fn ON fn.id = top.fid "
		"ORDER BY 1 DESC, p.pid LIMIT %ld",
		rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

const struct nsk_view nsk_view_cpu_function = {
	.name = "function",
	.signal = "cpu",
	.help = "CPU samples per function: self, total (on the stack)",
	.run = nsk_stacks__by_function,
	.weights = CPU_WEIGHTS,
	.unit = "samples",
	.measure = &cpu_measure,
};

const struct nsk_view nsk_view_cpu_stack = {
	.name = "stack",
	.signal = "cpu",
	.help = "CPU samples per call path",
	.run = nsk_stacks__by_stack,
	.weights = CPU_WEIGHTS,
	.unit = "samples",
	.measure = &cpu_measure,
};

const struct nsk_view nsk_view_cpu_process = {
	.name = "process",
	.signal = "cpu",
	.help = "CPU samples per process, with the function it ran most",
	.run = run_process,
	.weights = CPU_WEIGHTS,
	.unit = "samples",
	.measure = &cpu_measure,
};

const struct nsk_view nsk_view_cpu_thread = {
	.name = "thread",
	.signal = "cpu",
	.help = "CPU samples per process and thread",
	.run = run_thread,
	.weights = CPU_WEIGHTS,
	.unit = "samples",
	.measure = &cpu_measure,
};
