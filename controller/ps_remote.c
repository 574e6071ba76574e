/* nusku ps --ssh HOST: runs `nusku ps --format json` on HOST with OpenSSH
 * (nothing listens here; BatchMode unless a terminal can answer a prompt)
 * and reads its rows back, so the filter, the order and the table are
 * this side's.  The remote JSON is untrusted: the parser takes only the
 * shape nusku ps writes (an array of flat objects), bounds its input and
 * its nesting, and the strings go through the same escaping as local ones. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/ps.h"
#include "report/live.h"
#include "report/output.h"

#define REMOTE_MAX_BYTES (64u << 20)
#define REMOTE_MAX_ROWS 1000000
#define ERR_KEEP 1024
#define REMOTE_TIMEOUT_MS 60000 /* nusku ps takes a second; ssh's login more */

/* ---- the JSON nusku ps writes ------------------------------------------- */

struct js {
	const char *p, *end;
	int bad;
};

static void ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static int eat(struct js *j, char c)
{
	ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return 1;
	}
	return 0;
}

static void put_utf8(char *o, size_t *n, size_t cap, unsigned cp)
{
	unsigned char b[4];
	int len;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		len = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		len = 2;
	} else {
		if (cp >= 0xd800 && cp < 0xe000)
			cp = 0xfffd; /* lone surrogates: nusku never writes pairs */
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		len = 3;
	}
	for (int i = 0; i < len && *n + 1 < cap; i++)
		o[(*n)++] = (char)b[i];
}

/* A string into out (cut at cap - 1 bytes); 0 or -1. */
static int str(struct js *j, char *out, size_t cap)
{
	size_t n = 0;

	if (!eat(j, '"'))
		return -1;
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p++;

		if (c < 0x20)
			return -1;
		if (c != '\\') {
			if (n + 1 < cap)
				out[n++] = (char)c;
			continue;
		}
		if (j->p >= j->end)
			return -1;
		c = (unsigned char)*j->p++;
		switch (c) {
		case 'n': c = '\n'; break;
		case 't': c = '\t'; break;
		case 'r': c = '\r'; break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case '"': case '\\': case '/': break;
		case 'u': {
			unsigned cp = 0;

			if (j->end - j->p < 4)
				return -1;
			for (int i = 0; i < 4; i++) {
				char h = *j->p++;

				cp = cp * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0'
					: h >= 'a' && h <= 'f' ? h - 'a' + 10
					: h >= 'A' && h <= 'F' ? h - 'A' + 10 : 99);
				if (cp > 0xffff)
					return -1;
			}
			put_utf8(out, &n, cap, cp ? cp : 0xfffd);
			continue;
		}
		default:
			return -1;
		}
		if (n + 1 < cap)
			out[n++] = (char)c;
	}
	if (j->p >= j->end)
		return -1;
	j->p++;
	out[n] = '\0';
	return 0;
}

static int skip_value(struct js *j, int depth);

static int skip_seq(struct js *j, char close, int depth, int keys)
{
	char tmp[256];

	if (eat(j, close))
		return 0;
	do {
		if (keys && (str(j, tmp, sizeof(tmp)) < 0 || !eat(j, ':')))
			return -1;
		if (skip_value(j, depth + 1) < 0)
			return -1;
	} while (eat(j, ','));
	return eat(j, close) ? 0 : -1;
}

static int skip_value(struct js *j, int depth)
{
	char tmp[64];

	if (depth > 8)
		return -1;
	ws(j);
	if (j->p >= j->end)
		return -1;
	if (*j->p == '"')
		return str(j, tmp, sizeof(tmp));
	if (eat(j, '['))
		return skip_seq(j, ']', depth, 0);
	if (eat(j, '{'))
		return skip_seq(j, '}', depth, 1);
	while (j->p < j->end && !strchr(",]} \n\r\t", *j->p))
		j->p++;
	return 0;
}

/* true/false/null: 1/0/-1; a number: *num.  -2: not a scalar. */
static int scalar(struct js *j, double *num)
{
	char *e;

	ws(j);
	if (j->end - j->p >= 4 && !memcmp(j->p, "true", 4)) { j->p += 4; return 1; }
	if (j->end - j->p >= 5 && !memcmp(j->p, "false", 5)) { j->p += 5; return 0; }
	if (j->end - j->p >= 4 && !memcmp(j->p, "null", 4)) { j->p += 4; return -1; }
	if (j->p < j->end && (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))) {
		char buf[48];
		size_t n = 0;

		while (j->p + n < j->end && n < sizeof(buf) - 1 && strchr("+-.eE0123456789", j->p[n]))
			n++;
		memcpy(buf, j->p, n);
		buf[n] = '\0';
		*num = strtod(buf, &e);
		if (e == buf)
			return -2;
		j->p += n;
		return 2;
	}
	return -2;
}

