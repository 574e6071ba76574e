/* A module's symbolized addresses, kept by build-id (see symcache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record/stacks/cache_dir.h"
#include "record/stacks/grow.h"
#include "record/stacks/intern.h"
#include "record/stacks/symcache.h"

#define MAGIC "NSKSYMC2" /* 2: entries sorted by address */
#define NONE UINT32_MAX
/* A file holds at most this many addresses and bytes: a long-running
 * server's libraries stay far below; past it new answers are not kept. */
#define MAX_ENTRIES (1u << 18)
#define MAX_BYTES (32u << 20)

struct nsk_symcache_head {
	char magic[8];
	uint32_t flags; /* NSK_SYMCACHE_* */
	uint32_t id_len;
	uint8_t id[64];
	uint64_t n_entries, n_locs, arena_len;
};

struct ent {
	uint64_t vaddr;
	uint32_t first, n; /* locations [first, first + n) */
};

struct loc {
	uint32_t function, file; /* arena offsets, NONE: unknown */
	uint32_t line, inlined;
};

/* The entries read from the file come first, sorted by address, and are
 * found by bisection: a module's file is read while the program runs (cc1's
 * holds tens of thousands of addresses), so reading it builds no index.
 * Answers added during the recording follow, in a hash; the write sorts
 * them in and drops the strings the new answers repeated. */
struct nsk_symcache {
	struct ent *e;
	size_t ne, cape;
	size_t nsorted; /* e[0, nsorted): from the file, by address */
	struct loc *l;
	size_t nl, capl;
	char *arena;
	size_t used, cap;
	struct nsk_intern *added;   /* vaddr -> 1 + entry, past nsorted; made on first add */
	struct nsk_intern *strings; /* strings added since the read -> 1 + offset */
	int changed;
};

void nsk_symcache__free(struct nsk_symcache *c)
{
	if (!c)
		return;
	free(c->e);
	free(c->l);
	free(c->arena);
	nsk_intern__free(c->added);
	nsk_intern__free(c->strings);
	free(c);
}

static void id_name(const uint8_t *id, size_t len, char *out, size_t outlen)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 3 < outlen; i++)
		n += (size_t)snprintf(out + n, outlen - n, "%02x", id[i]);
	snprintf(out + n, outlen - n, ".sym");
}

/* The file's answers into c, checked whole: 0, or -EINVAL (c is then
 * left empty by the caller) or -ENOMEM. */
static int parse(struct nsk_symcache *c, const char *buf, size_t len,
		 const uint8_t *id, size_t id_len, unsigned *made_from)
{
	const struct nsk_symcache_head *h = (const void *)buf;
	const struct ent *e;
	const struct loc *l;
	const char *arena;

	if (len < sizeof(*h) || memcmp(h->magic, MAGIC, 8) || h->id_len != id_len ||
	    memcmp(h->id, id, id_len) || h->n_entries > MAX_ENTRIES ||
	    h->n_locs > (uint64_t)MAX_ENTRIES * NSK_SYMLOC_MAX ||
	    h->arena_len > MAX_BYTES ||
	    len != sizeof(*h) + h->n_entries * sizeof(*e) + h->n_locs * sizeof(*l) +
			   h->arena_len)
		return -EINVAL;
	e = (const void *)(h + 1);
	l = (const void *)(e + h->n_entries);
	arena = (const char *)(l + h->n_locs);
	if (h->arena_len && arena[h->arena_len - 1])
		return -EINVAL; /* every offset below it ends in a NUL */
	for (uint64_t i = 0; i < h->n_locs; i++)
		if ((l[i].function != NONE && l[i].function >= h->arena_len) ||
		    (l[i].file != NONE && l[i].file >= h->arena_len) || l[i].inlined > 1)
			return -EINVAL;
	for (uint64_t i = 0; i < h->n_entries; i++)
		if (e[i].n > NSK_SYMLOC_MAX || e[i].first > h->n_locs ||
		    e[i].n > h->n_locs - e[i].first ||
		    (i && e[i].vaddr <= e[i - 1].vaddr)) /* sorted, none twice */
			return -EINVAL;
	if (nsk_grow((void **)&c->e, &c->cape, h->n_entries, sizeof(*c->e)) ||
	    nsk_grow((void **)&c->l, &c->capl, h->n_locs, sizeof(*c->l)) ||
	    nsk_grow((void **)&c->arena, &c->cap, h->arena_len, 1))
		return -ENOMEM;
	if (h->n_entries) /* memcpy wants buffers even for no bytes */
		memcpy(c->e, e, h->n_entries * sizeof(*e));
	if (h->n_locs)
		memcpy(c->l, l, h->n_locs * sizeof(*l));
	if (h->arena_len)
		memcpy(c->arena, arena, h->arena_len);
	c->ne = c->nsorted = h->n_entries;
	c->nl = h->n_locs;
	c->used = h->arena_len;
	*made_from = h->flags & (NSK_SYMCACHE_DWARF | NSK_SYMCACHE_SYMTAB);
	return 0;
}

