/* nusku sessions: the background sessions of this user (controller/
 * sessions.h), here or on another host over ssh. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "controller/remote.h"
#include "controller/sessions.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nusku sessions [--ssh [USER@]HOST] [--format text|json] [--clean]\n"
		"\n"
		"The background sessions (nusku record --background) of this user: name,\n"
		"state (starting, running, ended, crashed), size of the file, duration,\n"
		"events, lost events, the recording's own cost (its BPF programs and the\n"
		"recorder's CPU time, as a share of one CPU), the target; below each, the\n"
		"file and the signals.  A crashed session's figures are its file's: it\n"
		"reads back to its last complete chunk.\n"
		"\n"
		"  -f, --format FMT   text (default; 80 columns) or json\n"
		"      --clean        forget the ended and crashed sessions (their\n"
		"                     recordings stay where they are)\n"
		"      --ssh HOST     the sessions of HOST (runs nusku sessions there)\n"
		"      --ssh-opt OPTS options for ssh, split at blanks (repeatable)\n"
		"      --remote-nusku PATH  nusku on HOST (default: nusku on its PATH)\n"
		"  -h, --help         this text\n"
		"\n"
		"State lives in $XDG_RUNTIME_DIR/nusku (else /run/user/UID/nusku, else\n"
		"/tmp/nusku-UID), a directory only you may enter.  See nusku-sessions(1).\n");
}

static int remote(struct nsk_remote *r, int json, int clean)
{
	const char *words[5] = { "sessions", "--format", json ? "json" : "text", NULL, NULL };
	char msg[1200], *buf = NULL;
	size_t len = 0;
	int st;

	if (clean)
		words[3] = "--clean";
	st = nsk_remote__run(r, words, &buf, &len, msg, sizeof(msg));
	if (st == 0 && nsk_remote__print(stdout, buf ? buf : "", len) < 0) {
		snprintf(msg, sizeof(msg), "cannot write the table: %s", strerror(errno));
		st = -EIO;
	}
	free(buf);
	if (st) {
		fprintf(stderr, "nusku sessions: %s\n", msg[0] ? msg : strerror(-st));
		return 1;
	}
	return 0;
}

int cmd_sessions(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "clean", no_argument, NULL, 'C' },
		{ "ssh", required_argument, NULL, 'S' },
		{ "ssh-opt", required_argument, NULL, 'O' },
		{ "remote-nusku", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nsk_remote r = { 0 };
	struct nsk_session_info *v = NULL;
	char path[PATH_MAX], err[PATH_MAX + 200];
	int c, n = 0, json = 0, clean = 0, status = 0, dirfd = -1, e;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "json"))
				json = 1;
			else if (strcmp(optarg, "text")) {
				fprintf(stderr, "nusku sessions: --format: '%s' is not text or json\n",
					optarg);
				status = 2;
				goto cleanup;
			}
			break;
		case 'C':
			clean = 1;
			break;
		case 'S':
			r.host = optarg;
			break;
		case 'O':
			if (nsk_remote__add_opts(&r, optarg) < 0) {
				fprintf(stderr, "nusku sessions: out of memory\n");
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
	if (optind < argc) {
		fprintf(stderr, "nusku sessions: '%s' is extra; see 'nusku sessions --help'\n",
			argv[optind]);
		status = 2;
		goto cleanup;
	}
	if (r.host) {
		status = remote(&r, json, clean);
		goto cleanup;
	}
	dirfd = nsk_session_dir__open(0, path, sizeof(path), err, sizeof(err));
	if (dirfd == -ENOENT) {
		dirfd = -1; /* no session yet: an empty list */
	} else if (dirfd < 0) {
		fprintf(stderr, "nusku sessions: %s\n", err);
		status = 1;
		goto cleanup;
	}
	if (dirfd >= 0) {
		e = nsk_sessions__list(dirfd, NSK_SESSIONS_FIGURES, &v, &n);
		if (e < 0) {
			fprintf(stderr, "nusku sessions: cannot read %s: %s\n", path, strerror(-e));
			status = 1;
			goto cleanup;
		}
	}
	if (clean) {
		int kept = 0;

		for (int i = 0; i < n; i++) {
			if ((v[i].status == NSK_SESSION_ENDED || v[i].status == NSK_SESSION_CRASHED) &&
			    !nsk_session_state__remove(dirfd, v[i].st.name))
				continue;
			v[kept++] = v[i];
		}
		n = kept;
	}
	e = nsk_sessions__print(stdout, v, n, json);
	if (e < 0) {
		fprintf(stderr, "nusku sessions: cannot write the table: %s\n", strerror(-e));
		status = 1;
	}
cleanup:
	if (dirfd >= 0)
		close(dirfd);
	free(v);
	free(r.ssh_opts);
	return status;
}
