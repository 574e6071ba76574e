/* Choosing how a user stack is walked: frame pointers, CFI, or both.
 *
 * Signals hand the session both the kernel's frame-pointer walk and, unless
 * --call-graph fp, a copy of the top of the user stack.  Under auto each
 * frame is asked of its CFI: where the CFI puts a frame record at rbp the
 * kernel's walk gives the caller, elsewhere (leaves, prologues, epilogues,
 * PLT stubs, code without frame pointers) the copy is unwound with CFI
 * (record/stacks/unwind_mixed.h).  Under dwarf the copy is unwound with CFI
 * alone (record/stacks/unwind.h).  A walk that ran out of copy is continued
 * by the frame-pointer walk where the CFI says it holds (splice), else
 * marked truncated; when nothing can be unwound the frame-pointer walk is
 * kept and the failure counted.  Every walk stops, truncated, before an
 * address no code can have (zero, non-canonical, the kernel's, in no
 * mapping where the maps are known).  A signal that copies the same stacks
 * again (alloc) also learns how much copy each needed
 * (nsk_stacks__intern_copied).
 */
#include <errno.h>
#include <string.h>

#include "record/procs/maps.h"
#include "record/stacks/stacks_int.h"
#include "record/stacks/unwind.h"
#include "record/stacks/unwind_mixed.h"
#include <nusku/events/ustack.h>

/* One stack's process, and the address space its walks are judged in
 * (NULL: its maps are not known). */
struct ctx {
	struct nsk_stacks *st;
	uint32_t pid;
	uint64_t time;
	struct nsk_aspace *as;
};

/* The address space of c's process read again, when c->as is its newest
 * program and missed addr, and the new maps hold it: then c->as is the new
 * one (1).  As record/stacks/stacks.c does for a frame it cannot place. */
static int reread_for(struct ctx *c, uint64_t addr)
{
	struct nsk_aspace *again;

	if (!c->as || c->st->as.newest(c->st->as.ctx, c->pid) != c->as)
		return 0;
	again = c->st->as.reread(c->st->as.ctx, c->pid, c->time);
	if (!again || !nsk_aspace__find(again, addr))
		return 0;
	c->as = again;
	return 1;
}

/* Whether a frame-pointer walk steps right out of frame i of ips (leaf
 * first: a return address but for the leaf). */
static int fp_holds(struct ctx *c, const uint64_t *ips, uint32_t i)
{
	return nsk_unwinder__fp_holds(c->st->unwinder, c->as, ips[i] - (i > 0));
}

/* Whether ips[i], a return address, can be one: user code, mapped where
 * the maps are known (read again once they miss it). */
static int possible(struct ctx *c, const uint64_t *ips, uint32_t i)
{
	return nsk_unwind__user_addr(ips[i]) &&
	       (!c->as || nsk_unwind__mapped_ra(c->as, ips[i]) ||
		reread_for(c, ips[i] - 1));
}

/* How many of the frame-pointer frames fp[from..] can be trusted, given
 * that fp[from - 1] is right: each is possible, and was read from the
 * record of a frame whose CFI says it has one there.  *cut: the walk had
 * more. */
static uint32_t fp_trusted(struct ctx *c, const struct nsk_fp_walk *fp,
			   uint32_t from, int *cut)
{
	uint32_t j = from;

	while (j < fp->n && possible(c, fp->ips, j) && fp_holds(c, fp->ips, j - 1))
		j++;
	*cut = j < fp->n || fp->cut;
	return j - from;
}

/* The copy ended in the frame whose record rbp pointed at: the
 * frame-pointer walk goes on from its second entry, as far as it can be
 * trusted. */
static uint32_t append_fp(struct ctx *c, uint64_t *dw, uint32_t n,
			  uint32_t max, const struct nsk_fp_walk *fp,
			  uint32_t *flags)
{
	int cut = 0;
	uint32_t m = fp->n > 1 && possible(c, fp->ips, 1) ?
			     1 + fp_trusted(c, fp, 2, &cut) : 0;

	if (!m || cut || m > max - n)
		*flags |= NSK_STACK_TRUNCATED;
	m = m > max - n ? max - n : m;
	memcpy(dw + n, fp->ips + 1, m * sizeof(*dw));
	return n + m;
}

