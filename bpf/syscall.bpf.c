// SPDX-License-Identifier: GPL-2.0
/* Syscalls of the targets: counts, errors and latency, exact, per (thread,
 * syscall); time charged to code paths by sampling; slow calls one by one.
 *
 * The per-call path is kept short, since it is paid on every call:
 * raw_tp/sys_enter notes the entry time in the thread's state, an array
 * element found through a per-CPU cache of the last thread seen there (no
 * hashing, no helper call while one thread keeps the CPU; see
 * thread_state below); raw_tp/sys_exit computes the duration and adds it
 * to the thread's slot for that number, found by index in an array (see
 * include/nusku/events/syscall.h).  Errnos, paths and slow calls go to
 * hash maps and a ring buffer only for the calls that have them.
 *
 * A user stack walk costs more than the probe (~1 us against ~0.2 us), so
 * only some calls take one: a call of sample_ns or more, charged its own
 * time; and, among shorter calls, the one in progress (in the thread's
 * syscall time) at points spaced a random [sample_ns/2, 3*sample_ns/2)
 * apart, each point charging sample_ns.  A call of d < sample_ns holds a
 * point with probability d / sample_ns, so the time expected on a path is
 * the time its calls took, and the random spacing keeps a loop of
 * alternating calls from being sampled in step with its period.  At most
 * one walk per sample_ns/2 of syscall time: well under 1% at the default
 * 100 us.  The stack is taken at sys_exit, when the duration is known:
 * the user stack is then the one the call was made from.
 *
 * The maps are double-buffered: programs write to set `active`, the
 * recorder flips it, and a poll later reads and empties the other set, so
 * nothing is read while being written and no per-key state is kept in
 * user space.
 *
 * Not the program's (counted apart, in sc_self): syscalls made by the
 * probes themselves (the uretprobe syscall, its number found by the
 * recorder in the running kernel's table) and, for a launched program,
 * whatever the launcher does in the child before its exec succeeds.
 *
 * sys_exit is absent for exit and exit_group (they are counted at entry,
 * with no duration), for a thread killed inside a call, and for calls that
 * were in progress when recording started (ignored).  A call interrupted by
 * a signal and restarted returns -ERESTART* (512..516) first: it is counted
 * as a call (the time was spent) but not as an error, and its code is kept
 * among the errnos so the report can show restarts.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "target.bpf.h"
#include "ustack.bpf.h"
#include <nusku/events/syscall.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 slow_ns = 1000000;	 /* --slow-syscall */
const volatile __u64 sample_ns = 100000; /* --syscall-sample: see above */
const volatile __u32 nr_exit = 0xffffffff;
const volatile __u32 nr_exit_group = 0xffffffff;
const volatile __u32 nr_execve = 0xffffffff;
const volatile __u32 nr_execveat = 0xffffffff;
/* The probes' own syscalls (uretprobe, uprobe); none: 0xffffffff */
const volatile __u32 nr_self0 = 0xffffffff;
const volatile __u32 nr_self1 = 0xffffffff;
/* The launched child, not the program until its exec; 0: attach mode */
const volatile __u32 launch_tgid = 0;
/* bytes of user stack to copy with a new path; 0: frame pointers only */
const volatile __u32 ustack_bytes = 0;

/* Which map set the programs write to; flipped by the recorder. */
__u32 active = 0;
/* Slots handed out so far (may pass NSK_SC_SLOTS: then they are full). */
__u32 next_slot = 0;
/* The launched child's exec has succeeded. */
__u32 launch_done = 0;

