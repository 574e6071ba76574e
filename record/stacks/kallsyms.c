/* /proc/kallsyms as a sorted array of text symbols, looked up by binary
 * search.  Names and module names point into one arena per table.  The
 * kernel image's own part is kept between recordings (kallsyms_cache.c):
 * a table read from there reads /proc/kallsyms whole only when asked about
 * an address outside the image (a module, a BPF program). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/stacks/cache_dir.h"
#include "record/stacks/kallsyms.h"
#include "record/stacks/kallsyms_int.h"

/* Copies s into the arena; returns its offset, or NO_OFFSET. */
static uint32_t save(struct nsk_kallsyms *k, const char *s)
{
	size_t len = strlen(s) + 1, off = k->used;

	if (k->used + len >= NO_OFFSET)
		return NO_OFFSET;
	if (k->used + len > k->size) {
		size_t size = k->size ? k->size * 2 : 1 << 20;
		char *a;

		while (size < k->used + len)
			size *= 2;
		a = realloc(k->arena, size);
		if (!a)
			return NO_OFFSET;
		k->arena = a;
		k->size = size;
	}
	memcpy(k->arena + off, s, len);
	k->used += len;
	return (uint32_t)off;
}

/* The arrays at their final size: they grew by doubling. */
static void fit(struct nsk_kallsyms *k)
{
	void *p;

	if (k->n && (p = realloc(k->syms, k->n * sizeof(*k->syms)))) {
		k->syms = p;
		k->cap = k->n;
	}
	if (k->used && (p = realloc(k->arena, k->used))) {
		k->arena = p;
		k->size = k->used;
	}
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void nsk_kallsyms__free(struct nsk_kallsyms *k)
{
	if (!k)
		return;
	free(k->arena);
	free(k->syms);
	if (k->whole) {
		nsk_kallsyms__free(k->whole->k);
		pthread_mutex_destroy(&k->whole->lock);
		free(k->whole);
	}
	free(k);
}

/* One line of /proc/kallsyms: "ADDR TYPE NAME" and, for a module's
 * symbol, "\t[MODULE]".  Parsed by hand: sscanf on each of its ~120,000
 * lines was most of the recorder's own start-up CPU.  Returns the fields
 * found (3 or 4, as the sscanf it replaced did), 0 for a line that is not
 * one; name and mod are NUL-terminated copies, cut at their buffers. */
static int parse_line(const char *p, const char *end, uint64_t *addr,
		      char *type, char *name, size_t nlen, char *mod,
		      size_t mlen)
{
	uint64_t a = 0;
	size_t i;
	int digits = 0;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (; p < end; p++, digits++) {
		int c = *p, v;

		if (c >= '0' && c <= '9')
			v = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = (c | 0x20) - 'a' + 10;
		else
			break;
		a = a << 4 | (uint64_t)v;
	}
	if (!digits || p == end || *p != ' ')
		return 0;
	while (p < end && *p == ' ')
		p++;
	if (p == end || *p == ' ' || *p == '\t')
		return 0;
	*type = *p++;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (i = 0; p < end && *p != ' ' && *p != '\t'; p++)
		if (i + 1 < nlen)
			name[i++] = *p;
	if (!i)
		return 0;
	name[i] = 0;
	*addr = a;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p != '[')
		return 3;
	for (i = 0, p++; p < end && *p != ']'; p++)
		if (i + 1 < mlen)
			mod[i++] = *p;
	if (!i || p == end)
		return 3;
	mod[i] = 0;
	return 4;
}

