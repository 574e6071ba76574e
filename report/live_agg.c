/* Running totals for nusku live: a redraw must cost what arrived since the
 * last one, not the whole recording.
 *
 * The overall columns of a view come from a temp table that sums the big
 * event tables (samples; allocations and frees; off-CPU intervals) by the
 * keys the view groups and filters on; each update adds only the rows past
 * a rowid watermark.  The "last window" columns scan the tail of the table from a
 * rowid known to come before the window: a mark says that when the table
 * had reached rowid R, no event loaded was newer than T, so if T is before
 * the window, no row up to R is in it (whatever the order of the stream). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "report/alloc_site.h"
#include "report/live_db.h"

struct agg_def {
	const char *table[2]; /* whose rowids the watermarks follow */
	const char *create;
	const char *add[2];   /* ?1 old watermark, ?2 new watermark */
	int (*after)(sqlite3 *db); /* run after each update, may be NULL */
};

/* Stacks never change: each one's site (report/alloc_site.h, the rule of
 * `nusku report --by alloc-site`) is found once. */
static int find_sites(sqlite3 *db)
{
	char *site = NULL, *sql, err[128];
	int ret = nsk_alloc_site__expr(db, "x.stack_id", &site, err, sizeof(err));

	if (ret)
		return ret;
	sql = sqlite3_mprintf("INSERT OR IGNORE INTO temp.live_site SELECT x.stack_id, "
			      "%s FROM (SELECT DISTINCT stack_id FROM temp.live_alloc "
			      "WHERE stack_id NOT IN (SELECT stack_id FROM temp.live_site)) x",
			      site);
	ret = !sql ? -ENOMEM : sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK ? -EIO : 0;
	sqlite3_free(sql);
	sqlite3_free(site);
	return ret;
}

