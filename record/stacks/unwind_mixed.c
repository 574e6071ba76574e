/* CFI where frame pointers do not hold, the kernel's walk where they do
 * (see unwind_mixed.h).
 *
 * The walk keeps, for rbp, which rbp of the kernel's chain it is (c: the
 * chain's c-th, whose frame record gave the kernel's entry c + 1; -1 when
 * not known to be any).  A frame whose rule has a frame record at rbp and
 * whose rbp is the chain's c-th has the kernel's entry c + 1 for caller.
 * Any other frame is unwound with its rule from the copy.
 *
 * Values are read from the copy only when a frame needs them: past a frame
 * taken from the kernel's walk, sp is that frame's rbp + 16 and rbp the
 * word at its rbp, and neither is read until a frame unwound with CFI asks.
 * So a stack of code with frame pointers reads no copy at all (a signal
 * that copies stacks again learns it needs none), and a frameless leaf
 * reads one word.
 */
#include <errno.h>
#include <string.h>

#include "record/procs/maps.h"
#include "record/stacks/unwind_mixed.h"
#include "record/stacks/unwind_rules.h"

struct copy {
	const uint8_t *bytes;
	size_t len;
	uint64_t sp;   /* where bytes[0] was */
	uint32_t high; /* bytes read so far, from sp */
};

/* A register's value: v read from the copy derefs times, plus off;
 * nothing when !known. */
struct lazy {
	uint64_t v;
	uint32_t derefs;
	int32_t off;
	int known;
};

static int read_word(struct copy *c, uint64_t addr, uint64_t *out)
{
	if (addr < c->sp || addr - c->sp > c->len || c->len - (addr - c->sp) < 8)
		return 0;
	memcpy(out, c->bytes + (addr - c->sp), sizeof(*out));
	if (addr - c->sp + 8 > c->high)
		c->high = (uint32_t)(addr - c->sp + 8);
	return 1;
}

/* The value of x, reading what it still needs; 0 when that is not in the
 * copy (x keeps what was read). */
static int resolve(struct copy *c, struct lazy *x, uint64_t *out)
{
	if (!x->known)
		return 0;
	for (; x->derefs; x->derefs--)
		if (!read_word(c, x->v, &x->v))
			return 0;
	*out = x->v + (uint64_t)(int64_t)x->off;
	return 1;
}

static struct lazy known(uint64_t v)
{
	return (struct lazy){ .v = v, .known = 1 };
}

/* The kernel's walk ended at a frame (pc) that keeps no record, reached
 * through the record of its callee (at prev).  That is no end of the
 * stack: rbp there is whatever the code had in it (0 too), and CFI goes
 * on.  But with fp->end, where the walk went from code with frame pointers
 * into another module (a program's main into libc's start code, a
 * thread's function into start_thread), it is taken for the end: what the
 * frame-pointer walk alone would have, for no copy. */
static const struct nsk_module *file_at(struct nsk_aspace *as, uint64_t addr)
{
	const struct nsk_map *m = nsk_aspace__find(as, addr);

	return m && m->file ? m->mod : NULL;
}

static int fp_ended(const struct nsk_fp_walk *fp, struct nsk_aspace *as,
		    uint64_t prev, uint64_t pc)
{
	return fp->end && file_at(as, prev) != file_at(as, pc);
}

int nsk_unwind__mapped_without_cfi(const struct nsk_unwind_rule *ru,
				   struct nsk_aspace *as, uint64_t pc)
{
	return ru->kind == NSK_RULE_NOFDE ||
	       (ru->kind == NSK_RULE_NONE && nsk_aspace__find(as, pc));
}

int nsk_unwind__mapped_ra(struct nsk_aspace *as, uint64_t ra)
{
	return nsk_aspace__find(as, ra - 1) || nsk_aspace__find(as, ra);
}

