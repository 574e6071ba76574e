/* nusku diff: two recordings compared per function, allocation site,
 * blocking reason and code path, or syscall, with a verdict from a test
 * that accounts for the noise (report/diff.h, docs/diff.md).  Each
 * recording is loaded by the loader `report` uses, filtered the same way.
 * This file is the command line only.  Exit status: 0 success, 1 error
 * (one line on stderr), 2 usage error. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "report/db.h"
#include "report/diff.h"
#include "report/export.h"
#include "report/load.h"
#include "report/report.h"

#define DEFAULT_ALPHA 0.01

static void usage(FILE *f)
{
	fprintf(f,
"usage: nusku diff [options] BASE.nsk NEW.nsk\n"
"\n"
"Compares two recordings per key of a view: base, new, delta, ratio and a\n"
"verdict from a test that accounts for sampling noise.\n"
"\n"
"  -b, --by VIEW      what to compare (default function); views:\n");
	for (const struct nsk_diff_view *const *v = nsk_diff_views; *v; v++)
		fprintf(f, "      %-10s %s\n", (*v)->name, (*v)->help);
	fprintf(f,
"  -a, --alpha A      family-wise level of the verdicts (default %g;\n"
"                     Holm's correction over the rows)\n"
"  -f, --format FMT   text (default), json or csv; svg or html: a\n"
"                     differential flame graph (NEW's stacks, each frame red\n"
"                     where its share of the total grew, blue where it\n"
"                     shrank)\n"
"  -n, --limit N      at most N rows\n"
"  -c, --comm LIST    only threads with these names (both recordings)\n"
"  -s, --since SEC    only events SEC seconds or more after each start\n"
"  -u, --until SEC    only events up to SEC seconds after each start\n"
"  -w, --width N      text width (default: the terminal's, or 80; 0: any)\n"
"  -h, --help         this help\n"
"\n"
"Verdicts: faster, slower (function, blocking, syscall), less, more\n"
"(alloc-site), or no significant change.\n", DEFAULT_ALPHA);
}

struct args {
	struct nsk_report_opts o;
	struct nsk_diff_opts d;
	const char *file[2], *format, *by;
	int width;
};

static int parse(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "alpha", required_argument, NULL, 'a' },
		{ "format", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'n' },
		{ "comm", required_argument, NULL, 'c' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "width", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	long v;
	int c;

	a->o.since = a->o.until = -1;
	a->o.limit = -1;
	a->d.limit = -1;
	a->d.alpha = DEFAULT_ALPHA;
	a->width = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "b:a:f:n:c:s:u:w:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'b': a->by = optarg; break;
		case 'f': a->format = optarg; break;
		case 'a':
			if (nsk_args__number(optarg, 1, &a->d.alpha) ||
			    a->d.alpha <= 0) {
				fprintf(stderr, "nusku diff: --alpha wants a level "
					"above 0 and at most 1, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c':
		case 's':
		case 'u':
			if (nsk_args__filter("diff", c == 'c' ? "comm" : c == 's' ?
					     "since" : "until", optarg, &a->o))
				return 2;
			break;
		case 'n':
		case 'w':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 0 ||
			    (c == 'w' && v > 100000)) {
				fprintf(stderr, "nusku diff: --%s wants a number, "
					"not '%s'\n", c == 'n' ? "limit" : "width",
					optarg);
				return 2;
			}
			if (c == 'n')
				a->d.limit = v;
			else
				a->width = (int)v;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			fprintf(stderr, "see 'nusku diff --help'\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "nusku diff: %s; see 'nusku diff --help'\n",
			argc - optind > 2 ? "two recordings, no more"
					  : "which two recordings? (BASE NEW)");
		return 2;
	}
	a->file[0] = argv[optind];
	a->file[1] = argv[optind + 1];
	if (!strcmp(a->file[0], "-") && !strcmp(a->file[1], "-")) {
		fprintf(stderr, "nusku diff: only one recording can be stdin\n");
		return 2;
	}
	for (int i = 0; i < 2; i++)
		if (nsk_args__range("diff", &a->file[i], &a->o))
			return 2;
	return 0;
}

/* Loads and filters one recording into rep (its database opened here), as
 * export does for rv: allocations summed, weights alone. */
