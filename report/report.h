/* A report: the loaded database, the options, and the views that answer
 * them.  cmd_report.c fills struct nsk_report; a view's run function
 * prepares its SQL and hands the statement to nsk_report__emit, which
 * wraps the rows with the summary every report carries (span, events,
 * losses, unresolved frames, problems with the file). */
#ifndef NUSKU_REPORT_REPORT_H
#define NUSKU_REPORT_REPORT_H

#include <stdint.h>
#include <sqlite3.h>

#include "report/output.h"

struct nsk_report_opts {
	const char *view;  /* --by */
	int tree;	   /* --tree */
	int folded;	   /* --folded */
	const char *sql;   /* --sql */
	const char *db;	   /* --db FILE */
	const char *pids;  /* --pid LIST (validated: digits and commas) */
	const char *tids;  /* --tid LIST */
	const char *comms; /* --comm LIST */
	double since, until; /* seconds from the start; < 0: not given */
	/* --since/--until as given: over a directory of segments they pick
	 * the segments (nsk_args__range), not seconds from the start */
	const char *since_arg, *until_arg;
	long limit;	   /* rows; < 0: all */
	double min_pct;	   /* --tree: hide nodes below this share */
	int per_thread;	   /* --per-thread: one row per thread (views with
			    * .per_thread) */
};

struct nsk_report {
	const char *cmd; /* "report" (NULL) or "export": stderr's prefix */
	sqlite3 *db;
	const struct nsk_report_opts *opts;
	struct nsk_out out;
	char err[512]; /* a view's failure, one line */
	/* Lines a view adds to the summary (text: '#' lines, JSON: "notes",
	 * CSV and folded: stderr), e.g. what the memory views cannot see. */
	char notes[4][256];
	int nnotes;
	int alloc_noted; /* the memory views' notes are in (alloc_notes.c) */
};

