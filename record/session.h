/* A recording session: what every signal gets from the recorder.
 *
 * The session owns the writer, the shared target map (bpf/target.bpf.h), the
 * ring buffers and the event loop, the stack and string interning and the
 * symbolizer.  A signal (cpu, alloc, offcpu, syscall, net) is a table entry
 * (struct nsk_signal) that loads its BPF object, registers its ring buffers
 * and turns BPF records into format records through the calls below.  A
 * signal never writes bytes itself and never symbolizes itself.
 */
#ifndef NUSKU_RECORD_SESSION_H
#define NUSKU_RECORD_SESSION_H

#include <stdint.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include <nusku/format.h>

#include "record/stacks/stacks.h"

struct nsk_session;

/* How a recording goes, for a caller that keeps its state where others
 * can read it (nusku record --background: controller/sessions.h). */
struct nsk_record_progress {
	int started;		/* every probe is in and the target runs */
	int final;		/* END is written: the figures are END's */
	int target_pid;		/* the launched child or the attached pid */
	const char *signals;	/* the signals recording, comma-separated */
	uint64_t elapsed_ns;	/* since the recording started */
	uint64_t records, samples, lost; /* written, CPU samples, lost events */
	uint64_t bytes;		/* handed to the file so far */
	int have_cost;		/* the BPF statistics are on (record/own.h) */
	uint64_t bpf_run_ns, bpf_runs; /* our programs' run time so far */
};

/* Options every signal may read.  Filled by the record command line. */
struct nsk_record_opts {
	const char *output;	    /* path, or "-" for stdout */
	int pid;		    /* attach to this process, 0: launch argv */
	int all;		    /* -a: every process but the recorder (no
				     * pid, no argv) */
	char **argv;		    /* the program to launch */
	int inherit;		    /* follow fork/clone/exec (default 1) */
	unsigned int freq_hz;	    /* CPU sampling frequency (default 999) */
	double duration_s;	    /* stop after this long; 0: until the target ends */
	const char *events;	    /* comma-separated signal names */
	uint64_t min_block_ns;	    /* offcpu: shortest interval recorded */
	uint64_t slow_syscall_ns;   /* syscall: slower calls recorded one by one */
	uint64_t syscall_sample_ns; /* syscall: time per path sample (0: default) */
	int syscall_asked;	    /* a syscall option was given: the default
				     * set takes the syscall signal too */
	uint64_t alloc_sample_bytes; /* alloc: 0 = every allocation */
	int alloc_uprobes;	    /* alloc: uprobes even where the sampler would do */
	int kernel_stacks;	    /* take kernel stacks (default 1) */
	int call_graph;		    /* enum nsk_call_graph */
	uint32_t stack_bytes;	    /* user stack copied for DWARF (0: default) */
	int quiet;
	int give_way;		    /* --give-way: the session's thread idle while
				     * the program runs (record/spill.h) */
	/* --continuous: output is a directory of segments (record/segments.h) */
	int continuous;
	uint64_t segment_ns;	    /* a new segment this often */
	uint64_t keep_ns, keep_bytes; /* retention; 0: none of that kind */
	/* Told once when the recording has started (p->started), then about
	 * once a second and once at the end (p->final); NULL: nobody. */
	void (*on_progress)(void *ctx, const struct nsk_record_progress *p);
	void *progress_ctx;
};

struct nsk_signal {
	const char *name; /* as given to --events */
	/* Optional: the first part of start(), open, configure (rodata, map
	 * sizes), reuse the target map and load, run in a thread of its own
	 * beside the other signals' loads (the kernel's verifier is most of
	 * a recording's start-up).  It reads the session only through
	 * nsk_session__opts, __targets_fd, __launched, __ustack_bytes,
	 * __ring_bytes and __kallsyms, and writes nothing of it.  It leaves
	 * its state in *state for start(), or NULL on error. */
	int (*load)(struct nsk_session *s, void **state);
	/* Open, configure, reuse the target map, load (unless load() did:
	 * then *state holds what it made), attach, and register ring
	 * buffers.  *state is the signal's own. */
	int (*start)(struct nsk_session *s, void **state);
	/* Called from the event loop about every 100 ms, and once with
	 * final = 1 after the target ended: drain in-kernel aggregates and
	 * loss counters into records. */
	int (*poll)(struct nsk_session *s, void *state, int final);
	/* Called when a target process execs or a new one appears (how:
	 * enum nsk_process_how: forked, exec'd, launched, attached), so a
	 * signal can attach probes to objects it maps (uprobes).  A fork is
	 * told of when its event is handled, which may be while the child is
	 * already in its own exec: what it maps then is not yet known; the
	 * exec is told of after it.  time: when it happened (the kernel's
	 * monotonic ns; an exec's, as its event said).  May be NULL. */
	int (*on_process)(struct nsk_session *s, void *state, uint32_t pid,
			  uint32_t how, uint64_t time);
	/* Detach and free; accepts NULL state. */
	void (*stop)(void *state);
};

const struct nsk_record_opts *nsk_session__opts(const struct nsk_session *s);

/* The launched child (before and after its exec) or the attached pid. */
int nsk_session__target_pid(const struct nsk_session *s);

