/* nusku: the command table.  Each subcommand lives in a file of its own and
 * parses its own options; this file only finds it. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli/commands.h"
#include <nusku/format.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd commands[] = {
	{ "record", cmd_record, "record a program or a running process into a .nsk file" },
	{ "report", cmd_report, "load a recording into SQLite and answer a view" },
	{ "live", cmd_live_entry, "show a recording, a pipe or a remote host as it happens; with no target, pick a process" },
	{ "export", cmd_export, "pprof, flame graphs (SVG, HTML), folded lines, a timeline" },
	{ "diff", cmd_diff, "compare two recordings: what got faster, slower, or no change" },
	{ "ps", cmd_ps, "list processes: CPU, runtime, frame pointers, who may profile" },
	{ "sessions", cmd_sessions, "list background recordings: running, ended, crashed" },
	{ "stop", cmd_stop, "end a background recording cleanly" },
	{ "info", cmd_info, "describe a .nsk file: header, chunks, counts, losses" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: nusku [--version] [--help] <command> [<args>]\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'nusku <command> --help' describes a command; "
		   "man nusku-<command> has the details.\n");
}

int nsk_cli__not_implemented(const char *cmd)
{
	fprintf(stderr, "nusku: %s: not implemented yet\n", cmd);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("nusku %s (file format %d.%d)\n", PACKAGE_VERSION,
		       NSK_FORMAT_MAJOR, NSK_FORMAT_MINOR);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "nusku: '%s' is not a command; see 'nusku --help'\n",
		argv[1]);
	return 2;
}
