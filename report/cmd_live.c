/* nusku live: the picture of a recording as it is made.
 *
 * One loop, no threads: read what the source has (a budget at a time) into
 * the report loader's database, then draw the full screen or print a text
 * snapshot once per interval, and take keys in between.  The stream is read
 * even while the picture is paused, so nothing is lost by looking away.
 *
 * When the user quits while a recorder child runs, the child is asked to
 * stop (SIGINT) and its last bytes are still read, so a recording kept with
 * -o ends with its END record like any other. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include <nusku/segdir.h>

#include "controller/sessions.h"
#include "report/live.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nusku live [options] FILE        follow a recording being written\n"
		"       nusku live [options] NAME        the same for a background session\n"
		"                                        (nusku sessions; q leaves it running)\n"
		"       nusku live [options] -            read a recording from a pipe\n"
		"       nusku live [options] -p PID       record a running process and show it\n"
		"       nusku live [options] -a           record every process and show it\n"
		"       nusku live [options] -- CMD ARGS  launch, record and show\n"
		"       nusku live --ssh [user@]host [options] (-p PID | -- CMD ARGS)\n"
		"       nusku live --ssh [user@]host [options] (FILE | NAME)  one there\n"
		"       nusku live [--ssh [user@]host] [options]  pick a process from a list\n"
		"\n"
		"options:\n"
		"  -o, --output FILE      also keep the recording in FILE\n"
		"  -i, --interval SECS    redraw / snapshot period (default 1)\n"
		"  -n, --count N          stop after N snapshots\n"
		"      --window SECS      the \"last window\" of the views (default 1)\n"
		"      --top N            rows per view in a snapshot (default 5)\n"
		"      --view NAME        cpu, alloc, offcpu, syscall or net: the view\n"
		"                         shown first (only that one in a snapshot)\n"
		"      --snapshot         print text snapshots even on a terminal\n"
		"  -e, --events LIST      signals to record (nusku record -e)\n"
		"  -F, --freq HZ          CPU sampling frequency (nusku record -F)\n"
		"  -d, --duration SECS    record this long (nusku record -d)\n"
		"      --record-opt ARG   pass ARG on to nusku record (repeatable)\n"
		"      --ssh [USER@]HOST  record on HOST over ssh and show it here\n"
		"      --ssh-opt OPTS     options for ssh, split at blanks (repeatable)\n"
		"      --remote-nusku P   the nusku program on the remote host\n"
		"      --raw              copy FILE or NAME's bytes to stdout as they come,\n"
		"                         no view (what live --ssh runs there)\n"
		"\n"
		"On a terminal: 1-5/Tab views, s sort, w window, space pause, t/P thread/\n"
		"process filter, c clear, q quit.  Otherwise a text snapshot per interval.\n");
}

static int push_arg(char ***v, int *n, const char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[(*n)++] = (char *)s;
	nv[*n] = NULL;
	return 0;
}

static int parse_num(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* NAME, when no file of that name is here: the file of the background
 * session NAME (controller/sessions.h), followed as it grows; leaving
 * live leaves the session recording.  -ENOENT (said) when neither is. */
static int resolve_session(struct nsk_live_opts *o)
{
	static char file[sizeof(((struct nsk_session_state *)0)->file)];
	struct nsk_session_info s;
	char dir[4096], err[4400];
	int dirfd, e;

	if (!strcmp(o->input, "-") || strchr(o->input, '/') || !access(o->input, F_OK) ||
	    errno != ENOENT || !nsk_sessions__name_ok(o->input))
		return 0;
	dirfd = nsk_session_dir__open(0, dir, sizeof(dir), err, sizeof(err));
	if (dirfd < 0) {
		fprintf(stderr, "nusku live: %s: no such file%s%s\n", o->input,
			dirfd == -ENOENT ? ", and no sessions" : "; sessions: ",
			dirfd == -ENOENT ? "" : err);
		return -ENOENT;
	}
	e = nsk_sessions__get(dirfd, o->input, 0, &s);
	close(dirfd);
	if (e < 0) {
		fprintf(stderr, "nusku live: %s: no such file or session ('nusku "
			"sessions' lists them)\n", o->input);
		return -ENOENT;
	}
	snprintf(file, sizeof(file), "%s", s.st.file);
	o->input = file;
	return 0;
}

