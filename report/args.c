/* The command-line pieces `report` and `export` share: the filters (--pid
 * --tid --comm --since --until) and the one recording after the options,
 * checked here once, so that both refuse the same input with the same
 * words. */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nusku/segdir.h>

#include "report/report.h"

/* Longest --since / --until: the nanoseconds must fit in an int64 added
 * to the start; beyond it (292 years) is a typo, refused rather than
 * wrapped. */
#define MAX_SECONDS 9e9

static int list_ok(const char *s)
{
	/* Digits and commas only: it goes into SQL as a list of numbers. */
	return *s && strspn(s, "0123456789,") == strlen(s) &&
	       s[0] != ',' && s[strlen(s) - 1] != ',' && !strstr(s, ",,");
}

int nsk_args__number(const char *s, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	/* strtod also takes "nan" and "inf" */
	return errno || end == s || *end || !isfinite(*out) || *out < 0 ||
	       *out > max ? -EINVAL : 0;
}

int nsk_args__filter(const char *cmd, const char *opt, const char *arg,
		     struct nsk_report_opts *o)
{
	if (!strcmp(opt, "pid") || !strcmp(opt, "tid")) {
		if (!list_ok(arg)) {
			fprintf(stderr, "nusku %s: --%s wants numbers separated "
				"by commas, not '%s'\n", cmd, opt, arg);
			return 2;
		}
		*(opt[0] == 'p' ? &o->pids : &o->tids) = arg;
		return 0;
	}
	if (!strcmp(opt, "comm")) {
		o->comms = arg;
		return 0;
	}
	if (!strcmp(opt, "since") || !strcmp(opt, "until")) {
		/* checked by nsk_args__range, once the recording is known */
		*(opt[0] == 's' ? &o->since_arg : &o->until_arg) = arg;
		return 0;
	}
	return 2;
}

/* The "DIR@FROM..TO" specs made (diff makes two): they live as long as
 * the command, held here so that nothing is lost. */
static char *range_specs[2];
static int nrange_specs;

int nsk_args__range(const char *cmd, const char **file,
		    struct nsk_report_opts *o)
{
	const char *args[2] = { o->since_arg, o->until_arg };
	const char *names[2] = { "since", "until" };
	double *vals[2] = { &o->since, &o->until };
	char *spec;

	if (nsk_segdir__is_dir(*file)) {
		if (!args[0] && !args[1])
			return 0;
		if (asprintf(&spec, "%s@%s..%s", *file, args[0] ? args[0] : "",
			     args[1] ? args[1] : "") < 0) {
			fprintf(stderr, "nusku %s: out of memory\n", cmd);
			return 2;
		}
		if (nrange_specs < 2)
			range_specs[nrange_specs++] = spec;
		*file = spec;
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		if (!args[i] || !nsk_args__number(args[i], MAX_SECONDS, vals[i]))
			continue;
		fprintf(stderr, "nusku %s: --%s wants seconds from 0 to %.0f, "
			"not '%s'\n", cmd, names[i], MAX_SECONDS, args[i]);
		return 2;
	}
	return 0;
}

int nsk_args__recording(const char *cmd, int argc, char **argv, const char **file)
{
	if (optind != argc - 1) {
		fprintf(stderr, "nusku %s: %s; see 'nusku %s --help'\n", cmd,
			optind < argc ? "one recording at a time"
				      : "which recording? (FILE, or - for stdin)", cmd);
		return 2;
	}
	*file = argv[optind];
	return 0;
}
