/* The allocation loader's sums (load_alloc.h): instead of a row per
 * allocation and per free, one row per (stack, pid, tid, comm, fn) in
 * table alloc_sum, with what the memory views count of them.  A recording
 * of every allocation of a busy program holds tens of millions of them;
 * inserting each and grouping them again in SQL took most of a report's
 * time and memory, while the views only ever show their sums.
 *
 * The counts are those of the rows the same load would have made: an
 * allocation whose call failed (addr 0) counts in failed only; a block
 * ends freed (free, realloc, munmap, implied: frees), with its process
 * (exit) or not at all (live at the end).  allocs, frees and the live
 * counts are sums of weight / size, as view_alloc.c's COUNT_OF. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/load_alloc.h"

struct sum_key {
	uint64_t stack;
	int64_t comm;
	uint32_t pid, tid, fn;
};

struct sum_row {
	struct sum_key k;
	uint64_t n, failed, size, bytes; /* records with addr != 0: n */
	double allocs;
	uint64_t frees_n, freed_bytes;
	double frees;
	uint64_t live_n, live_bytes;
	double live_allocs;
	uint64_t exit_n, exit_bytes;
	double exit_allocs;
};

struct nsk_alloc_sums {
	struct sum_row *rows;
	size_t n, cap;
	uint32_t *slots; /* row index + 1, 0 empty; open addressing */
	size_t nslots;
};

static uint64_t key_hash(const struct sum_key *k)
{
	uint64_t x = k->stack * 0x9e3779b97f4a7c15ULL;

	x ^= ((uint64_t)k->pid << 32 | k->tid) + 0x7f4a7c15ULL + (x << 6) + (x >> 2);
	x ^= (uint64_t)k->comm * 0xff51afd7ed558ccdULL + k->fn;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int same(const struct sum_key *a, const struct sum_key *b)
{
	return a->stack == b->stack && a->comm == b->comm && a->pid == b->pid &&
	       a->tid == b->tid && a->fn == b->fn;
}

static int grow(struct nsk_alloc_sums *s)
{
	size_t cap = s->nslots ? s->nslots * 2 : 1024;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t j = key_hash(&s->rows[i].k) & (cap - 1);

		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)(i + 1);
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = cap;
	return 0;
}

/* The index of k's row, made on first sight; -ENOMEM. */
static int64_t row_of(struct nsk_alloc_sums *s, const struct sum_key *k)
{
	size_t j;

	if ((s->n + 1) * 2 > s->nslots && grow(s))
		return -ENOMEM;
	for (j = key_hash(k) & (s->nslots - 1); s->slots[j];
	     j = (j + 1) & (s->nslots - 1))
		if (same(&s->rows[s->slots[j] - 1].k, k))
			return s->slots[j] - 1;
	if (s->n == UINT32_MAX - 1)
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct sum_row *r = realloc(s->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		s->rows = r;
		s->cap = cap;
	}
	s->rows[s->n] = (struct sum_row){ .k = *k };
	s->slots[j] = (uint32_t)(s->n + 1);
	return (int64_t)s->n++;
}

void nsk_alloc_sums__free(struct nsk_alloc_sums *s)
{
	if (!s)
		return;
	free(s->rows);
	free(s->slots);
	free(s);
}

int nsk_alloc_sums__alloc(struct nsk_load *ld, struct nsk_alloc_slot *v,
			  const struct nsk_rec_alloc *r)
{
	struct nsk_load_alloc *a = ld->alloc;
	struct sum_key k = { .stack = r->stack_id, .pid = r->pid, .tid = r->tid,
			     .fn = r->fn };
	struct sum_row *row;
	int64_t i;

	if (!a->sums && !(a->sums = calloc(1, sizeof(*a->sums))))
		return -ENOMEM;
	k.comm = nsk_load__comm(ld, r->pid, r->tid);
	i = row_of(a->sums, &k);
	if (i < 0)
		return (int)i;
	v->key = (uint32_t)i;
	row = &a->sums->rows[i];
	if (!r->addr) {
		row->failed++;
		return 0;
	}
	row->n++;
	row->size += r->size;
	row->bytes += r->weight;
	row->allocs += nsk_alloc__count_of(r->weight, r->size);
	return 0;
}