/* A continuous recording's directory (nusku record --continuous): its
 * newest segment, followed as it grows (a segment closed meanwhile keeps
 * reading: a rename leaves the open file as it was).  -ENOENT (said)
 * when it holds none. */
static char seg_dir[4096]; /* the directory followed, "" when none */

static int resolve_dir(struct nsk_live_opts *o)
{
	static char file[sizeof(seg_dir) + NSK_SEG_NAME_MAX];
	struct nsk_seg *v = NULL;
	char err[600];
	size_t n = 0;
	int dirfd, e;

	if (!strcmp(o->input, "-") || !nsk_segdir__is_dir(o->input))
		return 0;
	e = nsk_segdir__select(o->input, NULL, NULL, &dirfd, &v, &n, err,
			       sizeof(err));
	if (e < 0) {
		fprintf(stderr, "nusku live: %s\n", err);
		return e;
	}
	close(dirfd);
	snprintf(seg_dir, sizeof(seg_dir), "%s", o->input);
	snprintf(file, sizeof(file), "%s/%s", o->input, v[n - 1].name);
	free(v);
	o->input = file;
	return 0;
}

/* 0 parsed, 1 --help printed, 2 usage error (message printed). */
static int parse(int argc, char **argv, struct nsk_live_opts *o)
{
	enum { O_TOP = 256, O_WINDOW, O_VIEW, O_SNAPSHOT, O_RECORD_OPT, O_SSH,
	       O_SSH_OPT, O_REMOTE, O_RAW };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "top", required_argument, NULL, O_TOP },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "view", required_argument, NULL, O_VIEW },
		{ "snapshot", no_argument, NULL, O_SNAPSHOT },
		{ "record-opt", required_argument, NULL, O_RECORD_OPT },
		{ "events", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "ssh", required_argument, NULL, O_SSH },
		{ "ssh-opt", required_argument, NULL, O_SSH_OPT },
		{ "remote-nusku", required_argument, NULL, O_REMOTE },
		{ "raw", no_argument, NULL, O_RAW },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	o->interval_s = 1;
	o->window_s = 1;
	o->top = 5;
	/* The program after -- keeps its own options: cut argv there. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			o->cmd = argv + i + 1;
			if (!o->cmd[0]) {
				fprintf(stderr, "nusku live: no program after --\n");
				return 2;
			}
			argc = i;
			break;
		}
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:i:n:p:ae:F:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'i':
			if (parse_num(optarg, 0.05, 3600, &o->interval_s) < 0)
				goto bad_value;
			break;
		case 'n':
			if (parse_num(optarg, 1, 1e9, &v) < 0)
				goto bad_value;
			o->count = (long)v;
			break;
		case 'p':
			if (parse_num(optarg, 1, 1 << 30, &v) < 0)
				goto bad_value;
			o->pid = (int)v;
			break;
		case 'a':
			o->all = 1;
			break;
		case O_TOP:
			if (parse_num(optarg, 1, 1000, &v) < 0)
				goto bad_value;
			o->top = (int)v;
			break;
		case O_WINDOW:
			if (parse_num(optarg, 0.05, 1e6, &o->window_s) < 0)
				goto bad_value;
			break;
		case O_VIEW:
			if (nsk_live_view__by_name(optarg) < 0) {
				fprintf(stderr, "nusku live: unknown view '%s' "
					"(cpu, alloc, offcpu, syscall, net)\n",
					optarg);
				return 2;
			}
			o->view = optarg;
			break;
		case 'e':
		case 'F':
		case 'd':
			/* Record's own options, passed on as given. */
			if (push_arg(&o->record_args, &o->nrecord_args,
				     c == 'e' ? "-e" : c == 'F' ? "-F" : "-d") < 0 ||
			    push_arg(&o->record_args, &o->nrecord_args, optarg) < 0)
				return 2;
			break;
		case O_SNAPSHOT:
			o->force_snapshot = 1;
			break;
		case O_RECORD_OPT:
			if (push_arg(&o->record_args, &o->nrecord_args, optarg) < 0)
				return 2;
			break;
		case O_SSH:
			o->ssh_host = optarg;
			break;
		case O_SSH_OPT: {
			/* Split at blanks: "-p 2222 -i key" is four words
			 * (argv's strings are ours to cut). */
			char *save = NULL, *w;

			for (w = strtok_r(optarg, " \t", &save); w;
			     w = strtok_r(NULL, " \t", &save))
				if (push_arg(&o->ssh_opts, &o->nssh_opts, w) < 0)
					return 2;
			break;
		}
		case O_REMOTE:
			o->remote_nusku = optarg;
			break;
		case O_RAW:
			o->raw = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "nusku live: unknown option '%s'; see "
				"'nusku live --help'\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc)
		o->input = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "nusku live: one recording at a time ('%s' is "
			"extra)\n", argv[optind]);
		return 2;
	}
	if (o->input && o->cmd) {
		fprintf(stderr, "nusku live: give a recording or a program "
			"to record, not both\n");
		return 2;
	}
	if (o->all && (o->input || o->pid || o->cmd)) {
		fprintf(stderr, "nusku live: -a records every process: no FILE, "
			"-p or command with it\n");
		return 2;
	}
	if (o->input && o->pid) {
		fprintf(stderr, "nusku live: give a recording, or -p/-- "
			"to record one, not both\n");
		return 2;
	}
	if (o->raw && (!o->input || !strcmp(o->input, "-") || o->ssh_host)) {
		fprintf(stderr, "nusku live: --raw copies a FILE or session NAME "
			"of this host\n");
		return 2;
	}
	if (o->pid && o->cmd) {
		fprintf(stderr, "nusku live: -p and a command exclude each other\n");
		return 2;
	}
	/* with --ssh, FILE or NAME is the remote host's: looked up there */
	if (o->input && !o->ssh_host &&
	    (resolve_session(o) < 0 || resolve_dir(o) < 0))
		return 2;
	if (!o->input && !o->pid && !o->cmd && !o->all) {
		fprintf(stderr, "nusku live: nothing to show: give FILE, '-', "
			"-p PID or -- CMD; see 'nusku live --help'\n");
		return 2;
	}
	return 0;
