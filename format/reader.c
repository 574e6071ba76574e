/* The .nsk reader: a streaming state machine over any byte source.  It keeps
 * the bytes it has read but not consumed in one buffer, so it can stop at
 * any byte (a pipe with nothing more yet, a file still being written) and
 * resume there.  Each chunk is checked whole (header CRC, payload CRC,
 * decoding, record framing) before any of its records is returned; a bad one
 * is reported with its offset and skipped, and the reader finds the next
 * chunk by its sync marker.  Every length is bounded before it is used to
 * allocate. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format/wire.h"

/* The input buffer starts at READ_BLOCK and doubles while a chunk (plus
 * READ_SLACK of read-ahead) does not fit. */
#define READ_BLOCK (16u << 10)
#define READ_SLACK (4u << 10)
#define MAX_UNKNOWN_REPORTS 8

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* Fuzzers cannot forge checksums: let them reach the decoders. */
#define CRC_OK(stored, computed) ((void)(stored), (void)(computed), 1)
#else
#define CRC_OK(stored, computed) ((stored) == (computed))
#endif

struct nsk_reader {
	struct nsk_io *io;
	struct nsk_reader_opts opts;
	struct nsk_file_info info;
	struct nsk_reader_stats stats;
	int have_header;
	int eof;    /* the source said 0 (non-follow: final) */
	int done;   /* returned end of stream */
	int failed; /* a fatal error: every call returns it */

	/* Unconsumed input: in[pos, len); in[0] is at stream offset base. */
	uint8_t *in;
	size_t pos, len, cap;
	uint64_t base;

	/* Garbage being skipped while looking for a sync marker. */
	int skipping;
	uint64_t skip_start;

	/* The chunk whose records are being returned. */
	uint8_t *raw;
	size_t raw_cap;
	const uint8_t *rp, *rend;
	uint32_t left, index_in_chunk;
	uint64_t chunk_off, chunk_base;
	ZSTD_DCtx *dctx;
	struct nsk_u64_scratch scratch;

	uint64_t next_seq;
	int have_seq;
	unsigned unknown_reports;
	char msg[256];
};

static void problem(struct nsk_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct nsk_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	if (r->opts.on_problem)
		r->opts.on_problem(r->opts.ctx, r->msg);
}

static int fatal(struct nsk_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fatal(struct nsk_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->failed = err;
	return err;
}

/* Makes in[pos, pos+need) available.  1: there; 0: the source ended first;
 * -EAGAIN: nothing more now; other negative: read error. */
static int fill(struct nsk_reader *r, size_t need)
{
	while (r->len - r->pos < need) {
		ssize_t n;

		if (r->eof && !r->opts.follow)
			return 0;
		if (r->pos && r->pos == r->len) {
			r->base += r->pos;
			r->pos = r->len = 0;
		}
		if (r->pos + need > r->cap || r->len == r->cap) {
			/* Slide the live bytes down, then grow if still short. */
			if (r->pos) {
				memmove(r->in, r->in + r->pos, r->len - r->pos);
				r->base += r->pos;
				r->len -= r->pos;
				r->pos = 0;
			}
			if (need + READ_SLACK > r->cap) {
				size_t cap = r->cap ? r->cap : READ_BLOCK;
				uint8_t *p;

				while (cap < need + READ_SLACK)
					cap *= 2;
				p = realloc(r->in, cap);
				if (!p)
					return fatal(r, -ENOMEM, "out of memory");
				r->in = p;
				r->cap = cap;
			}
		}
		n = r->io->read(r->io->ctx, r->in + r->len, r->cap - r->len);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN)
			return -EAGAIN;
		if (n < 0)
			return fatal(r, (int)n, "read error at offset %" PRIu64 ": %s",
				     r->base + r->len, strerror((int)-n));
		if ((size_t)n > r->cap - r->len)
			return fatal(r, -EIO, "read error at offset %" PRIu64
					      ": the source returned more than asked",
				     r->base + r->len);
		if (n == 0) {
			r->eof = 1;
			return 0;
		}
		r->eof = 0;
		r->stats.bytes += (uint64_t)n;
		r->len += (size_t)n;
	}
	return 1;
}