static const struct agg_def defs[NSK_LIVE_NVIEWS] = {
	[NSK_LIVE_CPU] = {
		{ "sample" },
		"CREATE TEMP TABLE IF NOT EXISTS live_cpu (pid INTEGER, "
		"tid INTEGER, stack_id INTEGER, weight INTEGER, "
		"PRIMARY KEY (pid, tid, stack_id))",
		{ "INSERT INTO temp.live_cpu SELECT pid, tid, stack_id, "
		  "sum(weight) FROM sample WHERE rowid > ?1 AND rowid <= ?2 "
		  "GROUP BY pid, tid, stack_id ON CONFLICT DO UPDATE SET "
		  "weight = weight + excluded.weight" },
		NULL,
	},
	/* Allocations add to live and allocated bytes, and to the calls
	 * they stand for (weight / size: a sampled record stands for
	 * several); a free takes its allocation's bytes off live (frees of
	 * blocks the recording never saw allocated have no alloc_id and
	 * count nowhere), and so does the exit of its process (fn 'exit').
	 * Reservations (fn 'reserve') are address space, not heap. */
	[NSK_LIVE_ALLOC] = {
		{ "alloc", "free" },
		"CREATE TEMP TABLE IF NOT EXISTS live_alloc (pid INTEGER, "
		"tid INTEGER, stack_id INTEGER, live INTEGER, total INTEGER, "
		"n INTEGER, PRIMARY KEY (pid, tid, stack_id));"
		"CREATE TEMP TABLE IF NOT EXISTS live_site (stack_id INTEGER "
		"PRIMARY KEY, func_id INTEGER)",
		{ "INSERT INTO temp.live_alloc SELECT pid, tid, stack_id, "
		  "sum(weight), sum(weight), CAST(round(total(CASE WHEN size > 0 "
		  "THEN weight * 1.0 / size ELSE 1 END)) AS INTEGER) FROM alloc "
		  "WHERE rowid > ?1 AND rowid <= ?2 AND addr != 0 "
		  "AND fn IS NOT 'reserve' "
		  "GROUP BY pid, tid, stack_id ON CONFLICT DO UPDATE SET "
		  "live = live + excluded.live, total = total + excluded.total, "
		  "n = n + excluded.n",
		  "INSERT INTO temp.live_alloc SELECT a.pid, a.tid, a.stack_id, "
		  "-sum(a.weight), 0, 0 FROM free f JOIN alloc a "
		  "ON a.id = f.alloc_id WHERE f.rowid > ?1 AND f.rowid <= ?2 "
		  "AND a.fn IS NOT 'reserve' "
		  "GROUP BY a.pid, a.tid, a.stack_id ON CONFLICT DO UPDATE SET "
		  "live = live + excluded.live" },
		find_sites,
	},
	/* Off-CPU: per thread, the time blocked and its latest interval
	 * (the row whose end is latest: SQLite takes bare columns from the
	 * max row). */
	[NSK_LIVE_OFFCPU] = {
		{ "offcpu" },
		"CREATE TEMP TABLE IF NOT EXISTS live_offcpu (tid INTEGER PRIMARY KEY, "
		"pid INTEGER, comm_id INTEGER, total INTEGER, reason, dur INTEGER, "
		"e INTEGER)",
		{ "INSERT INTO temp.live_offcpu SELECT tid, pid, max(comm_id), "
		  "sum(duration), reason, duration, max(time + duration) FROM offcpu "
		  "WHERE rowid > ?1 AND rowid <= ?2 GROUP BY tid "
		  "ON CONFLICT (tid) DO UPDATE SET total = total + excluded.total, "
		  "comm_id = coalesce(excluded.comm_id, comm_id), "
		  "reason = CASE WHEN excluded.e >= e THEN excluded.reason ELSE reason END, "
		  "dur = CASE WHEN excluded.e >= e THEN excluded.dur ELSE dur END, "
		  "e = max(e, excluded.e)" },
		NULL,
	},
	/* Syscalls: per thread and syscall, the calls, errors, time and the
	 * slowest call of the aggregates recorded. */
	[NSK_LIVE_SYSCALL] = {
		{ "syscall_stat" },
		"CREATE TEMP TABLE IF NOT EXISTS live_sys (pid INTEGER, tid INTEGER, "
		"nr INTEGER, n INTEGER, err INTEGER, total INTEGER, mx INTEGER, "
		"PRIMARY KEY (pid, tid, nr))",
		{ "INSERT INTO temp.live_sys SELECT pid, tid, nr, sum(count), "
		  "sum(errors), sum(total_ns), max(max_ns) FROM syscall_stat "
		  "WHERE rowid > ?1 AND rowid <= ?2 GROUP BY pid, tid, nr "
		  "ON CONFLICT DO UPDATE SET n = n + excluded.n, "
		  "err = err + excluded.err, total = total + excluded.total, "
		  "mx = max(mx, excluded.mx)" },
		NULL,
	},
};

