/* The loader: records in, SQLite rows out.
 *
 * One handler per record type, found in a table (load_table.c); a signal
 * adds its handlers in a file of its own (load_cpu.c for samples) and a
 * line per record type to the table.  Handlers use the helpers below:
 * cached prepared statements, names resolved from the file's ids, the
 * thread name (comm) an event belongs to, and stack ids made safe to join
 * on.  Definitions the file never gave (a corrupt chunk can drop them) are
 * replaced by visible placeholders and counted, never dropped silently.
 *
 * The whole load runs in one transaction with journal and sync off; indexes
 * are made once at the end (nsk_load__finish). */
#ifndef NUSKU_REPORT_LOAD_H
#define NUSKU_REPORT_LOAD_H

#include <stdint.h>
#include <sqlite3.h>
#include <nusku/format.h>

#include "report/idmap.h"

/* The one frame of a stack taken inside Nusku's own probes. */
#define NSK_OWN_FRAME "[nusku]"

struct nsk_load;
typedef int (*nsk_load_fn)(struct nsk_load *ld, const struct nsk_record *rec);

/* Handlers by record type; NULL: the type is counted and skipped. */
extern const nsk_load_fn nsk_load__table[NSK_REC_TYPE_MAX];

/* Counters that end up in the recording table (docs/schema.md). */
struct nsk_load_counts {
	uint64_t records;	   /* records handed to the loader */
	uint64_t ignored;	   /* of a type no handler loads */
	uint64_t unresolved_frames; /* frames without a symbol */
	uint64_t unknown_frames;    /* frame ids used but never defined */
	uint64_t unknown_stacks;    /* stack ids used but never defined */
	uint64_t unknown_strings;   /* string ids used but never defined */
	uint64_t no_stack;	    /* events with stack id 0 */
	uint64_t truncated_stacks;  /* events whose stack walk stopped early */
	uint64_t no_user_stack;	    /* events without a user stack */
	uint64_t problems;	    /* reader problems (truncation, corruption) */
	uint64_t read_error;	    /* 1: the stream could not be read to its end */
	uint64_t ended;		    /* an END record was loaded */
	uint64_t long_names;	    /* names cut to NSK_LIMIT_NAME_BYTES */
	uint64_t long_stacks;	    /* stacks cut to NSK_LIMIT_STACK_FRAMES */
	uint64_t long_paths;	    /* paths cut to NSK_LIMIT_PATH_BYTES */
	uint64_t defs;		    /* definitions interned (NSK_LIMIT_DEFS) */
	uint64_t text_bytes;	    /* text stored (NSK_LIMIT_TEXT_BYTES) */
	uint64_t time_min, time_max; /* ns; time_min = UINT64_MAX: none */
};

struct nsk_load_frame {
	uint64_t inline_parent;
	uint32_t func_id;
	uint32_t flags;
};

struct nsk_load_sel;

struct nsk_load {
	sqlite3 *db;
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} stmts[48];
	unsigned nstmts;
	struct nsk_idmap strings;  /* file string id -> strtab id */
	struct nsk_strtab strtab;  /* string values */
	struct nsk_idmap frames;   /* file frame id -> index in frame[] */
	struct nsk_load_frame *frame;
	size_t nframe, frame_cap;
	struct nsk_strtab funcs;   /* "name\x1fmodule" -> func id */
	uint32_t *func_seen;	   /* per func id: last stack that listed it */
	size_t func_seen_cap;
	uint32_t stack_gen;
	struct nsk_idmap stacks;   /* stack id -> flags << 2 | 1 defined,
				    * or 2 placeholder */
	struct nsk_strtab comms;   /* comm name -> comm id */
	struct nsk_idmap tid_comm; /* tid -> comm id */
	struct nsk_idmap pid_comm; /* pid -> comm id */
	struct nsk_load_counts n;
	struct nsk_load_alloc *alloc; /* live blocks (load_alloc.c) */
	unsigned alloc_mode;	   /* enum nsk_alloc_mode (load_alloc.h) */
	int kernel_syscall_names;  /* the recording names syscalls itself */
	struct nsk_load_sel *sel;  /* load_select.c; NULL: every event */
	uint64_t skip;		   /* record types not loaded: 1 << type */
	uint64_t skipped[NSK_REC_TYPE_MAX]; /* records of them, by type */
	/* recorder runs (load_runs.c); 0: one file, ids as they are */
	unsigned runs;
	uint64_t run_base;   /* added to this run's ids */
	uint64_t run_id_max; /* the highest id so far, moved */
	uint64_t *run_frames; /* a stack's frame ids, moved */
	uint32_t run_frames_cap;
	uint64_t run_clock_off; /* the first run's realtime - monotonic */
	int run_clock_known, run_clock_pending;
	char err[256];
};

