/* --sql: the user's own queries against the loaded database, read-only
 * (an authorizer).  Several statements may be given (CREATE TEMP TABLE ...;
 * SELECT ...): each runs in order and the rows of the last one are shown,
 * in the chosen format, with the usual summary; an earlier statement that
 * returns rows is refused rather than its rows dropped. */
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

/* --sql may read anything and make temporary tables and views of its own
 * (CREATE TEMP TABLE x AS ...); it may not change the recording's tables,
 * attach a database (ATTACH creates files, as root), or set pragmas.
 * SQLite asks this at prepare time for every action a statement takes. */
static int authorize(void *ctx, int action, const char *a1, const char *a2,
		     const char *db, const char *trigger)
{
	static const char *const query_pragmas[] = {
		"table_info", "table_xinfo", "index_list", "index_info",
		"index_xinfo", "foreign_key_list", NULL
	};
	int *denied = ctx;

	(void)trigger;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_FUNCTION:
	case SQLITE_RECURSIVE:
	case SQLITE_TRANSACTION:
	case SQLITE_SAVEPOINT:
	case SQLITE_CREATE_TEMP_TABLE:
	case SQLITE_CREATE_TEMP_INDEX:
	case SQLITE_CREATE_TEMP_VIEW:
	case SQLITE_CREATE_TEMP_TRIGGER:
	case SQLITE_DROP_TEMP_TABLE:
	case SQLITE_DROP_TEMP_INDEX:
	case SQLITE_DROP_TEMP_VIEW:
	case SQLITE_DROP_TEMP_TRIGGER:
		return SQLITE_OK;
	case SQLITE_INSERT:
	case SQLITE_UPDATE:
	case SQLITE_DELETE:
		/* rows of temporary tables (and of sqlite_temp_master, which
		 * CREATE TEMP writes) */
		if (db && !strcmp(db, "temp"))
			return SQLITE_OK;
		break;
	case SQLITE_PRAGMA:
		if (!a2) /* reading a setting */
			return SQLITE_OK;
		for (int i = 0; query_pragmas[i]; i++)
			if (!strcmp(a1, query_pragmas[i]))
				return SQLITE_OK;
		break;
	default:
		break;
	}
	*denied = action;
	return SQLITE_DENY;
}

int nsk_report__sql(struct nsk_report *rep, const char *sql)
{
	const char *tail = sql;
	sqlite3_stmt *st = NULL;
	int rc, denied = 0, n = 0;

	/* no ATTACH at all, whatever the authorizer lets through */
	sqlite3_limit(rep->db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_set_authorizer(rep->db, authorize, &denied);
	while (!only_blanks(tail)) {
		n++;
		if (sqlite3_prepare_v2(rep->db, tail, -1, &st, &tail) != SQLITE_OK)
			goto sql_error;
		if (!st)
			continue;
		if (only_blanks(tail))
			break;
		/* Rows are printed for one statement, the last: say so
		 * rather than drop the rows of another. */
		if (sqlite3_column_count(st)) {
			snprintf(rep->err, sizeof(rep->err), "--sql: statement "
				 "%d returns rows and is not the last; only the "
				 "last statement's rows are printed (run one "
				 "query per --sql, or join them with UNION ALL)",
				 n);
			goto fail;
		}
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		if (rc != SQLITE_DONE)
			goto sql_error;
		sqlite3_finalize(st);
		st = NULL;
	}
	sqlite3_set_authorizer(rep->db, NULL, NULL);
	if (!st || !sqlite3_column_count(st)) {
		if (st && sqlite3_step(st) != SQLITE_DONE)
			goto sql_error;
		sqlite3_finalize(st);
		return 0;
	}
	return nsk_report__emit(rep, "sql", st, NULL);
sql_error:
	if (denied)
		snprintf(rep->err, sizeof(rep->err), "--sql is read-only: it "
			 "may query the recording and make TEMP tables and "
			 "views, not change tables, ATTACH or set pragmas "
			 "(%s)", sqlite3_errmsg(rep->db));
	else
		snprintf(rep->err, sizeof(rep->err), "--sql: %s",
			 sqlite3_errmsg(rep->db));
fail:
	sqlite3_set_authorizer(rep->db, NULL, NULL);
	sqlite3_finalize(st);
	return -EINVAL;
}