bad_value:
	fprintf(stderr, "nusku live: bad value '%s' for %s\n", optarg,
		argv[optind - 1]);
	return 2;
}

struct run {
	const struct nsk_live_opts *o;
	struct nsk_live_source *src;
	struct nsk_live_db *db;
	struct nsk_reader *reader;
	struct nsk_live_screen *screen;
	int child_failed;
	int stopped; /* live interrupted the recorder it started */
	char child_msg[320];
	/* following a continuous recording's segments (seg_dir) */
	struct nsk_live_opts seg_opts;
	char seg_path[sizeof(seg_dir) + NSK_SEG_NAME_MAX];
	uint64_t seg_wait; /* since when no next segment has come */
	uint64_t run_id[2]; /* the recording id of the segment read */
};

static void status_of(struct run *r, struct nsk_live_status *st)
{
	memset(st, 0, sizeof(*st));
	st->source = nsk_live_source__name(r->src);
	nsk_live_db__status(r->db, st);
	st->bytes = nsk_live_source__bytes(r->src);
	/* The newest event's age, where its clock is ours: a local source
	 * still live, and a plausible number (not a replayed old file). */
	st->age_s = -1;
	if (!r->o->ssh_host && !st->ended && nsk_live_db__now(r->db)) {
		double age = ((double)now_ns() - (double)nsk_live_db__now(r->db)) / 1e9;

		if (age >= 0 && age < 60)
			st->age_s = age;
	}
	if (r->child_msg[0])
		snprintf(st->message, sizeof(st->message), "%.*s",
			 (int)sizeof(st->message) - 1, r->child_msg);
	else if (st->ended && !st->clean_end && !st->message[0])
		snprintf(st->message, sizeof(st->message),
			 "the stream ended without the recording's end record");
	else if (st->ended && !st->message[0])
		snprintf(st->message, sizeof(st->message),
			 "the recording ended");
}

static void check_child(struct run *r)
{
	int status;

	if (r->child_msg[0])
		return;
	if (nsk_live_source__child_done(r->src, &status, r->child_msg,
					sizeof(r->child_msg)) != 1 || !status)
		return;
	/* record exits with its program's status, and when live stops it
	 * the program ends by the recorder's SIGTERM (or SIGKILL): that is
	 * the stop asked for, not a failure. */
	if (r->stopped && (status == 128 + SIGINT || status == 128 + SIGTERM ||
			   status == 128 + SIGKILL ||
			   /* ssh itself, killed by that SIGINT: the remote
			    * recorder ends as its connection goes */
			   (r->o->ssh_host && status == 255))) {
		r->child_msg[0] = '\0';
		return;
	}
	r->child_failed = 1;
}