/* Aggregates by slot: set 0 in [0, NSK_SC_SLOTS), set 1 after it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * NSK_SC_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct nsk_sc_agg);
} sc_aggs SEC(".maps");

/* Slots of ended threads, handed back by the recorder. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, NSK_SC_SLOTS);
	__type(value, __u32);
} sc_free SEC(".maps");

/* The (thread, syscall) each slot belongs to, written when it is taken. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NSK_SC_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct nsk_sc_key);
} sc_owners SEC(".maps");

#define OVER_MAP(name)                                                         \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                               \
		__uint(max_entries, 8192);                                     \
		__type(key, struct nsk_sc_key);                                \
		__type(value, struct nsk_sc_agg);                              \
	} name SEC(".maps")
#define ERRNO_MAP(name)                                                        \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                               \
		__uint(max_entries, 4096);                                     \
		__type(key, struct nsk_sc_errkey);                             \
		__type(value, __u64);                                          \
	} name SEC(".maps")
#define PATH_MAP(name)                                                         \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                               \
		__uint(max_entries, 16384);                                    \
		__type(key, struct nsk_sc_pathkey);                            \
		__type(value, struct nsk_sc_pathval);                          \
	} name SEC(".maps")

/* Aggregates of the slotless: numbers >= NSK_SC_NR_SLOTS, full arrays. */
OVER_MAP(sc_over0);
OVER_MAP(sc_over1);
ERRNO_MAP(sc_errnos0);
ERRNO_MAP(sc_errnos1);
PATH_MAP(sc_paths0);
PATH_MAP(sc_paths1);

/* Stacks by hash; the recorder deletes those it has interned. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct nsk_sc_stack);
} sc_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024); /* path events are ~20 KiB */
} sc_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nsk_sc_stack);
} sc_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NSK_SC_LOST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sc_lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NSK_SC_SELF_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sc_self SEC(".maps");

/* Per thread: the call in progress, the sampling budget, the slots. */
struct nsk_sc_thread {
	__u64 enter_ts; /* 0: no call in progress that we saw start */
	__u64 id;	/* pid_tgid, kept so sys_exit need not ask again */
	__s64 budget;	/* syscall time left to the next sample point */
	__u32 enter_nr;
	__u32 launcher; /* the launched child, before its exec */
	__u32 spare;	/* a CPU's spare element: no slots, the hash maps */
	__u32 pad;
	__u16 slot[NSK_SC_NR_SLOTS]; /* see NSK_SC_SLOT_FULL */
};

/* Where a thread's state is.  Two lookups in task storage on every call
 * (one at entry, one at exit) were a tenth of what the probes cost (15-45
 * ns of ~320 here: docs/syscall.md, "Per-thread state in an array").
 * So the state of up to NSK_SC_THREADS threads is in an array, and each
 * CPU remembers the last thread it saw (the task and its start time: a
 * pid and a task_struct can be used again) with that thread's index: a
 * thread making call after call on one CPU finds its state with two array
 * lookups the verifier inlines.  Task storage holds each thread's index,
 * for when another thread ran on the CPU in between.  An index is handed
 * back when its thread ends (sched_process_exit: a thread makes no call
 * after it), so a stale per-CPU entry names a task that can no longer
 * call.
 *
 * Past NSK_SC_THREADS live threads, a thread's state between calls (struct
 * nsk_sc_spare, no slots: its calls go to the hash maps) is in task
 * storage, copied for each call into its CPU's spare element of the array,
 * after the threads' ones (the recorder sizes the array for every CPU),
 * and back.  So every pointer to a state the programs hold is into one
 * map: the verifier, which tells pointers into two maps apart, need not
 * walk the accounting twice.  (With the state in either of two maps the
 * load took 83 ms here, with one 17 ms; the state in task storage alone,
 * before, 36 ms: a recording's start waits for it.) */
#define NSK_SC_THREADS 8192
/* the array's size: NSK_SC_THREADS unless the recorder says fewer (its
 * tests of the task storage beyond: NUSKU_SYSCALL_THREADS) */
const volatile __u32 threads_max = NSK_SC_THREADS;
#define NSK_SC_CPU_NOT_TARGET 0xffffffffu /* idx: the thread is no target */
#define NSK_SC_CPU_OVERFLOW 0xfffffffeu	  /* its state is in sc_threads */

/* The threads' states, then a spare per CPU (max_entries set by the
 * recorder: threads_max + the possible CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NSK_SC_THREADS + 1);
	__type(key, __u32);
	__type(value, struct nsk_sc_thread);
} sc_tstate SEC(".maps");

/* A thread's index in sc_tstate. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} sc_tidx SEC(".maps");

/* Indexes of ended threads, and the count handed out so far. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, NSK_SC_THREADS);
	__type(value, __u32);
} sc_tfree SEC(".maps");
__u32 next_thread = 0;
/* Some thread's state went to sc_threads (the array was full). */
__u32 overflowed = 0;

/* What a thread past the array keeps between calls. */
struct nsk_sc_spare {
	__u64 enter_ts;
	__u64 id;
	__s64 budget;
	__u32 enter_nr;
	__u32 launcher;
};

