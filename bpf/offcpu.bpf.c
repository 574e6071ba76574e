// SPDX-License-Identifier: GPL-2.0
/* Off-CPU intervals of target threads, from the scheduler's tracepoints.
 *
 * sched_switch, switch-out of a target thread: note the time, the state
 * (sleeping, uninterruptible, preempted), the syscall in progress and its
 * first argument (read from the task's saved user registers).
 *
 * sched_waking, in the waker's context (sched_wakeup may run on the wakee's
 * CPU from an IPI, where current is not the waker): note the waker, and walk
 * its stacks when the wait is already past the threshold.  A wakeup from an
 * interrupt (a timer) runs in whatever task was current; user space tells
 * those apart by the interrupt frames on the waker's kernel stack (this
 * kernel exports no per-CPU data symbols, so preempt_count is out of reach).
 *
 * sched_switch, switch-in of a target thread: if the interval reaches
 * min_block_ns, walk the kernel stack of the still-sleeping thread (it is
 * the stack it blocked in) with bpf_get_task_stack.
 *
 * The user stack can only be walked in the thread's own context.  Walking
 * it at every switch-out would cost a walk for every short block too, so
 * for a thread blocked in a syscall the walk is deferred to the first time
 * the thread is back in its own context after a kept interval: its
 * sys_exit (raw_tp), or its next switch-out if it blocks again inside the
 * same syscall.  Its user stack is then exactly what it was when it blocked.
 * Only a thread switched out outside a syscall (preempted in user mode, a
 * page fault) is walked at switch-out.
 *
 * Cost control: the target filter and the threshold are applied here; the
 * consumer is never woken per record (only past wake_bytes of backlog);
 * drops are counted per CPU and drained by record/offcpu.c as losses.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "target.bpf.h"
#include <nusku/events/offcpu.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 min_block_ns = 10000;
const volatile __u32 kernel_stacks = 1;
const volatile __u32 copy_stacks = 1; /* user stack copies for DWARF */
const volatile __u64 wake_bytes = 1 << 20; /* wake the consumer past this */

#define TASK_DEAD_BIT 0x80

/* Kept intervals waiting for their user stack (held), all threads: while
 * none is, sys_exit returns before its hash lookup.  Every syscall of every
 * process passes there; a held interval is rare. */
__u64 held_now = 0;

/* What is known about a thread between its switch-out and switch-in, and
 * then (held = 1) about a kept interval until its user stack is walked. */
struct nsk_offcpu_pending {
	__u64 start_ns; /* 0: on CPU */
	__u64 duration_ns;
	__u64 arg0;
	__u32 pid;
	__u32 state;
	__u32 flags;
	__u32 syscall;
	__u32 held; /* a kept interval waits for its user stack */
	__u32 nkernel;
	__u32 nuser; /* valid when flags has NSK_OFFCPU_F_HAVE_USTACK */
	__u32 waker_pid;
	__u32 waker_tid;
	__u32 nwaker_kernel;
	__u32 nwaker_user;
	__u32 pad;
	__u64 ev_start_ns; /* of the held interval */
	char waker_comm[NSK_COMM_LEN];
	__u64 kernel[NSK_OFFCPU_MAX_DEPTH];
	__u64 user[NSK_OFFCPU_MAX_DEPTH];
	__u64 waker_kernel[NSK_OFFCPU_MAX_DEPTH];
	__u64 waker_user[NSK_OFFCPU_MAX_DEPTH];
	__u64 waker_regs[3];
	__u32 waker_ustack_len;
	__u32 user_copy_len; /* with HAVE_USTACK: the copy taken then */
	__u64 user_regs[3];
	__u8 waker_ustack[NSK_OFFCPU_WAKER_COPY];
	__u8 user_copy[NSK_OFFCPU_USTACK_COPY];
};

/* pending.flags only, never in a record */
#define NSK_OFFCPU_F_HAVE_USTACK 0x100u

