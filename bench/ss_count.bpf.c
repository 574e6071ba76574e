// SPDX-License-Identifier: GPL-2.0
/* The floor for the off-CPU benchmark: tp_btf sched_switch and
 * sched_waking that only count the switches and wakeups of one process,
 * in a per-CPU array.  Anything an off-CPU tracer does costs at least
 * this.  With with_time, the switch also keeps each thread's switch-out
 * time in task storage and adds the interval up at its switch-in: the
 * floor of a tracer that measures how long threads were off CPU.  With
 * with_time 2 (-c) it also times them by the scheduler's clock (rq->clock,
 * what bpf/offcpu.bpf.c uses) and counts how far the two part.
 *
 * With -n (the loader chooses the programs), the floor of the network
 * benchmark instead: tp_btf sock_send_length and sock_recv_length that
 * only count the sends and receives of the target and its children (a
 * tgid compare and its parent's: no map lookup). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

__u32 target_tgid = 0;
__u32 with_time = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	/* switches, wakeups, ns off CPU; sends, receives; with -c: ns off
	 * CPU by the scheduler's clock, the sum of |difference|, intervals
	 * more than 5 us apart */
	__uint(max_entries, 6);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct out_time {
	__u64 k;  /* bpf_ktime_get_ns() at switch-out */
	__u64 rq; /* the scheduler's clock then */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct out_time);
} out_at SEC(".maps");

static __always_inline void add(__u32 k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		*v += n;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ss_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	int out = prev->tgid == target_tgid, in = next->tgid == target_tgid;
	struct out_time *t;
	__u64 now, rq;

	if (!out && !in)
		return 0;
	add(0, 1);
	if (!with_time)
		return 0;
	now = bpf_ktime_get_ns();
	rq = with_time == 2 ? prev->se.cfs_rq->rq->clock : 0;
	if (out) {
		t = bpf_task_storage_get(&out_at, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t) {
			t->k = now;
			t->rq = rq;
		}
	}
	if (in) {
		t = bpf_task_storage_get(&out_at, next, 0, 0);
		if (t && t->k) {
			__s64 dk = now - t->k, dr = rq - t->rq;

			add(2, dk);
			if (with_time == 2) {
				add(3, dr);
				add(4, dr > dk ? dr - dk : dk - dr);
				if (dr - dk > 5000 || dk - dr > 5000)
					add(5, 1);
			}
			t->k = 0;
		}
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ss_waking, struct task_struct *p)
{
	if (p->tgid == target_tgid)
		add(1, 1);
	return 0;
}

static __always_inline int net_target(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return t->tgid == target_tgid || t->real_parent->tgid == target_tgid;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(ss_send, struct sock *sk, int ret, int flags)
{
	if (net_target())
		add(0, 1);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ss_recv, struct sock *sk, int ret, int flags)
{
	if (net_target())
		add(1, 1);
	return 0;
}