static uint64_t here(const struct nsk_reader *r)
{
	return r->base + r->pos;
}

static int read_header(struct nsk_reader *r)
{
	const uint8_t *h;
	uint32_t major, minor, hlen, crc;
	int rc;

	rc = fill(r, NSK_FH_OFF_LEN + 4);
	if (rc < 0)
		return rc;
	h = r->in + r->pos;
	if (memcmp(h, NSK_MAGIC, r->len - r->pos < NSK_MAGIC_LEN ? r->len - r->pos
								: NSK_MAGIC_LEN))
		return fatal(r, -EPROTO, "not a .nsk file (bad magic)");
	if (!rc && r->opts.follow)
		return -EAGAIN;
	if (!rc)
		return fatal(r, -EPROTO, "not a .nsk file (%zu bytes, too short for a header)",
			     r->len - r->pos);
	major = nsk_get16(h + NSK_FH_OFF_MAJOR);
	minor = nsk_get16(h + NSK_FH_OFF_MINOR);
	hlen = nsk_get32(h + NSK_FH_OFF_LEN);
	r->info.major = major;
	r->info.minor = minor;
	if (major != NSK_FORMAT_MAJOR)
		return fatal(r, -ENOTSUP,
			     "file is .nsk format %u.%u; this nusku reads format %d.x (up to %d.%d)",
			     major, minor, NSK_FORMAT_MAJOR, NSK_FORMAT_MAJOR,
			     NSK_FORMAT_MINOR);
	if (hlen < NSK_FH_SIZE || hlen > NSK_FH_MAX_SIZE)
		return fatal(r, -EPROTO, "not a .nsk file (header length %u)", hlen);
	rc = fill(r, hlen);
	if (rc < 0)
		return rc;
	if (!rc && r->opts.follow)
		return -EAGAIN;
	if (!rc)
		return fatal(r, -EPROTO, "not a .nsk file (%zu bytes, too short for a header)",
			     r->len - r->pos);
	h = r->in + r->pos;
	crc = nsk_get32(h + hlen - 4);
	if (!CRC_OK(crc, nsk_crc32c(0, h, hlen - 4)))
		return fatal(r, -EPROTO, "not a .nsk file (header checksum mismatch)");
	r->info.compat_flags = nsk_get64(h + NSK_FH_OFF_COMPAT);
	r->info.incompat_flags = nsk_get64(h + NSK_FH_OFF_INCOMPAT);
	r->info.recording_id[0] = nsk_get64(h + NSK_FH_OFF_ID);
	r->info.recording_id[1] = nsk_get64(h + NSK_FH_OFF_ID + 8);
	if (r->info.incompat_flags & ~NSK_INCOMPAT_KNOWN)
		return fatal(r, -ENOTSUP,
			     "file needs features this nusku lacks (incompat flags 0x%" PRIx64
			     ", known 0x%llx)",
			     r->info.incompat_flags, (unsigned long long)NSK_INCOMPAT_KNOWN);
	r->pos += hlen;
	r->have_header = 1;
	return 0;
}

/* Finds the next sync marker at or after in[pos]; keeps the last bytes
 * that could start one. */
static void scan(struct nsk_reader *r)
{
	const uint8_t *p = r->in + r->pos, *end = r->in + r->len;

	if (!r->skipping) {
		r->skipping = 1;
		r->skip_start = here(r);
	}
	while (p + NSK_SYNC_LEN <= end) {
		p = memchr(p, NSK_SYNC[0], (size_t)(end - p - NSK_SYNC_LEN + 1));
		if (!p)
			break;
		if (!memcmp(p, NSK_SYNC, NSK_SYNC_LEN)) {
			r->pos = (size_t)(p - r->in);
			return;
		}
		p++;
	}
	/* None here: keep only the bytes that could begin one. */
	if (r->len - r->pos > NSK_SYNC_LEN - 1)
		r->pos = r->len - (NSK_SYNC_LEN - 1);
}

