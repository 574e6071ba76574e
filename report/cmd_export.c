/* nusku export: a recording's stacks for other tools: pprof (go tool
 * pprof, Pyroscope, Parca, speedscope), an interactive SVG flame graph
 * (alone or in an HTML page), folded lines (flamegraph.pl), and its
 * timeline in the Trace Event Format (Perfetto, the Firefox Profiler).  It loads and filters the recording as
 * `report` does and writes what the view counts (report/export.h).  This
 * file is the command line only.  Exit status: 0 success, 1 error (one
 * line on stderr), 2 usage error. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nusku/outfile.h>

#include "cli/commands.h"
#include "report/db.h"
#include "report/export.h"
#include "report/load.h"
#include "report/report.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: nusku export [options] FILE|-|DIR[@FROM..TO]\n"
"\n"
"Writes what a view counts on its stacks for other tools.\n"
"\n"
"  -f, --format FMT   pprof (default): gzipped profile.proto for go tool\n"
"                     pprof, Pyroscope, Parca, speedscope; svg: an\n"
"                     interactive flame graph; html: the same in a web page;\n"
"                     folded: flamegraph.pl's input; chrome: every signal on\n"
"                     a timeline (Trace Event Format JSON: Perfetto UI,\n"
"                     chrome://tracing, Firefox Profiler; takes no --by)\n"
"  -b, --by WHAT      what to count (default cpu; pprof's sample types):\n");
	for (unsigned i = 0; nsk_measure__at(i); i++)
		fprintf(f, "      %-8s %s\n", nsk_measure__at(i)->name,
			nsk_measure__at(i)->help);
	fprintf(f,
"                     or a view of 'nusku report --by' with stacks\n"
"  -o, --output OUT   write to OUT (a new 0600 file); - or none: stdout\n"
"  -p, --pid LIST     only these processes (comma-separated)\n"
"      --tid LIST     only these threads\n"
"  -c, --comm LIST    only threads with these names\n"
"  -s, --since SEC    only events SEC seconds or more after the start\n"
"  -u, --until SEC    only events up to SEC seconds after the start\n"
"  -h, --help         this help\n");
}

struct args {
	struct nsk_report_opts o;
	const char *file, *format, *output;
};

/* 0, or the exit status of a usage error (-1: --help). */
static int parse(int argc, char **argv, struct args *a)
{
	enum { OPT_TID = 256 };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "by", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "comm", required_argument, NULL, 'c' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	a->o.since = a->o.until = -1;
	a->o.limit = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:b:o:p:c:s:u:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'f': a->format = optarg; break;
		case 'b': a->o.view = optarg; break;
		case 'o': a->output = optarg; break;
		case 'p':
		case OPT_TID:
		case 'c':
		case 's':
		case 'u':
			if (nsk_args__filter("export", c == 'p' ? "pid" :
					     c == OPT_TID ? "tid" : c == 'c' ?
					     "comm" : c == 's' ? "since" : "until",
					     optarg, &a->o))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			fprintf(stderr, "see 'nusku export --help'\n");
			return 2;
		}
	}
	return nsk_args__recording("export", argc, argv, &a->file) ?:
	       nsk_args__range("export", &a->file, &a->o);
}

/* The view --by names: a view, or the first view of a measure. */
static const struct nsk_view *view_of(const char *name)
{
	const struct nsk_measure *m = nsk_measure__find(name);
	const struct nsk_view *v = nsk_view__find(name);

	if (v)
		return v;
	for (const struct nsk_view *const *p = nsk_views; m && *p; p++)
		if ((*p)->measure == m && (*p)->weights)
			return *p;
	return NULL;
}