/* Per thread, in task storage: made at a target thread's first switch-out
 * (~5 KiB), freed by the kernel with the task.  Found from the task itself,
 * with no hash: a switch-in or wakeup of any other thread on the machine
 * finds no storage at once. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct nsk_offcpu_pending);
} offcpu_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} offcpu_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nsk_ev_offcpu);
} offcpu_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NSK_OFFCPU_DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_drops SEC(".maps");

static __always_inline void count_drop(__u32 idx)
{
	__u64 *n = bpf_map_lookup_elem(&offcpu_drops, &idx);

	if (n)
		(*n)++;
}

/* The syscall the task is in and its first argument, from the registers
 * saved at kernel entry; orig_ax is -1 for interrupts and exceptions. */
static __always_inline void read_syscall(struct task_struct *t, __u32 *nr,
					 __u64 *arg0)
{
	*nr = NSK_OFFCPU_NO_SYSCALL;
	*arg0 = 0;
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	long ax;

	if (!regs)
		return;
	ax = BPF_CORE_READ(regs, orig_ax);
	if (ax < 0 || ax > 4095)
		return;
	*nr = (__u32)ax;
	*arg0 = BPF_CORE_READ(regs, di);
#endif
}

/* How much of a stack to copy: up to the frame bp points to, plus its
 * saved bp and return address, is all DWARF needs to reach the first frame
 * that keeps a frame pointer (the frame-pointer walk goes on from there);
 * when bp is no frame pointer (code built without), max.  In [64, max]. */
static __always_inline __u32 copy_len(__u64 sp, __u64 bp, __u32 max)
{
	__u64 len = max;

	if (bp > sp && bp - sp + 16 <= max)
		len = (bp - sp + 16 + 63) & ~63ull;
	len &= 2 * max - 1;
	if (len > max || len < 64)
		len = max;
	return len;
}

/* The current task's user registers and the top of its user stack, after
 * the ips at ev->ips[off], for DWARF unwinding in user space.  A read that
 * would run past the end of the stack mapping fails as a whole: retry
 * shorter. */
static __always_inline void copy_user_stack(struct nsk_ev_offcpu *ev, __u32 off)
{
	__u64 len;
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 sp;

	ev->user_regs[0] = 0;
	if (!regs || off > 4 * NSK_OFFCPU_MAX_DEPTH)
		return;
#if defined(__TARGET_ARCH_x86)
	ev->user_regs[0] = BPF_CORE_READ(regs, ip);
	ev->user_regs[1] = sp = BPF_CORE_READ(regs, sp);
	ev->user_regs[2] = BPF_CORE_READ(regs, bp);
	len = copy_len(sp, ev->user_regs[2], NSK_OFFCPU_USTACK_COPY);
	asm volatile("" : "+r"(len));
	if (len > NSK_OFFCPU_USTACK_COPY || len < 64)
		return;
	if (!bpf_probe_read_user(&ev->ips[off], len, (void *)sp))
		ev->ustack_len = len;
	else if (len > 512 && !bpf_probe_read_user(&ev->ips[off], 512, (void *)sp))
		ev->ustack_len = 512;
#endif
}

/* The current task's user registers and the top of its stack into its own
 * slot, at switch-out: it may not be in its own context again before the
 * interval is emitted. */
static __always_inline void copy_stack_to_slot(struct nsk_offcpu_pending *p)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 sp, len;

	if (!regs)
		return;
#if defined(__TARGET_ARCH_x86)
	p->user_regs[0] = BPF_CORE_READ(regs, ip);
	p->user_regs[1] = sp = BPF_CORE_READ(regs, sp);
	p->user_regs[2] = BPF_CORE_READ(regs, bp);
	len = copy_len(sp, p->user_regs[2], NSK_OFFCPU_USTACK_COPY);
	asm volatile("" : "+r"(len));
	if (len > NSK_OFFCPU_USTACK_COPY || len < 64)
		return;
	if (!bpf_probe_read_user(p->user_copy, len, (void *)sp))
		p->user_copy_len = len;
#endif
}

/* The waker's (current task's) user registers and the top of its stack,
 * into the wakee's slot, for DWARF unwinding in user space. */
static __always_inline void copy_waker_stack(struct nsk_offcpu_pending *p)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 sp;
	__u64 len;

	p->waker_ustack_len = 0;
	if (!regs)
		return;
