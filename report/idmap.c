/* The loader's hash maps: u64 ids to values, and string interning.  Both
 * use open addressing with linear probing and double when half full; the
 * number of definitions in a recording is small (thousands to a few
 * hundred thousand), lookups per sample must be cheap. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/idmap.h"

static size_t hash64(uint64_t x)
{
	/* splitmix64 finalizer: ids are often dense, so mix them well. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (size_t)x;
}

int nsk_idmap__get(const struct nsk_idmap *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return 0;
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return 0;
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 1;
		}
	}
}

static void put(struct nsk_idmap *m, uint64_t key, uint64_t val)
{
	size_t i = hash64(key) & (m->cap - 1);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->used[i])
		m->n++;
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
}

static int grow(struct nsk_idmap *m)
{
	struct nsk_idmap g = { 0 };

	g.cap = m->cap ? m->cap * 2 : 64;
	g.keys = malloc(g.cap * sizeof(*g.keys));
	g.vals = malloc(g.cap * sizeof(*g.vals));
	g.used = calloc(g.cap, 1);
	if (!g.keys || !g.vals || !g.used) {
		nsk_idmap__release(&g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			put(&g, m->keys[i], m->vals[i]);
	nsk_idmap__release(m);
	*m = g;
	return 0;
}

int nsk_idmap__set(struct nsk_idmap *m, uint64_t key, uint64_t val)
{
	int err;

	if ((m->n + 1) * 2 > m->cap) {
		err = grow(m);
		if (err)
			return err;
	}
	put(m, key, val);
	return 0;
}

void nsk_idmap__release(struct nsk_idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static size_t hash_str(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return hash64(h);
}

static int str_eq(const char *a, const char *s, size_t len)
{
	return !strncmp(a, s, len) && a[len] == '\0';
}

static int strtab_grow(struct nsk_strtab *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 256;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t id = 1; id <= t->n; id++) {
		const char *s = t->strs[id - 1];
		size_t i = hash_str(s, strlen(s)) & (nslots - 1);

		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = (uint32_t)id;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

uint32_t nsk_strtab__intern(struct nsk_strtab *t, const char *s, size_t len)
{
	size_t i;
	char *copy;

	if (!s) /* an empty STRING body comes as NULL, length 0 */
		s = "";
	len = strnlen(s, len); /* a NUL ends the string, as in C */
	if ((t->n + 1) * 2 > t->nslots && strtab_grow(t))
		return 0;
	for (i = hash_str(s, len) & (t->nslots - 1); t->slots[i];
	     i = (i + 1) & (t->nslots - 1))
		if (str_eq(t->strs[t->slots[i] - 1], s, len))
			return t->slots[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **strs = realloc(t->strs, cap * sizeof(*strs));

		if (!strs)
			return 0;
		t->strs = strs;
		t->cap = cap;
	}
	copy = strndup(s, len);
	if (!copy)
		return 0;
	t->strs[t->n++] = copy;
	t->slots[i] = (uint32_t)t->n;
	return (uint32_t)t->n;
}

const char *nsk_strtab__get(const struct nsk_strtab *t, uint32_t id)
{
	return id && id <= t->n ? t->strs[id - 1] : NULL;
}

void nsk_strtab__release(struct nsk_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
