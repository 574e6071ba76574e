/* The record codec: turns a struct nsk_record into a record body and back by
 * walking the record's descriptor (format/rectab.c).  It knows nothing about
 * chunks or framing; the writer and the reader put the type and length in
 * front of what it produces. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/wire.h"

#define AT(rec, off, type) ((type *)((char *)(rec) + (off)))
#define CAT(rec, off, type) ((const type *)((const char *)(rec) + (off)))

size_t nsk_codec__bound(const struct nsk_rec_desc *d, const struct nsk_record *rec)
{
	size_t n = d->max_fixed;

	if (!d->nvar)
		return n;
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct nsk_field *f = &d->fields[i];

		if (f->kind == NSK_F_BYTES)
			n += CAT(rec, f->off, struct nsk_bytes)->len;
		else if (f->kind == NSK_F_U64S)
			n += (size_t)CAT(rec, f->off, struct nsk_u64s)->n * NSK_VARINT_MAX;
	}
	return n;
}

static inline uint64_t time_delta(struct nsk_time_state *ts, uint64_t t)
{
	if (!ts->have_base) {
		ts->base = t;
		ts->have_base = 1;
	}
	if (!ts->have_any) {
		ts->min = ts->max = t;
		ts->have_any = 1;
	} else if (t < ts->min) {
		ts->min = t;
	} else if (t > ts->max) {
		ts->max = t;
	}
	/* Modular difference: any pair of times round-trips exactly. */
	return nsk_zigzag((int64_t)(t - ts->base));
}

uint8_t *nsk_codec__encode(const struct nsk_rec_desc *d,
			   const struct nsk_record *rec, uint8_t *p,
			   struct nsk_time_state *ts)
{
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct nsk_field *f = &d->fields[i];

		switch (f->kind) {
		case NSK_F_U32:
			p = nsk_put_uvar(p, *CAT(rec, f->off, uint32_t));
			break;
		case NSK_F_U64:
			p = nsk_put_uvar(p, *CAT(rec, f->off, uint64_t));
			break;
		case NSK_F_S32:
			p = nsk_put_uvar(p, nsk_zigzag(*CAT(rec, f->off, int32_t)));
			break;
		case NSK_F_S64:
			p = nsk_put_uvar(p, nsk_zigzag(*CAT(rec, f->off, int64_t)));
			break;
		case NSK_F_TIME:
			p = nsk_put_uvar(p, time_delta(ts, *CAT(rec, f->off, uint64_t)));
			break;
		case NSK_F_BYTES: {
			const struct nsk_bytes *b = CAT(rec, f->off, struct nsk_bytes);

			p = nsk_put_uvar(p, b->len);
			if (b->len)
				memcpy(p, b->data, b->len);
			p += b->len;
			break;
		}
		case NSK_F_U64S: {
			const struct nsk_u64s *a = CAT(rec, f->off, struct nsk_u64s);

			p = nsk_put_uvar(p, a->n);
			for (uint32_t k = 0; k < a->n; k++)
				p = nsk_put_uvar(p, a->v[k]);
			break;
		}
		}
	}
	return p;
}

void nsk_u64_scratch__release(struct nsk_u64_scratch *s)
{
	for (unsigned i = 0; i < sizeof(s->v) / sizeof(s->v[0]); i++) {
		free(s->v[i]);
		s->v[i] = NULL;
		s->cap[i] = 0;
	}
}

static uint64_t *scratch_get(struct nsk_u64_scratch *s, unsigned slot, size_t n)
{
	if (slot >= sizeof(s->v) / sizeof(s->v[0]))
		return NULL;
	if (n > s->cap[slot]) {
		size_t cap = n < 64 ? 64 : n;
		uint64_t *v = realloc(s->v[slot], cap * sizeof(*v));

		if (!v)
			return NULL;
		s->v[slot] = v;
		s->cap[slot] = cap;
	}
	return s->v[slot];
}

int nsk_codec__decode(const struct nsk_rec_desc *d, const uint8_t *p,
		      size_t len, uint64_t base, struct nsk_record *rec,
		      struct nsk_u64_scratch *scratch)
{
	const uint8_t *end = p + len;
	unsigned slot = 0;
	uint64_t v;

	memset((char *)rec + offsetof(struct nsk_record, meta), 0,
	       sizeof(*rec) - offsetof(struct nsk_record, meta));
	/* A body shorter than the descriptor is an older minor: the fields
	 * it lacks stay 0.  Bytes past the last known field come from a newer
	 * minor and are ignored. */
	for (unsigned i = 0; i < d->nfields && p < end; i++) {
		const struct nsk_field *f = &d->fields[i];

		if (nsk_get_uvar(&p, end, &v))
			return -EBADMSG;
		switch (f->kind) {
		case NSK_F_U32:
			if (v > UINT32_MAX)
				return -EBADMSG;
			*AT(rec, f->off, uint32_t) = (uint32_t)v;
			break;
		case NSK_F_U64:
			*AT(rec, f->off, uint64_t) = v;
			break;
		case NSK_F_S32: {
			int64_t s = nsk_unzigzag(v);

			if (s < INT32_MIN || s > INT32_MAX)
				return -EBADMSG;
			*AT(rec, f->off, int32_t) = (int32_t)s;
			break;
		}
		case NSK_F_S64:
			*AT(rec, f->off, int64_t) = nsk_unzigzag(v);
			break;
		case NSK_F_TIME:
			*AT(rec, f->off, uint64_t) = base + (uint64_t)nsk_unzigzag(v);
			break;
		case NSK_F_BYTES: {
			struct nsk_bytes *b = AT(rec, f->off, struct nsk_bytes);

			if (v > (uint64_t)(end - p))
				return -EBADMSG;
			b->data = p;
			b->len = (uint32_t)v;
			p += v;
			break;
		}
		case NSK_F_U64S: {
			struct nsk_u64s *a = AT(rec, f->off, struct nsk_u64s);
			uint64_t *out;

			/* Each element takes a byte at least: bounds the
			 * allocation by the body's size. */
			if (v > (uint64_t)(end - p))
				return -EBADMSG;
			if (!v)
				break;
			out = scratch_get(scratch, slot++, (size_t)v);
			if (!out)
				return -ENOMEM;
			for (uint64_t k = 0; k < v; k++)
				if (nsk_get_uvar(&p, end, &out[k]))
					return -EBADMSG;
			a->v = out;
			a->n = (uint32_t)v;
			break;
		}
		}
	}
	return 0;
}
