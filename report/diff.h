/* nusku diff: two recordings compared per key of a view (report/diff.c).
 * Each recording is loaded into a database of its own by the loader and
 * filtered as `report` filters; the view's SQL sums its key's events in
 * each; the sums meet in a third, small database, where each row gets a
 * test (report/diff_stats.h), Holm's correction over the rows, and a
 * verdict. */
#ifndef NUSKU_REPORT_DIFF_H
#define NUSKU_REPORT_DIFF_H

#include "report/report.h"

enum nsk_diff_test {
	NSK_DIFF_SHARE, /* Fisher: the key's events of all events */
	NSK_DIFF_RANK,	/* Mann-Whitney: the key's event durations */
};

enum nsk_diff_shown {
	NSK_DIFF_SHOW_PCT,    /* base, new: the key's share of the events, % */
	NSK_DIFF_SHOW_AMOUNT, /* base, new: the amount (bytes) */
	NSK_DIFF_SHOW_MEDIAN, /* base, new: the median event duration (ns) */
};

struct nsk_diff_view {
	const char *name, *help;
	const char *report_view; /* the report view whose tables it reads */
	const char *keys[2];	 /* the key columns; keys[1] NULL: one */
	enum nsk_diff_test test;
	enum nsk_diff_shown shown;
	const char *unit;	       /* of base and new in the text header */
	const char *less, *more;       /* verdict when new is below, above */
	const char *events;	       /* what one event is: "samples" */
	const char *what;	       /* the test in words, for the header */
	int (*prepare)(struct nsk_report *rep); /* temp tables; may be NULL */
	const char *agg;   /* format (%s: the syscall arch): k1, k2, amount,
			    * events per key */
	const char *total; /* all events (SHARE) */
	const char *hist;  /* format: k1, k2, value, events (RANK) */
	int log2_buckets;  /* hist's values are log2 buckets of ns */
};

/* The diff views, ended by NULL; the first is the default. */
extern const struct nsk_diff_view *const nsk_diff_views[];
const struct nsk_diff_view *nsk_diff__view(const char *name);

struct nsk_diff_opts {
	double alpha; /* family-wise level of the verdicts */
	long limit;   /* rows; < 0: all */
};

/* Compares base and new (loaded and filtered) by v and prints the rows to
 * out.  0 or a negative errno with the message in base->err. */
int nsk_diff__run(struct nsk_report *base, struct nsk_report *new_,
		  const struct nsk_diff_view *v, const struct nsk_diff_opts *o,
		  const struct nsk_out *out);

#endif
