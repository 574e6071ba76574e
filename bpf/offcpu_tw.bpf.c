// SPDX-License-Identifier: GPL-2.0
/* A feature probe, loaded and never attached (record/offcpu.c): does this
 * kernel have bpf_task_work, and does its verifier take it from a
 * sched_switch program?  6.18.44 has it and refuses it there ("sleepable
 * callback in a program that is not sleepable").  Asked of the off-CPU
 * signal's own programs, the answer came after verifying 2,500
 * instructions for nothing, ~65 ms of every recording's start here; this
 * program is a call and a return.  Without the kfunc the call cannot be
 * resolved and the load fails: the same answer, no.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
					      struct bpf_task_work *tw,
					      void *map__map,
					      bpf_task_work_callback_t callback,
					      void *aux__prog) __weak __ksym;

/* as the off-CPU signal keeps its task work: in a hash map's values */
struct probe_tw {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_tw);
} probe_tw SEC(".maps");

static int probe_cb(struct bpf_map *map, void *key, void *value)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(nsk_offcpu_tw_probe, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 key = 0;
	struct probe_tw *w = bpf_map_lookup_elem(&probe_tw, &key);

	if (w)
		bpf_task_work_schedule_resume_impl(next, &w->tw, &probe_tw, probe_cb, 0);
	return 0;
}
