/* /proc/PID/maps into an address space: executable mappings only, each
 * bound to the module of its file.  A file replaced on disk since it was
 * mapped (another inode, or " (deleted)") is opened through
 * /proc/PID/map_files, which still holds the mapped one. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/procs/maps.h"
#include "record/stacks/symbols.h"

static int add_map(struct nsk_aspace *as, size_t *cap, const struct nsk_map *m)
{
	if (as->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		struct nsk_map *v = realloc(as->maps, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		as->maps = v;
		*cap = ncap;
	}
	as->maps[as->n++] = *m;
	return 0;
}

static int cmp_map(const void *a, const void *b)
{
	const struct nsk_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

char *nsk_maps__snapshot(uint32_t pid, size_t *len)
{
	size_t size = 16384, used = 0;
	char path[64], *buf = malloc(size);
	ssize_t n;
	int fd;

	*len = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		if (used + 4097 > size) {
			char *b = realloc(buf, size * 2);

			if (!b)
				break;
			buf = b;
			size *= 2;
		}
		n = read(fd, buf + used, size - used - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = 0;
	*len = used;
	return buf;
}

/* Where the file a process maps at path can be read: a descriptor held
 * since it was mapped, the path in the process's own root (another mount
 * namespace: a container), the path here, or the mapping itself through
 * /proc/PID/map_files (a file deleted or replaced since); the inode tells
 * whether a path still names the mapped file. */
static void open_path(char *out, size_t size, uint32_t pid, const char *path,
		      uint64_t ino, uint64_t start, uint64_t end, int held_fd)
{
	struct stat st;

	if (held_fd >= 0) {
		snprintf(out, size, "/proc/self/fd/%d", held_fd);
		return;
	}
	snprintf(out, size, "/proc/%u/root%s", pid, path);
	if (!stat(out, &st) && st.st_ino == ino && S_ISREG(st.st_mode))
		return;
	if (!stat(path, &st) && st.st_ino == ino && S_ISREG(st.st_mode)) {
		snprintf(out, size, "%s", path);
		return;
	}
	snprintf(out, size, "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)start, (unsigned long long)end);
}

struct nsk_module *nsk_maps__module(struct nsk_symbols *syms, uint32_t pid,
				    const char *path, uint64_t ino,
				    uint64_t start, uint64_t end, int held_fd)
{
	static const char del[] = " (deleted)";
	char name[4200], openp[4200];
	size_t len;

	if (path[0] != '/')
		return nsk_symbols__module(syms, path[0] ? path : "[anon]", NULL, 0);
	snprintf(name, sizeof(name), "%s", path);
	len = strlen(name);
	if (len > sizeof(del) - 1 && !strcmp(name + len - (sizeof(del) - 1), del))
		name[len - (sizeof(del) - 1)] = 0;
	open_path(openp, sizeof(openp), pid, name, ino, start, end, held_fd);
	return nsk_symbols__module(syms, name, openp, ino);
}

int nsk_aspace__parse(uint32_t pid, uint64_t since, const char *text,
		      struct nsk_symbols *syms, struct nsk_aspace **out)
{
	struct nsk_aspace *as = calloc(1, sizeof(*as));
	char line[4608];
	size_t cap = 0;
	int err = 0;

	if (!as)
		return -ENOMEM;
	as->pid = pid;
	as->since = since;
	as->refs = 1;
	while (text && *text) {
		unsigned long long start, end, off, ino;
		size_t ll = strcspn(text, "\n");
		char perms[8], *path;
		struct nsk_map m = { 0 };
		int pos = 0;

		snprintf(line, sizeof(line), "%.*s", (int)ll, text);
		text += ll + (text[ll] == '\n');
		if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %n", &start, &end,
			   perms, &off, &ino, &pos) < 5 || perms[2] != 'x')
			continue;
		path = line + pos;
		m.start = start;
		m.end = end;
		m.pgoff = off;
		m.ino = ino;
		m.file = path[0] == '/';
		m.mod = nsk_maps__module(syms, pid, path, ino, start, end, -1);
		if (!m.mod || add_map(as, &cap, &m)) {
			err = -ENOMEM;
			break;
		}
	}
	if (as->n)
		qsort(as->maps, as->n, sizeof(*as->maps), cmp_map);
	if (err) {
		nsk_aspace__put(as);
		return err;
	}
	*out = as;
	return 0;
}

