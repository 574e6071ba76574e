/* The definitions a continuous recording's segments carry (segment_defs.h):
 * a copy of each, keyed by kind and id, with the segment it was last
 * written in.  A record's references are followed through its decoded
 * fields (include/nusku/format.h), never its bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/segment_defs.h"

enum kind { K_STRING, K_MAPPING, K_FRAME, K_STACK, K_CONN, K_PROC, K_THREAD,
	    K_SCNAME, K_META, K_MAX };

struct def {
	uint32_t gen;	 /* the segment it was last written in */
	uint32_t pinned; /* a mapping some frame refers to */
	struct nsk_record rec; /* its bytes follow the struct */
};

/* u64 -> struct def *, open addressing, linear probing. */
struct map {
	uint64_t *keys;
	struct def **vals; /* NULL: empty slot */
	size_t cap, n;
};

struct nsk_defs {
	struct map m[K_MAX];
	uint32_t gen;
};

static size_t slot(const struct map *m, uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (m->cap - 1);
}

static struct def *map_get(const struct map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (!m->vals[i])
			return NULL;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static int map_grow(struct map *m)
{
	struct map n = { 0 };

	n.cap = m->cap ? m->cap * 2 : 256;
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		for (j = slot(&n, m->keys[i]); n.vals[j]; j = (j + 1) & (n.cap - 1))
			;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
	}
	n.n = m->n;
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

/* Puts v at key, freeing what was there. */
static int map_put(struct map *m, uint64_t key, struct def *v)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return -ENOMEM;
	for (i = slot(m, key); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			free(m->vals[i]);
			m->vals[i] = v;
			return 0;
		}
	m->keys[i] = key;
	m->vals[i] = v;
	m->n++;
	return 0;
}

/* Removes slot i, shifting back the entries its probe chain holds. */
static void map_del_slot(struct map *m, size_t i)
{
	size_t j = i;

	free(m->vals[i]);
	m->vals[i] = NULL;
	m->n--;
	for (;;) {
		size_t home;

		j = (j + 1) & (m->cap - 1);
		if (!m->vals[j])
			return;
		home = slot(m, m->keys[j]);
		/* j's entry may move to i when i lies between home and j */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && home <= i && home > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = NULL;
			i = j;
		}
	}
}

static void map_del(struct map *m, uint64_t key)
{
	if (!m->cap)
		return;
	for (size_t i = slot(m, key); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			map_del_slot(m, i);
			return;
		}
}

static void map_release(struct map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->vals[i]);
	free(m->keys);
	free(m->vals);
}

static uint64_t hash_bytes(struct nsk_bytes b)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint32_t i = 0; i < b.len; i++)
		h = (h ^ b.data[i]) * 0x100000001b3ull;
	return h;
}

/* A copy of rec with its bytes in the same allocation. */
static struct def *def_copy(const struct nsk_record *rec)
{
	struct nsk_record r = *rec;
	struct nsk_bytes *b[2] = { NULL, NULL };
	struct nsk_u64s *u = NULL;
	size_t extra = 0;
	struct def *d;
	uint8_t *p;

	switch (r.type) {
	case NSK_REC_META: b[0] = &r.meta.key; b[1] = &r.meta.value; break;
	case NSK_REC_STRING: b[0] = &r.string.str; break;
	case NSK_REC_PROCESS: b[0] = &r.process.comm; b[1] = &r.process.cmdline; break;
	case NSK_REC_THREAD: b[0] = &r.thread.name; break;
	case NSK_REC_MAPPING: b[0] = &r.mapping.build_id; break;
	case NSK_REC_STACK: u = &r.stack.frames; break;
	case NSK_REC_CONN: b[0] = &r.conn.saddr; b[1] = &r.conn.daddr; break;
	case NSK_REC_SYSCALL_NAME: b[0] = &r.syscall_name.name; break;
	default: break;
	}
	for (int i = 0; i < 2; i++)
		if (b[i])
			extra += b[i]->len;
	if (u)
		extra += (size_t)u->n * sizeof(uint64_t);
	d = calloc(1, sizeof(*d) + extra);
	if (!d)
		return NULL;
	p = (uint8_t *)(d + 1);
	if (u && u->n) {
		memcpy(p, u->v, (size_t)u->n * sizeof(uint64_t));
		u->v = (const uint64_t *)p;
		p += (size_t)u->n * sizeof(uint64_t);
	}
	for (int i = 0; i < 2; i++) {
		if (!b[i] || !b[i]->len)
			continue;
		memcpy(p, b[i]->data, b[i]->len);
		b[i]->data = p;
		p += b[i]->len;
	}
	d->rec = r;
	return d;
}

