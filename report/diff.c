/* nusku diff's engine (report/diff.h): the views' SQL, the sums of each
 * recording copied into one small database, the tests, the rows. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/db.h"
#include "report/diff.h"
#include "report/diff_stats.h"
#include "report/syscall_names.h"
#include "report/views.h"

/* Self samples per function: keyed by name and module, never addresses,
 * so two builds compare. */
static const struct nsk_diff_view diff_function = {
	.name = "function",
	.help = "CPU samples per function (self): share of the samples",
	.report_view = "function",
	.keys = { "function", "module" },
	.test = NSK_DIFF_SHARE,
	.shown = NSK_DIFF_SHOW_PCT,
	.unit = "%",
	.less = "faster",
	.more = "slower",
	.events = "samples",
	.what = "Fisher's exact test of each function's share of the samples",
	.agg = "SELECT f.name, f.module, count(*), count(*) FROM f_sample s "
	       "JOIN stack_func sf ON sf.stack_id = s.stack_id AND sf.leaf "
	       "JOIN func f ON f.id = sf.func_id GROUP BY sf.func_id",
	.total = "SELECT count(*) FROM f_sample",
};

/* Bytes per allocation site (the site rule of --by alloc-site); tested on
 * the allocation records: calls in an exact recording, samples in a
 * sampled one (temp.akey's n: the records with an address, as rows or as
 * the loader summed them). */
static const struct nsk_diff_view diff_alloc = {
	.name = "alloc-site",
	.help = "bytes allocated per site; share of the allocation records",
	.report_view = "alloc-site",
	.keys = { "site", "module" },
	.test = NSK_DIFF_SHARE,
	.shown = NSK_DIFF_SHOW_AMOUNT,
	.unit = "bytes",
	.less = "less",
	.more = "more",
	.events = "records",
	.what = "Fisher's exact test of each site's share of the allocation "
		"records",
	.prepare = nsk_alloc__site_sums,
	.agg = "WITH r AS (SELECT site, sum(n) AS n FROM temp.akey GROUP BY site) "
	       "SELECT f.name, f.module, s.bytes, coalesce(r.n, 0) FROM temp.asum s "
	       "JOIN func f ON f.id = s.site LEFT JOIN r ON r.site = s.site",
	.total = "SELECT coalesce(sum(n), 0) FROM temp.akey",
};

#define BLOCK_KEYS "o.reason, coalesce(b.function, '[kernel]')"
#define BLOCK_FROM " FROM f_offcpu o LEFT JOIN temp.bfn b ON b.stack_id = o.stack_id "

/* Off-CPU intervals per reason and code path (the program's own function,
 * as --by blocking names paths): their durations ranked. */
static const struct nsk_diff_view diff_blocking = {
	.name = "blocking",
	.help = "off-CPU intervals per reason and code path: their durations",
	.report_view = "blocking",
	.keys = { "reason", "function" },
	.test = NSK_DIFF_RANK,
	.shown = NSK_DIFF_SHOW_MEDIAN,
	.unit = "ns",
	.less = "faster",
	.more = "slower",
	.events = "intervals",
	.what = "Mann-Whitney U test of the interval durations",
	.prepare = nsk_blocking__own_functions,
	.agg = "SELECT " BLOCK_KEYS ", sum(o.duration), count(*)" BLOCK_FROM
	       "GROUP BY 1, 2",
	.hist = "SELECT " BLOCK_KEYS ", o.duration, count(*)" BLOCK_FROM
		"GROUP BY 1, 2, 3",
};

/* Calls per syscall: their durations ranked in the exact log2 histograms
 * (a bucket is a tie). */