int nsk_aspace__read(uint32_t pid, uint64_t since, struct nsk_symbols *syms,
		     struct nsk_aspace **out)
{
	size_t len;
	char *text = nsk_maps__snapshot(pid, &len);
	int err = nsk_aspace__parse(pid, since, text, syms, out);

	free(text);
	return err;
}

void nsk_aspace__inherit_ids(struct nsk_aspace *new_as,
			     const struct nsk_aspace *old)
{
	size_t j = 0;

	/* both sorted by start */
	for (size_t i = 0; i < new_as->n && j < old->n; i++) {
		struct nsk_map *m = &new_as->maps[i];

		while (j < old->n && old->maps[j].start < m->start)
			j++;
		if (j < old->n && old->maps[j].start == m->start &&
		    old->maps[j].end == m->end && old->maps[j].pgoff == m->pgoff &&
		    old->maps[j].mod == m->mod)
			m->mapping_id = old->maps[j].mapping_id;
	}
}

struct nsk_map *nsk_aspace__find(struct nsk_aspace *as, uint64_t addr)
{
	size_t lo = 0, hi = as->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (as->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < as->maps[lo - 1].end)
		return &as->maps[lo - 1];
	return NULL;
}

struct nsk_aspace *nsk_aspace__get(struct nsk_aspace *as)
{
	if (as)
		as->refs++;
	return as;
}

void nsk_aspace__put(struct nsk_aspace *as)
{
	while (as && --as->refs == 0) {
		struct nsk_aspace *older = as->older;

		free(as->maps);
		free(as);
		as = older;
	}
}

struct nsk_aspace *nsk_aspace__clone(const struct nsk_aspace *as, uint32_t pid)
{
	struct nsk_aspace *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	*c = *as;
	c->pid = pid;
	c->refs = 1;
	c->maps = NULL;
	if (as->n && !(c->maps = malloc(as->n * sizeof(*c->maps)))) {
		free(c);
		return NULL;
	}
	/* mapping ids included: the MAPPING records already written name
	 * the process that used them first, as while the maps were shared */
	if (as->n)
		memcpy(c->maps, as->maps, as->n * sizeof(*c->maps));
	c->older = nsk_aspace__get(as->older);
	return c;
}

int nsk_aspace__map(struct nsk_aspace *as, const struct nsk_map *m)
{
	struct nsk_map *v = malloc((as->n + 2) * sizeof(*v));
	size_t k = 0, i = 0;

	if (!v)
		return -ENOMEM;
	/* what m covers is m's now: drop, trim or split what was there */
	for (; i < as->n && as->maps[i].start < m->start; i++) {
		struct nsk_map o = as->maps[i];

		if (o.end > m->start) {
			if (o.end > m->end) {
				struct nsk_map tail = o;

				tail.pgoff += m->end - o.start;
				tail.start = m->end;
				tail.mapping_id = 0;
				o.end = m->start;
				o.mapping_id = 0;
				v[k++] = o;
				v[k++] = *m;
				v[k++] = tail;
				/* the rest starts after o: untouched */
				for (i++; i < as->n; i++)
					v[k++] = as->maps[i];
				goto done;
			}
			o.end = m->start;
			o.mapping_id = 0;
		}
		v[k++] = o;
	}
	v[k++] = *m;
	for (; i < as->n; i++) {
		struct nsk_map o = as->maps[i];

		if (o.end <= m->end)
			continue; /* covered */
		if (o.start < m->end) {
			o.pgoff += m->end - o.start;
			o.start = m->end;
			o.mapping_id = 0;
		}
		v[k++] = o;
	}
done:
	free(as->maps);
	as->maps = v;
	as->n = k;
	return 0;
}