/* A zeroed state, copied over an index taken again. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nsk_sc_thread);
} sc_tzero SEC(".maps");

/* The state of threads past NSK_SC_THREADS. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct nsk_sc_spare);
} sc_threads SEC(".maps");

/* The last thread seen on this CPU: its index, or NSK_SC_CPU_NOT_TARGET.
 * Most syscalls on a machine are other processes', made by one thread
 * after another on a CPU; for those the map of targets (a hash) is not
 * asked again either.  A thread never becomes a target later: a target's
 * child is put in the map by the fork before it first runs
 * (bpf/proc.bpf.c), the root of the recording before these programs are
 * attached. */
struct nsk_sc_cpu {
	__u64 task;
	__u64 start;
	__u32 idx;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nsk_sc_cpu);
} sc_cpu SEC(".maps");

static __always_inline void cpu_remember(struct nsk_sc_cpu *c,
					 struct task_struct *task, __u32 idx)
{
	if (!c)
		return;
	c->task = (__u64)task;
	c->start = task->start_time;
	c->idx = idx;
}

/* A thread past the array: its state from task storage (sp) into this
 * CPU's spare element, for this call. */
static __always_inline struct nsk_sc_thread *spare_in(struct nsk_sc_spare *sp,
						     __u32 *idx)
{
	__u32 i = threads_max + bpf_get_smp_processor_id();
	struct nsk_sc_thread *t;

	if (!sp)
		return 0;
	t = bpf_map_lookup_elem(&sc_tstate, &i);
	if (!t)
		return 0;
	t->enter_ts = sp->enter_ts;
	t->id = sp->id;
	t->budget = sp->budget;
	t->enter_nr = sp->enter_nr;
	t->launcher = sp->launcher;
	t->spare = 1;
	*idx = NSK_SC_CPU_OVERFLOW;
	return t;
}

/* And back, once the call is accounted (a lookup again: holding the task
 * storage pointer across the accounting would make the verifier walk it
 * once with and once without). */
static __always_inline void spare_out(struct task_struct *task,
				      const struct nsk_sc_thread *t, __u32 idx)
{
	struct nsk_sc_spare *sp;

	if (idx != NSK_SC_CPU_OVERFLOW)
		return;
	sp = bpf_task_storage_get(&sc_threads, task, 0, 0);
	if (!sp)
		return;
	sp->enter_ts = t->enter_ts;
	sp->id = t->id;
	sp->budget = t->budget;
	sp->enter_nr = t->enter_nr;
	sp->launcher = t->launcher;
}

/* The current thread's state, NULL when it has none (no target, or no
 * call seen yet); *idx its index (or NSK_SC_CPU_OVERFLOW), *cpu this CPU's
 * entry. */
static __always_inline struct nsk_sc_thread *
thread_state(struct task_struct *task, struct nsk_sc_cpu **cpu, __u32 *idx)
{
	__u32 zero = 0, i, *s;
	struct nsk_sc_cpu *c = bpf_map_lookup_elem(&sc_cpu, &zero);
	struct nsk_sc_thread *t;

	*cpu = c;
	*idx = NSK_SC_CPU_NOT_TARGET;
	if (c && c->task == (__u64)task && c->start == task->start_time) {
		if (c->idx == NSK_SC_CPU_NOT_TARGET)
			return 0;
		i = c->idx;
		*idx = i;
		return bpf_map_lookup_elem(&sc_tstate, &i);
	}
	s = bpf_task_storage_get(&sc_tidx, task, 0, 0);
	if (s) {
		i = *s;
		t = bpf_map_lookup_elem(&sc_tstate, &i);
		if (t) {
			*idx = i;
			cpu_remember(c, task, i);
		}
		return t;
	}
	if (!overflowed)
		return 0; /* (no thread's state is in sc_threads: no lookup) */
	return spare_in(bpf_task_storage_get(&sc_threads, task, 0, 0), idx);
}