static const struct nsk_diff_view diff_syscall = {
	.name = "syscall",
	.help = "calls per syscall: their durations (latency histograms)",
	.report_view = "syscall",
	.keys = { "syscall", NULL },
	.test = NSK_DIFF_RANK,
	.shown = NSK_DIFF_SHOW_MEDIAN,
	.unit = "ns",
	.less = "faster",
	.more = "slower",
	.events = "calls",
	.what = "Mann-Whitney U test of the call durations (log2 buckets as ties)",
	.log2_buckets = 1,
	/* a.nr: a bare nr would be the name table's own inside its query */
	.agg = "SELECT " NSK_SYSCALL_NAME_SQL("a.nr") ", '', a.t, a.n FROM (SELECT "
	       "nr, sum(total_ns) AS t, sum(count) AS n FROM f_syscall_stat "
	       "GROUP BY nr) a",
	.hist = "SELECT " NSK_SYSCALL_NAME_SQL("a.nr") ", '', a.bucket, a.n FROM ("
		"SELECT s.nr, h.bucket, sum(h.count) AS n FROM syscall_hist h "
		"JOIN f_syscall_stat s ON s.id = h.stat_id GROUP BY s.nr, h.bucket) a",
};

const struct nsk_diff_view *const nsk_diff_views[] = {
	&diff_function, &diff_alloc, &diff_blocking, &diff_syscall, NULL
};

const struct nsk_diff_view *nsk_diff__view(const char *name)
{
	for (const struct nsk_diff_view *const *v = nsk_diff_views; *v; v++)
		if (!strcmp((*v)->name, name))
			return *v;
	return NULL;
}

struct row {
	char *k1, *k2;
	double amount[2];
	int64_t events[2];
	double p, p_raw, z;
	double median[2]; /* RANK: each side's median duration, ns */
};

struct diff {
	struct nsk_report *rep[2];
	const struct nsk_diff_view *v;
	sqlite3 *db; /* the rows of both */
	struct row *rows;
	size_t nrows;
	int64_t total[2];
	char *err; /* base's rep->err */
	size_t errlen;
};

static int db_fail(struct diff *d, sqlite3 *db)
{
	snprintf(d->err, d->errlen, "%s", sqlite3_errmsg(db));
	return -EIO;
}

