/* The allocation signal's records, shared by bpf/alloc.bpf.c and
 * record/alloc.c.
 *
 * Two kinds travel in the alloc ring buffer: an allocation (with the stack
 * map id of the user stack taken at the allocator's return, and for realloc
 * the block it released) and a free (no stack: who frees is not used).  Frees
 * are the most frequent records, so they are kept small.
 */
#ifndef NUSKU_EVENTS_ALLOC_H
#define NUSKU_EVENTS_ALLOC_H

#include "nusku/events/common.h"

#define NSK_EV_FREE (NSK_EV_ALLOC + 1)
/* An allocation from the preloaded sampler (struct nsk_ev_alloc): old_addr
 * is the call site's return address, where user space cuts the
 * frame-pointer walk (the frames above it are the library's). */
#define NSK_EV_ALLOC_SAMPLED (NSK_EV_ALLOC + 2)

/* stack_id of an allocation whose stack the map had no room for (its
 * bucket held another stack): the frame-pointer walk follows the record
 * instead (struct nsk_ev_alloc_ips).  Larger, but no stack is lost when
 * many processes (each with its own addresses) fill the map. */
#define NSK_ALLOC_STACK_INLINE (-2)

/* Entries of the user stack map (bpf_get_stackid). */
#define NSK_ALLOC_STACK_ENTRIES 16384
/* Precomputed exponential sampling intervals (user space fills them). */
#define NSK_ALLOC_INTERVALS 4096
/* Sampled blocks still live, so frees of unsampled blocks are dropped in the
 * kernel. */
#define NSK_ALLOC_SAMPLED_LIVE 262144

/* Loss counters, one per-CPU array slot each. */
#define NSK_ALLOC_LOST_RINGBUF 0 /* ring buffer full: record dropped */
#define NSK_ALLOC_LOST_STACK 1	 /* no stack id (collision, fault) */
#define NSK_ALLOC_LOST_SAMPLED 2 /* sampled-live table full (BPF's or the
				  * sampler's set) */
#define NSK_ALLOC_LOST_USTACK 3	 /* stack copy not sent: the frame-pointer
				  * walk stands in for it */
#define NSK_ALLOC_LOST_BATCH 4	 /* a free of the sampler's batch that could
				  * not be read */
#define NSK_ALLOC_LOST_MAX 5

/* (process, stack map id) pairs whose copy size user space remembers. */
#define NSK_ALLOC_COPY_NEEDS 65536

/* Probe cookies: which function a uprobe sits on.  The first values are
 * enum nsk_alloc_fn of nusku/names.h; C++ operators map onto them. */
#define NSK_ALLOC_COOKIE_NEW 100	 /* operator new/new[] (size first) */
#define NSK_ALLOC_COOKIE_NEW_ALIGNED 101 /* operator new(size, align_val_t) */
/* The sampler library's probe points (one program: sampler_probe). */
#define NSK_ALLOC_COOKIE_SAMPLER 200 /* nusku_sampler_probe and its trap twin */

struct nsk_ev_alloc {
	struct nsk_ev_header hdr; /* NSK_EV_ALLOC */
	__u64 time;
	__u32 pid;
	__u32 tid;
	__u64 addr;	/* returned block, 0: failed */
	__u64 size;	/* requested bytes */
	__u64 old_addr; /* realloc: the block released, 0 none; mmap and
			 * brk: the wrapper's return address, read at the
			 * user stack pointer (0 none) */
	__u64 weight;	/* bytes this record stands for */
	__s32 stack_id; /* user stack map id, < 0: none */
	__u32 fn;	/* enum nsk_alloc_fn */
};

/* After an allocation with stack_id NSK_ALLOC_STACK_INLINE. */
struct nsk_ev_alloc_ips {
	__u32 n; /* return addresses, leaf first */
	__u32 pad;
	__u64 ips[NSK_MAX_STACK_DEPTH];
};

struct nsk_ev_free {
	struct nsk_ev_header hdr; /* NSK_EV_FREE */
	__u64 time;
	__u32 pid;
	__u32 tid;
	__u64 addr;
	__u64 size; /* munmap/brk: length of the range; 0 otherwise */
	__u32 fn;   /* enum nsk_alloc_fn: FREE, REALLOC, MUNMAP, BRK */
	__u32 sampler; /* 1: told by the preloaded sampler, 0: by a probe */
};

_Static_assert(sizeof(struct nsk_ev_alloc) == 64, "nsk_ev_alloc size");
_Static_assert(sizeof(struct nsk_ev_free) == 48, "nsk_ev_free size");

#endif