/* DWARF frames (leaf first) continued by the frame-pointer walk.  They are
 * joined where the walk found the same return address dw[i] = fp[j], read
 * from the frame record of dw[i-1] (whose CFI must say it has one), and
 * goes on from there further than the DWARF frames did, as far as
 * fp_trusted says; or where both walks ended on the same frame, one that
 * keeps no record.  The deepest such point wins.  Returns the frames now in
 * dw and sets *joined to the DWARF index of the join (or -1: the DWARF
 * frames stand alone); marks *flags truncated when there is no join or the
 * walk is not trusted to its end. */
static uint32_t splice(struct ctx *c, uint64_t *dw, uint32_t ndw,
		       uint32_t max, const struct nsk_fp_walk *fp, int *joined,
		       uint32_t *flags)
{
	*joined = -1;
	for (uint32_t i = ndw; i-- > 1;)
		for (uint32_t j = 1; j < fp->n; j++) {
			uint32_t m;
			int cut;

			if (dw[i] != fp->ips[j] || !fp_holds(c, dw, i - 1))
				continue;
			m = fp_trusted(c, fp, j + 1, &cut);
			if (!m && i + 1 == ndw && j + 1 == fp->n && !fp->cut &&
			    !fp_holds(c, fp->ips, j)) {
				*joined = (int)i; /* the same end */
				return ndw;
			}
			if (i + 1 + m <= ndw)
				continue; /* it knows no more than DWARF */
			if (cut || m > max - (i + 1))
				*flags |= NSK_STACK_TRUNCATED;
			m = m > max - (i + 1) ? max - (i + 1) : m;
			memcpy(dw + i + 1, fp->ips + j + 1, m * sizeof(*dw));
			*joined = (int)i;
			return i + 1 + m;
		}
	*flags |= NSK_STACK_TRUNCATED;
	return ndw;
}

/* How many of ips[from..n) (return addresses) stand before the first that
 * no walk may give, marking *flags truncated there: the stack's length. */
static uint32_t cut_impossible(struct ctx *c, const uint64_t *ips,
			       uint32_t from, uint32_t n, uint32_t *flags)
{
	for (uint32_t i = from; i < n; i++)
		if (!possible(c, ips, i)) {
			*flags |= NSK_STACK_TRUNCATED;
			return i;
		}
	return n;
}

/* Copy worth keeping for a stack whose last needed frame was found after
 * reading reach bytes: rounded up, with room for a sibling path through
 * slightly larger frames. */
static uint32_t copy_for(uint32_t reach)
{
	uint32_t n = (reach + NSK_USTACK_SLACK + 255) & ~255u;

	return n > NSK_USTACK_MAX ? NSK_USTACK_MAX : n;
}

/* Unwinds copy in c->as: under auto with the frame-pointer walk fp where
 * the CFI says it holds, else (or for a frame the cached rules cannot
 * walk) with the copy alone.  A walk that stops at a return address the
 * maps do not hold is tried once more with the maps read again.  Returns
 * as nsk_unwinder__unwind; *from_fp: frames taken from fp; *checked: how
 * many frames are known possible. */
static int unwind(struct ctx *c, const struct nsk_ev_ustack *copy,
		  const void *bytes, const struct nsk_fp_walk *fp,
		  uint64_t *ips, uint32_t *reach, uint32_t *n,
		  uint32_t *from_fp, uint32_t *checked)
{
	const struct nsk_user_regs regs = { copy->ip, copy->sp, copy->bp };
	struct nsk_unwinder *u = c->st->unwinder;
	const uint32_t max = NSK_MAX_STACK_DEPTH;
	int rc;

	for (int tries = 0;; tries++) {
		rc = -ENOENT;
		*from_fp = 0;
		if (c->st->opts.call_graph == NSK_CALL_GRAPH_AUTO)
			rc = nsk_unwinder__unwind_fp(u, c->as, &regs, bytes,
						     copy->len, fp, ips, reach,
						     max, n, from_fp);
		*checked = *n;
		if (rc == -ENOENT && copy->len) {
			rc = nsk_unwinder__unwind(u, c->as, &regs, bytes,
						  copy->len, ips, reach, max, n);
			*checked = 1;
		}
		if (rc != NSK_UNWIND_UNMAPPED || tries || *n >= max ||
		    !reread_for(c, ips[*n] - 1))
			return rc;
	}
}

