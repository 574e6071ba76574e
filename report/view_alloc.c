/* The allocation views:
 *
 *   alloc-site    per call site: allocations, bytes, frees, failed calls,
 *                 live allocations and bytes at the end, live at the exit
 *                 of their process, peak live bytes
 *   leaks         what was never freed, by process and site, largest
 *                 first: live at the end of the recording (the process
 *                 still ran) or live at the exit of its process
 *   memory-time   live bytes over time in intervals, with the site that
 *                 held the most at the end of each
 *
 * A process's blocks stop being live when it exits or execs: the loader
 * gives them a free row with fn 'exit' (load_alloc.c).  Those are "live at
 * exit", never frees.  Reservations (fn 'reserve': PROT_NONE or
 * MAP_NORESERVE mappings) are address space, not heap: no view counts
 * them, the summary says how much there was (alloc_notes.c).
 *
 * A site is the first frame of the allocation's stack outside the
 * allocator (report/alloc_site.h: the rule the live view follows too).  A
 * site is a function; its "stack" is the call path that allocated the
 * most there.
 *
 * Sampled recordings carry weights: bytes = sum of weights, and an
 * allocation of size s with weight w stands for w / s allocations; with
 * no sampling w = s and every number is exact.  Frees count only when
 * their allocation is in the recording (load_alloc.c matched them), so
 * blocks allocated before an attach never make a site negative.
 *
 * --folded: allocated bytes (alloc-site) or live bytes (leaks).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "report/load.h"
#include "report/alloc_site.h"
#include "report/views.h"

/* Rows that are heap: every allocation but reservations. */
#define HEAP "fn IS NOT 'reserve'"
/* Every query reads the rows (alloc, free) and the sums (alloc_sum, made
 * instead of rows for a report without filters: load_alloc_sum.c) alike:
 * one of the two is empty. */
#define ALLOC_WEIGHTS \
	"SELECT stack_id, weight, pid FROM f_alloc WHERE addr != 0 AND " HEAP \
	" UNION ALL SELECT stack_id, bytes, pid FROM main.alloc_sum WHERE n > 0" \
	" AND " HEAP
/* never freed: live at the end or at the exit of its process */
#define LIVE(a) \
	"NOT EXISTS (SELECT 1 FROM free fr WHERE fr.alloc_id = " a ".id AND " \
	"fr.fn IS NOT 'exit')"
#define LIVE_WEIGHTS \
	"SELECT a.stack_id, a.weight, a.pid FROM f_alloc a WHERE a.addr != 0 " \
	"AND a." HEAP " AND " LIVE("a") \
	" UNION ALL SELECT stack_id, live_bytes + exit_bytes, pid FROM " \
	"main.alloc_sum WHERE live_n + exit_n > 0 AND " HEAP

/* Allocations one record stands for (see the top of this file). */
#define COUNT_OF(a) "(CASE WHEN " a ".size > 0 THEN " a ".weight * 1.0 / " \
	a ".size ELSE 1 END)"

/* For exports: allocations and bytes allocated, and of them those never
 * freed (live at the end or at their process's exit), as Go's heap
 * profiles have them.  alloc shows the allocated bytes, live the live. */
static char *alloc_sql(struct nsk_report *rep)
{
	(void)rep;
	return sqlite3_mprintf(
		"SELECT stack_id, pid, tid, comm_id, "
		"CAST(round(total(c)) AS INTEGER), CAST(total(w) AS INTEGER), "
		"CAST(round(total(lc)) AS INTEGER), CAST(total(lw) AS INTEGER) FROM ("
		"SELECT stack_id, pid, tid, comm_id, weight AS w, c,"
		" CASE WHEN live THEN c END AS lc, CASE WHEN live THEN weight END AS lw"
		" FROM (SELECT a.stack_id, a.pid, a.tid, a.comm_id, a.weight, "
		COUNT_OF("a") " AS c, " LIVE("a") " AS live FROM f_alloc a "
		"WHERE a.addr != 0 AND a." HEAP ") "
		"UNION ALL SELECT stack_id, pid, tid, comm_id, bytes, allocs,"
		" live_allocs + exit_allocs, live_bytes + exit_bytes FROM main.alloc_sum"
		" WHERE n > 0 AND " HEAP ") "
		"GROUP BY stack_id, pid, tid, comm_id");
}

