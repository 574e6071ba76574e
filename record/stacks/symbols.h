/* User-space symbolization: ELF files opened once, addresses resolved once.
 *
 * A module is one ELF file (executable or shared object) as mapped by some
 * target; it is shared by every process that maps the same file.  Addresses
 * given to it are ELF virtual addresses (see nsk_module__vaddr), so the
 * result does not depend on where a process put the file.
 */
#ifndef NUSKU_RECORD_SYMBOLS_H
#define NUSKU_RECORD_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct nsk_symbols;
struct nsk_module;

/* One location of an address, innermost first: entry 0 is the code at the
 * address itself (maybe inlined), the last entry is the real function. */
struct nsk_symloc {
	const char *function; /* NULL: unknown */
	const char *file;     /* NULL: unknown */
	uint32_t line;
	int inlined; /* this location is an inlined call inside the next one */
};

#define NSK_SYMLOC_MAX 16

int nsk_symbols__new(struct nsk_symbols **out);
void nsk_symbols__free(struct nsk_symbols *s); /* accepts NULL */
/* Leaves in the cache, for the next recordings, decompressed copies of the
 * compressed debug files this one opened (debug_cache.h) and the answers
 * it worked out for each build (symcache.h).  Takes time: called once the
 * recording is written. */
void nsk_symbols__store_cache(struct nsk_symbols *s);
/* How many addresses were answered from what earlier recordings of the
 * same builds worked out (record/stacks/symcache.h). */
uint64_t nsk_symbols__answered(const struct nsk_symbols *s);

/* The module for a mapped file, opened on first use: path as the process
 * sees it, open_path where this process can read it, ino to tell two files
 * of one path apart; open_path NULL for a pseudo-module ([vdso], [anon])
 * that only names itself.  Never NULL except on ENOMEM; a module whose file
 * cannot be read still names its path (all lookups unresolved). */
struct nsk_module *nsk_symbols__module(struct nsk_symbols *s, const char *path,
				       const char *open_path, uint64_t ino);

const char *nsk_module__path(const struct nsk_module *m);

struct nsk_unwind_rule;
/* The CFI rule at the module's vaddr (record/stacks/unwind_rules.h),
 * learned once for every process that maps the file: 1, or 0 when the
 * module has no .eh_frame to learn it from (then each address space asks
 * libdw itself). */
int nsk_module__unwind_rule(struct nsk_module *m, uint64_t vaddr,
			    struct nsk_unwind_rule *out);
/* The open file (the module keeps it), -1 when it could not be opened. */
int nsk_module__fd(const struct nsk_module *m);
const char *nsk_module__name(const struct nsk_module *m); /* basename */
uint64_t nsk_module__serial(const struct nsk_module *m);   /* unique, != 0 */
const uint8_t *nsk_module__build_id(const struct nsk_module *m, size_t *len);

/* ELF virtual address of a file offset (through the PT_LOAD headers); the
 * offset itself when the file could not be read. */
uint64_t nsk_module__vaddr(const struct nsk_module *m, uint64_t file_off);

/* Resolve a virtual address into locations (see struct nsk_symloc).  The
 * strings stay valid until the next call on this module.  Returns the
 * number of locations, 0 when nothing is known about the address. */
int nsk_module__symbolize(struct nsk_module *m, uint64_t vaddr,
			  struct nsk_symloc *out, int max);

/* 1 when the module's file has no symbol table and no debug file was found
 * for it (looking for one now if nothing has yet): its functions are named
 * module!0xSTART after their .eh_frame ranges.  0 when it has symbols, and
 * for a module that is no readable file. */
int nsk_module__lacks_symbols(struct nsk_module *m);

/* Loads now what the first lookup in the module would load (its symbol
 * table, its debug info and address ranges; only the answers kept for its
 * build when they hold the address looked up), so that lookup is quick.
 * For a recorder that knows which big module its first events will hit. */
void nsk_module__warm(struct nsk_module *m);

/* A demangled copy of a C++ or Rust name (malloc, record/stacks/
 * demangle_rust.h for Rust), or NULL if it is not one. */
char *nsk_demangle(const char *name);

#endif
