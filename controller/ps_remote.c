/* nusku ps --ssh HOST: runs `nusku ps --format json` on HOST with OpenSSH
 * (controller/remote.c: nothing listens here; BatchMode unless a terminal
 * can answer a prompt) and reads its rows back, so the filter, the order and the table are
 * this side's.  The remote JSON is untrusted: the parser takes only the
 * shape nusku ps writes (an array of flat objects), bounds its input and
 * its nesting, and the strings go through the same escaping as local ones. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ps.h"
#include "controller/remote.h"

#define REMOTE_MAX_ROWS 1000000

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
			/* names, as the remote's session directory has them */
			if (!eat(j, '['))
				return -1;
			if (!eat(j, ']')) {
				do {
					size_t n = strlen(r->sessions);
					char name[80];

					if (str(j, name, sizeof(name)) < 0)
						return -1;
					if (n + strlen(name) + 2 < sizeof(r->sessions))
						snprintf(r->sessions + n, sizeof(r->sessions) - n,
							 "%s%s", n ? "," : "", name);
				} while (eat(j, ','));
				if (!eat(j, ']'))
					return -1;
			}
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

/* ---- over ssh (controller/remote.c) ---------------------------------------- */

int nsk_ps__remote(const struct nsk_ps_opts *o, struct nsk_ps_row **rows, int *n,
		   char *msg, size_t msglen)
{
	static const char *const words[] = { "ps", "--format", "json", NULL };
	struct nsk_remote r = { o->ssh_host, o->ssh_opts, o->nssh_opts, o->remote_nusku };
	char *buf = NULL;
	size_t len = 0;
	int err;

	err = nsk_remote__run(&r, words, &buf, &len, msg, msglen);
	if (err > 0)
		err = -EIO;
	if (err < 0)
		goto cleanup;
	err = nsk_ps__parse_json(buf ? buf : "", len, rows, n);
	if (err == -EBADMSG)
		snprintf(msg, msglen, "%s: the remote nusku ps did not answer with its JSON rows",
			 o->ssh_host);
cleanup:
	free(buf);
	return err;
}
