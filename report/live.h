/* nusku live: the pieces of the live command and how they talk.
 *
 * A source (live_source.c) gives bytes: a file still being written, a pipe,
 * a `nusku record -o -` child, or that child run on another host over ssh
 * (live_spawn.c builds those command lines).  The pump (live_pump.c) reads
 * records from the format reader and hands them to the report loader a
 * budget at a time, so the screen never waits on the stream.  The views
 * (live_views.c) ask the database for a table per signal; a table
 * (live_table.c) is plain strings, drawn either on a full screen
 * (live_screen.c) or as a text snapshot (live_snapshot.c).
 */
#ifndef NUSKU_REPORT_LIVE_H
#define NUSKU_REPORT_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <nusku/format.h>

/* ---- options ---------------------------------------------------------------- */

struct nsk_live_opts {
	const char *input;	  /* FILE or "-"; NULL: record (cmd or pid) */
	const char *output;	  /* -o: keep the bytes read in this file */
	const char *ssh_host;	  /* --ssh [user@]host */
	const char *remote_nusku; /* --remote-nusku PATH (default "nusku") */
	char **ssh_opts;	  /* --ssh-opt, in order */
	int nssh_opts;
	char **record_args;	  /* --record-opt and known record options */
	int nrecord_args;
	char **cmd;		  /* after --: the program to launch */
	int pid;		  /* -p: attach */
	int all;		  /* -a: every process (nusku record -a) */
	double interval_s;	  /* redraw / snapshot period (default 1) */
	double window_s;	  /* the views' "last window" (default 1) */
	long count;		  /* snapshots to print, 0: until the end */
	int top;		  /* rows per view in a snapshot (default 5) */
	int force_snapshot;	  /* --snapshot: even on a terminal */
	const char *view;	  /* --view NAME: first view / only one in snapshot */
	int raw;		  /* --raw: copy the recording's bytes to stdout,
				   * no view (what live FILE|NAME --ssh runs on
				   * the remote host) */
};

/* --raw: the recording o->input names (a file, or a session's file)
 * copied to stdout as it grows, until its writer is gone and all of it
 * is out, or stdout goes.  The exit status. */
int nsk_live__raw(const struct nsk_live_opts *o);

/* ---- source ------------------------------------------------------------------- */

struct nsk_live_source;

/* Opens what the options name; on error writes a one-line message to err. */
int nsk_live_source__open(const struct nsk_live_opts *o,
			  struct nsk_live_source **out, char *err,
			  size_t errlen);
/* Waits (blocking, before any screen is up) until the stream's first bytes
 * are there; -EPIPE when the source ended first (err says why). */
int nsk_live_source__wait_start(struct nsk_live_source *s, char *err,
				size_t errlen);
/* An io over the source for the reader: never blocks; returns -EAGAIN when
 * nothing is there yet and 0 only at the real end.  Bytes read are copied
 * to -o.  The io does not own the source: free the reader first. */
struct nsk_io *nsk_live_source__io(struct nsk_live_source *s);
/* The fd to poll for input, -1 for a regular file (poll on a timer). */
int nsk_live_source__fd(const struct nsk_live_source *s);
/* 1 when no more bytes will come: a pipe or child closed, or no process
 * has a followed file open for writing any more. */
int nsk_live_source__ended(struct nsk_live_source *s);
uint64_t nsk_live_source__bytes(const struct nsk_live_source *s);
/* Reaps the child, if any, without blocking.  Returns 1 when it has ended
 * (then *status is its exit status and msg a one-line description of any
 * failure, empty if it succeeded), 0 while it runs or with no child. */
int nsk_live_source__child_done(struct nsk_live_source *s, int *status,
				char *msg, size_t len);
/* Asks the child to stop and finish its recording (SIGINT). */
void nsk_live_source__interrupt(struct nsk_live_source *s);
/* Waits up to timeout_ms for the child to exit by itself. */
void nsk_live_source__wait_child(struct nsk_live_source *s, int timeout_ms);
/* Makes the child stop: SIGINT, then SIGTERM, then SIGKILL. */
void nsk_live_source__stop(struct nsk_live_source *s);
/* Short description for the status line: "run.nsk", "pipe", "ssh host". */
const char *nsk_live_source__name(const struct nsk_live_source *s);
void nsk_live_source__free(struct nsk_live_source *s);

