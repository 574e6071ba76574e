/* The adapter between nusku live and the report loader: the one loader
 * fills the database for both commands, live only calls it a turn at a
 * time (the loader keeps a transaction open; each turn commits it). */
#include <errno.h>
#include <stdlib.h>

#include "report/db.h"
#include "report/live_db.h"
#include "report/load.h"

struct nsk_live_loader {
	struct nsk_load *ld;
	int finished;
};

int nsk_live_db__open_loader(struct nsk_live_db *db)
{
	struct nsk_live_loader *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	err = nsk_db__open(&db->sql);
	err = err ?: nsk_load__new(db->sql, &l->ld);
	if (err) {
		free(l);
		return err;
	}
	db->loader = l;
	return 0;
}

int nsk_live_db__loader_begin(struct nsk_live_db *db)
{
	(void)db; /* the loader's transaction is always open */
	return 0;
}

int nsk_live_db__loader_add(struct nsk_live_db *db, const struct nsk_record *rec)
{
	return nsk_load__record(db->loader->ld, rec);
}

int nsk_live_db__loader_commit(struct nsk_live_db *db, int final)
{
	struct nsk_live_loader *l = db->loader;

	if (l->finished)
		return 0;
	if (!final)
		return nsk_load__commit(l->ld);
	l->finished = 1;
	return nsk_load__finish(l->ld, "live", NULL, &db->stats);
}

int nsk_live_db__loader_new_run(struct nsk_live_db *db)
{
	return db->loader ? nsk_load__new_run(db->loader->ld) : 0;
}

const char *nsk_live_db__loader_error(struct nsk_live_db *db)
{
	return db->loader ? nsk_load__error(db->loader->ld) : "";
}

void nsk_live_db__loader_problem(struct nsk_live_db *db, const char *msg)
{
	if (db->loader)
		nsk_load__problem(db->loader->ld, msg);
}

void nsk_live_db__close_loader(struct nsk_live_db *db)
{
	if (db->loader)
		nsk_load__free(db->loader->ld);
	free(db->loader);
	db->loader = NULL;
	if (db->sql)
		sqlite3_close(db->sql);
	db->sql = NULL;
}
