/* A copy of the top of a user stack, for DWARF unwinding in user space
 * (record/stacks/unwind.h).  A signal that records user stacks appends one to its
 * event when --call-graph asks for it: this header, then len bytes copied
 * from sp upwards.  Shared by bpf/ustack.bpf.h and record/stacks/ustack.c.
 */
#ifndef NUSKU_EVENTS_USTACK_H
#define NUSKU_EVENTS_USTACK_H

#include <nusku/events/common.h>

/* Largest copy a BPF program takes; --stack-size is clamped to it.  A
 * power of two, so the copy length can be masked for the verifier. */
#define NSK_USTACK_MAX 16384
#define NSK_USTACK_DEFAULT 8192
/* Room an event leaves after the copy's start: a page more than the copy,
 * which the BPF verifier needs to see every page-sized read fit. */
#define NSK_USTACK_ROOM (NSK_USTACK_MAX + 4096)
/* A learned copy size (record/stacks/ustack.c) keeps this much beyond the last
 * byte the unwind read, for a sibling path through slightly larger frames. */
#define NSK_USTACK_SLACK 512
/* "Nothing learned" from a stack about the copy it needs. */
#define NSK_USTACK_UNKNOWN 0xffffffffu
/* A stack's copy size not told yet, in a map of learned sizes: this bit
 * and the number of copies taken of it meanwhile (bpf/alloc.bpf.c). */
#define NSK_USTACK_COUNTING 0x80000000u
/* Copies of one stack after which its records ask for the answer (flags
 * NSK_USTACK_F_ASKS): a stack this hot repays an answer now; one copied
 * a few times (the many short processes of a build) waits for the records
 * to be handled after the program, not beside it. */
#define NSK_USTACK_ASK_AFTER 64
#define NSK_USTACK_F_ASKS 1u

struct nsk_ev_ustack {
	__u64 ip; /* user registers where the stack was taken */
	__u64 sp;
	__u64 bp;
	__u32 len; /* bytes that follow; 0: no copy could be taken */
	__u32 flags; /* NSK_USTACK_F_* */
};

_Static_assert(sizeof(struct nsk_ev_ustack) == 32, "nsk_ev_ustack size");

#endif