/* Waits up to timeout_ms for input from the source or the keyboard. */
static void wait_input(struct run *r, int timeout_ms)
{
	struct pollfd pfd[2];
	int n = 0, fd = nsk_live_source__fd(r->src);

	if (fd >= 0 && !nsk_live_db__ended(r->db)) {
		pfd[n].fd = fd;
		pfd[n++].events = POLLIN;
	}
	if (r->screen) {
		pfd[n].fd = nsk_live_screen__fd(r->screen);
		pfd[n++].events = POLLIN;
	}
	/* A followed file cannot be polled: the timer stands in. */
	if (fd < 0 && timeout_ms > 100)
		timeout_ms = 100;
	poll(pfd, n, timeout_ms);
}

/* The segment after the one just read (END): 1 when the source and the
 * reader are now the next segment's, 0 while it has not come (the
 * recorder writes the next segment's name right after the END of the
 * last), -EPIPE when none comes within 2 s (the recording ended). */
static int next_segment(struct run *r)
{
	struct nsk_reader_opts ropts = { .on_problem = nsk_live_db__on_problem,
					 .ctx = r->db };
	const char *cur = strrchr(r->o->input, '/');
	struct nsk_seg *v = NULL;
	const char *next = NULL;
	struct nsk_io *io = NULL;
	const uint64_t *id;
	char err[600];
	size_t n = 0;
	int dirfd, res, new_run;

	if (r->seg_path[0])
		cur = strrchr(r->seg_path, '/');
	cur = cur ? cur + 1 : "";
	if (!nsk_segdir__select(seg_dir, NULL, NULL, &dirfd, &v, &n, err,
				sizeof(err))) {
		close(dirfd);
		for (size_t i = 0; i < n && !next; i++)
			if (strcmp(v[i].name, cur) > 0 &&
			    strncmp(v[i].name, cur, 27)) /* not cur renamed */
				next = v[i].name;
	}
	if (!next) {
		free(v);
		if (!r->seg_wait)
			r->seg_wait = now_ns();
		return now_ns() - r->seg_wait > 2000000000ull ? -EPIPE : 0;
	}
	r->seg_wait = 0;
	snprintf(r->seg_path, sizeof(r->seg_path), "%s/%s", seg_dir, next);
	free(v);
	r->seg_opts = *r->o;
	r->seg_opts.input = r->seg_path;
	nsk_reader__free(r->reader);
	r->reader = NULL;
	nsk_live_source__free(r->src);
	r->src = NULL;
	res = nsk_live_source__open(&r->seg_opts, &r->src, err, sizeof(err));
	if (res >= 0)
		res = nsk_live_source__wait_start(r->src, err, sizeof(err));
	if (res >= 0 && !(io = nsk_live_source__io(r->src)))
		res = -ENOMEM;
	if (res >= 0)
		res = nsk_reader__new(io, &ropts, &r->reader);
	if (res < 0)
		return -EPIPE;
	id = nsk_reader__info(r->reader)->recording_id;
	new_run = memcmp(id, r->run_id, sizeof(r->run_id)) != 0;
	memcpy(r->run_id, id, sizeof(r->run_id));
	if (nsk_live_db__next_segment(r->db, new_run) < 0)
		return -EPIPE;
	return 1;
}

static int run_loop(struct run *r)
{
	const struct nsk_live_opts *o = r->o;
	uint64_t interval = (uint64_t)(o->interval_s * 1e9);
	uint64_t start = now_ns(), next = start + interval;
	struct nsk_live_status st;
	long printed = 0;
	int res, ended = 0;

	for (;;) {
		res = 0;
		if (!ended) {
			res = nsk_live_db__pump(r->db, r->reader, 50000000ull);
			if (res == -ENODATA) {
				res = next_segment(r);
				if (res < 0)
					nsk_live_db__end(r->db);
			}
			if (res < 0)
				ended = 1;
		}
		check_child(r);
		if (r->screen && nsk_live_screen__keys(r->screen))
			return 0;
		if (stop_requested)
			return 0;
		if (now_ns() >= next || (ended && !r->screen)) {
			status_of(r, &st);
			if (r->screen) {
				nsk_live_screen__draw(r->screen, r->db, &st);
			} else {
				if (nsk_live_snapshot__print(stdout, r->db, &st,
							     o, (now_ns() - start) / 1e9) < 0)
					return -EPIPE;
				printed++;
				if (ended || (o->count && printed >= o->count))
					return 0;
			}
			while (next <= now_ns())
				next += interval;
		}
		if (res != 1) {
			uint64_t now = now_ns();
			int ms = next > now ? (int)((next - now) / 1000000) + 1 : 0;

			wait_input(r, ms);
		}
	}
}

