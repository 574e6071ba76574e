/* The syscall signal: what bpf/syscall.bpf.c shares with record/syscall.c.
 *
 * Three paths out of the kernel.
 *
 * Aggregates, exact, per (thread, syscall): count, errors, total and
 * largest time and a log2 histogram in struct nsk_sc_agg.  A thread's
 * first call of a number takes a slot in an array (its owner, a struct
 * nsk_sc_key, goes into a second array), and every later call updates
 * that slot: an array lookup, no hashing.  The arrays are mmapped by the
 * recorder, which reads the used slots each window.  When a thread ends
 * (struct nsk_ev_syscall_gone), the recorder hands its slots back through
 * a queue map once their last window is read.  Past NSK_SC_SLOTS slots
 * in use the same aggregates go to a hash map keyed by the owner.
 *
 * Code paths, sampled: a call of sample_ns or more takes its user stack
 * and is charged to it exactly; shorter calls take one at points spaced a
 * random [sample_ns/2, 3*sample_ns/2) of the thread's syscall time apart,
 * each point charging sample_ns (struct nsk_sc_pathval).  The expected
 * time charged to a path is the time its calls took.  A path is a 64-bit
 * hash of the stack; the stack itself sits in a hash map keyed by that
 * hash (stack-map ids collide).  A frame-pointer walk that starts in a
 * frameless libc wrapper skips the function that called the wrapper, so
 * the BPF side also looks for their return addresses on the user stack
 * below the frame pointer ("callers", see NSK_SC_CALLER_WORDS) and the
 * recorder puts them back between the leaf and the rest of the walk.
 * Unless --call-graph fp, a path seen for the first time in a process also
 * goes through the ring buffer, once, as struct nsk_ev_syscall_path with a
 * copy of the user stack, for DWARF unwinding (record/stacks/ustack.c).
 *
 * Slow calls, one by one: calls of --slow-syscall or more go through a
 * ring buffer as struct nsk_ev_syscall_slow, with their arguments and
 * their user stack.
 */
#ifndef NUSKU_EVENTS_SYSCALL_H
#define NUSKU_EVENTS_SYSCALL_H

#include "nusku/events/common.h"
#include "nusku/events/ustack.h"

#define NSK_EV_SYSCALL_PATH (NSK_EV_SYSCALL_SLOW + 1)
#define NSK_EV_SYSCALL_GONE (NSK_EV_SYSCALL_SLOW + 2)

/* Latency histogram: bucket i counts calls of [2^i, 2^(i+1)) ns; the last
 * bucket also holds everything longer (2^39 ns is about 9 minutes). */
#define NSK_SC_HIST_BUCKETS 40

/* Syscall numbers below this get a per-thread slot index; higher numbers
 * (x32, unknown) go to the hash map. */
#define NSK_SC_NR_SLOTS 512

/* (thread, syscall) slots in the arrays; per set of the double buffer. */
#define NSK_SC_SLOTS 16384
/* A thread's slot index for a number: 0 none yet, NSK_SC_SLOT_FULL the
 * arrays were full (use the hash map), else the slot + 1. */
#define NSK_SC_SLOT_FULL 0xffff

/* Words of user stack, from the stack pointer up to the frame pointer,
 * searched for return addresses of frameless functions (syscall wrappers,
 * and wrappers of wrappers such as nanosleep -> clock_nanosleep). */
#define NSK_SC_CALLER_WORDS 16
#define NSK_SC_MAX_CALLERS 4

/* stack values: a hash of the stack (>= 2), or one of these. */
#define NSK_SC_STACK_NONE 0   /* no stack taken */
#define NSK_SC_STACK_FAILED 1 /* the walk failed: path unknown */

/* Kernel-side loss counters (an array map indexed by these). */
#define NSK_SC_LOST_STATS 0   /* hash map full: calls not aggregated */
#define NSK_SC_LOST_ERRNO 1   /* errno map full: errno of a failure not kept */
#define NSK_SC_LOST_STACK 2   /* stack walk failed: path unknown */
#define NSK_SC_LOST_RINGBUF 3 /* slow event dropped: ring buffer full */
#define NSK_SC_LOST_USTACK 4  /* path event dropped: the stack stays the
			       * frame-pointer walk with its callers */
#define NSK_SC_LOST_PATHS 5   /* path map full: a sample's time not charged */
#define NSK_SC_LOST_MAX 6

/* Counters of what the programs saw but did not charge to the program
 * (an array map indexed by these): the profiler's own cost. */
#define NSK_SC_SELF_PROBE 0    /* syscalls made by probes (uretprobe) */
#define NSK_SC_SELF_LAUNCHER 1 /* the launcher's calls before the exec */
#define NSK_SC_SELF_MAX 2