#define HEAP_VALUES                                                        \
	{ { "alloc_objects", "count" }, { "alloc_space", "bytes" },          \
	  { "inuse_objects", "count" }, { "inuse_space", "bytes" } }

static const struct nsk_measure alloc_measure = {
	.name = "alloc",
	.title = "Bytes allocated",
	.help = "bytes allocated (alloc_space, alloc_objects, inuse_*)",
	.sql = alloc_sql,
	.values = HEAP_VALUES,
	.nvalues = 4,
	.shown = 1,
	.graphed = 1,
	.period_type = -1,
	.colour_label = -1,
};
const struct nsk_measure *const nsk_measure_alloc = &alloc_measure;

static const struct nsk_measure live_measure = {
	.name = "live",
	.title = "Bytes never freed (live at the end or at exit)",
	.help = "bytes never freed (inuse_space first)",
	.sql = alloc_sql,
	.values = HEAP_VALUES,
	.nvalues = 4,
	.shown = 3,
	.graphed = 3,
	.period_type = -1,
	.colour_label = -1,
};
const struct nsk_measure *const nsk_measure_live = &live_measure;

/* Builds temp.asite (stack_id, func_id): the site of each stack that
 * allocated, from every row or sum loaded (a filter selects later). */
int nsk_alloc__sites(sqlite3 *db, char *err, size_t len)
{
	char *site = NULL, *sql = NULL, *msg = NULL;
	int ret = nsk_alloc_site__expr(db, "x.stack_id", &site, err, len);

	if (ret)
		return ret;
	sql = sqlite3_mprintf(
		"DROP TABLE IF EXISTS temp.asite;"
		"CREATE TEMP TABLE asite (stack_id INTEGER PRIMARY KEY, func_id INTEGER);"
		"INSERT INTO temp.asite SELECT x.stack_id, %s"
		" FROM (SELECT stack_id FROM main.alloc WHERE " HEAP
		" UNION SELECT stack_id FROM main.alloc_sum WHERE " HEAP ") x",
		site);
	if (!sql) {
		snprintf(err, len, "out of memory");
		ret = -ENOMEM;
		goto cleanup;
	}
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, len, "%s", msg ? msg : "SQL error");
		ret = -EIO;
	}
cleanup:
	sqlite3_free(msg);
	sqlite3_free(sql);
	sqlite3_free(site);
	return ret;
}

/* Builds temp.asum: one row per site with every number the views show
 * (and temp.asite: each stack's site; nusku diff reads both). */
