/* Perf map files read for the JIT code of traced processes (perfmap.h).
 *
 * One table per process: its entries sorted by start, their names in one
 * arena.  The file is kept open once found, so what the program appends
 * after it exits (or after its /proc entry is gone) is still read; before
 * it is found, the process's root and /tmp, held from the process's start
 * (nsk_perfmaps__watch), let it be opened after the process is gone.  A
 * process without a file is looked for again at most every RETRY_NS, so a
 * program full of anonymous code and no map costs one open per interval.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/stacks/intern.h"
#include "record/stacks/perfmap.h"

#define RETRY_NS 200000000ull /* 200 ms */
#define CHUNK (1u << 20)

struct entry {
	uint64_t start, end;
	uint32_t name; /* offset in names */
	uint32_t seq;  /* order in the file: a later line wins */
};

struct pmap {
	uint32_t pid;
	int fd;		 /* -1: not found (yet) */
	int root;	 /* the process's root, held from its start, or -1 */
	int tmp;	 /* its /tmp then (a mount that may be gone later), or -1 */
	size_t slot;	 /* 1 + its place in the ring of roots, 0: none */
	uint32_t nspid, euid; /* read with root */
	int dead;	 /* refused (not a regular file, not the process's) */
	uint64_t off;	 /* bytes parsed: up to the last whole line */
	uint64_t retry_at;
	struct entry *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

/* Roots held at once: past this, the oldest is let go (its process is
 * then found through /proc, while it lives). */
#define ROOTS_MAX 128
/* Map files held open at once, so that thousands of JIT processes cannot
 * take the recorder's descriptors: past this, no more are opened. */
#define FILES_MAX 256

struct nsk_perfmaps {
	char *proc;
	struct pmap *roots[ROOTS_MAX]; /* a ring of the pmaps holding one */
	size_t next_root;
	size_t nfiles;
	struct nsk_intern *index; /* pid -> 1 + index in maps */
	struct pmap **maps;
	size_t n, cap;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int nsk_perfmaps__new(const char *proc, struct nsk_perfmaps **out)
{
	struct nsk_perfmaps *pm = calloc(1, sizeof(*pm));

	if (!pm || !(pm->proc = strdup(proc ? proc : "/proc")) ||
	    !(pm->index = nsk_intern__new())) {
		nsk_perfmaps__free(pm);
		return -ENOMEM;
	}
	*out = pm;
	return 0;
}

static void pmap_clear(struct pmap *p)
{
	p->n = 0;
	p->names_len = 0;
	p->off = 0;
}

void nsk_perfmaps__free(struct nsk_perfmaps *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->n; i++) {
		if (pm->maps[i]->fd >= 0)
			close(pm->maps[i]->fd);
		if (pm->maps[i]->root >= 0)
			close(pm->maps[i]->root);
		if (pm->maps[i]->tmp >= 0)
			close(pm->maps[i]->tmp);
		free(pm->maps[i]->v);
		free(pm->maps[i]->names);
		free(pm->maps[i]);
	}
	free(pm->maps);
	nsk_intern__free(pm->index);
	free(pm->proc);
	free(pm);
}

/* From /proc/PID/status: the pid in the process's own pid namespace (the
 * last NSpid field) and its effective uid.  -errno when it is gone. */
static int read_status(const char *proc, uint32_t pid, uint32_t *nspid,
		       uint32_t *euid)
{
	char path[4200], buf[4096];
	int fd, got = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%u/status", proc, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	*nspid = pid; /* a kernel without NSpid: no pid namespaces */
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned long v;
		char *p, *e;

		if (!strncmp(l, "NSpid:", 6)) {
			/* the fields go from outermost to innermost */
			for (p = l + 6; (v = strtoul(p, &e, 10)), e != p; p = e)
				*nspid = (uint32_t)v;
		} else if (!strncmp(l, "Uid:", 4)) {
			/* real, effective, saved, fs */
			v = strtoul(l + 4, &e, 10);
			v = strtoul(e, &p, 10);
			if (p != e) {
				*euid = (uint32_t)v;
				got = 1;
			}
		}
	}
	return got ? 0 : -EINVAL;
}

/* Opens tmp/perf-NSPID.map under the process's root, resolving every link
 * inside that root (a /tmp that is a symlink in a container points into
 * the container, not into ours), never following the last one. */
