/* Cached CFI rules and the walk that uses them (see unwind_rules.h). */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/stacks/unwind.h"
#include "record/stacks/unwind_rules.h"

/* Rules kept per address space: the table starts small (a process that
 * lives a millisecond needs a few) and doubles at 3/4 full up to the
 * most; past 3/4 of that it starts over. */
#define NSK_RULES_FIRST (1u << 8)
#define NSK_RULES_SLOTS (1u << 16)

struct nsk_unwind_rules {
	struct nsk_unwind_rule *slots;
	uint32_t n; /* slots, a power of two */
	uint32_t used;
	nsk_unwind_rule_source_fn source; /* asked before libdw; NULL none */
	void *source_ctx;
};

void nsk_unwind_rules__set_source(struct nsk_unwind_rules *r,
				  nsk_unwind_rule_source_fn fn, void *ctx)
{
	r->source = fn;
	r->source_ctx = ctx;
}

int nsk_unwind_rules__new(struct nsk_unwind_rules **out)
{
	struct nsk_unwind_rules *r = calloc(1, sizeof(*r));

	if (r) {
		r->n = NSK_RULES_FIRST;
		r->slots = calloc(r->n, sizeof(*r->slots));
	}
	if (!r || !r->slots) {
		free(r);
		*out = NULL;
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

static uint32_t slot_of(uint64_t pc, uint32_t n)
{
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ULL) >> 32) & (n - 1);
}

/* Twice the slots, every rule kept; -ENOMEM leaves the table as it was. */
static int grow(struct nsk_unwind_rules *r)
{
	uint32_t n = r->n * 2;
	struct nsk_unwind_rule *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->n; i++) {
		uint32_t j;

		if (r->slots[i].kind == NSK_RULE_EMPTY)
			continue;
		for (j = slot_of(r->slots[i].pc, n); s[j].kind != NSK_RULE_EMPTY; j = (j + 1) & (n - 1))
			;
		s[j] = r->slots[i];
	}
	free(r->slots);
	r->slots = s;
	r->n = n;
	return 0;
}

void nsk_unwind_rules__free(struct nsk_unwind_rules *r)
{
	if (!r)
		return;
	free(r->slots);
	free(r);
}

/* Where a register of the caller is: NSK_LOC_SAME, NSK_LOC_SAVED (at CFA + *off),
 * NSK_LOC_UNDEFINED, or -1 for a rule of another shape. */
static int reg_rule(Dwarf_Frame *f, int regno, int32_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(f, regno, mem, &ops, &nops))
		return -1;
	if (nops == 0)
		return ops == mem ? NSK_LOC_UNDEFINED : ops == NULL ? NSK_LOC_SAME : -1;
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (nops == 1) {
		*off = 0;
		return NSK_LOC_SAVED;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int32_t)(int64_t)ops[1].number;
		return NSK_LOC_SAVED;
	}
	if (nops == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
		*off = (int32_t)(int64_t)ops[1].number;
		return NSK_LOC_SAVED;
	}
	return -1;
}

/* Whether the return address is a register's value, of a register other
 * than rbp and rsp (DW_CFA_register). */
static int ra_in_reg(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	unsigned int reg;

	if (dwarf_frame_register(f, NSK_REG_RA, mem, &ops, &nops) || nops != 1)
		return 0;
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
		reg = ops[0].atom - DW_OP_reg0;
	else if (ops[0].atom == DW_OP_regx)
		reg = (unsigned int)ops[0].number;
	else
		return 0;
	return reg != NSK_REG_RBP && reg != NSK_REG_RSP;
}

