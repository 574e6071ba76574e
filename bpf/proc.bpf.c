// SPDX-License-Identifier: GPL-2.0
/* Process life of the targets: fork, exec, exit, rename.
 *
 * Following children happens here, in the kernel: when a target forks, the
 * child's tgid is put in nsk_targets before the child first runs, so no
 * sample, allocation or syscall of the child can be missed (user space
 * would always be late).  Each event also goes to a ring buffer; an exec's
 * carries the new program's arguments.  An exec wakes the recorder's
 * watcher (only it: record/procs/proc_watch.h), which then holds the new
 * program's file while the process lives (a program gone a millisecond
 * later, its binary deleted or in a mount namespace of its own, is still
 * read); the kernel
 * has written the file's mapping record by then.  A fork wakes it only
 * when the recorder asks (prompt): a wakeup is an interrupt to another
 * CPU, paid by the process (nsk_proc_fork ran ~10.6 us with it, 1.5
 * without, beside a make -j2 here).  Prompt is for what must act before a
 * new process can run far: maps read from /proc (no mapping records) and
 * allocator uprobes for a process the sampler cannot reach.  (It was on
 * from the start for a while, when short_lived.sh's deleted copies went
 * unnamed: the cause was the watcher's descriptor table growing under
 * it, record/fdtable.c, not a late wakeup.)  Exits and renames never wake
 * it: nothing is late for them
 * (a rename comes with an exec, which wakes it; an exit only ends what
 * was recorded), and the two wakeups cost a fork and exec of /bin/true
 * ~80 us of its ~830 under the default signals here.  (The mapping
 * records themselves wake the watcher only when their buffer is half
 * full: perf wakes for side-band records at its watermark, not per
 * record.)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "target.bpf.h"
#include <nusku/events/proc.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 inherit = 1;
/* The recorder's mount namespace (its inode number) and root directory
 * (inode, and device as the kernel numbers it): an exec in both is
 * NSK_EV_EXEC_SAME_ROOT.  0: not known. */
const volatile __u32 own_mntns = 0;
const volatile __u64 own_root_ino = 0;
const volatile __u32 own_root_dev = 0;
__u32 prompt; /* a fork wakes the recorder: see above (nsk_proc__prompt) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} proc_events SEC(".maps");

/* An exec event is built here, then sent with only the argument bytes
 * it holds (one per CPU: a tracepoint program is not preempted on its CPU
 * by another exec). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nsk_ev_proc_exec);
} exec_scratch SEC(".maps");

/* Events the ring buffer had no room for (one counter, per CPU). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} proc_lost SEC(".maps");

static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&proc_lost, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline struct nsk_ev_proc *reserve(__u32 type)
{
	struct nsk_ev_proc *e;

	e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->hdr.type = type;
	e->hdr.size = sizeof(*e);
	e->time = bpf_ktime_get_ns();
	return e;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(nsk_proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	struct nsk_ev_proc *e;

	if (!nsk_is_target(ptgid))
		return 0;
	/* -a: every process is a target already (target.bpf.h) */
	if (ctgid != ptgid && !nsk_all_but) {
		__u8 one = 1;

		if (!inherit)
			return 0;
		bpf_map_update_elem(&nsk_targets, &ctgid, &one, BPF_ANY);
	}
	e = reserve(NSK_EV_PROC_FORK);
	if (!e)
		return 0;
	e->pid = ctgid;
	e->tid = BPF_CORE_READ(child, pid);
	e->ppid = ptgid;
	e->ptid = BPF_CORE_READ(parent, pid);
	BPF_CORE_READ_STR_INTO(&e->comm, child, comm);
	bpf_ringbuf_submit(e, prompt ? 0 : BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(nsk_proc_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), zero = 0;
	struct nsk_ev_proc_exec *x;
	struct nsk_ev_proc *e;
	__u64 start, len;

	if (!nsk_is_target(tgid))
		return 0;
	x = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!x)
		return 0;
	e = &x->proc;
	__builtin_memset(e, 0, sizeof(*e));
	e->hdr.type = NSK_EV_PROC_EXEC;
	e->time = bpf_ktime_get_ns();
	e->pid = tgid;
	e->tid = BPF_CORE_READ(p, pid);
	e->ppid = old_pid;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	/* The arguments, as the exec left them at the top of the new stack
	 * (p is the task running the exec: its memory is the one read). */
	start = BPF_CORE_READ(p, mm, arg_start);
	len = BPF_CORE_READ(p, mm, arg_end) - start;
	if (len > NSK_PROC_ARGS_MAX)
		len = NSK_PROC_ARGS_MAX;
	if (!start || bpf_probe_read_user(x->args, len, (void *)start))
		len = 0;
	x->args_len = (__u32)len;
	x->exec_flags = 0;
	if (BPF_CORE_READ_BITFIELD_PROBED(bprm, secureexec))
		x->exec_flags |= NSK_EV_EXEC_SECURE;
	if (own_mntns && BPF_CORE_READ(p, nsproxy, mnt_ns, ns.inum) == own_mntns &&
	    BPF_CORE_READ(p, fs, root.dentry, d_inode, i_ino) == own_root_ino &&
	    BPF_CORE_READ(p, fs, root.dentry, d_sb, s_dev) == own_root_dev)
		x->exec_flags |= NSK_EV_EXEC_SAME_ROOT;
	len += sizeof(*x) - NSK_PROC_ARGS_MAX;
	e->hdr.size = (__u32)len;
	/* the forks before it did not wake the recorder */
	if (len <= sizeof(*x) && bpf_ringbuf_output(&proc_events, x, len, BPF_RB_FORCE_WAKEUP))
		count_lost();
	return 0;
}

/* Every thread passes here; signal->live reaches 0 for the last one (it is
 * decremented before the tracepoint), which is portable where the
 * tracepoint's group_dead argument is not. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(nsk_proc_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct nsk_ev_proc *e;
	int live;

	if (!nsk_is_target(tgid))
		return 0;
	live = BPF_CORE_READ(p, signal, live.counter);
	if (live == 0 && !nsk_all_but)
		bpf_map_delete_elem(&nsk_targets, &tgid);
	e = reserve(NSK_EV_PROC_EXIT);
	if (!e)
		return 0;
	e->pid = tgid;
	e->tid = BPF_CORE_READ(p, pid);
	e->exit_code = BPF_CORE_READ(p, exit_code);
	e->flags = live == 0 ? NSK_EV_PROC_GROUP_DEAD : 0;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(nsk_proc_rename, struct task_struct *task, const char *comm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct nsk_ev_proc *e;

	if (!nsk_is_target(tgid))
		return 0;
	e = reserve(NSK_EV_PROC_COMM);
	if (!e)
		return 0;
	e->pid = tgid;
	e->tid = BPF_CORE_READ(task, pid);
	bpf_probe_read_kernel_str(&e->comm, sizeof(e->comm), comm);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