int nsk_kallsyms__load(const char *path, struct nsk_kallsyms **out)
{
	struct nsk_kallsyms *k = calloc(1, sizeof(*k));
	char name[256], mod[128], last[128] = "";
	uint32_t vmlinux, last_mod;
	size_t have = 0;
	uint64_t addr;
	/* big reads: the kernel fills them whole, a page-sized one costs a
	 * syscall per ~90 lines */
	const size_t bufsize = 256 << 10;
	char *buf = NULL;
	size_t lines = 0, zeros = 0;
	char type;
	int fd = -1, err = 0, eof = 0;

	if (!k)
		return -ENOMEM;
	vmlinux = last_mod = save(k, "vmlinux");
	buf = malloc(bufsize);
	if (vmlinux == NO_OFFSET || !buf) {
		err = -ENOMEM;
		goto done;
	}
	fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		k->err = -errno; /* no kernel symbols: frames stay unresolved */
		goto done;
	}
	while (!eof || have) {
		char *line = buf, *nl;
		ssize_t r = 0;

		if (!eof) {
			r = read(fd, buf + have, bufsize - have);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				eof = 1;
			else
				have += (size_t)r;
		}
		for (;;) {
			int n;

			nl = memchr(line, '\n', have - (size_t)(line - buf));
			if (!nl) {
				/* a last line without its newline, or one
				 * longer than the buffer: taken as it is */
				if (!eof && (line > buf || have < bufsize))
					break;
				nl = buf + have;
			}
			n = parse_line(line, nl, &addr, &type, name, sizeof(name),
				       mod, sizeof(mod));
			line = nl < buf + have ? nl + 1 : nl;
			if (n < 3)
				goto next;
			lines++;
			if (!addr) {
				zeros++;
				goto next;
			}
			/* the bounds of read-only data (record/sctable.c searches it) */
			if (n == 3 && !strcmp(name, "__start_rodata"))
				k->rodata = addr;
			else if (n == 3 && (!strcmp(name, "__init_begin") || !strcmp(name, "_sinittext")))
				k->rodata_end = k->rodata_end && k->rodata_end < addr ? k->rodata_end : addr;
			if (type != 't' && type != 'T' && type != 'w' && type != 'W')
				goto next;
			if (k->n == k->cap) {
				size_t cap = k->cap ? k->cap * 2 : 65536;
				struct ksym *v = realloc(k->syms, cap * sizeof(*v));

				if (!v) {
					err = -ENOMEM;
					goto done;
				}
				k->syms = v;
				k->cap = cap;
			}
			k->syms[k->n].addr = addr;
			k->syms[k->n].name = save(k, name);
			if (n == 4) {
				/* Module symbols come grouped: share the string. */
				if (strcmp(last, mod)) {
					snprintf(last, sizeof(last), "%s", mod);
					last_mod = save(k, mod);
				}
			} else {
				last[0] = 0;
				last_mod = vmlinux;
			}
			k->syms[k->n].module = last_mod;
			if (k->syms[k->n].name == NO_OFFSET || last_mod == NO_OFFSET) {
				err = -ENOMEM;
				goto done;
			}
			k->n++;
next:
			if (line == buf + have)
				break;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
	}
	fit(k);
	if (k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	else
		/* every address 0: the kernel hides them from this reader */
		k->err = lines && zeros == lines ? -EPERM : -ENOENT;
done:
	if (fd >= 0)
		close(fd);
	free(buf);
	if (err) {
		nsk_kallsyms__free(k);
		return err;
	}
	*out = k;
	return 0;
}

int nsk_kallsyms__load_cached(struct nsk_kallsyms **out)
{
	char path[4096], why[256];
	int dir = nsk_cache_dir__open("kernel", path, sizeof(path), why,
				      sizeof(why));
	int err;

	if (dir < 0)
		nsk_cache_dir__warn(dir, why);
	if (dir >= 0 && !nsk_kallsyms_cache__read(dir, out)) {
		close(dir);
		return 0;
	}
	err = nsk_kallsyms__load(NULL, out);
	if (!err && dir >= 0 && !(*out)->err)
		nsk_kallsyms_cache__write(dir, *out);
	if (dir >= 0)
		close(dir);
	return err;
}

void nsk_kallsyms__set_outside(struct nsk_kallsyms *k, nsk_kallsyms_outside_fn fn,
			       void *ctx)
{
	if (k) {
		k->outside = fn;
		k->outside_ctx = ctx;
	}
}

int nsk_kallsyms__err(const struct nsk_kallsyms *k)
{
	return k ? k->err : -ENOENT;
}

/* The whole table behind one of the image alone, read on first need. */
static const struct nsk_kallsyms *whole_of(const struct nsk_kallsyms *k)
{
	struct nsk_kallsyms_whole *w = k->whole;
	struct nsk_kallsyms *full;

	if (!w)
		return NULL;
	if (__atomic_load_n(&w->tried, __ATOMIC_ACQUIRE))
		return w->k;
	pthread_mutex_lock(&w->lock);
	if (!w->tried) {
		if (!nsk_kallsyms__load(NULL, &full) && !full->err)
			w->k = full;
		else if (full)
			nsk_kallsyms__free(full);
		__atomic_store_n(&w->tried, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&w->lock);
	return w->k;
}

int nsk_kallsyms__find(const struct nsk_kallsyms *k, uint64_t addr,
		       const char **name, const char **module)
{
	size_t lo = 0, hi = k->n;
	const struct nsk_kallsyms *w;

	if (k->core_hi && (addr < k->core_lo || addr >= k->core_hi)) {
		if (k->outside && k->outside(k->outside_ctx, addr, name, module))
			return 1;
		w = whole_of(k);
		return w ? nsk_kallsyms__find(w, addr, name, module) : 0;
	}

	/* the last symbol at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	*name = k->arena + k->syms[lo - 1].name;
	*module = k->arena + k->syms[lo - 1].module;
	return 1;
}

struct nsk_kallsyms_loader {
	pthread_t thread;
	struct nsk_kallsyms *k;
};

static void *load_thread(void *arg)
{
	struct nsk_kallsyms_loader *l = arg;

	if (nsk_kallsyms__load_cached(&l->k))
		l->k = NULL;
	return NULL;
}

int nsk_kallsyms__load_async(struct nsk_kallsyms_loader **out)
{
	struct nsk_kallsyms_loader *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	err = pthread_create(&l->thread, NULL, load_thread, l);
	if (err) {
		free(l);
		return -err;
	}
	*out = l;
	return 0;
}

struct nsk_kallsyms *nsk_kallsyms__take(struct nsk_kallsyms_loader *l)
{
	struct nsk_kallsyms *k;

	if (!l)
		return NULL;
	pthread_join(l->thread, NULL);
	k = l->k;
	free(l);
	return k;
}

void nsk_kallsyms_loader__free(struct nsk_kallsyms_loader *l)
{
	nsk_kallsyms__free(nsk_kallsyms__take(l));
}

int nsk_kallsyms__rodata(const struct nsk_kallsyms *k, uint64_t *start,
			 uint64_t *end)
{
	if (!k->rodata)
		return 0;
	*start = k->rodata;
	*end = k->rodata_end > k->rodata ? k->rodata_end : k->rodata + (64 << 20);
	return 1;
}

size_t nsk_kallsyms__count(const struct nsk_kallsyms *k)
{
	return k->n;
}

void nsk_kallsyms__at(const struct nsk_kallsyms *k, size_t i, uint64_t *addr,
		      const char **name, const char **module)
{
	*addr = k->syms[i].addr;
	*name = k->arena + k->syms[i].name;
	*module = k->arena + k->syms[i].module;
}
