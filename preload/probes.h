/* The probe points the library calls for what it sampled, and which one
 * a process calls (preload/probes.c, nusku/events/sampler.h).
 *
 * Two points, each for allocations and releases alike, one BPF program
 * behind both.  The fast one starts with a
 * 5-byte nop, whose uprobe kernels 6.16+ turn into a call to a trampoline
 * page after its first hit: a syscall's cost, not a trap's (exact mode on
 * alloc_churn: 1.42 -> 1.10 us a malloc/free pair here).  The trap twin
 * starts with an instruction the kernel emulates in the uprobe trap (no
 * single-step out of line).  A process forked from one whose fast probe was
 * turned into a call inherits the call but not the trampoline page (6.18),
 * and would die at its next sampled call; so a forked process calls the
 * trap twin, whose breakpoint it inherits with the page.  Fork is seen
 * from a page the kernel empties in every child (MADV_WIPEONFORK), made
 * by fork or by a raw clone alike; a thread or a vfork child shares the
 * page and the trampoline.
 */
#ifndef NUSKU_PRELOAD_PROBES_H
#define NUSKU_PRELOAD_PROBES_H

#include <stdint.h>

#define NSK_PROBE_API __attribute__((visibility("protected")))

NSK_PROBE_API void nusku_sampler_probe(uint64_t addr, uint64_t size, uint64_t weight,
				       uint64_t fn, uint64_t frame, uint64_t batch);
NSK_PROBE_API void nusku_sampler_probe_trap(uint64_t addr, uint64_t size, uint64_t weight,
					    uint64_t fn, uint64_t frame, uint64_t batch);

/* The page the kernel empties in every child, NULL before
 * nsk_probes__start or where the kernel has no wipe-on-fork.  Word 0:
 * the fast probe may be called (set in the process that started, never in
 * a child).  Word 1: the free batch is this process's (set at start, and
 * in a child once the batch has been started anew: free_batch.c). */
extern volatile uint64_t *nsk_probes_page;

/* The page that tells, made by the first call in a process (later calls
 * return at once).  Made before the process's first probe call: in the
 * constructor in exact mode, at the first sample otherwise, so a process
 * that never samples (most of a build's) makes no mapping for it.  A
 * process forked before its parent's first sample never inherited a fast
 * probe turned into a call (the turn happens at a process's first hit),
 * and makes a page of its own.  The started flag is inherited by a child
 * forked after the page was made, whose wiped page then says trap. */
void nsk_probes__start(void);

static inline int nsk_probes__fast(void)
{
	volatile uint64_t *p = __atomic_load_n(&nsk_probes_page, __ATOMIC_ACQUIRE);

	return p && p[0];
}

/* 0 in a child that has not started its batch anew (without the page,
 * the fork handlers are all there is: 1). */
static inline int nsk_probes__batch_mine(void)
{
	volatile uint64_t *p = __atomic_load_n(&nsk_probes_page, __ATOMIC_ACQUIRE);

	return !p || p[1];
}

static inline void nsk_probes__claim_batch(void)
{
	volatile uint64_t *p = __atomic_load_n(&nsk_probes_page, __ATOMIC_ACQUIRE);

	if (p)
		p[1] = 1;
}

static inline void nsk_probe__alloc(uint64_t addr, uint64_t size, uint64_t weight,
				    uint64_t fn, uint64_t frame, uint64_t batch)
{
	if (nsk_probes__fast())
		nusku_sampler_probe(addr, size, weight, fn, frame, batch);
	else
		nusku_sampler_probe_trap(addr, size, weight, fn, frame, batch);
}

static inline void nsk_probe__free(uint64_t addr, uint64_t fn, uint64_t size)
{
	fn |= NSK_SAMPLER_FN_RELEASE;
	if (nsk_probes__fast())
		nusku_sampler_probe(addr, size, 0, fn, 0, 0);
	else
		nusku_sampler_probe_trap(addr, size, 0, fn, 0, 0);
}

#endif
