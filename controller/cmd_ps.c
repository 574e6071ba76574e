/* nusku ps: the command line of the process table (controller/ps.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/commands.h"
#include "controller/ps.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nusku ps [--format text|json] [--sort cpu|rss|pid|name] [FILTER]\n"
		"\n"
		"The processes of this machine, one row each: pid, user, CPU%% over\n"
		"200 ms, RSS, threads, runtime (native go rust java node python kernel),\n"
		"whether the main binary keeps frame pointers (FP) and has debug info\n"
		"(DBG), whether you may profile it (PROF), and the command line.\n"
		"JSON adds cgroup, container, what is missing to profile, sessions.\n"
		"\n"
		"  -f, --format FMT   text (default; fits 80 columns) or json\n"
		"  -s, --sort KEY     cpu (default), rss, pid or name\n"
		"  FILTER             a pid, or text found in the comm, command line,\n"
		"                     user or cgroup, or a runtime name\n"
		"  -h, --help         this text\n");
}

static int term_width(void)
{
	struct winsize ws;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col > 80)
		return ws.ws_col;
	return 80;
}

int cmd_ps(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "sort", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nsk_ps_opts o = { .sort = NSK_PS_SORT_CPU, .interval_ms = 200,
				 .proc_root = "/proc" };
	struct nsk_ps_row *rows = NULL;
	int c, n = 0, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "json"))
				o.json = 1;
			else if (strcmp(optarg, "text")) {
				fprintf(stderr, "nusku ps: --format: '%s' is not text or json\n",
					optarg);
				return 2;
			}
			break;
		case 's':
			if (!strcmp(optarg, "cpu"))
				o.sort = NSK_PS_SORT_CPU;
			else if (!strcmp(optarg, "rss"))
				o.sort = NSK_PS_SORT_RSS;
			else if (!strcmp(optarg, "pid"))
				o.sort = NSK_PS_SORT_PID;
			else if (!strcmp(optarg, "name"))
				o.sort = NSK_PS_SORT_NAME;
			else {
				fprintf(stderr, "nusku ps: --sort: '%s' is not cpu, rss, pid or name\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "nusku ps: one FILTER at most (got %d words)\n", argc - optind);
		return 2;
	}
	if (optind < argc)
		o.filter = argv[optind];
	o.width = term_width();
	err = nsk_ps__collect(&o, &rows, &n);
	if (err < 0) {
		fprintf(stderr, "nusku ps: cannot read /proc: %s\n", strerror(-err));
		return 1;
	}
	err = nsk_ps__print(stdout, &o, rows, n);
	nsk_ps__free_rows(rows, n);
	if (err < 0) {
		fprintf(stderr, "nusku ps: cannot write the table: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
