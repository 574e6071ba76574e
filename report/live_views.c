/* The live views: one table per signal, asked of the database the report
 * loader fills.  Each view names the tables it needs; they are looked up in
 * sqlite_master at run time, so a view lights up when its signal's tables
 * exist and has rows, and says "no data for this signal in this recording"
 * otherwise.
 *
 * "Last window" means the newest window_ns of recording time (not wall
 * time), so a paused or replayed stream shows the same picture. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "report/live.h"
#include "report/live_db.h"
#include "report/syscall_names.h"

#define NO_DATA "no data for this signal in this recording"

struct view_def {
	const char *name;
	const char *title;
	const char *const *needs;
	const struct nsk_live_col *cols;
	int ncols;
	const char *const *sorts;
	int (*query)(struct nsk_live_db *ldb, const struct nsk_live_query *q,
		     uint64_t since, struct nsk_live_table *t);
};

/* ---- helpers --------------------------------------------------------------- */

/* Binds the filter and window parameters every query uses:
 * ?1 window start, ?2 pid (0 all), ?3 tid (0 all), ?4 limit. */
static int prepare(sqlite3 *db, const char *sql, const struct nsk_live_query *q,
		   uint64_t since, sqlite3_stmt **st, struct nsk_live_table *t)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		snprintf(t->note, sizeof(t->note), NO_DATA " (%s)",
			 sqlite3_errmsg(db));
		return -EINVAL;
	}
	sqlite3_bind_int64(*st, 1, (sqlite3_int64)since);
	sqlite3_bind_int64(*st, 2, q->pid);
	sqlite3_bind_int64(*st, 3, q->tid);
	sqlite3_bind_int64(*st, 4, q->limit > 0 ? q->limit : 20);
	return 0;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? (const char *)s : "?";
}

static void pct(char *buf, size_t len, double part, double whole)
{
	if (whole <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * part / whole);
}

/* ---- cpu: top functions by self time, last window and overall ---------------- */

static const char *const cpu_needs[] = { "sample", "stack", "func", NULL };
static const struct nsk_live_col cpu_cols[] = {
	{ "LAST%", NSK_LIVE_RIGHT, 6, 0 },
	{ "TOTAL%", NSK_LIVE_RIGHT, 6, 0 },
	{ "CPU", NSK_LIVE_RIGHT, 7, 0 },
	{ "FUNCTION", NSK_LIVE_LEFT, 8, 1 },
};
static const char *const cpu_sorts[] = { "last window", "overall", NULL };

static int cpu_query(struct nsk_live_db *ldb,
		     const struct nsk_live_query *q, uint64_t since,
		     struct nsk_live_table *t)
{
	sqlite3 *db = ldb->sql;

	/* Overall from the running totals, the window from the table's
	 * tail (live_agg.c); ?5 is a rowid before the window. */
#define CPU_SQL(order)                                                     \
	"WITH tot AS (SELECT stack_id, sum(weight) AS w FROM temp.live_cpu " \
	"  WHERE (?2 = 0 OR pid = ?2) AND (?3 = 0 OR tid = ?3) "            \
	"  GROUP BY stack_id), "                                             \
	"win AS (SELECT stack_id, sum(weight) AS r FROM sample "             \
	"  WHERE rowid > ?5 AND time >= ?1 AND (?2 = 0 OR pid = ?2) "        \
	"  AND (?3 = 0 OR tid = ?3) GROUP BY stack_id), "                    \
	"s AS (SELECT tot.stack_id, tot.w, coalesce(win.r, 0) AS r "         \
	"  FROM tot LEFT JOIN win ON win.stack_id = tot.stack_id), "         \
	"sums AS (SELECT sum(r) AS r, sum(w) AS w FROM s) "                  \
	"SELECT coalesce(f.name, '[no stack]'), sum(s.r) AS r, "             \
	"  sum(s.w) AS w, (SELECT r FROM sums), (SELECT w FROM sums) "       \
	"FROM s LEFT JOIN stack k ON k.id = s.stack_id "                     \
	"LEFT JOIN func f ON f.id = k.leaf_func_id "                         \
	"GROUP BY k.leaf_func_id ORDER BY " order " DESC, w DESC LIMIT ?4"
	const char *full = q->sort == 1 ? CPU_SQL("w") : CPU_SQL("r");
	sqlite3_stmt *st;
	int64_t lo[2];
	int rc;

