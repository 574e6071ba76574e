/* The walk under --call-graph auto: CFI where frame pointers do not hold,
 * the kernel's frame-pointer walk where the CFI says they do.
 *
 * A frame-pointer walk steps right out of a frame only where that frame
 * has a frame record at rbp (CFA = rbp + 16, the return address at CFA - 8,
 * the caller's rbp at CFA - 16).  A leaf of code built with frame pointers
 * has none (gcc sets up no frame in leaves), nor has a function in its
 * prologue or epilogue, a PLT stub, or code built without: there the walk
 * skips the caller.  So each frame is asked of its cached CFI rule
 * (record/stacks/unwind_rules.h): a frame with a record, whose rbp is the
 * one the kernel's walk went through, takes its caller from that walk (no
 * copy read); any other frame is unwound with CFI from the copy of the
 * stack.  In code built with frame pointers that is a rule lookup per
 * frame and two loads for a frameless leaf.
 */
#ifndef NUSKU_RECORD_UNWIND_MIXED_H
#define NUSKU_RECORD_UNWIND_MIXED_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "record/stacks/unwind.h"

struct nsk_unwind_rules;

/* Unwinds regs with the copy stack[0..len) and the kernel's walk fp, with
 * the rules of dwfl's modules (as: the address space they were placed
 * from, to tell code without CFI from no code at all).  ips, reach, max
 * and *n as nsk_unwinder__unwind's; *from_fp: how many of the frames came
 * from fp.  Returns NSK_UNWIND_DONE, _COPY_END (a frame needed more copy
 * than there was), _STOPPED (max frames, or an address no code can have:
 * zero, non-canonical, the kernel's, a stack that does not grow),
 * _UNMAPPED (a return address in no mapping of as: it is left in
 * ips[*n], which max leaves room for), or -ENOENT for a frame
 * of a shape the cached rules do not hold (ask libdw). */
int nsk_unwind_mixed__walk(struct nsk_unwind_rules *r, Dwfl *dwfl,
			   struct nsk_aspace *as,
			   const struct nsk_user_regs *regs,
			   const uint8_t *stack, size_t len,
			   const struct nsk_fp_walk *fp, uint64_t *ips,
			   uint32_t *reach, uint32_t max, uint32_t *n,
			   uint32_t *from_fp);

struct nsk_unwind_rule;
/* Whether the frame at pc, of rule ru, is code without CFI: mapped code
 * no module covers (JIT code, the vdso), or a module's code that no FDE
 * covers.  A frame-pointer walk through it is all there is. */
int nsk_unwind__mapped_without_cfi(const struct nsk_unwind_rule *ru,
				   struct nsk_aspace *as, uint64_t pc);

/* Whether a return address is in a mapping of as (its call, or, for the
 * uretprobe trampoline, the page it starts). */
int nsk_unwind__mapped_ra(struct nsk_aspace *as, uint64_t ra);

#endif