static int exec(struct diff *d, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(d->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(d->err, d->errlen, "%s", msg ? msg : "SQL error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/* Copies the rows of fmt (four columns) run on side's database into
 * table of the diff's, after a first column: the side. */
static int copy(struct diff *d, int side, const char *fmt, const char *table)
{
	struct nsk_report *rep = d->rep[side];
	sqlite3_stmt *st = NULL, *ins = NULL;
	char *sql, ins_sql[64];
	int rc, err = 0;

	sql = sqlite3_mprintf(fmt, nsk_syscall_arch);
	if (!sql) {
		snprintf(d->err, d->errlen, "out of memory");
		return -ENOMEM;
	}
	if (sqlite3_prepare_v2(rep->db, sql, -1, &st, NULL) != SQLITE_OK) {
		err = db_fail(d, rep->db);
		goto cleanup;
	}
	snprintf(ins_sql, sizeof(ins_sql), "INSERT INTO %s VALUES (%d, ?, ?, ?, ?)",
		 table, side);
	if (sqlite3_prepare_v2(d->db, ins_sql, -1, &ins, NULL) != SQLITE_OK) {
		err = db_fail(d, d->db);
		goto cleanup;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < 4; c++)
			sqlite3_bind_value(ins, c + 1, sqlite3_column_value(st, c));
		if (sqlite3_step(ins) != SQLITE_DONE) {
			err = db_fail(d, d->db);
			goto cleanup;
		}
		sqlite3_reset(ins);
	}
	if (rc != SQLITE_DONE)
		err = db_fail(d, rep->db);
cleanup:
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	sqlite3_free(sql);
	return err;
}

static int total(struct diff *d, int side)
{
	struct nsk_report *rep = d->rep[side];
	sqlite3_stmt *st;

	if (!d->v->total)
		return 0;
	if (sqlite3_prepare_v2(rep->db, d->v->total, -1, &st, NULL) != SQLITE_OK)
		return db_fail(d, rep->db);
	if (sqlite3_step(st) == SQLITE_ROW)
		d->total[side] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

static char *dup_text(sqlite3_stmt *st, int c)
{
	const unsigned char *t = sqlite3_column_text(st, c);

	return strdup(t ? (const char *)t : "");
}

static int read_rows(struct diff *d)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, err = 0;

	if (sqlite3_prepare_v2(d->db,
		"SELECT k1, k2, total(CASE side WHEN 0 THEN amount END), "
		"total(CASE side WHEN 1 THEN amount END), "
		"total(CASE side WHEN 0 THEN events END), "
		"total(CASE side WHEN 1 THEN events END) FROM agg "
		"GROUP BY k1, k2", -1, &st, NULL) != SQLITE_OK)
		return db_fail(d, d->db);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct row *r;

		if (d->nrows == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct row *a = realloc(d->rows, c * sizeof(*a));

			if (!a) {
				err = -ENOMEM;
				break;
			}
			d->rows = a;
			cap = c;
		}
		r = &d->rows[d->nrows];
		memset(r, 0, sizeof(*r));
		r->k1 = dup_text(st, 0);
		r->k2 = dup_text(st, 1);
		if (!r->k1 || !r->k2) {
			free(r->k1);
			free(r->k2);
			err = -ENOMEM;
			break;
		}
		d->nrows++;
		r->amount[0] = sqlite3_column_double(st, 2);
		r->amount[1] = sqlite3_column_double(st, 3);
		r->events[0] = (int64_t)sqlite3_column_double(st, 4);
		r->events[1] = (int64_t)sqlite3_column_double(st, 5);
	}
	if (!err && rc != SQLITE_DONE)
		err = db_fail(d, d->db);
	else if (err)
		snprintf(d->err, d->errlen, "out of memory");
	sqlite3_finalize(st);
	return err;
}

/* Mann-Whitney of a row's two duration samples, read as tie groups. */
/* The median of one side of the tie groups g (values v): the value of
 * the middle event, interpolated inside a log2 bucket as --by syscall's
 * p50 is ([2^b, 2^(b+1)) ns).  NAN for an empty side. */
static double median(const struct nsk_stats_tie *g, const int64_t *v,
		     size_t n, int side, int log2)
{
	double tot = 0, cum = 0;

	for (size_t i = 0; i < n; i++)
		tot += (double)(side ? g[i].c2 : g[i].c1);
	for (size_t i = 0; i < n && tot > 0; i++) {
		double c = (double)(side ? g[i].c2 : g[i].c1);

		if (c > 0 && cum + c >= 0.5 * tot) {
			if (!log2)
				return (double)v[i];
			return ldexp(1.0 + (0.5 * tot - cum) / c, (int)v[i]);
		}
		cum += c;
	}
	return NAN;
}

static int rank_test(struct diff *d, sqlite3_stmt *st, struct row *r)
{
	struct nsk_stats_tie *g = NULL;
	int64_t *v = NULL;
	size_t n = 0, cap = 0;
	int rc, err = 0;

	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, r->k1, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, r->k2, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			struct nsk_stats_tie *a = realloc(g, c * sizeof(*a));
			int64_t *b;

			if (a)
				g = a;
			b = a ? realloc(v, c * sizeof(*b)) : NULL;
			if (!b) {
				snprintf(d->err, d->errlen, "out of memory");
				err = -ENOMEM;
				goto cleanup;
			}
			v = b;
			cap = c;
		}
		g[n].c1 = (uint64_t)sqlite3_column_int64(st, 0);
		g[n].c2 = (uint64_t)sqlite3_column_int64(st, 1);
		v[n] = sqlite3_column_int64(st, 2);
		n++;
	}
	if (rc != SQLITE_DONE) {
		err = db_fail(d, d->db);
		goto cleanup;
	}
	r->p_raw = nsk_stats__mann_whitney(g, n, &r->z);
	/* z > 0: base's durations are the larger, new got faster */
	r->z = -r->z;
	for (int s = 0; s < 2; s++)
		r->median[s] = median(g, v, n, s, d->v->log2_buckets);
cleanup:
	free(g);
	free(v);
	return err;
}

