// SPDX-License-Identifier: GPL-2.0
/* The floor for the syscall benchmark: raw_tp sys_enter + sys_exit that only
 * count the calls of one process, in a per-CPU array.  Anything a syscall
 * tracer does costs at least this.  With with_time, each probe also reads
 * the clock (entry time kept per CPU, so only right for a single-threaded
 * loop): the floor of any tracer that measures latency.  With with_time 2
 * the entry time is kept per thread, in task storage: the floor of a tracer
 * whose latencies stay right when calls block and threads migrate.  With
 * with_time 3 the entry time is kept per thread in an array, its index
 * found through a per-CPU cache of the last thread seen there (task
 * storage only when another thread ran on the CPU): what the syscall
 * signal does (bpf/syscall.bpf.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u32 target_tgid = 0;
__u32 with_time = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} entry SEC(".maps");

struct cpu_cache {
	__u64 task;
	__u64 start;
	__u32 idx;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_cache);
} cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} tidx SEC(".maps");

__u32 next_idx = 0;

/* The entry time's slot of the current thread: cached per CPU by task. */
static __always_inline __u64 *entry_of(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 zero = 0, idx, *s;
	struct cpu_cache *c = bpf_map_lookup_elem(&cache, &zero);

	if (!c)
		return 0;
	if (c->task == (__u64)task && c->start == task->start_time) {
		idx = c->idx;
		return bpf_map_lookup_elem(&entries, &idx);
	}
	s = bpf_task_storage_get(&tidx, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s)
		return 0;
	if (!*s)
		*s = __sync_fetch_and_add(&next_idx, 1) + 1;
	idx = *s - 1;
	c->task = (__u64)task;
	c->start = task->start_time;
	c->idx = idx;
	return bpf_map_lookup_elem(&entries, &idx);
}

static __always_inline int count(__u32 k)
{
	__u64 *v;

	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		*v += 1;
	if (with_time == 3) {
		__u64 *start = entry_of(), now = bpf_ktime_get_ns();
		__u32 t = 3;

		if (start && k == 0) {
			*start = now;
		} else if (start) {
			v = bpf_map_lookup_elem(&counts, &t);
			if (v)
				*v += now - *start;
		}
	} else if (with_time == 2) {
		struct task_struct *task = bpf_get_current_task_btf();
		__u64 *start = bpf_task_storage_get(&entry, task, 0,
						    BPF_LOCAL_STORAGE_GET_F_CREATE);
		__u64 now = bpf_ktime_get_ns();
		__u32 t = 3;

		if (start && k == 0) {
			*start = now;
		} else if (start) {
			v = bpf_map_lookup_elem(&counts, &t);
			if (v)
				*v += now - *start;
		}
	} else if (with_time) {
		__u32 t = 2;
		__u64 *start = bpf_map_lookup_elem(&counts, &t), now;

		now = bpf_ktime_get_ns();
		if (start && k == 0) {
			*start = now;
		} else if (start) {
			t = 3;
			v = bpf_map_lookup_elem(&counts, &t);
			if (v)
				*v += now - *start;
		}
	}
	return 0;
}

SEC("raw_tp/sys_enter")
int sc_enter(void *ctx)
{
	return count(0);
}

SEC("raw_tp/sys_exit")
int sc_exit(void *ctx)
{
	return count(1);
}
