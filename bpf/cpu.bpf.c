// SPDX-License-Identifier: GPL-2.0
/* CPU sampling: a perf_event program on software cpu-clock events (on the
 * target's threads, inherited; per CPU with -a: record/cpu_events.h).
 *
 * Samples of targets only (nsk_targets), with their kernel and user stacks
 * copied into the record: stack-map ids collide and are no identity, so
 * user space interns the ips itself.  The record is built in a per-CPU
 * scratch slot and sent with only the ips it holds.  No wakeup per record
 * (BPF_RB_NO_WAKEUP): the recorder drains on a short timer, which costs a
 * sixth of a wakeup per sample.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "target.bpf.h"
#include "ustack.bpf.h"
#include <nusku/events/cpu.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 kernel_stacks = 1;
/* bytes of user stack to copy for DWARF unwinding; 0: frame pointers only */
const volatile __u32 ustack_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024);
} cpu_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nsk_ev_cpu_sample);
} cpu_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NSK_CPU_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} cpu_lost SEC(".maps");

static __always_inline void tally(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&cpu_lost, &what);

	if (n)
		*n += 1; /* per CPU, and this program does not nest */
}

/* The uprobes page and the uretprobes pending in the current thread
 * (task->utask->return_instances, innermost first): while a uretprobe is
 * pending, the return address on the user stack is its trampoline's.  The
 * kernel puts the real ones back in the frame-pointer walk it hands us
 * (since 6.12); the stack copy for DWARF is raw memory, so user space
 * needs them.  Read here, in the sampled thread, the list cannot change
 * under us except where the sample is inside the uprobe code itself. */
static __always_inline void pending_returns(struct nsk_ev_cpu_sample *e)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct return_instance *ri;
	struct xol_area *area;

	e->xol = 0;
	e->nuret = 0;
	e->pad = 0;
	if (!bpf_core_field_exists(task->utask))
		return;
	area = BPF_CORE_READ(task, mm, uprobes_state.xol_area);
	if (!area)
		return; /* no uprobe was ever hit in this process */
	e->xol = BPF_CORE_READ(area, vaddr);
	ri = BPF_CORE_READ(task, utask, return_instances);
	for (int i = 0; i < NSK_CPU_URET_MAX && ri; i++) {
		e->uret[i].slot = BPF_CORE_READ(ri, stack);
		e->uret[i].ret = BPF_CORE_READ(ri, orig_ret_vaddr);
		e->nuret = i + 1;
		ri = BPF_CORE_READ(ri, next);
	}
}

#define STACK_BYTES (NSK_MAX_STACK_DEPTH * sizeof(__u64))
#define PF_EXITING_ 0x00000004 /* include/linux/sched.h */

SEC("perf_event")
int nsk_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0, nk = 0, nu = 0;
	struct nsk_ev_cpu_sample *e;
	long n, size;

	if (!tgid)
		return 0;
	if (!nsk_is_target(tgid)) {
		/* a target whose last thread is on its way out is taken out
		 * of the map at sched_process_exit, before its events go
		 * (perf_event_exit_task): its own end, not elsewhere */
		if (!(bpf_get_current_task_btf()->flags & PF_EXITING_))
			tally(NSK_CPU_ELSEWHERE);
		return 0;
	}
	e = bpf_map_lookup_elem(&cpu_scratch, &zero);
	if (!e)
		return 0;
	e->hdr.type = NSK_EV_CPU_SAMPLE;
	e->time = bpf_ktime_get_ns();
	e->period = ctx->sample_period;
	e->pid = tgid;
	e->tid = (__u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->flags = 0;
	pending_returns(e);
	if (kernel_stacks) {
		n = bpf_get_stack(ctx, e->ips, STACK_BYTES, 0);
		if (n < 0) {
			tally(NSK_CPU_LOST_KSTACK);
			e->flags |= NSK_EV_CPU_KSTACK_ERR;
		} else {
			nk = n / sizeof(__u64);
		}
	}
	if (nk > NSK_MAX_STACK_DEPTH)
		nk = NSK_MAX_STACK_DEPTH;
	n = bpf_get_stack(ctx, &e->ips[nk], STACK_BYTES, BPF_F_USER_STACK);
	if (n < 0) {
		tally(NSK_CPU_LOST_USTACK);
		e->flags |= NSK_EV_CPU_USTACK_ERR;
	} else {
		nu = n / sizeof(__u64);
	}
	if (nu > NSK_MAX_STACK_DEPTH)
		nu = NSK_MAX_STACK_DEPTH;
	e->nkernel = nk;
	e->nuser = nu;
	size = NSK_EV_CPU_SAMPLE_HDR_SIZE + (nk + nu) * sizeof(__u64);
	e->ustack.len = 0;
	if (ustack_bytes) {
		__u32 used = nk + nu;

		if (used > 2 * NSK_MAX_STACK_DEPTH)
			used = 2 * NSK_MAX_STACK_DEPTH;
		size += nsk_copy_ustack(&e->ustack, (__u8 *)&e->ips[used],
					ustack_bytes);
	}
	if (size > sizeof(*e))
		size = sizeof(*e);
	e->hdr.size = size;
	if (bpf_ringbuf_output(&cpu_events, e, size, BPF_RB_NO_WAKEUP))
		tally(NSK_CPU_LOST_RINGBUF);
	return 0;
}