/* The pid of the launched child (not the program until it execs), or 0
 * when attached to a running process. */
uint32_t nsk_session__launched(const struct nsk_session *s);

/* -a (every process): the recorder's own tgid, the one process that is not
 * a target, for each BPF object's rodata nsk_all_but (bpf/target.bpf.h);
 * 0 when the targets are the map's keys. */
uint32_t nsk_session__all_but(const struct nsk_session *s);

/* The fd of the shared target map, for bpf_map__reuse_fd() before load. */
int nsk_session__targets_fd(const struct nsk_session *s);

/* A signal's ring buffer size for want bytes (what the kernel may write
 * while the consumer is away, with room to spare): a power of two, 256
 * KiB to 256 MiB.  Ring buffers are kernel memory, locked, and mapped
 * twice into the recorder: sized by need, not by the largest burst. */
uint32_t nsk_session__ring_bytes(uint64_t want);

/* Consume a BPF ring buffer from the session's event loop. */
int nsk_session__add_ringbuf(struct nsk_session *s, int map_fd,
			     ring_buffer_sample_fn fn, void *ctx);

/* The same, for a ring some of whose records want an answer the kernel
 * side waits for: while the program runs the session holds records back
 * (record/spill.h), and one that asks(data, len) has them handled soon. */
int nsk_session__add_ringbuf_asking(struct nsk_session *s, int map_fd,
				    ring_buffer_sample_fn fn, void *ctx,
				    int (*asks)(const void *data, size_t len));

/* Intern a stack: kernel ips (leaf first) then user ips (leaf first) of one
 * thread of pid.  Symbolizes new addresses once, writes the STRING, MAPPING,
 * FRAME and STACK definitions it needs, and returns the stack id (never 0
 * on success; 0 when nothing could be recorded, counted as a loss). */
uint64_t nsk_session__stack(struct nsk_session *s, uint32_t pid,
			    const uint64_t *kernel_ips, uint32_t nkernel,
			    const uint64_t *user_ips, uint32_t nuser,
			    uint32_t flags /* enum nsk_stack_flags */);

/* The same for a stack taken at time (CLOCK_MONOTONIC ns): user addresses
 * resolve against the program pid was running then, so a stack drained
 * after the process exec'd still names the old program's functions. */
uint64_t nsk_session__stack_at(struct nsk_session *s, uint32_t pid,
			       uint64_t time, const uint64_t *kernel_ips,
			       uint32_t nkernel, const uint64_t *user_ips,
			       uint32_t nuser, uint32_t flags);

struct nsk_ev_ustack;

/* Whether a sample of process pid at time is the launched child's before
 * its exec: the launcher, our code (closing descriptors, the PATH search),
 * not the program's. */
int nsk_session__launcher_sample(struct nsk_session *s, uint32_t pid, uint64_t time);

/* Whether a sample was taken inside Nusku's own probes (record/own.h):
 * a kernel frame in a probe program's image (ours, or another tracer's on
 * the same hooks) or in the probe machinery, or a user leaf in the uprobes
 * page (xol: its address, 0 unknown).  The
 * caller then adds NSK_STACK_OWN to the stack's flags. */
int nsk_session__own_sample(struct nsk_session *s, const uint64_t *kernel_ips,
			    uint32_t nkernel, uint64_t user_leaf, uint64_t xol);

/* Like nsk_session__stack_at, with the copy of the user stack a signal
 * took: its registers and length (include/nusku/events/ustack.h; NULL or
 * len 0 when it took none) and the copied bytes.
 * By --call-graph, the user part is the frame-pointer walk user_ips or the
 * DWARF unwind of the copy; the stack's flags say which, and mark a walk
 * that stopped early as truncated. */
uint64_t nsk_session__stack_copied(struct nsk_session *s, uint32_t pid,
				   uint64_t time, const uint64_t *kernel_ips,
				   uint32_t nkernel, const uint64_t *user_ips,
				   uint32_t nuser,
				   const struct nsk_ev_ustack *copy,
				   const void *copy_bytes, uint32_t flags);

/* Like nsk_session__stack_copied, and says how much copy this stack needed,
 * so a signal that sees the same frame-pointer walk again can copy less:
 * *copy_needed is 0 when the frame-pointer walk was kept (no copy needed),
 * the bytes from sp that reproduce the DWARF frames (with some slack),
 * NSK_USTACK_MAX when the copy was not enough, or NSK_USTACK_UNKNOWN when
 * nothing was learned (no copy, no address space, --call-graph fp). */
uint64_t nsk_session__stack_learned(struct nsk_session *s, uint32_t pid,
				    uint64_t time, const uint64_t *kernel_ips,
				    uint32_t nkernel, const uint64_t *user_ips,
				    uint32_t nuser,
				    const struct nsk_ev_ustack *copy,
				    const void *copy_bytes, uint32_t flags,
				    uint32_t *copy_needed);

/* Opens the file at path in the session's symbolizer and loads its tables
 * now (record/stacks/symbols.h, nsk_module__warm): for a module a signal knows
 * its first events will hit, so their symbolization does not stall the
 * ring buffers then. */
