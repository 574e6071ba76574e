/* Background sessions: recordings that outlive their terminal (issue 16).
 *
 * A session is three files in a per-user runtime directory
 * (session_dir.c): NAME.state, what the recorder says about itself
 * (session_state.c: written atomically, 0600, about once a second);
 * NAME.lock, on which the recorder holds an exclusive flock(2) for as long
 * as it lives; and NAME.log, its stderr (and a launched program's stdout
 * and stderr).  The lock is what tells a live recorder from a dead one: the
 * kernel drops it when the process dies, however it dies, so a pid reused
 * by another process is never taken for the recorder.  A session whose
 * lock is free and whose state has no end marker is crashed.
 *
 * sessions.c lists them (state, and for a crashed one the figures of its
 * file, read through the format/ reader: session_figures.c);
 * background.c starts one (nusku record --background); cmd_sessions.c and
 * cmd_stop.c are the commands.
 */
#ifndef NUSKU_CONTROLLER_SESSIONS_H
#define NUSKU_CONTROLLER_SESSIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NSK_SESSION_NAME_MAX 64

/* What the recorder writes (phase: where it is). */
enum nsk_session_phase {
	NSK_PHASE_STARTING = 0, /* probes going in */
	NSK_PHASE_RUNNING = 1,
	NSK_PHASE_ENDED = 2,	/* END written, the file closed: the end marker */
	NSK_PHASE_FAILED = 3,	/* stopped by an error (error says which) */
};

/* What a reader makes of it. */
enum nsk_session_status {
	NSK_SESSION_STARTING,
	NSK_SESSION_RUNNING,
	NSK_SESSION_ENDED,
	NSK_SESSION_CRASHED,
};

struct nsk_session_state {
	char name[NSK_SESSION_NAME_MAX + 1];
	int phase;		     /* enum nsk_session_phase */
	int pid;		     /* the recorder */
	unsigned long long pid_start; /* its start, /proc/PID/stat field 22 */
	int target_pid;		     /* launched or attached (0: not yet) */
	int all;		     /* record -a: every process is its target */
	char target[512];	     /* "pid 1234 (comm)" or the command line */
	char signals[256];	     /* comma-separated */
	char file[4096];	     /* the recording, absolute */
	char log[4096];		     /* the recorder's stderr, absolute */
	double started;		     /* Unix time, seconds */
	double updated;		     /* when this state was written */
	/* the recorder's figures as of updated (final: END's own) */
	int final;
	uint64_t elapsed_ns, records, samples, lost, bytes;
	int have_cost;
	uint64_t bpf_run_ns, bpf_runs; /* its BPF programs' run time */
	uint64_t cpu_ns;	       /* the recorder process's own CPU time */
	uint64_t startup_cpu_ns;       /* ... of it before the recording started */
	uint64_t max_rss_kb;	       /* and its peak RSS */
	int exit_status;	       /* phase ENDED: what nusku record exits with */
	char error[320];	       /* phase FAILED: the one-line error */
	/* a crashed session's file as last read (sessions.c): its size and
	 * mtime then, and what it held; records, lost, elapsed_ns are the
	 * file's once checked is set */
	int checked;
	uint64_t checked_bytes, checked_mtime_ns, checked_dropped;
	int checked_ended;
};

/* A session as listed: its state, what it is now, and its file's figures
 * when they were read from the file (crashed ones; figures_from_file). */
struct nsk_session_info {
	struct nsk_session_state st;
	int status;		     /* enum nsk_session_status */
	int64_t file_bytes;	     /* the file's size now, -1: gone */
	int figures_from_file;	     /* records, lost, elapsed_ns: the file's */
	int file_ended;		     /* the file holds END */
	uint64_t dropped_bytes;	     /* the incomplete tail a reader skips */
	uint64_t cost_elapsed_ns;    /* the time the cost figures cover */
};

/* ---- the directory (session_dir.c) ------------------------------------- */

