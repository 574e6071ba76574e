// SPDX-License-Identifier: GPL-2.0
/* Process life of the targets: fork, exec, exit, rename.
 *
 * Following children happens here, in the kernel: when a target forks, the
 * child's tgid is put in nsk_targets before the child first runs, so no
 * sample, allocation or syscall of the child can be missed (user space
 * would always be late).  Each event also goes to a ring buffer; an exec's
 * carries the new program's arguments.  An exec of a file the recorder
 * does not hold yet wakes the recorder's watcher (only it:
 * record/procs/proc_watch.h), which then holds the new program's file
 * while the process lives (a program gone a millisecond later, its binary
 * deleted or in a mount namespace of its own, is still read); the kernel
 * has written the file's mapping record by then.  An exec of a file held
 * already wakes it only for the exec check, when that runs and the exec
 * does not pass it here (exec_wakes); otherwise the watcher reads it at
 * its next look (50 ms at most).  A fork wakes it only
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

/* Files the recorder holds open, by identity (record/procs/proc_watch.c
 * writes them): an exec of one of them need not wake the watcher, whose
 * prompt look was only to hold the file before a short-lived process is
 * gone and its file deleted.  A build runs the same cc1 and as again and
 * again: the wakeup was ~40 us of a fork and exec of /bin/true. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct nsk_exe_id);
	__type(value, __u32);
} exe_held SEC(".maps");

/* Programs whose files passed the exec check (nsk_proc__exec_passes). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct nsk_exe_id);
	__type(value, __u32);
} exe_passed SEC(".maps");

/* Set while an exec check runs (nsk_proc__set_exec_check): an exec wakes
 * the watcher for it unless it passes here, which asks that its
 * environment preloads preload_path (written first). */
__u32 exec_check_on;
char preload_path[NSK_PRELOAD_PATH_MAX];

/* The environment of an exec, searched (one per CPU, as exec_scratch). */
struct env_scratch {
	char env[NSK_EXEC_ENV_MAX + 16];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct env_scratch);
} env_scratch SEC(".maps");

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

/* The string kfuncs (Linux 6.17): where they are missing every exec
 * under a check wakes the watcher, as before. */
extern int bpf_strnlen(const char *s__ign, size_t count) __ksym __weak;
extern int bpf_strstr(const char *s1__ign, const char *s2__ign) __ksym __weak;
#ifndef bpf_ksym_exists
#define bpf_ksym_exists(sym) (!!(sym))
#endif

struct env_walk {
	__u32 pos, len;
	int found;
};

/* One string of the environment: LD_PRELOAD naming preload_path ends the
 * walk found, as record/alloc_sampler.c's env_preloads would. */
static long env_one(__u32 i, void *data)
{
	struct env_walk *w = data;
	struct env_scratch *e;
	__u32 zero = 0, pos = w->pos;
	const char *str;
	int n;

	if (pos >= w->len || pos >= NSK_EXEC_ENV_MAX)
		return 1;
	e = bpf_map_lookup_elem(&env_scratch, &zero);
	if (!e)
		return 1;
	str = &e->env[pos];
	if (!bpf_strncmp(str, 11, "LD_PRELOAD=") && bpf_strstr(str + 11, preload_path) >= 0) {
		w->found = 1;
		return 1;
	}
	n = bpf_strnlen(str, w->len - pos);
	if (n < 0)
		return 1;
	w->pos = pos + (__u32)n + 1;
	return 0;
}

/* Whether the environment p's exec left preloads preload_path (no when it
 * is NSK_EXEC_ENV_MAX bytes or more: not searched). */
