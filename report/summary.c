/* What every report says besides its rows: the file, the time span, how
 * many events were selected, lost events by source, unresolved frames, the
 * modules without symbols and anything wrong with the file (truncated, corrupt, unfinished).  Text
 * reports carry it as '#' lines above the table, JSON as keys next to
 * "rows"; outputs without room for it (CSV, folded) warn on stderr. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/schema.h"

#define PROBLEMS_SHOWN 10

sqlite3_stmt *nsk_report__prepare(struct nsk_report *rep, const char *fmt, ...)
{
	sqlite3_stmt *st = NULL;
	va_list ap;
	char *sql;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (!sql) {
		snprintf(rep->err, sizeof(rep->err), "out of memory");
		return NULL;
	}
	if (sqlite3_prepare_v2(rep->db, sql, -1, &st, NULL) != SQLITE_OK)
		snprintf(rep->err, sizeof(rep->err), "%s",
			 sqlite3_errmsg(rep->db));
	sqlite3_free(sql);
	return st;
}

static int64_t query_int(struct nsk_report *rep, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;

	if (sqlite3_prepare_v2(rep->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

void nsk_report__note(struct nsk_report *rep, const char *fmt, ...)
{
	va_list ap;

	if (rep->nnotes >= (int)(sizeof(rep->notes) / sizeof(rep->notes[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(rep->notes[rep->nnotes++], sizeof(rep->notes[0]), fmt, ap);
	va_end(ap);
}

void nsk_report__signal_note(struct nsk_report *rep, const char *signal)
{
	char *sql;
	int64_t lists, has;

	if (!signal)
		return;
	lists = query_int(rep, "SELECT count(*) FROM meta WHERE key = 'events'");
	/* a directory of segments has a list per segment: any one will do */
	sql = sqlite3_mprintf("SELECT CAST(total(',' || value || ',' LIKE "
			      "'%%,%q,%%') AS INTEGER) FROM meta WHERE key = "
			      "'events'", signal);
	if (!sql)
		return;
	has = query_int(rep, sql);
	sqlite3_free(sql);
	if (lists && !has)
		nsk_report__note(rep, "no %s signal in this recording: record "
				 "it with -e %s%s", signal, signal,
				 !strcmp(signal, "syscall") ? " (not in the "
				 "default set: docs/syscall.md)" : "");
}

int64_t nsk_report__info(struct nsk_report *rep, const char *key)
{
	char *sql = sqlite3_mprintf("SELECT value FROM recording WHERE key = %Q",
				    key);
	int64_t v = sql ? query_int(rep, sql) : 0;

	sqlite3_free(sql);
	return v;
}

