/* Opening the report's database and saving it.  The load is one
 * transaction of many small inserts: with no journal, no sync and memory
 * for temporaries, SQLite does little more than build its b-trees. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nusku/outfile.h>

#include "report/db.h"

/* "NSKU" in the database header's application id (offset 68, big-endian):
 * how --db knows a database it may replace is one of its own. */
#define NSK_DB_APPLICATION_ID 0x4e534b55
#define SQLITE_HEADER "SQLite format 3"

int nsk_db__open(sqlite3 **out)
{
	static const char pragmas[] =
		"PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
		"PRAGMA temp_store = MEMORY; PRAGMA locking_mode = EXCLUSIVE; "
		"PRAGMA cache_size = -262144; "
		"PRAGMA application_id = 1314081621;"; /* NSK_DB_APPLICATION_ID */
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

int nsk_db__check_target(const char *path, const char *input, char *err,
			 size_t len)
{
	uint8_t head[100]; /* the database header */
	size_t n = sizeof(head);
	struct stat st, in;
	int res;

	res = nsk_outfile__probe(path, &st, head, &n, err, len);
	if (res <= 0)
		return res;
	if (input && strcmp(input, "-") && !stat(input, &in) &&
	    in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
		snprintf(err, len, "%s is the recording being read", path);
		return -EINVAL;
	}
	if (st.st_size == 0)
		return 0;
	if (n < sizeof(head) || memcmp(head, SQLITE_HEADER, sizeof(SQLITE_HEADER)) ||
	    ((uint32_t)head[68] << 24 | (uint32_t)head[69] << 16 |
	     (uint32_t)head[70] << 8 | head[71]) != NSK_DB_APPLICATION_ID) {
		snprintf(err, len, "%s exists and is not a database nusku "
			 "wrote; not replacing it", path);
		return -EEXIST;
	}
	return 0;
}

int nsk_db__save(sqlite3 *db, const char *path, char *err, size_t len)
{
	struct nsk_outfile of = { .fd = -1 };
	sqlite3 *file = NULL;
	sqlite3_backup *b;
	int rc = SQLITE_OK, res;

	res = nsk_db__check_target(path, NULL, err, len);
	if (res < 0)
		return res;
	/* A new 0600 file under a temporary name, filled by SQLite through
	 * that name (never following a link), then renamed over path: a
	 * failure leaves what was at path as it was. */
	res = nsk_outfile__create(&of, path, err, len);
	if (res)
		return res;
	rc = sqlite3_open_v2(of.tmp, &file, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_NOFOLLOW, NULL);
	/* no journal file beside it: the copy is all or nothing anyway */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(file, "PRAGMA journal_mode = OFF", NULL,
				  NULL, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	b = sqlite3_backup_init(file, "main", db, "main");
	if (!b) {
		rc = sqlite3_errcode(file);
		goto fail;
	}
	sqlite3_backup_step(b, -1);
	rc = sqlite3_backup_finish(b);
	if (rc != SQLITE_OK)
		goto fail;
	rc = sqlite3_close(file);
	file = NULL;
	if (rc != SQLITE_OK)
		goto fail;
	res = nsk_outfile__commit(&of, err, len);
	if (res) {
		nsk_outfile__discard(&of);
		return res;
	}
	nsk_outfile__release(&of);
	return 0;
fail:
	snprintf(err, len, "%s: %s", path, file ? sqlite3_errmsg(file)
						: sqlite3_errstr(rc));
	sqlite3_close(file);
	nsk_outfile__discard(&of);
	return -EIO;
}