int nsk_session__warm_module(struct nsk_session *s, const char *path);

struct nsk_kallsyms;
/* The recording's kernel symbols (record/stacks/kallsyms.h), shared by
 * every signal; NULL without kernel stacks or when they cannot be read.
 * Waits for the loader if it has not finished. */
struct nsk_kallsyms *nsk_session__kallsyms(struct nsk_session *s);

/* The file mapped at user address addr in process pid at time ("" when
 * none is known): which code made a call. */
const char *nsk_session__module_of(struct nsk_session *s, uint32_t pid,
				   uint64_t time, uint64_t addr);

/* Environment for a launched program, set in it just before its exec: a
 * signal's start() may add to it (the allocation sampler's LD_PRELOAD).
 * -EINVAL when nothing is launched or it already runs. */
int nsk_session__launch_env(struct nsk_session *s, const char *name,
			    const char *value);

/* Handle the process events (fork, exec, exit, mappings) the kernel has
 * written so far: before a signal uses what it keeps per process. */
void nsk_session__sync_procs(struct nsk_session *s);

/* The parent of process pid as its fork was told (no /proc read; a
 * forked process is told of with it), 0 when not known.  Main thread. */
uint32_t nsk_session__parent(struct nsk_session *s, uint32_t pid);

/* What the event of pid's latest exec said (NSK_EV_EXEC_* of
 * nusku/events/proc.h) in *flags: 1, or 0 when no exec event told of it
 * (*flags 0).  Main thread. */
int nsk_session__exec_flags(struct nsk_session *s, uint32_t pid, uint32_t *flags);

/* Bytes of user stack a signal should copy for this recording: 0 under
 * --call-graph fp. */
uint32_t nsk_session__ustack_bytes(const struct nsk_session *s);

/* For a signal whose kernel side learns from what the session's thread
 * makes of its records, while they come by the thousand (every allocation
 * recorded: the kernel copies each new stack until told it need not,
 * record/alloc.c): the session's thread then does not give way to the
 * program (record/spill.h), or the copies it has not yet answered for
 * would fill the ring buffer.  From a signal's load(). */
void nsk_session__keep_pace(struct nsk_session *s);

/* A signal that must act on a new process before it runs far (allocator
 * uprobes for a process the sampler cannot reach): from now on every
 * fork, exec and exit wakes the recorder at once, which costs each of
 * them an interrupt to another CPU (bpf/proc.bpf.c).  Main thread, or a
 * signal's start(). */
void nsk_session__prompt_procs(struct nsk_session *s);

/* Whether the main thread must handle a target's exec at once (> 0: its
 * on_process runs before the new program runs far) or may wait for its
 * next look (0).  Runs on the process watcher's thread as the exec is told
 * of, with the ctx given, the pid, the exec's time (on_process gets the
 * same) and what the kernel side saw of it (exec_flags, NSK_EV_EXEC_* of
 * nusku/events/proc.h): no state of the main thread. */
typedef int (*nsk_session_exec_check_fn)(void *ctx, uint32_t pid, uint64_t time,
					 uint32_t exec_flags);

/* Every exec of a target is checked with fn from now on (fn NULL: none),
 * instead of waking the main thread for each.  Main thread, or a signal's
 * start(); ctx must outlive the recording's processes (the signal's
 * stop() clears it first).
 *
 * The kernel side passes an exec itself (NSK_EV_EXEC_PASSED: fn then need
 * not read /proc, and the watcher is not woken for it) when its program's
 * file was told to nsk_session__exec_passes, its environment's LD_PRELOAD
 * names preload (NULL: none passes), it runs in the recorder's root and
 * not in secure mode. */
void nsk_session__check_execs(struct nsk_session *s, nsk_session_exec_check_fn fn,
			      void *ctx, const char *preload);

/* From fn's thread: the program file of status st passed the check; its
 * later execs may pass in the kernel (above). */
void nsk_session__exec_passes(struct nsk_session *s, const struct stat *st);

/* Intern a string; writes its STRING record the first time.  0 on error. */
uint64_t nsk_session__string(struct nsk_session *s, const char *str);

/* Append a record to the recording. */
int nsk_session__emit(struct nsk_session *s, const struct nsk_record *rec);

/* Append a META record: key = value. */
int nsk_session__meta(struct nsk_session *s, const char *key, const char *value);

/* Count lost events of a source ("cpu.ringbuf", "alloc.stack", ...); the
 * session writes them as NSK_REC_LOSS records and shows them in the status
 * line. */
void nsk_session__lost(struct nsk_session *s, const char *source,
		       uint64_t count);

/* Reads a BPF per-CPU array of n __u64 loss counters (key k counts losses
 * of sources[k]; a NULL source is skipped) and reports what grew since
 * seen[k], which it updates: the poll() of every signal that counts its
 * drops in the kernel. */
int nsk_session__drain_lost(struct nsk_session *s, int map_fd,
			    const char *const *sources, uint32_t n,
			    uint64_t *seen);

/* CLOCK_MONOTONIC now, in ns: the clock of bpf_ktime_get_ns(). */
uint64_t nsk_session__now(void);

#endif