int cmd_export(int argc, char **argv)
{
	struct args a = { 0 };
	struct nsk_report rep = { 0 };
	struct nsk_load_select sel;
	struct nsk_outfile of = { .fd = -1 };
	enum nsk_export_fmt fmt = NSK_EXPORT_PPROF;
	const struct nsk_view *view;
	int to_file, status, err;
	sqlite3 *db = NULL;
	FILE *f = stdout;

	status = parse(argc, argv, &a);
	if (status)
		return status < 0 ? 0 : status;
	if (a.format && nsk_export__format(a.format, &fmt)) {
		fprintf(stderr, "nusku export: --format: '%s' is not one of "
			"pprof, svg, html, folded, chrome\n", a.format);
		return 2;
	}
	if (fmt == NSK_EXPORT_CHROME && a.o.view) {
		fprintf(stderr, "nusku export: --by: chrome writes every signal's "
			"timeline, not one view\n");
		return 2;
	}
	view = view_of(a.o.view ? a.o.view : "cpu");
	if (!view || !view->measure || !view->weights) {
		fprintf(stderr, "nusku export: --by: '%s' has no stacks to "
			"export; one of:", a.o.view);
		for (unsigned i = 0; nsk_measure__at(i); i++)
			fprintf(stderr, " %s", nsk_measure__at(i)->name);
		fputc('\n', stderr);
		return 2;
	}
	to_file = a.output && strcmp(a.output, "-");
	if (!to_file && fmt == NSK_EXPORT_PPROF && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "nusku export: pprof is binary: not writing it "
			"to a terminal (use -o FILE, or a pipe)\n");
		return 2;
	}
	rep.cmd = "export";
	rep.out.fmt = NSK_FMT_CSV; /* warnings go to stderr */
	rep.opts = &a.o;
	if (to_file) {
		if (nsk_export__open(&of, a.output, a.file, fmt, rep.err,
				     sizeof(rep.err))) {
			fprintf(stderr, "nusku export: -o %s\n", rep.err);
			return 1;
		}
		f = fdopen(of.fd, "w");
		if (!f) {
			fprintf(stderr, "nusku export: %s: %m\n", a.output);
			nsk_outfile__discard(&of);
			return 1;
		}
		/* the stream owns the descriptor; the file stays open in it
		 * until committed or discarded */
	}
	status = 1;
	if (nsk_db__open(&db)) {
		fprintf(stderr, "nusku export: cannot open an in-memory database\n");
		goto cleanup;
	}
	rep.db = db;
	/* the timeline reads every table, every row; the others the
	 * view's, allocations summed (the filter applied as they are) */
	if (nsk_load__file_alloc(db, a.file, fmt == NSK_EXPORT_CHROME ? 0 :
				 nsk_view__skips(view), fmt == NSK_EXPORT_CHROME ?
				 0 : nsk_view__sums(&a.o, view, 1),
				 nsk_filter__select(&a.o, &sel), rep.err,
				 sizeof(rep.err)) ||
	    nsk_filter__apply(&rep)) {
		fprintf(stderr, "nusku export: %s\n", rep.err);
		goto cleanup;
	}
	err = nsk_export__write(&rep, fmt, view, f);
	if (err) {
		fprintf(stderr, "nusku export: %s\n", rep.err);
		goto cleanup;
	}
	if (fflush(f) || (to_file && fsync(fileno(f)))) {
		fprintf(stderr, "nusku export: writing %s: %m\n",
			to_file ? a.output : "the output");
		goto cleanup;
	}
	if (to_file && nsk_outfile__commit(&of, rep.err, sizeof(rep.err))) {
		fprintf(stderr, "nusku export: -o %s\n", rep.err);
		goto cleanup;
	}
	status = nsk_report__damaged(&rep, "export", a.file);
cleanup:
	sqlite3_close(db);
	if (to_file) {
		of.fd = -1; /* the stream owns it */
		if (status && of.tmp)
			nsk_outfile__discard(&of); /* before the close: see outfile.h */
		if (fclose(f) && !status) {
			fprintf(stderr, "nusku export: writing %s: %m\n", a.output);
			status = 1;
		}
		nsk_outfile__release(&of);
	}
	return status;
}
