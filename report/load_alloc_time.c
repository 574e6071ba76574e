/* The allocation loader's second read (load_alloc.h): what needs time
 * and sites together.  Peak live bytes per site is a running sum over the
 * site's allocations (+) and ends (-) in time order, and a site is known
 * only once the stacks' frames are, at the end of the file; so after the
 * first read has summed everything else (load_alloc_sum.c) and the sites
 * are known (temp.asite), the file is read again for its allocation and
 * free records alone:
 *
 *   alloc_peak    (site, peak): the most live bytes each site held
 *   alloc_bucket  (bucket, site, inb, outb, inn, outn, exb): bytes and
 *                 allocations in and out per interval of --by memory-time
 *                 (NSK_ALLOC_BUCKETS equal intervals of the recording),
 *                 out of them gone with their process (exb)
 *
 * The same blocks end at the same events as in the first read: its exits
 * are replayed at the places it applied them, and the read stops after as
 * many events as the first saw (a file still growing).
 *
 * Records come in stream order, close to time order: the running sums
 * take them in (time, delta) order, frees first at equal times as the SQL
 * of view_alloc.c, once the stream has passed them by REORDER_NS (an exit
 * is applied up to 2 s after its time), or when REORDER_MAX events wait (a
 * file whose times stand still: 48 MB).  An event that comes after a later
 * one was taken is counted (recording key alloc.peak_late): the peaks may
 * then be off, and --by alloc-site says so.  Events in order wait in a queue, those
 * out of order (exits, another CPU's ring) in a heap; the next is the
 * earlier of the two heads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nusku/infile.h>

#include "report/load_alloc.h"
#include "report/views.h"

#define REORDER_NS 3000000000ULL
#define REORDER_MAX (2u << 20)

struct ev {
	uint64_t t;
	int64_t dw;
	uint32_t site;
};

struct bucket {
	double inb, outb, inn, outn, exb;
	int used;
};

struct nsk_alloc_time {
	struct nsk_idmap site_of; /* stack id -> site index + 1 */
	int64_t *func;		  /* site index -> its func id */
	size_t nsites;
	int64_t *live, *peak;
	uint8_t *seen;
	struct bucket *b; /* [bucket * nsites + site] */
	struct ev *heap;
	size_t nheap, capheap;
	struct ev *q; /* in order: a ring of capq (a power of two) */
	size_t qhead, nq, capq;
	uint64_t tmax;
	struct ev last;	/* the latest taken */
	uint64_t taken, late;
	int64_t t0, step;
	uint64_t limit; /* events the first read saw */
};

void nsk_alloc_time__free(struct nsk_alloc_time *t)
{
	if (!t)
		return;
	nsk_idmap__release(&t->site_of);
	free(t->func);
	free(t->live);
	free(t->peak);
	free(t->seen);
	free(t->b);
	free(t->heap);
	free(t->q);
	free(t);
}

static int before(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->dw < b->dw);
}

static void apply(struct nsk_alloc_time *t, const struct ev *e)
{
	t->last = *e;
	t->taken++;
	t->live[e->site] += e->dw;
	if (!t->seen[e->site] || t->live[e->site] > t->peak[e->site])
		t->peak[e->site] = t->live[e->site];
	t->seen[e->site] = 1;
}

