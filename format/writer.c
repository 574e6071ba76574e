/* The .nsk writer: encodes records into a chunk buffer, and when the chunk
 * holds opts.chunk_bytes (or nsk_writer__tick finds it too old) compresses
 * it, frames it with a chunk header and hands it to the io.  The first I/O
 * error is kept: every later call fails fast with it, and what was written
 * before it stays readable (each chunk stands alone). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "format/wire.h"

#define DEFAULT_CHUNK (256u << 10)
#define DEFAULT_INTERVAL_NS 250000000ull
#define DEFAULT_LEVEL 3

_Static_assert(NSK_REC_TYPE_MAX < 128, "record types fit in a one-byte varint");

struct ix_entry {
	uint64_t offset, seq, first, last;
	uint32_t records;
};

struct nsk_writer {
	struct nsk_io *io;
	size_t chunk_bytes;
	uint64_t interval_ns;
	int level;
	int err;	/* the first error; sticky */
	uint64_t bytes; /* handed to the io */
	uint64_t seq;

	/* The open chunk. */
	uint8_t *raw;
	size_t raw_len, raw_cap;
	uint32_t records;
	struct nsk_time_state ts;
	uint64_t opened_ns; /* CLOCK_MONOTONIC when its first record came */

	uint8_t *out; /* chunk header + stored payload */
	size_t out_cap;
	ZSTD_CCtx *cctx;

	struct ix_entry *ix;
	size_t ix_n, ix_cap;
	uint64_t all_min, all_max;
	int have_time;
};

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fail(struct nsk_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

static int write_all(struct nsk_writer *w, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = w->io->write(w->io->ctx, buf, len);

		if (n == -EINTR)
			continue;
		if (n == -EAGAIN) {
			/* A non-blocking pipe whose reader is behind: wait
			 * for it rather than drop a chunk. */
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
			continue;
		}
		if (n < 0)
			return fail(w, (int)n);
		if (n == 0 || (size_t)n > len)
			return fail(w, -EIO);
		buf += n;
		len -= (size_t)n;
		w->bytes += (uint64_t)n;
	}
	return 0;
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	uint8_t *p;

	while (n < need)
		n *= 2;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static void put_chunk_header(uint8_t *h, unsigned type, unsigned codec,
			     uint32_t stored, uint32_t raw, uint32_t records,
			     uint64_t seq, uint64_t base, uint64_t first,
			     uint64_t last, uint32_t pcrc)
{
	memcpy(h + NSK_CH_OFF_SYNC, NSK_SYNC, NSK_SYNC_LEN);
	nsk_put16(h + NSK_CH_OFF_TYPE, (uint16_t)type);
	nsk_put16(h + NSK_CH_OFF_CODEC, (uint16_t)codec);
	nsk_put32(h + NSK_CH_OFF_STORED, stored);
	nsk_put32(h + NSK_CH_OFF_RAW, raw);
	nsk_put32(h + NSK_CH_OFF_RECORDS, records);
	nsk_put64(h + NSK_CH_OFF_SEQ, seq);
	nsk_put64(h + NSK_CH_OFF_BASE, base);
	nsk_put64(h + NSK_CH_OFF_FIRST, first);
	nsk_put64(h + NSK_CH_OFF_LAST, last);
	nsk_put32(h + NSK_CH_OFF_PCRC, pcrc);
	nsk_put32(h + NSK_CH_OFF_HCRC, nsk_crc32c(0, h, NSK_CH_OFF_HCRC));
}

static int index_add(struct nsk_writer *w, uint64_t offset)
{
	if (w->ix_n == w->ix_cap) {
		size_t cap = w->ix_cap ? w->ix_cap * 2 : 64;
		struct ix_entry *ix = realloc(w->ix, cap * sizeof(*ix));

		if (!ix)
			return -ENOMEM;
		w->ix = ix;
		w->ix_cap = cap;
	}
	w->ix[w->ix_n++] = (struct ix_entry){ offset, w->seq, w->ts.min,
					      w->ts.max, w->records };
	if (w->ts.have_any) {
		if (!w->have_time || w->ts.min < w->all_min)
			w->all_min = w->ts.min;
		if (!w->have_time || w->ts.max > w->all_max)
			w->all_max = w->ts.max;
		w->have_time = 1;
	}
	return 0;
}

int nsk_writer__flush(struct nsk_writer *w)
{
	size_t bound, stored;
	unsigned codec = NSK_CODEC_ZSTD;
	uint64_t offset = w->bytes;
	int err;

	if (w->err)
		return w->err;
	if (!w->records)
		return 0;
	bound = NSK_CH_SIZE + ZSTD_compressBound(w->raw_len);
	if (bound > w->out_cap && grow(&w->out, &w->out_cap, bound))
		return fail(w, -ENOMEM);
	stored = ZSTD_compressCCtx(w->cctx, w->out + NSK_CH_SIZE,
				   w->out_cap - NSK_CH_SIZE, w->raw, w->raw_len,
				   w->level);
	if (ZSTD_isError(stored) || stored >= w->raw_len) {
		/* Incompressible (or zstd refused): store it as it is. */
		codec = NSK_CODEC_NONE;
		stored = w->raw_len;
		memcpy(w->out + NSK_CH_SIZE, w->raw, stored);
	}
	put_chunk_header(w->out, NSK_CHUNK_RECORDS, codec, (uint32_t)stored,
			 (uint32_t)w->raw_len, w->records, w->seq, w->ts.base,
			 w->ts.min, w->ts.max,
			 nsk_crc32c(0, w->out + NSK_CH_SIZE, stored));
	err = write_all(w, w->out, NSK_CH_SIZE + stored);
	if (!err && index_add(w, offset))
		err = fail(w, -ENOMEM);
	w->seq++;
	w->raw_len = 0;
	w->records = 0;
	memset(&w->ts, 0, sizeof(w->ts));
	return err;
}

int nsk_writer__append(struct nsk_writer *w, const struct nsk_record *rec)
{
	const struct nsk_rec_desc *d;
	uint8_t *p, *body, *end;
	size_t bound, blen;

	if (w->err)
		return w->err;
	if (!rec->type || rec->type >= NSK_REC_TYPE_MAX)
		return -EINVAL;
	d = &nsk_rec_descs[rec->type];
	if (!d->fields) /* a type in format.h that format/rectab.c lacks */
		return -EINVAL;
	bound = nsk_codec__bound(d, rec);
	if (bound > NSK_MAX_RECORD_BYTES)
		return -E2BIG;
	/* type (1 byte) + length (up to 4 bytes for 16 MiB) + body */
	if (w->raw_len + 8 + bound > w->raw_cap &&
	    grow(&w->raw, &w->raw_cap, w->raw_len + 8 + bound))
		return fail(w, -ENOMEM);
	if (!w->records)
		w->opened_ns = mono_now();

	p = w->raw + w->raw_len;
	*p++ = (uint8_t)rec->type;
	/* Bodies are mostly shorter than 128 bytes: reserve a one-byte
	 * length and move the body only when it is longer. */
	body = p + 1;
	end = nsk_codec__encode(d, rec, body, &w->ts);
	blen = (size_t)(end - body);
	if (blen < 0x80) {
		*p = (uint8_t)blen;
	} else {
		uint8_t lenbuf[NSK_VARINT_MAX];
		size_t ll = (size_t)(nsk_put_uvar(lenbuf, blen) - lenbuf);

		memmove(p + ll, body, blen);
		memcpy(p, lenbuf, ll);
		end = p + ll + blen;
	}
	w->raw_len = (size_t)(end - w->raw);
	w->records++;
	if (w->raw_len >= w->chunk_bytes)
		return nsk_writer__flush(w);
	return 0;
}

int nsk_writer__tick(struct nsk_writer *w, uint64_t now_monotonic_ns)
{
	if (w->err)
		return w->err;
	if (w->records && (now_monotonic_ns < w->opened_ns ||
			   now_monotonic_ns - w->opened_ns >= w->interval_ns))
		return nsk_writer__flush(w);
	return 0;
}

uint64_t nsk_writer__bytes(const struct nsk_writer *w)
{
	return w->bytes;
}

static int write_index(struct nsk_writer *w)
{
	size_t stored = w->ix_n * NSK_IX_SIZE;
	uint8_t *p;

	if (!w->ix_n)
		return 0;
	if (stored > NSK_MAX_CHUNK_BYTES - NSK_CH_SIZE)
		return 0; /* optional: too long a recording goes without */
	if (NSK_CH_SIZE + stored > w->out_cap &&
	    grow(&w->out, &w->out_cap, NSK_CH_SIZE + stored))
		return fail(w, -ENOMEM);
	p = w->out + NSK_CH_SIZE;
	for (size_t i = 0; i < w->ix_n; i++, p += NSK_IX_SIZE) {
		nsk_put64(p + NSK_IX_OFF_OFFSET, w->ix[i].offset);
		nsk_put64(p + NSK_IX_OFF_SEQ, w->ix[i].seq);
		nsk_put64(p + NSK_IX_OFF_FIRST, w->ix[i].first);
		nsk_put64(p + NSK_IX_OFF_LAST, w->ix[i].last);
		nsk_put32(p + NSK_IX_OFF_RECORDS, w->ix[i].records);
		nsk_put32(p + NSK_IX_OFF_RESERVED, 0);
	}
	put_chunk_header(w->out, NSK_CHUNK_INDEX, NSK_CODEC_NONE,
			 (uint32_t)stored, (uint32_t)stored, (uint32_t)w->ix_n,
			 w->seq, 0, w->all_min, w->all_max,
			 nsk_crc32c(0, w->out + NSK_CH_SIZE, stored));
	w->seq++;
	return write_all(w, w->out, NSK_CH_SIZE + stored);
}

void nsk_writer__free(struct nsk_writer *w)
{
	if (!w)
		return;
	nsk_io__free(w->io);
	ZSTD_freeCCtx(w->cctx);
	free(w->raw);
	free(w->out);
	free(w->ix);
	free(w);
}

int nsk_writer__close(struct nsk_writer *w)
{
	int err;

	if (!w)
		return 0;
	if (!nsk_writer__flush(w))
		write_index(w);
	err = w->err;
	if (w->io && w->io->close) {
		int cerr = w->io->close(w->io->ctx);

		if (!err)
			err = cerr;
		w->io->close = NULL; /* closed: nsk_io__free must not again */
	}
	nsk_writer__free(w);
	return err;
}

static void random_id(uint64_t id[2])
{
	uint8_t b[16];

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) == (ssize_t)sizeof(b)) {
		id[0] = nsk_get64(b);
		id[1] = nsk_get64(b + 8);
	} else {
		/* No entropy yet (early boot): unique enough for an id. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		id[0] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		id[1] = mono_now() ^ ((uint64_t)getpid() << 32);
	}
}

int nsk_writer__new(struct nsk_io *io, const struct nsk_writer_opts *opts,
		    struct nsk_writer **out)
{
	struct nsk_writer *w = calloc(1, sizeof(*w));
	uint8_t h[NSK_FH_SIZE];
	uint64_t id[2] = { 0, 0 };
	int err;

	*out = NULL;
	if (!w) {
		nsk_io__free(io);
		return -ENOMEM;
	}
	w->io = io;
	w->chunk_bytes = opts && opts->chunk_bytes ? opts->chunk_bytes : DEFAULT_CHUNK;
	if (w->chunk_bytes > NSK_MAX_WRITER_CHUNK)
		w->chunk_bytes = NSK_MAX_WRITER_CHUNK;
	w->interval_ns = opts && opts->flush_interval_ns ? opts->flush_interval_ns
							 : DEFAULT_INTERVAL_NS;
	w->level = opts && opts->zstd_level ? opts->zstd_level : DEFAULT_LEVEL;
	if (opts) {
		id[0] = opts->recording_id[0];
		id[1] = opts->recording_id[1];
	}
	if (!id[0] && !id[1])
		random_id(id);

	w->cctx = ZSTD_createCCtx();
	if (!io || !w->cctx ||
	    grow(&w->raw, &w->raw_cap, w->chunk_bytes + 4096)) {
		err = -ENOMEM;
		goto cleanup;
	}

	memset(h, 0, sizeof(h));
	memcpy(h + NSK_FH_OFF_MAGIC, NSK_MAGIC, NSK_MAGIC_LEN);
	nsk_put16(h + NSK_FH_OFF_MAJOR, NSK_FORMAT_MAJOR);
	nsk_put16(h + NSK_FH_OFF_MINOR, NSK_FORMAT_MINOR);
	nsk_put32(h + NSK_FH_OFF_LEN, NSK_FH_SIZE);
	nsk_put64(h + NSK_FH_OFF_COMPAT, 0);
	nsk_put64(h + NSK_FH_OFF_INCOMPAT, 0);
	nsk_put64(h + NSK_FH_OFF_ID, id[0]);
	nsk_put64(h + NSK_FH_OFF_ID + 8, id[1]);
	nsk_put32(h + NSK_FH_OFF_RESERVED, 0);
	nsk_put32(h + NSK_FH_OFF_CRC, nsk_crc32c(0, h, NSK_FH_OFF_CRC));
	err = write_all(w, h, sizeof(h));
	if (err)
		goto cleanup;
	*out = w;
	return 0;

cleanup:
	nsk_writer__free(w);
	return err;
}