	if (nsk_live_agg__update(ldb, NSK_LIVE_CPU, since, lo) < 0) {
		snprintf(t->note, sizeof(t->note), NO_DATA " (%s)",
			 sqlite3_errmsg(db));
		return 0;
	}
	if (prepare(db, full, q, since, &st, t) < 0)
		return 0;
	sqlite3_bind_int64(st, 5, lo[0]);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char last[16], total[16], cpu[16];
		const char *cells[4] = { last, total, cpu, col_text(st, 0) };

		pct(last, sizeof(last), sqlite3_column_double(st, 1),
		    sqlite3_column_double(st, 3));
		pct(total, sizeof(total), sqlite3_column_double(st, 2),
		    sqlite3_column_double(st, 4));
		nsk_live__fmt_ns(cpu, sizeof(cpu), sqlite3_column_double(st, 2));
		if (nsk_live_table__add(t, cells) < 0)
			break;
	}
	sqlite3_finalize(st);
	return 0;
}

/* ---- alloc: sites with live bytes and growth -------------------------------------- */

static const char *const alloc_needs[] = { "alloc", "free", "stack",
					   "stack_frame", "func", NULL };
static const struct nsk_live_col alloc_cols[] = {
	{ "LIVE", NSK_LIVE_RIGHT, 7, 0 },
	{ "GROWTH", NSK_LIVE_RIGHT, 7, 0 },
	{ "ALLOCATED", NSK_LIVE_RIGHT, 9, 0 },
	{ "CALLS", NSK_LIVE_RIGHT, 6, 0 },
	{ "SITE", NSK_LIVE_LEFT, 8, 1 },
};
static const char *const alloc_sorts[] = { "live bytes", "growth",
					   "allocated", NULL };

static int alloc_query(struct nsk_live_db *ldb,
			const struct nsk_live_query *q,
		       uint64_t since, struct nsk_live_table *t)
{
	sqlite3 *db = ldb->sql;
	/* Overall from the running totals (live_agg.c: live and allocated
	 * bytes, each stack's site); growth from the tails of alloc (?5)
	 * and free (?6): bytes allocated minus bytes freed in the window. */
#define ALLOC_SQL(order)                                                        \
	"WITH tot AS (SELECT stack_id, sum(live) AS live, sum(total) AS total, " \
	"  sum(n) AS n FROM temp.live_alloc WHERE (?2 = 0 OR pid = ?2) "        \
	"  AND (?3 = 0 OR tid = ?3) GROUP BY stack_id), "                       \
	"wa AS (SELECT stack_id, sum(weight) AS g FROM alloc WHERE rowid > ?5 " \
	"  AND time >= ?1 AND addr != 0 AND fn IS NOT 'reserve' "               \
	"  AND (?2 = 0 OR pid = ?2) "                                           \
	"  AND (?3 = 0 OR tid = ?3) GROUP BY stack_id), "                       \
	"wf AS (SELECT a.stack_id, sum(a.weight) AS g FROM free f "             \
	"  JOIN alloc a ON a.id = f.alloc_id WHERE f.rowid > ?6 "               \
	"  AND f.time >= ?1 AND a.fn IS NOT 'reserve' "                         \
	"  AND (?2 = 0 OR a.pid = ?2) "                                         \
	"  AND (?3 = 0 OR a.tid = ?3) GROUP BY a.stack_id), "                   \
	"per AS (SELECT s.func_id, tot.live, tot.total, tot.n, "                \
	"  coalesce(wa.g, 0) - coalesce(wf.g, 0) AS growth FROM tot "          \
	"  JOIN temp.live_site s ON s.stack_id = tot.stack_id "                 \
	"  LEFT JOIN wa ON wa.stack_id = tot.stack_id "                         \
	"  LEFT JOIN wf ON wf.stack_id = tot.stack_id) "                        \
	"SELECT coalesce(f.name, '[unknown]'), sum(live) AS live, "             \
	"  sum(growth) AS growth, sum(total) AS total, sum(n) AS n "            \
	"FROM per LEFT JOIN func f ON f.id = per.func_id "                      \
	"GROUP BY per.func_id HAVING n > 0 "                                    \
	"ORDER BY " order " DESC, total DESC, live DESC LIMIT ?4"
	const char *sql = q->sort == 1 ? ALLOC_SQL("growth")
			  : q->sort == 2 ? ALLOC_SQL("total")
					 : ALLOC_SQL("live");
	sqlite3_stmt *st;
	int64_t lo[2];

	if (nsk_live_agg__update(ldb, NSK_LIVE_ALLOC, since, lo) < 0) {
		snprintf(t->note, sizeof(t->note), NO_DATA " (%s)",
			 sqlite3_errmsg(db));
		return 0;
	}
	if (prepare(db, sql, q, since, &st, t) < 0)
		return 0;
	sqlite3_bind_int64(st, 5, lo[0]);
	sqlite3_bind_int64(st, 6, lo[1]);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char live[16], growth[24], total[16], n[16], g[16];
		const char *cells[5] = { live, growth, total, n, col_text(st, 0) };
		double gv = sqlite3_column_double(st, 2);

		nsk_live__fmt_bytes(live, sizeof(live), sqlite3_column_double(st, 1));
		nsk_live__fmt_bytes(g, sizeof(g), gv);
		snprintf(growth, sizeof(growth), "%s%s", gv > 0 ? "+" : "", g);
		nsk_live__fmt_bytes(total, sizeof(total), sqlite3_column_double(st, 3));
		nsk_live__fmt_count(n, sizeof(n), sqlite3_column_double(st, 4));
		if (nsk_live_table__add(t, cells) < 0)
			break;
	}
	sqlite3_finalize(st);
	return 0;
}