static void end_skip(struct nsk_reader *r, uint64_t to)
{
	if (!r->skipping)
		return;
	r->skipping = 0;
	r->stats.corrupt_chunks++;
	problem(r, "offset %" PRIu64 ": %" PRIu64
		   " bytes without a valid chunk header skipped",
		r->skip_start, to - r->skip_start);
}

/* The source ended (or has nothing now) before a whole chunk. */
static int at_end(struct nsk_reader *r, int rc)
{
	size_t left = r->len - r->pos;

	if (rc < 0)
		return rc;
	if (r->opts.follow && !r->stats.ended)
		return -EAGAIN;
	if (r->opts.follow) {
		/* END was read and the writer may still be writing its index:
		 * what follows END is no loss, so no truncation to report. */
		r->done = 1;
		return 0;
	}
	if (r->skipping) {
		r->pos = r->len;
		end_skip(r, here(r));
	} else if (left) {
		const uint8_t *h = r->in + r->pos;

		r->stats.truncated_bytes += left;
		if (left >= NSK_CH_SIZE)
			problem(r, "truncated: last %zu bytes at offset %" PRIu64
				   " do not form a whole chunk (its header says %u + %u bytes)",
				left, here(r), NSK_CH_SIZE,
				nsk_get32(h + NSK_CH_OFF_STORED));
		else
			problem(r, "truncated: last %zu bytes at offset %" PRIu64
				   " do not form a whole chunk (a chunk header alone is %u bytes)",
				left, here(r), NSK_CH_SIZE);
		r->pos = r->len;
	}
	r->done = 1;
	return 0;
}

/* Checks the framing of a decoded payload: exactly `records` records that
 * end exactly at its end.  Returns the index of the first bad one, or -1. */
static long check_framing(const uint8_t *p, size_t len, uint32_t records)
{
	const uint8_t *end = p + len;
	uint64_t type, blen;
	uint32_t n;

	for (n = 0; p < end; n++) {
		if (nsk_get_uvar(&p, end, &type) || nsk_get_uvar(&p, end, &blen) ||
		    blen > (uint64_t)(end - p) || blen > NSK_MAX_RECORD_BYTES)
			return n;
		p += blen;
	}
	return n == records ? -1 : (long)n;
}

static int enter_chunk(struct nsk_reader *r, const uint8_t *h, const uint8_t *payload,
		       struct nsk_chunk_info *ci)
{
	const uint8_t *raw = payload;
	long bad;

