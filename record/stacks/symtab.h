/* A module's symbols, sorted once, for looking addresses up by bisection.
 *
 * libdwfl's dwfl_module_addrinfo reads the whole symbol table for every
 * address it is asked about (a loop over every symbol, with a section
 * header lookup for each): on cc1, node or a Rust binary, with tens of
 * thousands of symbols, that made symbolization most of the recorder's CPU
 * and seconds of waiting after the program ended.  This index reads the
 * table once and answers with the same choice libdwfl makes: the closest
 * symbol below the address whose size covers it (a global one before a
 * weak or local one at the same place); failing that, the closest sizeless
 * one (hand-written assembly) in the address's section that no sized
 * symbol's range passes.
 */
#ifndef NUSKU_RECORD_SYMTAB_H
#define NUSKU_RECORD_SYMTAB_H

#include <stdint.h>

#include <elfutils/libdwfl.h>

struct nsk_symtab;

/* The index of mod's symbols (.symtab, else .dynsym, and MiniDebugInfo,
 * as libdwfl finds them); NULL when it has none or memory ran out.  Names
 * point into mod's ELF data: the index must not outlive its Dwfl. */
struct nsk_symtab *nsk_symtab__new(Dwfl_Module *mod);
void nsk_symtab__free(struct nsk_symtab *t); /* accepts NULL */

/* The symbol for addr (an address of mod's Dwfl, bias included): its name,
 * with *off the distance from its start and *size its st_size (0: a
 * sizeless one); NULL when there is none. */
const char *nsk_symtab__find(const struct nsk_symtab *t, uint64_t addr,
			     uint64_t *off, uint64_t *size);

#endif
