/* Debug files kept decompressed, by build-id, for the next recordings.
 *
 * Debian's debug packages (libc6-dbg, the -dbgsym files) and debuginfod
 * hand out debug files whose .debug_* sections are zlib-compressed, and
 * libdw inflates every one of them when it first opens the file: libc's
 * 4 MB become 10 MB, about 50 ms of CPU in every recording that names a
 * libc frame, spent while the program runs beside it.  So the first
 * recording that opens such a file notes it, and at its end
 * (nsk_debug_cache__store, after the recording is written) writes a copy
 * with the sections decompressed into the cache directory's debug/ as
 * BUILDID.debug.  Later recordings open that copy first; libdw maps it and
 * reads only what a lookup touches.
 *
 * A copy is used only when it is a regular file of this user, writable by
 * nobody else, carrying the build-id asked for.  Files with a
 * .gnu_debugaltlink are not copied (their dwz part is found relative to
 * the original).  The directory is kept under NSK_DEBUG_CACHE_MAX bytes
 * ($NUSKU_CACHE_MAX when set), least recently used copies going first.
 */
#ifndef NUSKU_RECORD_DEBUG_CACHE_H
#define NUSKU_RECORD_DEBUG_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define NSK_DEBUG_CACHE_MAX (2LL << 30)
/* a temporary copy left by a recorder that died is removed after this */
#define NSK_DEBUG_CACHE_STALE_S 600

struct nsk_debug_cache;

/* NULL when the cache is off or cannot be used (a refused directory said
 * once on stderr: nsk_cache_dir__warn), or on ENOMEM. */
struct nsk_debug_cache *nsk_debug_cache__open(void);
void nsk_debug_cache__free(struct nsk_debug_cache *c); /* accepts NULL */

/* The decompressed copy of build-id's debug file, open, its path in path;
 * -1 when there is none.  Marks it used. */
int nsk_debug_cache__find(struct nsk_debug_cache *c, const uint8_t *build_id,
			  size_t len, char *path, size_t pathlen);

/* fd is the debug file just found for build-id: when its debug sections
 * are compressed, it is remembered (a duplicate of fd) for store. */
void nsk_debug_cache__note(struct nsk_debug_cache *c, int fd,
			   const uint8_t *build_id, size_t len);

/* Writes the copies noted.  Errors leave the cache as it was. */
void nsk_debug_cache__store(struct nsk_debug_cache *c);

/* The copy of the ELF file at fd, with compressed sections decompressed,
 * written to out (an empty file open for writing).  0 or a negative errno;
 * -ENODATA when fd has no compressed section.  For tests too. */
int nsk_debug_cache__decompress(int fd, int out);

#endif