	if (ci->codec == NSK_CODEC_ZSTD) {
		size_t n;

		if (ci->raw_len > r->raw_cap) {
			uint8_t *p = realloc(r->raw, ci->raw_len);

			if (!p)
				return fatal(r, -ENOMEM, "out of memory");
			r->raw = p;
			r->raw_cap = ci->raw_len;
		}
		if (!r->dctx && !(r->dctx = ZSTD_createDCtx()))
			return fatal(r, -ENOMEM, "out of memory");
		n = ZSTD_decompressDCtx(r->dctx, r->raw, r->raw_cap, payload,
					ci->stored_len);
		if (ZSTD_isError(n) || n != ci->raw_len) {
			r->stats.corrupt_chunks++;
			problem(r, "chunk at offset %" PRIu64 ": bad zstd data (%s); skipped",
				ci->offset,
				ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong length");
			return 0;
		}
		/* raw_len 0 leaves r->raw NULL: point at something. */
		raw = r->raw ? r->raw : payload;
	} else if (ci->codec != NSK_CODEC_NONE || ci->raw_len != ci->stored_len) {
		r->stats.skipped_chunks++;
		problem(r, "chunk at offset %" PRIu64 ": unknown codec %u; skipped",
			ci->offset, ci->codec);
		return 0;
	}
	bad = check_framing(raw, ci->raw_len, ci->records);
	if (bad >= 0) {
		r->stats.corrupt_chunks++;
		problem(r, "chunk at offset %" PRIu64 ": bad record framing at record %ld; skipped",
			ci->offset, bad);
		return 0;
	}
	r->rp = raw;
	r->rend = raw + ci->raw_len;
	r->left = ci->records;
	r->index_in_chunk = 0;
	r->chunk_off = ci->offset;
	r->chunk_base = nsk_get64(h + NSK_CH_OFF_BASE);
	return 1;
}

/* Moves to the next records chunk.  1: entered; 0: end; negative: -EAGAIN
 * or fatal. */
static int next_chunk(struct nsk_reader *r)
{
	for (;;) {
		struct nsk_chunk_info ci;
		const uint8_t *h;
		uint32_t stored, raw;
		int rc;

		rc = fill(r, NSK_CH_SIZE);
		if (rc <= 0)
			return at_end(r, rc);
		h = r->in + r->pos;
		if (memcmp(h, NSK_SYNC, NSK_SYNC_LEN)) {
			scan(r);
			continue;
		}
		stored = nsk_get32(h + NSK_CH_OFF_STORED);
		raw = nsk_get32(h + NSK_CH_OFF_RAW);
		if (!CRC_OK(nsk_get32(h + NSK_CH_OFF_HCRC), nsk_crc32c(0, h, NSK_CH_OFF_HCRC)) ||
		    stored > NSK_MAX_CHUNK_BYTES || raw > NSK_MAX_CHUNK_BYTES) {
			/* Not a chunk header after all (or a damaged one):
			 * its lengths cannot be trusted, so look further. */
			if (!r->skipping) {
				r->skipping = 1;
				r->skip_start = here(r);
			}
			r->pos++;
			scan(r);
			continue;
		}
		rc = fill(r, NSK_CH_SIZE + (size_t)stored);
		if (rc <= 0)
			return at_end(r, rc);
		h = r->in + r->pos;
		end_skip(r, here(r));

		ci.offset = here(r);
		ci.type = nsk_get16(h + NSK_CH_OFF_TYPE);
		ci.codec = nsk_get16(h + NSK_CH_OFF_CODEC);
		ci.seq = nsk_get64(h + NSK_CH_OFF_SEQ);
		ci.stored_len = stored;
		ci.raw_len = raw;
		ci.records = nsk_get32(h + NSK_CH_OFF_RECORDS);
		ci.first_time = nsk_get64(h + NSK_CH_OFF_FIRST);
		ci.last_time = nsk_get64(h + NSK_CH_OFF_LAST);
		r->pos += NSK_CH_SIZE + stored;

		if (r->have_seq && ci.seq != r->next_seq) {
			r->stats.seq_gaps += ci.seq > r->next_seq ? ci.seq - r->next_seq : 1;
			problem(r, "chunk at offset %" PRIu64 ": sequence %" PRIu64
				   " where %" PRIu64 " was expected",
				ci.offset, ci.seq, r->next_seq);
		}
		r->have_seq = 1;
		r->next_seq = ci.seq + 1;

		if (!CRC_OK(nsk_get32(h + NSK_CH_OFF_PCRC),
			    nsk_crc32c(0, h + NSK_CH_SIZE, stored))) {
			r->stats.corrupt_chunks++;
			problem(r, "chunk at offset %" PRIu64 ": checksum mismatch; skipped",
				ci.offset);
			continue;
		}
		if (ci.type != NSK_CHUNK_RECORDS) {
			if (ci.type == NSK_CHUNK_INDEX) {
				r->stats.chunks++;
				if (r->opts.on_chunk)
					r->opts.on_chunk(r->opts.ctx, &ci);
			} else {
				r->stats.skipped_chunks++;
				problem(r, "chunk at offset %" PRIu64 ": unknown type %u; skipped",
					ci.offset, ci.type);
			}
			continue;
		}
		rc = enter_chunk(r, h, h + NSK_CH_SIZE, &ci);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		r->stats.chunks++;
		if (r->opts.on_chunk)
			r->opts.on_chunk(r->opts.ctx, &ci);
		return 1;
	}
}

int nsk_reader__next(struct nsk_reader *r, struct nsk_record *rec)
{
	int rc;

	if (r->failed)
		return r->failed;
	if (!r->have_header) {
		rc = read_header(r);
		if (rc == -EAGAIN || (rc == 0 && !r->have_header))
			return -EAGAIN;
		if (rc < 0)
			return rc;
	}
	for (;;) {
		uint64_t type = 0, blen = 0;
		const uint8_t *body;

		if (!r->left) {
			if (r->done)
				return 0;
			rc = next_chunk(r);
			if (rc <= 0)
				return rc;
			continue;
		}
		/* Framing was checked when the chunk was entered. */
		nsk_get_uvar(&r->rp, r->rend, &type);
		nsk_get_uvar(&r->rp, r->rend, &blen);
		body = r->rp;
		r->rp += blen;
		r->left--;
		r->index_in_chunk++;
		if (!type || type >= NSK_REC_TYPE_MAX || !nsk_rec_descs[type].fields) {
			r->stats.skipped_records++;
			if (r->unknown_reports < MAX_UNKNOWN_REPORTS) {
				r->unknown_reports++;
				problem(r, "chunk at offset %" PRIu64 ": record of unknown type %"
					   PRIu64 " skipped",
					r->chunk_off, type);
			}
			continue;
		}
		rec->type = (uint32_t)type;
		rc = nsk_codec__decode(&nsk_rec_descs[type], body, (size_t)blen,
				       r->chunk_base, rec, &r->scratch);
		if (rc == -ENOMEM)
			return fatal(r, rc, "out of memory");
		if (rc) {
			r->stats.skipped_records++;
			problem(r, "chunk at offset %" PRIu64 ": record %u (%s) malformed; skipped",
				r->chunk_off, r->index_in_chunk - 1,
				nsk_rec_type__name((uint32_t)type));
			continue;
		}
		r->stats.records++;
		if (type == NSK_REC_END)
			r->stats.ended = 1;
		return 1;
	}
}

int nsk_reader__new(struct nsk_io *io, const struct nsk_reader_opts *opts,
		    struct nsk_reader **out)
{
	struct nsk_reader *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r) {
		nsk_io__free(io);
		return -ENOMEM;
	}
	r->io = io;
	if (opts)
		r->opts = *opts;
	if (!io) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = read_header(r);
	/* Following a stream whose header has not arrived yet: the first
	 * nsk_reader__next calls return -EAGAIN until it does. */
	if (err == -EAGAIN)
		err = 0;
	if (err)
		goto cleanup;
	*out = r;
	return 0;

cleanup:
	if (err == -EPROTO && !r->msg[0])
		snprintf(r->msg, sizeof(r->msg), "not a .nsk file");
	if (r->msg[0] && r->opts.on_problem)
		r->opts.on_problem(r->opts.ctx, r->msg);
	nsk_reader__free(r);
	return err;
}

const struct nsk_file_info *nsk_reader__info(const struct nsk_reader *r)
{
	return &r->info;
}

const struct nsk_reader_stats *nsk_reader__stats(const struct nsk_reader *r)
{
	return &r->stats;
}

const char *nsk_reader__error(const struct nsk_reader *r)
{
	return r->msg;
}

void nsk_reader__free(struct nsk_reader *r)
{
	if (!r)
		return;
	nsk_io__free(r->io);
	ZSTD_freeDCtx(r->dctx);
	nsk_u64_scratch__release(&r->scratch);
	free(r->in);
	free(r->raw);
	free(r);
}
