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

/* x86-64 DWARF register numbers (System V psABI, figure 3.36). */
enum { NSK_REG_RBP = 6, NSK_REG_RSP = 7, NSK_REG_RA = 16 };

enum nsk_rule_kind {
	NSK_RULE_EMPTY,	    /* a free slot of the cache */
	NSK_RULE_OTHER,	    /* CFI of a shape the fast walks do not handle */
	NSK_RULE_OK,	    /* one of the shapes below */
	NSK_RULE_OUTERMOST, /* the return address is undefined: _start */
	NSK_RULE_NONE,	    /* no module with CFI holds this pc */
	NSK_RULE_NOFDE,	    /* a module holds it, but no CFI covers it */
	/* The return address is in a register other than rbp and rsp
	 * (vfork keeps it in rdi across the syscall): at the leaf, where a
	 * sample's registers are ip, sp and bp only, no walk can go on, and
	 * libdw would stop there too; further out, libdw may know it. */
	NSK_RULE_RA_IN_REG,
};
/* Where a frame leaves a register (rbp) to its caller: untouched, saved
 * on the stack, or lost. */
enum { NSK_LOC_SAME, NSK_LOC_SAVED, NSK_LOC_UNDEFINED };

/* The CFI rule at one pc, in the shape the fast walks use. */
struct nsk_unwind_rule {
	uint64_t pc;	 /* the pc looked up (a return address minus 1) */
	uint8_t kind;	 /* enum nsk_rule_kind */
	uint8_t cfa_reg; /* NSK_REG_RSP or NSK_REG_RBP */
	uint8_t bp;	 /* NSK_LOC_*: how rbp goes to the caller */
	int32_t cfa_off;
	int32_t ra_off; /* the return address is at CFA + ra_off */
	int32_t bp_off; /* NSK_LOC_SAVED: rbp is at CFA + bp_off */
};

/* The rule at pc (as looked up: a return address minus 1), learned from
 * dwfl's modules on first use; never NULL.  Valid until the next call (the
 * table may grow or start over). */
const struct nsk_unwind_rule *nsk_unwind_rules__at(struct nsk_unwind_rules *r,
						   Dwfl *dwfl, uint64_t pc);

/* Whether a frame with rule ru has a frame record where rbp points
 * (CFA = rbp + 16, the return address at CFA - 8, the caller's rbp at CFA
 * - 16): there, and only there, a frame-pointer walk steps right. */
static inline int nsk_unwind_rule__fp(const struct nsk_unwind_rule *ru)
{
	return ru->kind == NSK_RULE_OK && ru->cfa_reg == NSK_REG_RBP &&
	       ru->cfa_off == 16 && ru->ra_off == -8 &&
	       ru->bp == NSK_LOC_SAVED && ru->bp_off == -16;
}

int nsk_unwind_rules__new(struct nsk_unwind_rules **out);

/* Where a table asks first for a rule it lacks, before libdw: fills *out
 * (its pc is set again after) and gives 1, or 0 to leave it to libdw.
 * An address space's table asks its modules' own tables, which learn a
 * pc once for every process mapping the file, and only for a module
 * without .eh_frame its own Dwfl, made then (record/stacks/unwind_dwarf.c);
 * the dwfl handed to the calls below may then be NULL. */
typedef int (*nsk_unwind_rule_source_fn)(void *ctx, uint64_t pc,
					 struct nsk_unwind_rule *out);
/* What a table does without a source: asks libdw (dwfl's modules) for the
 * rule at ru->pc.  NSK_RULE_NONE when dwfl is NULL. */
void nsk_unwind_rules__learn(Dwfl *dwfl, struct nsk_unwind_rule *ru);
void nsk_unwind_rules__set_source(struct nsk_unwind_rules *r,
				  nsk_unwind_rule_source_fn fn, void *ctx);
void nsk_unwind_rules__free(struct nsk_unwind_rules *r); /* NULL is fine */

/* Unwinds as nsk_unwinder__unwind does (same arguments, same results:
 * ips leaf first, reach[i] the bytes of the copy read to find ips[i], 0
 * when the outermost frame was reached, 1 when the copy or max ended the
 * walk, 3 at a frame that cannot be), with the rules of dwfl's modules;
 * or 2 when the copy ended in a
 * frame whose frame record is where rbp pointed when the stack was taken,
 * so the frame-pointer walk from those registers continues ips from its
 * second entry on.  -ENOENT when a frame has a shape it does not handle:
 * ask libdw. */
int nsk_unwind_rules__unwind(struct nsk_unwind_rules *r, Dwfl *dwfl,
			     const struct nsk_user_regs *regs,
			     const uint8_t *stack, size_t len, uint64_t *ips,
			     uint32_t *reach, uint32_t max, uint32_t *n);

#endif
