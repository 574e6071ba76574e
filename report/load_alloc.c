/* Loader handlers of the allocation signal: a row per NSK_REC_ALLOC in
 * table alloc, a row per NSK_REC_FREE in table free.
 *
 * Frees are matched to allocations here, in C, as the stream goes by: a
 * hash of the blocks live in each process, (pid, addr) -> alloc row id.  A
 * free of a block the recording never saw allocated (it was allocated
 * before the recorder attached, or its allocation record was lost) gets
 * alloc_id NULL, so no view ever counts it against a site and nothing goes
 * negative.  When the allocator hands out an address that is still live
 * for us, the old block must have been freed unseen (a lost free record):
 * it gets an implied free (fn 'implied') at that time rather than staying
 * a leak forever.
 *
 * munmap and brk shrinking release ranges: they end the live mmap/brk
 * regions that start inside the range (a partial unmap of a region that
 * does not include its start is not followed).
 */
#include <errno.h>
#include <stdlib.h>

#include "report/load.h"

struct live_slot {
	uint64_t addr;
	uint32_t pid;
	uint32_t used; /* 1 used */
	int64_t id;    /* alloc row */
	uint64_t size; /* mmap/brk regions: bytes, 0 for heap blocks */
};

struct nsk_load_alloc {
	struct live_slot *slots; /* open addressing, linear probing */
	size_t cap, n;
	int64_t next_id;
	struct live_slot *regions; /* live mmap/brk regions, unordered */
	size_t nregions, capregions;
};

static const char *const fn_names[] = {
	[NSK_ALLOC_MALLOC] = "malloc",
	[NSK_ALLOC_CALLOC] = "calloc",
	[NSK_ALLOC_REALLOC] = "realloc",
	[NSK_ALLOC_REALLOCARRAY] = "reallocarray",
	[NSK_ALLOC_ALIGNED_ALLOC] = "aligned_alloc",
	[NSK_ALLOC_POSIX_MEMALIGN] = "posix_memalign",
	[NSK_ALLOC_MEMALIGN] = "memalign",
	[NSK_ALLOC_VALLOC] = "valloc",
	[NSK_ALLOC_PVALLOC] = "pvalloc",
	[NSK_ALLOC_MMAP] = "mmap",
	[NSK_ALLOC_BRK] = "brk",
	[NSK_ALLOC_FREE] = "free",
	[NSK_ALLOC_MUNMAP] = "munmap",
};

static const char *fn_name(uint32_t fn)
{
	if (fn < sizeof(fn_names) / sizeof(fn_names[0]) && fn_names[fn])
		return fn_names[fn];
	return "unknown";
}

