/* Running nusku on another host over OpenSSH, for ps, sessions and stop
 * (issue 16: nothing listens here or there; BatchMode unless a terminal
 * can answer a prompt).  Its stdout is read whole and bounded, its
 * stderr's tail kept for a one-line error; what the remote printed is
 * untrusted and is the caller's to check and escape. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/remote.h"
#include "report/live.h"
#include "report/output.h"

#define REMOTE_MAX_BYTES (64u << 20)
#define ERR_KEEP 1024
#define REMOTE_TIMEOUT_MS 60000 /* nusku ps takes a second; ssh's login more */

static char **ssh_argv(const struct nsk_remote *o, const char *const *w)
{
	char **argv = NULL, *remote = NULL, **words;
	size_t size = 64;
	int n = 0;

	size += strlen(o->nusku ? o->nusku : "nusku") * 4 + 3;
	for (int i = 0; w[i]; i++)
		size += strlen(w[i]) * 4 + 3;
	remote = calloc(1, size);
	argv = calloc((size_t)o->nssh_opts + 8, sizeof(*argv));
	if (!remote || !argv)
		goto fail;
	if (nsk_live__shell_quote(remote, size, o->nusku ? o->nusku : "nusku") < 0)
		goto fail;
	for (int i = 0; w[i]; i++) {
		strcat(remote, " ");
		if (nsk_live__shell_quote(remote, size, w[i]) < 0)
			goto fail;
	}
	words = argv;
	words[n++] = strdup("ssh");
	/* no prompt can be answered without a terminal */
	if (!isatty(STDIN_FILENO)) {
		words[n++] = strdup("-o");
		words[n++] = strdup("BatchMode=yes");
	}
	words[n++] = strdup("-T");
	for (int i = 0; i < o->nssh_opts; i++)
		words[n++] = strdup(o->ssh_opts[i]);
	words[n++] = strdup("--");
	words[n++] = strdup(o->host);
	words[n++] = remote;
	remote = NULL;
	for (int i = 0; i < n; i++)
		if (!argv[i])
			goto fail;
	return argv;
fail:
	free(remote);
	nsk_live__free_argv(argv);
	return NULL;
}

/* Reads the child's stdout (all of it, bounded) and stderr (its tail). */
static int drain(int out_fd, int err_fd, char **buf, size_t *len, char *tail, size_t tail_cap)
{
	struct pollfd pf[2] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 } };
	size_t cap = 0, tl = 0;
	char chunk[65536];
	int open_fds = 2;

	*buf = NULL;
	*len = 0;
	tail[0] = '\0';
	while (open_fds) {
		int ready = poll(pf, 2, REMOTE_TIMEOUT_MS);

		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (ready == 0)
			return -ETIMEDOUT;
		for (int i = 0; i < 2; i++) {
			ssize_t r;

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			r = read(pf[i].fd, chunk, sizeof(chunk));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				pf[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 0) {
				if (*len + (size_t)r > REMOTE_MAX_BYTES)
					return -EFBIG;
				if (*len + (size_t)r + 1 > cap) {
					char *nb;

					cap = (*len + (size_t)r + 1) * 2;
					nb = realloc(*buf, cap);
					if (!nb)
						return -ENOMEM;
					*buf = nb;
				}
				memcpy(*buf + *len, chunk, (size_t)r);
				*len += (size_t)r;
			} else {
				/* keep the last tail_cap - 1 bytes: one move
				 * per read, however much a remote writes */
				size_t room = tail_cap - 1, take = (size_t)r < room ? (size_t)r : room;
				size_t keep = tl < room - take ? tl : room - take;

				memmove(tail, tail + tl - keep, keep);
				memcpy(tail + keep, chunk + (size_t)r - take, take);
				tl = keep + take;
				tail[tl] = '\0';
			}
		}
	}
	return 0;
}

/* The last non-empty line of s, trimmed (in place). */
static const char *last_line(char *s)
{
	char *e = s + strlen(s), *b;

	while (e > s && (e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	b = strrchr(s, '\n');
	return b ? b + 1 : s;
}

int nsk_remote__run(const struct nsk_remote *o, const char *const *words,
		    char **out, size_t *outlen, char *msg, size_t msglen)
{
	int pout[2] = { -1, -1 }, errp[2] = { -1, -1 }, status = 0, err;
	char tail[ERR_KEEP], *buf = NULL, **argv;
	size_t len = 0;
	pid_t pid;

	msg[0] = '\0';
	*out = NULL;
	*outlen = 0;
	argv = ssh_argv(o, words);
	if (!argv)
		return -ENOMEM;
	if (pipe2(pout, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		err = -errno;
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (pid == 0) {
		/* not our terminal: the picker's keys are its own, and a remote
		 * that holds the channel open must not wait on them */
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(pout[1], STDOUT_FILENO);
		dup2(errp[1], STDERR_FILENO);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run ssh: %s\n", strerror(errno));
		_exit(255);
	}
	close(pout[1]);
	close(errp[1]);
	pout[1] = errp[1] = -1;
	err = drain(pout[0], errp[0], &buf, &len, tail, sizeof(tail));
	if (err < 0)
		kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (err == -ETIMEDOUT) {
		snprintf(msg, msglen, "%s: no answer for %d s", o->host,
			 REMOTE_TIMEOUT_MS / 1000);
		goto cleanup;
	}
	if (err == -EFBIG) {
		snprintf(msg, msglen, "%s: more than %u MiB of answer", o->host,
			 REMOTE_MAX_BYTES >> 20);
		goto cleanup;
	}
	if (err < 0)
		goto cleanup;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (status) {
		const char *last = last_line(tail);
		size_t cl = strlen(words[0]);
		char *e;

		/* "nusku stop: no session ...": the remote's command says who
		 * it is; the host is who it was here */
		if (!strncmp(last, "nusku ", 6) && !strncmp(last + 6, words[0], cl) &&
		    !strncmp(last + 6 + cl, ": ", 2))
			last += 8 + cl;
		e = nsk_out__escaped(last);
		nsk_live__explain_exit(msg, msglen, 1, status, e ? e : "", o->host);
		free(e);
	}
	err = status;
	*out = buf;
	*outlen = len;
	buf = NULL;
cleanup:
	for (int i = 0; i < 2; i++) {
		if (pout[i] >= 0)
			close(pout[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	free(buf);
	nsk_live__free_argv(argv);
	return err;
}

int nsk_remote__print(FILE *f, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = strndup(p, n), *e;

		if (!line)
			return -ENOMEM;
		e = nsk_out__escaped(line);
		free(line);
		if (!e)
			return -ENOMEM;
		fputs(e, f);
		fputc('\n', f);
		free(e);
		p += n + (nl ? 1 : 0);
	}
	if (fflush(f) != 0)
		return errno ? -errno : -EIO;
	return ferror(f) ? -EIO : 0;
}

int nsk_remote__add_opts(struct nsk_remote *r, char *value)
{
	char *save = NULL, *w;

	for (w = strtok_r(value, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		char **nv = realloc(r->ssh_opts, (size_t)(r->nssh_opts + 1) * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		r->ssh_opts = nv;
		r->ssh_opts[r->nssh_opts++] = w;
	}
	return 0;
}
