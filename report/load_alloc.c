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
 * does not include its start is not followed).  A new mapping ends the
 * regions that start inside it (the kernel never hands out an address
 * still mapped: the old one was replaced, MAP_FIXED, or unmapped unseen).
 * Reservations (fn 'reserve': PROT_NONE or MAP_NORESERVE, no memory) are
 * regions too, so that a munmap ends them; commits (fn 'mprotect': a
 * range of a reservation made accessible) end at a munmap or at an
 * mprotect back to PROT_NONE.
 *
 * A process that exits (or execs: its image is gone) takes its blocks
 * with it: each block and region still live gets a row in free with fn
 * 'exit' at that time, so the views count it as live at exit of that
 * process and no longer live.  Records of one process can reach the
 * stream after its exit record (they come from another ring buffer), so
 * an exit is applied only once the stream has passed it by EXIT_MARGIN_NS,
 * when the same pid allocates after it (a new image, or the pid reused),
 * or at the end of the load; blocks allocated after the exit time stay.
 *
 * What a block's start and end become depends on the load's mode
 * (load_alloc.h): rows in alloc and free, sums per stack and thread
 * (load_alloc_sum.c), or the running sums of a second read
 * (load_alloc_time.c), which replays the first read's exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/limits.h"
#include "report/load_alloc.h"

/* How long after an exit its process's late records may still come: the
 * recorder drains every ring buffer at least every 100 ms. */
#define EXIT_MARGIN_NS 2000000000ULL

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
	[NSK_ALLOC_RESERVE] = "reserve",
	[NSK_ALLOC_MPROTECT] = "mprotect",
};

const char *nsk_load_alloc__fn_name(uint32_t fn)
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
	if (!ld->alloc) {
		ld->alloc = calloc(1, sizeof(struct nsk_load_alloc));
		if (ld->alloc)
			ld->alloc->mode = ld->alloc_mode;
	}
	return ld->alloc;
}

void nsk_load_alloc__release(struct nsk_load *ld)
{
	struct nsk_load_alloc *a = ld->alloc;

	if (!a)
		return;
	free(a->slots);
	nsk_regions__release(&a->regions);
	free(a->exits);
	free(a->xlog);
	free(a->selbits);
	nsk_alloc_sums__free(a->sums);
	nsk_alloc_time__free(a->tm);
	nsk_idmap__release(&a->pending);
	nsk_owned__release(&a->owned);
	free(a);
	ld->alloc = NULL;
}

static struct nsk_alloc_slot *find(struct nsk_load_alloc *a, uint32_t pid, uint64_t addr)
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
static void remove_slot(struct nsk_load_alloc *a, struct nsk_alloc_slot *s)
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

/* For the owned lists: whether pid still holds a block at addr, asked
 * for the first time in this compaction (alloc_owned.h). */
static int holds(void *ctx, uint32_t pid, uint64_t addr, uint32_t pass)
{
	struct nsk_load_alloc *a = ctx;
	struct nsk_alloc_slot *s;

	if (!pass) {
		for (size_t i = 0; i < a->cap; i++)
			a->slots[i].pass = 0;
		return 0;
	}
	s = find(a, pid, addr);
	if (!s || s->pass == pass)
		return 0;
	s->pass = pass;
	return 1;
}

