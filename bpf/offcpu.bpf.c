// SPDX-License-Identifier: GPL-2.0
/* Off-CPU intervals of target threads, from the scheduler's tracepoints.
 *
 * The scheduler is the hottest path of the kernel and a context-switch
 * storm (a million switches a second) runs these programs on every switch,
 * so the path of an interval shorter than min_block_ns (nearly all of them
 * in a storm) is kept to what the floor of any off-CPU tracer pays (a
 * target check, two task-storage lookups, a time): see docs/blocking.md,
 * "Cost".
 *
 * sched_switch, switch-out of a target thread: the time, the state
 * (sleeping, uninterruptible, preempted).  The time is the scheduler's own
 * clock of the CPU (rq->clock, just updated by __schedule: three loads),
 * not bpf_ktime_get_ns(), an indirect call that costs as much as the rest
 * of the program on this kind of machine; a kept interval's start is
 * placed on CLOCK_MONOTONIC at its switch-in, the one clock read it needs.
 *
 * sched_waking, in the waker's context (sched_wakeup may run on the wakee's
 * CPU from an IPI, where current is not the waker): note the waker (three
 * loads from current), and walk its stacks when the wait is already past
 * the threshold.  A wakeup from an interrupt (a timer) runs in whatever
 * task was current; user space tells those apart by the interrupt frames
 * on the waker's kernel stack.
 *
 * sched_switch, switch-in of a target thread: if the interval reaches
 * min_block_ns, read the syscall it is in from its saved registers and walk
 * the kernel stack of the still-sleeping thread (the stack it blocked in)
 * with bpf_get_task_stack.
 *
 * The user stack can only be walked in the thread's own context.  For a
 * kept interval the walk is deferred to the thread's way back to user
 * space, where its user stack is exactly what it was when it blocked: a
 * bpf_task_work callback (TWA_RESUME) scheduled at its switch-in, or, if it
 * blocks again first, its next switch-out.  Scheduling task work costs an
 * irq_work (a self-IPI: ~14 us in a VM), so the last two stacks walked
 * are kept per thread, keyed by where it left user space and the call it
 * is in (user_key): a storm thread blocks in the same few places, and is
 * walked once per place.  Kernels without bpf_task_work, or whose
 * verifier refuses it here (6.18.44), walk at switch-out, in the thread's
 * own context, whenever neither kept stack is of where it left user
 * space: a walk per new place a target blocks in, kept or not, and no
 * program on every syscall of the machine (the walk at sys_exit, before,
 * cost every other process ~190 ns a syscall here, and the storm more).
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
/* The kernel has bpf_task_work (6.18) and takes it here: user stacks of
 * kept intervals are walked on the thread's way back to user space, not at
 * every switch-out to a new place.  Set by record/offcpu.c. */
const volatile __u32 task_work = 0;

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
					      struct bpf_task_work *tw,
					      void *map__map,
					      bpf_task_work_callback_t callback,
					      void *aux__prog) __weak __ksym;

#define TASK_DEAD_BIT 0x80
#define ENOMEM 12
#define EBUSY 16

/* What is known about a thread between its switch-out and switch-in, and
 * then (held = 1) about a kept interval until its user stack is walked. */
/* A user stack walked in the thread's context, with its copy for DWARF,
 * and the key of where it was taken (see user_key). */
struct nsk_offcpu_ustack {
	__u64 key[4];
	__u64 regs[3]; /* ip, sp, bp of the copy */
	__u32 n;       /* ips */
	__u32 copy_len;
	__u64 ips[NSK_OFFCPU_MAX_DEPTH];
	__u8 copy[NSK_OFFCPU_USTACK_COPY];
};

/* Stacks a thread keeps: a storm thread blocks in two places or so (a ping
 * pong: preempted by the wakeup in write, then blocked in read). */
#define NSK_OFFCPU_USTACKS 2

