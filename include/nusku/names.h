/* Names both halves of Nusku share: the allocator functions and the
 * off-CPU reasons, as numbers in records and events.
 *
 * Plain enums with no includes, so BPF programs (bpf/), the preloaded
 * sampler, the recorder and the reader all take them from here.  The
 * values are part of the file format (docs/format.md): append only.
 */
#ifndef NUSKU_NAMES_H
#define NUSKU_NAMES_H

/* Which allocator entry point made an ALLOC or FREE record. */
enum nsk_alloc_fn {
	NSK_ALLOC_MALLOC = 1,
	NSK_ALLOC_CALLOC,
	NSK_ALLOC_REALLOC,
	NSK_ALLOC_REALLOCARRAY,
	NSK_ALLOC_ALIGNED_ALLOC,
	NSK_ALLOC_POSIX_MEMALIGN,
	NSK_ALLOC_MEMALIGN,
	NSK_ALLOC_VALLOC,
	NSK_ALLOC_PVALLOC,
	NSK_ALLOC_MMAP,
	NSK_ALLOC_BRK,
	NSK_ALLOC_FREE,
	NSK_ALLOC_MUNMAP,
	/* 1.2: an anonymous mapping made PROT_NONE or MAP_NORESERVE: address
	 * space reserved, no memory (ALLOC only) */
	NSK_ALLOC_RESERVE,
	/* 1.2: ALLOC: a range of a reservation made writable (committed);
	 * FREE: a range of one made PROT_NONE again */
	NSK_ALLOC_MPROTECT,
};

/* Why a thread was off CPU (record/offcpu_reason.c decides). */
enum nsk_offcpu_reason {
	NSK_OFFCPU_OTHER = 0,
	NSK_OFFCPU_LOCK,
	NSK_OFFCPU_DISK,
	NSK_OFFCPU_PROCESS,
	NSK_OFFCPU_NETWORK,
	NSK_OFFCPU_SLEEP,
	NSK_OFFCPU_POLL,
	NSK_OFFCPU_RUNQUEUE,
	NSK_OFFCPU_PAGE_FAULT,
	NSK_OFFCPU_REASON_MAX
};

#endif
