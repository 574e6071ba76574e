/* The byte layout of a .nsk stream, shared by the writer and the reader and
 * by nothing outside format/ (and its tests).  docs/format.md is the spec;
 * tests/unit/test_format_doc.c checks every constant here against its tables,
 * so change both together.
 *
 * Also the record descriptor table: one list of (field kind, offset into
 * struct nsk_record) per record type, which keeps the record codec generic. */
#ifndef NUSKU_FORMAT_WIRE_H
#define NUSKU_FORMAT_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <nusku/format.h>

/* ---- file header ---------------------------------------------------------- */
#define NSK_MAGIC "\x89NSK\r\n\x1a\n"
#define NSK_MAGIC_LEN 8
#define NSK_FH_OFF_MAGIC 0	/* u8[8] */
#define NSK_FH_OFF_MAJOR 8	/* u16 */
#define NSK_FH_OFF_MINOR 10	/* u16 */
#define NSK_FH_OFF_LEN 12	/* u32: header length, this one included */
#define NSK_FH_OFF_COMPAT 16	/* u64 */
#define NSK_FH_OFF_INCOMPAT 24	/* u64 */
#define NSK_FH_OFF_ID 32	/* u8[16] */
#define NSK_FH_OFF_RESERVED 48	/* u32, 0 */
#define NSK_FH_OFF_CRC 52	/* u32: CRC32C of the bytes before it */
#define NSK_FH_SIZE 56
#define NSK_FH_MAX_SIZE 4096	/* a reader refuses longer headers */

/* Flags this code knows; a reader refuses unknown incompat bits. */
#define NSK_COMPAT_KNOWN 0ull
#define NSK_INCOMPAT_KNOWN 0ull

/* ---- chunk header --------------------------------------------------------- */
#define NSK_SYNC "\xabNSKCHK\xbb"
#define NSK_SYNC_LEN 8
#define NSK_CH_OFF_SYNC 0	/* u8[8] */
#define NSK_CH_OFF_TYPE 8	/* u16 */
#define NSK_CH_OFF_CODEC 10	/* u16 */
#define NSK_CH_OFF_STORED 12	/* u32: payload bytes after the header */
#define NSK_CH_OFF_RAW 16	/* u32: payload bytes once decoded */
#define NSK_CH_OFF_RECORDS 20	/* u32 */
#define NSK_CH_OFF_SEQ 24	/* u64 */
#define NSK_CH_OFF_BASE 32	/* u64: base of the time deltas */
#define NSK_CH_OFF_FIRST 40	/* u64: smallest time in the chunk */
#define NSK_CH_OFF_LAST 48	/* u64: largest time in the chunk */
#define NSK_CH_OFF_PCRC 56	/* u32: CRC32C of the stored payload */
#define NSK_CH_OFF_HCRC 60	/* u32: CRC32C of header bytes 0..59 */
#define NSK_CH_SIZE 64

#define NSK_CHUNK_RECORDS 1
#define NSK_CHUNK_INDEX 2

#define NSK_CODEC_NONE 0
#define NSK_CODEC_ZSTD 1

/* Bounds every reader enforces before it allocates anything. */
#define NSK_MAX_CHUNK_BYTES (64u << 20)	 /* stored and raw payload */
#define NSK_MAX_RECORD_BYTES (16u << 20) /* one record body */
#define NSK_MAX_WRITER_CHUNK (16u << 20) /* largest opts.chunk_bytes */

/* Index chunk: one entry per records chunk, fixed little-endian. */
#define NSK_IX_OFF_OFFSET 0	/* u64 */
#define NSK_IX_OFF_SEQ 8	/* u64 */
#define NSK_IX_OFF_FIRST 16	/* u64 */
#define NSK_IX_OFF_LAST 24	/* u64 */
#define NSK_IX_OFF_RECORDS 32	/* u32 */
#define NSK_IX_OFF_RESERVED 36	/* u32, 0 */
#define NSK_IX_SIZE 40

/* ---- record descriptors --------------------------------------------------- */
enum nsk_field_kind {
	NSK_F_U32 = 1, /* uvarint, value < 2^32 */
	NSK_F_U64,     /* uvarint */
	NSK_F_S32,     /* zigzag varint, int32_t */
	NSK_F_S64,     /* zigzag varint, int64_t */
	NSK_F_TIME,    /* zigzag varint of (time - chunk base), uint64_t */
	NSK_F_BYTES,   /* uvarint length, then the bytes (struct nsk_bytes) */
	NSK_F_U64S,    /* uvarint count, then count uvarints (struct nsk_u64s) */
};

struct nsk_field {
	const char *name;
	uint16_t kind;
	uint16_t off; /* offsetof(struct nsk_record, <member>.<field>) */
};

struct nsk_rec_desc {
	const struct nsk_field *fields;
	uint8_t nfields;
	uint8_t nvar;	    /* BYTES and U64S fields */
	uint16_t max_fixed; /* encoded bytes bound, variable parts excluded */
};

/* Indexed by record type; .fields is NULL for numbers not in use. */
extern const struct nsk_rec_desc nsk_rec_descs[NSK_REC_TYPE_MAX];
const char *nsk_field_kind__name(unsigned kind);

/* ---- little-endian and varints ------------------------------------------- */
static inline void nsk_put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void nsk_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static inline void nsk_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static inline uint16_t nsk_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t nsk_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t nsk_get64(const uint8_t *p)
{
	return (uint64_t)nsk_get32(p) | (uint64_t)nsk_get32(p + 4) << 32;
}

#define NSK_VARINT_MAX 10

static inline uint8_t *nsk_put_uvar(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t nsk_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t nsk_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Decodes one uvarint from [*p, end); 0 on success, -1 when it runs past end
 * or past 64 bits. */
static inline int nsk_get_uvar(const uint8_t **pp, const uint8_t *end,
			       uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;

	for (unsigned shift = 0; p < end; shift += 7) {
		uint8_t b = *p++;

		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return 0;
		}
		if (shift == 63)
			return -1;
	}
	return -1;
}

/* ---- CRC32C (Castagnoli, reflected 0x82F63B78, init and final xor ~0) ---- */
uint32_t nsk_crc32c(uint32_t crc, const void *buf, size_t len);

/* ---- record codec (format/codec.c) ---------------------------------------- */

/* Upper bound of the encoded body of rec (type known and valid). */
size_t nsk_codec__bound(const struct nsk_rec_desc *d, const struct nsk_record *rec);

/* Encodes rec's body at p (room: nsk_codec__bound); returns the end.  Time
 * fields are written relative to ts->base; when ts->have_base is 0 the first
 * time field seen becomes the base.  ts->min and ts->max take every time
 * field. */
struct nsk_time_state {
	uint64_t base, min, max;
	int have_base, have_any;
};
uint8_t *nsk_codec__encode(const struct nsk_rec_desc *d,
			   const struct nsk_record *rec, uint8_t *p,
			   struct nsk_time_state *ts);

/* Scratch arrays for U64S fields, reused from record to record. */
struct nsk_u64_scratch {
	uint64_t *v[4];
	size_t cap[4];
};
void nsk_u64_scratch__release(struct nsk_u64_scratch *s);

/* Decodes a body into rec (zeroed first: missing trailing fields read as 0,
 * extra trailing bytes are ignored).  0, -EBADMSG on a malformed body,
 * -ENOMEM. */
int nsk_codec__decode(const struct nsk_rec_desc *d, const uint8_t *p,
		      size_t len, uint64_t base, struct nsk_record *rec,
		      struct nsk_u64_scratch *scratch);

#endif