static int load(struct nsk_report *rep, const char *file,
		const struct nsk_view *rv)
{
	struct nsk_load_select sel;

	if (nsk_db__open(&rep->db)) {
		fprintf(stderr, "nusku diff: cannot open an in-memory database\n");
		return 1;
	}
	if (nsk_load__file_alloc(rep->db, file, rv ? nsk_view__skips(rv) : 0,
				 rv ? nsk_view__sums(rep->opts, rv, 1) : 0,
				 nsk_filter__select(rep->opts, &sel), rep->err,
				 sizeof(rep->err)) ||
	    nsk_filter__apply(rep)) {
		fprintf(stderr, "nusku diff: %s\n", rep->err);
		return 1;
	}
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct args a = { 0 };
	struct nsk_report rep[2] = { { 0 }, { 0 } };
	const struct nsk_diff_view *v;
	const struct nsk_view *rv;
	struct nsk_out out = { .f = stdout, .fmt = NSK_FMT_TEXT };
	int status, graph = -1; /* 0: svg, 1: html */

	status = parse(argc, argv, &a);
	if (status)
		return status < 0 ? 0 : status;
	if (a.format && !strcmp(a.format, "json"))
		out.fmt = NSK_FMT_JSON;
	else if (a.format && !strcmp(a.format, "csv"))
		out.fmt = NSK_FMT_CSV;
	else if (a.format && (!strcmp(a.format, "svg") || !strcmp(a.format, "html")))
		graph = !strcmp(a.format, "html");
	else if (a.format && strcmp(a.format, "text")) {
		fprintf(stderr, "nusku diff: --format: '%s' is not one of text, "
			"json, csv, svg, html\n", a.format);
		return 2;
	}
	out.width = a.width >= 0 ? a.width : nsk_out__term_width();
	v = nsk_diff__view(a.by ? a.by : nsk_diff_views[0]->name);
	if (!v) {
		fprintf(stderr, "nusku diff: --by: no view '%s'; views:", a.by);
		for (const struct nsk_diff_view *const *p = nsk_diff_views; *p; p++)
			fprintf(stderr, " %s", (*p)->name);
		fputc('\n', stderr);
		return 2;
	}
	rv = nsk_view__find(v->report_view);
	if (graph >= 0 && (!rv || !rv->measure)) {
		fprintf(stderr, "nusku diff: --by %s has no stacks to draw\n", v->name);
		return 2;
	}
	status = 1;
	for (int i = 0; i < 2; i++) {
		rep[i].cmd = "diff";
		rep[i].opts = &a.o;
		rep[i].out = out;
		if (load(&rep[i], a.file[i], rv))
			goto cleanup;
	}
	if (graph >= 0) {
		/* the graph's summary lines are in the file; stderr says
		 * them at once, as export does */
		rep[1].out.fmt = rep[0].out.fmt = NSK_FMT_CSV;
		nsk_report__warn(&rep[0]);
		nsk_report__warn(&rep[1]);
		if (nsk_export__flamegraph(&rep[1], &rep[0], rv->measure, graph,
					   stdout)) {
			fprintf(stderr, "nusku diff: %s\n", rep[1].err);
			goto cleanup;
		}
	} else if (nsk_diff__run(&rep[0], &rep[1], v, &a.d, &out)) {
		fprintf(stderr, "nusku diff: %s\n", rep[0].err);
		goto cleanup;
	}
	if (fflush(stdout)) {
		fprintf(stderr, "nusku diff: writing the output: %m\n");
		goto cleanup;
	}
	status = nsk_report__damaged(&rep[0], "diff", a.file[0]) |
		 nsk_report__damaged(&rep[1], "diff", a.file[1]);
cleanup:
	sqlite3_close(rep[0].db);
	sqlite3_close(rep[1].db);
	return status;
}