static __always_inline int env_preloads(struct task_struct *p)
{
	struct env_walk w = { 0 };
	struct env_scratch *e;
	__u64 start, len;
	__u32 zero = 0;

	if (!bpf_ksym_exists(bpf_strnlen) || !bpf_ksym_exists(bpf_strstr))
		return 0;
	e = bpf_map_lookup_elem(&env_scratch, &zero);
	if (!e)
		return 0;
	start = BPF_CORE_READ(p, mm, env_start);
	len = BPF_CORE_READ(p, mm, env_end) - start;
	if (!start || !len || len >= NSK_EXEC_ENV_MAX)
		return 0;
	if (bpf_probe_read_user(e->env, len, (void *)start))
		return 0;
	e->env[len] = 0; /* the exec ended it with one; this is a bound */
	w.len = (__u32)len;
	bpf_loop(NSK_EXEC_ENV_MAX / 2, env_one, &w, 0);
	return w.found;
}

/* Newer kernels keep an inode's times as seconds and nanoseconds apart
 * (6.11); older ones in a timespec64, named __i_ctime from 6.6. */
struct inode___split {
	time64_t i_ctime_sec;
	u32 i_ctime_nsec;
} __attribute__((preserve_access_index));
struct inode___hidden {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));
struct inode___plain {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));

/* The identity of the file an exec runs; 0 when it cannot be had. */
static __always_inline int exe_id(struct linux_binprm *bprm, struct nsk_exe_id *id)
{
	struct inode *ino = BPF_CORE_READ(bprm, file, f_inode);

	if (!ino)
		return 0;
	id->ino = BPF_CORE_READ(ino, i_ino);
	id->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	if (bpf_core_field_exists(struct inode___split, i_ctime_sec)) {
		struct inode___split *t = (void *)ino;

		id->ctime_sec = BPF_CORE_READ(t, i_ctime_sec);
		/* the top bit is a flag of multigrain times (6.13,
		 * I_CTIME_QUERIED); nanoseconds need 30 */
		id->ctime_nsec = BPF_CORE_READ(t, i_ctime_nsec) & 0x3fffffffu;
	} else if (bpf_core_field_exists(struct inode___hidden, __i_ctime)) {
		struct inode___hidden *t = (void *)ino;

		id->ctime_sec = BPF_CORE_READ(t, __i_ctime.tv_sec);
		id->ctime_nsec = (__u32)BPF_CORE_READ(t, __i_ctime.tv_nsec);
	} else if (bpf_core_field_exists(struct inode___plain, i_ctime)) {
		struct inode___plain *t = (void *)ino;

		id->ctime_sec = BPF_CORE_READ(t, i_ctime.tv_sec);
		id->ctime_nsec = (__u32)BPF_CORE_READ(t, i_ctime.tv_nsec);
	} else {
		return 0;
	}
	return 1;
}

/* Whether the exec in x (its flags so far) must wake the watcher now:
 * its file is not held yet, or an exec check runs that it does not pass
 * here (then the check reads /proc while the process lives).  Sets
 * NSK_EV_EXEC_PASSED. */
static __always_inline int exec_wakes(struct task_struct *p, struct linux_binprm *bprm,
				      struct nsk_ev_proc_exec *x)
{
	struct nsk_exe_id id = { 0 };
	int held;

	if (!exe_id(bprm, &id))
		return 1;
	held = bpf_map_lookup_elem(&exe_held, &id) != 0;
	if (!*(volatile __u32 *)&exec_check_on)
		return !held || prompt;
	if (!(x->exec_flags & NSK_EV_EXEC_SECURE) && (x->exec_flags & NSK_EV_EXEC_SAME_ROOT) &&
	    bpf_map_lookup_elem(&exe_passed, &id) && env_preloads(p))
		x->exec_flags |= NSK_EV_EXEC_PASSED;
	return !held || prompt || !(x->exec_flags & NSK_EV_EXEC_PASSED);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(nsk_proc_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), zero = 0;
	struct nsk_ev_proc_exec *x;
	struct nsk_ev_proc *e;
	__u64 start, len, wake;

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
	wake = exec_wakes(p, bprm, x) ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	len += sizeof(*x) - NSK_PROC_ARGS_MAX;
	e->hdr.size = (__u32)len;
	/* the forks before it did not wake the recorder either */
	if (len <= sizeof(*x) && bpf_ringbuf_output(&proc_events, x, len, wake))
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