/* Creates the schema in db (an empty database) and begins the load. */
int nsk_load__new(sqlite3 *db, struct nsk_load **out);
/* Loads one record. 0 or a negative errno (message: nsk_load__error). */
int nsk_load__record(struct nsk_load *ld, const struct nsk_record *rec);
/* Loads every record a reader gives; a stream that breaks off is a
 * problem recorded, not an error: what was read stays loaded. */
int nsk_load__stream(struct nsk_load *ld, struct nsk_reader *r);
/* Opens a file ("-": stdin), reads and loads it whole, and finishes the
 * load.  0 or a negative errno with a one-line message in msg (missing
 * file, not a .nsk file, newer format). */
int nsk_load__file(sqlite3 *db, const char *file, char *msg, size_t len);
/* The same, leaving out the events of the record types in skip (1 << type;
 * only event types: NSK_LOAD_SKIPPABLE), which a view does not read: they
 * are counted (recording key not_loaded.TABLE) and their times still set
 * the span.  An allocation-heavy recording holds millions that a CPU view
 * would load for nothing. */
#define NSK_LOAD_SKIPPABLE ((1ull << NSK_REC_ALLOC) | (1ull << NSK_REC_FREE) | \
			    (1ull << NSK_REC_OFFCPU))
int nsk_load__file_skip(sqlite3 *db, const char *file, uint64_t skip, char *msg,
			size_t len);
/* For the memory views without filters: the same, with allocations and
 * frees summed while loading into alloc_sum instead of a row each (how
 * NSK_LOAD_SUMS), and with NSK_LOAD_SUMS_TIME a second read of the file
 * for peak live bytes per site (alloc_peak) and the intervals of --by
 * memory-time (alloc_bucket).  stdin and other files that cannot be read
 * twice load rows as nsk_load__file_skip does. */
#define NSK_LOAD_SUMS 1u
#define NSK_LOAD_SUMS_TIME 2u
/* A filter for a load that sums (how != 0; sel NULL: every event): report's
 * --pid --tid --comm --since --until (report/filter.c), as the options
 * hold them.  Allocations outside it are matched to their frees like any
 * other but summed nowhere, and the counts of allocation and free records
 * are those of the selected rows, so that every memory view reads what
 * it would read of filtered rows (report_alloc_sums.sh compares them).
 * --since and --until count from the recording's start, the earliest time
 * in it: a first read of the file without allocations finds it. */
struct nsk_load_select {
	const char *pids, *tids; /* "1,2": digits and commas; NULL: any */
	const char *comms;	 /* "a,b"; NULL: any */
	double since, until;	 /* seconds after the start; < 0: none */
};
/* The intervals of --by memory-time and of alloc_bucket. */
#define NSK_ALLOC_BUCKETS 20
int nsk_load__file_alloc(sqlite3 *db, const char *file, uint64_t skip,
			 unsigned how, const struct nsk_load_select *sel,
			 char *msg, size_t len);
/* A continuous recording (a directory of segments, nusku record
 * --continuous): the segments of dir that overlap [from, until] (specs
 * of nsk_seg__parse_time, NULL: open-ended) loaded as one recording.
 * The file loaders above come here for a directory or "DIR@FROM..TO". */
int nsk_load__segments(sqlite3 *db, const char *dir, const char *from,
		       const char *until, uint64_t skip, char *msg, size_t len);
/* Segments of more than one recorder run (load_runs.c).  nsk_load__new_run
 * before the first record of each run, the first included: from then on
 * nsk_load__record moves every run's frame, stack, mapping and connection
 * ids past the ones before (nsk_load__run_ids: *out is in with its ids
 * moved), and a new run forgets the string ids of the one before.  A run
 * whose clock is not the first run's (a reboot between) is refused by
 * nsk_load__run_clock, which the clock handler calls: -EXDEV. */
int nsk_load__new_run(struct nsk_load *ld);
int nsk_load__run_ids(struct nsk_load *ld, const struct nsk_record *in,
		      struct nsk_record *out);
int nsk_load__run_clock(struct nsk_load *ld, const struct nsk_rec_clock *c);
/* A problem to show in every report (the reader's on_problem). */
void nsk_load__problem(struct nsk_load *ld, const char *msg);
/* Commits what was loaded so far and begins again (live loads a turn at a
 * time; queries on the same connection see uncommitted rows anyway). */
int nsk_load__commit(struct nsk_load *ld);
/* Writes the recording table (file name, format, reader stats may be NULL),
 * commits and builds the indexes. */
int nsk_load__finish(struct nsk_load *ld, const char *file,
		     const struct nsk_file_info *info,
		     const struct nsk_reader_stats *stats);
const struct nsk_load_counts *nsk_load__counts(const struct nsk_load *ld);
const char *nsk_load__error(const struct nsk_load *ld);
void nsk_load__free(struct nsk_load *ld);

/* ---- for handlers (load_base.c: they call nothing above them) ---- */

