/* libFuzzer target for `nusku report`: any bytes loaded into SQLite by the
 * report loader, then every view run on them, each --per-thread form, and
 * --tree and --folded of every view over stacks, in text, JSON or CSV, and
 * each export measure as pprof and svg.  The last byte picks the format
 * and the load: a row per event, or allocations summed while loading with
 * the file read a second time (what the memory views of report do without
 * a filter: report/load_alloc.h).  Output goes to /dev/null. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report/db.h"
#include "report/export.h"
#include "report/load.h"
#include "report/report.h"
#include "tests/fuzz/fuzz_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsk_report_opts o = { .since = -1, .until = -1, .limit = -1,
				     .min_pct = 0.5 };
	struct nsk_report rep = { 0 };
	unsigned pick = size ? data[size - 1] : 0;
	char path[64], msg[512];
	sqlite3 *db = NULL;
	int fd;

	fd = fuzz_mem__file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	if (nsk_db__open(&db) ||
	    ((pick / 3) % 2 ? nsk_load__file_alloc(db, path, 0, NSK_LOAD_SUMS |
						   NSK_LOAD_SUMS_TIME, msg, sizeof(msg))
			    : nsk_load__file(db, path, msg, sizeof(msg))))
		goto cleanup;
	rep.db = db;
	rep.opts = &o;
	rep.out.f = fuzz_mem__null();
	rep.out.fmt = (enum nsk_fmt)(pick % 3);
	rep.out.width = 80;
	if (nsk_filter__apply(&rep))
		goto cleanup;
	for (const struct nsk_view *const *v = nsk_views; *v; v++) {
		o.per_thread = 0;
		(void)(*v)->run(&rep, *v);
		if ((*v)->per_thread) {
			o.per_thread = 1;
			(void)(*v)->run(&rep, *v);
			o.per_thread = 0;
		}
		if ((*v)->weights) {
			(void)nsk_stacks__tree(&rep, *v);
			(void)nsk_stacks__folded(&rep, *v);
		}
	}
	for (unsigned i = 0; nsk_measure__at(i); i++) {
		(void)nsk_export__pprof(&rep, nsk_measure__at(i), rep.out.f);
		(void)nsk_export__svg(&rep, nsk_measure__at(i), rep.out.f);
	}
	(void)nsk_export__chrome(&rep, rep.out.f);
cleanup:
	sqlite3_close(db);
	close(fd);
	return 0;
}