struct nsk_offcpu_pending {
	__u64 start_ns; /* the scheduler's clock at switch-out; 0: on CPU */
	__u64 start_k;	/* bpf_ktime_get_ns() then, in exact mode; else 0 */
	__u64 duration_ns;
	__u64 arg0;
	__u32 pid;
	__u32 state;
	__u32 flags;
	__u32 syscall;
	__u32 held; /* a kept interval waits for its user stack */
	__u32 nkernel;
	__u32 waker_pid;
	__u32 waker_tid;
	__u32 nwaker_kernel;
	__u32 nwaker_user;
	__u32 exact; /* the last interval was kept: time this one exactly */
	__u32 waker_ustack_len;
	__u32 cached; /* bit i: us[i] holds a walked stack */
	__u32 use;    /* us[use] is this interval's user stack */
	__u32 pad3;
	/* Where the thread left user space for this interval: ip, sp, bp of
	 * its saved user registers and the return address in the frame bp
	 * points to. */
	__u64 out_key[4];
	__u64 ev_start_ns; /* of the held interval */
	char waker_comm[NSK_COMM_LEN];
	__u64 kernel[NSK_OFFCPU_MAX_DEPTH];
	__u64 waker_kernel[NSK_OFFCPU_MAX_DEPTH];
	__u64 waker_user[NSK_OFFCPU_MAX_DEPTH];
	__u64 waker_regs[3];
	__u8 waker_ustack[NSK_OFFCPU_WAKER_COPY];
	struct nsk_offcpu_ustack us[NSK_OFFCPU_USTACKS];
	/* This thread's own user stack as a waker: the last one walked when
	 * it woke a thread whose wait was kept, keyed like out_key (a waker
	 * in a storm wakes from the same few places too). */
	__u32 wcached;
	__u32 wn;
	__u32 wcopy_len;
	__u32 wpad;
	__u64 wkey[4];
	__u64 wregs[3];
	__u64 wuser[NSK_OFFCPU_MAX_DEPTH];
	__u8 wcopy[NSK_OFFCPU_WAKER_COPY];
};

/* pending.flags only, never in a record: us[use] is this interval's user
 * stack */
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

/* The deferred user-stack walks: bpf_task_work lives in hash and array
 * values, not in task storage.  One entry per thread that had a kept
 * interval, keyed by tid, deleted with the thread. */
struct nsk_offcpu_tw {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct nsk_offcpu_tw);
} offcpu_tw SEC(".maps");

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

/* Now, by the scheduler's clock of t's CPU (t is on it: the task being
 * switched, or current).  __schedule updated it before the tracepoint; at
 * sched_waking it is the time of the CPU's last scheduling event or tick,
 * never later than now.  Without group scheduling (no cfs_rq->rq) it is
 * bpf_ktime_get_ns(). */