#if defined(__TARGET_ARCH_x86)
	p->waker_regs[0] = BPF_CORE_READ(regs, ip);
	p->waker_regs[1] = sp = BPF_CORE_READ(regs, sp);
	p->waker_regs[2] = BPF_CORE_READ(regs, bp);
	len = copy_len(sp, p->waker_regs[2], NSK_OFFCPU_WAKER_COPY);
	asm volatile("" : "+r"(len));
	if (len > NSK_OFFCPU_WAKER_COPY || len < 64)
		return;
	if (!bpf_probe_read_user(p->waker_ustack, len, (void *)sp))
		p->waker_ustack_len = len;
#endif
}

/* Emits the kept interval in p.  walk_user: walk the current task's user
 * stack now (we are in its context), else use the one in p, if any. */
static __always_inline void emit(void *ctx, struct nsk_offcpu_pending *p,
				 __u32 tid, int walk_user)
{
	struct nsk_ev_offcpu *ev;
	__u32 zero = 0, nk, nu = 0, nwk, nwu, off;
	int copy_user = 0;
	__u64 size, rbflags = BPF_RB_NO_WAKEUP;
	long n;

	if (p->held) {
		p->held = 0;
		__sync_fetch_and_add(&held_now, -1);
	}
	ev = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!ev)
		return;
	ev->hdr.type = NSK_EV_OFFCPU;
	ev->start_ns = p->ev_start_ns;
	ev->duration_ns = p->duration_ns;
	ev->arg0 = p->arg0;
	ev->pid = p->pid;
	ev->tid = tid;
	ev->state = p->state;
	ev->flags = p->flags & ~NSK_OFFCPU_F_HAVE_USTACK;
	ev->syscall = p->syscall;
	ev->waker_pid = p->waker_pid;
	ev->waker_tid = p->waker_tid;
	__builtin_memcpy(ev->waker_comm, p->waker_comm, NSK_COMM_LEN);

	nk = p->nkernel;
	if (nk > NSK_OFFCPU_MAX_DEPTH)
		nk = NSK_OFFCPU_MAX_DEPTH;
	if (nk)
		bpf_probe_read_kernel(ev->ips, nk * 8, p->kernel);
	off = nk;
	ev->ustack_len = 0;
	if (walk_user) {
		n = bpf_get_stack(ctx, &ev->ips[off], NSK_OFFCPU_MAX_DEPTH * 8,
				  BPF_F_USER_STACK);
		if (n < 0)
			ev->flags |= NSK_OFFCPU_F_USTACK_ERR;
		else
			nu = (__u64)n / 8;
		copy_user = 1;
	} else if (p->flags & NSK_OFFCPU_F_HAVE_USTACK) {
		nu = p->nuser;
		if (nu > NSK_OFFCPU_MAX_DEPTH)
			nu = NSK_OFFCPU_MAX_DEPTH;
		if (nu)
			bpf_probe_read_kernel(&ev->ips[off], nu * 8, p->user);
	} else {
		ev->flags |= NSK_OFFCPU_F_USTACK_ERR;
	}
	if (nu > NSK_OFFCPU_MAX_DEPTH)
		nu = NSK_OFFCPU_MAX_DEPTH;
	off += nu;
	nwk = p->nwaker_kernel;
	if (nwk > NSK_OFFCPU_MAX_DEPTH)
		nwk = NSK_OFFCPU_MAX_DEPTH;
	if (off > 2 * NSK_OFFCPU_MAX_DEPTH)
		return;
	if (nwk)
		bpf_probe_read_kernel(&ev->ips[off], nwk * 8, p->waker_kernel);
	off += nwk;
	nwu = p->nwaker_user;
	if (nwu > NSK_OFFCPU_MAX_DEPTH)
		nwu = NSK_OFFCPU_MAX_DEPTH;
	if (off > 3 * NSK_OFFCPU_MAX_DEPTH)
		return;
	if (nwu)
		bpf_probe_read_kernel(&ev->ips[off], nwu * 8, p->waker_user);
	off += nwu;
	if (off > 4 * NSK_OFFCPU_MAX_DEPTH)
		return;
	ev->user_regs[0] = 0;
	if (copy_user && copy_stacks) {
		copy_user_stack(ev, off);
	} else if (p->user_copy_len && (p->flags & NSK_OFFCPU_F_HAVE_USTACK)) {
		/* the copy taken with the walk at switch-out */
		__u64 len = p->user_copy_len;

		if (len > NSK_OFFCPU_USTACK_COPY)
			goto no_user_copy;
		asm volatile("" : "+r"(len));
		if (len <= NSK_OFFCPU_USTACK_COPY && len > 0 &&
		    !bpf_probe_read_kernel(&ev->ips[off], len, p->user_copy)) {
			ev->ustack_len = len;
			ev->user_regs[0] = p->user_regs[0];
			ev->user_regs[1] = p->user_regs[1];
			ev->user_regs[2] = p->user_regs[2];
		}
	}
