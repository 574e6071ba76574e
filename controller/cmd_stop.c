/* nusku stop NAME: ends a background session as Ctrl-C would end a
 * recording in a terminal (SIGINT to its recorder: the file gets its last
 * events and its END record), and waits until it has. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "controller/remote.h"
#include "controller/sessions.h"
#include "report/output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nusku stop [--ssh [USER@]HOST] [--timeout SECS] NAME\n"
		"\n"
		"End the background session NAME cleanly: its recorder is sent SIGINT,\n"
		"writes its last events and the END record, and nusku stop returns once\n"
		"it has (exit 0; the file is complete).  A session that had already\n"
		"ended is no error; an unknown name, a crashed session or one that does\n"
		"not end in time are (exit 1).\n"
		"\n"
		"      --timeout SECS how long to wait (default 60: a launched program\n"
		"                     is given 5 s to exit after SIGTERM)\n"
		"      --ssh HOST     the session on HOST (runs nusku stop there)\n"
		"      --ssh-opt OPTS options for ssh, split at blanks (repeatable)\n"
		"      --remote-nusku PATH  nusku on HOST (default: nusku on its PATH)\n"
		"  -h, --help         this text\n"
		"\n"
		"See nusku-sessions(1).\n");
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int stop_local(const char *name, double timeout_s)
{
	struct nsk_session_info s;
	char path[PATH_MAX], err[PATH_MAX + 200], *file = NULL;
	int dirfd, e, status = 1;
	long waited = 0;

	dirfd = nsk_session_dir__open(0, path, sizeof(path), err, sizeof(err));
	if (dirfd == -ENOENT) {
		fprintf(stderr, "nusku stop: no session named %s (there are no sessions)\n",
			name);
		return 1;
	}
	if (dirfd < 0) {
		fprintf(stderr, "nusku stop: %s\n", err);
		return 1;
	}
	e = nsk_sessions__get(dirfd, name, 0, &s);
	if (e == -ENOENT || e == -EINVAL) {
		char *en = nsk_out__escaped(name);

		fprintf(stderr, "nusku stop: no session named %s ('nusku sessions' lists them)\n",
			en ? en : "?");
		free(en);
		goto cleanup;
	}
	if (e < 0) {
		fprintf(stderr, "nusku stop: %s: %s\n", name, strerror(-e));
		goto cleanup;
	}
	file = nsk_out__escaped(s.st.file);
	if (s.status == NSK_SESSION_ENDED) {
		printf("%s had already ended: %s\n", name, file ? file : "?");
		status = 0;
		goto cleanup;
	}
	if (s.status == NSK_SESSION_CRASHED) {
		fprintf(stderr, "nusku stop: %s has crashed (its recorder is gone without "
			"ending the file); %s reads back to its last complete chunk\n",
			name, file ? file : "?");
		goto cleanup;
	}
	/* The lock is held: the recorder runs.  Its pid is the one to
	 * signal only while that pid started when the state says it did. */
	if (s.st.pid <= 0 || !s.st.pid_start ||
	    nsk_sessions__pid_start(s.st.pid) != s.st.pid_start) {
		fprintf(stderr, "nusku stop: %s: its recorder (pid %d) is not the process "
			"the state names; not signalled\n", name, s.st.pid);
		goto cleanup;
	}
	if (kill(s.st.pid, SIGINT) < 0) {
		fprintf(stderr, "nusku stop: %s: cannot signal its recorder (pid %d): %s\n",
			name, s.st.pid, strerror(errno));
		goto cleanup;
	}
	while (nsk_session_lock__held(dirfd, name) == 1) {
		if (waited >= (long)(timeout_s * 1000)) {
			fprintf(stderr, "nusku stop: %s did not end within %.0f s (its recorder, "
				"pid %d, still runs)\n", name, timeout_s, s.st.pid);
			goto cleanup;
		}
		sleep_ms(50);
		waited += 50;
	}
	e = nsk_sessions__get(dirfd, name, 0, &s);
	if (e < 0) {
		fprintf(stderr, "nusku stop: %s ended, but its state cannot be read: %s\n",
			name, strerror(-e));
		goto cleanup;
	}
	if (s.status != NSK_SESSION_ENDED) {
		char *m = nsk_out__escaped(s.st.error);

		fprintf(stderr, "nusku stop: %s ended without finishing its file%s%s\n", name,
			m && *m ? ": " : "", m ? m : "");
		free(m);
		goto cleanup;
	}
	printf("stopped %s: %s (%" PRIu64 " events, %" PRIu64 " lost)\n", name,
	       file ? file : "?", s.st.records, s.st.lost);
	status = fflush(stdout) ? 1 : 0;
cleanup:
	free(file);
	close(dirfd);
	return status;
}

int cmd_stop(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "ssh", required_argument, NULL, 'S' },
		{ "ssh-opt", required_argument, NULL, 'O' },
		{ "remote-nusku", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nsk_remote r = { 0 };
	double timeout_s = 60;
	char *end, msg[1200], *buf = NULL, tbuf[32];
	size_t len = 0;
	int c, status = 0, st;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			timeout_s = strtod(optarg, &end);
			if (end == optarg || *end || timeout_s <= 0 || timeout_s > 86400) {
				fprintf(stderr, "nusku stop: --timeout: '%s' is not a number of "
					"seconds\n", optarg);
				status = 2;
				goto cleanup;
			}
			break;
		case 'S':
			r.host = optarg;
			break;
		case 'O':
			if (nsk_remote__add_opts(&r, optarg) < 0) {
				status = 1;
				goto cleanup;
			}
			break;
		case 'R':
			r.nusku = optarg;
			break;
		case 'h':
			usage(stdout);
			goto cleanup;
		default:
			usage(stderr);
			status = 2;
			goto cleanup;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "nusku stop: give one session NAME; see 'nusku stop --help'\n");
		status = 2;
		goto cleanup;
	}
	if (!r.host) {
		status = stop_local(argv[optind], timeout_s);
		goto cleanup;
	}
	{
		const char *words[] = { "stop", "--timeout", tbuf, "--", argv[optind], NULL };

		snprintf(tbuf, sizeof(tbuf), "%g", timeout_s);
		st = nsk_remote__run(&r, words, &buf, &len, msg, sizeof(msg));
	}
	if (st == 0 && nsk_remote__print(stdout, buf ? buf : "", len) < 0)
		st = -EIO;
	if (st) {
		fprintf(stderr, "nusku stop: %s\n", msg[0] ? msg : strerror(st < 0 ? -st : EIO));
		status = 1;
	}
cleanup:
	free(buf);
	free(r.ssh_opts);
	return status;
}
