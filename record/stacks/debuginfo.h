/* Where a module's symbols are: in the file itself, or in a separate debug
 * file found by build-id under /usr/lib/debug/.build-id/, by
 * .gnu_debuglink, or fetched from debuginfod (record/stacks/debuginfod.h).
 *
 * nsk_debuginfo__find is the find_debuginfo callback every Dwfl of the
 * recorder uses instead of dwfl_standard_find_debuginfo, which would ask
 * debuginfod servers itself, in the middle of a sample, for as long as
 * they take.  A decompressed copy in the cache (debug_cache.h) comes
 * before all of these.
 */
#ifndef NUSKU_RECORD_DEBUGINFO_H
#define NUSKU_RECORD_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

struct nsk_debuginfod;
struct nsk_debug_cache;

/* What the callback knows of a module: set as the Dwfl_Module's userdata
 * (dwfl_module_info).  A module without one is looked up locally only. */
struct nsk_debuginfo {
	const char *path;	     /* as the process names it, for debuglink */
	struct nsk_debuginfod *dbgd; /* NULL: no fetching */
	struct nsk_debug_cache *cache; /* NULL: no decompressed copies */
	int found;		     /* a debug file was handed to libdwfl */
};

int nsk_debuginfo__find(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name,
			const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name);

/* 1 when elf holds its own function symbols (.symtab, or MiniDebugInfo in
 * .gnu_debugdata, which libdwfl reads), 0 when not. */
int nsk_debuginfo__has_symtab(Elf *elf);

/* For a module whose file has no symbol table: when no debug file for it
 * is on this machine, asks di->dbgd to fetch one now, so it may be there
 * when the first address is looked up.  Returns at once. */
void nsk_debuginfo__prefetch(const struct nsk_debuginfo *di, Elf *elf,
			     const uint8_t *build_id, size_t len);

#endif
