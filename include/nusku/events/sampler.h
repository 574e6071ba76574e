/* The allocation sampler's probe points: what preload/sampler.c (the
 * library Nusku preloads into launched programs) hands to bpf/alloc.bpf.c,
 * and how record/alloc.c finds them.
 *
 * The library interposes the malloc family, samples by bytes in the
 * process, and calls an empty function only for what it sampled
 * (preload/probes.h: a fast one, and a trap twin for forked processes).
 * One function for allocations and frees, so a process that maps the
 * library gets two breakpoints installed, not four (each is a write into
 * its text, ~5.5 us a process here).  The arguments are plain registers
 * (x86-64 SysV order), an allocation's or a release's, told apart by fn:
 *
 *   nusku_sampler_probe(addr, size, weight, fn, frame, batch)
 *     an allocation:
 *     addr    the block returned, 0 when the call failed
 *     size    bytes requested
 *     weight  bytes this sample stands for (size / P(sampled)); size in
 *             exact mode
 *     fn      enum nsk_alloc_fn of nusku/names.h
 *     frame   the frame address of the interposed function: the call
 *             site's return address is at frame + 8, the caller's frame
 *             pointer at frame, its stack pointer is frame + 16
 *     batch   the process's struct nsk_sampler_batch (below), or 0: the
 *             frees it holds are told before this allocation
 *   nusku_sampler_probe(addr, size, 0, fn | NSK_SAMPLER_FN_RELEASE, 0, 0)
 *     a release: a sampled block (fn FREE or REALLOC, size 0), or a
 *     range of size bytes the program unmapped (fn MUNMAP), made
 *     PROT_NONE again (MPROTECT) or gave back by moving its break (BRK);
 *     with fn NSK_SAMPLER_FN_BATCH, addr is the batch, to be told now
 *     (it is full, old, or the process is ending)
 *
 * Frees of sampled blocks do not trap one by one: the library keeps them
 * in a batch, each with its own time and thread, and hands the batch over
 * with the next sampled allocation, which has to trap anyway.  Told before
 * that allocation, a free always precedes the allocation that may reuse
 * its address.  A batch that fills, that holds a free older than
 * NSK_SAMPLER_BATCH_NS, or whose process ends (exit, _exit) is handed
 * over by itself.
 *
 * The program's own mappings are allocations too: an anonymous
 * mmap (fn MMAP, sampled by bytes like an allocation; RESERVE for
 * PROT_NONE or MAP_NORESERVE, always), an mprotect that makes a range
 * writable (MPROTECT, always) and a break moved up (BRK, addr the old
 * break, size what it grew, always).  The allocator's own mappings are
 * made inside libc, past the interposed symbols, and never come here.
 */
#ifndef NUSKU_EVENTS_SAMPLER_H
#define NUSKU_EVENTS_SAMPLER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* File name of the library, beside the nusku binary in preload/ (build
 * tree) or in the package library directory (installed). */
#define NSK_SAMPLER_LIB "libnusku_alloc.so"
#define NSK_SAMPLER_PROBE_SYM "nusku_sampler_probe"
/* The same call, with a first instruction that always traps: what a
 * forked process calls (preload/probes.h).  The recorder attaches its
 * program to both. */
#define NSK_SAMPLER_PROBE_TRAP_SYM "nusku_sampler_probe_trap"

/* Environment the recorder gives a launched program. */
#define NSK_SAMPLER_ENV_RATE "NUSKU_ALLOC_SAMPLE" /* mean bytes; 1: every call */
#define NSK_SAMPLER_ENV_SEED "NUSKU_ALLOC_SEED"	  /* fixed seed (tests) */

/* In fn: a release, not an allocation (enum nsk_alloc_fn stays below) */
#define NSK_SAMPLER_FN_RELEASE 0x80000000u
/* fn of a release whose addr is a batch (no enum nsk_alloc_fn) */
#define NSK_SAMPLER_FN_BATCH 0xffffffffu
/* Frees a batch holds at most, and how old its first may grow. */
#define NSK_SAMPLER_BATCH 64
#define NSK_SAMPLER_BATCH_NS 100000000ull

/* One free waiting in a batch: as a release's arguments, with the
 * CLOCK_MONOTONIC time it was made at and its thread. */
struct nsk_sampler_freed {
	__u64 time;
	__u64 addr;
	__u64 size;
	__u32 fn;
	__u32 tid;
};

/* The batch, in the library's memory: the probe reads n entries. */
struct nsk_sampler_batch {
	__u32 n;
	__u32 pad;
	__u64 dropped; /* samples not reported (the set was full) */
	struct nsk_sampler_freed e[NSK_SAMPLER_BATCH];
};

_Static_assert(sizeof(struct nsk_sampler_freed) == 32, "nsk_sampler_freed size");
_Static_assert(sizeof(struct nsk_sampler_batch) == 16 + 32 * NSK_SAMPLER_BATCH,
	       "nsk_sampler_batch size");

#endif