/* The limits (report/limits.h).  nsk_load__cut: len, or the limit for a
 * longer text, with a warning the first time (kind: "name", "stack",
 * "path").  nsk_load__charge: counts one definition (def = 1) and bytes
 * of text stored; -E2BIG with the message kept past a whole-file limit. */
size_t nsk_load__cut(struct nsk_load *ld, const char *kind, size_t len,
		     size_t limit);
int nsk_load__charge(struct nsk_load *ld, int def, size_t bytes);

/* The filter of a summing load (load_select.c): nsk_load__select keeps a
 * copy, with --since/--until counted from start; nsk_load__selected says
 * whether an event of (pid, tid) at time is in it: 1, 0 or -ENOMEM. */
int nsk_load__select(struct nsk_load *ld, const struct nsk_load_select *want,
		     uint64_t start);
int nsk_load__selected(struct nsk_load *ld, uint32_t pid, uint32_t tid,
		       uint64_t time);
void nsk_load_sel__free(struct nsk_load_sel *s);
/* The time --since/--until SECONDS name: start + seconds, saturated
 * instead of wrapped (the command line keeps seconds finite and under
 * 2^63 ns; start comes from a file).  The one rule of the SQL filter
 * (report/filter.c) and of the summing load's. */
int64_t nsk_load__after_start(int64_t start, double seconds);

/* A prepared statement for sql (a string constant: cached by address). */
sqlite3_stmt *nsk_load__stmt(struct nsk_load *ld, const char *sql);
/* Steps and resets st; 0 or -EIO with the message kept. */
int nsk_load__step(struct nsk_load *ld, sqlite3_stmt *st);
/* -EIO with SQLite's message kept (for a failed prepare or bind). */
int nsk_load__sql_error(struct nsk_load *ld);
/* Binds a byte string as text (NULs end it, cut to NSK_LIMIT_NAME_BYTES
 * and charged), NULL for an empty one.  0 or -E2BIG. */
int nsk_load__bind_bytes(struct nsk_load *ld, sqlite3_stmt *st, int col,
			 struct nsk_bytes b);
/* The string of a file string id; NULL for 0; for an id never defined, a
 * placeholder "[unknown string N]" (counted) written into buf. */
const char *nsk_load__string(struct nsk_load *ld, uint64_t id, char *buf,
			     size_t len);
/* Notes an event time for the recording's span. */
static inline void nsk_load__time(struct nsk_load *ld, uint64_t t)
{
	if (!t)
		return;
	if (t < ld->n.time_min)
		ld->n.time_min = t;
	if (t > ld->n.time_max)
		ld->n.time_max = t;
}
/* The comm id of a thread (0: unknown), for events' comm_id column. */
int64_t nsk_load__comm(struct nsk_load *ld, uint32_t pid, uint32_t tid);
/* A thread (tid) or, with tid 0, a process got a name. */
int nsk_load__set_comm(struct nsk_load *ld, uint32_t pid, uint32_t tid,
		       struct nsk_bytes name);
/* Makes sure a stack id used by an event can be joined on: one the file
 * never defined becomes a placeholder stack "[unknown stack N]" (id 0:
 * "[no stack]"). 0 or negative errno. */
int nsk_load__stack_ref(struct nsk_load *ld, uint64_t stack_id);

/* Handlers of the core records (load_core.c, load_stack.c). */
int nsk_load__meta(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__clock(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__string_rec(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__process(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__thread(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__exit(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__mapping(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__frame(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__stack(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__loss(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load__end(struct nsk_load *ld, const struct nsk_record *rec);
/* cpu (load_cpu.c) */
int nsk_load_cpu__sample(struct nsk_load *ld, const struct nsk_record *rec);
/* alloc (load_alloc.c) */
int nsk_load_alloc__alloc(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load_alloc__free(struct nsk_load *ld, const struct nsk_record *rec);
void nsk_load_alloc__release(struct nsk_load *ld);
/* Process pid exited or exec'd at time: its live blocks leave with it
 * (applied once late records of it can no longer come). */
int nsk_load_alloc__exit(struct nsk_load *ld, uint32_t pid, uint64_t time);
/* Applies every exit still pending: the end of the stream. */
int nsk_load_alloc__flush(struct nsk_load *ld);
/* offcpu (load_offcpu.c) */
int nsk_load_offcpu__interval(struct nsk_load *ld, const struct nsk_record *rec);
/* syscall (load_syscall.c) */
int nsk_load_syscall__stat(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load_syscall__slow(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load_syscall__path(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load_syscall__name(struct nsk_load *ld, const struct nsk_record *rec);
/* net (load_net.c) */
int nsk_load_net__conn(struct nsk_load *ld, const struct nsk_record *rec);
int nsk_load_net__retransmit(struct nsk_load *ld, const struct nsk_record *rec);

#endif
