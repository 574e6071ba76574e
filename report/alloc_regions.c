/* The allocation loader's live regions (report/alloc_regions.h), ordered by
 * (pid, start) in chunks of at most CHUNK: a munmap finds the regions that
 * start in its range by bisection, an exit those of its process, in time
 * that grows with what they end, not with every region live.  (An
 * unordered array scanned whole for each took 5.5 s for a 175 KB file of
 * 40,000 regions and unmaps, quadratic in them.) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/load_alloc.h"

#define CHUNK 128u

struct nsk_region_chunk {
	uint32_t n;
	struct nsk_alloc_slot e[CHUNK];
};

/* Whether s comes before key (pid, addr), or (or_equal) is not after it. */
static int precedes(const struct nsk_alloc_slot *s, uint32_t pid, uint64_t addr,
		    int or_equal)
{
	return s->pid < pid ||
	       (s->pid == pid && (or_equal ? s->addr <= addr : s->addr < addr));
}

/* The first chunk whose last entry does not precede the key. */
static size_t chunk_of(const struct nsk_regions *r, uint32_t pid, uint64_t addr,
		       int or_equal)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nsk_region_chunk *c = r->c[mid];

		if (precedes(&c->e[c->n - 1], pid, addr, or_equal))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first entry of c that does not precede the key. */
static uint32_t index_in(const struct nsk_region_chunk *c, uint32_t pid,
			 uint64_t addr, int or_equal)
{
	uint32_t lo = 0, hi = c->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (precedes(&c->e[mid], pid, addr, or_equal))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_chunk(struct nsk_regions *r, size_t at)
{
	struct nsk_region_chunk *c = malloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		struct nsk_region_chunk **cs = realloc(r->c, cap * sizeof(*cs));

		if (!cs) {
			free(c);
			return -ENOMEM;
		}
		r->c = cs;
		r->cap = cap;
	}
	memmove(&r->c[at + 1], &r->c[at], (r->n - at) * sizeof(*r->c));
	c->n = 0;
	r->c[at] = c;
	r->n++;
	return 0;
}

int nsk_regions__add(struct nsk_regions *r, const struct nsk_alloc_slot *v)
{
	/* after the entries equal to it (a commit starts where its
	 * reservation does); past every entry, the last chunk takes it */
	size_t ci = chunk_of(r, v->pid, v->addr, 1);
	struct nsk_region_chunk *c;
	uint32_t i;
	int err;

	if (!r->n && (err = insert_chunk(r, 0)))
		return err;
	if (ci == r->n)
		ci--;
	c = r->c[ci];
	if (c->n == CHUNK) {
		/* split: the upper half moves to a new chunk after it */
		err = insert_chunk(r, ci + 1);
		if (err)
			return err;
		memcpy(r->c[ci + 1]->e, &c->e[CHUNK / 2], (CHUNK / 2) * sizeof(c->e[0]));
		r->c[ci + 1]->n = CHUNK / 2;
		c->n = CHUNK / 2;
		if (precedes(&c->e[c->n - 1], v->pid, v->addr, 1))
			c = r->c[++ci];
	}
	i = index_in(c, v->pid, v->addr, 1);
	memmove(&c->e[i + 1], &c->e[i], (c->n - i) * sizeof(c->e[0]));
	c->e[i] = *v;
	c->n++;
	r->count++;
	return 0;
}

struct nsk_alloc_slot *nsk_regions__seek(struct nsk_regions *r, uint32_t pid,
					 uint64_t addr, struct nsk_region_pos *pos)
{
	pos->c = chunk_of(r, pid, addr, 0);
	pos->i = pos->c < r->n ? index_in(r->c[pos->c], pid, addr, 0) : 0;
	return nsk_regions__at(r, pos);
}

struct nsk_alloc_slot *nsk_regions__at(struct nsk_regions *r,
				       struct nsk_region_pos *pos)
{
	while (pos->c < r->n && pos->i >= r->c[pos->c]->n) {
		pos->c++;
		pos->i = 0;
	}
	return pos->c < r->n ? &r->c[pos->c]->e[pos->i] : NULL;
}

void nsk_regions__next(struct nsk_region_pos *pos)
{
	pos->i++;
}

void nsk_regions__remove(struct nsk_regions *r, struct nsk_region_pos *pos)
{
	struct nsk_region_chunk *c = r->c[pos->c];

	memmove(&c->e[pos->i], &c->e[pos->i + 1], (c->n - pos->i - 1) * sizeof(c->e[0]));
	c->n--;
	r->count--;
	if (!c->n) {
		free(c);
		memmove(&r->c[pos->c], &r->c[pos->c + 1],
			(r->n - pos->c - 1) * sizeof(*r->c));
		r->n--;
		pos->i = 0;
	}
}

void nsk_regions__release(struct nsk_regions *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->c[i]);
	free(r->c);
	memset(r, 0, sizeof(*r));
}