void nsk_alloc_sums__end(struct nsk_load *ld, const struct nsk_alloc_slot *s,
			 int fexit)
{
	struct sum_row *row = &ld->alloc->sums->rows[s->key];
	double c = nsk_alloc__count_of(s->weight, s->asize);

	if (fexit) {
		row->exit_n++;
		row->exit_bytes += s->weight;
		row->exit_allocs += c;
	} else {
		row->frees_n++;
		row->freed_bytes += s->weight;
		row->frees += c;
	}
}

static void live(struct nsk_alloc_sums *sums, const struct nsk_alloc_slot *s)
{
	struct sum_row *row = &sums->rows[s->key];

	row->live_n++;
	row->live_bytes += s->weight;
	row->live_allocs += nsk_alloc__count_of(s->weight, s->asize);
}

static int put(struct nsk_load *ld, const char *key, uint64_t v)
{
	static const char sql[] = "INSERT OR REPLACE INTO recording VALUES (?, ?)";
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (int64_t)v);
	return nsk_load__step(ld, st);
}

int nsk_alloc_sums__flush(struct nsk_load *ld)
{
	static const char sql[] = "INSERT INTO alloc_sum VALUES (?, ?, ?, ?, ?, "
		"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct nsk_load_alloc *a = ld->alloc;
	struct nsk_alloc_sums *sums = a->sums;
	int err = 0;

	/* what no free or exit ended is live at the end */
	for (size_t i = 0; sums && i < a->cap; i++)
		if (a->slots[i].used && a->slots[i].sel)
			live(sums, &a->slots[i]);
	if (sums) {
		struct nsk_region_pos pos;
		struct nsk_alloc_slot *g;

		for (g = nsk_regions__seek(&a->regions, 0, 0, &pos); g;
		     nsk_regions__next(&pos), g = nsk_regions__at(&a->regions, &pos))
			if (g->sel)
				live(sums, g);
	}
	for (size_t i = 0; sums && i < sums->n && !err; i++) {
		const struct sum_row *r = &sums->rows[i];
		sqlite3_stmt *st = nsk_load__stmt(ld, sql);

		if (!st)
			return -EIO;
		sqlite3_bind_int64(st, 1, (int64_t)r->k.stack);
		sqlite3_bind_int64(st, 2, r->k.pid);
		sqlite3_bind_int64(st, 3, r->k.tid);
		if (r->k.comm)
			sqlite3_bind_int64(st, 4, r->k.comm);
		else
			sqlite3_bind_null(st, 4);
		sqlite3_bind_text(st, 5, nsk_load_alloc__fn_name(r->k.fn), -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 6, (int64_t)r->n);
		sqlite3_bind_int64(st, 7, (int64_t)r->failed);
		sqlite3_bind_int64(st, 8, (int64_t)r->size);
		sqlite3_bind_int64(st, 9, (int64_t)r->bytes);
		sqlite3_bind_double(st, 10, r->allocs);
		sqlite3_bind_int64(st, 11, (int64_t)r->frees_n);
		sqlite3_bind_double(st, 12, r->frees);
		sqlite3_bind_int64(st, 13, (int64_t)r->freed_bytes);
		sqlite3_bind_int64(st, 14, (int64_t)r->live_n);
		sqlite3_bind_double(st, 15, r->live_allocs);
		sqlite3_bind_int64(st, 16, (int64_t)r->live_bytes);
		sqlite3_bind_int64(st, 17, (int64_t)r->exit_n);
		sqlite3_bind_double(st, 18, r->exit_allocs);
		sqlite3_bind_int64(st, 19, (int64_t)r->exit_bytes);
		err = nsk_load__step(ld, st);
	}
	err = err ?: put(ld, "summed.alloc", a->rows_alloc);
	err = err ?: put(ld, "summed.alloc.selected", a->sel_alloc);
	err = err ?: put(ld, "summed.free", a->rows_free);
	return err ?: put(ld, "summed.free.selected", a->sel_free);
}
