/* The report's database: opened in memory and tuned for one bulk load,
 * and written to a file on request (--db). */
#ifndef NUSKU_REPORT_DB_H
#define NUSKU_REPORT_DB_H

#include <sqlite3.h>

/* An empty in-memory database, journal and sync off.  0 or -EIO. */
int nsk_db__open(sqlite3 **out);
/* May --db write to path?  Nothing there, an empty file, or a database
 * nusku wrote (its application id); never a link, a device or other
 * non-regular file, nor the recording input (NULL or "-": none).  0 or a
 * negative errno with the message in err.  Checked before the load so
 * that a refusal comes at once; nsk_db__save checks again. */
int nsk_db__check_target(const char *path, const char *input, char *err,
			 size_t len);
/* Copies the main database to path with the backup API, into a new 0600
 * file renamed over path (include/nusku/outfile.h).  0 or a negative
 * errno; the message in err. */
int nsk_db__save(sqlite3 *db, const char *path, char *err, size_t len);

#endif