/* Owner of a slot, key of the hash map. */
struct nsk_sc_key {
	__u32 tid;
	__u32 pid;
	__u32 nr;
	__u32 pad;
};

_Static_assert(sizeof(struct nsk_sc_key) == 16, "nsk_sc_key size");

/* One (thread, syscall) over a window.  32-bit counts: a window is about
 * a second, and a thread makes at most a few million calls in one. */
struct nsk_sc_agg {
	__u32 count;
	__u32 errors;
	__u64 total_ns;
	__u64 max_ns;
	__u32 hist[NSK_SC_HIST_BUCKETS];
};

_Static_assert(sizeof(struct nsk_sc_agg) == 24 + 4 * NSK_SC_HIST_BUCKETS,
	       "nsk_sc_agg size");

struct nsk_sc_errkey {
	struct nsk_sc_key key;
	__u32 err; /* positive errno, or 512..516 for a call to be restarted */
	__u32 pad;
};

_Static_assert(sizeof(struct nsk_sc_errkey) == 24, "nsk_sc_errkey size");

struct nsk_sc_pathkey {
	struct nsk_sc_key key;
	__u64 stack; /* hash, see NSK_SC_STACK_* */
};

_Static_assert(sizeof(struct nsk_sc_pathkey) == 24, "nsk_sc_pathkey size");

/* Time and calls charged to a path over a window. */
struct nsk_sc_pathval {
	__u64 time_ns;
	__u64 calls_x256; /* estimated calls, in 1/256ths */
};

_Static_assert(sizeof(struct nsk_sc_pathval) == 16, "nsk_sc_pathval size");

/* A user stack as the BPF side took it (value of the stacks map). */
struct nsk_sc_stack {
	__u32 n;	/* ips */
	__u32 ncallers; /* callers */
	/* Return addresses found between the stack and frame pointers,
	 * innermost first: they go between ips[0] and ips[1]. */
	__u64 callers[NSK_SC_MAX_CALLERS];
	__u64 ips[NSK_MAX_STACK_DEPTH];
};

_Static_assert(sizeof(struct nsk_sc_stack) ==
		       8 + 8 * NSK_SC_MAX_CALLERS + 8 * NSK_MAX_STACK_DEPTH,
	       "nsk_sc_stack size");

struct nsk_ev_syscall_slow {
	struct nsk_ev_header hdr; /* NSK_EV_SYSCALL_SLOW */
	__u64 time;		  /* entry, CLOCK_MONOTONIC ns */
	__u64 duration;
	__u32 pid;
	__u32 tid;
	__u32 nr;
	__u32 flags; /* NSK_SC_SLOW_* */
	__s64 ret;
	__u64 path; /* the code path (hash) of its stack, or NSK_SC_STACK_* */
	__u64 args[6];
	/* The file open on fd args[0] at exit, if any (NSK_SC_SLOW_FILE): the
	 * recorder prefers /proc/PID/fd/N when it still names the same inode,
	 * and falls back on these once the fd is closed. */
	__u64 file_ino;
	__u32 file_mode; /* i_mode: S_IFSOCK, S_IFIFO, S_IFREG, ... */
	__u32 pad;
	char file_name[48]; /* the dentry's own name */
	struct nsk_sc_stack stack;
};

#define NSK_SC_SLOW_NOSTACK 1u /* the user stack could not be taken */
#define NSK_SC_SLOW_FILE 2u    /* file_* describe args[0] as an fd */

_Static_assert(sizeof(struct nsk_ev_syscall_slow) ==
		       8 + 8 * 2 + 4 * 4 + 8 + 8 + 8 * 6 + 8 + 8 + 48 +
			       sizeof(struct nsk_sc_stack),
	       "nsk_ev_syscall_slow size");

/* A thread that had slots ended: they are free once read. */
struct nsk_ev_syscall_gone {
	struct nsk_ev_header hdr; /* NSK_EV_SYSCALL_GONE */
	__u32 pid;
	__u32 tid;
};

_Static_assert(sizeof(struct nsk_ev_syscall_gone) == 16, "nsk_ev_syscall_gone size");

/* A code path the first time a process takes it (see above). */
struct nsk_ev_syscall_path {
	struct nsk_ev_header hdr; /* NSK_EV_SYSCALL_PATH */
	__u64 time;
	__u64 path; /* its hash */
	__u32 pid;
	__u32 pad;
	struct nsk_sc_stack stack;
	struct nsk_ev_ustack ustack; /* ustack.len bytes of stack follow */
};

_Static_assert(sizeof(struct nsk_ev_syscall_path) ==
		       8 + 8 * 3 + sizeof(struct nsk_sc_stack) +
			       sizeof(struct nsk_ev_ustack),
	       "nsk_ev_syscall_path size");

#endif