static int open_in_root(int root, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, root, rel, &how, sizeof(how));
	struct stat st;

	if (fd >= 0 || errno != ENOSYS)
		return (int)fd;
	/* before Linux 5.6: refuse a /tmp that is a link */
	if (strchr(rel, '/') &&
	    (fstatat(root, "tmp", &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode)))
		return -1;
	return openat(root, rel, (int)how.flags);
}

static void drop_root(struct nsk_perfmaps *pm, struct pmap *p)
{
	if (p->root >= 0)
		close(p->root);
	if (p->tmp >= 0)
		close(p->tmp);
	p->root = p->tmp = -1;
	if (p->slot)
		pm->roots[p->slot - 1] = NULL;
	p->slot = 0;
}

/* Holds the process's root and reads its ids, for opening its map later,
 * even after it exited.  0, or -errno when it is gone. */
static int hold_root(struct nsk_perfmaps *pm, struct pmap *p)
{
	char path[4200];
	size_t i;

	if (read_status(pm->proc, p->pid, &p->nspid, &p->euid))
		return -ESRCH;
	snprintf(path, sizeof(path), "%s/%u/root", pm->proc, p->pid);
	p->root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->root < 0)
		return -errno;
	/* A container's /tmp is often a mount of its own, unmounted when its
	 * mount namespace ends, maybe before the last samples are
	 * symbolized: holding it keeps it readable. */
	p->tmp = open_in_root(p->root, "tmp", O_PATH | O_DIRECTORY);
	i = pm->next_root++ % ROOTS_MAX;
	if (pm->roots[i])
		drop_root(pm, pm->roots[i]);
	pm->roots[i] = p;
	p->slot = i + 1;
	return 0;
}

static void try_open(struct nsk_perfmaps *pm, struct pmap *p)
{
	struct stat st;
	char rel[64];
	int fd;

	p->retry_at = now_ns() + RETRY_NS;
	if (pm->nfiles >= FILES_MAX || (p->root < 0 && hold_root(pm, p)))
		return;
	/* the /tmp held, else the one there now (mounted since) */
	snprintf(rel, sizeof(rel), "perf-%u.map", p->nspid);
	fd = p->tmp >= 0 ? openat(p->tmp, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
				  O_CLOEXEC) : -1;
	snprintf(rel, sizeof(rel), "tmp/perf-%u.map", p->nspid);
	if (fd < 0)
		fd = open_in_root(p->root, rel, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return;
	drop_root(pm, p);
	/* a FIFO or device would hang or feed us forever; a file of another
	 * user (a link the program made to it) is not the program's to give */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != p->euid) {
		close(fd);
		p->dead = 1;
		return;
	}
	p->fd = fd;
	pm->nfiles++;
}