no_user_copy:
	ev->waker_ustack_len = 0;
	ev->waker_regs[0] = p->waker_regs[0];
	ev->waker_regs[1] = p->waker_regs[1];
	ev->waker_regs[2] = p->waker_regs[2];
	if (p->waker_ustack_len && nwu) {
		/* after the thread's own copy: keep the offset and the
		 * length provably in bounds */
		__u64 at = (__u64)off * 8 +
			   (ev->ustack_len & (NSK_OFFCPU_USTACK_COPY * 2 - 1));
		__u64 wlen = p->waker_ustack_len;

		if (at > 4 * NSK_OFFCPU_MAX_DEPTH * 8 + NSK_OFFCPU_USTACK_COPY ||
		    wlen > NSK_OFFCPU_WAKER_COPY || !wlen)
			goto no_waker_copy;
		asm volatile("" : "+r"(at), "+r"(wlen));
		if (at <= 4 * NSK_OFFCPU_MAX_DEPTH * 8 + NSK_OFFCPU_USTACK_COPY &&
		    wlen <= NSK_OFFCPU_WAKER_COPY && wlen > 0 &&
		    !bpf_probe_read_kernel((__u8 *)ev->ips + at, wlen,
					   p->waker_ustack))
			ev->waker_ustack_len = wlen;
	}
no_waker_copy:
	ev->nkernel = nk;
	ev->nuser = nu;
	ev->nwaker_kernel = nwk;
	ev->nwaker_user = nwu;

	size = sizeof(*ev) - sizeof(ev->ips) + (__u64)off * 8 +
	       (ev->ustack_len & (NSK_OFFCPU_USTACK_COPY * 2 - 1)) +
	       (ev->waker_ustack_len & (NSK_OFFCPU_WAKER_COPY * 2 - 1));
	/* Keep the compiler from checking a copy of size the verifier does
	 * not connect to the one passed on. */
	asm volatile("" : "+r"(size));
	if (size > sizeof(*ev))
		return;
	asm volatile("" : "+r"(size));
	ev->hdr.size = size;
	if (bpf_ringbuf_query(&offcpu_events, BPF_RB_AVAIL_DATA) >= wake_bytes)
		rbflags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&offcpu_events, ev, size, rbflags))
		count_drop(NSK_OFFCPU_DROP_RINGBUF);
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev,
				       unsigned int prev_state, int preempt,
				       __u64 now)
{
	struct nsk_offcpu_pending *p;
	__u32 tid = prev->pid;
	long n;

	p = bpf_task_storage_get(&offcpu_pending, prev, 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		/* no memory, or the storage busy on this CPU (nested) */
		count_drop(NSK_OFFCPU_DROP_TIDS);
		return;
	}
	/* The switch-in of the last interval was not seen (the program did
	 * not run for it): that interval is lost; say so. */
	if (p->start_ns)
		count_drop(NSK_OFFCPU_DROP_UNPAIRED);
	/* Blocking again before its sys_exit: still the same user stack. */
	if (p->held)
		emit(ctx, p, tid, 1);
	p->start_ns = now;
	p->pid = prev->tgid;
	p->state = prev_state;
	p->flags = preempt ? NSK_OFFCPU_F_PREEMPT : 0;
	read_syscall(prev, &p->syscall, &p->arg0);
	p->waker_pid = 0;
	p->waker_tid = 0;
	p->nwaker_kernel = 0;
	p->nwaker_user = 0;
	p->waker_ustack_len = 0;
	if (p->syscall != NSK_OFFCPU_NO_SYSCALL)
		return; /* walked at sys_exit, if the interval is kept */
	n = bpf_get_stack(ctx, p->user, sizeof(p->user), BPF_F_USER_STACK);
	if (n < 0) {
		p->flags |= NSK_OFFCPU_F_USTACK_ERR;
		n = 0;
	}
	p->nuser = (__u64)n / 8;
	p->flags |= NSK_OFFCPU_F_HAVE_USTACK;
	p->user_copy_len = 0;
	if (n > 0 && copy_stacks)
		copy_stack_to_slot(p);
}

