/* Choosing how a user stack is walked: frame pointers or DWARF.
 *
 * Signals hand the session both the kernel's frame-pointer walk and, unless
 * --call-graph fp, a copy of the top of the user stack.  Under auto the
 * frame-pointer walk is kept when every step of it is trustworthy: it went
 * past the leaf, and each frame it walked through (all but the outermost)
 * was compiled with frame pointers (its unit's DW_AT_producer).
 * Otherwise, and always under dwarf, the copy is unwound with DWARF CFI
 * (record/stacks/unwind.h); when that fails the frame-pointer walk is kept and the
 * failure counted.  A DWARF walk that ran out of copy is continued by the
 * frame-pointer walk where that can be trusted (splice), else marked
 * truncated.  A signal that copies the same stacks again (alloc) also
 * learns how much copy each needed (nsk_stacks__intern_copied).
 */
#include <errno.h>

#include "record/procs/maps.h"
#include "record/stacks/intern.h"
#include "record/stacks/stacks_int.h"
#include "record/stacks/symbols.h"
#include "record/stacks/unwind.h"
#include <nusku/events/ustack.h>

/* Whether the code at addr keeps frame pointers: 1 yes, 0 no, -1 not
 * known (no debug info), cached per (module, address): the same few return
 * addresses come back in every stack. */
static int keeps_fp(struct nsk_stacks *st, struct nsk_map *m, uint64_t addr)
{
	uint64_t vaddr = nsk_module__vaddr(m->mod, addr - m->start + m->pgoff);
	uint64_t key[2] = { nsk_module__serial(m->mod), vaddr }, v;

	if (!st->fp_cache && !(st->fp_cache = nsk_intern__new()))
		return -1;
	v = nsk_intern__find(st->fp_cache, key, sizeof(key));
	if (!v) {
		v = 2 + nsk_module__keeps_fp_at(m->mod, vaddr);
		nsk_intern__add(st->fp_cache, key, sizeof(key), v);
	}
	return (int)v - 2;
}

/* Whether frame-pointer frames from..n-2 were walked through code that
 * keeps frame pointers (each frame's successor was read from its record):
 * known to keep them (strict), or at least not known to keep none. */
static int fp_frames_hold(struct nsk_stacks *st, struct nsk_aspace *as,
			  const uint64_t *ips, uint32_t from, uint32_t n,
			  int strict)
{
	for (uint32_t i = from; i + 1 < n; i++) {
		struct nsk_map *m = nsk_aspace__find(as, ips[i] - (i > 0));
		int k;

		if (!m || !m->file)
			return 0;
		k = keeps_fp(st, m, ips[i] - (i > 0));
		if (strict ? k != 1 : k == 0)
			return 0;
	}
	return 1;
}

/* Under auto, the walk that stands on its own: it went past the leaf (one
 * frame is where it stops when the leaf keeps no frame pointer and rbp
 * holds anything) and every frame it went through is known to keep them. */
static int fp_walk_holds(struct nsk_stacks *st, struct nsk_aspace *as,
			 const uint64_t *ips, uint32_t n)
{
	if (n < 2 || n >= NSK_MAX_STACK_DEPTH)
		return 0;
	return fp_frames_hold(st, as, ips, 0, n, 1);
}

/* DWARF frames (leaf first) continued by the frame-pointer walk.  They are
 * joined where the walk found the same return address dw[i] = fp[j] and is
 * not known to go wrong from there on: none of the function of dw[i-1],
 * whose frame record held that address, and the functions the walk went
 * through after it is known (from its debug info) to keep no frame
 * pointer.  The deepest such point wins.  Returns the frames now in dw
 * and sets *joined to the DWARF index of the join (or -1: the DWARF frames
 * stand alone); marks *flags truncated when there is no join or the
 * frames did not all fit in max. */