static const char *known_runtime(const char *s)
{
	static const char *const names[] = { "native", "go", "rust", "java", "node",
		"python", "kernel", "unknown", NULL };

	for (int i = 0; names[i]; i++)
		if (!strcmp(s, names[i]))
			return names[i];
	return "unknown";
}

/* An optional string (null: "") into out. */
static int opt_str(struct js *j, char *out, size_t cap)
{
	double d;

	ws(j);
	if (j->p < j->end && *j->p == '"')
		return str(j, out, cap);
	out[0] = '\0';
	return scalar(j, &d) == -1 ? 0 : -1;
}

static int parse_row(struct js *j, struct nsk_ps_row *r)
{
	char key[32], buf[NSK_PS_CMDLINE_MAX * 2 + 1];
	double d = 0;
	int v;

	memset(r, 0, sizeof(*r));
	r->frame_pointers = r->debug_info = -1;
	r->runtime = "unknown";
	if (!eat(j, '{'))
		return -1;
	if (eat(j, '}'))
		goto done;
	do {
		if (str(j, key, sizeof(key)) < 0 || !eat(j, ':'))
			return -1;
		if (!strcmp(key, "user")) {
			if (opt_str(j, r->user, sizeof(r->user)) < 0)
				return -1;
		} else if (!strcmp(key, "comm")) {
			if (opt_str(j, r->p.comm, sizeof(r->p.comm)) < 0)
				return -1;
		} else if (!strcmp(key, "cmdline") || !strcmp(key, "cgroup")) {
			char **dst = key[1] == 'm' ? &r->p.cmdline : &r->p.cgroup;

			if (opt_str(j, buf, sizeof(buf)) < 0)
				return -1;
			free(*dst);
			*dst = strdup(buf);
			if (!*dst)
				return -1;
		} else if (!strcmp(key, "container")) {
			if (opt_str(j, r->p.container, sizeof(r->p.container)) < 0)
				return -1;
		} else if (!strcmp(key, "container_engine")) {
			if (opt_str(j, r->p.engine, sizeof(r->p.engine)) < 0)
				return -1;
		} else if (!strcmp(key, "unit")) {
			if (opt_str(j, r->p.unit, sizeof(r->p.unit)) < 0)
				return -1;
		} else if (!strcmp(key, "runtime")) {
			if (opt_str(j, buf, 32) < 0)
				return -1;
			r->runtime = known_runtime(buf);
		} else if (!strcmp(key, "missing")) {
			if (!eat(j, '['))
				return -1;
			if (!eat(j, ']')) {
				do {
					size_t n = strlen(r->missing);

					if (str(j, buf, 192) < 0)
						return -1;
					snprintf(r->missing + n, sizeof(r->missing) - n, "%s%s",
						 n ? "; " : "", buf);
				} while (eat(j, ','));
				if (!eat(j, ']'))
					return -1;
			}
		} else if (!strcmp(key, "sessions")) {
			if (skip_value(j, 1) < 0)
				return -1;
		} else {
			v = scalar(j, &d);
			if (v == -2) {
				if (skip_value(j, 1) < 0)
					return -1;
				continue;
			}
			if (!strcmp(key, "pid"))
				r->p.pid = v == 2 && d > 0 && d < 1e9 ? (int)d : 0;
			else if (!strcmp(key, "uid"))
				r->p.uid = v == 2 && d >= 0 && d < 4294967296.0 ? (unsigned)d : 0;
			else if (!strcmp(key, "cpu_pct"))
				r->p.cpu_pct = v == 2 && d >= 0 && d < 1e6 ? d : 0;
			else if (!strcmp(key, "rss_bytes"))
				r->p.rss_bytes = v == 2 && d >= 0 && d < 1.8e19 ? (uint64_t)d : 0;
			else if (!strcmp(key, "threads"))
				r->p.threads = v == 2 && d >= 0 && d < 1e9 ? (int)d : 0;
			else if (!strcmp(key, "frame_pointers"))
				r->frame_pointers = v == 2 ? -1 : v;
			else if (!strcmp(key, "debug_info"))
				r->debug_info = v == 2 ? -1 : v;
			else if (!strcmp(key, "can_profile"))
				r->can_profile = v == 1;
		}
	} while (eat(j, ','));
	if (!eat(j, '}'))
		return -1;
done:
	if (r->p.pid <= 0)
		return -1;
	if (!r->p.cmdline && !(r->p.cmdline = strdup("")))
		return -1;
	r->p.kernel = !strcmp(r->runtime, "kernel");
	return 0;
}

