/* Function ranges of code without a symbol table, from its .eh_frame.
 *
 * A stripped program (most of Debian's) still carries the call frame
 * information the C++ runtime and debuggers unwind with, and the compiler
 * writes one FDE per function: its initial location and range are where
 * the function starts and ends.  So every address in such a file can be
 * grouped with the others of its function, named by where it starts.
 */
#ifndef NUSKU_RECORD_FDE_RANGES_H
#define NUSKU_RECORD_FDE_RANGES_H

#include <stdint.h>

#include <libelf.h>

struct nsk_fde_ranges;

/* The ranges of elf (not copied: it must outlive them); NULL when the file
 * has no .eh_frame (or no memory).  Addresses are the file's own virtual
 * addresses. */
struct nsk_fde_ranges *nsk_fde_ranges__new(Elf *elf);
void nsk_fde_ranges__free(struct nsk_fde_ranges *r); /* accepts NULL */

/* The range [*start, *end) of the function that holds vaddr: 0 when one
 * does, -ENOENT when no FDE covers it (data, or hand-written code). */
int nsk_fde_ranges__find(struct nsk_fde_ranges *r, uint64_t vaddr,
			 uint64_t *start, uint64_t *end);

#endif
