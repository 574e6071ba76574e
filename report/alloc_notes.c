/* What the memory views say besides their rows, as summary notes:
 *
 *   - how much was live at the exit of processes that ended (their blocks
 *     stop counting as live there; they are not the recording's leaks);
 *   - how much address space was only reserved (PROT_NONE or
 *     MAP_NORESERVE mappings: not heap, counted nowhere) and how much of
 *     it was committed later with mprotect (counted);
 *   - that a Go program's heap is not seen at all (the recorder found a
 *     Go executable: meta alloc.go), since Go does not call malloc.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "report/report.h"
#include "report/views.h"

#define MIB (1024.0 * 1024.0)

static int row2(struct nsk_report *rep, const char *sql, int64_t *a, int64_t *b)
{
	sqlite3_stmt *st = nsk_report__prepare(rep, "%s", sql);

	*a = *b = 0;
	if (!st)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*a = sqlite3_column_int64(st, 0);
		*b = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return 0;
}

static int go_note(struct nsk_report *rep)
{
	sqlite3_stmt *st = nsk_report__prepare(rep,
		"SELECT value FROM meta WHERE key = 'alloc.go' LIMIT 1");

	if (!st)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		nsk_report__note(rep, "Go heap not traced: allocations inside the "
				 "Go runtime are not visible; only cgo malloc and "
				 "mmap (%s)", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return 0;
}

int nsk_alloc_notes__add(struct nsk_report *rep)
{
	int64_t procs, bytes, n, reserved, committed, unused;
	int err;

	if (rep->alloc_noted)
		return 0;
	rep->alloc_noted = 1;
	err = row2(rep,
		"SELECT count(DISTINCT pid), CAST(total(w) AS INTEGER) FROM ("
		"SELECT a.pid, a.weight AS w "
		"FROM f_alloc a JOIN free fr ON fr.alloc_id = a.id "
		"WHERE fr.fn = 'exit' AND a.fn IS NOT 'reserve' AND a.addr != 0 "
		"UNION ALL SELECT pid, exit_bytes FROM main.alloc_sum "
		"WHERE exit_n > 0 AND fn IS NOT 'reserve')",
		&procs, &bytes);
	if (!err && bytes)
		nsk_report__note(rep, "live at exit: %" PRId64 " bytes (%.1f MiB) "
				 "in %" PRId64 " process%s that ended without "
				 "freeing them (not live after their exit)",
				 bytes, bytes / MIB, procs, procs == 1 ? "" : "es");
	err = err ?: row2(rep,
		"SELECT CAST(total(n) AS INTEGER), CAST(total(size) AS INTEGER) "
		"FROM (SELECT 1 AS n, size FROM f_alloc WHERE fn = 'reserve' AND "
		"addr != 0 UNION ALL SELECT n, size FROM main.alloc_sum WHERE "
		"fn = 'reserve')", &n, &reserved);
	err = err ?: row2(rep,
		"SELECT CAST(total(w) AS INTEGER), 0 FROM (SELECT weight AS w "
		"FROM f_alloc WHERE fn = 'mprotect' AND addr != 0 UNION ALL "
		"SELECT bytes FROM main.alloc_sum WHERE fn = 'mprotect')",
		&committed, &unused);
	if (!err && reserved)
		nsk_report__note(rep, "reserved address space, not heap: %" PRId64
				 " bytes (%.1f MiB) in %" PRId64 " PROT_NONE or "
				 "MAP_NORESERVE mapping%s; %" PRId64 " bytes of "
				 "them committed with mprotect (counted)",
				 reserved, reserved / MIB, n, n == 1 ? "" : "s",
				 committed);
	return err ?: go_note(rep);
}
