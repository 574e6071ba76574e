/* The set of sampled blocks still live (see sampled_set.h).
 *
 * Buckets of seven addresses and an overflow flag fill one cache line.  An
 * address goes in its home bucket, or when that is full in the next one
 * with room, and every full bucket it passes is flagged, so a lookup goes
 * on past a bucket only when the flag says something may have.  Flags are
 * never cleared: that only costs a look too many.  Removal writes 0 back,
 * so the set never fills with tombstones.
 *
 * The filter has 8K 16-bit counters (16 KiB, so it stays in the first
 * level cache of the thread that frees): with k sampled blocks live, a free
 * of another block looks further with probability about k / 8192.
 *
 * Two tables: a near one of 64 buckets (one page, 448 addresses), where
 * an address goes while its run of eight buckets there has room, and a far
 * one of 2^15 buckets (229,376 addresses, 2 MiB of address space, pages
 * touched as they are used), which holds the samples of a 100 GiB live heap
 * at the default 512 KiB interval; when a run of buckets is full there too
 * the sample is dropped and counted.  A program holds a few hundred
 * samples at most at the default interval when its live heap is under
 * 100 MiB: all near, in a page that stays cached.  In the far table alone,
 * each add and remove was a random page of two MiB, a TLB miss and a cache
 * miss (~300 ns each on a VM, 1.2% of alloc_churn's time).  A lookup looks
 * in the far table only once an address has gone there.
 */
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/sampled_set.h"

#define FILTER_SLOTS (1u << 13)
#define NEAR_BUCKETS 64
#define NEAR_PROBE 8
#define NBUCKETS (1u << 15)
#define BUCKET_ADDRS 7
#define MAX_PROBE 16

struct bucket {
	uintptr_t addr[BUCKET_ADDRS];
	uintptr_t overflow;
};

struct region {
	struct bucket near[NEAR_BUCKETS];
	struct bucket far[NBUCKETS];
};

/* The filter is static, so a free asks it without first asking whether
 * it exists; in .data, not .bss: zeros in the file, read from the page
 * cache until the first add, where 16 KiB of .bss would be one more
 * mapping for the loader to make in every process. */
uint16_t nsk_sampled_set_filter[FILTER_SLOTS] __attribute__((section(".data")));
static struct region *region; /* NULL until the first add */
static int far_used;	      /* an address has gone to the far table */

_Static_assert(FILTER_SLOTS == 1u << 13, "nsk_sampled_set__slot takes 13 bits");

static struct region *region_now(void)
{
	return __atomic_load_n(&region, __ATOMIC_ACQUIRE);
}

/* The region, mapped by the first add; two racing threads keep one. */
static struct region *region_get(void)
{
	struct region *r = region_now(), *want = NULL;

	if (r)
		return r;
	/* the kernel's mmap, not the exported one (sampler.c's, which tells
	 * the program's mappings): this one is ours */
	r = (struct region *)syscall(SYS_mmap, NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	if (!__atomic_compare_exchange_n(&region, &want, r, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		syscall(SYS_munmap, r, sizeof(*r));
		r = want;
	}
	return r;
}

/* The home buckets of an address's hash in each table: bits of it that
 * neither the filter's slot (the top 13) nor the other table takes. */
static uint32_t near_home(uint64_t h)
{
	return (uint32_t)(h >> 32) & (NEAR_BUCKETS - 1);
}

static uint32_t far_home(uint64_t h)
{
	return (uint32_t)(h >> 17) & (NBUCKETS - 1);
}

/* Puts addr in the run of probe buckets of t (mask + 1 of them) from
 * home; 0 when it went in, -1 when the run is full (each bucket of it
 * flagged). */
static int place(struct bucket *t, uint32_t mask, uint32_t home, uint32_t probe, uintptr_t addr)
{
	for (uint32_t i = 0; i < probe; i++) {
		struct bucket *b = &t[(home + i) & mask];

		for (int j = 0; j < BUCKET_ADDRS; j++) {
			uintptr_t empty = 0;

			if (!__atomic_load_n(&b->addr[j], __ATOMIC_RELAXED) &&
			    __atomic_compare_exchange_n(&b->addr[j], &empty, addr, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				return 0;
		}
		__atomic_store_n(&b->overflow, 1, __ATOMIC_RELEASE);
	}
	return -1;
}

/* Takes addr out of its run in t: 1 when it was there. */
static int take(struct bucket *t, uint32_t mask, uint32_t home, uint32_t probe, uintptr_t addr)
{
	for (uint32_t i = 0; i < probe; i++) {
		struct bucket *b = &t[(home + i) & mask];

		for (int j = 0; j < BUCKET_ADDRS; j++) {
			uintptr_t want = addr;

			if (__atomic_load_n(&b->addr[j], __ATOMIC_ACQUIRE) == addr &&
			    __atomic_compare_exchange_n(&b->addr[j], &want, 0, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				return 1;
		}
		if (!__atomic_load_n(&b->overflow, __ATOMIC_ACQUIRE))
			break;
	}
	return 0;
}

int nsk_sampled_set__add(uintptr_t addr)
{
	struct region *r = region_get();
	uint64_t h = nsk_sampled_set__hash(addr);
	uint32_t f = nsk_sampled_set__slot(addr);

	if (!r)
		return -1;
	/* the filter counts first, so a lookup never misses a stored one */
	__atomic_fetch_add(&nsk_sampled_set_filter[f], 1, __ATOMIC_ACQ_REL);
	if (!place(r->near, NEAR_BUCKETS - 1, near_home(h), NEAR_PROBE, addr))
		return 0;
	/* before the address is there: a remove of it comes after this add
	 * returned, and looks */
	__atomic_store_n(&far_used, 1, __ATOMIC_RELEASE);
	if (!place(r->far, NBUCKETS - 1, far_home(h), MAX_PROBE, addr))
		return 0;
	__atomic_fetch_sub(&nsk_sampled_set_filter[f], 1, __ATOMIC_ACQ_REL);
	return -1;
}

int nsk_sampled_set__remove(uintptr_t addr)
{
	struct region *r;
	uint64_t h;
	uint32_t f;

	/* not this address, most of the time (nothing live: the caller) */
	r = region_now();
	h = nsk_sampled_set__hash(addr);
	f = nsk_sampled_set__slot(addr);
	if (!r || !__atomic_load_n(&nsk_sampled_set_filter[f], __ATOMIC_ACQUIRE))
		return 0;
	if (!take(r->near, NEAR_BUCKETS - 1, near_home(h), NEAR_PROBE, addr) &&
	    !(__atomic_load_n(&far_used, __ATOMIC_ACQUIRE) &&
	      take(r->far, NBUCKETS - 1, far_home(h), MAX_PROBE, addr)))
		return 0;
	__atomic_fetch_sub(&nsk_sampled_set_filter[f], 1, __ATOMIC_ACQ_REL);
	return 1;
}