/* ---- command lines for the recorder (live_spawn.c) ---------------------------- */

/* argv for the local recorder: exe record -o - ARGS [-p PID | -- CMD].
 * Returns a NULL-terminated array to free with nsk_live__free_argv. */
char **nsk_live__record_argv(const struct nsk_live_opts *o, const char *exe);
/* argv for ssh: ssh [-o BatchMode=yes] -T OPTS -- HOST 'REMOTE COMMAND'. */
char **nsk_live__ssh_argv(const struct nsk_live_opts *o, int batch);
void nsk_live__free_argv(char **argv);
/* Appends s to buf as one shell word (single quotes); -ENOSPC if it does
 * not fit. */
int nsk_live__shell_quote(char *buf, size_t size, const char *s);
/* A one-line reason for a recorder or ssh exit status and its stderr's last
 * line ("" when status is 0). */
void nsk_live__explain_exit(char *msg, size_t len, int remote, int status,
			    const char *last_err_line, const char *host);

/* ---- tables -------------------------------------------------------------------- */

enum nsk_live_align { NSK_LIVE_LEFT = 0, NSK_LIVE_RIGHT = 1 };

struct nsk_live_col {
	const char *name;
	int align;     /* enum nsk_live_align */
	int min_width; /* never narrower (numbers) */
	int flex;      /* takes the width left over (names) */
};

struct nsk_live_table {
	char title[96];
	const struct nsk_live_col *cols;
	int ncols;
	char **cells; /* nrows * ncols strings */
	int nrows;
	int cap;
	char note[160]; /* shown when there are no rows */
};

void nsk_live_table__init(struct nsk_live_table *t, const char *title,
			  const struct nsk_live_col *cols, int ncols);
/* Adds a row of ncols strings (copied). */
int nsk_live_table__add(struct nsk_live_table *t, const char *const *cells);
const char *nsk_live_table__cell(const struct nsk_live_table *t, int row,
				 int col);
/* Column widths fitting width columns in total (a space between columns);
 * flex columns shrink first, then are cut with '~'. */
void nsk_live_table__layout(const struct nsk_live_table *t, int width,
			    int *widths);
/* Writes cell s in w columns into buf (size > w), aligned, cut with '~'. */
void nsk_live__fit(char *buf, const char *s, int w, int align);
void nsk_live_table__release(struct nsk_live_table *t);

/* Human numbers: 1.2K, 3.4M; durations 12us, 3.4ms, 1.20s; bytes 12K. */
void nsk_live__fmt_count(char *buf, size_t len, double v);
void nsk_live__fmt_ns(char *buf, size_t len, double ns);
void nsk_live__fmt_bytes(char *buf, size_t len, double bytes);

/* ---- the state everything draws from ------------------------------------------ */

struct nsk_live_db;

/* What the status line says. */
struct nsk_live_status {
	const char *source;  /* nsk_live_source__name */
	uint64_t records;
	uint64_t bytes;
	uint64_t lost;	     /* events lost, from the recording's loss records */
	uint64_t dropped;    /* bytes at the end that formed no whole chunk */
	uint64_t corrupt;    /* corrupt chunks skipped */
	double span_s;	     /* recording time covered so far */
	double age_s;	     /* now minus the newest event shown, < 0 unknown
			      * (another host's clock, or a finished stream) */
	int ended;	     /* no more data will come */
	int clean_end;	     /* the recording's END record was read */
	int paused;
	char message[256];   /* last problem or the end reason */
	char losses[160];    /* "cpu.ringbuf 7, alloc.stack 2" when lost */
};

/* Views the screen and the snapshot know, in key order (1..N). */
enum nsk_live_view_id {
	NSK_LIVE_CPU = 0,
	NSK_LIVE_ALLOC,
	NSK_LIVE_OFFCPU,
	NSK_LIVE_SYSCALL,
	NSK_LIVE_NET,
	NSK_LIVE_NVIEWS
};