/* Adds a note line to the summary (dropped past the fourth). */
void nsk_report__note(struct nsk_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Adds a note when the recording says which signals it holds (meta
 * "events") and the view's is not among them: an empty view then says
 * why, and how to record it. */
void nsk_report__signal_note(struct nsk_report *rep, const char *signal);

/* A view: --by NAME.  weights, when the view counts something on stacks,
 * is SQL giving (stack_id, weight) rows of the selected events, e.g.
 * "SELECT stack_id, 1 FROM f_sample" or "SELECT stack_id, size FROM
 * f_alloc"; the stack views sum them per stack (in C: faster than GROUP
 * BY) into temp.w and join that; --tree and --folded use it too.  unit names the weight in column names
 * ("samples": self_samples, total_samples). */
struct nsk_view {
	const char *name;
	const char *help;
	int (*run)(struct nsk_report *rep, const struct nsk_view *v);
	const char *weights;
	const char *unit;
	const char *signal; /* the signal its events come from, as record
			     * --events names it */
	int per_thread; /* knows --per-thread */
	unsigned reads; /* NSK_VIEW_READS_*: the large event tables it needs
			 * (the others are not loaded for it) */
	const struct nsk_measure *measure; /* what `nusku export` writes of
					    * this view; NULL: nothing */
};
#define NSK_VIEW_READS_ALLOC 1u	 /* alloc and free */
#define NSK_VIEW_READS_OFFCPU 2u /* offcpu */
/* peak live bytes per site or memory over time: with the allocations
 * summed while loading (nsk_load__file_alloc), a second read */
#define NSK_VIEW_READS_ALLOC_TIME 4u

/* What the events of a view measure on their stacks, for `nusku export`
 * (report/export*.c): pprof's sample types, the flame graph's width.  The
 * view's file defines it next to its weights, from the same selection.
 * sql returns (sqlite3_mprintf'd, NULL: out of memory) a query over the
 * selected events (f_<table>) whose rows are
 *   stack_id, pid, tid, comm_id, one text column per label, the values
 * grouped so that no two rows share the keys before the values. */
#define NSK_MEASURE_VALUES 4
struct nsk_measure {
	const char *name; /* export --by NAME: cpu, alloc, live, ... */
	const char *help;
	const char *title; /* a flame graph's: "CPU samples" */
	char *(*sql)(struct nsk_report *rep);
	const char *labels[2]; /* the label columns' keys; NULL: fewer */
	struct {
		const char *type, *unit; /* pprof's ValueType: "cpu", "nanoseconds" */
	} values[NSK_MEASURE_VALUES];
	int nvalues;
	int shown;	    /* the value pprof shows first
			     * (default_sample_type) */
	int graphed;	    /* the value a flame graph's widths are */
	int period_type;    /* the value one event stands for (pprof's
			     * period_type); -1: none */
	int colour_label;   /* the label that colours the flame graph; -1:
			     * none */
};

/* The measures `nusku export --by` knows: the i-th, NULL past the last
 * (views.c). */
const struct nsk_measure *nsk_measure__at(unsigned i);
/* By a measure's name, else by the name of a view that has one. */
const struct nsk_measure *nsk_measure__find(const char *name);

/* The view table (views.c), ended by a NULL name. */
extern const struct nsk_view *const nsk_views[];
const struct nsk_view *nsk_view__find(const char *name);
/* The large event tables v does not read, as the loader's skip mask
 * (nsk_load__file_skip): they are not loaded for it. */
uint64_t nsk_view__skips(const struct nsk_view *v);
/* How nsk_load__file_alloc loads for v under o: allocations summed for a
 * memory view without --sql or --db (NSK_LOAD_SUMS; a filter is applied
 * while summing: nsk_filter__select), with the
 * second read when the view shows peaks or intervals, unless stacks_only
 * (--tree, --folded, export: weights alone); 0: rows. */
unsigned nsk_view__sums(const struct nsk_report_opts *o,
			const struct nsk_view *v, int stacks_only);

/* Prints the rows of st wrapped in the report: text gets '#' summary lines
 * above the table, JSON an object with the summary and "rows", CSV the
 * rows alone (warnings then go to stderr).  Finalizes st. */
int nsk_report__emit(struct nsk_report *rep, const char *view,
		     sqlite3_stmt *st, const struct nsk_col_hint *hints);
/* The summary as short lines for outputs that carry a few (pprof's
 * comments, a flame graph's subtitle): the file and its span, events
 * lost, frames unresolved, then the file's warnings.  How many. */
int nsk_report__summary_lines(struct nsk_report *rep, char lines[][256],
			      int max);
/* After the output: a recording read only in part (corrupt or missing
 * chunks, a read error) says so on stderr ("nusku CMD: FILE: ...") and
 * returns 1; a truncated tail is only noted in the summary: 0. */
int nsk_report__damaged(struct nsk_report *rep, const char *cmd,
			const char *file);
/* For outputs without room for a summary (--folded, CSV): warnings about
 * the recording (truncation, losses, unresolved frames) on stderr. */
void nsk_report__warn(struct nsk_report *rep);
/* Prepares sql (printf-style), keeping SQLite's message in rep->err. */
sqlite3_stmt *nsk_report__prepare(struct nsk_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The recording table's integer value of key (0 when absent). */
int64_t nsk_report__info(struct nsk_report *rep, const char *key);

/* Nusku's own cost in a recording (own_cost.c). */
struct nsk_own_summary {
	int64_t samples;     /* selected CPU samples */
	int64_t own_samples; /* of them, inside Nusku's probes ([nusku]) */
	int marked;	     /* the file can mark them (format 1.1 on) */
	int64_t run_ns;	     /* run time of Nusku's BPF programs; -1 unknown */
	int64_t runs;	     /* their runs; -1 unknown */
	int64_t window_on_ns, window_total_ns; /* measured in ON of TOTAL ns
						* (both estimates); -1 unknown */
};
int nsk_report__own(struct nsk_report *rep, struct nsk_own_summary *o);
/* The header lines about it (without '#'), into lines[]; returns how many. */
int nsk_report__own_text(struct nsk_report *rep, char lines[][256], int max);

/* The modules that lacked symbols (no_symbols.c): header lines without '#'
 * into lines[] (how many; *more: those left out), or a JSON key. */
int nsk_report__no_symbols_text(struct nsk_report *rep, char lines[][256],
				int max, int *more);
void nsk_report__no_symbols_json(struct nsk_report *rep, FILE *f);

/* Command-line filters shared by report and export (args.c): opt is the
 * long name (pid, tid, comm, since, until); sets it in o, or prints one
 * line naming cmd and returns 2 (a usage error). */
int nsk_args__filter(const char *cmd, const char *opt, const char *arg,
		     struct nsk_report_opts *o);
/* A finite number from 0 to max.  0 or -EINVAL. */
int nsk_args__number(const char *s, double max, double *out);
/* The one recording left on the command line after the options (getopt's
 * optind): 0 with *file set, or 2 (the usage error said on stderr). */
int nsk_args__recording(const char *cmd, int argc, char **argv, const char **file);
/* After nsk_args__recording: when *file is a directory of segments
 * (nusku record --continuous), --since and --until select its segments
 * and *file becomes "DIR@SINCE..UNTIL" (include/nusku/segdir.h);
 * otherwise they must be seconds from the start.  0, or 2 (said). */
int nsk_args__range(const char *cmd, const char **file,
		    struct nsk_report_opts *o);

/* Creates the temporary views f_<table> of the selected events. */
int nsk_filter__apply(struct nsk_report *rep);
/* The filter of o for a load that sums (in buf), or NULL when o selects
 * every event. */
struct nsk_load_select;
const struct nsk_load_select *nsk_filter__select(const struct nsk_report_opts *o,
						 struct nsk_load_select *buf);

/* The name of process PID (SQL over an expression): its latest name in
 * the process table, else its main thread's, else "[pid N]"; a ';' (the
 * folded form's separator) becomes ':'.  PID must be qualified (u.pid):
 * a bare "pid" inside the subqueries is the process row's own, so every
 * process would take the name of the latest one. */
#define NSK_PROCESS_NAME(pid)                                               \
	"replace(coalesce((SELECT comm FROM process x WHERE x.pid = " pid     \
	" ORDER BY x.time DESC LIMIT 1), (SELECT name FROM thread y WHERE "   \
	"y.tid = " pid " ORDER BY y.time DESC LIMIT 1), '[pid ' || " pid      \
	" || ']'), ';', ':')"

/* Views over stacks, parameterized by a view's weights (stacks.c). */
int nsk_stacks__by_function(struct nsk_report *rep, const struct nsk_view *v);
int nsk_stacks__by_stack(struct nsk_report *rep, const struct nsk_view *v);
int nsk_stacks__tree(struct nsk_report *rep, const struct nsk_view *v);
int nsk_stacks__folded(struct nsk_report *rep, const struct nsk_view *v);

/* --sql (sql.c) */
int nsk_report__sql(struct nsk_report *rep, const char *sql);

#endif
