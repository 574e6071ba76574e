/* Off-CPU intervals: the record bpf/offcpu.bpf.c puts in its ring buffer.
 *
 * One record per interval a target thread spent off CPU for at least
 * min_block_ns.  It carries what only the kernel can see at the moment:
 * the thread's state and syscall at switch-out, its user stack (taken at
 * switch-out, in its own context), its kernel stack (taken at switch-in from
 * the still-sleeping task, so the walk is paid only for intervals that are
 * kept), and who woke it (taken in the waker's context at sched_waking).
 * User space (record/offcpu.c) turns the kernel stack into a reason.
 *
 * Fixed-width types only; the stacks follow the fixed part as one array of
 * __u64 ips: nkernel, then nuser, then nwaker_kernel, then nwaker_user, each
 * leaf first.  The record is cut after the last ip (size in the header).
 */
#ifndef NUSKU_EVENTS_OFFCPU_H
#define NUSKU_EVENTS_OFFCPU_H

#include <nusku/events/common.h>

/* Depth of each of the four stacks an off-CPU record carries. */
#define NSK_OFFCPU_MAX_DEPTH 64

/* nsk_ev_offcpu.flags */
#define NSK_OFFCPU_F_PREEMPT 0x1u	   /* switched out by preemption */
#define NSK_OFFCPU_F_WAKER 0x2u		   /* a waker was seen */
#define NSK_OFFCPU_F_KSTACK_ERR 0x4u	   /* kernel stack walk failed */
#define NSK_OFFCPU_F_USTACK_ERR 0x8u	   /* user stack walk failed */

/* nsk_ev_offcpu.syscall when the thread was not in a syscall. */
#define NSK_OFFCPU_NO_SYSCALL 0xffffffffu

struct nsk_ev_offcpu {
	struct nsk_ev_header hdr; /* NSK_EV_OFFCPU */
	__u64 start_ns;		  /* switch-out, bpf_ktime_get_ns() */
	__u64 duration_ns;	  /* until switch-in */
	__u64 arg0;		  /* first syscall argument (futex uaddr) */
	__u32 pid;
	__u32 tid;
	__u32 state;   /* prev_state at switch-out (TASK_* bits) */
	__u32 flags;   /* NSK_OFFCPU_F_* */
	__u32 syscall; /* syscall in progress, NSK_OFFCPU_NO_SYSCALL if none */
	__u32 waker_pid;
	__u32 waker_tid;
	__u32 nkernel;
	__u32 nuser;
	__u32 nwaker_kernel;
	__u32 nwaker_user;
	__u32 pad;
	char waker_comm[NSK_COMM_LEN];
	__u64 ips[4 * NSK_OFFCPU_MAX_DEPTH];
};

_Static_assert(sizeof(struct nsk_ev_offcpu) ==
		       96 + 4 * NSK_OFFCPU_MAX_DEPTH * 8,
	       "nsk_ev_offcpu size");

/* Per-CPU drop counters (map offcpu_drops), by index. */
#define NSK_OFFCPU_DROP_RINGBUF 0 /* ring buffer full */
#define NSK_OFFCPU_DROP_TIDS 1	   /* per-thread map full */
#define NSK_OFFCPU_DROP_MAX 2

#endif