static void heap_pop(struct nsk_alloc_time *t)
{
	struct ev *h = t->heap;
	size_t i = 0, n = --t->nheap;

	apply(t, &h[0]);
	h[0] = h[n];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct ev x;

		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static int heap_push(struct nsk_alloc_time *t, const struct ev *e)
{
	size_t i;

	if (t->nheap == t->capheap) {
		size_t cap = t->capheap ? t->capheap * 2 : 4096;
		struct ev *h = realloc(t->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		t->heap = h;
		t->capheap = cap;
	}
	i = t->nheap++;
	t->heap[i] = *e;
	while (i && before(&t->heap[i], &t->heap[(i - 1) / 2])) {
		struct ev x = t->heap[i];

		t->heap[i] = t->heap[(i - 1) / 2];
		t->heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
	return 0;
}

static int queue_push(struct nsk_alloc_time *t, const struct ev *e)
{
	if (t->nq == t->capq) {
		size_t cap = t->capq ? t->capq * 2 : 4096;
		struct ev *q = malloc(cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (size_t i = 0; i < t->nq; i++)
			q[i] = t->q[(t->qhead + i) & (t->capq - 1)];
		free(t->q);
		t->q = q;
		t->qhead = 0;
		t->capq = cap;
	}
	t->q[(t->qhead + t->nq++) & (t->capq - 1)] = *e;
	return 0;
}

/* The earliest waiting event, NULL when none waits. */
static const struct ev *next(const struct nsk_alloc_time *t)
{
	const struct ev *q = t->nq ? &t->q[t->qhead] : NULL;

	if (!t->nheap)
		return q;
	return q && before(q, &t->heap[0]) ? q : &t->heap[0];
}

static void pop(struct nsk_alloc_time *t)
{
	const struct ev *e = next(t);

	if (t->nheap && e == t->heap) { /* (t->heap is NULL before the first) */
		heap_pop(t);
		return;
	}
	apply(t, e);
	t->qhead = (t->qhead + 1) & (t->capq - 1);
	t->nq--;
}

static int push(struct nsk_alloc_time *t, uint64_t time, int64_t dw, uint32_t site)
{
	struct ev e = { .t = time, .dw = dw, .site = site };
	const struct ev *last = t->nq ? &t->q[(t->qhead + t->nq - 1) & (t->capq - 1)] : NULL;
	const struct ev *n;
	int err;

	if (t->taken && before(&e, &t->last))
		t->late++;
	err = last && before(&e, last) ? heap_push(t, &e) : queue_push(t, &e);
	if (err)
		return err;
	if (time > t->tmax)
		t->tmax = time;
	while ((n = next(t)) && (t->nq + t->nheap > REORDER_MAX ||
	       (t->tmax > REORDER_NS && n->t < t->tmax - REORDER_NS)))
		pop(t);
	return 0;
}

/* The interval of a time as view_alloc.c's SQL has it ((time - t0) /
 * step in int64), NULL outside the recording's span. */
static struct bucket *bucket(struct nsk_alloc_time *t, uint64_t time, uint32_t site)
{
	int64_t d = (int64_t)(time - (uint64_t)t->t0), i;

	if (d < 0 || t->step <= 0)
		return NULL;
	i = d / t->step;
	if (i >= NSK_ALLOC_BUCKETS)
		return NULL;
	t->b[(size_t)i * t->nsites + site].used = 1;
	return &t->b[(size_t)i * t->nsites + site];
}

int nsk_alloc_time__alloc(struct nsk_load *ld, struct nsk_alloc_slot *v,
			  const struct nsk_rec_alloc *r)
{
	struct nsk_alloc_time *t = ld->alloc->tm;
	struct bucket *b;
	uint64_t site;

	v->key = UINT32_MAX;
	if (r->fn == NSK_ALLOC_RESERVE ||
	    !nsk_idmap__get(&t->site_of, r->stack_id, &site) || !site)
		return 0;
	v->key = (uint32_t)(site - 1);
	if (!r->addr)
		return 0;
	b = bucket(t, r->time, v->key);
	if (b) {
		b->inb += (double)(int64_t)r->weight;
		b->inn += nsk_alloc__count_of(r->weight, r->size);
	}
	return push(t, r->time, (int64_t)r->weight, v->key);
}

int nsk_alloc_time__end(struct nsk_load *ld, const struct nsk_alloc_slot *s,
			uint64_t time, int fexit)
{
	struct nsk_alloc_time *t = ld->alloc->tm;
	struct bucket *b;

	if (s->key == UINT32_MAX)
		return 0;
	b = bucket(t, time, s->key);
	if (b) {
		b->outb += (double)(int64_t)s->weight;
		if (fexit)
			b->exb += (double)(int64_t)s->weight;
		else
			b->outn += nsk_alloc__count_of(s->weight, s->asize);
	}
	return push(t, time, -(int64_t)s->weight, s->key);
}

/* Each stack's site from temp.asite (view_alloc.c's rule). */
static int sites(sqlite3 *db, struct nsk_alloc_time *t)
{
	struct nsk_idmap idx = { 0 };
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int err = 0, rc;

	if (sqlite3_prepare_v2(db, "SELECT stack_id, func_id FROM temp.asite",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t func = sqlite3_column_int64(st, 1);
		uint64_t i;

		if (!nsk_idmap__get(&idx, (uint64_t)func, &i)) {
			if (t->nsites == cap) {
				size_t c = cap ? cap * 2 : 64;
				int64_t *f = realloc(t->func, c * sizeof(*f));

				if (!f) {
					err = -ENOMEM;
					goto cleanup;
				}
				t->func = f;
				cap = c;
			}
			t->func[t->nsites] = func;
			i = ++t->nsites;
			if (nsk_idmap__set(&idx, (uint64_t)func, i)) {
				err = -ENOMEM;
				goto cleanup;
			}
		}
		if (nsk_idmap__set(&t->site_of, (uint64_t)sqlite3_column_int64(st, 0), i)) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	if (rc != SQLITE_DONE)
		err = -EIO;
cleanup:
	sqlite3_finalize(st);
	nsk_idmap__release(&idx);
	return err;
}

static int write_tables(sqlite3 *db, struct nsk_alloc_time *t)
{
	sqlite3_stmt *pk = NULL, *bk = NULL;
	char late[128];
	int err = -EIO;

	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    (t->late && sqlite3_exec(db, sqlite3_snprintf(sizeof(late), late,
			"INSERT OR REPLACE INTO recording VALUES "
			"('alloc.peak_late', %llu)", (unsigned long long)t->late),
			NULL, NULL, NULL) != SQLITE_OK) ||
	    sqlite3_prepare_v2(db, "INSERT INTO alloc_peak VALUES (?, ?)", -1,
			       &pk, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO alloc_bucket VALUES (?, ?, ?, "
			       "?, ?, ?, ?)", -1, &bk, NULL) != SQLITE_OK)
		goto cleanup;
	for (size_t s = 0; s < t->nsites; s++) {
		if (!t->seen[s])
			continue;
		sqlite3_bind_int64(pk, 1, t->func[s]);
		sqlite3_bind_int64(pk, 2, t->peak[s]);
		if (sqlite3_step(pk) != SQLITE_DONE)
			goto cleanup;
		sqlite3_reset(pk);
	}
	for (size_t i = 0; i < (size_t)NSK_ALLOC_BUCKETS * t->nsites; i++) {
		const struct bucket *b = &t->b[i];

		if (!b->used)
			continue;
		sqlite3_bind_int64(bk, 1, (int64_t)(i / t->nsites));
		sqlite3_bind_int64(bk, 2, t->func[i % t->nsites]);
		sqlite3_bind_double(bk, 3, b->inb);
		sqlite3_bind_double(bk, 4, b->outb);
		sqlite3_bind_double(bk, 5, b->inn);
		sqlite3_bind_double(bk, 6, b->outn);
		sqlite3_bind_double(bk, 7, b->exb);
		if (sqlite3_step(bk) != SQLITE_DONE)
			goto cleanup;
		sqlite3_reset(bk);
	}
	err = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
cleanup:
	sqlite3_finalize(pk);
	sqlite3_finalize(bk);
	if (err)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

static void on_problem(void *ctx, const char *msg)
{
	(void)ctx; /* the first read said it */
	(void)msg;
}

int nsk_load_alloc__time_pass(sqlite3 *db, const char *file,
			      const struct nsk_alloc_pass *p, char *msg, size_t len)
{
	struct nsk_reader_opts ropts = { .on_problem = on_problem };
	struct nsk_alloc_exit *log = p->log;
	struct nsk_reader *r = NULL;
	struct nsk_load *ld;
	struct nsk_alloc_time *t;
	struct nsk_record rec;
	struct nsk_io *io;
	int fd, err, ret;

	ld = calloc(1, sizeof(*ld));
	t = calloc(1, sizeof(*t));
	if (!ld || !t) {
		free(ld);
		free(t);
		free(log);
		free(p->selbits);
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	ld->db = db;
	ld->n.time_min = UINT64_MAX;
	ld->alloc_mode = NSK_ALLOC_TIME;
	err = nsk_load_alloc__replay(ld, log, p->nlog);
	if (err) {
		free(p->selbits);
		nsk_alloc_time__free(t);
		goto cleanup;
	}
	ld->alloc->selbits = p->selbits;
	ld->alloc->nselbits = p->nselbits;
	ld->alloc->filtered = p->filtered;
	ld->alloc->tm = t;
	t->t0 = (int64_t)p->t0;
	t->step = (int64_t)((p->t1 - p->t0) / NSK_ALLOC_BUCKETS + 1);
	t->limit = p->events;
	err = nsk_alloc__sites(db, msg, len);
	if (err)
		goto cleanup;
	err = sites(db, t);
	if (!err && t->nsites) {
		t->live = calloc(t->nsites, sizeof(*t->live));
		t->peak = calloc(t->nsites, sizeof(*t->peak));
		t->seen = calloc(t->nsites, 1);
		t->b = calloc((size_t)NSK_ALLOC_BUCKETS * t->nsites, sizeof(*t->b));
		if (!t->live || !t->peak || !t->seen || !t->b)
			err = -ENOMEM;
	}
	if (err) {
		snprintf(msg, len, "sites: %s", strerror(-err));
		goto cleanup;
	}
	fd = nsk_infile__open(file, NSK_INFILE_FIFO_WAIT_MS, NULL, msg, len);
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	io = nsk_io__from_fd(fd, 1);
	if (!io) {
		close(fd);
		err = -ENOMEM;
		snprintf(msg, len, "out of memory");
		goto cleanup;
	}
	err = nsk_reader__new(io, &ropts, &r); /* frees io on failure */
	if (err) {
		snprintf(msg, len, "%s: %s", file, strerror(-err));
		goto cleanup;
	}
	while (!err && ld->alloc->events < t->limit &&
	       (ret = nsk_reader__next(r, &rec)) == 1) {
		if (rec.type == NSK_REC_ALLOC)
			err = nsk_load_alloc__alloc(ld, &rec);
		else if (rec.type == NSK_REC_FREE)
			err = nsk_load_alloc__free(ld, &rec);
	}
	/* the first read's last exits, then what the heap still holds */
	err = err ?: nsk_load_alloc__flush(ld);
	while (!err && next(t))
		pop(t);
	err = err ?: write_tables(db, t);
	if (err && !*msg)
		snprintf(msg, len, "%s: the second read: %s", file,
			 err == -EIO ? sqlite3_errmsg(db) : strerror(-err));
cleanup:
	nsk_reader__free(r);
	nsk_load_alloc__release(ld);
	free(ld);
	return err;
}
