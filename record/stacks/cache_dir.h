/* The recorder's cache directory: what one recording worked out that the
 * next can reuse (record/stacks/debug_cache.h keeps debug files there).
 *
 * $NUSKU_CACHE_DIR when set (empty or "off": no cache), else
 * $XDG_CACHE_HOME/nusku, else ~/.cache/nusku with ~ this user's home from
 * the password database (not $HOME, which sudo may leave as the caller's).
 * A root recorder reads what it finds there as trusted, so the directory
 * and each subdirectory are made 0700, opened O_NOFOLLOW | O_DIRECTORY and
 * checked through that fd: owned by this user, open to nobody else.  One
 * that fails is refused, not repaired.
 */
#ifndef NUSKU_RECORD_CACHE_DIR_H
#define NUSKU_RECORD_CACHE_DIR_H

#include <stddef.h>

/* The subdirectory sub of the cache directory, made if missing: its fd,
 * and its path in path.  -ENOENT when the cache is off; another negative
 * errno with a one-line reason in why when it cannot be used. */
int nsk_cache_dir__open(const char *sub, char *path, size_t pathlen,
			char *why, size_t whylen);

/* "nusku: record: warning: symbol cache off: WHY" on stderr, once per
 * process however many parts of the cache find it unusable, when err (as
 * nsk_cache_dir__open returned it) says the directory was refused: a link,
 * a file, another user's or open to others, or a bad NUSKU_CACHE_DIR.  A
 * directory this user cannot make or open (a read-only home, a recorder
 * with fewer privileges than the cache's owner) is quietly no cache. */
void nsk_cache_dir__warn(int err, const char *why);

/* All of len bytes from the start of fd (pread), or all of buf written at
 * fd's offset: 0, or -EIO on an error or a short file. */
int nsk_cache_dir__read_all(int fd, void *buf, size_t len);
int nsk_cache_dir__write_all(int fd, const void *buf, size_t len);

#endif
