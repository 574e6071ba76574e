/* The set of sampled blocks still live in a process, so that a free can
 * tell in a few nanoseconds whether anyone wants to hear of it.
 *
 * Lock-free (compare-and-swap on single words): it is used from any thread
 * and from signal handlers that allocate, and it never allocates itself
 * (its memory comes from one mmap at first use).  A counting filter of 8K
 * 16-bit counters, indexed by the address's hash, answers "no" for almost
 * every free from memory that stays in cache; only a hit looks at the
 * buckets (8 words, one cache line).
 */
#ifndef NUSKU_PRELOAD_SAMPLED_SET_H
#define NUSKU_PRELOAD_SAMPLED_SET_H

#include <stdint.h>

/* Adds addr (never 0, not in the set).  0 when added, -1 when the set is
 * full or its memory could not be had (the sample is then dropped). */
int nsk_sampled_set__add(uintptr_t addr);

/* Removes addr; 1 when it was in the set, 0 when not. */
int nsk_sampled_set__remove(uintptr_t addr);

/* The filter's counters, static (the first add maps the buckets): here,
 * so a free asks the filter without a call, and calls
 * nsk_sampled_set__remove only when the address may be in the set. */
extern uint16_t nsk_sampled_set_filter[1u << 13];

/* An address's hash: its filter counter is the top 13 bits, its home
 * bucket the bits below (sampled_set.c). */
static inline uint64_t nsk_sampled_set__hash(uintptr_t addr)
{
	return (uint64_t)(addr >> 4) * 0x9e3779b97f4a7c15ULL;
}

static inline uint32_t nsk_sampled_set__slot(uintptr_t addr)
{
	return (uint32_t)(nsk_sampled_set__hash(addr) >> 51);
}

static inline int nsk_sampled_set__may_hold(uintptr_t addr)
{
	return __atomic_load_n(&nsk_sampled_set_filter[nsk_sampled_set__slot(addr)],
			       __ATOMIC_ACQUIRE) != 0;
}

#endif