static int insert(struct nsk_load_alloc *a, const struct nsk_alloc_slot *v)
{
	size_t mask;

	if (nsk_owned__add(&a->owned, v->pid, v->addr, holds, a))
		return -ENOMEM;
	/* at most 3/4 full: a million live blocks is a heap to expect */
	if ((a->n + 1) * 4 > a->cap * 3) {
		size_t cap = a->cap ? a->cap * 2 : 4096;
		struct nsk_alloc_slot *s = calloc(cap, sizeof(*s));

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

/* -E2BIG with the message kept when n live things are already the limit. */
static int too_many(struct nsk_load *ld, size_t n, size_t limit, const char *what)
{
	if (n < limit)
		return 0;
	snprintf(ld->err, sizeof(ld->err), "more than %zu allocated %s live at "
		 "once: past nusku's limit (a sampled recording, the default, "
		 "holds far fewer)", limit, what);
	return -E2BIG;
}

static int add_region(struct nsk_load_alloc *a, const struct nsk_alloc_slot *v)
{
	return nsk_regions__add(&a->regions, v);
}

/* A block or region ends (s: its slot, NULL for a free of a block the
 * recording never saw allocated): a free row, or the sums' and time's
 * accounts of it. */
static int insert_free(struct nsk_load *ld, uint64_t time, uint32_t pid,
		       uint32_t tid, uint64_t addr, uint64_t size,
		       const char *fn, const struct nsk_alloc_slot *s)
{
	static const char sql[] = "INSERT INTO free VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
	struct nsk_load_alloc *a = ld->alloc;
	sqlite3_stmt *st;
	int64_t comm;

	if (a->mode == NSK_ALLOC_SUMS) {
		int sel = nsk_load__selected(ld, pid, tid, time);

		if (sel < 0)
			return sel;
		a->rows_free++;
		a->sel_free += (uint64_t)sel;
		nsk_load__time(ld, time);
		if (s && s->sel)
			nsk_alloc_sums__end(ld, s, !strcmp(fn, "exit"));
		return 0;
	}
	a->rows_free++;
	if (a->mode == NSK_ALLOC_TIME)
		return s && s->sel ? nsk_alloc_time__end(ld, s, time, !strcmp(fn, "exit")) : 0;
	st = nsk_load__stmt(ld, sql);
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
	if (s)
		sqlite3_bind_int64(st, 8, s->id);
	else
		sqlite3_bind_null(st, 8);
	return nsk_load__step(ld, st);
}

static int apply_exits(struct nsk_load *ld, uint32_t pid, uint64_t now);

/* A region kind: mmap and brk hold memory, reserve and mprotect are the
 * reservations and what was committed of them. */
static int is_region(uint32_t fn)
{
	return fn == NSK_ALLOC_MMAP || fn == NSK_ALLOC_BRK ||
	       fn == NSK_ALLOC_RESERVE || fn == NSK_ALLOC_MPROTECT;
}

/* Ends the regions of pid that start in [addr, addr + size): only commits
 * (fn MPROTECT) when only_commits.  fn names the free rows.  1 when one
 * was ended, 0 none, or a negative errno. */
static int end_regions(struct nsk_load *ld, uint64_t time, uint32_t pid,
		       uint32_t tid, uint64_t addr, uint64_t size,
		       const char *fn, int only_commits)
{
	struct nsk_load_alloc *a = ld->alloc;
	struct nsk_region_pos pos;
	struct nsk_alloc_slot *g;
	int matched = 0, err = 0;

	if (!a)
		return 0;
	for (g = nsk_regions__seek(&a->regions, pid, addr, &pos);
	     g && !err && g->pid == pid && g->addr - addr < size;
	     g = nsk_regions__at(&a->regions, &pos)) {
		if (only_commits && g->fn != NSK_ALLOC_MPROTECT) {
			nsk_regions__next(&pos);
			continue;
		}
		err = insert_free(ld, time, pid, tid, addr, size, fn, g);
		nsk_regions__remove(&a->regions, &pos);
		matched = 1;
	}
	return err ? err : matched;
}

/* Exits before the next event: in the first read, those the stream has
 * passed (and pid's, older than now); in the second, those the first read
 * applied at this place. */
static int exits_due(struct nsk_load *ld, uint32_t pid, uint64_t now)
{
	struct nsk_load_alloc *a = ld->alloc;

	if (a->mode == NSK_ALLOC_TIME)
		return nsk_load_alloc__replay_due(ld, 0);
	return apply_exits(ld, pid, now);
}

static int alloc_row(struct nsk_load *ld, const struct nsk_alloc_slot *v,
		     const struct nsk_rec_alloc *r)
{
	static const char sql[] =
		"INSERT INTO alloc VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	int64_t comm;

	if (!st)
		return -EIO;
	comm = nsk_load__comm(ld, r->pid, r->tid);
	sqlite3_bind_int64(st, 1, v->id);
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
	sqlite3_bind_text(st, 10, nsk_load_alloc__fn_name(r->fn), -1, SQLITE_STATIC);
	return nsk_load__step(ld, st);
}

/* Whether allocation r is in the load's filter (1, 0, -ENOMEM): asked in
 * the first read and kept as a bit by its place in the stream, read back
 * in the second.  Unselected blocks are still matched to their frees and
 * taken by their exits (the free rows the filter selects count them), but
 * summed nowhere. */
static int selected(struct nsk_load *ld, const struct nsk_rec_alloc *r)
{
	struct nsk_load_alloc *a = ld->alloc;
	size_t byte = (size_t)(a->events / 8);
	int sel;

	if (a->filtered)
		return byte < a->nselbits && (a->selbits[byte] >> (a->events % 8) & 1);
	if (!ld->sel)
		return 1;
	sel = nsk_load__selected(ld, r->pid, r->tid, r->time);
	if (sel <= 0)
		return sel;
	if (byte >= a->nselbits) {
		size_t n = a->nselbits ? a->nselbits * 2 : 4096;
		uint8_t *b;

		while (n <= byte)
			n *= 2;
		b = realloc(a->selbits, n);
		if (!b)
			return -ENOMEM;
		memset(b + a->nselbits, 0, n - a->nselbits);
		a->selbits = b;
		a->nselbits = n;
	}
	a->selbits[byte] |= (uint8_t)(1u << (a->events % 8));
	return 1;
}

int nsk_load_alloc__alloc(struct nsk_load *ld, const struct nsk_record *rec)
{
	const struct nsk_rec_alloc *r = &rec->alloc;
	struct nsk_load_alloc *a = state(ld);
	struct nsk_alloc_slot v = { .addr = r->addr, .pid = r->pid, .time = r->time,
				    .fn = (uint16_t)(r->fn < 0xffff ? r->fn : 0xffff),
				    .weight = r->weight,
				    .asize = r->size };
	int region = is_region(r->fn);
	int err, sel;

	if (!a)
		return -ENOMEM;
	/* (the second read makes no rows: the first made the stacks) */
	err = a->mode == NSK_ALLOC_TIME ? 0 : nsk_load__stack_ref(ld, r->stack_id);
	if (err)
		return err;
	/* A pid that allocates after its exit is another image or process. */
	nsk_load__time(ld, r->time);
	err = exits_due(ld, r->pid, r->time);
	if (err)
		return err;
	sel = selected(ld, r);
	if (sel < 0)
		return sel;
	a->events++;
	a->rows_alloc++;
	a->sel_alloc += (uint64_t)sel;
	v.id = ++a->next_id;
	v.sel = (uint8_t)sel;
	if (sel && a->mode == NSK_ALLOC_SUMS)
		err = nsk_alloc_sums__alloc(ld, &v, r);
	else if (sel && a->mode == NSK_ALLOC_TIME)
		err = nsk_alloc_time__alloc(ld, &v, r);
	if (err)
		return err;
	if (r->addr && !region) {
		struct nsk_alloc_slot *old = find(a, r->pid, r->addr);

		if (old) {
			err = insert_free(ld, r->time, r->pid, r->tid, r->addr, 0,
					  "implied", old);
			remove_slot(a, old);
		}
		err = err ? err : too_many(ld, a->n, NSK_LIMIT_LIVE_BLOCKS, "blocks");
		err = err ? err : insert(a, &v);
	} else if (r->addr) {
		/* a commit lies inside its reservation: it replaces only
		 * commits made there before */
		err = end_regions(ld, r->time, r->pid, r->tid, r->addr, r->size,
				  "implied", r->fn == NSK_ALLOC_MPROTECT);
		err = err < 0 ? err : too_many(ld, a->regions.count,
					       NSK_LIMIT_LIVE_REGIONS, "regions");
		err = err < 0 ? err : add_region(a, &v);
	}
	if (err)
		return err;
	return a->mode == NSK_ALLOC_ROWS ? alloc_row(ld, &v, r) : 0;
}

/* munmap, brk shrinking, mprotect to PROT_NONE: end the regions that
 * start in the range (for mprotect, only the commits). */
static int free_range(struct nsk_load *ld, const struct nsk_rec_free *r)
{
	int err = end_regions(ld, r->time, r->pid, r->tid, r->addr, r->size,
			      nsk_load_alloc__fn_name(r->fn), r->fn == NSK_ALLOC_MPROTECT);

	if (!err)
		err = insert_free(ld, r->time, r->pid, r->tid, r->addr, r->size,
				  nsk_load_alloc__fn_name(r->fn), NULL);
	return err < 0 ? err : 0;
}

int nsk_load_alloc__free(struct nsk_load *ld, const struct nsk_record *rec)
{
	const struct nsk_rec_free *r = &rec->free;
	struct nsk_load_alloc *a = state(ld);
	struct nsk_alloc_slot *s, gone;
	int err;

	if (!a)
		return -ENOMEM;
	nsk_load__time(ld, r->time);
	err = exits_due(ld, 0, 0);
	if (err)
		return err;
	a->events++;
	if (r->fn == NSK_ALLOC_MUNMAP || r->fn == NSK_ALLOC_BRK ||
	    r->fn == NSK_ALLOC_MPROTECT)
		return free_range(ld, r);
	/* A free made before the live block at its address was allocated
	 * is an earlier block's, told late (the sampler's batch crossed
	 * another thread's allocation): that block already got its implied
	 * free, and this one stays live. */
	s = find(a, r->pid, r->addr);
	if (s && s->time > r->time)
		s = NULL;
	if (s) {
		gone = *s;
		remove_slot(a, s);
	}
	return insert_free(ld, r->time, r->pid, r->tid, r->addr, r->size,
			   nsk_load_alloc__fn_name(r->fn), s ? &gone : NULL);
}

/* The blocks and regions of pid allocated before time leave with the
 * process: live at exit. */
static int exit_now(struct nsk_load *ld, uint32_t pid, uint64_t time)
{
	struct nsk_load_alloc *a = ld->alloc;
	struct nsk_owned_list *l;
	struct nsk_region_pos pos;
	struct nsk_alloc_slot *g;
	int err = 0;

	if (a->mode == NSK_ALLOC_SUMS) {
		/* for the second read (load_alloc_time.c) */
		if (a->nxlog == a->capxlog) {
			size_t cap = a->capxlog ? 2 * a->capxlog : 64;
			struct nsk_alloc_exit *x = realloc(a->xlog, cap * sizeof(*x));

			if (!x)
				return -ENOMEM;
			a->xlog = x;
			a->capxlog = cap;
		}
		a->xlog[a->nxlog++] = (struct nsk_alloc_exit){
			.pos = a->events, .time = time, .pid = pid };
	}
	/* Only the blocks this process allocated are looked up; those it
	 * allocated after the exit stay (a pid reused, a late exit). */
	l = nsk_owned__of(&a->owned, pid);
	for (uint32_t i = 0; l && i < l->n && !err; i++) {
		struct nsk_alloc_slot *s = find(a, pid, l->addr[i]);

		if (s && s->time <= time) {
			err = insert_free(ld, time, pid, pid, s->addr, 0, "exit", s);
			remove_slot(a, s);
		}
	}
	if (l)
		nsk_owned__keep(&a->owned, l, pid, holds, a);
	for (g = nsk_regions__seek(&a->regions, pid, 0, &pos);
	     g && !err && g->pid == pid; g = nsk_regions__at(&a->regions, &pos)) {
		if (g->time > time) {
			nsk_regions__next(&pos);
			continue;
		}
		err = insert_free(ld, time, pid, pid, g->addr, g->asize, "exit", g);
		nsk_regions__remove(&a->regions, &pos);
	}
	return err;
}

static int apply_one(struct nsk_load *ld, size_t i)
{
	struct nsk_load_alloc *a = ld->alloc;
	struct pending_exit x = a->exits[i];
	uint64_t n = 0;

	memmove(&a->exits[i], &a->exits[i + 1], (--a->nexits - i) * sizeof(x));
	if (nsk_idmap__get(&a->pending, x.pid, &n) && n &&
	    nsk_idmap__set(&a->pending, x.pid, n - 1))
		return -ENOMEM;
	return exit_now(ld, x.pid, x.time);
}

/* Applies the pending exits the stream has passed by the margin (they
 * are in stream order, close to time order), then those of pid older
 * than now (pid 0: none), or all of them (now UINT64_MAX). */
static int apply_exits(struct nsk_load *ld, uint32_t pid, uint64_t now)
{
	struct nsk_load_alloc *a = ld->alloc;
	uint64_t seen = ld->n.time_max, n = 0;
	int err = 0;

	if (!a || !a->nexits)
		return 0;
	while (!err && a->nexits && (now == UINT64_MAX ||
	       (seen > EXIT_MARGIN_NS && a->exits[0].time < seen - EXIT_MARGIN_NS)))
		err = apply_one(ld, 0);
	if (err || !pid || !nsk_idmap__get(&a->pending, pid, &n) || !n)
		return err;
	for (size_t i = 0; i < a->nexits && !err;) {
		if (a->exits[i].pid == pid && a->exits[i].time < now) {
			err = apply_one(ld, i);
			continue;
		}
		i++;
	}
	return err;
}

int nsk_load_alloc__exit(struct nsk_load *ld, uint32_t pid, uint64_t time)
{
	struct nsk_load_alloc *a = state(ld);
	uint64_t n;

	if (!a)
		return -ENOMEM;
	if (a->nexits == a->capexits) {
		size_t cap = a->capexits ? 2 * a->capexits : 16;
		struct pending_exit *x = realloc(a->exits, cap * sizeof(*x));

		if (!x)
			return -ENOMEM;
		a->exits = x;
		a->capexits = cap;
	}
	if (nsk_idmap__get(&a->pending, pid, &n))
		n++;
	else
		n = 1;
	if (nsk_idmap__set(&a->pending, pid, n))
		return -ENOMEM;
	a->exits[a->nexits++] = (struct pending_exit){ .time = time, .pid = pid };
	return apply_exits(ld, 0, 0);
}

int nsk_load_alloc__flush(struct nsk_load *ld)
{
	struct nsk_load_alloc *a = ld->alloc;
	int err;

	if (!a)
		return 0;
	if (a->mode == NSK_ALLOC_TIME)
		return nsk_load_alloc__replay_due(ld, 1);
	err = apply_exits(ld, 0, UINT64_MAX);
	return err ?: a->mode == NSK_ALLOC_SUMS ? nsk_alloc_sums__flush(ld) : 0;
}

int nsk_load_alloc__replay(struct nsk_load *ld, struct nsk_alloc_exit *log,
			   size_t n)
{
	struct nsk_load_alloc *a = state(ld);

	if (!a) {
		free(log);
		return -ENOMEM;
	}
	free(a->xlog);
	a->xlog = log;
	a->nxlog = a->capxlog = n;
	a->xnext = 0;
	return 0;
}

int nsk_load_alloc__replay_due(struct nsk_load *ld, int at_end)
{
	struct nsk_load_alloc *a = ld->alloc;
	int err = 0;

	while (!err && a->xnext < a->nxlog &&
	       (at_end || a->xlog[a->xnext].pos <= a->events)) {
		const struct nsk_alloc_exit *x = &a->xlog[a->xnext++];

		err = exit_now(ld, x->pid, x->time);
	}
	return err;
}

struct nsk_alloc_exit *nsk_load_alloc__take_log(struct nsk_load *ld, size_t *n)
{
	struct nsk_load_alloc *a = ld->alloc;
	struct nsk_alloc_exit *log;

	*n = 0;
	if (!a)
		return NULL;
	log = a->xlog;
	*n = a->nxlog;
	a->xlog = NULL;
	a->nxlog = a->capxlog = 0;
	return log;
}

uint8_t *nsk_load_alloc__take_selbits(struct nsk_load *ld, size_t *n)
{
	struct nsk_load_alloc *a = ld->alloc;
	uint8_t *bits;

	*n = 0;
	if (!a || !ld->sel)
		return NULL;
	bits = a->selbits;
	*n = a->nselbits;
	a->selbits = NULL;
	a->nselbits = 0;
	return bits;
}