static uint32_t splice(struct nsk_stacks *st, struct nsk_aspace *as,
		       uint64_t *dw, uint32_t ndw, uint32_t max,
		       const uint64_t *fp, uint32_t nfp, int *joined,
		       uint32_t *flags)
{
	*joined = -1;
	for (uint32_t i = ndw; i-- > 1;)
		for (uint32_t j = 1; j < nfp; j++) {
			uint32_t n = i + 1;

			if (dw[i] != fp[j] ||
			    !fp_frames_hold(st, as, dw, i - 1, i, 0) ||
			    !fp_frames_hold(st, as, fp, j, nfp, 0))
				continue;
			for (j++; j < nfp && n < max; j++)
				dw[n++] = fp[j];
			if (j < nfp)
				*flags |= NSK_STACK_TRUNCATED;
			*joined = (int)i;
			return n;
		}
	*flags |= NSK_STACK_TRUNCATED;
	return ndw;
}

/* Copy worth keeping for a stack whose last needed frame was found after
 * reading reach bytes: rounded up, with room for a sibling path through
 * slightly larger frames. */
static uint32_t copy_for(uint32_t reach)
{
	uint32_t n = (reach + NSK_USTACK_SLACK + 255) & ~255u;

	return n > NSK_USTACK_MAX ? NSK_USTACK_MAX : n;
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
	struct nsk_aspace *as;
	uint32_t n = 0, need = NSK_USTACK_UNKNOWN;
	int rc;

	if (!copy || !copy->len || st->opts.call_graph == NSK_CALL_GRAPH_FP)
		goto fp;
	st->as.sync(st->as.ctx); /* the fork or exec that made these addresses */
	as = st->as.at(st->as.ctx, pid, time);
	if (!as)
		goto fp;
	if (st->opts.call_graph == NSK_CALL_GRAPH_AUTO && fp_walk_holds(st, as, uips, nu)) {
		need = 0;
		goto fp;
	}
	if (!st->unwinder && nsk_unwinder__new(&st->unwinder))
		goto fp;
	rc = nsk_unwinder__unwind(st->unwinder, as,
				  &(struct nsk_user_regs){ copy->ip, copy->sp,
							   copy->bp },
				  copy_bytes, copy->len, ips, reach,
				  NSK_MAX_STACK_DEPTH, &n);
	if (rc < 0 || !n) {
		nsk_stacks__lost(st, "unwind.dwarf_failed", 1);
		goto fp;
	}
	flags &= ~(uint32_t)(NSK_STACK_USER_ERROR | NSK_STACK_UNWIND_FP);
	flags |= NSK_STACK_UNWIND_DWARF;
	need = copy_for(reach[n - 1]);
	if (rc == 2 && nu >= 2 && fp_frames_hold(st, as, uips, 1, nu, 0)) {
		/* the copy ended in the frame whose record rbp pointed at:
		 * the frame-pointer walk goes on from exactly there */
		uint32_t j = 1;

		while (j < nu && n < NSK_MAX_STACK_DEPTH)
			ips[n++] = uips[j++];
		if (j < nu)
			flags |= NSK_STACK_TRUNCATED;
		flags |= NSK_STACK_UNWIND_FP;
	} else if (rc >= 1) {
		/* the copy ended: where the frame-pointer walk went further
		 * through the same frames, and can be trusted, it knows the
		 * rest */
		int joined;

		n = splice(st, as, ips, n, NSK_MAX_STACK_DEPTH, uips, nu, &joined,
			   &flags);
		if (joined < 0) {
			need = NSK_USTACK_MAX; /* all a copy can hold */
		} else {
			need = copy_for(reach[joined]);
			flags |= NSK_STACK_UNWIND_FP; /* both methods made it */
		}
	}
	if (copy_needed)
		*copy_needed = need;
	return nsk_stacks__intern(st, pid, time, kips, nk, ips, n, flags);
fp:
	if (copy_needed)
		*copy_needed = need;
	return nsk_stacks__intern(st, pid, time, kips, nk, uips, nu, flags);
}
