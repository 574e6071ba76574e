/* Shared between the BPF half and the user half of every signal.
 *
 * Fixed-width types only (no bool, long, enums or pointers), so both
 * compilers lay the structs out the same way; each signal's header adds
 * _Static_asserts on its sizes.  Every record a BPF program puts in a ring
 * buffer starts with struct nsk_ev_header, so one ring buffer can carry
 * several kinds and the consumer switches on the tag.
 */
#ifndef NUSKU_EVENTS_COMMON_H
#define NUSKU_EVENTS_COMMON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Ring-buffer record tags.  Each signal owns a range of ten. */
#define NSK_EV_PROC_FORK 1
#define NSK_EV_PROC_EXEC 2
#define NSK_EV_PROC_EXIT 3
#define NSK_EV_PROC_COMM 4
#define NSK_EV_CPU_SAMPLE 10
#define NSK_EV_ALLOC 20
#define NSK_EV_OFFCPU 30
#define NSK_EV_SYSCALL_SLOW 40
#define NSK_EV_NET 50

/* Deepest stack a BPF program takes (bpf_get_stack limit is 127 by default
 * through kernel.perf_event_max_stack). */
#define NSK_MAX_STACK_DEPTH 127

#define NSK_COMM_LEN 16

struct nsk_ev_header {
	__u32 type;
	__u32 size; /* bytes of the whole record, header included */
};

_Static_assert(sizeof(struct nsk_ev_header) == 8, "nsk_ev_header size");

#endif
