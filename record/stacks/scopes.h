/* The functions and inlined calls at an address, from an index of each
 * compile unit's code ranges built once.
 *
 * dwarf_getscopes walks a unit's DIE tree from its root for every address
 * it is asked about, and when the innermost scope is an inlined call it
 * walks the whole unit a second time to find the call's abstract origin:
 * 50 to 115 us per address in libc's malloc.c, most of the recorder's CPU
 * while a compiler ran (make -j2 of C files, samples in libc with its
 * debug file).  This index walks a unit once, the first time one of its
 * addresses is asked about, keeping every subprogram and inlined call that
 * has code, their nesting, and their ranges sorted with a pointer from each
 * range to the nearest one enclosing it; a lookup is a bisection and a
 * short climb.  It also gives the whole chain of nested inlined calls,
 * where dwarf_getscopes gives the innermost call and then the scopes of its
 * abstract definition.
 */
#ifndef NUSKU_RECORD_SCOPES_H
#define NUSKU_RECORD_SCOPES_H

#include <elfutils/libdw.h>

struct nsk_scopes;

/* An empty index of one module's units; NULL on ENOMEM. */
struct nsk_scopes *nsk_scopes__new(void);
void nsk_scopes__free(struct nsk_scopes *s); /* accepts NULL */

/* The DW_TAG_inlined_subroutine and DW_TAG_subprogram DIEs whose code
 * contains pc (an address of cu's Dwarf, as dwarf_haspc takes it),
 * innermost first, ending at the first subprogram: up to max into out.
 * Returns how many, 0 when none, -ENOMEM.  The DIEs stay valid as long as
 * the Dwarf the unit is in; the index must not outlive it either. */
int nsk_scopes__at(struct nsk_scopes *s, Dwarf_Die *cu, Dwarf_Addr pc,
		   Dwarf_Die *out, int max);

#endif
