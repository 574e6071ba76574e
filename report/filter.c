/* Filters: --pid, --tid, --comm, --since, --until become one WHERE clause
 * and a temporary view f_<table> per event table (schema.c lists them), so
 * that every view reads the selected events the same way and knows
 * nothing about the options.  Temporary views are not part of the
 * database --db writes. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/load.h"
#include "report/report.h"
#include "report/schema.h"

/* Appends " AND " + clause to where (a sqlite3_mprintf string). */
static char *and(char *where, char *clause)
{
	char *out;

	if (!clause) {
		sqlite3_free(where);
		return NULL;
	}
	out = where ? sqlite3_mprintf("%s AND %s", where, clause)
		    : sqlite3_mprintf("%s", clause);
	sqlite3_free(where);
	sqlite3_free(clause);
	return out;
}

/* "a,b,c" -> "'a','b','c'" quoted for SQL. */
static char *quoted_list(const char *list)
{
	char *out = NULL;
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		char *next;

		next = out ? sqlite3_mprintf("%s,%.*Q", out, (int)len, p)
			   : sqlite3_mprintf("%.*Q", (int)len, p);
		sqlite3_free(out);
		if (!next)
			return NULL;
		out = next;
		p += len;
		if (*p == ',')
			p++;
	}
	return out ? out : sqlite3_mprintf("''");
}

int nsk_filter__apply(struct nsk_report *rep)
{
	const struct nsk_report_opts *o = rep->opts;
	int64_t start = nsk_report__info(rep, "time_start_ns");
	char *where = NULL, *sql, *msg = NULL, *comms;
	int err = 0;

	/* pid and tid lists were checked to be digits and commas. */
	if (o->pids)
		where = and(where, sqlite3_mprintf("pid IN (%s)", o->pids));
	if (o->tids)
		where = and(where, sqlite3_mprintf("tid IN (%s)", o->tids));
	if (o->comms) {
		comms = quoted_list(o->comms);
		where = and(where, comms ? sqlite3_mprintf(
			"comm_id IN (SELECT id FROM comm WHERE name IN (%s))",
			comms) : NULL);
		sqlite3_free(comms);
	}
	if (o->since >= 0)
		where = and(where, sqlite3_mprintf("time >= %lld",
			(long long)nsk_load__after_start(start, o->since)));
	if (o->until >= 0)
		where = and(where, sqlite3_mprintf("time <= %lld",
			(long long)nsk_load__after_start(start, o->until)));
	if ((o->pids || o->tids || o->comms || o->since >= 0 || o->until >= 0)
	    && !where) {
		snprintf(rep->err, sizeof(rep->err), "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nsk_schema__nevents && !err; i++) {
		const char *t = nsk_schema__events[i].table;

		sql = sqlite3_mprintf("DROP VIEW IF EXISTS temp.f_%s; CREATE "
				      "TEMP VIEW f_%s AS SELECT * FROM main.%s%s%s",
				      t, t, t, where ? " WHERE " : "",
				      where ? where : "");
		if (!sql || sqlite3_exec(rep->db, sql, NULL, NULL, &msg)) {
			snprintf(rep->err, sizeof(rep->err), "filter: %s",
				 msg ? msg : "out of memory");
			err = -EIO;
		}
		sqlite3_free(msg);
		msg = NULL;
		sqlite3_free(sql);
	}
	sqlite3_free(where);
	return err;
}

const struct nsk_load_select *nsk_filter__select(const struct nsk_report_opts *o,
						 struct nsk_load_select *buf)
{
	if (!o->pids && !o->tids && !o->comms && o->since < 0 && o->until < 0)
		return NULL;
	*buf = (struct nsk_load_select){ .pids = o->pids, .tids = o->tids,
					 .comms = o->comms, .since = o->since,
					 .until = o->until };
	return buf;
}