static int test_rows(struct diff *d)
{
	sqlite3_stmt *st = NULL;
	double *p;
	int err = 0;

	if (d->v->test == NSK_DIFF_RANK &&
	    sqlite3_prepare_v2(d->db, "SELECT total(CASE side WHEN 0 THEN c END), "
			       "total(CASE side WHEN 1 THEN c END), v FROM hist "
			       "WHERE k1 = ? AND k2 = ? GROUP BY v ORDER BY v",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(d, d->db);
	for (size_t i = 0; i < d->nrows && !err; i++) {
		struct row *r = &d->rows[i];

		if (d->v->test == NSK_DIFF_RANK) {
			err = rank_test(d, st, r);
			continue;
		}
		r->p_raw = nsk_stats__fisher((uint64_t)r->events[0],
					     (uint64_t)d->total[0],
					     (uint64_t)r->events[1],
					     (uint64_t)d->total[1]);
		/* direction of the share: new / N1 against base / N0 */
		r->z = (double)r->events[1] * (double)d->total[0] -
		       (double)r->events[0] * (double)d->total[1];
	}
	sqlite3_finalize(st);
	if (err)
		return err;
	p = malloc((d->nrows ? d->nrows : 1) * sizeof(*p));
	if (!p) {
		snprintf(d->err, d->errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->nrows; i++)
		p[i] = d->rows[i].p_raw;
	err = nsk_stats__holm(p, d->nrows);
	for (size_t i = 0; i < d->nrows; i++)
		d->rows[i].p = p[i];
	free(p);
	if (err)
		snprintf(d->err, d->errlen, "out of memory");
	return err;
}

static double shown(const struct diff *d, const struct row *r, int side)
{
	switch (d->v->shown) {
	case NSK_DIFF_SHOW_PCT:
		return d->total[side] ? 100.0 * (double)r->events[side] /
						(double)d->total[side] : 0;
	case NSK_DIFF_SHOW_AMOUNT:
		return r->amount[side];
	case NSK_DIFF_SHOW_MEDIAN:
		return r->median[side];
	}
	return 0;
}

static int store_rows(struct diff *d, double alpha)
{
	sqlite3_stmt *ins;
	int err = 0;

	if (exec(d, "CREATE TABLE res (k1 TEXT, k2 TEXT, base REAL, new REAL, "
		 "delta REAL, ratio REAL, verdict TEXT, p REAL, p_raw REAL, "
		 "base_n INTEGER, new_n INTEGER, base_amount REAL, "
		 "new_amount REAL)"))
		return -EIO;
	if (sqlite3_prepare_v2(d->db, "INSERT INTO res VALUES (?, ?, ?, ?, ?, ?, "
			       "?, ?, ?, ?, ?, ?, ?)", -1, &ins, NULL) != SQLITE_OK)
		return db_fail(d, d->db);
	for (size_t i = 0; i < d->nrows && !err; i++) {
		const struct row *r = &d->rows[i];
		double b = shown(d, r, 0), n = shown(d, r, 1);
		const char *verdict = "no significant change";

		if (r->p < alpha && r->z != 0)
			verdict = r->z < 0 ? d->v->less : d->v->more;
		sqlite3_bind_text(ins, 1, r->k1, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, r->k2, -1, SQLITE_STATIC);
		/* NULL where a side has no event to average */
		if (isnan(b))
			sqlite3_bind_null(ins, 3);
		else
			sqlite3_bind_double(ins, 3, b);
		if (isnan(n))
			sqlite3_bind_null(ins, 4);
		else
			sqlite3_bind_double(ins, 4, n);
		if (isnan(b) || isnan(n))
			sqlite3_bind_null(ins, 5);
		else
			sqlite3_bind_double(ins, 5, n - b);
		if (isnan(b) || isnan(n) || b == 0)
			sqlite3_bind_null(ins, 6);
		else
			sqlite3_bind_double(ins, 6, n / b);
		sqlite3_bind_text(ins, 7, verdict, -1, SQLITE_STATIC);
		sqlite3_bind_double(ins, 8, r->p);
		sqlite3_bind_double(ins, 9, r->p_raw);
		sqlite3_bind_int64(ins, 10, r->events[0]);
		sqlite3_bind_int64(ins, 11, r->events[1]);
		sqlite3_bind_double(ins, 12, r->amount[0]);
		sqlite3_bind_double(ins, 13, r->amount[1]);
		if (sqlite3_step(ins) != SQLITE_DONE)
			err = db_fail(d, d->db);
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	return err;
}

/* The summary of one side: its lines joined, escaped for a terminal. */
static void header_text(struct nsk_report *rep, const char *side, FILE *f)
{
	char lines[8][256];
	int n = nsk_report__summary_lines(rep, lines, 8);

	for (int i = 0; i < n; i++) {
		fprintf(f, i ? "#   " : "# %s: ", side);
		nsk_out__put_escaped(f, lines[i]);
		fputc('\n', f);
	}
}

static void header_json(struct nsk_report *rep, const char *side, FILE *f)
{
	char lines[8][256];
	int n = nsk_report__summary_lines(rep, lines, 8);

	fprintf(f, "\"%s\": [", side);
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		nsk_out__json_str(f, lines[i]);
	}
	fputs("],\n", f);
}

static int emit(struct diff *d, const struct nsk_diff_opts *o,
		const struct nsk_out *out)
{
	const struct nsk_diff_view *v = d->v;
	int pct = v->shown == NSK_DIFF_SHOW_PCT;
	unsigned num = pct ? NSK_COL_PCT : 0;
	char base_l[32], new_l[32], bn[64], nn[64], test[256], json_test[256];
	struct nsk_col_hint h[] = {
		{ v->keys[0], NULL, NSK_COL_FLEX },
		{ v->keys[1] ? v->keys[1] : "k2", NULL, NSK_COL_NARROW },
		{ "base", base_l, num },
		{ "new", new_l, num },
		{ "delta", NULL, num },
		{ "ratio", NULL, 0 },
		{ "verdict", NULL, NSK_COL_DATA_ONLY },
		{ "verdict_text", "verdict", NSK_COL_TEXT_ONLY },
		{ "p_text", "p", NSK_COL_TEXT_ONLY },
		{ "p", NULL, NSK_COL_DATA_ONLY },
		{ "p_raw", NULL, NSK_COL_DATA_ONLY },
		{ bn, NULL, NSK_COL_DATA_ONLY },
		{ nn, NULL, NSK_COL_DATA_ONLY },
		{ "base_total_ns", NULL, NSK_COL_DATA_ONLY },
		{ "new_total_ns", NULL, NSK_COL_DATA_ONLY },
		{ NULL, NULL, 0 }
	};
	/* integers where the numbers are (bytes, ns) */
	const char *fmt = pct ? "base, new, delta" :
		"CAST(round(base) AS INTEGER) AS base, CAST(round(new) AS INTEGER) "
		"AS new, CAST(round(delta) AS INTEGER) AS delta";
	sqlite3_stmt *st;
	char *sql;
	size_t tested = d->nrows;

	snprintf(base_l, sizeof(base_l), "base%s", pct ? "%" : "");
	snprintf(new_l, sizeof(new_l), "new%s", pct ? "%" : "");
	snprintf(bn, sizeof(bn), "base_%s", v->events);
	snprintf(nn, sizeof(nn), "new_%s", v->events);
	snprintf(test, sizeof(test), "test: %s,\n#   Holm-corrected over %zu "
		 "rows; a verdict where p < %g", v->what, tested, o->alpha);
	snprintf(json_test, sizeof(json_test), "%s; Holm-corrected over %zu "
		 "rows: a verdict where p < %g", v->what, tested, o->alpha);
	sql = sqlite3_mprintf(
		"SELECT k1 AS \"%w\", %s%s%s %s, round(ratio, 3) AS ratio, verdict, "
		"CASE verdict WHEN 'no significant change' THEN 'n.s.' ELSE verdict "
		"END AS verdict_text, "
		"printf('%%.2g', p) AS p_text, p, p_raw, base_n AS \"%w\", "
		"new_n AS \"%w\"%s FROM res ORDER BY verdict = 'no significant "
		"change', abs(delta) DESC, p, k1, k2 LIMIT %ld",
		v->keys[0], v->keys[1] ? "k2 AS \"" : "", v->keys[1] ? v->keys[1] : "",
		v->keys[1] ? "\"," : "", fmt, bn, nn,
		v->shown == NSK_DIFF_SHOW_MEDIAN ? ", CAST(base_amount AS INTEGER) AS "
		"base_total_ns, CAST(new_amount AS INTEGER) AS new_total_ns" : "",
		o->limit);
	if (!sql) {
		snprintf(d->err, d->errlen, "out of memory");
		return -ENOMEM;
	}
	if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_free(sql);
		return db_fail(d, d->db);
	}
	sqlite3_free(sql);
	if (out->fmt == NSK_FMT_TEXT) {
		header_text(d->rep[0], "base", out->f);
		header_text(d->rep[1], "new", out->f);
		fprintf(out->f, "# %s\n", test);
		if (v->total)
			fprintf(out->f, "# %s: base %lld, new %lld\n", v->events,
				(long long)d->total[0], (long long)d->total[1]);
		fprintf(out->f, "# base, new: %s; delta = new - base; ratio = new / "
			"base\n# n.s.: no significant change\n",
			pct ? "share of the samples" :
			v->shown == NSK_DIFF_SHOW_AMOUNT ? "bytes" :
			"median ns per event");
		if (!d->nrows)
			fprintf(out->f, "# no rows: neither recording has events of "
				"this view (recorded with the signal it reads?)\n");
	} else if (out->fmt == NSK_FMT_JSON) {
		fprintf(out->f, "{\"view\": ");
		nsk_out__json_str(out->f, v->name);
		fprintf(out->f, ",\n\"alpha\": %.17g,\n\"test\": ", o->alpha);
		nsk_out__json_str(out->f, json_test);
		fputs(",\n", out->f);
		if (v->total)
			fprintf(out->f, "\"base_%s\": %lld, \"new_%s\": %lld,\n",
				v->events, (long long)d->total[0], v->events,
				(long long)d->total[1]);
		header_json(d->rep[0], "base", out->f);
		header_json(d->rep[1], "new", out->f);
		fputs("\"rows\": ", out->f);
	} else {
		nsk_report__warn(d->rep[0]);
		nsk_report__warn(d->rep[1]);
	}
	if (nsk_out__rows(out, st, h)) {
		sqlite3_finalize(st);
		return db_fail(d, d->db);
	}
	sqlite3_finalize(st);
	if (out->fmt == NSK_FMT_JSON)
		fputs("}\n", out->f);
	return 0;
}

int nsk_diff__run(struct nsk_report *base, struct nsk_report *new_,
		  const struct nsk_diff_view *v, const struct nsk_diff_opts *o,
		  const struct nsk_out *out)
{
	struct diff d = { .rep = { base, new_ }, .v = v, .err = base->err,
			  .errlen = sizeof(base->err) };
	int err;

	if (nsk_db__open(&d.db)) {
		snprintf(d.err, d.errlen, "cannot open an in-memory database");
		return -EIO;
	}
	err = exec(&d, "CREATE TABLE agg (side INTEGER, k1 TEXT, k2 TEXT, "
		   "amount REAL, events INTEGER); CREATE TABLE hist (side INTEGER, "
		   "k1 TEXT, k2 TEXT, v INTEGER, c INTEGER)");
	for (int s = 0; s < 2 && !err; s++) {
		if (v->prepare && (err = v->prepare(d.rep[s]))) {
			snprintf(d.err, d.errlen, "%s", d.rep[s]->err);
			break;
		}
		err = copy(&d, s, v->agg, "agg") ?: total(&d, s);
		if (!err && v->hist)
			err = copy(&d, s, v->hist, "hist");
	}
	if (!err && v->hist)
		err = exec(&d, "CREATE INDEX hist_k ON hist (k1, k2, v)");
	if (!err)
		err = read_rows(&d) ?: test_rows(&d) ?: store_rows(&d, o->alpha) ?:
		      emit(&d, o, out);
	for (size_t i = 0; i < d.nrows; i++) {
		free(d.rows[i].k1);
		free(d.rows[i].k2);
	}
	free(d.rows);
	sqlite3_close(d.db);
	return err;
}