static int64_t max_rowid(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *st;
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT max(rowid) FROM %s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Marks that by recording time the table had reached rowid.  Marks stay
 * gap apart (a 32nd of the span live keeps): while the newest is within
 * gap of the one before, it moves on instead, so that many turns of
 * loading a second do not push the older marks, those a window needs,
 * out of the 64.  (A later mark for the same spot only makes a window's
 * first row found earlier: never wrong.) */
static void mark(struct nsk_live_src *src, int64_t rowid, uint64_t time,
		 uint64_t gap)
{
	unsigned max = sizeof(src->marks) / sizeof(src->marks[0]);

	if (src->nmarks >= 2 && time - src->marks[src->nmarks - 2].time < gap) {
		src->marks[src->nmarks - 1].rowid = rowid;
		src->marks[src->nmarks - 1].time = time;
		return;
	}
	if (src->nmarks == max) {
		memmove(&src->marks[0], &src->marks[1], (max - 1) * sizeof(src->marks[0]));
		src->nmarks--;
	}
	src->marks[src->nmarks].rowid = rowid;
	src->marks[src->nmarks].time = time;
	src->nmarks++;
}

/* Adds one table's new rows; then marks how far it got. */
static int update_src(struct nsk_live_db *db, struct nsk_live_src *src,
		      const char *table, const char *add, uint64_t since,
		      int64_t *lo)
{
	sqlite3_stmt *st;
	int64_t top = max_rowid(db->sql, table);
	int rc;

	*lo = 0;
	if (top < 0)
		return -EIO;
	if (top > src->watermark) {
		if (sqlite3_prepare_v2(db->sql, add, -1, &st, NULL) != SQLITE_OK)
			return -EIO;
		sqlite3_bind_int64(st, 1, src->watermark);
		sqlite3_bind_int64(st, 2, top);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -EIO;
		src->watermark = top;
		/* By recording time last_time, the table had reached top. */
		mark(src, top, db->last_time,
		     db->keep_ns / 32 > 50000000 ? db->keep_ns / 32 : 50000000);
	}
	/* The newest mark from before the window. */
	for (unsigned i = src->nmarks; i-- > 0;) {
		if (src->marks[i].time < since) {
			*lo = src->marks[i].rowid;
			break;
		}
	}
	return 0;
}

int nsk_live_agg__update(struct nsk_live_db *db, int view, uint64_t since,
			 int64_t lo[2])
{
	const struct agg_def *d = &defs[view];
	struct nsk_live_agg *a = &db->agg[view];
	int err;

	lo[0] = lo[1] = 0;
	if (!d->table[0])
		return -EINVAL;
	if (!a->ready) {
		if (sqlite3_exec(db->sql, d->create, NULL, NULL, NULL) != SQLITE_OK)
			return -EIO;
		a->ready = 1;
	}
	for (int i = 0; i < 2 && d->table[i]; i++) {
		err = update_src(db, &a->src[i], d->table[i], d->add[i], since,
				 &lo[i]);
		if (err < 0)
			return err;
	}
	return d->after ? d->after(db->sql) : 0;
}

/* sql with ?1 = a and, if it has one, ?2 = b. */
static int run(sqlite3 *db, const char *sql, int64_t a, int64_t b)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, a);
	if (sqlite3_bind_parameter_count(st) > 1)
		sqlite3_bind_int64(st, 2, b);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Rows summed into the running totals and older than the window the views
 * ask for (keep_ns before the newest event) are read by no query again:
 * they go, so that live's memory follows the last window and the
 * things still live, not the length of the recording (a 25.7M-record
 * file took 933 MB).  An allocation goes with the free that ended it
 * (a later free would look it up: the live ones stay), a failed one at
 * once; every view's totals are kept up to date for it, shown or not. */
int nsk_live_agg__prune(struct nsk_live_db *db, uint64_t keep_ns)
{
	static const int views[] = { NSK_LIVE_CPU, NSK_LIVE_ALLOC, NSK_LIVE_OFFCPU,
				     NSK_LIVE_SYSCALL };
	uint64_t since = db->last_time > keep_ns ? db->last_time - keep_ns : 0;
	int err = 0;

	for (unsigned v = 0; v < sizeof(views) / sizeof(views[0]) && !err; v++) {
		const struct agg_def *d = &defs[views[v]];
		int64_t lo[2], cut[2] = { 0, 0 };

		if (!nsk_live_db__has_table(db->sql, d->table[0]) ||
		    nsk_live_agg__update(db, views[v], since, lo) < 0)
			continue;
		for (int i = 0; i < 2 && d->table[i]; i++) {
			int64_t w = db->agg[views[v]].src[i].watermark;

			cut[i] = lo[i] < w ? lo[i] : w;
		}
		if (views[v] == NSK_LIVE_ALLOC) {
			err = run(db->sql, "DELETE FROM alloc WHERE rowid <= ?1 AND "
				  "(addr = 0 OR rowid IN (SELECT alloc_id FROM free "
				  "WHERE rowid <= ?2))", cut[0], cut[1]);
			err = err ?: run(db->sql, "DELETE FROM free WHERE rowid <= ?1",
					 cut[1], 0);
		} else {
			char sql[96];

			snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE rowid <= ?1",
				 d->table[0]);
			err = run(db->sql, sql, cut[0], 0);
		}
	}
	return err;
}