uint64_t nsk_stacks__intern_copied(struct nsk_stacks *st, uint32_t pid,
				   uint64_t time, const uint64_t *kips,
				   uint32_t nk, const uint64_t *uips,
				   uint32_t nu, const struct nsk_ev_ustack *copy,
				   const void *copy_bytes, uint32_t flags,
				   uint32_t *copy_needed)
{
	uint64_t ips[NSK_MAX_STACK_DEPTH];
	uint32_t reach[NSK_MAX_STACK_DEPTH];
	/* a signal that learns its copy sizes pays for every byte */
	const struct nsk_fp_walk fp = { uips, nu, nu >= NSK_MAX_STACK_DEPTH,
					copy_needed != NULL };
	uint32_t n = 0, from_fp = 0, checked = 0, need = NSK_USTACK_UNKNOWN;
	uint64_t leaf = nu ? uips[0] : copy ? copy->ip : 0;
	struct ctx c = { st, pid, time, NULL };
	int rc, joined;

	st->as.sync(st->as.ctx); /* the fork or exec that made these addresses */
	if (leaf)
		c.as = st->as.at(st->as.ctx, pid, time);
	/* maps that miss the leaf are no judge of the rest */
	if (c.as && !nsk_aspace__find(c.as, leaf) && !reread_for(&c, leaf))
		c.as = NULL;
	if (!copy || st->opts.call_graph == NSK_CALL_GRAPH_FP || !c.as ||
	    (!copy->len && st->opts.call_graph != NSK_CALL_GRAPH_AUTO))
		goto fp;
	if (!st->unwinder && nsk_unwinder__new(&st->unwinder))
		goto fp;
	rc = unwind(&c, copy, copy_bytes, &fp, ips, reach, &n, &from_fp,
		    &checked);
	if (rc < 0 || !n) {
		nsk_stacks__lost(st, "unwind.dwarf_failed", 1);
		goto fp;
	}
	n = cut_impossible(&c, ips, checked ? checked : 1, n, &flags);
	flags &= ~(uint32_t)(NSK_STACK_USER_ERROR | NSK_STACK_UNWIND_FP |
			     NSK_STACK_UNWIND_DWARF);
	if (from_fp)
		flags |= NSK_STACK_UNWIND_FP;
	if (!from_fp || reach[n - 1])
		flags |= NSK_STACK_UNWIND_DWARF;
	/* a walk that read no copy is the frame-pointer walk's alone, the
	 * same for every copy of it: no copy needed */
	need = st->opts.call_graph == NSK_CALL_GRAPH_AUTO && !reach[n - 1] ?
		       0 : copy_for(reach[n - 1]);
	if (rc == NSK_UNWIND_FP_CONT && nu >= 2) {
		n = append_fp(&c, ips, n, NSK_MAX_STACK_DEPTH, &fp, &flags);
		flags |= NSK_STACK_UNWIND_FP;
	} else if (rc == NSK_UNWIND_COPY_END || rc == NSK_UNWIND_FP_CONT) {
		/* the copy ended: where the frame-pointer walk went further
		 * through the same frames, and can be trusted, it knows the
		 * rest */
		n = splice(&c, ips, n, NSK_MAX_STACK_DEPTH, &fp, &joined, &flags);
		if (joined < 0) {
			need = NSK_USTACK_MAX; /* all a copy can hold */
		} else {
			need = copy_for(reach[joined]);
			flags |= NSK_STACK_UNWIND_FP; /* both methods made it */
		}
	} else if (rc != NSK_UNWIND_DONE) {
		flags |= NSK_STACK_TRUNCATED;
	}
	if (copy_needed)
		*copy_needed = need;
	return nsk_stacks__intern_synced(st, pid, time, kips, nk, ips, n, flags);
fp:
	if (copy_needed)
		*copy_needed = need;
	return nsk_stacks__intern_synced(st, pid, time, kips, nk, uips,
					 cut_impossible(&c, uips, 1, nu, &flags),
					 flags);
}
