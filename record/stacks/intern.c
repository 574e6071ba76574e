/* An open-addressing hash table from byte keys to 64-bit values: the one
 * data structure behind the recorder's string, frame and stack ids.  Keys
 * live in their own allocation next to their hash, so a probe compares the
 * hash first and the bytes only on a hash match. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/stacks/intern.h"

struct entry {
	uint64_t hash;
	uint64_t value; /* 0: empty slot */
	uint8_t *key;
	size_t len;
};

struct nsk_intern {
	struct entry *slots;
	size_t cap; /* power of two */
	int shift;  /* 64 - log2(cap): a hash's home slot is h >> shift */
	size_t count;
};

/* Eight bytes a step, each mixed in by a multiply, then murmur3's
 * finalizer: the slot is taken from the top bits (probe), which every
 * byte of the key reaches.  Keys are stacks (arrays of addresses, often
 * the same in all but a few words) and short strings. */
uint64_t nsk_hash__bytes(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;

	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	if (len) {
		w = 0;
		memcpy(&w, b, len);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

struct nsk_intern *nsk_intern__new(void)
{
	struct nsk_intern *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 1024;
	t->shift = 64 - 10;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void nsk_intern__free(struct nsk_intern *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].key);
	free(t->slots);
	free(t);
}

static struct entry *probe(const struct nsk_intern *t, uint64_t h,
			   const void *key, size_t len)
{
	size_t mask = t->cap - 1;

	for (size_t i = (size_t)(h >> t->shift);; i = (i + 1) & mask) {
		struct entry *e = &t->slots[i];

		if (!e->value)
			return e;
		if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
			return e;
	}
}

uint64_t nsk_intern__find(const struct nsk_intern *t, const void *key,
			  size_t len)
{
	return probe(t, nsk_hash__bytes(key, len), key, len)->value;
}

static int grow(struct nsk_intern *t)
{
	struct nsk_intern bigger = { .cap = t->cap * 2, .shift = t->shift - 1 };

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct entry *e = &t->slots[i];

		if (e->value)
			*probe(&bigger, e->hash, e->key, e->len) = *e;
	}
	free(t->slots);
	t->slots = bigger.slots;
	t->cap = bigger.cap;
	t->shift = bigger.shift;
	return 0;
}

int nsk_intern__add(struct nsk_intern *t, const void *key, size_t len,
		    uint64_t value)
{
	uint64_t h = nsk_hash__bytes(key, len);
	struct entry *e;
	uint8_t *copy;

	/* at most half full: a linear probe of a miss stays ~2.5 slots */
	if ((t->count + 1) * 2 > t->cap && grow(t))
		return -ENOMEM;
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, key, len);
	e = probe(t, h, key, len);
	e->hash = h;
	e->value = value;
	e->key = copy;
	e->len = len;
	t->count++;
	return 0;
}

size_t nsk_intern__count(const struct nsk_intern *t)
{
	return t->count;
}
