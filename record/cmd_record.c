/* nusku record: parse the command line into struct nsk_record_opts and run
 * a recording (record/session.c).  The only place in record/ that prints
 * an error, once. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "controller/sessions.h"
#include "report/output.h"
#include "record/record.h"
#include "record/signals.h"
#include <nusku/events/ustack.h>

enum {
	OPT_NO_INHERIT = 256,
	OPT_DURATION,
	OPT_MIN_BLOCK,
	OPT_SLOW_SYSCALL,
	OPT_SYSCALL_SAMPLE,
	OPT_ALLOC_SAMPLE,
	OPT_ALLOC_UPROBES,
	OPT_NO_KSTACKS,
	OPT_CALL_GRAPH,
	OPT_STACK_SIZE,
	OPT_BACKGROUND,
	OPT_NAME,
	OPT_CONTINUOUS,
	OPT_SEGMENT,
	OPT_KEEP,
	OPT_GIVE_WAY,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nusku record [options] -- PROGRAM [ARGS...]\n"
		"       nusku record [options] -p PID\n"
		"       nusku record [options] -a\n"
		"\n"
		"Record a program, a running process or every process into a .nsk file.\n"
		"\n"
		"  -o, --output FILE        where to write (default nusku.nsk; - is stdout)\n"
		"  -p, --pid PID            attach to a running process and all its threads\n"
		"  -a, --all                every process on the machine but the recorder,\n"
		"                           kernel threads included, until Ctrl-C or -d\n"
		"  -e, --events LIST        signals to record, comma-separated (default:\n"
		"                           cpu,alloc,offcpu,net; no alloc with -p;\n"
		"                           cpu,offcpu with -a, which refuses alloc;\n"
		"                           syscall only when named or given a syscall\n"
		"                           option, as it slows every process's\n"
		"                           syscalls while it records;\n"
		"                           all is");
	for (int i = 0; nsk_signals[i]; i++)
		fprintf(f, "%s%s", i ? "," : " ", nsk_signals[i]->name);
	fprintf(f,
		")\n"
		"  -F, --freq HZ            CPU samples per second (default 999, at most\n"
		"                           20000 or the kernel's perf_event_max_sample_rate)\n"
		"  -d, --duration TIME      stop after TIME (seconds, or 500ms, 2m, ...)\n"
		"      --no-inherit         do not follow children (fork, clone, exec)\n"
		"      --no-kernel-stacks   take user stacks only\n"
		"      --call-graph MODE    user stacks by fp (frame pointers), dwarf (CFI\n"
		"                           unwinding of a stack copy) or auto (default:\n"
		"                           frame pointers where the code keeps them)\n"
		"      --stack-size SIZE    user stack copied for dwarf/auto (default 8k,\n"
		"                           at most 16k)\n"
		"      --min-block TIME     offcpu: shortest blocking recorded (default 10us)\n"
		"      --slow-syscall TIME  syscall: slower calls recorded one by one (default\n"
		"                           1ms; adds syscall to the default signals)\n"
		"      --syscall-sample TIME  syscall: a code path sampled per TIME of syscall\n"
		"                           time (default 100us; 1ns: every call)\n"
		"      --alloc-sample SIZE  alloc: sample one allocation per SIZE bytes on\n"
		"                           average (default 512k; 1: every allocation)\n"
		"      --alloc-uprobes      alloc: probe the allocator with uprobes instead\n"
		"                           of preloading Nusku's sampler (a trap per call)\n"
		"      --give-way           the recorder's main thread runs only when a CPU\n"
		"                           is idle while the program runs (by default it\n"
		"                           holds the records back up to a second); can\n"
		"                           cost CPU samples when other work keeps the\n"
		"                           machine busy\n"
		"  -q, --quiet              no status line\n"
		"      --background         detach: keep recording after the terminal\n"
		"                           closes; prints NAME and FILE once the probes\n"
		"                           are in (default FILE: NAME.nsk here)\n"
		"      --name NAME          the background session's name (default:\n"
		"                           the program's name and a number)\n"
		"      --continuous DIR     always on: one self-contained segment per\n"
		"                           --segment into DIR, the oldest deleted past\n"
		"                           --keep; low rates unless given (-F 49,\n"
		"                           events cpu; with -e: --min-block 1ms,\n"
		"                           --alloc-sample 4M); read with\n"
		"                           nusku report DIR\n"
		"      --segment TIME       continuous: a new segment this often (default 60s)\n"
		"      --keep TIME|SIZE     continuous: delete segments older than TIME or\n"
		"                           the oldest past SIZE (1h, 30m, 2d; 500M, 10G);\n"
		"                           both may be given (default 1h)\n"
		"  -h, --help               this help\n"
		"\n"
		"Recording ends when the program exits, on Ctrl-C or SIGTERM, or after\n"
		"--duration; the file is complete in every case.  nusku exits with the\n"
		"program's status (143 when it ended it with SIGTERM).  Needs root, or\n"
		"CAP_BPF + CAP_PERFMON.  A background session is listed by nusku\n"
		"sessions, shown by nusku live NAME and ended by nusku stop NAME.\n"
		"See nusku-record(1).\n");
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "nusku: record: invalid %s '%s'; see 'nusku record --help'\n",
		what, arg);
	return 2;
}

/* The highest -F accepted.  Nusku's own limit: at 50 kHz on two threads
 * the CPU samples' stack copies outran the ring buffer (12% lost on this
 * project's 2-core test machine, 73% at 100 kHz; none at 20 kHz).  The
 * kernel's: kernel.perf_event_max_sample_rate, which it lowers itself when
 * sampling interrupts take too long; above it perf_event_open refuses. */
