/* nusku ps: the rows (two scans of /proc interval_ms apart, then the
 * checks), the filter, the orders, and the two ways of printing them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/ps.h"
#include "controller/sessions.h"
#include "report/output.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int nsk_ps__collect(const struct nsk_ps_opts *o, struct nsk_ps_row **rows, int *n)
{
	struct nsk_proc_list a = { 0 }, b = { 0 };
	struct timespec pause = { o->interval_ms / 1000,
				  (long)(o->interval_ms % 1000) * 1000000L };
	struct nsk_ps_row *r = NULL;
	double t0, t1;
	int err;

	*rows = NULL;
	*n = 0;
	t0 = now_s();
	err = nsk_proc_scan__list(o->proc_root, 0, &a);
	if (err < 0)
		goto cleanup;
	while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
		;
	t1 = now_s();
	err = nsk_proc_scan__list(o->proc_root, 1, &b);
	if (err < 0)
		goto cleanup;
	nsk_proc_scan__cpu(&a, &b, t1 - t0);
	r = calloc(b.n ? (size_t)b.n : 1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* the rows own the strings from here */
	for (int i = 0; i < b.n; i++)
		r[i].p = b.v[i];
	*n = b.n;
	free(b.v);
	memset(&b, 0, sizeof(b));
	nsk_ps__inspect(o, r, *n);
	*rows = r;
	err = 0;
cleanup:
	nsk_proc_scan__release(&a);
	nsk_proc_scan__release(&b);
	return err;
}

struct pid_parent {
	int pid, ppid;
};

