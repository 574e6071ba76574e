// SPDX-License-Identifier: GPL-2.0
/* The floor for the off-CPU benchmark: tp_btf sched_switch and
 * sched_waking that only count the switches and wakeups of one process,
 * in a per-CPU array.  Anything an off-CPU tracer does costs at least
 * this.  With with_time, the switch also keeps each thread's switch-out
 * time in task storage and adds the interval up at its switch-in: the
 * floor of a tracer that measures how long threads were off CPU.
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
	__uint(max_entries, 3); /* switches, wakeups, ns off CPU; sends, receives */
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
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
	__u64 now, *t;

	if (!out && !in)
		return 0;
	add(0, 1);
	if (!with_time)
		return 0;
	now = bpf_ktime_get_ns();
	if (out) {
		t = bpf_task_storage_get(&out_at, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t)
			*t = now;
	}
	if (in) {
		t = bpf_task_storage_get(&out_at, next, 0, 0);
		if (t && *t) {
			add(2, now - *t);
			*t = 0;
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
