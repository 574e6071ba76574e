/* Inside the live database: the state live_db.c keeps, and the adapter to
 * the report loader (live_loader.c) that fills the SQLite tables. */
#ifndef NUSKU_REPORT_LIVE_DB_H
#define NUSKU_REPORT_LIVE_DB_H

#include <sqlite3.h>

#include "report/live.h"

struct nsk_live_loader;

struct nsk_live_db {
	sqlite3 *sql;
	struct nsk_live_loader *loader;
	uint64_t records;
	uint64_t lost;
	uint64_t first_time;
	uint64_t last_time;
	int clean_end;
	int ended;
	int follow_segments; /* END closes a segment (nsk_live_db__follow_segments) */
	int failed; /* the loader refused the file (a limit): message says why */
	struct nsk_reader_stats stats;
	char message[256];
	uint64_t keep_ns; /* the longest window a view may ask for */
	/* Running totals (live_agg.c): rows of a table up to its watermark
	 * are summed in a temp table; marks remember which rowid the table
	 * had reached at what recording time, to find a window's first row. */
	struct nsk_live_agg {
		struct nsk_live_src {
			int64_t watermark;
			struct {
				int64_t rowid;
				uint64_t time;
			} marks[64];
			unsigned nmarks;
		} src[2];
		int ready; /* the temp tables exist */
	} agg[NSK_LIVE_NVIEWS];
};

/* Brings the running totals of a view's tables up to date; lo[i] is a
 * rowid of its i-th table below every row of time >= since (0 when
 * unsure).  0 or -EIO. */
int nsk_live_agg__update(struct nsk_live_db *db, int view, uint64_t since,
			 int64_t lo[2]);

/* Drops the rows no view will read again (live_agg.c): summed, and
 * older than keep_ns before the newest event.  0 or -EIO. */
int nsk_live_agg__prune(struct nsk_live_db *db, uint64_t keep_ns);
/* 1 when the database has a table or view of that name. */
int nsk_live_db__has_table(sqlite3 *db, const char *name);

int nsk_live_db__open_loader(struct nsk_live_db *db);
/* A transaction around each turn of the pump: one commit per turn. */
int nsk_live_db__loader_begin(struct nsk_live_db *db);
int nsk_live_db__loader_add(struct nsk_live_db *db, const struct nsk_record *rec);
int nsk_live_db__loader_commit(struct nsk_live_db *db, int final);
/* The next records are another recorder run's (nsk_load__new_run). */
int nsk_live_db__loader_new_run(struct nsk_live_db *db);
/* The loader's one-line message after it failed. */
const char *nsk_live_db__loader_error(struct nsk_live_db *db);
void nsk_live_db__loader_problem(struct nsk_live_db *db, const char *msg);
void nsk_live_db__close_loader(struct nsk_live_db *db);

#endif
