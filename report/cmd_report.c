/* nusku report: load a recording (file or pipe) into SQLite and answer a
 * view, a tree, folded stacks or the user's SQL.  This file is the command
 * line only: options, opening the input, and the order of the steps
 * (load, filter, save, answer).  Exit status: 0 success, 1 error (one
 * line on stderr), 2 usage error. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "report/db.h"
#include "report/load.h"
#include "report/report.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: nusku report [options] FILE|-|DIR[@FROM..TO]\n"
"\n"
"Loads a recording into SQLite (in memory) and answers a view.\n"
"\n"
"  -b, --by VIEW      what to count by (default function); views:\n");
	for (const struct nsk_view *const *v = nsk_views; *v; v++)
		fprintf(f, "      %-12s %s\n", (*v)->name, (*v)->help);
	fprintf(f,
"  -t, --tree         the caller tree of the view's stacks, root first\n"
"  -F, --folded       folded stacks (\"root;...;leaf count\") for flamegraph.pl\n"
"  -q, --sql QUERY    run QUERY on the database (tables: docs/schema.md)\n"
"  -d, --db FILE      write the database to FILE (SQLite); alone: only that\n"
"  -f, --format FMT   text (default), json or csv\n"
"  -p, --pid LIST     only these processes (comma-separated)\n"
"      --tid LIST     only these threads\n"
"  -c, --comm LIST    only threads with these names\n"
"  -s, --since SEC    only events SEC seconds or more after the start\n"
"                     (of a --continuous DIR: its segments since SEC (10m,\n"
"                     90s) before the newest one's end, or a UTC time)\n"
"  -u, --until SEC    only events up to SEC seconds after the start\n"
"  -n, --limit N      at most N rows\n"
"      --min-pct P    --tree: leave out nodes under P%% (default 0.5)\n"
"      --per-thread   --by blocking: each thread's wall time split by reason\n"
"      --leaks        --by leaks: memory never freed, by process and site\n"
"  -w, --width N      text width (default: the terminal's, or 80; 0: any)\n"
"  -h, --help         this help\n"
"\n"
"Every report says how many events were lost, how many frames stayed\n"
"unresolved and whether the file was cut short or damaged.\n");
}

struct args {
	struct nsk_report_opts o;
	const char *file;
	const char *format;
	int width;
};

/* 0, or the exit status of a usage error. */
static int parse(int argc, char **argv, struct args *a)
{
	enum { OPT_TID = 256, OPT_MIN_PCT, OPT_PER_THREAD, OPT_LEAKS };
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "tree", no_argument, NULL, 't' },
		{ "folded", no_argument, NULL, 'F' },
		{ "sql", required_argument, NULL, 'q' },
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "comm", required_argument, NULL, 'c' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'u' },
		{ "limit", required_argument, NULL, 'n' },
		{ "min-pct", required_argument, NULL, OPT_MIN_PCT },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "leaks", no_argument, NULL, OPT_LEAKS },
		{ "width", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c;

	a->o.since = a->o.until = -1;
	a->o.limit = -1;
	a->o.min_pct = 0.5;
	a->width = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "b:tFq:d:f:p:c:s:u:n:w:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'b': a->o.view = optarg; break;
		case 't': a->o.tree = 1; break;
		case OPT_PER_THREAD: a->o.per_thread = 1; break;
		case OPT_LEAKS: a->o.view = "leaks"; break;
		case 'F': a->o.folded = 1; break;
		case 'q': a->o.sql = optarg; break;
		case 'd': a->o.db = optarg; break;
		case 'f': a->format = optarg; break;
		case 'p':
		case OPT_TID:
		case 'c':
		case 's':
		case 'u':
			if (nsk_args__filter("report", c == 'p' ? "pid" :
					     c == OPT_TID ? "tid" : c == 'c' ?
					     "comm" : c == 's' ? "since" : "until",
					     optarg, &a->o))
				return 2;
			break;
		case 'n':
		case 'w':
			errno = 0;
			{
				long v = strtol(optarg, &end, 10);

				if (errno || end == optarg || *end || v < 0) {
					fprintf(stderr, "nusku report: --%s wants a "
						"number, not '%s'\n",
						c == 'n' ? "limit" : "width",
						optarg);
					return 2;
				}
				if (c == 'n')
					a->o.limit = v;
				else
					a->width = (int)v;
			}
			break;
		case OPT_MIN_PCT:
			if (nsk_args__number(optarg, 100, &a->o.min_pct)) {
				fprintf(stderr, "nusku report: --min-pct wants a "
					"percentage, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			fprintf(stderr, "see 'nusku report --help'\n");
			return 2;
		}
	}
	return nsk_args__recording("report", argc, argv, &a->file) ?:
	       nsk_args__range("report", &a->file, &a->o);
}