struct nsk_live_query {
	int view;	    /* enum nsk_live_view_id */
	int sort;	    /* which of the view's sort orders (s cycles) */
	uint32_t pid;	    /* 0: all */
	uint32_t tid;	    /* 0: all */
	uint64_t window_ns; /* "last window" length */
	int limit;	    /* rows */
};

const char *nsk_live_view__name(int view);  /* "cpu", "alloc", ... */
const char *nsk_live_view__title(int view); /* "CPU", "Memory", ... */
int nsk_live_view__by_name(const char *name); /* -1 if unknown */
int nsk_live_view__nsorts(int view);
const char *nsk_live_view__sort_name(int view, int sort);
/* Fills t for q.  A view whose tables the recording's schema lacks gets no
 * rows and the note "no data for this signal in this recording". */
int nsk_live_view__query(struct nsk_live_db *db, const struct nsk_live_query *q,
			 struct nsk_live_table *t);

/* The database that the report loader fills as records arrive. */
int nsk_live_db__new(struct nsk_live_db **out);
/* Hands the loader up to max_records / budget_ns worth of records from r.
 * Returns 1 when it stopped on the budget (more may be ready), 0 when the
 * reader said -EAGAIN (nothing now), -EPIPE at the end of the stream, or
 * another negative errno (message in the db's status). */
int nsk_live_db__pump(struct nsk_live_db *db, struct nsk_reader *r,
		      uint64_t budget_ns);
void nsk_live_db__status(struct nsk_live_db *db, struct nsk_live_status *st);
/* The "last window" the views are asked for: rows older than it (by a
 * second more) that the running totals hold are dropped, so memory
 * follows the window, not the recording.  A longer window asked later
 * (the screen's w key) fills in as events come. */
void nsk_live_db__keep(struct nsk_live_db *db, uint64_t window_ns);
/* 1 once the stream has ended (or failed): nothing more will be loaded. */
int nsk_live_db__ended(const struct nsk_live_db *db);
/* A continuous recording's segments, one after another: END closes a
 * segment, not the stream.  After nsk_live_db__follow_segments, the pump
 * returns -ENODATA at a segment's end, with the loader still open, and
 * reads on from the next reader once nsk_live_db__next_segment was
 * called; nsk_live_db__end ends the stream when no next one comes.  A
 * next segment of another recorder run (new_run: another recording id)
 * gets ids of its own (report/load_runs.c); 0 or a negative errno. */
int nsk_live_db__follow_segments(struct nsk_live_db *db);
int nsk_live_db__next_segment(struct nsk_live_db *db, int new_run);
int nsk_live_db__end(struct nsk_live_db *db);
/* Why the loader refused the recording (past a limit), or NULL. */
const char *nsk_live_db__failed(const struct nsk_live_db *db);
/* Time of the newest event loaded (monotonic ns), 0 when none. */
uint64_t nsk_live_db__now(struct nsk_live_db *db);
/* The problem callback for the reader (ctx: the db). */
void nsk_live_db__on_problem(void *ctx, const char *msg);
void nsk_live_db__free(struct nsk_live_db *db);

/* "run.nsk  3.0s recorded  12K records  lost 0  [live]" */
void nsk_live__status_line(char *buf, size_t len,
			   const struct nsk_live_status *st, double elapsed_s);

/* ---- drawing --------------------------------------------------------------------- */

/* Prints one snapshot of every view (or only opts->view) to f. */
int nsk_live_snapshot__print(FILE *f, struct nsk_live_db *db,
			     const struct nsk_live_status *st,
			     const struct nsk_live_opts *o, double elapsed_s);

struct nsk_live_screen;

int nsk_live_screen__new(const struct nsk_live_opts *o,
			 struct nsk_live_screen **out);
/* Handles pending keys; returns 1 when the user asked to quit. */
int nsk_live_screen__keys(struct nsk_live_screen *sc);
/* The fd keys come from, to poll. */
int nsk_live_screen__fd(const struct nsk_live_screen *sc);
/* 1 when the user paused the view. */
int nsk_live_screen__paused(const struct nsk_live_screen *sc);
void nsk_live_screen__draw(struct nsk_live_screen *sc, struct nsk_live_db *db,
			   const struct nsk_live_status *st);
void nsk_live_screen__free(struct nsk_live_screen *sc);

#endif
