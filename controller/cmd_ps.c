/* nusku ps: the command line of the process table (controller/ps.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "report/output.h"
#include "controller/ps.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nusku ps [--ssh [USER@]HOST] [--format text|json]\n"
		"                [--sort cpu|rss|pid|name] [FILTER]\n"
		"\n"
		"The processes of this machine, one row each: pid, user, CPU%% over\n"
		"200 ms, RSS, threads, runtime (native go rust java node python kernel),\n"
		"whether the main binary keeps frame pointers (FP) and has debug info\n"
		"(DBG), whether you may profile it (PROF), and the command line.\n"
		"JSON adds cgroup, container, what is missing to profile, sessions (the\n"
		"background sessions recording it; the command shows them as [NAME]).\n"
		"\n"
		"  -f, --format FMT   text (default; fits 80 columns) or json\n"
		"  -s, --sort KEY     cpu (default), rss, pid or name\n"
		"      --ssh HOST     the processes of HOST (runs nusku ps there, OpenSSH)\n"
		"      --ssh-opt OPTS options for ssh, split at blanks (repeatable)\n"
		"      --remote-nusku PATH  nusku on HOST (default: nusku on its PATH)\n"
		"  FILTER             a pid, or text found in the comm, command line,\n"
		"                     user or cgroup, or a runtime name\n"
		"  -h, --help         this text\n");
}

int cmd_ps(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "sort", required_argument, NULL, 's' },
		{ "ssh", required_argument, NULL, 'S' },
		{ "ssh-opt", required_argument, NULL, 'O' },
		{ "remote-nusku", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nsk_ps_opts o = { .sort = NSK_PS_SORT_CPU, .interval_ms = 200,
				 .proc_root = "/proc" };
	struct nsk_ps_row *rows = NULL;
	char msg[1200];
	int c, n = 0, err, status = 0;

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
		case 'S':
			o.ssh_host = optarg;
			break;
		case 'O': {
			/* "-p 2222 -i key" is four words, as for live --ssh-opt */
			char *save = NULL, *w;

			for (w = strtok_r(optarg, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
				char **nv = realloc(o.ssh_opts, (size_t)(o.nssh_opts + 1) * sizeof(*nv));

				if (!nv) {
					fprintf(stderr, "nusku ps: out of memory\n");
					free(o.ssh_opts);
					return 1;
				}
				o.ssh_opts = nv;
				o.ssh_opts[o.nssh_opts++] = w;
			}
			break;
		}
		case 'R':
			o.remote_nusku = optarg;
			break;
		case 'h':
			free(o.ssh_opts);
			usage(stdout);
			return 0;
		default:
			free(o.ssh_opts);
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "nusku ps: one FILTER at most (got %d words)\n", argc - optind);
		status = 2;
		goto cleanup;
	}
	if (optind < argc)
		o.filter = argv[optind];
	o.width = nsk_out__term_width();
	if (o.width < 80)
		o.width = 80; /* wider only on a wider terminal */
	if (o.ssh_host) {
		err = nsk_ps__remote(&o, &rows, &n, msg, sizeof(msg));
		if (err < 0) {
			fprintf(stderr, "nusku ps: %s\n", msg[0] ? msg : strerror(-err));
			status = 1;
			goto cleanup;
		}
	} else {
		err = nsk_ps__collect(&o, &rows, &n);
		if (err < 0) {
			fprintf(stderr, "nusku ps: cannot read /proc: %s\n", strerror(-err));
			status = 1;
			goto cleanup;
		}
		nsk_ps__sessions(rows, n);
	}
	err = nsk_ps__print(stdout, &o, rows, n);
	if (err < 0) {
		fprintf(stderr, "nusku ps: cannot write the table: %s\n", strerror(-err));
		status = 1;
	}
cleanup:
	nsk_ps__free_rows(rows, n);
	free(o.ssh_opts);
	return status;
}
