/* Off-CPU intervals: the record bpf/offcpu.bpf.c puts in its ring buffer.
 *
 * One record per interval a target thread spent off CPU for at least
 * min_block_ns.  It carries what only the kernel can see at the moment:
 * the thread's state at switch-out and the syscall it sleeps in, its user
 * stack (walked in its own context, on its way back to user space, or
 * reused from an interval that left user space at the same place), its
 * kernel stack (taken at switch-in from the still-sleeping task), both paid
 * only for intervals that are kept, and who woke it (taken in the waker's
 * context at sched_waking).
 * User space (record/offcpu.c) turns the kernel stack into a reason.
 *
 * Fixed-width types only; the stacks follow the fixed part as one array of
 * __u64 ips: nkernel, then nuser, then nwaker_kernel, then nwaker_user, each
 * leaf first.  Then, for an interval in a syscall, ustack_len bytes of the
 * thread's user stack from user_regs[1] (sp) upwards, copied when its user
 * stack was walked: the frame-pointer walk loses the caller of every libc
 * function (Debian's libc has no frame pointers), so user space unwinds
 * this copy with DWARF CFI (record/stacks/unwind.h) and splices the frame-pointer
 * walk above it.  Then waker_ustack_len bytes of the waker's user stack
 * from waker_regs[1], copied in sched_waking for the same reason.  The
 * record is cut after the last copy (size in the header).
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

/* Bytes of user stack copied for DWARF unwinding: the thread's, and the
 * waker's (kept per thread until the interval ends, so smaller). */
#define NSK_OFFCPU_USTACK_COPY 2048
#define NSK_OFFCPU_WAKER_COPY 1024

/* nsk_ev_offcpu.syscall when the thread was not in a syscall. */
#define NSK_OFFCPU_NO_SYSCALL 0xffffffffu

struct nsk_ev_offcpu {
	struct nsk_ev_header hdr; /* NSK_EV_OFFCPU */
	__u64 start_ns;		  /* switch-out, on CLOCK_MONOTONIC */
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
	__u32 ustack_len;  /* bytes of user stack after the ips */
	char waker_comm[NSK_COMM_LEN];
	__u64 user_regs[3]; /* ip, sp, bp when the user stack was taken */
	__u64 waker_regs[3]; /* the waker's, at sched_waking */
	__u32 waker_ustack_len; /* bytes of the waker's stack after ustack */
	__u32 pad;
	__u64 ips[4 * NSK_OFFCPU_MAX_DEPTH + NSK_OFFCPU_USTACK_COPY / 8 +
		  NSK_OFFCPU_WAKER_COPY / 8];
};

#define NSK_EV_OFFCPU_FIXED 152 /* bytes before ips */
_Static_assert(sizeof(struct nsk_ev_offcpu) ==
		       NSK_EV_OFFCPU_FIXED + 4 * NSK_OFFCPU_MAX_DEPTH * 8 +
			       NSK_OFFCPU_USTACK_COPY + NSK_OFFCPU_WAKER_COPY,
	       "nsk_ev_offcpu size");

/* Per-CPU drop counters (map offcpu_drops), by index. */
#define NSK_OFFCPU_DROP_RINGBUF 0 /* ring buffer full */
#define NSK_OFFCPU_DROP_TIDS 1	   /* no per-thread state (no memory) */
#define NSK_OFFCPU_DROP_UNPAIRED 2 /* a switch-out with no switch-in seen
				    * since the last one: that interval lost */
#define NSK_OFFCPU_DROP_MAX 3

#endif
