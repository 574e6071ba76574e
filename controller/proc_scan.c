/* /proc for `nusku ps`: stat, status, cmdline and cgroup of every process.
 * Each file is read once with a bounded buffer; a process that exits while
 * it is read is left out, not reported as an error. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/proc_scan.h"

#define PF_KTHREAD_FLAG 0x00200000u

/* Reads up to size-1 bytes of a /proc file; NUL-terminated.  Bytes read or
 * -errno. */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t size)
{
	ssize_t n, got = 0;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	while ((size_t)got < size - 1) {
		n = read(fd, buf + got, size - 1 - (size_t)got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			got = -errno;
			break;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	if (got >= 0)
		buf[got] = '\0';
	return got;
}

int nsk_proc_scan__parse_stat(const char *buf, long page_size, struct nsk_proc *p)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	unsigned long long utime, stime, start;
	long threads, rss;
	unsigned flags;
	size_t len;

	if (!open || !close || close < open)
		return -EINVAL;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(p->comm))
		len = sizeof(p->comm) - 1;
	memcpy(p->comm, open + 1, len);
	p->comm[len] = '\0';
	/* After "(comm) ": state(3) ppid pgrp session tty tpgid flags(9)
	 * minflt cminflt majflt cmajflt utime(14) stime cutime cstime
	 * priority nice num_threads(20) itrealvalue starttime(22) vsize
	 * rss(24) */
	if (sscanf(close + 1, " %*c %d %*d %*d %*d %*d %u %*u %*u %*u %*u %llu %llu"
		   " %*d %*d %*d %*d %ld %*d %llu %*u %ld",
		   &p->ppid, &flags, &utime, &stime, &threads, &start, &rss) != 7)
		return -EINVAL;
	p->ticks = utime + stime;
	p->start = start;
	p->threads = (int)threads;
	p->rss_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page_size : 0;
	p->kernel = !!(flags & PF_KTHREAD_FLAG);
	return 0;
}

static int hex_id(const char *s, size_t len)
{
	if (len != 64)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

void nsk_proc_scan__parse_cgroup(const char *path, struct nsk_proc *p)
{
	static const struct { const char *prefix, *engine; } pre[] = {
		{ "docker-", "docker" }, { "libpod-", "podman" },
		{ "cri-containerd-", "containerd" }, { "crio-", "crio" },
	};
	const char *c = path, *prev_dir = "";
	size_t prev_len = 0;

	p->container[0] = p->engine[0] = p->unit[0] = '\0';
	while (c && *c) {
		const char *end = strchr(c, '/');
		size_t len = end ? (size_t)(end - c) : strlen(c), base = len;

		if (len > 6 && !memcmp(c + len - 6, ".scope", 6))
			base = len - 6;
		if (len > 8 && !memcmp(c + len - 8, ".service", 8))
			base = len - 8;
		if (base != len && len < sizeof(p->unit))
			snprintf(p->unit, sizeof(p->unit), "%.*s", (int)len, c);
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
			size_t pl = strlen(pre[i].prefix);

			if (base > pl && !strncmp(c, pre[i].prefix, pl) &&
			    hex_id(c + pl, base - pl)) {
				snprintf(p->container, sizeof(p->container), "%.*s",
					 (int)(base - pl), c + pl);
				snprintf(p->engine, sizeof(p->engine), "%s", pre[i].engine);
			}
		}
		/* cgroupfs drivers: /docker/ID, /kubepods/.../ID, /libpod_parent/libpod-ID */
		if (hex_id(c, len) && !p->container[0]) {
			snprintf(p->container, sizeof(p->container), "%.*s", (int)len, c);
			snprintf(p->engine, sizeof(p->engine), "%s",
				 prev_len == 6 && !memcmp(prev_dir, "docker", 6) ? "docker"
				 : strstr(path, "kubepods") ? "containerd" : "unknown");
		}
		prev_dir = c;
		prev_len = len;
		c = end ? end + 1 : NULL;
	}
}