/* Back to no answers, after a file that did not hold. */
static void reset(struct nsk_symcache *c)
{
	c->ne = c->nsorted = c->nl = c->used = 0;
}

struct nsk_symcache *nsk_symcache__read(int dir, const uint8_t *id, size_t len,
					unsigned *made_from)
{
	struct nsk_symcache *c = calloc(1, sizeof(*c));
	char name[160], *buf = NULL;
	struct stat st;
	int fd = -1, err = 0;

	*made_from = 0;
	if (!c)
		return NULL;
	if (dir < 0 || !len || len > sizeof(((struct nsk_symcache_head *)0)->id))
		return c;
	id_name(id, len, name, sizeof(name));
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return c;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < (off_t)sizeof(struct nsk_symcache_head) ||
	    st.st_size > (off_t)MAX_BYTES * 2)
		goto out;
	buf = malloc((size_t)st.st_size);
	if (!buf)
		goto fail;
	if (nsk_cache_dir__read_all(fd, buf, (size_t)st.st_size))
		goto out;
	err = parse(c, buf, (size_t)st.st_size, id, len, made_from);
	if (err == -ENOMEM)
		goto fail;
	if (err) {
		*made_from = 0;
		reset(c);
	} else {
		futimens(fd, NULL); /* used: the last to go (nsk_symcache__prune) */
	}
out:
	free(buf);
	close(fd);
	return c;
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	nsk_symcache__free(c);
	return NULL;
}

/* The entry of vaddr: by bisection among the file's, else among the added. */
static const struct ent *entry_of(const struct nsk_symcache *c, uint64_t vaddr)
{
	size_t lo = 0, hi = c->nsorted;
	uint64_t v;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->e[mid].vaddr < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nsorted && c->e[lo].vaddr == vaddr)
		return &c->e[lo];
	v = c->added ? nsk_intern__find(c->added, &vaddr, 8) : 0;
	return v ? &c->e[v - 1] : NULL;
}

int nsk_symcache__find(const struct nsk_symcache *c, uint64_t vaddr,
		       struct nsk_symloc *out)
{
	const struct ent *e = c ? entry_of(c, vaddr) : NULL;

	if (!e)
		return -1;
	for (uint32_t i = 0; i < e->n; i++) {
		const struct loc *l = &c->l[e->first + i];

		out[i].function = l->function == NONE ? NULL : c->arena + l->function;
		out[i].file = l->file == NONE ? NULL : c->arena + l->file;
		out[i].line = l->line;
		out[i].inlined = (int)l->inlined;
	}
	return (int)e->n;
}

/* The string's offset in the arena, added when new; NONE for NULL. */
static int string_at(struct nsk_symcache *c, const char *s, uint32_t *off)
{
	size_t len;
	uint64_t v;

	*off = NONE;
	if (!s)
		return 0;
	/* only against the strings added since the read: the file's are not
	 * indexed while the program runs (the write drops repeats) */
	if (!c->strings && !(c->strings = nsk_intern__new()))
		return -ENOMEM;
	len = strlen(s);
	v = nsk_intern__find(c->strings, s, len);
	if (v) {
		*off = (uint32_t)(v - 1);
		return 0;
	}
	if (c->used + len + 1 > MAX_BYTES)
		return -ENOSPC;
	if (nsk_grow((void **)&c->arena, &c->cap, c->used + len + 1, 1))
		return -ENOMEM;
	memcpy(c->arena + c->used, s, len + 1);
	if (nsk_intern__add(c->strings, s, len, c->used + 1))
		return -ENOMEM;
	*off = (uint32_t)c->used;
	c->used += len + 1;
	return 0;
}

int nsk_symcache__add(struct nsk_symcache *c, uint64_t vaddr,
		      const struct nsk_symloc *locs, int n)
{
	struct loc l[NSK_SYMLOC_MAX];
	int err;

	if (n < 0 || n > NSK_SYMLOC_MAX)
		return -EINVAL;
	if (c->ne >= MAX_ENTRIES)
		return -ENOSPC;
	/* every string first: the arena may move, and locs may point into it */
	for (int i = 0; i < n; i++) {
		if ((err = string_at(c, locs[i].function, &l[i].function)) ||
		    (err = string_at(c, locs[i].file, &l[i].file)))
			return err;
		l[i].line = locs[i].line;
		l[i].inlined = !!locs[i].inlined;
	}
	if (nsk_grow((void **)&c->e, &c->cape, c->ne + 1, sizeof(*c->e)) ||
	    nsk_grow((void **)&c->l, &c->capl, c->nl + (size_t)n, sizeof(*c->l)))
		return -ENOMEM;
	if (n) /* an address nothing named has no locations */
		memcpy(c->l + c->nl, l, (size_t)n * sizeof(*l));
	c->e[c->ne] = (struct ent){ vaddr, (uint32_t)c->nl, (uint32_t)n };
	if ((!c->added && !(c->added = nsk_intern__new())) ||
	    nsk_intern__add(c->added, &vaddr, 8, c->ne + 1))
		return -ENOMEM;
	c->ne++;
	c->nl += (size_t)n;
	c->changed = 1;
	return 0;
}