static const char *info_text(struct nsk_report *rep, const char *key,
			     char *buf, size_t len)
{
	sqlite3_stmt *st = NULL;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(rep->db,
			       "SELECT value FROM recording WHERE key = ?", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(buf, len, "%s", sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	return buf;
}

/* A recording of every process (record -a): how many ran, and where each
 * one's own figures are, since the other views sum them all. */
static void every_process_note(struct nsk_report *rep, FILE *f)
{
	int64_t n;

	if (!query_int(rep, "SELECT count(*) FROM meta WHERE key = 'target.mode' "
			    "AND value = 'all'"))
		return;
	n = query_int(rep, "SELECT count(DISTINCT pid) FROM f_sample");
	fprintf(f, "# every process (record -a): %" PRId64 " with CPU samples; "
		"see --by process\n", n);
}

/* The warnings about the file itself, one line each, into lines[]. */
static int file_warnings(struct nsk_report *rep, char lines[][256], int max)
{
	int64_t truncated = nsk_report__info(rep, "truncated_bytes");
	int64_t corrupt = nsk_report__info(rep, "corrupt_chunks");
	int64_t gaps = nsk_report__info(rep, "seq_gaps");
	int64_t ustacks = nsk_report__info(rep, "unknown_stacks");
	int n = 0;

	if (truncated && n < max)
		snprintf(lines[n++], 256,
			 "recording truncated: the last %" PRId64
			 " bytes formed no whole chunk and were dropped",
			 truncated);
	if (corrupt && n < max)
		snprintf(lines[n++], 256,
			 "recording corrupt: %" PRId64 " chunks failed their "
			 "checks and were skipped", corrupt);
	if (gaps && n < max)
		snprintf(lines[n++], 256, "%" PRId64 " chunks missing from "
			 "the sequence", gaps);
	if (nsk_report__info(rep, "read_error") && n < max)
		snprintf(lines[n++], 256, "the file could not be read to its "
			 "end: the report covers what came before");
	if (!nsk_report__info(rep, "ended") && n < max)
		snprintf(lines[n++], 256, "no end record: the recorder did not "
			 "finish (killed, or still writing)");
	if (ustacks && n < max)
		snprintf(lines[n++], 256, "%" PRId64 " stack id%s never "
			 "defined (shown as [unknown stack N])", ustacks,
			 ustacks == 1 ? " was" : "s were");
	return n;
}

/* The file read to its END record with nothing cut, skipped or broken. */
static int complete(struct nsk_report *rep)
{
	return nsk_report__info(rep, "ended") &&
	       !nsk_report__info(rep, "problems") &&
	       !nsk_report__info(rep, "truncated_bytes") &&
	       !nsk_report__info(rep, "corrupt_chunks") &&
	       !nsk_report__info(rep, "seq_gaps") &&
	       !nsk_report__info(rep, "read_error");
}

struct lost {
	char source[64];
	int64_t count;
};

static int lost_by_source(struct nsk_report *rep, struct lost *out, int max,
			  int64_t *total)
{
	sqlite3_stmt *st = NULL;
	int n = 0;

	*total = 0;
	/* a 1.1 recorder counted frames without a name as losses
	 * (symbols.*): no event was lost for them */
	if (sqlite3_prepare_v2(rep->db, "SELECT source, sum(count) FROM loss "
			       "WHERE source NOT LIKE 'symbols.%' "
			       "GROUP BY source ORDER BY source", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t c = sqlite3_column_int64(st, 1);

		*total += c;
		if (n < max) {
			snprintf(out[n].source, sizeof(out[n].source), "%s",
				 (const char *)sqlite3_column_text(st, 0));
			out[n++].count = c;
		}
	}
	sqlite3_finalize(st);
	return n;
}

static int64_t count_rows(struct nsk_report *rep, const char *table,
			  int filtered)
{
	char key[64], *sql;
	int64_t summed, v;

	/* summed while loading (alloc_sum): the rows there would have been,
	 * and those of them the filter selects */
	snprintf(key, sizeof(key), "summed.%s", table);
	summed = nsk_report__info(rep, key);
	if (summed && !filtered)
		return summed;
	if (summed) {
		snprintf(key, sizeof(key), "summed.%s.selected", table);
		return nsk_report__info(rep, key);
	}
	sql = sqlite3_mprintf("SELECT count(*) FROM %s%s", filtered ? "f_" : "",
			      table);
	v = sql ? query_int(rep, sql) : 0;

	sqlite3_free(sql);
	return v;
}

/* Events of table the loader left out for this view (0: loaded). */
static int64_t not_loaded(struct nsk_report *rep, const char *table)
{
	char key[64];

	snprintf(key, sizeof(key), "not_loaded.%s", table);
	return nsk_report__info(rep, key);
}

/* Times are u64 nanoseconds kept in SQLite's int64: subtract them as
 * unsigned, so that a time past 2^63 (a hostile file) cannot overflow. */
static double span_seconds(struct nsk_report *rep)
{
	uint64_t start = (uint64_t)nsk_report__info(rep, "time_start_ns");
	uint64_t end = (uint64_t)nsk_report__info(rep, "time_end_ns");

	return end > start ? (double)(end - start) / 1e9 : 0;
}

/* A query over problem messages, for the caller to step. */
static sqlite3_stmt *problems(struct nsk_report *rep)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(rep->db, "SELECT message FROM problem ORDER BY "
			       "seq", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	return st;
}

/* Events whose stacks are incomplete (recording-wide, not filtered). */
static void stacks_text(struct nsk_report *rep, FILE *f)
{
	int64_t cut = nsk_report__info(rep, "truncated_stack_events");
	int64_t nouser = nsk_report__info(rep, "no_user_stack_events");
	int64_t none = nsk_report__info(rep, "no_stack_events");

	if (cut)
		fprintf(f, "# stacks cut short: %" PRId64 " events (the walk "
			"stopped early)\n", cut);
	if (nouser)
		fprintf(f, "# without a user stack: %" PRId64 " events\n", nouser);
	if (none)
		fprintf(f, "# without any stack: %" PRId64 " events\n", none);
}

static void summary_text(struct nsk_report *rep, FILE *f)
{
	int64_t unresolved = nsk_report__info(rep, "unresolved_frames");
	int64_t unknown = nsk_report__info(rep, "unknown_frames");
	int64_t major = nsk_report__info(rep, "format_major");
	char file[256], warn[8][256];
	struct lost lost[16];
	int64_t lost_total;
	int nlost, nwarn, shown = 0, more;
	sqlite3_stmt *st;

	fputs("# ", f);
	nsk_out__put_escaped(f, info_text(rep, "file", file, sizeof(file)));
	if (major)
		fprintf(f, " (format %" PRId64 ".%" PRId64 ")", major,
			nsk_report__info(rep, "format_minor"));
	fprintf(f, ": %.3f s\n", span_seconds(rep));
	every_process_note(rep, f);
	for (unsigned i = 0; i < nsk_schema__nevents; i++) {
		int64_t all = count_rows(rep, nsk_schema__events[i].table, 0);
		int64_t sel = count_rows(rep, nsk_schema__events[i].table, 1);
		int64_t skipped = not_loaded(rep, nsk_schema__events[i].table);

		if (skipped) {
			fprintf(f, "# %s: %" PRId64 " (not loaded for this view)\n",
				nsk_schema__events[i].what, skipped);
			continue;
		}
		if (!all)
			continue;
		fprintf(f, "# %s: %" PRId64, nsk_schema__events[i].what, all);
		if (sel != all)
			fprintf(f, " (%" PRId64 " selected)", sel);
		fputc('\n', f);
	}
	nlost = lost_by_source(rep, lost, 16, &lost_total);
	if (!lost_total) {
		fprintf(f, "# lost events: none\n");
	} else {
		fprintf(f, "# lost events: %" PRId64 " (", lost_total);
		for (int i = 0; i < nlost; i++) {
			fputs(i ? ", " : "", f);
			nsk_out__put_escaped(f, lost[i].source);
			fprintf(f, " %" PRId64, lost[i].count);
		}
		fprintf(f, ")\n");
	}
	if (unresolved + unknown) {
		/* the recorder's own count says which had no mapping (1.2) */
		int64_t unmapped = query_int(rep, "SELECT max(CAST(value AS "
					     "INTEGER)) FROM meta WHERE key = "
					     "'symbols.unmapped'");

		fprintf(f, "# unresolved frames: %" PRId64 " (%" PRId64
			" without a symbol", unresolved + unknown, unresolved);
		if (unmapped)
			fprintf(f, ", %" PRId64 " of them outside any mapping",
				unmapped);
		fprintf(f, ", %" PRId64 " never defined)\n", unknown);
	}
	nwarn = nsk_report__no_symbols_text(rep, warn, 8, &more);
	for (int i = 0; i < nwarn; i++) {
		fputs("# ", f);
		nsk_out__put_escaped(f, warn[i]);
		fputc('\n', f);
	}
	if (more)
		fprintf(f, "# ... and %d more modules without symbols (SELECT "
			"* FROM mapping WHERE no_symbols)\n", more);
	stacks_text(rep, f);
	for (int i = 0; i < rep->nnotes; i++) {
		fputs("# ", f);
		nsk_out__put_escaped(f, rep->notes[i]);
		fputc('\n', f);
	}
	nwarn = nsk_report__own_text(rep, warn, 8); /* what nusku cost */
	for (int i = 0; i < nwarn; i++)
		fprintf(f, "# %s\n", warn[i]);
	nwarn = file_warnings(rep, warn, 8);
	for (int i = 0; i < nwarn; i++) {
		fputs("# WARNING: ", f);
		nsk_out__put_escaped(f, warn[i]);
		fputc('\n', f);
	}
	st = problems(rep);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (shown++ < PROBLEMS_SHOWN) {
			fputs("# problem: ", f);
			nsk_out__put_escaped(f, (const char *)
					     sqlite3_column_text(st, 0));
			fputc('\n', f);
		}
	}
	if (shown > PROBLEMS_SHOWN)
		fprintf(f, "# ... and %d more problems (SELECT * FROM problem)\n",
			shown - PROBLEMS_SHOWN);
	sqlite3_finalize(st);
	fputc('\n', f);
}

static void summary_json(struct nsk_report *rep, const char *view, FILE *f)
{
	uint64_t start = (uint64_t)nsk_report__info(rep, "time_start_ns");
	uint64_t end = (uint64_t)nsk_report__info(rep, "time_end_ns");
	int64_t major = nsk_report__info(rep, "format_major");
	int64_t unresolved = nsk_report__info(rep, "unresolved_frames");
	int64_t unknown = nsk_report__info(rep, "unknown_frames");
	char file[256], warn[8][256];
	struct lost lost[64];
	struct nsk_own_summary own;
	int64_t lost_total;
	int nlost, nwarn, first = 1;
	sqlite3_stmt *st;

	fputs("{\"file\": ", f);
	nsk_out__json_str(f, info_text(rep, "file", file, sizeof(file)));
	fprintf(f, ", \"format\": \"%" PRId64 ".%" PRId64 "\", \"view\": ",
		major, nsk_report__info(rep, "format_minor"));
	nsk_out__json_str(f, view);
	fprintf(f, ",\n \"time_span\": {\"start_ns\": %" PRIu64 ", \"end_ns\": %"
		PRIu64 ", \"seconds\": %.9g},\n \"events\": {", start, end,
		span_seconds(rep));
	for (unsigned i = 0; i < nsk_schema__nevents; i++) {
		const char *t = nsk_schema__events[i].table;

		int64_t skipped = not_loaded(rep, t);

		fprintf(f, "%s\"%s\": {\"total\": %" PRId64 ", \"selected\": %"
			PRId64, i ? ", " : "", t, skipped ? skipped : count_rows(rep, t, 0),
			skipped ? 0 : count_rows(rep, t, 1));
		if (skipped)
			fputs(", \"loaded\": false", f);
		fputc('}', f);
	}
	nlost = lost_by_source(rep, lost, 64, &lost_total);
	fputs("},\n \"lost\": {", f);
	for (int i = 0; i < nlost; i++) {
		fputs(i ? ", " : "", f);
		nsk_out__json_str(f, lost[i].source);
		fprintf(f, ": %" PRId64, lost[i].count);
	}
	fprintf(f, "}, \"lost_total\": %" PRId64 ",\n", lost_total);
	fprintf(f, " \"unresolved_frames\": %" PRId64 ", \"unknown_frames\": %"
		PRId64 ", \"unknown_stacks\": %" PRId64 ",\n", unresolved + unknown,
		unknown, nsk_report__info(rep, "unknown_stacks"));
	nsk_report__no_symbols_json(rep, f);
	fprintf(f, " \"truncated_stack_events\": %" PRId64
		", \"no_user_stack_events\": %" PRId64 ", \"no_stack_events\": %"
		PRId64 ",\n", nsk_report__info(rep, "truncated_stack_events"),
		nsk_report__info(rep, "no_user_stack_events"),
		nsk_report__info(rep, "no_stack_events"));
	nsk_report__own(rep, &own); /* -1: not in the file */
	fprintf(f, " \"own_cpu_samples\": %" PRId64 ", \"bpf_run_ns\": %" PRId64
		", \"bpf_runs\": %" PRId64 ",\n", own.marked ? own.own_samples : -1,
		own.run_ns, own.runs);
	nwarn = file_warnings(rep, warn, 8);
	fprintf(f, " \"complete\": %s, \"truncated_bytes\": %" PRId64
		", \"corrupt_chunks\": %" PRId64 ",\n \"warnings\": [",
		complete(rep) ? "true" : "false",
		nsk_report__info(rep, "truncated_bytes"),
		nsk_report__info(rep, "corrupt_chunks"));
	for (int i = 0; i < nwarn; i++) {
		fputs(i ? ", " : "", f);
		nsk_out__json_str(f, warn[i]);
	}
	fputs("], \"notes\": [", f);
	for (int i = 0; i < rep->nnotes; i++) {
		fputs(i ? ", " : "", f);
		nsk_out__json_str(f, rep->notes[i]);
	}
	fputs("], \"problems\": [", f);
	st = problems(rep);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		fputs(first ? "" : ", ", f);
		first = 0;
		nsk_out__json_str(f, (const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	fputs("],\n \"rows\": ", f);
}

void nsk_report__warn(struct nsk_report *rep)
{
	int64_t unresolved = nsk_report__info(rep, "unresolved_frames") +
			     nsk_report__info(rep, "unknown_frames");
	char warn[8][256];
	struct lost lost[1];
	int64_t lost_total;
	int nwarn = file_warnings(rep, warn, 8), more;
	const char *cmd = rep->cmd ? rep->cmd : "report";
	sqlite3_stmt *st;

	for (int i = 0; i < nwarn; i++)
		fprintf(stderr, "nusku %s: warning: %s\n", cmd, warn[i]);
	for (int i = 0; i < rep->nnotes; i++)
		fprintf(stderr, "nusku %s: note: %s\n", cmd, rep->notes[i]);
	st = problems(rep);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		fprintf(stderr, "nusku %s: problem: ", cmd);
		nsk_out__put_escaped(stderr, (const char *)
				     sqlite3_column_text(st, 0));
		fputc('\n', stderr);
	}
	sqlite3_finalize(st);
	lost_by_source(rep, lost, 1, &lost_total);
	if (lost_total)
		fprintf(stderr, "nusku %s: warning: %" PRId64 " events lost "
			"(SELECT * FROM loss)\n", cmd, lost_total);
	if (unresolved)
		fprintf(stderr, "nusku %s: note: %" PRId64 " frames "
			"unresolved\n", cmd, unresolved);
	nwarn = nsk_report__no_symbols_text(rep, warn, 8, &more);
	for (int i = 0; i < nwarn; i++) {
		fprintf(stderr, "nusku %s: note: ", cmd);
		nsk_out__put_escaped(stderr, warn[i]);
		fputc('\n', stderr);
	}
}

int nsk_report__emit(struct nsk_report *rep, const char *view,
		     sqlite3_stmt *st, const struct nsk_col_hint *hints)
{
	FILE *f = rep->out.f;
	int err;

	switch (rep->out.fmt) {
	case NSK_FMT_TEXT:
		summary_text(rep, f);
		break;
	case NSK_FMT_JSON:
		summary_json(rep, view, f);
		break;
	case NSK_FMT_CSV:
		nsk_report__warn(rep);
		break;
	}
	err = nsk_out__rows(&rep->out, st, hints);
	if (err)
		snprintf(rep->err, sizeof(rep->err), "%s",
			 sqlite3_errmsg(rep->db));
	if (rep->out.fmt == NSK_FMT_JSON)
		fputs("}\n", f);
	sqlite3_finalize(st);
	return err;
}

int nsk_report__summary_lines(struct nsk_report *rep, char lines[][256],
			      int max)
{
	int64_t unresolved = nsk_report__info(rep, "unresolved_frames") +
			     nsk_report__info(rep, "unknown_frames");
	char file[200], warn[8][256];
	struct lost lost[8];
	int64_t lost_total;
	int n = 0, nlost, nwarn;
	size_t len;

	if (max < 3)
		return 0;
	snprintf(lines[n++], 256, "%s: %.3f s", info_text(rep, "file", file,
		 sizeof(file)), span_seconds(rep));
	nlost = lost_by_source(rep, lost, 8, &lost_total);
	if (!lost_total) {
		snprintf(lines[n++], 256, "lost events: none");
	} else {
		len = (size_t)snprintf(lines[n], 256, "lost events: %" PRId64
				       " (", lost_total);
		for (int i = 0; i < nlost && len < 250; i++)
			len += (size_t)snprintf(lines[n] + len, 256 - len,
						"%s%s %" PRId64, i ? ", " : "",
						lost[i].source, lost[i].count);
		if (len < 255)
			snprintf(lines[n] + len, 256 - len, ")");
		n++;
	}
	snprintf(lines[n++], 256, "unresolved frames: %" PRId64, unresolved);
	nwarn = file_warnings(rep, warn, 8);
	for (int i = 0; i < nwarn && n < max; i++)
		snprintf(lines[n++], 256, "warning: %.240s", warn[i]);
	return n;
}

/* A recording with corrupt or missing chunks, or one whose read stopped on
 * an error, is reported as far as it could be read, then exits 1, as
 * `nusku info` does; a truncated tail (a recorder killed) is only noted. */
int nsk_report__damaged(struct nsk_report *rep, const char *cmd,
			const char *file)
{
	int64_t corrupt = nsk_report__info(rep, "corrupt_chunks");
	int64_t gaps = nsk_report__info(rep, "seq_gaps");

	if (nsk_report__info(rep, "read_error")) {
		fprintf(stderr, "nusku %s: %s: the file could not be read "
			"to its end; the %s shows what came before\n", cmd, file,
			cmd);
		return 1;
	}
	if (corrupt || gaps) {
		fprintf(stderr, "nusku %s: %s: damaged (%" PRId64 " corrupt "
			"chunks skipped, %" PRId64 " missing); the %s shows "
			"the rest\n", cmd, file, corrupt, gaps, cmd);
		return 1;
	}
	return 0;
}