static int add_name(struct pmap *p, const char *s, size_t len, uint32_t *off)
{
	if (len > NSK_PERFMAP_MAX_NAME)
		len = NSK_PERFMAP_MAX_NAME;
	if (p->names_len + len + 1 > p->names_cap) {
		size_t cap = p->names_cap ? p->names_cap * 2 : 65536;
		char *v;

		while (cap < p->names_len + len + 1)
			cap *= 2;
		if (!(v = realloc(p->names, cap)))
			return -ENOMEM;
		p->names = v;
		p->names_cap = cap;
	}
	*off = (uint32_t)p->names_len;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		/* the name goes into recordings and onto terminals */
		p->names[p->names_len++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	p->names[p->names_len++] = 0;
	return 0;
}

/* One line, "START SIZE name" in hex (with or without 0x); others are
 * skipped. */
static int parse_line(struct pmap *p, const char *l, size_t len)
{
	char num[40], *e;
	uint64_t start = 0, size = 0;
	size_t i = 0, j;
	struct entry *x;

	for (int field = 0; field < 2; field++) {
		for (j = i; j < len && l[j] != ' '; j++)
			;
		if (j == i || j - i >= sizeof(num) || j == len)
			return 0;
		memcpy(num, l + i, j - i);
		num[j - i] = 0;
		if (field == 0)
			start = strtoull(num, &e, 16);
		else
			size = strtoull(num, &e, 16);
		if (*e)
			return 0;
		i = j + 1;
	}
	while (len > i && (l[len - 1] == '\r' || l[len - 1] == ' '))
		len--;
	if (!size || start + size < start || i >= len ||
	    p->n >= NSK_PERFMAP_MAX_ENTRIES)
		return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1024;

		if (!(x = realloc(p->v, cap * sizeof(*x))))
			return -ENOMEM;
		p->v = x;
		p->cap = cap;
	}
	x = &p->v[p->n];
	x->start = start;
	x->end = start + size;
	x->seq = (uint32_t)p->n;
	if (add_name(p, l + i, len - i, &x->name))
		return -ENOMEM;
	p->n++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Reads what was appended since the last read, whole lines only (the
 * writer may be in the middle of one).  1 when entries were added. */
static int read_more(struct pmap *p)
{
	size_t before = p->n;
	struct stat st;
	char *buf;

	if (p->fd < 0 || fstat(p->fd, &st))
		return 0;
	if ((uint64_t)st.st_size < p->off) /* truncated: written anew */
		pmap_clear(p);
	if ((uint64_t)st.st_size == p->off || p->off >= NSK_PERFMAP_MAX_BYTES)
		return 0;
	if (!(buf = malloc(CHUNK)))
		return 0;
	while (p->off < (uint64_t)st.st_size && p->off < NSK_PERFMAP_MAX_BYTES) {
		ssize_t n = pread(p->fd, buf, CHUNK, (off_t)p->off);
		size_t used = 0;

		if (n <= 0)
			break;
		for (;;) {
			char *nl = memchr(buf + used, '\n', (size_t)n - used);

			if (!nl)
				break;
			if (parse_line(p, buf + used, (size_t)(nl - buf) - used))
				break;
			used = (size_t)(nl - buf) + 1;
		}
		/* a line longer than a chunk is nobody's function name */
		if (!used && n == CHUNK)
			used = CHUNK;
		if (!used)
			break;
		p->off += used;
	}
	free(buf);
	if (p->n == before)
		return 0;
	qsort(p->v, p->n, sizeof(*p->v), cmp_entry);
	return 1;
}

static const struct entry *lookup(const struct pmap *p, uint64_t addr)
{
	const struct entry *best = NULL;
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* code moved or recompiled leaves older entries over the same
	 * range: the latest containing one names it (a few steps back is
	 * enough: entries that overlap are few) */
	for (size_t i = lo, k = 0; i > 0 && k < 16; i--, k++) {
		const struct entry *e = &p->v[i - 1];

		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

static struct pmap *pmap_of(struct nsk_perfmaps *pm, uint32_t pid)
{
	uint64_t idx = nsk_intern__find(pm->index, &pid, sizeof(pid));
	struct pmap *p;

	if (idx)
		return pm->maps[idx - 1];
	if (pm->n == pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 16;
		struct pmap **v = realloc(pm->maps, cap * sizeof(*v));

		if (!v)
			return NULL;
		pm->maps = v;
		pm->cap = cap;
	}
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->fd = -1;
	p->root = p->tmp = -1;
	if (nsk_intern__add(pm->index, &pid, sizeof(pid), pm->n + 1)) {
		free(p);
		return NULL;
	}
	pm->maps[pm->n++] = p;
	return p;
}

void nsk_perfmaps__watch(struct nsk_perfmaps *pm, uint32_t pid)
{
	struct pmap *p = pmap_of(pm, pid);

	if (!p)
		return;
	/* a pid seen again is a new process (or a new program): start over */
	if (p->fd >= 0) {
		close(p->fd);
		pm->nfiles--;
	}
	p->fd = -1;
	p->dead = 0;
	p->retry_at = 0;
	pmap_clear(p);
	drop_root(pm, p);
	hold_root(pm, p);
}

const char *nsk_perfmaps__find(struct nsk_perfmaps *pm, uint32_t pid,
			       uint64_t addr, uint64_t *start)
{
	struct pmap *p = pmap_of(pm, pid);
	const struct entry *e;

	if (!p || p->dead)
		return NULL;
	e = lookup(p, addr);
	if (!e) {
		if (p->fd < 0 && now_ns() >= p->retry_at)
			try_open(pm, p);
		if (read_more(p))
			e = lookup(p, addr);
	}
	if (!e)
		return NULL;
	*start = e->start;
	return p->names + e->name;
}
