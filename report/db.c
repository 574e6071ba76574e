/* Opening the report's database and saving it.  The load is one
 * transaction of many small inserts: with no journal, no sync and memory
 * for temporaries, SQLite does little more than build its b-trees. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "report/db.h"

int nsk_db__open(sqlite3 **out)
{
	static const char pragmas[] =
		"PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
		"PRAGMA temp_store = MEMORY; PRAGMA locking_mode = EXCLUSIVE; "
		"PRAGMA cache_size = -262144;";
	sqlite3 *db = NULL;

	/* One thread uses the database: no memory statistics (they take a
	 * global mutex on every allocation) and no connection mutex.  Fails
	 * harmlessly when SQLite was initialized already. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK ||
	    sqlite3_exec(db, pragmas, NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return -EIO;
	}
	*out = db;
	return 0;
}

int nsk_db__save(sqlite3 *db, const char *path, char *err, size_t len)
{
	sqlite3 *file = NULL;
	sqlite3_backup *b;
	int rc;

	/* The backup replaces the pages; an old file of another kind would
	 * make the open fail, so start from nothing. */
	if (unlink(path) && errno != ENOENT) {
		snprintf(err, len, "%s: cannot replace: %m", path);
		return -EIO;
	}
	rc = sqlite3_open_v2(path, &file, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	b = sqlite3_backup_init(file, "main", db, "main");
	if (!b)
		goto fail;
	sqlite3_backup_step(b, -1);
	rc = sqlite3_backup_finish(b);
	if (rc != SQLITE_OK)
		goto fail;
	return sqlite3_close(file) == SQLITE_OK ? 0 : -EIO;
fail:
	snprintf(err, len, "%s: %s", path, file ? sqlite3_errmsg(file)
						: sqlite3_errstr(rc));
	sqlite3_close(file);
	return -EIO;
}