#define NSK_FREQ_MAX 20000

static int check_freq(unsigned int hz)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned int kmax = 0;

	if (f) {
		if (fscanf(f, "%u", &kmax) != 1)
			kmax = 0;
		fclose(f);
	}
	if (kmax && hz > kmax && kmax <= NSK_FREQ_MAX) {
		fprintf(stderr, "nusku: record: -F %u: above this kernel's maximum, "
			"%u Hz (kernel.perf_event_max_sample_rate)\n", hz, kmax);
		return 0;
	}
	if (hz > NSK_FREQ_MAX) {
		fprintf(stderr, "nusku: record: -F %u: at most %u Hz (faster, the "
			"samples' stack copies outrun the ring buffer and are lost)\n",
			hz, NSK_FREQ_MAX);
		return 0;
	}
	return 1;
}

static int check_events(const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int ok = 1;

	if (!copy)
		return 0;
	for (tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
		int found = !strcmp(tok, "all");

		for (int i = 0; nsk_signals[i] && !found; i++)
			found = !strcmp(tok, nsk_signals[i]->name);
		if (!found) {
			fprintf(stderr, "nusku: record: unknown event '%s' (this build has:", tok);
			for (int i = 0; nsk_signals[i]; i++)
				fprintf(stderr, " %s", nsk_signals[i]->name);
			fprintf(stderr, ")\n");
			ok = 0;
		}
	}
	free(copy);
	return ok;
}

/* Whether the comma-separated list names one signal. */
static int has_event(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return 1;
	return 0;
}

/* --keep: a time (1h, 30m, 2d) or a size (500M, 10G). */
static int parse_keep(const char *arg, struct nsk_record_opts *o)
{
	size_t len = strlen(arg);
	uint64_t v;

	if (len > 1 && arg[len - 1] == 'd') {
		char buf[64];

		if (len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, arg, len - 1);
		buf[len - 1] = 0;
		if (nsk_parse_duration(buf, 86400000000000ull, &v) || !v)
			return -EINVAL;
		o->keep_ns = v;
		return 0;
	}
	if (!nsk_parse_duration(arg, 1000000000ull, &v)) {
		if (!v)
			return -EINVAL;
		o->keep_ns = v;
		return 0;
	}
	if (nsk_parse_size(arg, &v) || !v)
		return -EINVAL;
	o->keep_bytes = v;
	return 0;
}

