/* What a module's addresses were symbolized to, kept between recordings by
 * build-id.
 *
 * A program that is profiled, changed and profiled again runs the same
 * libraries and tools each time (make runs the same cc1, as and ld), and
 * each recording used to read their symbol tables again (sorting cc1's
 * 29,000 symbols), open libc's 10 MB debug file, index its units and read
 * its line tables, all while the program ran beside it.  The answers for an
 * ELF file are the same for every recording of the same build, so the
 * recorder keeps each one's answers in the cache directory's symbols/, one
 * file per build-id, and a module that has a file answers the addresses it
 * holds without opening a table.
 *
 * The answers depend on what the file and its debug information hold,
 * which can differ for one build-id (a copy stripped with objcopy keeps
 * it) or grow (a -dbgsym package installed later): a file records whether
 * the module had DWARF and a symbol table of its own; one made without
 * DWARF is used only while none is found, and one made without a symbol
 * table only for a module without one.
 *
 * The file: a header (struct nsk_symcache_head in symcache.c), the entries
 * (address, first location, count) sorted by address, the locations
 * (function, file, line, inlined) and an arena of NUL-terminated strings,
 * each once.  A read copies it and checks it, and builds no index (an
 * address is found by bisection): it happens while the program runs.
 * Native byte order: it never leaves the machine.  Read only when it is a
 * regular file of this user that nobody else may write, and checked whole
 * before use.
 */
#ifndef NUSKU_RECORD_SYMCACHE_H
#define NUSKU_RECORD_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "record/stacks/symbols.h"

struct nsk_symcache;

/* What answers were worked out from: flags of made_from. */
#define NSK_SYMCACHE_DWARF 1u  /* DWARF (in the file or a debug file) */
#define NSK_SYMCACHE_SYMTAB 2u /* the file's own .symtab */

/* The answers kept for build-id id in dir (a cache subdirectory's fd), or
 * an empty set when there is no usable file; NULL on ENOMEM.  *made_from:
 * NSK_SYMCACHE_* flags of the module when they were worked out (0 when
 * none were kept). */
struct nsk_symcache *nsk_symcache__read(int dir, const uint8_t *id, size_t len,
					unsigned *made_from);
void nsk_symcache__free(struct nsk_symcache *c); /* accepts NULL */

/* The answer kept for vaddr into out (NSK_SYMLOC_MAX entries; strings
 * valid until the next add): how many locations, 0 for an address nothing
 * named; -1 when none is kept. */
int nsk_symcache__find(const struct nsk_symcache *c, uint64_t vaddr,
		       struct nsk_symloc *out);
/* Keeps the answer for vaddr (absent until now; n <= NSK_SYMLOC_MAX).
 * 0, or -ENOSPC past the size a file may have, or -ENOMEM. */
int nsk_symcache__add(struct nsk_symcache *c, uint64_t vaddr,
		      const struct nsk_symloc *locs, int n);
/* 1 when answers were added since the file was read. */
int nsk_symcache__changed(const struct nsk_symcache *c);

/* Writes every answer into dir's file for id, replacing it whole (a
 * temporary file, renamed). */
void nsk_symcache__write(int dir, const uint8_t *id, size_t len,
			 const struct nsk_symcache *c, unsigned made_from);

/* Removes the least recently used files of dir (read or written last the
 * longest ago) while they take more than max bytes, and temporary files
 * older than an hour. */
#define NSK_SYMCACHE_MAX (64ull << 20)
void nsk_symcache__prune(int dir, uint64_t max);

#endif