int nsk_ps__parse_json(const char *text, size_t len, struct nsk_ps_row **rows, int *n)
{
	struct js j = { text, text + len, 0 };
	struct nsk_ps_row *v = NULL, *nv;
	int cap = 0, cnt = 0, err = -EBADMSG;

	*rows = NULL;
	*n = 0;
	if (!eat(&j, '['))
		goto cleanup;
	if (!eat(&j, ']')) {
		do {
			if (cnt == cap) {
				if (cap >= REMOTE_MAX_ROWS)
					goto cleanup;
				cap = cap ? cap * 2 : 256;
				nv = realloc(v, (size_t)cap * sizeof(*v));
				if (!nv) {
					err = -ENOMEM;
					goto cleanup;
				}
				v = nv;
			}
			if (parse_row(&j, &v[cnt]) < 0) {
				free(v[cnt].p.cmdline);
				free(v[cnt].p.cgroup);
				goto cleanup;
			}
			cnt++;
		} while (eat(&j, ','));
		if (!eat(&j, ']'))
			goto cleanup;
	}
	ws(&j);
	if (j.p != j.end)
		goto cleanup;
	*rows = v;
	*n = cnt;
	return 0;
cleanup:
	nsk_ps__free_rows(v, cnt);
	return err;
}

/* ---- the ssh child --------------------------------------------------------- */

static char **ssh_argv(const struct nsk_ps_opts *o)
{
	char **argv = NULL, *remote = NULL, **words;
	const char *w[] = { o->remote_nusku ? o->remote_nusku : "nusku", "ps",
			    "--format", "json", NULL };
	size_t size = 64;
	int n = 0;

	for (int i = 0; w[i]; i++)
		size += strlen(w[i]) * 4 + 3;
	remote = calloc(1, size);
	argv = calloc((size_t)o->nssh_opts + 8, sizeof(*argv));
	if (!remote || !argv)
		goto fail;
	for (int i = 0; w[i]; i++) {
		if (i)
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
	words[n++] = strdup(o->ssh_host);
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

int nsk_ps__remote(const struct nsk_ps_opts *o, struct nsk_ps_row **rows, int *n,
		   char *msg, size_t msglen)
{
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, status = 0, err;
	char tail[ERR_KEEP], *buf = NULL, **argv;
	size_t len = 0;
	pid_t pid;

	msg[0] = '\0';
	argv = ssh_argv(o);
	if (!argv)
		return -ENOMEM;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		err = -errno;
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(errp[1], STDERR_FILENO);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run ssh: %s\n", strerror(errno));
		_exit(255);
	}
	close(out[1]);
	close(errp[1]);
	out[1] = errp[1] = -1;
	err = drain(out[0], errp[0], &buf, &len, tail, sizeof(tail));
	if (err < 0)
		kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (err == -ETIMEDOUT) {
		snprintf(msg, msglen, "%s: no answer for %d s", o->ssh_host,
			 REMOTE_TIMEOUT_MS / 1000);
		goto cleanup;
	}
	if (err == -EFBIG) {
		snprintf(msg, msglen, "%s: more than %u MiB of rows", o->ssh_host,
			 REMOTE_MAX_BYTES >> 20);
		goto cleanup;
	}
	if (err < 0)
		goto cleanup;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (status) {
		char *e = nsk_out__escaped(last_line(tail));

		nsk_live__explain_exit(msg, msglen, 1, status, e ? e : "", o->ssh_host);
		free(e);
		err = -EIO;
		goto cleanup;
	}
	err = nsk_ps__parse_json(buf ? buf : "", len, rows, n);
	if (err == -EBADMSG)
		snprintf(msg, msglen, "%s: the remote nusku ps did not answer with its JSON rows",
			 o->ssh_host);
cleanup:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	free(buf);
	nsk_live__free_argv(argv);
	return err;
}