/* The recorder's error, escaped: it may name what a target chose (its
 * name, its executable's path). */
static void say_error(const char *msg)
{
	fputs("nusku: record: ", stderr);
	nsk_out__put_escaped(stderr, msg);
	fputc('\n', stderr);
}

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "events", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
		{ "no-kernel-stacks", no_argument, NULL, OPT_NO_KSTACKS },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
		{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
		{ "slow-syscall", required_argument, NULL, OPT_SLOW_SYSCALL },
		{ "syscall-sample", required_argument, NULL, OPT_SYSCALL_SAMPLE },
		{ "alloc-sample", required_argument, NULL, OPT_ALLOC_SAMPLE },
		{ "alloc-uprobes", no_argument, NULL, OPT_ALLOC_UPROBES },
		{ "quiet", no_argument, NULL, 'q' },
		{ "give-way", no_argument, NULL, OPT_GIVE_WAY },
		{ "background", no_argument, NULL, OPT_BACKGROUND },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "continuous", required_argument, NULL, OPT_CONTINUOUS },
		{ "segment", required_argument, NULL, OPT_SEGMENT },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *name = NULL, *continuous = NULL;
	int background = 0, output_given = 0, keep_given = 0;
	int freq_given = 0, alloc_given = 0, block_given = 0;
	struct nsk_record_opts o = {
		.output = "nusku.nsk",
		.inherit = 1,
		.freq_hz = 999,
		.min_block_ns = 10000,
		.slow_syscall_ns = 1000000,
		.alloc_sample_bytes = 512 << 10,
		.kernel_stacks = 1,
	};
	char errbuf[600];
	uint64_t ns, sz;
	int c, status = 0, err;
	char *end;
	long v;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:p:ae:F:d:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			output_given = 1;
			break;
		case 'p':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v <= 0 || v > INT_MAX)
				return bad("pid", optarg);
			o.pid = (int)v;
			break;
		case 'a':
			o.all = 1;
			break;
		case 'e':
			if (!check_events(optarg))
				return 2;
			o.events = optarg;
			break;
		case 'F':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v <= 0 || v > INT_MAX)
				return bad("frequency (Hz)", optarg);
			if (!check_freq((unsigned int)v))
				return 2;
			o.freq_hz = (unsigned int)v;
			freq_given = 1;
			break;
		case 'd':
			if (nsk_parse_duration(optarg, 1000000000ull, &ns) || !ns)
				return bad("duration", optarg);
			o.duration_s = (double)ns / 1e9;
			break;
		case OPT_NO_INHERIT:
			o.inherit = 0;
			break;
		case OPT_NO_KSTACKS:
			o.kernel_stacks = 0;
			break;
		case OPT_MIN_BLOCK:
			if (nsk_parse_duration(optarg, 1000, &o.min_block_ns))
				return bad("--min-block (e.g. 50us, 1ms)", optarg);
			block_given = 1;
			break;
		case OPT_SLOW_SYSCALL:
			if (nsk_parse_duration(optarg, 1000, &o.slow_syscall_ns))
				return bad("--slow-syscall (e.g. 100us, 10ms)", optarg);
			o.syscall_asked = 1;
			break;
		case OPT_SYSCALL_SAMPLE:
			if (nsk_parse_duration(optarg, 1000, &o.syscall_sample_ns) ||
			    !o.syscall_sample_ns)
				return bad("--syscall-sample (e.g. 100us, 1ns)", optarg);
			o.syscall_asked = 1;
			break;
		case OPT_ALLOC_UPROBES:
			o.alloc_uprobes = 1;
			break;
		case OPT_GIVE_WAY:
			o.give_way = 1;
			break;
		case OPT_ALLOC_SAMPLE:
			if (nsk_parse_size(optarg, &o.alloc_sample_bytes))
				return bad("--alloc-sample (e.g. 512k)", optarg);
			if (o.alloc_sample_bytes == 1)
				o.alloc_sample_bytes = 0; /* every allocation */
			alloc_given = 1;
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "auto"))
				o.call_graph = NSK_CALL_GRAPH_AUTO;
			else if (!strcmp(optarg, "fp"))
				o.call_graph = NSK_CALL_GRAPH_FP;
			else if (!strcmp(optarg, "dwarf"))
				o.call_graph = NSK_CALL_GRAPH_DWARF;
			else
				return bad("--call-graph (fp, dwarf or auto)", optarg);
			break;
		case OPT_STACK_SIZE:
			if (nsk_parse_size(optarg, &sz) || sz < 64 ||
			    sz > NSK_USTACK_MAX)
				return bad("--stack-size (64 to 16k)", optarg);
			o.stack_bytes = (uint32_t)sz;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case OPT_BACKGROUND:
			background = 1;
			break;
		case OPT_NAME:
			name = optarg;
			break;
		case OPT_CONTINUOUS:
			continuous = optarg;
			break;
		case OPT_SEGMENT:
			if (nsk_parse_duration(optarg, 1000000000ull, &o.segment_ns) ||
			    o.segment_ns < 100000000ull)
				return bad("--segment (at least 100ms; e.g. 60s, 10m)",
					   optarg);
			break;
		case OPT_KEEP:
			if (parse_keep(optarg, &o))
				return bad("--keep (a time: 1h, 30m, 2d; or a size: "
					   "500M, 10G)", optarg);
			keep_given = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "see 'nusku record --help'\n");
			return 2;
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (o.pid && o.argv) {
		fprintf(stderr, "nusku: record: give either -p PID or a program, not both\n");
		return 2;
	}
	if (!strcmp(o.output, "-") && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "nusku: record: -o - would write a binary recording to the terminal; redirect it or pipe it\n");
		return 2;
	}
	if (o.all && (o.pid || o.argv)) {
		fprintf(stderr, "nusku: record: -a records every process: no -p PID "
			"or PROGRAM with it\n");
		return 2;
	}
	if (o.all && o.events && has_event(o.events, "alloc")) {
		fprintf(stderr, "nusku: record: -a cannot record alloc: its sampler "
			"is preloaded into a launched program, and uprobes would "
			"trap every process's malloc\n");
		return 2;
	}
	if (!o.pid && !o.argv && !o.all) {
		fprintf(stderr, "nusku: record: nothing to record: give -p PID, -a or -- PROGRAM\n");
		return 2;
	}
	if (name && !background) {
		fprintf(stderr, "nusku: record: --name names a --background session\n");
		return 2;
	}
	if ((o.segment_ns || keep_given) && !continuous) {
		fprintf(stderr, "nusku: record: --segment and --keep are for --continuous DIR\n");
		return 2;
	}
	if (continuous) {
		if (output_given) {
			fprintf(stderr, "nusku: record: --continuous writes into its "
				"DIR: no -o\n");
			return 2;
		}
		o.continuous = 1;
		o.output = continuous;
		output_given = 1;
		if (!o.segment_ns)
			o.segment_ns = 60000000000ull;
		if (!keep_given)
			o.keep_ns = 3600000000000ull;
		/* always on: rates that cost a busy program about 1% or less
		 * (docs/record.md, "Continuous mode") */
		if (!freq_given)
			o.freq_hz = 49;
		if (!alloc_given)
			o.alloc_sample_bytes = 4u << 20;
		if (!block_given)
			o.min_block_ns = 1000000;
	}
	if (background) {
		if (output_given && !strcmp(o.output, "-")) {
			fprintf(stderr, "nusku: record: --background writes a file, not -o -\n");
			return 2;
		}
		if (!output_given)
			o.output = NULL; /* NAME.nsk */
		err = nsk_sessions__start_background(&o, name, argv - 1, stdout,
						    errbuf, sizeof(errbuf));
		if (err) {
			say_error(errbuf);
			return 1;
		}
		return 0;
	}
	/* argv - 1: main()'s argv, "nusku" included, for the META record */
	err = nsk_record__run(&o, argv - 1, &status, errbuf, sizeof(errbuf));
	if (err) {
		say_error(errbuf);
		return 1;
	}
	return status;
}
