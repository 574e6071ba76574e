/* The database schema: every table the loader fills, in blocks per signal.
 * docs/schema.md describes each table for people who write --sql queries;
 * keep the two in step. */
#ifndef NUSKU_REPORT_SCHEMA_H
#define NUSKU_REPORT_SCHEMA_H

#include <sqlite3.h>

/* Tables of events in time: each has the columns time (CLOCK_MONOTONIC ns),
 * pid, tid and comm_id, so --pid/--tid/--comm/--since/--until filter them
 * all the same way (see filter.c: a view f_<table> per table). */
struct nsk_event_table {
	const char *table;
	const char *what; /* plural, for the summary line: "CPU samples" */
};

extern const struct nsk_event_table nsk_schema__events[];
extern const unsigned nsk_schema__nevents;

/* CREATE every table (before the load). 0 or -EIO with *errmsg set
 * (sqlite3_free it). */
int nsk_schema__create(sqlite3 *db, char **errmsg);
/* CREATE the indexes, after the bulk load. */
int nsk_schema__index(sqlite3 *db, char **errmsg);

#endif