/* A new target thread's state, zeroed: in the array while it has room. */
static __always_inline struct nsk_sc_thread *
thread_new(struct task_struct *task, struct nsk_sc_cpu *c, __u32 *idx)
{
	__u32 zero = 0, i;
	struct nsk_sc_thread *t, *z = bpf_map_lookup_elem(&sc_tzero, &zero);

	if (bpf_map_pop_elem(&sc_tfree, &i)) {
		i = threads_max; /* (the counter stops there, give or take
				  * a racing CPU, so it never wraps) */
		if (next_thread < threads_max)
			i = __sync_fetch_and_add(&next_thread, 1);
	}
	if (i < threads_max && z &&
	    !bpf_map_update_elem(&sc_tstate, &i, z, BPF_ANY) &&
	    bpf_task_storage_get(&sc_tidx, task, &i, BPF_LOCAL_STORAGE_GET_F_CREATE)) {
		t = bpf_map_lookup_elem(&sc_tstate, &i);
		if (t) {
			*idx = i;
			cpu_remember(c, task, i);
			return t;
		}
	}
	if (i < threads_max)
		bpf_map_push_elem(&sc_tfree, &i, 0); /* (not kept) */
	overflowed = 1; /* before the state exists: thread_state looks */
	return spare_in(bpf_task_storage_get(&sc_threads, task, 0,
					     BPF_LOCAL_STORAGE_GET_F_CREATE), idx);
}

static __always_inline void count_in(void *map, __u32 what)
{
	__u64 *n = bpf_map_lookup_elem(map, &what);

	if (n)
		*n += 1; /* per CPU; these programs do not nest on a CPU */
}

#define count_lost(what) count_in(&sc_lost, what)

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r < NSK_SC_HIST_BUCKETS ? r : NSK_SC_HIST_BUCKETS - 1;
}

/* Return addresses of the frameless functions the syscall was made through:
 * words between the user stack pointer and the frame pointer (the frame of
 * the innermost function that has one) that follow a call instruction
 * (x86-64: e8 rel32, or ff 15 rel32 for -fno-plt calls).  A frame-pointer
 * walk misses exactly these.  Words pointing near the stack (buffers) are
 * skipped.  A heuristic: a stale return address left in a frameless
 * function's uninitialized slots would be taken as well. */
static __always_inline void find_callers(struct pt_regs *regs,
					 struct nsk_sc_stack *st)
{
	st->ncallers = 0;
#if defined(__TARGET_ARCH_x86)
	__u64 words[NSK_SC_CALLER_WORDS], sp = PT_REGS_SP_CORE(regs);
	__u64 bp = PT_REGS_FP_CORE(regs);
	__u32 nw = NSK_SC_CALLER_WORDS, n = 0;
	__u8 code[8];
	int i;

	if (bp > sp && bp - sp < NSK_SC_CALLER_WORDS * 8)
		nw = (bp - sp) / 8;
	if (bpf_probe_read_user(words, sizeof(words), (void *)sp))
		return;
#pragma unroll
	for (i = 0; i < NSK_SC_CALLER_WORDS; i++) {
		__u64 w = words[i];

		if (i >= nw || n >= NSK_SC_MAX_CALLERS)
			break;
		if (w < 0x10000 || w >= 0x800000000000ULL)
			continue;
		if (w - sp < (1 << 20) || sp - w < (1 << 20))
			continue;
		if (bpf_probe_read_user(code, sizeof(code), (void *)(w - 8)))
			continue;
		if (code[3] == 0xe8 || (code[2] == 0xff && code[3] == 0x15))
			st->callers[n++ & (NSK_SC_MAX_CALLERS - 1)] = w;
	}
	st->ncallers = n;
#endif
}