int nsk_alloc__site_sums(struct nsk_report *rep)
{
	char *msg = NULL;
	int err = nsk_alloc__sites(rep->db, rep->err, sizeof(rep->err));

	if (err)
		return err;
	if (sqlite3_exec(rep->db,
		"DROP TABLE IF EXISTS temp.ablk;"
		/* Each block with its site and, if freed or gone with its
		 * process (fexit 1), when. */
		"CREATE TEMP TABLE ablk AS SELECT a.id, a.time, a.pid, a.tid, a.comm_id,"
		" a.addr, a.size, a.weight, a.stack_id, s.func_id AS site,"
		" fr.time AS ftime, coalesce(fr.fn = 'exit', 0) AS fexit "
		"FROM f_alloc a JOIN temp.asite s ON s.stack_id = a.stack_id "
		"LEFT JOIN free fr ON fr.alloc_id = a.id WHERE a." HEAP ";"
		"DROP TABLE IF EXISTS temp.akey;"
		/* The blocks summed per stack, process, thread, name and site,
		 * as alloc_sum has them when the loader summed them. */
		"CREATE TEMP TABLE akey AS SELECT stack_id, pid, tid, comm_id, site,"
		" sum(addr != 0) AS n, sum(addr = 0) AS failed,"
		" total(CASE WHEN addr != 0 THEN weight END) AS bytes,"
		" total(CASE WHEN addr != 0 THEN " COUNT_OF("b") " END) AS allocs,"
		" sum(ftime IS NOT NULL AND NOT fexit) AS frees_n,"
		" total(CASE WHEN ftime IS NOT NULL AND NOT fexit THEN " COUNT_OF("b") " END) AS frees,"
		" total(CASE WHEN ftime IS NOT NULL AND NOT fexit THEN weight END) AS freed_bytes,"
		" sum(addr != 0 AND ftime IS NULL) AS live_n,"
		" total(CASE WHEN addr != 0 AND ftime IS NULL THEN " COUNT_OF("b") " END) AS live_allocs,"
		" total(CASE WHEN addr != 0 AND ftime IS NULL THEN weight END) AS live_bytes,"
		" sum(fexit) AS exit_n,"
		" total(CASE WHEN fexit THEN " COUNT_OF("b") " END) AS exit_allocs,"
		" total(CASE WHEN fexit THEN weight END) AS exit_bytes "
		"FROM temp.ablk b GROUP BY stack_id, pid, tid, comm_id, site "
		"UNION ALL SELECT s.stack_id, s.pid, s.tid, s.comm_id, x.func_id, s.n,"
		" s.failed, s.bytes, s.allocs, s.frees_n, s.frees, s.freed_bytes,"
		" s.live_n, s.live_allocs, s.live_bytes, s.exit_n, s.exit_allocs,"
		" s.exit_bytes FROM main.alloc_sum s JOIN temp.asite x"
		" ON x.stack_id = s.stack_id WHERE s." HEAP ";"
		"DROP TABLE IF EXISTS temp.apeak;"
		/* Peak live bytes per site: a running sum over its
		 * allocations (+) and frees (-), frees first at equal times
		 * (or as the loader's second read found it: alloc_peak). */
		"CREATE TEMP TABLE apeak AS SELECT site, max(live) AS peak FROM ("
		" SELECT site, sum(dw) OVER (PARTITION BY site ORDER BY t, dw"
		"  ROWS UNBOUNDED PRECEDING) AS live FROM ("
		"  SELECT site, time AS t, weight AS dw FROM temp.ablk WHERE addr != 0"
		"  UNION ALL SELECT site, ftime, -weight FROM temp.ablk"
		"  WHERE ftime IS NOT NULL)) GROUP BY site "
		"UNION ALL SELECT site, peak FROM main.alloc_peak;"
		"DROP TABLE IF EXISTS temp.astack;"
		/* The call path that allocated the most bytes at each site. */
		"CREATE TEMP TABLE astack AS SELECT site, stack_id FROM ("
		" SELECT site, stack_id, row_number() OVER (PARTITION BY site"
		"  ORDER BY total(bytes) DESC, stack_id) AS rn FROM temp.akey"
		"  GROUP BY site, stack_id) WHERE rn = 1;"
		"DROP TABLE IF EXISTS temp.asum;"
		"CREATE TEMP TABLE asum AS SELECT k.site,"
		" CAST(round(total(allocs)) AS INTEGER) AS allocs,"
		" CAST(total(bytes) AS INTEGER) AS bytes,"
		" CAST(round(total(frees)) AS INTEGER) AS frees,"
		" CAST(total(freed_bytes) AS INTEGER) AS freed_bytes,"
		" CAST(round(total(live_allocs)) AS INTEGER) AS live_allocs,"
		" CAST(total(live_bytes) AS INTEGER) AS live_bytes,"
		" CAST(round(total(exit_allocs)) AS INTEGER) AS exit_allocs,"
		" CAST(total(exit_bytes) AS INTEGER) AS exit_bytes,"
		" sum(failed) AS failed,"
		" coalesce(p.peak, 0) AS peak_bytes "
		"FROM temp.akey k LEFT JOIN temp.apeak p ON p.site = k.site "
		"GROUP BY k.site",
		NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(rep->err, sizeof(rep->err), "%s", msg ? msg : "SQL error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/* Text keeps to 80 columns: short labels, details in JSON/CSV only. */
static const struct nsk_col_hint site_hints[] = {
	{ "site", NULL, NSK_COL_FLEX },
	{ "module", NULL, NSK_COL_NARROW },
	{ "stack", NULL, NSK_COL_DATA_ONLY },
	{ "freed_bytes", NULL, NSK_COL_DATA_ONLY },
	{ "failed", NULL, NSK_COL_DATA_ONLY },
	{ "live_allocs", NULL, NSK_COL_DATA_ONLY },
	{ "live_bytes", "live", 0 },
	{ "exit_bytes", "at_exit", 0 },
	{ "exit_allocs", NULL, NSK_COL_DATA_ONLY },
	{ "peak_bytes", "peak", 0 },
	{ NULL, NULL, 0 }
};

/* Leaks, by process and site: live at the end (its process still ran)
 * or live at its process's exit. */
static const struct nsk_col_hint leak_hints[] = {
	{ "site", NULL, NSK_COL_FLEX },
	{ "module", NULL, NSK_COL_NARROW },
	{ "process", NULL, NSK_COL_NARROW },
	{ "stack", NULL, NSK_COL_DATA_ONLY },
	{ "live_bytes", "live", 0 },
	{ "live_allocs", "n", 0 },
	{ "exit_bytes", "at_exit", 0 },
	{ "exit_allocs", "n_exit", NSK_COL_DATA_ONLY },
	{ NULL, NULL, 0 }
};

static int run_leaks(struct nsk_report *rep, const struct nsk_view *v)
{
	sqlite3_stmt *st;
	char *msg = NULL;
	int err;

	if (rep->opts->folded)
		return nsk_alloc_notes__add(rep) ?: nsk_stacks__folded(rep, v);
	err = nsk_alloc__site_sums(rep);
	if (err)
		return err;
	if (sqlite3_exec(rep->db,
		"DROP TABLE IF EXISTS temp.aleak;"
		"CREATE TEMP TABLE aleak AS SELECT pid, site, max(comm_id) AS comm_id,"
		" CAST(total(live_bytes) AS INTEGER) AS live_bytes,"
		" CAST(round(total(live_allocs)) AS INTEGER) AS live_allocs,"
		" CAST(total(exit_bytes) AS INTEGER) AS exit_bytes,"
		" CAST(round(total(exit_allocs)) AS INTEGER) AS exit_allocs "
		"FROM temp.akey WHERE live_n + exit_n > 0 GROUP BY pid, site",
		NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(rep->err, sizeof(rep->err), "%s", msg ? msg : "SQL error");
		sqlite3_free(msg);
		return -EIO;
	}
	err = nsk_alloc_notes__add(rep);
	if (err)
		return err;
	st = nsk_report__prepare(rep,
		"SELECT l.live_bytes, l.live_allocs, l.exit_bytes, l.exit_allocs,"
		" l.pid, c.name AS process, u.name AS site, u.module AS module,"
		" st.chain AS stack "
		"FROM temp.aleak l JOIN func u ON u.id = l.site "
		"LEFT JOIN comm c ON c.id = l.comm_id "
		"LEFT JOIN temp.astack k ON k.site = l.site "
		"LEFT JOIN stack st ON st.id = k.stack_id "
		"ORDER BY l.live_bytes DESC, l.exit_bytes DESC, l.live_allocs DESC,"
		" l.pid, u.name LIMIT %ld", rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, leak_hints);
}

static int run_alloc_site(struct nsk_report *rep, const struct nsk_view *v)
{
	int64_t late;
	sqlite3_stmt *st;
	int err;

	if (rep->opts->folded)
		return nsk_alloc_notes__add(rep) ?: nsk_stacks__folded(rep, v);
	err = nsk_alloc__site_sums(rep) ?: nsk_alloc_notes__add(rep);
	if (err)
		return err;
	late = nsk_report__info(rep, "alloc.peak_late");
	if (late)
		nsk_report__note(rep, "peak: %" PRId64 " allocation records came "
				 "more than 3 s or 2M records after later ones; "
				 "the peaks may be off by them", late);
	st = nsk_report__prepare(rep,
		"SELECT s.bytes, s.allocs, s.frees, s.freed_bytes, s.live_allocs,"
		" s.live_bytes, s.exit_bytes, s.exit_allocs, s.peak_bytes, s.failed,"
		" u.name AS site, u.module AS module, st.chain AS stack "
		"FROM temp.asum s JOIN func u ON u.id = s.site "
		"LEFT JOIN temp.astack k ON k.site = s.site "
		"LEFT JOIN stack st ON st.id = k.stack_id "
		"ORDER BY s.bytes DESC, s.allocs DESC, u.name LIMIT %ld",
		rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, site_hints);
}

/* Live bytes at the end of each of NBUCKETS equal intervals of the
 * recording, what was allocated and freed in it, and the site holding the
 * most live bytes at its end. */
#define NBUCKETS NSK_ALLOC_BUCKETS

static int run_memory_time(struct nsk_report *rep, const struct nsk_view *v)
{
	static const struct nsk_col_hint h[] = {
		{ "top_site", NULL, NSK_COL_FLEX },
		{ "interval", "#", 0 },
		{ "end_s", NULL, NSK_COL_DATA_ONLY },
		{ "allocs", NULL, NSK_COL_DATA_ONLY },
		{ "frees", NULL, NSK_COL_DATA_ONLY },
		{ "live_bytes", "live", 0 },
		{ "alloc_bytes", "alloc", 0 },
		{ "freed_bytes", "freed", 0 },
		{ "exit_bytes", "at_exit", 0 },
		{ "top_site_bytes", "top_live", 0 },
		{ NULL, NULL, 0 }
	};
	int64_t t0 = nsk_report__info(rep, "time_start_ns");
	int64_t t1 = nsk_report__info(rep, "time_end_ns");
	/* u64 times in SQLite's int64: the span as unsigned, so a time past
	 * 2^63 (a hostile file) cannot overflow; a step fits in int64. */
	int64_t step = (int64_t)(((uint64_t)t1 - (uint64_t)t0) / NBUCKETS + 1);
	char *msg = NULL;
	sqlite3_stmt *st;
	char *sql;
	int err;

	if (rep->opts->folded)
		return nsk_alloc_notes__add(rep) ?: nsk_stacks__folded(rep, v);
	err = nsk_alloc__site_sums(rep) ?: nsk_alloc_notes__add(rep);
	if (err)
		return err;
	sql = sqlite3_mprintf(
		"DROP TABLE IF EXISTS temp.adelta;"
		/* Bytes in (+) and out (-) per interval and site; out of
		 * them, gone with their process (exb). */
		"CREATE TEMP TABLE adelta AS SELECT bucket, site, total(inb) AS inb,"
		" total(outb) AS outb, total(inn) AS inn, total(outn) AS outn,"
		" total(exb) AS exb FROM ("
		" SELECT (time - %lld) / %lld AS bucket, site, weight AS inb, 0 AS outb,"
		"  " COUNT_OF("ablk") " AS inn, 0 AS outn, 0 AS exb FROM temp.ablk"
		"  WHERE addr != 0"
		" UNION ALL SELECT (ftime - %lld) / %lld, site, 0, weight, 0,"
		"  CASE WHEN fexit THEN 0 ELSE " COUNT_OF("ablk") " END,"
		"  CASE WHEN fexit THEN weight ELSE 0 END"
		"  FROM temp.ablk WHERE ftime IS NOT NULL)"
		" GROUP BY bucket, site"
		" UNION ALL SELECT bucket, site, inb, outb, inn, outn, exb"
		" FROM main.alloc_bucket;"
		"DROP TABLE IF EXISTS temp.alive;"
		/* Live bytes per site at the end of each interval. */
		"CREATE TEMP TABLE alive AS WITH RECURSIVE b(i) AS (SELECT 0 UNION ALL"
		" SELECT i + 1 FROM b WHERE i < %d), s AS (SELECT DISTINCT site FROM temp.adelta)"
		" SELECT b.i AS bucket, s.site, (SELECT total(inb - outb) FROM temp.adelta d"
		"  WHERE d.site = s.site AND d.bucket <= b.i) AS live FROM b, s;",
		(long long)t0, (long long)step, (long long)t0, (long long)step,
		NBUCKETS - 1);
	if (!sql)
		return -ENOMEM;
	if (sqlite3_exec(rep->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(rep->err, sizeof(rep->err), "%s", msg ? msg : "SQL error");
		sqlite3_free(msg);
		sqlite3_free(sql);
		return -EIO;
	}
	sqlite3_free(sql);
	st = nsk_report__prepare(rep,
		"WITH b(i) AS (SELECT DISTINCT bucket FROM temp.alive),"
		" d AS (SELECT bucket, total(inb) AS inb, total(outb) AS outb,"
		"  total(inn) AS inn, total(outn) AS outn, total(exb) AS exb"
		"  FROM temp.adelta GROUP BY bucket),"
		" l AS (SELECT bucket, total(live) AS live FROM temp.alive GROUP BY bucket),"
		" top AS (SELECT bucket, site, live FROM (SELECT bucket, site, live,"
		"  row_number() OVER (PARTITION BY bucket ORDER BY live DESC, site) AS rn"
		"  FROM temp.alive) WHERE rn = 1) "
		"SELECT b.i AS interval, round((b.i * %lld) / 1e9, 3) AS start_s,"
		" round(((b.i + 1) * %lld) / 1e9, 3) AS end_s,"
		" CAST(l.live AS INTEGER) AS live_bytes,"
		" CAST(coalesce(d.inb, 0) AS INTEGER) AS alloc_bytes,"
		" CAST(round(coalesce(d.inn, 0)) AS INTEGER) AS allocs,"
		" CAST(coalesce(d.outb - d.exb, 0) AS INTEGER) AS freed_bytes,"
		" CAST(round(coalesce(d.outn, 0)) AS INTEGER) AS frees,"
		" CAST(coalesce(d.exb, 0) AS INTEGER) AS exit_bytes,"
		" CASE WHEN top.live > 0 THEN u.name END AS top_site,"
		" CAST(CASE WHEN top.live > 0 THEN top.live ELSE 0 END AS INTEGER) AS top_site_bytes "
		"FROM b JOIN l ON l.bucket = b.i LEFT JOIN d ON d.bucket = b.i"
		" LEFT JOIN top ON top.bucket = b.i LEFT JOIN func u ON u.id = top.site "
		"ORDER BY b.i LIMIT %ld",
		(long long)step, (long long)step, rep->opts->limit);
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

const struct nsk_view nsk_view_alloc_site = {
	.name = "alloc-site",
	.signal = "alloc",
	.help = "allocations per call site: count, bytes, frees, live at the "
		"end, live at their process's exit, peak live (--folded: "
		"allocated bytes)",
	.run = run_alloc_site,
	.weights = ALLOC_WEIGHTS,
	.unit = "bytes",
	.reads = NSK_VIEW_READS_ALLOC | NSK_VIEW_READS_ALLOC_TIME,
	.measure = &alloc_measure,
};

const struct nsk_view nsk_view_alloc_leaks = {
	.name = "leaks",
	.signal = "alloc",
	.help = "memory never freed, by process and call site: live at the "
		"end or at its process's exit (--folded: those bytes)",
	.run = run_leaks,
	.weights = LIVE_WEIGHTS,
	.unit = "bytes",
	.reads = NSK_VIEW_READS_ALLOC,
	.measure = &live_measure,
};

const struct nsk_view nsk_view_alloc_memory_time = {
	.name = "memory-time",
	.signal = "alloc",
	.help = "live heap bytes over time in 20 intervals, with the site "
		"holding the most",
	.run = run_memory_time,
	.weights = LIVE_WEIGHTS,
	.unit = "bytes",
	.reads = NSK_VIEW_READS_ALLOC | NSK_VIEW_READS_ALLOC_TIME,
	.measure = &live_measure,
};
