/* Reserved address space per process (see alloc_reserve.h).  Ranges are
 * kept unordered in one array: a process holds a handful. */
#include <errno.h>
#include <stdlib.h>

#include "record/alloc_reserve.h"

static uint64_t end_of(uint64_t start, uint64_t len)
{
	return len > UINT64_MAX - start ? UINT64_MAX : start + len;
}

static int push(struct nsk_alloc_reserve *set, uint32_t pid, uint64_t start,
		uint64_t end)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 16;
		struct nsk_reserve_range *r = realloc(set->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		set->r = r;
		set->cap = cap;
	}
	set->r[set->n++] = (struct nsk_reserve_range){ pid, start, end };
	return 0;
}

int nsk_alloc_reserve__add(struct nsk_alloc_reserve *set, uint32_t pid,
			   uint64_t start, uint64_t len)
{
	int err;

	if (!len)
		return 0;
	/* a new mapping replaces whatever was there (MAP_FIXED) */
	err = nsk_alloc_reserve__remove(set, pid, start, len);
	return err ? err : push(set, pid, start, end_of(start, len));
}

int nsk_alloc_reserve__remove(struct nsk_alloc_reserve *set, uint32_t pid,
			      uint64_t start, uint64_t len)
{
	uint64_t end = end_of(start, len);

	for (size_t i = 0; i < set->n;) {
		struct nsk_reserve_range *g = &set->r[i];

		if (g->pid != pid || g->end <= start || g->start >= end) {
			i++;
			continue;
		}
		if (g->start < start && g->end > end) {
			/* cut in the middle: two pieces */
			uint64_t tail = g->end;

			g->end = start;
			return push(set, pid, end, tail);
		}
		if (g->start < start) {
			g->end = start;
		} else if (g->end > end) {
			g->start = end;
		} else {
			*g = set->r[--set->n];
			continue;
		}
		i++;
	}
	return 0;
}

int nsk_alloc_reserve__covers(const struct nsk_alloc_reserve *set, uint32_t pid,
			      uint64_t start, uint64_t len)
{
	uint64_t end = end_of(start, len);

	for (size_t i = 0; i < set->n; i++)
		if (set->r[i].pid == pid && set->r[i].start <= start &&
		    end <= set->r[i].end)
			return 1;
	return 0;
}

int nsk_alloc_reserve__meets(const struct nsk_alloc_reserve *set, uint32_t pid,
			     uint64_t start, uint64_t len)
{
	uint64_t end = end_of(start, len);

	for (size_t i = 0; i < set->n; i++)
		if (set->r[i].pid == pid && set->r[i].start < end &&
		    start < set->r[i].end)
			return 1;
	return 0;
}

void nsk_alloc_reserve__forget(struct nsk_alloc_reserve *set, uint32_t pid)
{
	for (size_t i = 0; i < set->n;) {
		if (set->r[i].pid == pid)
			set->r[i] = set->r[--set->n];
		else
			i++;
	}
}

void nsk_alloc_reserve__release(struct nsk_alloc_reserve *set)
{
	free(set->r);
	set->r = NULL;
	set->n = set->cap = 0;
}
