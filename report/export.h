/* nusku export: a view's stacks and values written for other tools.
 *
 * cmd_export.c loads the recording and applies the filters as `report`
 * does; export.c opens the output and dispatches on the format:
 *   pprof   (export_pprof.c)  gzipped profile.proto, one sample type per
 *                             value of the view's measure
 *   svg     (export_svg.c)    a self-contained interactive flame graph
 *   html    (export_svg.c)    the same graph inline in an HTML page
 *   chrome  (export_chrome.c) the timeline in the Trace Event Format
 *   folded  (stacks.c)        report --folded's lines
 * Both pprof and svg read the measure's rows (struct nsk_measure, defined
 * beside the views) into memory with the stacks they name (export_data.c).
 */
#ifndef NUSKU_REPORT_EXPORT_H
#define NUSKU_REPORT_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "report/idmap.h"
#include "report/report.h"

/* a + b, saturated: a hostile recording's weights may sum past int64. */
static inline int64_t nsk_xadd(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

enum nsk_export_fmt {
	NSK_EXPORT_PPROF, NSK_EXPORT_SVG, NSK_EXPORT_FOLDED, NSK_EXPORT_HTML,
	NSK_EXPORT_CHROME
};

/* One row of a measure: keys, labels (strtab ids in nsk_xdata.str; 0:
 * none) and values. */
struct nsk_xrow {
	int64_t stack_id, pid, tid, comm_id;
	uint32_t label[2];
	int64_t v[NSK_MEASURE_VALUES];
};

/* One frame of a stack, leaf first; frames of one level share an address
 * (inline frames: innermost first). */
struct nsk_xframe {
	int64_t level, frame_id, func_id;
};

struct nsk_xstack {
	int64_t id;
	size_t first, n; /* in nsk_xdata.frames */
};

struct nsk_xfunc {
	int64_t id;
	const char *name, *module; /* in nsk_xdata.str */
	int kernel;
};

struct nsk_xdata {
	const struct nsk_measure *m;
	struct nsk_xrow *rows;
	size_t nrows;
	struct nsk_xstack *stacks; /* the rows' stacks, each once */
	size_t nstacks;
	struct nsk_idmap stack_idx; /* stack id -> index in stacks */
	struct nsk_xframe *frames;
	size_t nframes;
	struct nsk_xfunc *funcs; /* the frames' functions, each once */
	size_t nfuncs;
	struct nsk_idmap func_idx; /* func id -> index in funcs */
	struct nsk_strtab str; /* labels' values, names */
	int64_t total[NSK_MEASURE_VALUES];
};

/* Runs the measure's query and reads its rows and their stacks' frames.
 * A stack without frames ([nusku], [no stack]) has n = 0.  0 or a negative
 * errno, the message in rep->err. */
int nsk_xdata__load(struct nsk_xdata *x, struct nsk_report *rep,
		    const struct nsk_measure *m);
void nsk_xdata__release(struct nsk_xdata *x);
/* The stack of a row, the function of a frame (never NULL once loaded). */
const struct nsk_xstack *nsk_xdata__stack(const struct nsk_xdata *x,
					  int64_t stack_id);
const struct nsk_xfunc *nsk_xdata__func(const struct nsk_xdata *x,
					int64_t func_id);
/* What a stack without frames is called: its path ([nusku]) or
 * "[no stack]". */
const char *nsk_xdata__frameless(struct nsk_xdata *x, struct nsk_report *rep,
				 int64_t stack_id);

/* By name: pprof, svg, folded, html, chrome.  0 or -EINVAL. */
int nsk_export__format(const char *name, enum nsk_export_fmt *out);
struct nsk_outfile;
/* Creates the -o file (see export.c for what it may replace).  0 or a
 * negative errno, the message in err. */
int nsk_export__open(struct nsk_outfile *of, const char *path,
		     const char *input, enum nsk_export_fmt fmt, char *err,
		     size_t len);
/* Writes view v's export in fmt to f.  0 or a negative errno, the
 * message in rep->err. */
int nsk_export__write(struct nsk_report *rep, enum nsk_export_fmt fmt,
		      const struct nsk_view *v, FILE *f);

int nsk_export__pprof(struct nsk_report *rep, const struct nsk_measure *m,
		      FILE *f);
/* A flame graph of m: SVG, or (html) an HTML page holding it.  With
 * base_rep, a differential one: rep's shape, each frame coloured by how
 * its share of the total moved from base_rep's (frames matched by the
 * names on their path, so two builds compare); errors in rep->err. */
int nsk_export__flamegraph(struct nsk_report *rep, struct nsk_report *base_rep,
			   const struct nsk_measure *m, int html, FILE *f);
int nsk_export__svg(struct nsk_report *rep, const struct nsk_measure *m,
		    FILE *f);
/* Every selected event on a timeline (export_chrome.c). */
int nsk_export__chrome(struct nsk_report *rep, FILE *f);

#endif