int nsk_defs__new(struct nsk_defs **out)
{
	struct nsk_defs *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->gen = 1;
	*out = d;
	return 0;
}

void nsk_defs__free(struct nsk_defs *d)
{
	if (!d)
		return;
	for (int k = 0; k < K_MAX; k++)
		map_release(&d->m[k]);
	free(d);
}

uint64_t nsk_defs__count(const struct nsk_defs *d)
{
	uint64_t n = 0;

	for (int k = 0; k < K_MAX; k++)
		n += d->m[k].n;
	return n;
}

struct out {
	nsk_defs_emit_fn emit;
	void *ctx;
};

static int refs(struct nsk_defs *d, const struct nsk_record *rec,
		const struct out *o);

/* Writes definition (k, id) and what it needs, unless this segment has it. */
static int ensure(struct nsk_defs *d, enum kind k, uint64_t id,
		  const struct out *o)
{
	struct def *e;
	int err;

	if (!id || !(e = map_get(&d->m[k], id)) || e->gen == d->gen)
		return 0;
	e->gen = d->gen; /* first: a cycle stops here */
	err = refs(d, &e->rec, o);
	return err ?: o->emit(o->ctx, &e->rec);
}

/* Every definition rec refers to. */
static int refs(struct nsk_defs *d, const struct nsk_record *rec,
		const struct out *o)
{
	const struct nsk_rec_frame *f = &rec->frame;
	int err = 0;

	switch (rec->type) {
	case NSK_REC_MAPPING:
		return ensure(d, K_STRING, rec->mapping.path_id, o);
	case NSK_REC_FRAME:
		return ensure(d, K_MAPPING, f->mapping_id, o) ?:
		       ensure(d, K_STRING, f->function_id, o) ?:
		       ensure(d, K_STRING, f->file_id, o) ?:
		       ensure(d, K_STRING, f->module_id, o) ?:
		       ensure(d, K_FRAME, f->inline_parent, o);
	case NSK_REC_STACK:
		for (uint32_t i = 0; i < rec->stack.frames.n && !err; i++)
			err = ensure(d, K_FRAME, rec->stack.frames.v[i], o);
		return err;
	case NSK_REC_SAMPLE:
		return ensure(d, K_STACK, rec->sample.stack_id, o);
	case NSK_REC_ALLOC:
		return ensure(d, K_STACK, rec->alloc.stack_id, o);
	case NSK_REC_OFFCPU:
		return ensure(d, K_STACK, rec->offcpu.stack_id, o) ?:
		       ensure(d, K_STACK, rec->offcpu.waker_stack_id, o) ?:
		       ensure(d, K_STRING, rec->offcpu.detail_id, o);
	case NSK_REC_SYSCALL_STAT:
		return ensure(d, K_STACK, rec->syscall_stat.stack_id, o);
	case NSK_REC_SYSCALL_PATH:
		return ensure(d, K_STACK, rec->syscall_path.stack_id, o);
	case NSK_REC_SYSCALL_SLOW:
		return ensure(d, K_STACK, rec->syscall_slow.stack_id, o) ?:
		       ensure(d, K_STRING, rec->syscall_slow.target_id, o);
	case NSK_REC_CONN:
		return ensure(d, K_STACK, rec->conn.stack_id, o);
	case NSK_REC_RETRANSMIT:
		return ensure(d, K_CONN, rec->retransmit.conn_id, o);
	case NSK_REC_LOSS:
		return ensure(d, K_STRING, rec->loss.source_id, o);
	default:
		return 0;
	}
}

