/* The profiler's own cost, for the header of every report.
 *
 * Two figures the recorder wrote down (docs/format.md): which CPU samples
 * it took inside its own probes (stack flag NSK_STACK_OWN, loaded as one
 * [nusku] frame by load_stack.c), and what its BPF programs ran for (META
 * cost.*, written at the end of the recording from the kernel's run-time
 * statistics).  Files of format 1.0 have neither.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <nusku/format.h>

#include "report/report.h"

static int64_t query_int(struct nsk_report *rep, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sqlite3_prepare_v2(rep->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int nsk_report__own(struct nsk_report *rep, struct nsk_own_summary *o)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM f_sample s JOIN stack k ON k.id = "
		 "s.stack_id WHERE k.flags & %u", (unsigned)NSK_STACK_OWN);
	o->samples = query_int(rep, "SELECT count(*) FROM f_sample");
	o->own_samples = query_int(rep, sql);
	o->marked = nsk_report__info(rep, "format_major") > 1 ||
		    nsk_report__info(rep, "format_minor") >= 1;
	/* summed: the segments of a continuous recording have one each */
	o->run_ns = query_int(rep, "SELECT SUM(CAST(value AS INTEGER)) FROM meta "
			      "WHERE key = 'cost.bpf_run_ns'");
	o->runs = query_int(rep, "SELECT SUM(CAST(value AS INTEGER)) FROM meta "
			    "WHERE key = 'cost.bpf_runs'");
	/* "ON TOTAL" (1.3): the statistics were on ON of TOTAL ns */
	o->window_on_ns = query_int(rep, "SELECT SUM(CAST(value AS INTEGER)) FROM meta "
				    "WHERE key = 'cost.window_ns'");
	o->window_total_ns = query_int(rep, "SELECT SUM(CAST(substr(value, instr(value, ' ') + 1) "
				       "AS INTEGER)) FROM meta WHERE key = 'cost.window_ns' "
				       "AND instr(value, ' ') > 0");
	return 0;
}

int nsk_report__own_text(struct nsk_report *rep, char lines[][256], int max)
{
	struct nsk_own_summary o;
	char share[64] = "";
	int n = 0;

	nsk_report__own(rep, &o);
	if (o.samples > 0 && n < max) {
		if (o.marked)
			snprintf(lines[n++], 256,
				 "nusku's own probes: %.1f%% of CPU samples "
				 "(%" PRId64 " of %" PRId64 ", shown as [nusku])",
				 100.0 * (double)o.own_samples / (double)o.samples,
				 o.own_samples, o.samples);
		else
			snprintf(lines[n++], 256,
				 "nusku's own probes: not marked in format 1.0 files");
	}
	if (o.window_on_ns > 0 && o.window_total_ns > o.window_on_ns)
		snprintf(share, sizeof(share), "; estimated from %.1f%% of the time",
			 100.0 * (double)o.window_on_ns / (double)o.window_total_ns);
	if (o.run_ns >= 0 && o.runs >= 0 && n < max)
		snprintf(lines[n++], 256,
			 "recording cost: %.3f ms of BPF program time over %" PRId64
			 " runs (%" PRId64 " ns/run%s)",
			 (double)o.run_ns / 1e6, o.runs,
			 o.runs ? o.run_ns / o.runs : 0, share);
	else if (o.marked && n < max)
		snprintf(lines[n++], 256, "recording cost: not recorded%s",
			 query_int(rep, "SELECT count(*) FROM meta WHERE key = "
				   "'cost.error'") > 0 ?
				 " (BPF statistics could not be turned on)" :
				 " (the recording did not end cleanly)");
	return n;
}
