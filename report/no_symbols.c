/* The modules whose code the report could not name, one line each, with
 * what to do about it: the recorder flags a mapping whose file had no
 * symbol table and no debug file (format 1.2, mapping.flags 1), and every
 * report lists those files with their build-id, which is what a debug
 * package or a debuginfod server is looked up by.
 */
#include <stdio.h>

#include "report/report.h"

static sqlite3_stmt *modules(struct nsk_report *rep)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(rep->db, "SELECT path, build_id FROM mapping "
			       "WHERE no_symbols GROUP BY path, build_id "
			       "ORDER BY path", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	return st;
}

static const char *text(sqlite3_stmt *st, int col, const char *none)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	return s ? s : none;
}

int nsk_report__no_symbols_text(struct nsk_report *rep, char lines[][256],
				int max, int *more)
{
	sqlite3_stmt *st = modules(rep);
	int n = 0;

	*more = 0;
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (n == max) {
			(*more)++;
			continue;
		}
		snprintf(lines[n++], 256, "no symbols: %s (build-id %s): "
			 "install its debug package (-dbgsym) or set "
			 "DEBUGINFOD_URLS", text(st, 0, "?"), text(st, 1, "none"));
	}
	sqlite3_finalize(st);
	return n;
}

void nsk_report__no_symbols_json(struct nsk_report *rep, FILE *f)
{
	sqlite3_stmt *st = modules(rep);
	int first = 1;

	fputs(" \"no_symbols\": [", f);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		fputs(first ? "{\"path\": " : ", {\"path\": ", f);
		first = 0;
		nsk_out__json_str(f, text(st, 0, ""));
		fputs(", \"build_id\": ", f);
		if (sqlite3_column_type(st, 1) == SQLITE_NULL)
			fputs("null", f);
		else
			nsk_out__json_str(f, text(st, 1, ""));
		fputc('}', f);
	}
	sqlite3_finalize(st);
	fputs("],\n", f);
}
