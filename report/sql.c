/* --sql: the user's own queries against the loaded database.  Several
 * statements may be given (CREATE TEMP TABLE ...; SELECT ...): each runs
 * in order and the rows of the last one are shown, in the chosen format,
 * with the usual summary. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

/* Nothing but blanks, semicolons and comments left? */
static int only_blanks(const char *s)
{
	while (*s) {
		if (strchr(" \t\r\n;", *s)) {
			s++;
		} else if (!strncmp(s, "--", 2)) {
			s += strcspn(s, "\n");
		} else if (!strncmp(s, "/*", 2)) {
			const char *end = strstr(s + 2, "*/");

			if (!end)
				return 1;
			s = end + 2;
		} else {
			return 0;
		}
	}
	return 1;
}

int nsk_report__sql(struct nsk_report *rep, const char *sql)
{
	const char *tail = sql;
	sqlite3_stmt *st = NULL;
	int rc;

	while (!only_blanks(tail)) {
		if (sqlite3_prepare_v2(rep->db, tail, -1, &st, &tail) != SQLITE_OK)
			goto sql_error;
		if (!st)
			continue;
		if (only_blanks(tail))
			break;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		if (rc != SQLITE_DONE)
			goto sql_error;
		sqlite3_finalize(st);
		st = NULL;
	}
	if (!st || !sqlite3_column_count(st)) {
		if (st && sqlite3_step(st) != SQLITE_DONE)
			goto sql_error;
		sqlite3_finalize(st);
		return 0;
	}
	return nsk_report__emit(rep, "sql", st, NULL);
sql_error:
	snprintf(rep->err, sizeof(rep->err), "--sql: %s", sqlite3_errmsg(rep->db));
	sqlite3_finalize(st);
	return -EINVAL;
}
