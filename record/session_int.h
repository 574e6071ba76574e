/* The inside of a recording session, shared by the files of record/ that
 * make it up (session.c, target.c, proc.c, stacks.c, status.c).  Signals
 * see only record/session.h. */
#ifndef NUSKU_RECORD_SESSION_INT_H
#define NUSKU_RECORD_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

#include <nusku/outfile.h>

#include "record/session.h"

#include "record/sink.h"

struct nsk_intern;
struct nsk_symbols;
struct nsk_stacks;
struct nsk_spill;
struct nsk_aspace;
struct proc_bpf;
struct nsk_proc_watch;
struct nsk_own;
struct nsk_segments;

#define NSK_SESSION_MAX_SIGNALS 16
#define NSK_SESSION_MAX_LOSSES 64

struct nsk_loss {
	char *source;
	uint64_t source_id;
	uint64_t pending, total;
	uint64_t since; /* time of the first pending loss */
};

struct nsk_proc {
	uint32_t pid, ppid;
	int exited;
	uint64_t exit_at; /* -a: when, for its release (procs/proc.c) */
	struct nsk_aspace *as; /* newest program; ->older before */
	char *cmdline;	       /* as recorded (a fork's child inherits it) */
	uint32_t cmdline_len;
	uint32_t exec_flags;   /* what its exec's event said (NSK_EV_EXEC_*), */
	int exec_told;	       /* when one did */
};

struct nsk_session {
	struct nsk_record_opts opts;
	struct nsk_writer *w;
	int out_fd;
	struct nsk_outfile out; /* -o FILE: made safely, renamed into place */
	struct nsk_segments *seg; /* --continuous: w is its current segment's */
	int targets_fd;
	struct nsk_spill *spill;     /* the signals' ring buffers (spill.h) */
	int nrings;
	struct nsk_proc_watch *proc_watch; /* process events, handled first */
	int kernel_maps;	/* mappings come from the kernel (mmap_events.h) */
	uint64_t kernel_maps_lost; /* ... and some of its records were lost */
	int in_proc_sync;

	/* strings: bytes -> id, counting from 1 (the sink's, for all rooms) */
	struct nsk_intern *strings;
	uint64_t next_string;
	struct nsk_sink sink;	   /* over the writer (session_stacks.c) */
	/* procs/ tells of a new process or program here (the session tells
	 * the signals) */
	void (*on_new_process)(struct nsk_session *s, uint32_t pid, uint32_t how,
			       uint64_t time);
	struct nsk_stacks *stk;	   /* the stack room (record/stacks/stacks.h) */
	struct nsk_symbols *syms;  /* its symbolizer, where procs/ makes modules */
	struct nsk_own *own; /* our programs, their run time (own.h) */
	uint64_t emitted; /* records, for ticking the writer in long drains */

	/* processes: pid -> index + 1 into procs */
	struct nsk_intern *proc_index;
	struct nsk_proc **procs;
	size_t nprocs;
	/* -a: processes gone, oldest first, whose address spaces are let go
	 * EXITED_GRACE_NS after their exit (procs/proc.c) */
	struct nsk_exited {
		uint32_t pid;
		uint64_t at;
	} *exited;
	size_t exited_head, exited_n, exited_cap;
	struct proc_bpf *proc_skel;
	int proc_lost_fd;
	uint64_t proc_lost_seen;

	struct nsk_session_sig {
		const struct nsk_signal *sig;
		void *state;
		struct nsk_session *s;
		pthread_t loader; /* running sig->load, while loading */
		int loading, load_err;
	} sigs[NSK_SESSION_MAX_SIGNALS];
	int nsigs;
	int abandoned; /* a load still runs: the session is never freed */

	struct nsk_loss losses[NSK_SESSION_MAX_LOSSES];
	int nlosses;

	/* the target */
	pid_t root;	  /* launched child or attached pid */
	uint64_t root_exec_ns; /* the launched child's first exec (0: not yet
				* seen): before it, the child runs our code */
	int launched;
	int go_fd;	  /* launch: write end of the pipe the child waits on */
	char *launch_env; /* NAME=value\0... for the child, sent with the go */
	size_t launch_env_len;
	int pidfd;
	int root_status;  /* wait status of a launched child */
	int root_done;
	int reaped;
	int keep_pace;	  /* nsk_session__keep_pace: never give way */