static uint64_t hash(uint32_t pid, uint64_t addr)
{
	uint64_t x = addr ^ ((uint64_t)pid << 40) ^ pid;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static struct nsk_load_alloc *state(struct nsk_load *ld)
{
	if (!ld->alloc)
		ld->alloc = calloc(1, sizeof(struct nsk_load_alloc));
	return ld->alloc;
}

void nsk_load_alloc__release(struct nsk_load *ld)
{
	struct nsk_load_alloc *a = ld->alloc;

	if (!a)
		return;
	free(a->slots);
	free(a->regions);
	free(a);
	ld->alloc = NULL;
}

static struct live_slot *find(struct nsk_load_alloc *a, uint32_t pid, uint64_t addr)
{
	size_t mask = a->cap - 1;

	if (!a->cap)
		return NULL;
	for (size_t i = hash(pid, addr) & mask; a->slots[i].used; i = (i + 1) & mask)
		if (a->slots[i].pid == pid && a->slots[i].addr == addr)
			return &a->slots[i];
	return NULL;
}

/* Backward-shift deletion keeps probe chains whole without tombstones. */
static void remove_slot(struct nsk_load_alloc *a, struct live_slot *s)
{
	size_t mask = a->cap - 1, i = (size_t)(s - a->slots), j = i;

	a->slots[i].used = 0;
	a->n--;
	for (;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!a->slots[j].used)
			return;
		k = hash(a->slots[j].pid, a->slots[j].addr) & mask;
		/* Move j back to i unless its home k lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		a->slots[i] = a->slots[j];
		a->slots[j].used = 0;
		i = j;
	}
}

static int insert(struct nsk_load_alloc *a, const struct live_slot *v)
{
	size_t mask;

	if ((a->n + 1) * 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4096;
		struct live_slot *s = calloc(cap, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < a->cap; i++) {
			size_t j;

			if (!a->slots[i].used)
				continue;
			for (j = hash(a->slots[i].pid, a->slots[i].addr) & (cap - 1);
			     s[j].used; j = (j + 1) & (cap - 1))
				;
			s[j] = a->slots[i];
		}
		free(a->slots);
		a->slots = s;
		a->cap = cap;
	}
	mask = a->cap - 1;
	for (size_t i = hash(v->pid, v->addr) & mask;; i = (i + 1) & mask) {
		if (!a->slots[i].used) {
			a->slots[i] = *v;
			a->slots[i].used = 1;
			a->n++;
			return 0;
		}
	}
}

static int add_region(struct nsk_load_alloc *a, const struct live_slot *v)
{
	if (a->nregions == a->capregions) {
		size_t cap = a->capregions ? 2 * a->capregions : 64;
		struct live_slot *r = realloc(a->regions, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		a->regions = r;
		a->capregions = cap;
	}
	a->regions[a->nregions++] = *v;
	return 0;
}

static int insert_free(struct nsk_load *ld, uint64_t time, uint32_t pid,
		       uint32_t tid, uint64_t addr, uint64_t size,
		       const char *fn, int64_t alloc_id)
{
	static const char sql[] = "INSERT INTO free VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	int64_t comm;

	if (!st)
		return -EIO;
	nsk_load__time(ld, time);
	comm = nsk_load__comm(ld, pid, tid);
	sqlite3_bind_int64(st, 1, (int64_t)time);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, tid);
	if (comm)
		sqlite3_bind_int64(st, 4, comm);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_int64(st, 5, (int64_t)addr);
	sqlite3_bind_int64(st, 6, (int64_t)size);
	sqlite3_bind_text(st, 7, fn, -1, SQLITE_STATIC);
	if (alloc_id)
		sqlite3_bind_int64(st, 8, alloc_id);
	else
		sqlite3_bind_null(st, 8);
	return nsk_load__step(ld, st);
}

int nsk_load_alloc__alloc(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] =
		"INSERT INTO alloc VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	const struct nsk_rec_alloc *r = &rec->alloc;
	struct nsk_load_alloc *a = state(ld);
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	struct live_slot v = { .addr = r->addr, .pid = r->pid };
	int region = r->fn == NSK_ALLOC_MMAP || r->fn == NSK_ALLOC_BRK;
	int64_t comm;
	int err;

	if (!a)
		return -ENOMEM;
	if (!st)
		return -EIO;
	err = nsk_load__stack_ref(ld, r->stack_id);
	if (err)
		return err;
	v.id = ++a->next_id;
	if (r->addr && !region) {
		struct live_slot *old = find(a, r->pid, r->addr);

		if (old) {
			err = insert_free(ld, r->time, r->pid, r->tid, r->addr, 0,
					  "implied", old->id);
			remove_slot(a, old);
		}
		err = err ? err : insert(a, &v);
	} else if (r->addr) {
		v.size = r->size;
		err = add_region(a, &v);
	}
	if (err)
		return err;
	nsk_load__time(ld, r->time);
	comm = nsk_load__comm(ld, r->pid, r->tid);
	sqlite3_bind_int64(st, 1, v.id);
	sqlite3_bind_int64(st, 2, (int64_t)r->time);
	sqlite3_bind_int64(st, 3, r->pid);
	sqlite3_bind_int64(st, 4, r->tid);
	if (comm)
		sqlite3_bind_int64(st, 5, comm);
	else
		sqlite3_bind_null(st, 5);
	sqlite3_bind_int64(st, 6, (int64_t)r->addr);
	sqlite3_bind_int64(st, 7, (int64_t)r->size);
	sqlite3_bind_int64(st, 8, (int64_t)r->weight);
	sqlite3_bind_int64(st, 9, (int64_t)r->stack_id);
	sqlite3_bind_text(st, 10, fn_name(r->fn), -1, SQLITE_STATIC);
	return nsk_load__step(ld, st);
}

/* munmap or brk shrinking: end the regions that start in the range. */
static int free_range(struct nsk_load *ld, const struct nsk_rec_free *r)
{
	struct nsk_load_alloc *a = ld->alloc;
	int matched = 0, err = 0;

	for (size_t i = 0; a && i < a->nregions && !err;) {
		struct live_slot *g = &a->regions[i];

		if (g->pid == r->pid && g->addr >= r->addr && g->addr - r->addr < r->size) {
			err = insert_free(ld, r->time, r->pid, r->tid, r->addr,
					  r->size, fn_name(r->fn), g->id);
			a->regions[i] = a->regions[--a->nregions];
			matched = 1;
			continue;
		}
		i++;
	}
	if (!matched && !err)
		err = insert_free(ld, r->time, r->pid, r->tid, r->addr, r->size,
				  fn_name(r->fn), 0);
	return err;
}

int nsk_load_alloc__free(struct nsk_load *ld, const struct nsk_record *rec)
{
	const struct nsk_rec_free *r = &rec->free;
	struct nsk_load_alloc *a = state(ld);
	struct live_slot *s;
	int64_t id = 0;

	if (!a)
		return -ENOMEM;
	if (r->fn == NSK_ALLOC_MUNMAP || r->fn == NSK_ALLOC_BRK)
		return free_range(ld, r);
	s = find(a, r->pid, r->addr);
	if (s) {
		id = s->id;
		remove_slot(a, s);
	}
	return insert_free(ld, r->time, r->pid, r->tid, r->addr, r->size,
			   fn_name(r->fn), id);
}
