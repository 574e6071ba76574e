/* The report's database: opened in memory and tuned for one bulk load,
 * and written to a file on request (--db). */
#ifndef NUSKU_REPORT_DB_H
#define NUSKU_REPORT_DB_H

#include <sqlite3.h>

/* An empty in-memory database, journal and sync off.  0 or -EIO. */
int nsk_db__open(sqlite3 **out);
/* Copies the main database to path (replacing it) with the backup API.
 * 0 or -EIO; the message in err. */
int nsk_db__save(sqlite3 *db, const char *path, char *err, size_t len);

#endif