static __always_inline __u64 sched_now(struct task_struct *t)
{
	if (bpf_core_field_exists(struct cfs_rq, rq))
		return t->se.cfs_rq->rq->clock;
	return bpf_ktime_get_ns();
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

/* The current task's user registers and the top of its stack into u, in
 * its own context (for DWARF unwinding in user space). */
static __always_inline void copy_stack_to(struct nsk_offcpu_ustack *u)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 sp, len;

	if (!regs)
		return;
#if defined(__TARGET_ARCH_x86)
	u->regs[0] = BPF_CORE_READ(regs, ip);
	u->regs[1] = sp = BPF_CORE_READ(regs, sp);
	u->regs[2] = BPF_CORE_READ(regs, bp);
	len = copy_len(sp, u->regs[2], NSK_OFFCPU_USTACK_COPY);
	asm volatile("" : "+r"(len));
	if (len > NSK_OFFCPU_USTACK_COPY || len < 64)
		return;
	/* A read that would run past the end of the stack mapping (a main
	 * thread's sp can be near it) fails as a whole: retry shorter. */
	if (!bpf_probe_read_user(u->copy, len, (void *)sp))
		u->copy_len = len;
	else if (len > 512 && !bpf_probe_read_user(u->copy, 512, (void *)sp))
		u->copy_len = 512;
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

/* Emits the kept interval in p, with the user stack in p if it has one. */
static __always_inline void emit(struct nsk_offcpu_pending *p, __u32 tid)
{
	struct nsk_ev_offcpu *ev;
	struct nsk_offcpu_ustack *u = &p->us[p->use & (NSK_OFFCPU_USTACKS - 1)];
	__u32 zero = 0, nk, nu = 0, nwk, nwu, off;
	__u64 size, rbflags = BPF_RB_NO_WAKEUP;

	p->held = 0;
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
	if (p->flags & NSK_OFFCPU_F_HAVE_USTACK) {
		nu = u->n;
		if (nu > NSK_OFFCPU_MAX_DEPTH)
			nu = NSK_OFFCPU_MAX_DEPTH;
		if (nu)
			bpf_probe_read_kernel(&ev->ips[off], nu * 8, u->ips);
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
	if (u->copy_len && (p->flags & NSK_OFFCPU_F_HAVE_USTACK)) {
		/* the copy taken with the walk */
		__u64 len = u->copy_len;

		if (len > NSK_OFFCPU_USTACK_COPY)
			goto no_user_copy;
		asm volatile("" : "+r"(len));
		if (len <= NSK_OFFCPU_USTACK_COPY && len > 0 &&
		    !bpf_probe_read_kernel(&ev->ips[off], len, u->copy)) {
			ev->ustack_len = len;
			ev->user_regs[0] = u->regs[0];
			ev->user_regs[1] = u->regs[1];
			ev->user_regs[2] = u->regs[2];
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

/* Where t left user space: the ip, sp and bp of its saved user registers,
 * and the syscall it is in with its first argument.  Loads, no helper: the
 * return address bp points to would take bpf_probe_read_user, which cost
 * 240 ns a switch here, and is out of reach at switch-in, in another
 * task's context.  Two intervals with the same key are, as good as always,
 * the same call path: the same instruction at the same stack depth under
 * the same frame pointer, in the same call on the same file or lock. */
static __always_inline void user_key(struct task_struct *t, __u64 key[4])
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

	key[0] = key[1] = key[2] = key[3] = 0;
	if (!regs)
		return;
#if defined(__TARGET_ARCH_x86)
	key[0] = regs->ip;
	key[1] = regs->sp;
	key[2] = regs->bp;
	key[3] = regs->di ^ ((__u64)(__u32)regs->orig_ax << 48);
#endif
}

/* Whether t's saved user registers are still those of out_key. */
static __always_inline int same_user_regs(struct nsk_offcpu_pending *p,
					  struct task_struct *t)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

	if (!regs)
		return 0;
#if defined(__TARGET_ARCH_x86)
	return regs->ip == p->out_key[0] && regs->sp == p->out_key[1] &&
	       regs->bp == p->out_key[2];
#else
	return 1;
#endif
}

/* Walks the current task's user stack (and its copy) into the stack of p
 * that was used least recently: the stack of out_key from now on. */
static __always_inline void walk_into_slot(struct nsk_offcpu_pending *p)
{
	__u32 i = (p->use + 1) & (NSK_OFFCPU_USTACKS - 1);
	struct nsk_offcpu_ustack *u = &p->us[i];
	long n = bpf_get_task_stack(bpf_get_current_task_btf(), u->ips,
				    sizeof(u->ips), BPF_F_USER_STACK);

	p->use = i;
	p->flags |= NSK_OFFCPU_F_HAVE_USTACK;
	u->copy_len = 0;
	p->cached &= ~(1u << i);
	if (n <= 0) {
		p->flags |= NSK_OFFCPU_F_USTACK_ERR;
		u->n = 0;
		return;
	}
	u->n = (__u64)n / 8;
	if (copy_stacks)
		copy_stack_to(u);
	__builtin_memcpy(u->key, p->out_key, sizeof(u->key));
	p->cached |= 1u << i;
}

/* Whether us[i] is the stack of out_key. */
static __always_inline int key_is(struct nsk_offcpu_pending *p, __u32 i)
{
	struct nsk_offcpu_ustack *u = &p->us[i];

	return (p->cached & (1u << i)) && u->key[0] == p->out_key[0] &&
	       u->key[1] == p->out_key[1] && u->key[2] == p->out_key[2] &&
	       u->key[3] == p->out_key[3];
}

/* Emits the held interval of p.  walk: the thread is in its own context
 * and has not been back in user space since it blocked (its next
 * switch-out, its task work): walk its user stack first. */
static __always_inline void flush_held(struct nsk_offcpu_pending *p, __u32 tid,
				       int walk)
{
	if (!p->held)
		return;
	if (walk)
		walk_into_slot(p);
	emit(p, tid);
}

/* The user stack of t's interval: a cached one if t left user space where
 * it did for one of them (a storm blocks in the same places over and over),
 * else walked later, and only if the interval is kept.  t's saved user
 * registers do not change while it is off CPU, so this is as right at its
 * switch-in as at its switch-out. */
static __always_inline void find_ustack(struct nsk_offcpu_pending *p,
					struct task_struct *t)
{
	user_key(t, p->out_key);
	if (key_is(p, p->use & 1)) {
		p->flags |= NSK_OFFCPU_F_HAVE_USTACK;
	} else if (key_is(p, (p->use + 1) & 1)) {
		p->use = (p->use + 1) & 1;
		p->flags |= NSK_OFFCPU_F_HAVE_USTACK;
	}
}

static __always_inline void switch_out(struct nsk_offcpu_pending *p,
				       struct task_struct *prev,
				       unsigned int prev_state, int preempt,
				       __u64 now)
{
	/* The switch-in of the last interval was not seen (the program did
	 * not run for it): that interval is lost; say so. */
	if (p->start_ns)
		count_drop(NSK_OFFCPU_DROP_UNPAIRED);
	flush_held(p, prev->pid, 1);
	p->start_ns = now;
	/* A thread whose last interval was kept is timed by the clock too,
	 * so that sched_waking can tell exactly whether this one is past the
	 * threshold already (and worth the waker's stacks). */
	p->start_k = p->exact ? bpf_ktime_get_ns() : 0;
	p->pid = prev->tgid;
	p->state = prev_state;
	p->flags = preempt ? NSK_OFFCPU_F_PREEMPT : 0;
	p->waker_pid = 0;
	p->waker_tid = 0;
	p->nwaker_kernel = 0;
	p->nwaker_user = 0;
	p->waker_ustack_len = 0;
	if (task_work)
		return; /* the rest at switch-in, if the interval is kept */
	read_syscall(prev, &p->syscall, &p->arg0);
	find_ustack(p, prev);
	/* Without task work: now, in its own context, unless a kept
	 * stack is of this place. */
	if (!(p->flags & NSK_OFFCPU_F_HAVE_USTACK))
		walk_into_slot(p);
}

/* On the thread's way back to user space after a kept interval (TWA_RESUME
 * task work): its user stack is the one it blocked with. */
static int offcpu_tw_walk(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct nsk_offcpu_pending *p;

	p = bpf_task_storage_get(&offcpu_pending, t, 0, 0);
	if (!p || !p->held)
		return 0;
	/* A signal delivered on the way out sets up its frame before task
	 * work runs: the registers are the handler's, not the ones it
	 * blocked with; then it has no user stack. */
	flush_held(p, t->pid, same_user_regs(p, t));
	return 0;
}

/* Holds the kept interval in p until next is back in its own context. */
static __always_inline void hold(struct nsk_offcpu_pending *p,
				 struct task_struct *next)
{
	struct nsk_offcpu_tw *w, zero = {};
	__u32 tid = next->pid;
	int err;

	if (p->held)
		return;
	p->held = 1;
	if (!task_work) { /* (not reached: switch-out walked) */
		flush_held(p, tid, 0);
		return;
	}
	w = bpf_map_lookup_elem(&offcpu_tw, &tid);
	if (!w) {
		bpf_map_update_elem(&offcpu_tw, &tid, &zero, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&offcpu_tw, &tid);
	}
	err = w ? bpf_task_work_schedule_resume_impl(next, &w->tw, &offcpu_tw,
						     offcpu_tw_walk, 0)
		: -ENOMEM;
	/* -EBUSY: a walk already pending for this thread, which has not
	 * been back in user space since: it will find this one. */
	if (err && err != -EBUSY)
		flush_held(p, tid, 0); /* no user stack */
}

static __always_inline void switch_in(struct nsk_offcpu_pending *p,
				      struct task_struct *next, __u64 now)
{
	__u64 d = now - p->start_ns, end;
	long n;

	if ((__s64)d < 0)
		d = 0; /* two CPUs' clocks a little apart */
	if (p->start_k) {
		end = bpf_ktime_get_ns();
		d = end - p->start_k;
	}
	if (d < min_block_ns) {
		p->start_ns = 0;
		p->exact = 0;
		return;
	}
	/* Kept: placed on the monotonic clock, ending now. */
	if (!p->start_k)
		end = bpf_ktime_get_ns();
	p->ev_start_ns = end - d;
	p->duration_ns = d;
	p->start_ns = 0;
	p->exact = 1;
	if (task_work) { /* its registers are as it left them */
		read_syscall(next, &p->syscall, &p->arg0);
		find_ustack(p, next);
	}
	p->nkernel = 0;
	if (kernel_stacks) {
		n = bpf_get_task_stack(next, p->kernel, sizeof(p->kernel), 0);
		if (n < 0)
			p->flags |= NSK_OFFCPU_F_KSTACK_ERR;
		else
			p->nkernel = (__u64)n / 8;
	}
	if (p->flags & NSK_OFFCPU_F_HAVE_USTACK)
		emit(p, next->pid);
	else
		hold(p, next);
}

/* -a: a kernel thread's time asleep is its idle time, not a wait of
 * anyone's (its CPU samples are recorded; docs/record.md). */
static __always_inline int is_kthread_all(struct task_struct *t)
{
	return nsk_all_but && (t->flags & 0x00200000u /* PF_KTHREAD */);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(nsk_offcpu_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct nsk_offcpu_pending *p = 0, *n = 0;
	__u32 ptid = prev->pid;
	__u64 now;

	/* A target thread has its storage from its first switch-out on:
	 * found from the task, no hash.  Other threads have none, and only
	 * they pay the target lookup. */
	if (ptid) {
		p = bpf_task_storage_get(&offcpu_pending, prev, 0, 0);
		if (!p && !(prev_state & TASK_DEAD_BIT) &&
		    nsk_is_target(prev->tgid) && !is_kthread_all(prev)) {
			p = bpf_task_storage_get(&offcpu_pending, prev, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);
			/* no memory, or the storage busy on this CPU */
			if (!p)
				count_drop(NSK_OFFCPU_DROP_TIDS);
		}
	}
	if (next->pid)
		n = bpf_task_storage_get(&offcpu_pending, next, 0, 0);
	if (!p) {
		if (!n)
			return 0;
		asm volatile("" ::: "memory"); /* two tests: no OR of pointers */
	}
	now = sched_now(prev);
	if (p && (prev_state & TASK_DEAD_BIT)) {
		/* It will not run again: emit what it holds (its user stack
		 * is gone) and free its slot. */
		flush_held(p, ptid, 0);
		bpf_task_storage_delete(&offcpu_pending, prev);
		if (task_work)
			bpf_map_delete_elem(&offcpu_tw, &ptid);
	} else if (p) {
		switch_out(p, prev, prev_state, preempt, now);
	}
	if (n && n->start_ns)
		switch_in(n, next, now);
	return 0;
}

/* A waker's user stack from one slot to another: n ips, the registers and
 * len bytes of copy.  The bytes of copy it took. */
static __always_inline __u32 copy_wstack(__u64 *ips, __u64 *regs, __u8 *copy,
					 const __u64 *from_ips,
					 const __u64 *from_regs,
					 const __u8 *from_copy, __u64 n, __u64 len)
{
	asm volatile("" : "+r"(n), "+r"(len));
	if (n > NSK_OFFCPU_MAX_DEPTH || len > NSK_OFFCPU_WAKER_COPY)
		return 0;
	if (n)
		bpf_probe_read_kernel(ips, n * 8, from_ips);
	regs[0] = from_regs[0];
	regs[1] = from_regs[1];
	regs[2] = from_regs[2];
	if (len && !bpf_probe_read_kernel(copy, len, from_copy))
		return len;
	return 0;
}

/* The waker's user stack (and its copy) into p: from the waker's own
 * cache when it wakes from where it did last time, else walked, and then
 * cached in its storage (a target thread's). */
static __always_inline void waker_ustack(void *ctx, struct nsk_offcpu_pending *p,
					 struct task_struct *cur)
{
	struct nsk_offcpu_pending *q = bpf_task_storage_get(&offcpu_pending, cur, 0, 0);
	__u64 key[4];
	long n;

	user_key(cur, key);
	if (q && q->wcached && q->wkey[0] == key[0] && q->wkey[1] == key[1] &&
	    q->wkey[2] == key[2] && q->wkey[3] == key[3]) {
		p->nwaker_user = q->wn;
		p->waker_ustack_len = copy_wstack(p->waker_user, p->waker_regs,
						  p->waker_ustack, q->wuser,
						  q->wregs, q->wcopy, q->wn,
						  q->wcopy_len);
		return;
	}
	n = bpf_get_stack(ctx, p->waker_user, sizeof(p->waker_user),
			  BPF_F_USER_STACK);
	if (n <= 0) {
		p->nwaker_user = 0;
		return;
	}
	p->nwaker_user = (__u64)n / 8;
	if (copy_stacks)
		copy_waker_stack(p);
	if (!q)
		return;
	q->wn = p->nwaker_user;
	q->wcopy_len = copy_wstack(q->wuser, q->wregs, q->wcopy, p->waker_user,
				   p->waker_regs, p->waker_ustack,
				   p->nwaker_user, p->waker_ustack_len);
	__builtin_memcpy(q->wkey, key, sizeof(q->wkey));
	q->wcached = 1;
}

static __always_inline int on_waking(void *ctx, struct task_struct *t)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct nsk_offcpu_pending *p;
	__u64 waited;
	long n;

	p = bpf_task_storage_get(&offcpu_pending, t, 0, 0);
	if (!p || !p->start_ns)
		return 0;
	/* loads from current, no helper calls */
	p->waker_pid = cur->tgid;
	p->waker_tid = cur->pid;
	*(__u64 *)p->waker_comm = *(__u64 *)cur->comm;
	*(__u64 *)(p->waker_comm + 8) = *(__u64 *)(cur->comm + 8);
	p->flags |= NSK_OFFCPU_F_WAKER;
	/* The waker's stacks only for a wait that will be kept.  Exactly for
	 * a thread whose last wait was kept; else by the waker's CPU's
	 * scheduler clock, which is at most a tick behind now (so a wait it
	 * finds past the threshold is); a wakeup from an idle CPU (an
	 * interrupt: its clock stopped when it went idle) always. */
	if (p->start_k)
		waited = bpf_ktime_get_ns() - p->start_k;
	else if (!cur->pid)
		waited = min_block_ns;
	else
		waited = sched_now(cur) - p->start_ns;
	if ((__s64)waited < (__s64)min_block_ns)
		return 0;
	if (kernel_stacks) {
		n = bpf_get_stack(ctx, p->waker_kernel, sizeof(p->waker_kernel), 0);
		p->nwaker_kernel = n > 0 ? (__u64)n / 8 : 0;
	}
	if (cur->tgid)
		waker_ustack(ctx, p, cur);
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