/* FNV-1a-style mix over the stack; never NONE or FAILED. */
static __always_inline __u64 hash_stack(const struct nsk_sc_stack *st)
{
	__u64 h = 0xcbf29ce484222325ULL;
	__u32 i;

	for (i = 0; i < NSK_SC_MAX_CALLERS; i++) {
		if (i >= st->ncallers)
			break;
		h = (h ^ st->callers[i]) * 0x100000001b3ULL;
	}
	for (i = 0; i < NSK_MAX_STACK_DEPTH; i++) {
		if (i >= st->n)
			break;
		h = (h ^ st->ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	h ^= ((__u64)st->ncallers << 32) | st->n;
	return h < 2 ? h + 2 : h;
}

/* Sends a new path once, with the stack in the scratch slot and a copy of
 * the user stack for DWARF unwinding.  The record has room for the largest
 * copy (the verifier needs the size fixed); paths are few. */
__noinline int sc_emit_path(__u64 hash)
{
	struct nsk_ev_syscall_path *e;
	struct nsk_sc_stack *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&sc_scratch, &zero);
	if (!st)
		return 0;
	e = bpf_ringbuf_reserve(&sc_events, sizeof(*e) + NSK_USTACK_ROOM, 0);
	if (!e) {
		count_lost(NSK_SC_LOST_USTACK);
		return 0;
	}
	e->hdr.type = NSK_EV_SYSCALL_PATH;
	e->hdr.size = sizeof(*e) + NSK_USTACK_ROOM;
	e->time = bpf_ktime_get_ns();
	e->path = hash;
	e->pid = nsk_cur_tgid();
	e->pad = 0;
	bpf_probe_read_kernel(&e->stack, sizeof(e->stack), st);
	nsk_copy_ustack(&e->ustack, (__u8 *)(e + 1), ustack_bytes);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* The rare, heavy parts (stack walk, slow-call record) are global
 * functions: the verifier checks each once, not once per call site and
 * path, which keeps the load fast. */

/* Takes the user stack into the per-CPU scratch slot.  With intern, also
 * stores it in sc_stacks and sets *path to its hash (FAILED when it could
 * not be taken or stored).  0 when the scratch slot holds the stack. */
__noinline int sc_take_stack(struct bpf_raw_tracepoint_args *ctx,
			     __u64 regs_addr, int intern, __u64 *path)
{
	struct pt_regs *regs = (struct pt_regs *)regs_addr;
	__u32 zero = 0;
	struct nsk_sc_stack *st = bpf_map_lookup_elem(&sc_scratch, &zero);
	long n, err;
	__u64 h;

	if (!path)
		return -1;
	*path = NSK_SC_STACK_FAILED;
	if (!st)
		return -1;
	n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), BPF_F_USER_STACK);
	if (n < 0) {
		count_lost(NSK_SC_LOST_STACK);
		return -1;
	}
	st->n = n / sizeof(__u64);
	find_callers(regs, st);
	if (!intern)
		return 0;
	/* per process: each sends its own paths, with its own stack copy */
	h = hash_stack(st) ^ (nsk_cur_tgid() * 0x9e3779b97f4a7c15ULL);
	if (h < 2)
		h += 2;
	if (!bpf_map_lookup_elem(&sc_stacks, &h)) {
		err = bpf_map_update_elem(&sc_stacks, &h, st, BPF_NOEXIST);
		if (err && err != -17 /* EEXIST: another CPU stored it */) {
			count_lost(NSK_SC_LOST_STACK);
			return 0;
		}
		if (!err && ustack_bytes)
			sc_emit_path(h);
	}
	*path = h;
	return 0;
}