static int cmd_live_run(const struct nsk_live_opts *o)
{
	struct nsk_reader_opts ropts = { 0 };
	struct run r = { .o = o };
	struct nsk_live_status st;
	char err[320] = "";
	struct nsk_io *io;
	int res, ret = 1;

	res = nsk_live_source__open(o, &r.src, err, sizeof(err));
	if (res < 0)
		goto cleanup;
	if (o->ssh_host && isatty(STDERR_FILENO))
		fprintf(stderr, "nusku live: connecting to %s...\n", o->ssh_host);
	res = nsk_live_source__wait_start(r.src, err, sizeof(err));
	if (res < 0) {
		if (res == -EINTR)
			snprintf(err, sizeof(err), "interrupted");
		goto cleanup;
	}
	res = nsk_live_db__new(&r.db);
	if (res < 0) {
		snprintf(err, sizeof(err), "cannot set up the database: %s",
			 strerror(-res));
		goto cleanup;
	}
	nsk_live_db__keep(r.db, (uint64_t)(o->window_s * 1e9));
	io = nsk_live_source__io(r.src);
	if (!io) {
		res = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
		goto cleanup;
	}
	ropts.on_problem = nsk_live_db__on_problem;
	ropts.ctx = r.db;
	if (seg_dir[0] && (res = nsk_live_db__follow_segments(r.db)) < 0) {
		snprintf(err, sizeof(err), "cannot set up the database: %s",
			 strerror(-res));
		goto cleanup;
	}
	res = nsk_reader__new(io, &ropts, &r.reader);
	if (res < 0) {
		nsk_live_db__status(r.db, &st);
		check_child(&r);
		snprintf(err, sizeof(err), "%.100s: %.200s",
			 nsk_live_source__name(r.src),
			 r.child_msg[0] ? r.child_msg
			 : *st.message ? st.message : strerror(-res));
		goto cleanup;
	}
	memcpy(r.run_id, nsk_reader__info(r.reader)->recording_id, sizeof(r.run_id));
	if (!o->force_snapshot && isatty(STDOUT_FILENO)) {
		res = nsk_live_screen__new(o, &r.screen);
		if (res < 0) {
			snprintf(err, sizeof(err), "cannot start the screen: %s",
				 strerror(-res));
			goto cleanup;
		}
	}
	res = run_loop(&r);
	if (res == -EPIPE) {
		ret = 1; /* our own output is gone: nothing to say it on */
		goto cleanup;
	}
	nsk_live_screen__free(r.screen);
	r.screen = NULL;
	if (nsk_live_db__failed(r.db)) {
		snprintf(err, sizeof(err), "%s: %s", o->input ? o->input : "recording",
			 nsk_live_db__failed(r.db));
		ret = 1;
		goto cleanup;
	}
	/* A recorder still running: stop it, keep its last bytes. */
	if (!nsk_live_db__ended(r.db) && o->input == NULL) {
		uint64_t until = now_ns() + 3000000000ull;

		r.stopped = 1;
		nsk_live_source__interrupt(r.src);
		while (now_ns() < until &&
		       nsk_live_db__pump(r.db, r.reader, 50000000ull) >= 0)
			wait_input(&r, 100);
	}
	nsk_live_source__wait_child(r.src, 3000);
	check_child(&r);
	if (r.child_failed) {
		snprintf(err, sizeof(err), "%s", r.child_msg);
		goto cleanup;
	}
	ret = 0;
cleanup:
	nsk_live_screen__free(r.screen);
	nsk_reader__free(r.reader);
	nsk_live_source__free(r.src);
	nsk_live_db__free(r.db);
	if (ret && err[0])
		fprintf(stderr, "nusku live: %s\n", err);
	return ret;
}

int cmd_live(int argc, char **argv)
{
	struct nsk_live_opts o = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	int res;

	res = parse(argc, argv, &o);
	if (res) {
		res = res == 1 ? 0 : 2;
		goto cleanup;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	res = o.raw ? nsk_live__raw(&o) : cmd_live_run(&o);
cleanup:
	free(o.ssh_opts);
	free(o.record_args);
	return res;
}