	uint64_t start_ns;
	uint64_t records, samples, lost_total, unresolved;
	int err;	/* first write error */
	char errmsg[512];
	int status_tty;
	uint64_t status_next;
	uint64_t progress_next;
};

/* Remember a one-line error for the CLI (first one wins); returns err. */
int nsk_session__fail(struct nsk_session *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* target.c: launch (stopped until nsk_target__release) or attach. */
int nsk_target__prepare(struct nsk_session *s);
int nsk_target__release(struct nsk_session *s);
/* After the recording: stop a launched child still running, reap it. */
void nsk_target__finish(struct nsk_session *s, int terminate);
/* The recording ends: every process leaves the target map, so no probe
 * writes another record of it (a fork racing with this is caught by a
 * second sweep). */
void nsk_target__forget_all(struct nsk_session *s);

/* proc.c: the process table and proc.bpf.c. */
int nsk_proc__start(struct nsk_session *s);
void nsk_proc__poll(struct nsk_session *s, int final);
/* Handle the process events waiting in the kernel, so a stack about to be
 * resolved finds the fork or exec that made its process. */
void nsk_proc__sync(struct nsk_session *s);
/* From now on each process event wakes the recorder (bpf/proc.bpf.c). */
void nsk_proc__prompt(struct nsk_session *s);
/* The check of each exec (nsk_session__check_execs), and the files that
 * passed it (nsk_session__exec_passes). */
void nsk_proc__set_exec_check(struct nsk_session *s, nsk_session_exec_check_fn fn,
			      void *ctx, const char *preload);
void nsk_proc__exec_passes(struct nsk_session *s, const struct stat *st);
void nsk_proc__stop(struct nsk_session *s);
struct nsk_proc *nsk_proc__get(struct nsk_session *s, uint32_t pid,
			       int create);
/* A new process appeared (how: enum nsk_process_how): write its PROCESS
 * and THREAD records, read its maps, tell the signals. */
int nsk_proc__announce(struct nsk_session *s, uint32_t pid, uint32_t ppid,
		       uint32_t how, uint64_t time);
/* The address space of pid at time (reads maps if pid is new). */
struct nsk_aspace *nsk_proc__aspace(struct nsk_session *s, uint32_t pid,
				    uint64_t time);
/* Re-read the maps of pid's newest program after a miss of an address
 * taken at time (UINT64_MAX: unknown, then rate-limited); NULL when that
 * cannot help. */
struct nsk_aspace *nsk_proc__reread(struct nsk_session *s, uint32_t pid,
				    uint64_t time);
void nsk_proc__free_all(struct nsk_session *s);

/* session_stacks.c: the sink and the stack room, made for s. */
int nsk_session__stacks_init(struct nsk_session *s);
/* With kernel stacks on and no kernel symbols to name them (kallsyms
 * hidden or unreadable): one warning line and META kernel_stacks.error. */
int nsk_session__check_kallsyms(struct nsk_session *s);

/* session_continuous.c: --continuous over record/segments.h.  open makes
 * the directory and the first segment (s->w is then the segment's);
 * commit names it once its header is written; tick begins a new segment
 * when the current one has lasted --segment; close ends the last one
 * after END. */
int nsk_session__continuous_open(struct nsk_session *s);
int nsk_session__continuous_commit(struct nsk_session *s);
int nsk_session__continuous_tick(struct nsk_session *s, uint64_t now);
int nsk_session__continuous_close(struct nsk_session *s);
/* META cost.* of the segment that closes: what the recording cost since
 * the last one closed (instead of the whole recording's, at the end). */
void nsk_session__continuous_cost(struct nsk_session *s);
/* The loss records pending, written now (session.c). */
void nsk_session__flush_losses(struct nsk_session *s, uint64_t now);

/* status.c: the one-line live status on a terminal, and opts.on_progress
 * (about once a second; started: the first call, once the probes are in). */
void nsk_status__update(struct nsk_session *s, uint64_t now, int final);
void nsk_status__progress(struct nsk_session *s, uint64_t now, int started,
			  int final);

/* Read a small /proc file; returns bytes read (NUL-terminated), -errno. */
ssize_t nsk_read_file(const char *path, char *buf, size_t size);

#endif