/* The slot of (thread, nr) in set `set`, taken at its first call. */
static __always_inline struct nsk_sc_agg *
slot_agg(struct nsk_sc_thread *t, const struct nsk_sc_key *key, __u32 set,
	 void *over)
{
	static const struct nsk_sc_agg zero;
	struct nsk_sc_agg *v;
	struct nsk_sc_key *owner;
	__u32 nr = key->nr, idx;
	__u16 s;

	if (nr < NSK_SC_NR_SLOTS && !t->spare) {
		s = t->slot[nr];
		if (!s) {
			if (bpf_map_pop_elem(&sc_free, &idx))
				idx = __sync_fetch_and_add(&next_slot, 1);
			owner = idx < NSK_SC_SLOTS
					? bpf_map_lookup_elem(&sc_owners, &idx)
					: 0;
			if (owner) {
				*owner = *key;
				s = idx + 1;
			} else {
				s = NSK_SC_SLOT_FULL;
			}
			t->slot[nr] = s;
		}
		if (s != NSK_SC_SLOT_FULL) {
			idx = (__u32)s - 1 + (set ? NSK_SC_SLOTS : 0);
			return bpf_map_lookup_elem(&sc_aggs, &idx);
		}
	}
	v = bpf_map_lookup_elem(over, key);
	if (v)
		return v;
	if (bpf_map_update_elem(over, key, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(over, key)) {
		count_lost(NSK_SC_LOST_STATS);
		return 0;
	}
	return bpf_map_lookup_elem(over, key);
}

static __always_inline void agg_add(struct nsk_sc_agg *v, __u64 d, int err)
{
	v->count++;
	v->total_ns += d;
	if (d > v->max_ns)
		v->max_ns = d;
	v->hist[log2_bucket(d)]++;
	if (err)
		v->errors++;
}

/* Charges time (and calls, estimated) to a path. */
static __always_inline void path_add(void *map, const struct nsk_sc_key *key,
				     __u64 path, __u64 time, __u64 d)
{
	static const struct nsk_sc_pathval zero;
	struct nsk_sc_pathkey pk = { .key = *key, .stack = path };
	struct nsk_sc_pathval *v = bpf_map_lookup_elem(map, &pk);

	if (!v) {
		bpf_map_update_elem(map, &pk, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(map, &pk);
		if (!v) {
			count_lost(NSK_SC_LOST_PATHS);
			return;
		}
	}
	v->time_ns += time;
	v->calls_x256 += (time << 8) / (d ? d : 1);
}

/* The time a call of d < sample_ns charges to its path: sample_ns per
 * sample point it holds (at most two: points are >= sample_ns/2 apart). */
static __always_inline __u64 sample_points(struct nsk_sc_thread *t, __u64 d)
{
	__u64 time = 0;

	t->budget -= (__s64)d;
	if (t->budget > 0)
		return 0;
	t->budget += sample_ns / 2 + bpf_get_prandom_u32() % sample_ns;
	time = sample_ns;
	if (t->budget <= 0) {
		t->budget += sample_ns / 2 + bpf_get_prandom_u32() % sample_ns;
		time += sample_ns;
	}
	return time;
}

static __always_inline void errno_add(void *map, const struct nsk_sc_key *key,
				      __u32 err)
{
	struct nsk_sc_errkey ek = { .key = *key, .err = err };
	static const __u64 one = 1;
	__u64 *n = bpf_map_lookup_elem(map, &ek);

	if (n) {
		*n += 1;
		return;
	}
	if (bpf_map_update_elem(map, &ek, &one, BPF_NOEXIST)) {
		n = bpf_map_lookup_elem(map, &ek);
		if (n)
			*n += 1;
		else
			count_lost(NSK_SC_LOST_ERRNO);
	}
}

/* A slow call, as sys_exit hands it to sc_emit_slow(). */
struct sc_call {
	__u64 regs;
	__u64 enter_ts;
	__u64 duration;
	__s64 ret;
	__u64 id; /* pid_tgid */
	__u64 path; /* its code path, or NSK_SC_STACK_* */
	__u32 nr;
	__u32 have_stack; /* the scratch slot holds its user stack */
};

/* What fd args[0] refers to, read at exit; for syscalls whose first
 * argument is not an fd the recorder ignores it. */
static __always_inline void describe_fd(struct nsk_ev_syscall_slow *e)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file **fds, *f = 0;
	const unsigned char *name;
	__u64 fd = e->args[0];
	__u32 max;

	if (fd >= (1 << 20))
		return;
	max = BPF_CORE_READ(task, files, fdt, max_fds);
	if (fd >= max)
		return;
	fds = BPF_CORE_READ(task, files, fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return;
	e->file_ino = BPF_CORE_READ(f, f_inode, i_ino);
	e->file_mode = BPF_CORE_READ(f, f_inode, i_mode);
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (bpf_probe_read_kernel_str(e->file_name, sizeof(e->file_name),
				      name) < 0)
		e->file_name[0] = 0;
	e->flags |= NSK_SC_SLOW_FILE;
}

__noinline int sc_emit_slow(struct sc_call *c)
{
	struct nsk_ev_syscall_slow *e;
	struct pt_regs *regs;
	struct nsk_sc_stack *st;
	__u32 zero = 0;

	if (!c)
		return 0;
	regs = (struct pt_regs *)c->regs;
	e = bpf_ringbuf_reserve(&sc_events, sizeof(*e), 0);
	if (!e) {
		count_lost(NSK_SC_LOST_RINGBUF);
		return 0;
	}
	e->hdr.type = NSK_EV_SYSCALL_SLOW;
	e->hdr.size = sizeof(*e);
	e->time = c->enter_ts;
	e->duration = c->duration;
	e->pid = c->id >> 32;
	e->tid = (__u32)c->id;
	e->nr = c->nr;
	e->flags = 0;
	e->ret = c->ret;
	e->path = c->path;
	/* The argument registers are saved at entry and left alone by the
	 * kernel (the return value goes to ax/x0), so they are read here,
	 * for slow calls only, rather than at every entry. */
	e->args[0] = PT_REGS_PARM1_CORE_SYSCALL(regs);
	e->args[1] = PT_REGS_PARM2_CORE_SYSCALL(regs);
	e->args[2] = PT_REGS_PARM3_CORE_SYSCALL(regs);
	e->args[3] = PT_REGS_PARM4_CORE_SYSCALL(regs);
	e->args[4] = PT_REGS_PARM5_CORE_SYSCALL(regs);
#if defined(__TARGET_ARCH_x86)
	e->args[5] = BPF_CORE_READ(regs, r9);
#else
	e->args[5] = 0;
#endif
	e->file_ino = 0;
	e->file_mode = 0;
	e->pad = 0;
	e->file_name[0] = 0;
	describe_fd(e);
	st = c->have_stack ? bpf_map_lookup_elem(&sc_scratch, &zero) : 0;
	if (st) {
		bpf_probe_read_kernel(&e->stack, sizeof(e->stack), st);
	} else {
		e->stack.n = 0;
		e->stack.ncallers = 0;
		e->flags |= NSK_SC_SLOW_NOSTACK;
	}
	/* Wake the recorder at once (unlike per-call records, a slow call
	 * is rare by construction and a wakeup costs ~1.5 us against its
	 * >= 1 ms): it names the fd from /proc while the fd is likely still
	 * open.  Below 100 us thresholds the wakeups would add up. */
	bpf_ringbuf_submit(e, slow_ns >= 100000 ? 0 : BPF_RB_NO_WAKEUP);
	return 0;
}

/* Charges one call to map set `set`. */
static __always_inline void account_to(void *ctx, __u64 regs,
				       struct nsk_sc_thread *t, __u64 id,
				       __u32 nr, long ret, __u64 d,
				       int returned, __u32 set, void *over,
				       void *errnos, void *paths)
{
	struct nsk_sc_key key = {
		.tid = (__u32)id,
		.pid = id >> 32,
		.nr = nr,
	};
	struct nsk_sc_agg *v;
	__u64 path = NSK_SC_STACK_FAILED, time;
	int err = 0, restart = 0, slow, have_stack;

	if (returned && ret < 0 && ret >= -4095) {
		restart = ret <= -512 && ret >= -516;
		err = !restart;
	}
	v = slot_agg(t, &key, set, over);
	if (v)
		agg_add(v, d, err);
	if (err || restart)
		errno_add(errnos, &key, (__u32)-ret);
	if (!returned)
		return;
	/* The rest is for the few calls that take a stack. */
	slow = d >= slow_ns;
	time = d >= sample_ns || slow ? d : sample_points(t, d);
	if (!time && !slow)
		return;
	have_stack = sc_take_stack(ctx, regs, 1, &path) == 0;
	if (time)
		path_add(paths, &key, have_stack ? path : NSK_SC_STACK_FAILED,
			 time, d);
	if (slow) {
		struct sc_call c = {
			.regs = regs,
			.enter_ts = t->enter_ts,
			.duration = d,
			.ret = ret,
			.path = have_stack ? path : NSK_SC_STACK_FAILED,
			.id = id,
			.nr = nr,
			.have_stack = have_stack,
		};

		sc_emit_slow(&c);
	}
}

/* Each set gets its own inlined copy, so every map lookup names one map
 * and the verifier can inline it. */
static __always_inline void account(void *ctx, __u64 regs,
				    struct nsk_sc_thread *t, __u64 id,
				    __u32 nr, long ret, __u64 d, int returned)
{
	if (active)
		account_to(ctx, regs, t, id, nr, ret, d, returned, 1,
			   &sc_over1, &sc_errnos1, &sc_paths1);
	else
		account_to(ctx, regs, t, id, nr, ret, d, returned, 0,
			   &sc_over0, &sc_errnos0, &sc_paths0);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(nsk_sys_enter, struct pt_regs *regs, long nr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct nsk_sc_thread *t;
	struct nsk_sc_cpu *c;
	__u32 tgid, idx;

	t = thread_state(task, &c, &idx);
	if ((__u32)nr == nr_self0 || (__u32)nr == nr_self1) {
		/* A probe's own syscall (uretprobe): the profiler's cost. */
		if (t)
			count_in(&sc_self, NSK_SC_SELF_PROBE);
		return 0;
	}
	if (!t) {
		/* First call of this thread, or not a target at all. */
		if (c && c->task == (__u64)task && c->start == task->start_time)
			return 0; /* this CPU's cache: no target */
		tgid = nsk_cur_tgid();
		if (!nsk_is_target(tgid)) {
			cpu_remember(c, task, NSK_SC_CPU_NOT_TARGET);
			return 0;
		}
		t = thread_new(task, c, &idx);
		if (!t)
			return 0;
		/* A thread keeps its ids until it execs (see sys_exit: a
		 * non-leader that execs takes the leader's tid). */
		t->id = bpf_get_current_pid_tgid();
		t->budget = sample_ns / 2 + bpf_get_prandom_u32() % sample_ns;
		t->launcher = launch_tgid && tgid == launch_tgid && !launch_done;
	}
	if ((__u32)nr == nr_exit || (__u32)nr == nr_exit_group) {
		/* No sys_exit follows: count it now. */
		if (!t->launcher)
			account(ctx, (__u64)regs, t, t->id, (__u32)nr, 0, 0, 0);
		t->enter_ts = 0;
	} else {
		t->enter_nr = (__u32)nr;
		t->enter_ts = bpf_ktime_get_ns();
	}
	spare_out(task, t, idx);
	return 0;
}

/* A thread with state ends: its slots can be reused once the recorder has
 * read their last window, its index at once.  Not for a thread that never
 * made a call. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(nsk_sc_thread_exit, struct task_struct *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct nsk_ev_syscall_gone *e;
	struct nsk_sc_thread *t;
	struct nsk_sc_cpu *c;
	__u32 idx;

	t = thread_state(task, &c, &idx);
	if (!t)
		return 0;
	e = bpf_ringbuf_reserve(&sc_events, sizeof(*e), 0);
	if (e) {
		e->hdr.type = NSK_EV_SYSCALL_GONE;
		e->hdr.size = sizeof(*e);
		e->pid = t->id >> 32;
		e->tid = (__u32)t->id;
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	} else {
		count_lost(NSK_SC_LOST_RINGBUF); /* its slots stay taken */
	}
	if (idx < threads_max) {
		if (c)
			c->task = 0;
		bpf_task_storage_delete(&sc_tidx, task);
		bpf_map_push_elem(&sc_tfree, &idx, 0);
	}
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(nsk_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct nsk_sc_thread *t;
	struct nsk_sc_cpu *c;
	__u32 nr, idx;
	__u64 d;
	int exec;

	t = thread_state(task, &c, &idx);
	if (!t || !t->enter_ts)
		return 0;
	d = bpf_ktime_get_ns() - t->enter_ts;
	nr = t->enter_nr;
	exec = (nr == nr_execve || nr == nr_execveat) && ret == 0;
	if (t->launcher) {
		/* The launcher's PATH search, its closing of the start pipe:
		 * the program starts with the exec that succeeds. */
		if (!exec) {
			t->enter_ts = 0;
			count_in(&sc_self, NSK_SC_SELF_LAUNCHER);
			spare_out(task, t, idx);
			return 0;
		}
		t->launcher = 0;
		launch_done = 1;
	}
	account(ctx, (__u64)regs, t, t->id, nr, ret, d, 1);
	t->enter_ts = 0;
	if (exec && bpf_get_current_pid_tgid() != t->id) {
		/* A non-leader exec'd and took the leader's tid: its slots
		 * name the old one.  The next call starts afresh: in place in
		 * the array (other CPUs may still hold this thread's index,
		 * which stays its own), or in task storage anew. */
		__u32 zero = 0;
		struct nsk_sc_thread *z = bpf_map_lookup_elem(&sc_tzero, &zero);

		if (idx >= threads_max) {
			bpf_task_storage_delete(&sc_threads, task);
			return 0;
		}
		if (z && !bpf_map_update_elem(&sc_tstate, &idx, z, BPF_ANY)) {
			t->id = bpf_get_current_pid_tgid();
			t->budget = sample_ns / 2 + bpf_get_prandom_u32() % sample_ns;
		}
		return 0;
	}
	spare_out(task, t, idx);
	return 0;
}
