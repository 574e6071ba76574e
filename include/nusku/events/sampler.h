/* The allocation sampler's probe points: what preload/sampler.c (the
 * library Nusku preloads into launched programs) hands to bpf/alloc.bpf.c,
 * and how record/alloc.c finds them.
 *
 * The library interposes the malloc family, samples by bytes in the
 * process, and calls one of two empty functions only for what it sampled
 * (their first instruction is one the kernel emulates in the trap, see
 * preload/sampler.c).  The arguments are plain registers (x86-64 SysV
 * order):
 *
 *   nusku_sampler_alloc(addr, size, weight, fn, frame, dropped)
 *     addr    the block returned, 0 when the call failed
 *     size    bytes requested
 *     weight  bytes this sample stands for (size / P(sampled)); size in
 *             exact mode
 *     fn      enum nsk_alloc_fn of nusku/names.h
 *     frame   the frame address of the interposed function: the call
 *             site's return address is at frame + 8, the caller's frame
 *             pointer at frame, its stack pointer is frame + 16
 *     dropped samples not reported since the last call (table full)
 *   nusku_sampler_free(addr, fn, size)
 *     a sampled block released (fn FREE or REALLOC, size 0), or a range
 *     of size bytes the program unmapped (fn MUNMAP), made PROT_NONE
 *     again (MPROTECT) or gave back by moving its break (BRK)
 *
 * The program's own mappings go to nusku_sampler_alloc too: an anonymous
 * mmap (fn MMAP, sampled by bytes like an allocation; RESERVE for
 * PROT_NONE or MAP_NORESERVE, always), an mprotect that makes a range
 * writable (MPROTECT, always) and a break moved up (BRK, addr the old
 * break, size what it grew, always).  The allocator's own mappings are
 * made inside libc, past the interposed symbols, and never come here.
 */
#ifndef NUSKU_EVENTS_SAMPLER_H
#define NUSKU_EVENTS_SAMPLER_H

/* File name of the library, beside the nusku binary in preload/ (build
 * tree) or in the package library directory (installed). */
#define NSK_SAMPLER_LIB "libnusku_alloc.so"
#define NSK_SAMPLER_ALLOC_SYM "nusku_sampler_alloc"
#define NSK_SAMPLER_FREE_SYM "nusku_sampler_free"

/* Environment the recorder gives a launched program. */
#define NSK_SAMPLER_ENV_RATE "NUSKU_ALLOC_SAMPLE" /* mean bytes; 1: every call */
#define NSK_SAMPLER_ENV_SEED "NUSKU_ALLOC_SEED"	  /* fixed seed (tests) */

#endif