int cmd_report(int argc, char **argv)
{
	struct args a = { 0 };
	struct nsk_report rep = { 0 };
	struct nsk_load_select sel;
	const struct nsk_view *view;
	sqlite3 *db = NULL;
	int status, err;

	status = parse(argc, argv, &a);
	if (status)
		return status < 0 ? 0 : status;
	rep.out.f = stdout;
	rep.out.fmt = NSK_FMT_TEXT;
	if (a.format && !strcmp(a.format, "json"))
		rep.out.fmt = NSK_FMT_JSON;
	else if (a.format && !strcmp(a.format, "csv"))
		rep.out.fmt = NSK_FMT_CSV;
	else if (a.format && strcmp(a.format, "text")) {
		fprintf(stderr, "nusku report: --format: '%s' is not one of "
			"text, json, csv\n", a.format);
		return 2;
	}
	rep.out.width = a.width >= 0 ? a.width : nsk_out__term_width();
	view = nsk_view__find(a.o.view ? a.o.view : nsk_views[0]->name);
	if (!view) {
		fprintf(stderr, "nusku report: no view '%s'; views:", a.o.view);
		for (const struct nsk_view *const *v = nsk_views; *v; v++)
			fprintf(stderr, " %s", (*v)->name);
		fputc('\n', stderr);
		return 2;
	}
	if (a.o.per_thread && !view->per_thread) {
		fprintf(stderr, "nusku report: view '%s' has no --per-thread "
			"form\n", view->name);
		return 2;
	}
	if ((a.o.tree || a.o.folded) && !view->weights) {
		fprintf(stderr, "nusku report: view '%s' has no stacks for "
			"--tree or --folded\n", view->name);
		return 2;
	}
	if (a.o.tree + a.o.folded + !!a.o.sql > 1) {
		fprintf(stderr, "nusku report: --tree, --folded and --sql do not "
			"go together\n");
		return 2;
	}
	if (a.o.db && nsk_db__check_target(a.o.db, a.file, rep.err,
					    sizeof(rep.err))) {
		fprintf(stderr, "nusku report: --db %s\n", rep.err);
		return 1;
	}
	if (nsk_db__open(&db)) {
		fprintf(stderr, "nusku report: cannot open an in-memory database\n");
		return 1;
	}
	rep.db = db;
	rep.opts = &a.o;
	status = 1;
	if (nsk_load__file_alloc(db, a.file, a.o.sql || a.o.db ? 0 : nsk_view__skips(view),
				 nsk_view__sums(&a.o, view, 0),
				 nsk_filter__select(&a.o, &sel), rep.err,
				 sizeof(rep.err))) {
		fprintf(stderr, "nusku report: %s\n", rep.err);
		goto cleanup;
	}
	if (nsk_filter__apply(&rep)) {
		fprintf(stderr, "nusku report: %s\n", rep.err);
		goto cleanup;
	}
	if (a.o.db && nsk_db__save(db, a.o.db, rep.err, sizeof(rep.err))) {
		fprintf(stderr, "nusku report: --db %s\n", rep.err);
		goto cleanup;
	}
	nsk_report__signal_note(&rep, view->signal);
	if (a.o.sql)
		err = nsk_report__sql(&rep, a.o.sql);
	else if (a.o.tree)
		err = nsk_stacks__tree(&rep, view);
	else if (a.o.folded)
		err = nsk_stacks__folded(&rep, view);
	else if (a.o.db && !a.o.view) {
		nsk_report__warn(&rep); /* --db alone: the file is the output */
		err = 0;
	} else
		err = view->run(&rep, view);
	if (err) {
		fprintf(stderr, "nusku report: %s\n", rep.err);
		goto cleanup;
	}
	status = fflush(stdout) ? 1 : 0;
	if (status)
		fprintf(stderr, "nusku report: writing the report: %m\n");
	else
		status = nsk_report__damaged(&rep, "report", a.file);
cleanup:
	sqlite3_close(db);
	return status;
}