/* Opens this user's session directory, creating it (0700) when create is
 * set: $XDG_RUNTIME_DIR/nusku, else /run/user/UID/nusku, else
 * /tmp/nusku-UID.  It must be a directory (not a symbolic link) owned by
 * this user with no access for others; anything else is refused.  Returns
 * an O_DIRECTORY fd and its path in path, or a negative errno with one
 * line in err (-ENOENT: none yet and create not set). */
int nsk_session_dir__open(int create, char *path, size_t pathlen, char *err,
			  size_t errlen);

/* 1 when name may name a session: 1-64 of [A-Za-z0-9._-], not starting
 * with '.' or '-'. */
int nsk_sessions__name_ok(const char *name);

/* ---- state and lock (session_state.c) ----------------------------------- */

/* Writes NAME.state atomically (a 0600 temporary file renamed over it);
 * updated is set to now.  -errno. */
int nsk_session_state__write(int dirfd, struct nsk_session_state *st);
/* Reads NAME.state; -ENOENT when there is none, -EBADMSG when it is not
 * a state file (a regular file of this user, at most 64 KiB). */
int nsk_session_state__read(int dirfd, const char *name,
			    struct nsk_session_state *st);
/* Removes NAME.state, NAME.log and NAME.lock (the recording stays);
 * -EBUSY while the session runs. */
int nsk_session_state__remove(int dirfd, const char *name);

/* Takes NAME.lock for this process: an O_CLOEXEC fd holding an exclusive
 * flock (the session runs while it is open).  -EBUSY when a running
 * session holds it. */
int nsk_session_lock__take(int dirfd, const char *name);
/* 1 while some process holds NAME.lock, 0 when none does or there is no
 * lock file, -errno. */
int nsk_session_lock__held(int dirfd, const char *name);

/* Start time of pid (field 22 of /proc/PID/stat), 0 when it is gone. */
unsigned long long nsk_sessions__pid_start(int pid);

/* ---- listing (sessions.c) ------------------------------------------------ */

/* NSK_SESSIONS_FIGURES: read a crashed session's file for its figures
 * (once: they are kept in its state, while the file stays as it was). */
enum { NSK_SESSIONS_FIGURES = 1 };

/* Every session of the directory, sorted by start time (*out malloc'd). */
int nsk_sessions__list(int dirfd, int flags, struct nsk_session_info **out, int *n);
/* One session by name; -ENOENT when there is none. */
int nsk_sessions__get(int dirfd, const char *name, int flags,
		      struct nsk_session_info *out);
const char *nsk_session_status__name(int status);
/* The sessions as an 80-column table or a JSON array. */
int nsk_sessions__print(FILE *f, const struct nsk_session_info *v, int n,
			int json);
/* The names of the running sessions recording pid, comma-separated, into
 * buf ("" when none). */
void nsk_sessions__of_pid(const struct nsk_session_info *v, int n, int pid,
			  char *buf, size_t len);

/* ---- a recording's figures from its file (session_figures.c) ------------- */

/* Reads path through the format reader: every complete chunk.  records,
 * lost (LOSS counts), elapsed_ns (the span of the chunks' times), ended
 * (END read), dropped (bytes of an incomplete tail). */
struct nsk_file_figures {
	uint64_t records, lost, elapsed_ns, dropped;
	int ended;
	int have_cost;
	uint64_t bpf_run_ns, bpf_runs;
};
int nsk_sessions__file_figures(const char *path, struct nsk_file_figures *fig);

/* ---- starting one (background.c) ----------------------------------------- */

struct nsk_record_opts;

/* nusku record --background: picks or checks the name, takes its lock,
 * detaches a recorder (double fork, setsid, stdio to NAME.log) that runs
 * opts with a state file, and returns in the caller only once that
 * recorder has its probes in (0, and the name and file printed on out) or
 * has failed (-errno, its one-line error in err).  cmdline as for
 * nsk_record__run. */
int nsk_sessions__start_background(struct nsk_record_opts *opts,
				  const char *name, char *const *cmdline,
				  FILE *out, char *err, size_t errlen);

#endif
