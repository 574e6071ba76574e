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
	struct nsk_reader_stats stats;
	char message[256];
};

int nsk_live_db__open_loader(struct nsk_live_db *db);
/* A transaction around each turn of the pump: one commit per turn. */
int nsk_live_db__loader_begin(struct nsk_live_db *db);
int nsk_live_db__loader_add(struct nsk_live_db *db, const struct nsk_record *rec);
int nsk_live_db__loader_commit(struct nsk_live_db *db, int final);
void nsk_live_db__loader_problem(struct nsk_live_db *db, const char *msg);
void nsk_live_db__close_loader(struct nsk_live_db *db);

#endif