/* ---- offcpu: threads, their latest blocked reason, time blocked --------------------- */

static const char *const offcpu_needs[] = { "offcpu", NULL };
static const struct nsk_live_col offcpu_cols[] = {
	{ "TID", NSK_LIVE_RIGHT, 6, 0 },
	{ "LAST", NSK_LIVE_RIGHT, 7, 0 },
	{ "TOTAL", NSK_LIVE_RIGHT, 7, 0 },
	{ "REASON NOW", NSK_LIVE_LEFT, 10, 0 },
	{ "FOR", NSK_LIVE_RIGHT, 7, 0 },
	{ "THREAD", NSK_LIVE_LEFT, 8, 1 },
};
static const char *const offcpu_sorts[] = { "blocked in last window",
					    "blocked overall", NULL };

/* Reasons may be stored by name or by number (enum nsk_offcpu_reason). */
#define REASON(col)                                                             \
	"CASE typeof(" col ") WHEN 'integer' THEN CASE " col                    \
	" WHEN 1 THEN 'lock' WHEN 2 THEN 'disk' WHEN 3 THEN 'process' "         \
	"WHEN 4 THEN 'network' WHEN 5 THEN 'sleep' WHEN 6 THEN 'poll' "         \
	"WHEN 7 THEN 'runqueue' WHEN 8 THEN 'page fault' ELSE 'other' END "     \
	"ELSE " col " END"