/* Asks libdw for the rule at pc; NSK_RULE_OTHER when it has another shape. */
void nsk_unwind_rules__learn(Dwfl *dwfl, struct nsk_unwind_rule *ru)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias, start, end;
	Dwarf_Frame *f = NULL;
	Dwarf_CFI *cfi = NULL;
	Dwarf_Op *ops;
	size_t nops;
	bool signal;
	int ra, bp;

	ru->kind = NSK_RULE_NONE;
	if (!dwfl)
		return;
	mod = dwfl_addrmodule(dwfl, ru->pc);
	if (mod)
		cfi = dwfl_module_eh_cfi(mod, &bias);
	if (mod && !cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (!cfi)
		return;
	ru->kind = NSK_RULE_NOFDE;
	if (dwarf_cfi_addrframe(cfi, ru->pc - bias, &f))
		return;
	ru->kind = NSK_RULE_OTHER;
	if (dwarf_frame_info(f, &start, &end, &signal) < 0 || signal)
		goto out;
	ra = reg_rule(f, NSK_REG_RA, &ru->ra_off);
	if (ra == NSK_LOC_UNDEFINED) {
		ru->kind = NSK_RULE_OUTERMOST; /* _start, thread entry points */
		goto out;
	}
	if (ra < 0 && ra_in_reg(f)) {
		ru->kind = NSK_RULE_RA_IN_REG;
		goto out;
	}
	if (ra != NSK_LOC_SAVED || dwarf_frame_cfa(f, &ops, &nops) || nops != 1)
		goto out;
	if (ops[0].atom == DW_OP_bregx) {
		ru->cfa_reg = (uint8_t)ops[0].number;
		ru->cfa_off = (int32_t)(int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		ru->cfa_reg = (uint8_t)(ops[0].atom - DW_OP_breg0);
		ru->cfa_off = (int32_t)(int64_t)ops[0].number;
	} else {
		goto out;
	}
	if (ru->cfa_reg != NSK_REG_RSP && ru->cfa_reg != NSK_REG_RBP)
		goto out;
	bp = reg_rule(f, NSK_REG_RBP, &ru->bp_off);
	if (bp < 0)
		goto out;
	ru->bp = (uint8_t)bp;
	ru->kind = NSK_RULE_OK;
out:
	free(f);
}

const struct nsk_unwind_rule *nsk_unwind_rules__at(struct nsk_unwind_rules *r,
						   Dwfl *dwfl, uint64_t pc)
{
	uint32_t i = slot_of(pc, r->n);

	while (r->slots[i].kind != NSK_RULE_EMPTY) {
		if (r->slots[i].pc == pc)
			return &r->slots[i];
		i = (i + 1) & (r->n - 1);
	}
	if (r->used >= r->n / 4 * 3) {
		if (r->n >= NSK_RULES_SLOTS || grow(r)) {
			memset(r->slots, 0, r->n * sizeof(*r->slots));
			r->used = 0;
		}
		return nsk_unwind_rules__at(r, dwfl, pc);
	}
	r->slots[i].pc = pc;
	if (!r->source || !r->source(r->source_ctx, pc, &r->slots[i]))
		nsk_unwind_rules__learn(dwfl, &r->slots[i]);
	r->slots[i].pc = pc;
	r->used++;
	return &r->slots[i];
}

/* A word of the copy, as unwind_dwarf.c's memory_read serves it; tracks the
 * bytes read. */
static int read_word(const uint8_t *stack, size_t len, uint64_t sp,
		     uint64_t addr, uint64_t *out, uint32_t *high)
{
	if (addr < sp || addr - sp > len || len - (addr - sp) < 8)
		return 0;
	memcpy(out, stack + (addr - sp), sizeof(*out));
	if (addr - sp + 8 > *high)
		*high = (uint32_t)(addr - sp + 8);
	return 1;
}

int nsk_unwind_rules__unwind(struct nsk_unwind_rules *r, Dwfl *dwfl,
			     const struct nsk_user_regs *regs,
			     const uint8_t *stack, size_t len, uint64_t *ips,
			     uint32_t *reach, uint32_t max, uint32_t *n)
{
	uint64_t sp = regs->sp, bp = regs->bp, pc = regs->ip, cfa, ra;
	uint32_t k = 0, high = 0;
	int bp_known = 1, bp_from_regs = 1;

	*n = 0;
	if (!max || !pc)
		return -EINVAL;
	ips[k] = pc;
	reach[k++] = 0;
	for (;;) {
		const struct nsk_unwind_rule *ru;

		if (k == max)
			goto cut; /* as libdw's walk does, even before the last */
		/* a return address points after its call: look up the call */
		ru = nsk_unwind_rules__at(r, dwfl, k == 1 ? pc : pc - 1);
		if (ru->kind == NSK_RULE_OUTERMOST)
			break;
		if (ru->kind == NSK_RULE_RA_IN_REG && k == 1)
			goto cut; /* no walk goes on (unwind_rules.h) */
		if (ru->kind != NSK_RULE_OK || (ru->cfa_reg == NSK_REG_RBP && !bp_known))
			return -ENOENT;
		cfa = (ru->cfa_reg == NSK_REG_RSP ? sp : bp) + (int64_t)ru->cfa_off;
		if (cfa <= sp)
			goto stopped; /* a caller's frame is above its callee's */
		if (!read_word(stack, len, regs->sp, cfa + (int64_t)ru->ra_off, &ra, &high)) {
			/* The copy ended.  If this frame's record is the one
			 * rbp pointed at when the stack was taken, the kernel's
			 * frame-pointer walk went on from exactly here. */
			if (ru->cfa_reg == NSK_REG_RBP && bp_from_regs &&
			    ru->cfa_off == 16 && ru->ra_off == -8) {
				*n = k;
				return 2;
			}
			goto cut;
		}
		if (ru->bp == NSK_LOC_SAVED) {
			if (!read_word(stack, len, regs->sp, cfa + (int64_t)ru->bp_off, &bp, &high))
				goto cut;
			bp_from_regs = 0;
		}
		if (ru->bp == NSK_LOC_UNDEFINED)
			bp_known = bp_from_regs = 0;
		if (!ra)
			break; /* libdw stops at a zero return address too */
		if (!nsk_unwind__user_addr(ra))
			goto stopped;
		sp = cfa;
		pc = ra;
		ips[k] = ra;
		reach[k++] = high;
	}
	*n = k;
	return 0;
cut:
	*n = k;
	return 1;
stopped:
	*n = k;
	return NSK_UNWIND_STOPPED;
}