/* Keeps a copy of what rec defines under (k, key). */
static int keep(struct nsk_defs *d, enum kind k, uint64_t key,
		const struct nsk_record *rec)
{
	struct def *e = def_copy(rec);

	if (!e)
		return -ENOMEM;
	e->gen = d->gen;
	if (k == K_MAPPING) {
		struct def *old = map_get(&d->m[k], key);

		e->pinned = old ? old->pinned : 0;
	}
	if (map_put(&d->m[k], key, e)) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

static int note(struct nsk_defs *d, const struct nsk_record *rec)
{
	struct def *m;

	switch (rec->type) {
	case NSK_REC_STRING:
		return keep(d, K_STRING, rec->string.id, rec);
	case NSK_REC_MAPPING:
		return keep(d, K_MAPPING, rec->mapping.id, rec);
	case NSK_REC_FRAME:
		if ((m = map_get(&d->m[K_MAPPING], rec->frame.mapping_id)))
			m->pinned = 1;
		return keep(d, K_FRAME, rec->frame.id, rec);
	case NSK_REC_STACK:
		return keep(d, K_STACK, rec->stack.id, rec);
	case NSK_REC_CONN:
		return keep(d, K_CONN, rec->conn.id, rec);
	case NSK_REC_PROCESS:
		return keep(d, K_PROC, rec->process.pid, rec);
	case NSK_REC_THREAD:
		return keep(d, K_THREAD, rec->thread.tid ? rec->thread.tid
							 : rec->thread.pid, rec);
	case NSK_REC_SYSCALL_NAME:
		return keep(d, K_SCNAME, rec->syscall_name.nr, rec);
	case NSK_REC_META:
		/* a cost is the whole recording's, written into the last
		 * segment only */
		if (rec->meta.key.len >= 5 &&
		    !memcmp(rec->meta.key.data, "cost.", 5))
			return 0;
		return keep(d, K_META, hash_bytes(rec->meta.key), rec);
	case NSK_REC_EXIT:
		map_del(&d->m[K_THREAD], rec->exit.tid);
		if (rec->exit.tid == rec->exit.pid)
			map_del(&d->m[K_PROC], rec->exit.pid);
		return 0;
	default:
		return 0;
	}
}

int nsk_defs__write(struct nsk_defs *d, const struct nsk_record *rec,
		    nsk_defs_emit_fn emit, void *ctx)
{
	struct out o = { emit, ctx };
	int err = refs(d, rec, &o);

	err = err ?: emit(ctx, rec);
	return err ?: note(d, rec);
}

/* What processes that ended leave: their threads, and their mappings that
 * no frame refers to (a frame outlives its process: the stack room keeps
 * it for the next process that maps the same code). */
static void sweep(struct nsk_defs *d)
{
	struct map *t = &d->m[K_THREAD], *m = &d->m[K_MAPPING];
	struct map *p = &d->m[K_PROC];

	/* a delete shifts a later entry back into slot i: look at i again */
	for (size_t i = 0; i < t->cap; i++)
		while (t->vals[i] && !map_get(p, t->vals[i]->rec.thread.pid))
			map_del_slot(t, i);
	for (size_t i = 0; i < m->cap; i++)
		while (m->vals[i] && !m->vals[i]->pinned &&
		       !map_get(p, m->vals[i]->rec.mapping.pid))
			map_del_slot(m, i);
}

static int emit_all(struct map *m, const struct out *o, uint32_t gen,
		    uint64_t time)
{
	for (size_t i = 0; i < m->cap; i++) {
		struct nsk_record r;
		int err;

		if (!m->vals[i])
			continue;
		m->vals[i]->gen = gen;
		r = m->vals[i]->rec;
		if (r.type == NSK_REC_PROCESS) {
			/* already running when this segment began */
			r.process.how = NSK_PROC_ATTACHED;
			r.process.time = time;
		} else if (r.type == NSK_REC_THREAD) {
			r.thread.time = time;
		}
		err = o->emit(o->ctx, &r);
		if (err)
			return err;
	}
	return 0;
}

int nsk_defs__new_segment(struct nsk_defs *d, uint64_t time,
			  nsk_defs_emit_fn emit, void *ctx)
{
	static const enum kind first[] = { K_META, K_SCNAME, K_PROC, K_THREAD };
	struct out o = { emit, ctx };
	int err;

	if (++d->gen == 0)
		d->gen = 1; /* 4 billion segments: a stale mark is harmless */
	sweep(d);
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
		err = emit_all(&d->m[first[i]], &o, d->gen, time);
		if (err)
			return err;
	}
	return 0;
}