int nsk_unwind_mixed__walk(struct nsk_unwind_rules *r, Dwfl *dwfl,
			   struct nsk_aspace *as,
			   const struct nsk_user_regs *regs,
			   const uint8_t *stack, size_t len,
			   const struct nsk_fp_walk *fp, uint64_t *ips,
			   uint32_t *reach, uint32_t max, uint32_t *n,
			   uint32_t *from_fp)
{
	struct copy cp = { stack, len, regs->sp, 0 };
	struct lazy sp = known(regs->sp), bp = known(regs->bp);
	const struct nsk_unwind_rule *ru;
	uint64_t pc = regs->ip, prev = 0, ra, base, cfa, cur;
	int64_t c = fp->n ? 0 : -1;
	int chained = 0; /* pc is the kernel's entry c */
	uint32_t k = 0;
	int rc = NSK_UNWIND_DONE;

	*n = 0;
	*from_fp = 0;
	if (!max || !nsk_unwind__user_addr(pc))
		return -EINVAL;
	ru = nsk_unwind_rules__at(r, dwfl, pc);
	if (ru->kind == NSK_RULE_NONE && !nsk_aspace__find(as, pc)) {
		ips[0] = pc + 1; /* as a return address: the maps missed it */
		return NSK_UNWIND_UNMAPPED;
	}
	ips[k] = pc;
	reach[k++] = 0;
	for (;;) {
		int record = nsk_unwind_rule__fp(ru) ||
			     nsk_unwind__mapped_without_cfi(ru, as, k == 1 ? pc : pc - 1);

		if (ru->kind == NSK_RULE_OUTERMOST)
			break;
		if (c >= 0 && record && (uint64_t)c + 1 < fp->n) {
			/* the kernel read this frame's record */
			ra = fp->ips[c + 1];
			sp = bp;
			sp.off += 16;
			bp.derefs++; /* bp.off is 0: rbp is never an offset */
			c++;
			chained = 1;
		} else if (chained && (uint64_t)c + 1 == fp->n && !fp->cut &&
			   !nsk_unwind_rule__fp(ru) &&
			   fp_ended(fp, as, prev, pc - 1)) {
			break;
		} else {
			if (ru->kind == NSK_RULE_OTHER ||
			    (ru->kind == NSK_RULE_RA_IN_REG && k > 1))
				return -ENOENT;
			if (ru->kind == NSK_RULE_NOFDE)
				break; /* where libdw ends too (ld.so's _start) */
			if (ru->kind != NSK_RULE_OK) {
				rc = NSK_UNWIND_COPY_END; /* JIT code: no CFI */
				break;
			}
			if (!resolve(&cp, ru->cfa_reg == NSK_REG_RSP ? &sp : &bp, &base)) {
				rc = NSK_UNWIND_COPY_END;
				break;
			}
			cfa = base + (uint64_t)(int64_t)ru->cfa_off;
			/* a caller's frame is above its callee's, or this is
			 * no stack */
			if (sp.known && !sp.derefs &&
			    cfa <= sp.v + (uint64_t)(int64_t)sp.off) {
				rc = NSK_UNWIND_STOPPED;
				break;
			}
			if (!read_word(&cp, cfa + (uint64_t)(int64_t)ru->ra_off, &ra)) {
				rc = NSK_UNWIND_COPY_END;
				break;
			}
			if (ru->bp == NSK_LOC_SAVED) {
				uint64_t saved;

				if (!read_word(&cp, cfa + (uint64_t)(int64_t)ru->bp_off, &saved)) {
					rc = NSK_UNWIND_COPY_END;
					break;
				}
				/* saved and restored unchanged: still the
				 * chain's (libc saves rbp it never uses) */
				if (c >= 0 && !(resolve(&cp, &bp, &cur) && cur == saved))
					c = -1;
				bp = known(saved);
			} else if (ru->bp == NSK_LOC_UNDEFINED) {
				bp.known = 0;
				c = -1;
			}
			sp = known(cfa);
			chained = 0;
			if (!ra)
				break; /* the outermost frame, as libdw ends */
		}
		if (!nsk_unwind__user_addr(ra) || k == max) {
			rc = NSK_UNWIND_STOPPED;
			break;
		}
		/* a return address points after its call: look up the call */
		ru = nsk_unwind_rules__at(r, dwfl, ra - 1);
		if (ru->kind == NSK_RULE_NONE && !nsk_unwind__mapped_ra(as, ra)) {
			ips[k] = ra; /* not a frame: what the maps missed */
			rc = NSK_UNWIND_UNMAPPED;
			break;
		}
		*from_fp += chained;
		prev = k == 1 ? pc : pc - 1;
		pc = ra;
		ips[k] = ra;
		reach[k++] = cp.high;
	}
	*n = k;
	return rc;
}