static __always_inline void switch_in(void *ctx, struct task_struct *next,
				      __u64 now)
{
	struct nsk_offcpu_pending *p;
	__u32 tid = next->pid;
	long n;

	p = bpf_task_storage_get(&offcpu_pending, next, 0, 0);
	if (!p || !p->start_ns)
		return;
	if (now - p->start_ns < min_block_ns) {
		p->start_ns = 0;
		return;
	}
	p->ev_start_ns = p->start_ns;
	p->duration_ns = now - p->start_ns;
	p->start_ns = 0;
	p->nkernel = 0;
	if (kernel_stacks) {
		n = bpf_get_task_stack(next, p->kernel, sizeof(p->kernel), 0);
		if (n < 0)
			p->flags |= NSK_OFFCPU_F_KSTACK_ERR;
		else
			p->nkernel = (__u64)n / 8;
	}
	if (p->flags & NSK_OFFCPU_F_HAVE_USTACK) {
		emit(ctx, p, tid, 0);
	} else if (!p->held) {
		p->held = 1;
		__sync_fetch_and_add(&held_now, 1);
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(nsk_offcpu_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 ptid = prev->pid;

	if (ptid && nsk_is_target(prev->tgid)) {
		if (prev_state & TASK_DEAD_BIT) {
			/* It will not run again: emit what it holds (its user
			 * stack is gone) and free its slot. */
			struct nsk_offcpu_pending *p =
				bpf_task_storage_get(&offcpu_pending, prev, 0, 0);

			if (p && p->held)
				emit(ctx, p, ptid, 0);
			if (p)
				bpf_task_storage_delete(&offcpu_pending, prev);
		} else {
			switch_out(ctx, prev, prev_state, preempt, now);
		}
	}
	if (next->pid)
		switch_in(ctx, next, now);
	return 0;
}

/* Back from the syscall it blocked in: walk its user stack for the kept
 * interval it holds.  For every other syscall one global read, and a look
 * at the task's storage only while some thread holds one. */
SEC("raw_tp/sys_exit")
int nsk_offcpu_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct nsk_offcpu_pending *p;

	if (!held_now)
		return 0;
	p = bpf_task_storage_get(&offcpu_pending, bpf_get_current_task_btf(), 0, 0);
	if (p && p->held)
		emit(ctx, p, (__u32)bpf_get_current_pid_tgid(), 1);
	return 0;
}

static __always_inline int on_waking(void *ctx, struct task_struct *t)
{
	struct nsk_offcpu_pending *p;
	__u64 id, now;
	long n;

	p = bpf_task_storage_get(&offcpu_pending, t, 0, 0);
	if (!p || !p->start_ns)
		return 0;
	id = bpf_get_current_pid_tgid();
	p->waker_pid = id >> 32;
	p->waker_tid = (__u32)id;
	bpf_get_current_comm(p->waker_comm, sizeof(p->waker_comm));
	p->flags |= NSK_OFFCPU_F_WAKER;
	now = bpf_ktime_get_ns();
	/* The waker's stacks only for a wait that will be kept. */
	if (now - p->start_ns < min_block_ns)
		return 0;
	if (kernel_stacks) {
		n = bpf_get_stack(ctx, p->waker_kernel, sizeof(p->waker_kernel), 0);
		p->nwaker_kernel = n > 0 ? (__u64)n / 8 : 0;
	}
	if (id >> 32) {
		n = bpf_get_stack(ctx, p->waker_user, sizeof(p->waker_user),
				  BPF_F_USER_STACK);
		p->nwaker_user = n > 0 ? (__u64)n / 8 : 0;
		if (n > 0 && copy_stacks)
			copy_waker_stack(p);
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(nsk_offcpu_waking, struct task_struct *t)
{
	return on_waking(ctx, t);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(nsk_offcpu_wakeup_new, struct task_struct *t)
{
	return on_waking(ctx, t);
}