static int offcpu_query(struct nsk_live_db *ldb,
			const struct nsk_live_query *q,
			uint64_t since, struct nsk_live_table *t)
{
	sqlite3 *db = ldb->sql;
	/* Totals and each thread's latest interval from the running
	 * totals (live_agg.c), the window from the table's tail (?5). */
#define OFFCPU_SQL(order)                                                       \
	"WITH per AS (SELECT * FROM temp.live_offcpu WHERE (?2 = 0 OR pid = ?2) " \
	"  AND (?3 = 0 OR tid = ?3)), "                                         \
	"win AS (SELECT tid, sum(duration) AS w FROM offcpu WHERE rowid > ?5 "  \
	"  AND time + duration >= ?1 AND (?2 = 0 OR pid = ?2) "                 \
	"  AND (?3 = 0 OR tid = ?3) GROUP BY tid) "                             \
	"SELECT per.tid, coalesce(win.w, 0) AS win, per.total AS total, "       \
	REASON("per.reason") ", per.dur, coalesce(c.name, '') FROM per "        \
	"LEFT JOIN win ON win.tid = per.tid LEFT JOIN comm c ON c.id = per.comm_id " \
	"ORDER BY " order " DESC, total DESC LIMIT ?4"
	const char *sql = q->sort == 1 ? OFFCPU_SQL("total") : OFFCPU_SQL("win");
	sqlite3_stmt *st;
	int64_t lo[2];

	if (nsk_live_agg__update(ldb, NSK_LIVE_OFFCPU, since, lo) < 0) {
		snprintf(t->note, sizeof(t->note), NO_DATA " (%s)",
			 sqlite3_errmsg(db));
		return 0;
	}
	if (prepare(db, sql, q, since, &st, t) < 0)
		return 0;
	sqlite3_bind_int64(st, 5, lo[0]);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char tid[16], win[16], total[16], dur[16];
		const char *cells[6] = { tid, win, total, col_text(st, 3), dur,
					 col_text(st, 5) };

		snprintf(tid, sizeof(tid), "%lld", sqlite3_column_int64(st, 0));
		nsk_live__fmt_ns(win, sizeof(win), sqlite3_column_double(st, 1));
		nsk_live__fmt_ns(total, sizeof(total), sqlite3_column_double(st, 2));
		nsk_live__fmt_ns(dur, sizeof(dur), sqlite3_column_double(st, 4));
		if (nsk_live_table__add(t, cells) < 0)
			break;
	}
	sqlite3_finalize(st);
	return 0;
}

/* ---- syscall: the slowest system calls ----------------------------------------------- */

static const char *const syscall_needs[] = { "syscall_stat", NULL };
static const struct nsk_live_col syscall_cols[] = {
	{ "MAX", NSK_LIVE_RIGHT, 7, 0 },
	{ "LASTMAX", NSK_LIVE_RIGHT, 7, 0 },
	{ "AVG", NSK_LIVE_RIGHT, 7, 0 },
	{ "CALLS", NSK_LIVE_RIGHT, 6, 0 },
	{ "ERRORS", NSK_LIVE_RIGHT, 6, 0 },
	{ "TOTAL", NSK_LIVE_RIGHT, 7, 0 },
	{ "SYSCALL", NSK_LIVE_LEFT, 8, 1 },
};
static const char *const syscall_sorts[] = { "slowest call", "total time",
					     "calls", NULL };

