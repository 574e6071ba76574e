/* libFuzzer target for `nusku report`: any bytes loaded into SQLite by the
 * report loader, then every view run on them, each --per-thread form, and
 * --tree and --folded of every view over stacks, in text, JSON or CSV, and
 * each export measure as pprof and svg and the chrome timeline, in the
 * format the last byte picks.
 * An input with allocations is loaded a second time the way the memory
 * views load without a filter (summed while loading, the file read twice:
 * report/load_alloc.h), and those views and measures run again.  Output
 * goes to /dev/null. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report/db.h"
#include "report/export.h"
#include "report/load.h"
#include "report/report.h"
#include "report/views.h"
#include "tests/fuzz/fuzz_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every view (only those that read allocations: memory) and its forms,
 * then the export measures. */
static void run_views(struct nsk_report *rep, struct nsk_report_opts *o,
		      int memory)
{
	for (const struct nsk_view *const *v = nsk_views; *v; v++) {
		if (memory && !((*v)->reads & NSK_VIEW_READS_ALLOC))
			continue;
		o->per_thread = 0;
		(void)(*v)->run(rep, *v);
		if ((*v)->per_thread) {
			o->per_thread = 1;
			(void)(*v)->run(rep, *v);
			o->per_thread = 0;
		}
		if ((*v)->weights) {
			(void)nsk_stacks__tree(rep, *v);
			(void)nsk_stacks__folded(rep, *v);
		}
	}
	for (unsigned i = 0; nsk_measure__at(i); i++) {
		const struct nsk_measure *m = nsk_measure__at(i);

		if (memory && m != nsk_measure_alloc && m != nsk_measure_live)
			continue;
		(void)nsk_export__pprof(rep, m, rep->out.f);
		(void)nsk_export__svg(rep, m, rep->out.f);
	}
}

static int has_allocs(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int any = sqlite3_prepare_v2(db, "SELECT 1 FROM alloc LIMIT 1", -1, &st,
				     NULL) == SQLITE_OK &&
		  sqlite3_step(st) == SQLITE_ROW;

	sqlite3_finalize(st);
	return any;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsk_report_opts o = { .since = -1, .until = -1, .limit = -1,
				     .min_pct = 0.5 };
	struct nsk_report rep = { 0 };
	struct nsk_load_select sel;
	unsigned pick = size ? data[size - 1] : 0;
	char path[64], msg[512];
	sqlite3 *db = NULL;
	int fd;

	fd = fuzz_mem__file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	if (nsk_db__open(&db) || nsk_load__file(db, path, msg, sizeof(msg)))
		goto cleanup;
	rep.db = db;
	rep.opts = &o;
	rep.out.f = fuzz_mem__null();
	rep.out.fmt = (enum nsk_fmt)(pick % 3);
	rep.out.width = 80;
	if (nsk_filter__apply(&rep))
		goto cleanup;
	run_views(&rep, &o, 0);
	(void)nsk_export__chrome(&rep, rep.out.f);
	if (!has_allocs(db))
		goto cleanup;
	sqlite3_close(db);
	db = NULL;
	rep.nnotes = 0;
	if (nsk_db__open(&db) || nsk_load__file_alloc(db, path, 0, NSK_LOAD_SUMS |
						      NSK_LOAD_SUMS_TIME, NULL, msg,
						      sizeof(msg)))
		goto cleanup;
	rep.db = db;
	if (nsk_filter__apply(&rep))
		goto cleanup;
	run_views(&rep, &o, 1);
	if (!(pick & 4))
		goto cleanup;
	/* and once more with a filter applied while summing */
	sqlite3_close(db);
	db = NULL;
	rep.nnotes = 0;
	o.pids = "1,100,200";
	o.comms = pick & 8 ? "synth,a" : NULL;
	o.since = 0.1;
	o.until = pick & 16 ? 2.5 : -1;
	if (nsk_db__open(&db) || nsk_load__file_alloc(db, path, 0, NSK_LOAD_SUMS |
						      NSK_LOAD_SUMS_TIME,
						      nsk_filter__select(&o, &sel),
						      msg, sizeof(msg)))
		goto cleanup;
	rep.db = db;
	if (nsk_filter__apply(&rep))
		goto cleanup;
	run_views(&rep, &o, 1);
cleanup:
	sqlite3_close(db);
	close(fd);
	return 0;
}