int nsk_symcache__changed(const struct nsk_symcache *c)
{
	return c && c->changed;
}

static int by_vaddr(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* What a write puts in the file: the entries sorted by address, and an
 * arena holding each string the locations name once. */
struct packed {
	struct ent *e;
	struct loc *l;
	char *arena;
	size_t used, cap;
};

static int repack_string(const struct nsk_symcache *c, struct nsk_intern *seen,
			 struct packed *p, uint32_t *off)
{
	const char *s;
	size_t len;
	uint64_t v;

	if (*off == NONE)
		return 0;
	s = c->arena + *off;
	len = strlen(s); /* the arena ends in a NUL (checked at the read) */
	v = nsk_intern__find(seen, s, len);
	if (!v) {
		if (nsk_grow((void **)&p->arena, &p->cap, p->used + len + 1, 1) ||
		    nsk_intern__add(seen, s, len, p->used + 1))
			return -ENOMEM;
		memcpy(p->arena + p->used, s, len + 1);
		v = p->used + 1;
		p->used += len + 1;
	}
	*off = (uint32_t)(v - 1);
	return 0;
}

static int pack(const struct nsk_symcache *c, struct packed *p)
{
	struct nsk_intern *seen = nsk_intern__new();
	int err = -ENOMEM;

	p->e = malloc(c->ne * sizeof(*p->e));
	p->l = malloc((c->nl ? c->nl : 1) * sizeof(*p->l));
	if (!seen || !p->e || !p->l)
		goto cleanup;
	memcpy(p->e, c->e, c->ne * sizeof(*p->e));
	qsort(p->e, c->ne, sizeof(*p->e), by_vaddr);
	if (c->nl)
		memcpy(p->l, c->l, c->nl * sizeof(*p->l));
	for (size_t i = 0; i < c->nl; i++)
		if (repack_string(c, seen, p, &p->l[i].function) ||
		    repack_string(c, seen, p, &p->l[i].file))
			goto cleanup;
	err = 0;
cleanup:
	nsk_intern__free(seen);
	return err;
}

void nsk_symcache__write(int dir, const uint8_t *id, size_t len,
			 const struct nsk_symcache *c, unsigned made_from)
{
	struct nsk_symcache_head h = { .magic = MAGIC };
	struct packed p = { 0 };
	char name[160], tmp[200];
	int fd, ok;

	if (dir < 0 || !c || !c->ne || !len || len > sizeof(h.id) || pack(c, &p))
		goto cleanup;
	h.flags = made_from;
	h.id_len = (uint32_t)len;
	memcpy(h.id, id, len);
	h.n_entries = c->ne;
	h.n_locs = c->nl;
	h.arena_len = p.used;
	id_name(id, len, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".tmp-%s-%d", name, (int)getpid());
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		goto cleanup;
	ok = !nsk_cache_dir__write_all(fd, &h, sizeof(h)) &&
	     !nsk_cache_dir__write_all(fd, p.e, c->ne * sizeof(*p.e)) &&
	     !nsk_cache_dir__write_all(fd, p.l, c->nl * sizeof(*p.l)) &&
	     !nsk_cache_dir__write_all(fd, p.arena, p.used);
	ok = !close(fd) && ok;
	if (!ok || renameat(dir, tmp, dir, name))
		unlinkat(dir, tmp, 0);
cleanup:
	free(p.e);
	free(p.l);
	free(p.arena);
}

struct kept_file {
	time_t used;
	uint64_t size;
	char name[160];
};

static int by_use(const void *a, const void *b)
{
	const struct kept_file *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

void nsk_symcache__prune(int dir, uint64_t max)
{
	struct kept_file *f = NULL, *grown;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	int dfd = dir >= 0 ? fcntl(dir, F_DUPFD_CLOEXEC, 3) : -1;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	time_t now = time(NULL);

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (l >= sizeof(f->name) ||
		    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (!strncmp(de->d_name, ".tmp-", 5)) { /* a recorder killed mid-write */
			if (now - st.st_mtime > 3600)
				unlinkat(dir, de->d_name, 0);
			continue;
		}
		if (l < 5 || strcmp(de->d_name + l - 4, ".sym"))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(f, cap * sizeof(*f));
			if (!grown)
				goto out;
			f = grown;
		}
		f[n].used = st.st_mtime;
		f[n].size = (uint64_t)st.st_blocks * 512;
		memcpy(f[n].name, de->d_name, l + 1);
		total += f[n].size;
		n++;
	}
	if (n)
		qsort(f, n, sizeof(*f), by_use);
	for (size_t i = 0; i < n && total > max; i++)
		if (!unlinkat(dir, f[i].name, 0))
			total -= f[i].size;
out:
	free(f);
	closedir(d);
}
