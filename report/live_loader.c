/* The adapter between nusku live and the report loader: the one loader
 * fills the database for both commands, live only calls it a turn at a
 * time.  Until the loader can run incrementally the database stays empty
 * and every view says it has no data. */
#include <errno.h>
#include <stdlib.h>

#include "report/live_db.h"

int nsk_live_db__open_loader(struct nsk_live_db *db)
{
	if (sqlite3_open(":memory:", &db->sql) != SQLITE_OK)
		return -ENOMEM;
	return 0;
}

int nsk_live_db__loader_begin(struct nsk_live_db *db)
{
	(void)db;
	return 0;
}

int nsk_live_db__loader_add(struct nsk_live_db *db, const struct nsk_record *rec)
{
	(void)db;
	(void)rec;
	return 0;
}

int nsk_live_db__loader_commit(struct nsk_live_db *db, int final)
{
	(void)db;
	(void)final;
	return 0;
}

void nsk_live_db__loader_problem(struct nsk_live_db *db, const char *msg)
{
	(void)db;
	(void)msg;
}

void nsk_live_db__close_loader(struct nsk_live_db *db)
{
	if (db->sql)
		sqlite3_close(db->sql);
	db->sql = NULL;
}