static void read_cmdline(int dfd, struct nsk_proc *p)
{
	char buf[NSK_PS_CMDLINE_MAX + 1];
	ssize_t n = read_small(dfd, "cmdline", buf, sizeof(buf));

	if (n < 0)
		n = 0;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	p->cmdline = strdup(buf);
}

static void read_cgroup(int dfd, struct nsk_proc *p)
{
	char buf[8192], *line, *save = NULL;

	if (read_small(dfd, "cgroup", buf, sizeof(buf)) <= 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3))
			continue;
		p->cgroup = strdup(line + 3);
		if (p->cgroup)
			nsk_proc_scan__parse_cgroup(p->cgroup, p);
		return;
	}
}

static int read_uid(int dfd, unsigned *uid)
{
	char buf[4096], *u;
	unsigned real, eff;

	if (read_small(dfd, "status", buf, sizeof(buf)) <= 0)
		return -ENOENT;
	u = strstr(buf, "\nUid:");
	if (!u || sscanf(u + 5, "%u %u", &real, &eff) != 2)
		return -EINVAL;
	*uid = eff;
	return 0;
}

static int push(struct nsk_proc_list *l, const struct nsk_proc *p)
{
	struct nsk_proc *nv;

	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 256;

		nv = realloc(l->v, (size_t)cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n++] = *p;
	return 0;
}

static void free_proc(struct nsk_proc *p)
{
	free(p->cmdline);
	free(p->cgroup);
}

int nsk_proc_scan__list(const char *proc_root, int full, struct nsk_proc_list *out)
{
	long page = sysconf(_SC_PAGESIZE);
	struct dirent *de;
	DIR *d;
	int err = 0;

	memset(out, 0, sizeof(*out));
	d = opendir(proc_root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct nsk_proc p = { 0 };
		char buf[2048], *end;
		long pid = strtol(de->d_name, &end, 10);
		int dfd;

		if (*end || pid <= 0)
			continue;
		dfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		p.pid = (int)pid;
		if (read_small(dfd, "stat", buf, sizeof(buf)) <= 0 ||
		    nsk_proc_scan__parse_stat(buf, page, &p) < 0 ||
		    (full && read_uid(dfd, &p.uid) < 0)) {
			close(dfd);
			continue;
		}
		if (full) {
			read_cmdline(dfd, &p);
			read_cgroup(dfd, &p);
		}
		close(dfd);
		if (full && !p.cmdline) {
			free_proc(&p);
			err = -ENOMEM;
			break;
		}
		err = push(out, &p);
		if (err < 0) {
			free_proc(&p);
			break;
		}
	}
	closedir(d);
	if (err < 0)
		nsk_proc_scan__release(out);
	return err;
}

static int by_pid(const void *a, const void *b)
{
	const struct nsk_proc *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

void nsk_proc_scan__cpu(struct nsk_proc_list *prev, struct nsk_proc_list *cur,
			double elapsed_s)
{
	double hz = (double)sysconf(_SC_CLK_TCK);

	if (prev->n)
		qsort(prev->v, (size_t)prev->n, sizeof(*prev->v), by_pid);
	for (int i = 0; i < cur->n; i++) {
		struct nsk_proc *c = &cur->v[i];
		const struct nsk_proc *q = NULL;

		c->cpu_pct = 0;
		if (prev->n)
			q = bsearch(c, prev->v, (size_t)prev->n, sizeof(*prev->v), by_pid);
		/* a process born in the interval, or a pid reused: no rate */
		if (q && q->start == c->start && c->ticks >= q->ticks && elapsed_s > 0)
			c->cpu_pct = (double)(c->ticks - q->ticks) / hz / elapsed_s * 100.0;
	}
}

void nsk_proc_scan__release(struct nsk_proc_list *l)
{
	for (int i = 0; i < l->n; i++)
		free_proc(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}