static int syscall_query(struct nsk_live_db *ldb,
			const struct nsk_live_query *q,
			 uint64_t since, struct nsk_live_table *t)
{
	sqlite3 *db = ldb->sql;
	/* Overall from the running totals, the window's slowest call
	 * from the table's tail (live_agg.c); ?5 is a rowid before it. */
#define SYSCALL_SQL(order)                                                      \
	"WITH tot AS (SELECT nr, max(mx) AS mx, sum(n) AS n, sum(err) AS err, "  \
	"  sum(total) AS total FROM temp.live_sys "                             \
	"  WHERE (?2 = 0 OR pid = ?2) AND (?3 = 0 OR tid = ?3) GROUP BY nr), "  \
	"win AS (SELECT nr, max(max_ns) AS lm FROM syscall_stat "               \
	"  WHERE rowid > ?5 AND time >= ?1 AND (?2 = 0 OR pid = ?2) "           \
	"  AND (?3 = 0 OR tid = ?3) GROUP BY nr) "                              \
	"SELECT tot.nr, tot.mx AS mx, win.lm, "                                 \
	"  tot.total * 1.0 / max(1, tot.n), tot.n AS n, tot.err, "              \
	"  tot.total AS total, (SELECT name FROM syscall_name sn "              \
	"  WHERE sn.nr = tot.nr AND sn.kernel = 1) "                            \
	"FROM tot LEFT JOIN win ON win.nr = tot.nr "                            \
	"ORDER BY " order " DESC LIMIT ?4"
	const char *sql = q->sort == 1 ? SYSCALL_SQL("total")
			  : q->sort == 2 ? SYSCALL_SQL("n")
					 : SYSCALL_SQL("mx");
	sqlite3_stmt *st;
	int64_t lo[2];

	if (nsk_live_agg__update(ldb, NSK_LIVE_SYSCALL, since, lo) < 0) {
		snprintf(t->note, sizeof(t->note), NO_DATA " (%s)",
			 sqlite3_errmsg(db));
		return 0;
	}
	if (prepare(db, sql, q, since, &st, t) < 0)
		return 0;
	sqlite3_bind_int64(st, 5, lo[0]);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char mx[16], last[16], avg[16], n[16], err[16], total[16], name[32];
		const char *cells[7] = { mx, last, avg, n, err, total, name };
		long long nr = sqlite3_column_int64(st, 0);
		const unsigned char *kname = sqlite3_column_text(st, 7);

		/* the recorded kernel's name first, then the build's */
		if (kname)
			snprintf(name, sizeof(name), "%s", (const char *)kname);
		else if (nr >= 0 && (unsigned long long)nr < nsk_syscall_count &&
			 nsk_syscall_names[nr])
			snprintf(name, sizeof(name), "%s", nsk_syscall_names[nr]);
		else
			snprintf(name, sizeof(name), "syscall_%lld", nr);
		nsk_live__fmt_ns(mx, sizeof(mx), sqlite3_column_double(st, 1));
		if (sqlite3_column_type(st, 2) == SQLITE_NULL)
			snprintf(last, sizeof(last), "-");
		else
			nsk_live__fmt_ns(last, sizeof(last), sqlite3_column_double(st, 2));
		nsk_live__fmt_ns(avg, sizeof(avg), sqlite3_column_double(st, 3));
		nsk_live__fmt_count(n, sizeof(n), sqlite3_column_double(st, 4));
		nsk_live__fmt_count(err, sizeof(err), sqlite3_column_double(st, 5));
		nsk_live__fmt_ns(total, sizeof(total), sqlite3_column_double(st, 6));
		if (nsk_live_table__add(t, cells) < 0)
			break;
	}
	sqlite3_finalize(st);
	return 0;
}

/* ---- net: connections, those with retransmits first ----------------------------------- */

static const char *const net_needs[] = { "conn", "retransmit", NULL };
static const struct nsk_live_col net_cols[] = {
	{ "LAST", NSK_LIVE_RIGHT, 4, 0 },
	{ "RETRANS", NSK_LIVE_RIGHT, 7, 0 },
	{ "RTO", NSK_LIVE_RIGHT, 6, 0 },
	{ "STATE", NSK_LIVE_LEFT, 11, 0 },
	{ "COMM", NSK_LIVE_LEFT, 8, 0 },
	{ "CONNECTION", NSK_LIVE_LEFT, 10, 1 },
};
static const char *const net_sorts[] = { "retransmits in last window",
					 "retransmits overall", NULL };

static int net_query(struct nsk_live_db *ldb,
			const struct nsk_live_query *q,
		     uint64_t since, struct nsk_live_table *t)
{
	sqlite3 *db = ldb->sql;
#define NET_SQL(order)                                                          \
	"WITH r AS (SELECT conn_id, "                                           \
	"  sum(CASE WHEN time >= ?1 THEN 1 ELSE 0 END) AS win, "                \
	"  count(*) AS total, max(rto_us) AS rto FROM retransmit "              \
	"  GROUP BY conn_id) "                                                  \
	"SELECT coalesce(r.win, 0) AS win, coalesce(r.total, 0) AS total, "     \
	"  r.rto, c.state, coalesce(cm.name, ''), "                             \
	"  c.local || ' > ' || c.remote FROM conn c "                           \
	"LEFT JOIN r ON r.conn_id = c.id LEFT JOIN comm cm ON cm.id = c.comm_id " \
	"WHERE (?2 = 0 OR c.pid = ?2) AND (?3 = 0 OR c.tid = ?3) "              \
	"ORDER BY " order " DESC, total DESC, c.last_time DESC LIMIT ?4"
	const char *sql = q->sort == 1 ? NET_SQL("total") : NET_SQL("win");
	sqlite3_stmt *st;

	if (prepare(db, sql, q, since, &st, t) < 0)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		char win[16], total[16], rto[16];
		const char *cells[6] = { win, total, rto, col_text(st, 3),
					 col_text(st, 4), col_text(st, 5) };

		nsk_live__fmt_count(win, sizeof(win), sqlite3_column_double(st, 0));
		nsk_live__fmt_count(total, sizeof(total), sqlite3_column_double(st, 1));
		if (sqlite3_column_type(st, 2) == SQLITE_NULL)
			snprintf(rto, sizeof(rto), "-");
		else
			nsk_live__fmt_ns(rto, sizeof(rto),
					 sqlite3_column_double(st, 2) * 1e3);
		if (nsk_live_table__add(t, cells) < 0)
			break;
	}
	sqlite3_finalize(st);
	return 0;
}

