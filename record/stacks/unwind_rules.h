/* A fast DWARF unwinder for the common frames, libdw for the rest.
 *
 * libdw takes microseconds per walk, and allocates as it goes; an
 * allocation-heavy program makes hundreds of thousands of stacks a second.
 * But nearly every x86-64 frame follows one of a few CFI shapes: the CFA
 * is sp or rbp plus a constant, the return address sits at CFA-8, rbp is
 * either untouched or saved at CFA plus a constant.  Those rules depend on
 * the pc alone, so they are asked of libdw once per pc and cached; a walk
 * through such frames is then a few loads per frame.  A frame of any other
 * shape (a signal frame, a DWARF expression, no CFI) makes the walk fall
 * back to libdw, which knows them all.
 *
 * One table per address space's Dwfl (record/stacks/unwind_dwarf.c).
 */
#ifndef NUSKU_RECORD_UNWIND_RULES_H
#define NUSKU_RECORD_UNWIND_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

struct nsk_unwind_rules;
struct nsk_user_regs;

int nsk_unwind_rules__new(struct nsk_unwind_rules **out);
void nsk_unwind_rules__free(struct nsk_unwind_rules *r); /* NULL is fine */

/* Unwinds as nsk_unwinder__unwind does (same arguments, same results:
 * ips leaf first, reach[i] the bytes of the copy read to find ips[i], 0
 * when the outermost frame was reached, 1 when the copy or max ended the
 * walk), with the rules of dwfl's modules; or 2 when the copy ended in a
 * frame whose frame record is where rbp pointed when the stack was taken,
 * so the frame-pointer walk from those registers continues ips from its
 * second entry on.  -ENOENT when a frame has a shape it does not handle:
 * ask libdw. */
int nsk_unwind_rules__unwind(struct nsk_unwind_rules *r, Dwfl *dwfl,
			     const struct nsk_user_regs *regs,
			     const uint8_t *stack, size_t len, uint64_t *ips,
			     uint32_t *reach, uint32_t max, uint32_t *n);

#endif
