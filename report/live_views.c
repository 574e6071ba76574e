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

#define NO_DATA "no data for this signal in this recording"

struct view_def {
	const char *name;
	const char *title;
	const char *const *needs;
	const struct nsk_live_col *cols;
	int ncols;
	const char *const *sorts;
	int (*query)(sqlite3 *db, const struct nsk_live_query *q,
		     uint64_t since, struct nsk_live_table *t);
};

/* ---- helpers --------------------------------------------------------------- */

static int has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT 1 FROM sqlite_master WHERE type IN "
			       "('table','view') AND name = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

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

static int cpu_query(sqlite3 *db, const struct nsk_live_query *q,
		     uint64_t since, struct nsk_live_table *t)
{
#define CPU_SQL(order)                                                     \
	"WITH s AS (SELECT * FROM sample WHERE (?2 = 0 OR pid = ?2) "      \
	"  AND (?3 = 0 OR tid = ?3)), "                                    \
	"tot AS (SELECT SUM(weight) AS w, SUM(CASE WHEN time >= ?1 "       \
	"  THEN weight ELSE 0 END) AS r FROM s) "                          \
	"SELECT COALESCE(f.name, '[no stack]'), "                          \
	"  SUM(CASE WHEN s.time >= ?1 THEN s.weight ELSE 0 END) AS r, "    \
	"  SUM(s.weight) AS w, (SELECT r FROM tot), (SELECT w FROM tot) "  \
	"FROM s LEFT JOIN stack k ON k.id = s.stack_id "                   \
	"LEFT JOIN func f ON f.id = k.leaf_func_id "                       \
	"GROUP BY k.leaf_func_id ORDER BY " order " DESC, w DESC LIMIT ?4"
	const char *full = q->sort == 1 ? CPU_SQL("w") : CPU_SQL("r");
	sqlite3_stmt *st;
	int rc;

	if (prepare(db, full, q, since, &st, t) < 0)
		return 0;
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

/* ---- the table of views ------------------------------------------------------ */

static const struct view_def views[NSK_LIVE_NVIEWS] = {
	[NSK_LIVE_CPU] = { "cpu", "CPU: top functions (self)", cpu_needs,
			   cpu_cols, 4, cpu_sorts, cpu_query },
	[NSK_LIVE_ALLOC] = { "alloc", "Memory: allocation sites", NULL, NULL,
			     0, NULL, NULL },
	[NSK_LIVE_OFFCPU] = { "offcpu", "Blocking: threads off CPU", NULL,
			      NULL, 0, NULL, NULL },
	[NSK_LIVE_SYSCALL] = { "syscall", "Syscalls: slowest", NULL, NULL, 0,
			       NULL, NULL },
	[NSK_LIVE_NET] = { "net", "Network: connections with retransmits",
			   NULL, NULL, 0, NULL, NULL },
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
		if (!has_table(db->sql, *n)) {
			snprintf(t->note, sizeof(t->note), NO_DATA);
			return 0;
		}
	}
	now = nsk_live_db__now(db);
	since = now > q->window_ns ? now - q->window_ns : 0;
	v->query(db->sql, q, since, t);
	if (!t->nrows && !t->note[0])
		snprintf(t->note, sizeof(t->note), NO_DATA);
	return 0;
}