/* ---- the table of views ------------------------------------------------------ */

static const struct view_def views[NSK_LIVE_NVIEWS] = {
	[NSK_LIVE_CPU] = { "cpu", "CPU: top functions (self)", cpu_needs,
			   cpu_cols, 4, cpu_sorts, cpu_query },
	[NSK_LIVE_ALLOC] = { "alloc", "Memory: allocation sites", alloc_needs,
			     alloc_cols, 5, alloc_sorts, alloc_query },
	[NSK_LIVE_OFFCPU] = { "offcpu", "Blocking: threads off CPU",
			      offcpu_needs, offcpu_cols, 6, offcpu_sorts,
			      offcpu_query },
	[NSK_LIVE_SYSCALL] = { "syscall", "Syscalls: slowest", syscall_needs,
			       syscall_cols, 7, syscall_sorts, syscall_query },
	[NSK_LIVE_NET] = { "net", "Network: connections with retransmits",
			   net_needs, net_cols, 6, net_sorts, net_query },
};

const char *nsk_live_view__name(int view)
{
	return view >= 0 && view < NSK_LIVE_NVIEWS ? views[view].name : "?";
}

const char *nsk_live_view__title(int view)
{
	return view >= 0 && view < NSK_LIVE_NVIEWS ? views[view].title : "?";
}

int nsk_live_view__by_name(const char *name)
{
	for (int v = 0; v < NSK_LIVE_NVIEWS; v++)
		if (!strcmp(views[v].name, name))
			return v;
	return -1;
}

int nsk_live_view__nsorts(int view)
{
	int n = 0;

	if (view < 0 || view >= NSK_LIVE_NVIEWS || !views[view].sorts)
		return 1;
	while (views[view].sorts[n])
		n++;
	return n ? n : 1;
}

const char *nsk_live_view__sort_name(int view, int sort)
{
	if (view < 0 || view >= NSK_LIVE_NVIEWS || !views[view].sorts ||
	    sort < 0 || sort >= nsk_live_view__nsorts(view))
		return "";
	return views[view].sorts[sort];
}

static const struct nsk_live_col no_cols[] = { { "", 0, 0, 1 } };

int nsk_live_view__query(struct nsk_live_db *db, const struct nsk_live_query *q,
			 struct nsk_live_table *t)
{
	const struct view_def *v;
	uint64_t now, since;

	if (q->view < 0 || q->view >= NSK_LIVE_NVIEWS)
		return -EINVAL;
	v = &views[q->view];
	if (!v->query) {
		nsk_live_table__init(t, v->title, no_cols, 1);
		snprintf(t->note, sizeof(t->note), NO_DATA);
		return 0;
	}
	nsk_live_table__init(t, v->title, v->cols, v->ncols);
	for (const char *const *n = v->needs; n && *n; n++) {
		if (!nsk_live_db__has_table(db->sql, *n)) {
			snprintf(t->note, sizeof(t->note), NO_DATA);
			return 0;
		}
	}
	now = nsk_live_db__now(db);
	since = now > q->window_ns ? now - q->window_ns : 0;
	v->query(db, q, since, t);
	if (!t->nrows && !t->note[0])
		snprintf(t->note, sizeof(t->note), NO_DATA);
	return 0;
}