static int parent_by_pid(const void *a, const void *b)
{
	const struct pid_parent *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The sessions recording pid: those whose target is pid or one of its
 * ancestors (a recording follows the target's children, and theirs),
 * found through the parents in tree (sorted by pid). */
static void sessions_of(const struct nsk_session_info *v, int nv,
			const struct pid_parent *tree, int n, int pid, char *buf,
			size_t len)
{
	size_t used;

	buf[0] = '\0';
	/* pids only grow in a chain of parents up to a wrap: bounded anyway */
	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		struct pid_parent key = { pid, 0 }, *up;

		used = strlen(buf);
		if (used + 2 < len) {
			nsk_sessions__of_pid(v, nv, pid, buf + used + (used ? 1 : 0),
					     len - used - (used ? 1 : 0));
			if (used && buf[used + 1])
				buf[used] = ',';
		}
		up = bsearch(&key, tree, (size_t)n, sizeof(*tree), parent_by_pid);
		if (!up)
			break;
		pid = up->ppid;
	}
}

void nsk_ps__sessions(struct nsk_ps_row *rows, int n)
{
	struct nsk_session_info *v = NULL;
	struct pid_parent *tree = NULL;
	char path[4096], err[4400];
	int dirfd, nv = 0;

	dirfd = nsk_session_dir__open(0, path, sizeof(path), err, sizeof(err));
	if (dirfd < 0)
		return; /* no sessions, or none we may trust */
	if (nsk_sessions__list(dirfd, 0, &v, &nv) || !nv)
		goto cleanup;
	tree = calloc((size_t)n + 1, sizeof(*tree));
	if (!tree)
		goto cleanup;
	for (int i = 0; i < n; i++)
		tree[i] = (struct pid_parent){ rows[i].p.pid, rows[i].p.ppid };
	qsort(tree, (size_t)n, sizeof(*tree), parent_by_pid);
	for (int i = 0; i < n; i++)
		sessions_of(v, nv, tree, n, rows[i].p.pid, rows[i].sessions,
			    sizeof(rows[i].sessions));
cleanup:
	free(tree);
	free(v);
	close(dirfd);
}

void nsk_ps__free_rows(struct nsk_ps_row *rows, int n)
{
	if (!rows)
		return;
	for (int i = 0; i < n; i++) {
		free(rows[i].p.cmdline);
		free(rows[i].p.cgroup);
	}
	free(rows);
}

int nsk_ps__match(const struct nsk_ps_row *r, const char *f)
{
	char *end;
	long pid;

	if (!f || !*f)
		return 1;
	pid = strtol(f, &end, 10);
	if (!*end)
		return pid == r->p.pid;
	return strstr(r->p.comm, f) || (r->p.cmdline && strstr(r->p.cmdline, f)) ||
	       strstr(r->user, f) || (r->p.cgroup && strstr(r->p.cgroup, f)) ||
	       !strcmp(r->runtime ? r->runtime : "", f);
}

static int cmp_pid(const struct nsk_ps_row *a, const struct nsk_ps_row *b)
{
	return (a->p.pid > b->p.pid) - (a->p.pid < b->p.pid);
}

static int by_cpu(const void *x, const void *y)
{
	const struct nsk_ps_row *a = x, *b = y;

	if (a->p.cpu_pct != b->p.cpu_pct)
		return a->p.cpu_pct < b->p.cpu_pct ? 1 : -1;
	return cmp_pid(a, b);
}

static int by_rss(const void *x, const void *y)
{
	const struct nsk_ps_row *a = x, *b = y;

	if (a->p.rss_bytes != b->p.rss_bytes)
		return a->p.rss_bytes < b->p.rss_bytes ? 1 : -1;
	return cmp_pid(a, b);
}

static int by_pid(const void *x, const void *y)
{
	return cmp_pid(x, y);
}

static int by_name(const void *x, const void *y)
{
	const struct nsk_ps_row *a = x, *b = y;
	int c = strcmp(a->p.comm, b->p.comm);

	return c ? c : cmp_pid(a, b);
}

void nsk_ps__sort(struct nsk_ps_row *rows, int n, int sort)
{
	int (*cmp)(const void *, const void *) =
		sort == NSK_PS_SORT_RSS ? by_rss : sort == NSK_PS_SORT_PID ? by_pid
		: sort == NSK_PS_SORT_NAME ? by_name : by_cpu;

	if (n > 1)
		qsort(rows, (size_t)n, sizeof(*rows), cmp);
}

/* ---- text ---------------------------------------------------------------- */

void nsk_ps__fmt_bytes(char *buf, size_t len, unsigned long long v)
{
	static const char unit[] = "KMGTP";
	double d = (double)v / 1024.0;
	int u = 0;

	while (d >= 1000.0 && u < 4) {
		d /= 1024.0;
		u++;
	}
	snprintf(buf, len, d < 10.0 && u ? "%.1f%c" : "%.0f%c", d, unit[u]);
}

static const char *tri(int v)
{
	return v > 0 ? "yes" : v == 0 ? "no" : "?";
}

/* Writes at most w columns of the (escaped, UTF-8) s, cut with '~'. */
static void put_cut(FILE *f, const char *s, int w)
{
	int cols = 0;
	const char *p;

	for (p = s; *p; p++)
		cols += ((unsigned char)*p & 0xc0) != 0x80;
	if (cols <= w) {
		fputs(s, f);
		return;
	}
	cols = 0;
	for (p = s; *p; p++) {
		if (((unsigned char)*p & 0xc0) != 0x80 && ++cols > w - 1)
			break;
		fputc(*p, f);
	}
	fputc('~', f);
}

/* Columns put_cut(s, w) writes. */
static int width_of(const char *s, int w)
{
	int cols = 0;

	for (; *s; s++)
		cols += ((unsigned char)*s & 0xc0) != 0x80;
	return cols < w ? cols : w;
}

static void print_text(FILE *f, const struct nsk_ps_opts *o,
		       const struct nsk_ps_row *rows, int n)
{
	/* PID USER CPU% RSS THR RUNTIME FP DBG PROF: 56 columns with their
	 * separators; the command gets the rest (24 at 80). */
	int cmdw = (o->width > 0 ? o->width : 80) - 56;

	if (cmdw < 8)
		cmdw = 8;
	fprintf(f, "%7s %-8s %5s %5s %4s %-7s %-3s %-3s %-4s %s\n", "PID", "USER",
		"CPU%", "RSS", "THR", "RUNTIME", "FP", "DBG", "PROF", "COMMAND");
	for (int i = 0; i < n; i++) {
		const struct nsk_ps_row *r = &rows[i];
		const char *c = r->p.cmdline && *r->p.cmdline ? r->p.cmdline : NULL;
		char rss[16], cpu[16], kname[80], *eu, *ec;

		if (!c) {
			snprintf(kname, sizeof(kname), "[%s]", r->p.comm);
			c = kname;
		} else {
			/* 24 columns: the program's directory would fill them;
			 * its name and arguments say more (JSON has it all) */
			const char *sp = strchr(c, ' '), *sl = c;

			for (const char *q = c; *q && (!sp || q < sp); q++)
				if (*q == '/' && q[1] && q[1] != ' ')
					sl = q + 1;
			c = sl;
		}
		eu = nsk_out__escaped(r->user);
		if (r->sessions[0]) {
			/* recorded by a background session: say so first */
			char *tagged = NULL;

			if (asprintf(&tagged, "[%s] %s", r->sessions, c) >= 0) {
				ec = nsk_out__escaped(tagged);
				free(tagged);
			} else {
				ec = NULL;
			}
		} else {
			ec = nsk_out__escaped(c);
		}
		nsk_ps__fmt_bytes(rss, sizeof(rss), r->p.rss_bytes);
		snprintf(cpu, sizeof(cpu), r->p.cpu_pct >= 999.5 ? "%.0f" : "%.1f",
			 r->p.cpu_pct);
		fprintf(f, "%7d ", r->p.pid);
		put_cut(f, eu ? eu : "?", 8);
		fprintf(f, "%*s ", 8 - width_of(eu ? eu : "?", 8), "");
		fprintf(f, "%5s %5s %4d %-7.7s %-3s %-3s %-4s ", cpu, rss, r->p.threads,
			r->runtime ? r->runtime : "?", tri(r->frame_pointers),
			tri(r->debug_info), r->can_profile ? "yes" : "no");
		put_cut(f, ec ? ec : "?", cmdw);
		fputc('\n', f);
		free(eu);
		free(ec);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_tri(FILE *f, const char *key, int v)
{
	fprintf(f, ",\"%s\":%s", key, v > 0 ? "true" : v == 0 ? "false" : "null");
}

static void json_opt_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, ",\"%s\":", key);
	if (v && *v)
		nsk_out__json_str(f, v);
	else
		fputs("null", f);
}

static void json_missing(FILE *f, const char *m)
{
	const char *p = m;

	fputs(",\"missing\":[", f);
	while (p && *p) {
		const char *e = strstr(p, "; ");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char item[192];

		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		if (p != m)
			fputc(',', f);
		nsk_out__json_str(f, item);
		p = e ? e + 2 : NULL;
	}
	fputc(']', f);
}

static void print_json(FILE *f, const struct nsk_ps_row *rows, int n)
{
	fputs("[", f);
	for (int i = 0; i < n; i++) {
		const struct nsk_ps_row *r = &rows[i];

		fprintf(f, "%s\n{\"pid\":%d,\"user\":", i ? "," : "", r->p.pid);
		nsk_out__json_str(f, r->user);
		fprintf(f, ",\"uid\":%u,\"comm\":", r->p.uid);
		nsk_out__json_str(f, r->p.comm);
		fputs(",\"cmdline\":", f);
		nsk_out__json_str(f, r->p.cmdline ? r->p.cmdline : "");
		fprintf(f, ",\"cpu_pct\":%.2f,\"rss_bytes\":%llu,\"threads\":%d",
			r->p.cpu_pct, (unsigned long long)r->p.rss_bytes, r->p.threads);
		json_opt_str(f, "cgroup", r->p.cgroup);
		json_opt_str(f, "container", r->p.container);
		json_opt_str(f, "container_engine", r->p.engine);
		json_opt_str(f, "unit", r->p.unit);
		json_opt_str(f, "runtime", r->runtime);
		json_tri(f, "frame_pointers", r->frame_pointers);
		json_tri(f, "debug_info", r->debug_info);
		fprintf(f, ",\"can_profile\":%s", r->can_profile ? "true" : "false");
		json_missing(f, r->missing);
		fputs(",\"sessions\":[", f);
		for (const char *p = r->sessions; *p;) {
			size_t len = strcspn(p, ",");
			char name[NSK_SESSION_NAME_MAX + 1];

			snprintf(name, sizeof(name), "%.*s", (int)len, p);
			if (p != r->sessions)
				fputc(',', f);
			nsk_out__json_str(f, name);
			p += len + (p[len] == ',');
		}
		fputs("]}", f);
	}
	fputs(n ? "\n]\n" : "]\n", f);
}

int nsk_ps__print(FILE *f, const struct nsk_ps_opts *o, struct nsk_ps_row *rows, int n)
{
	int m = 0;

	/* the matching rows first, in order */
	for (int i = 0; i < n; i++)
		if (nsk_ps__match(&rows[i], o->filter)) {
			struct nsk_ps_row t = rows[m];

			rows[m++] = rows[i];
			rows[i] = t;
		}
	nsk_ps__sort(rows, m, o->sort);
	if (o->json)
		print_json(f, rows, m);
	else
		print_text(f, o, rows, m);
	if (fflush(f) != 0)
		return errno ? -errno : -EIO;
	return ferror(f) ? -EIO : m;
}
