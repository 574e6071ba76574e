/* docs/format.md against the code: parses the tables and hex dumps the
 * document marks with <!-- table:NAME --> and <!-- hex:NAME --> and checks
 * them against format/wire.h, the record descriptor table and the bytes the
 * writer and codec produce.  Also checks that each record's descriptor
 * covers every member of its struct in include/nusku/format.h, so a field
 * added to the contract cannot be silently dropped on the wire. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/wire.h"
#include "tests/unit/fmt_testlib.h"

#ifndef NSK_SRCDIR
#define NSK_SRCDIR "."
#endif

#define MAXROWS 64
#define MAXCOLS 6

struct table {
	int nrows;
	char cell[MAXROWS][MAXCOLS][160];
};

static char *doc;

static void load_doc(void)
{
	const char *dir = getenv("TOP_SRCDIR");
	char path[1024];
	FILE *f;
	long n;

	if (doc)
		return;
	snprintf(path, sizeof(path), "%s/docs/format.md", dir ? dir : NSK_SRCDIR);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	doc = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(doc, 1, (size_t)n, f), (size_t)n);
	fclose(f);
}

static void trim_cell(char *dst, const char *s, size_t n, size_t cap)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= 2 && s[0] == '`' && s[n - 1] == '`')
		s++, n -= 2;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

/* The table after "<!-- table:NAME -->", header and separator rows dropped. */
static void get_table(const char *name, struct table *t)
{
	char marker[128];
	const char *p;
	int line = 0;

	load_doc();
	snprintf(marker, sizeof(marker), "<!-- table:%s -->", name);
	p = strstr(doc, marker);
	ck_assert_msg(p != NULL, "docs/format.md has no %s", marker);
	p = strchr(p, '\n') + 1;
	memset(t, 0, sizeof(*t));
	while (*p == '|') {
		const char *eol = strchr(p, '\n'), *c = p + 1;
		int col = 0;

		if (!eol)
			eol = p + strlen(p);
		if (line++ >= 2) {
			ck_assert_int_lt(t->nrows, MAXROWS);
			while (c < eol && col < MAXCOLS) {
				const char *bar = memchr(c, '|', (size_t)(eol - c));

				if (!bar)
					break;
				trim_cell(t->cell[t->nrows][col++], c, (size_t)(bar - c), 160);
				c = bar + 1;
			}
			t->nrows++;
		}
		p = *eol ? eol + 1 : eol;
	}
	ck_assert_msg(t->nrows > 0, "%s is empty", marker);
}

/* The bytes of the code block after "<!-- hex:NAME -->". */
static size_t get_hex(const char *name, uint8_t *out, size_t cap)
{
	char marker[128];
	const char *p, *end;
	size_t n = 0;

	load_doc();
	snprintf(marker, sizeof(marker), "<!-- hex:%s -->", name);
	p = strstr(doc, marker);
	ck_assert_msg(p != NULL, "docs/format.md has no %s", marker);
	p = strstr(p, "```\n");
	ck_assert_ptr_nonnull(p);
	p += 4;
	end = strstr(p, "```");
	ck_assert_ptr_nonnull(end);
	while (p < end) {
		unsigned v;
		int used;

		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		ck_assert_msg(sscanf(p, "%2x%n", &v, &used) == 1 && used == 2,
			      "%s: bad hex near '%.8s'", marker, p);
		ck_assert_uint_lt(n, cap);
		out[n++] = (uint8_t)v;
		p += 2;
	}
	return n;
}

static size_t parse_hex_bytes(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned v;
	int used;

	while (*s && sscanf(s, " %2x%n", &v, &used) == 1) {
		ck_assert_uint_lt(n, cap);
		out[n++] = (uint8_t)v;
		s += used;
	}
	return n;
}

/* ---- layouts ---------------------------------------------------------------- */

struct slot {
	const char *field;
	unsigned off, size;
};

static void check_layout(const char *name, const struct slot *code, size_t n,
			 size_t total)
{
	struct table t;
	unsigned pos = 0;

	get_table(name, &t);
	ck_assert_msg((size_t)t.nrows == n, "%s: doc has %d rows, code %zu", name, t.nrows, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(!strcmp(t.cell[i][3], code[i].field),
			      "%s row %zu: doc field '%s', code '%s'", name, i,
			      t.cell[i][3], code[i].field);
		ck_assert_msg((unsigned)atoi(t.cell[i][0]) == code[i].off,
			      "%s.%s: doc offset %s, code %u", name, code[i].field,
			      t.cell[i][0], code[i].off);
		ck_assert_msg((unsigned)atoi(t.cell[i][1]) == code[i].size,
			      "%s.%s: doc size %s, code %u", name, code[i].field,
			      t.cell[i][1], code[i].size);
		ck_assert_uint_eq(code[i].off, pos); /* no gaps, no overlaps */
		pos += code[i].size;
	}
	ck_assert_uint_eq(pos, total);
}

START_TEST(test_file_header)
{
	static const struct slot s[] = {
		{ "magic", NSK_FH_OFF_MAGIC, NSK_MAGIC_LEN },
		{ "major", NSK_FH_OFF_MAJOR, 2 },
		{ "minor", NSK_FH_OFF_MINOR, 2 },
		{ "header_len", NSK_FH_OFF_LEN, 4 },
		{ "compat_flags", NSK_FH_OFF_COMPAT, 8 },
		{ "incompat_flags", NSK_FH_OFF_INCOMPAT, 8 },
		{ "recording_id", NSK_FH_OFF_ID, 16 },
		{ "reserved", NSK_FH_OFF_RESERVED, 4 },
		{ "header_crc", NSK_FH_OFF_CRC, 4 },
	};
	check_layout("file-header", s, sizeof(s) / sizeof(s[0]), NSK_FH_SIZE);
}
END_TEST

START_TEST(test_chunk_header)
{
	static const struct slot s[] = {
		{ "sync", NSK_CH_OFF_SYNC, NSK_SYNC_LEN },
		{ "type", NSK_CH_OFF_TYPE, 2 },
		{ "codec", NSK_CH_OFF_CODEC, 2 },
		{ "stored_len", NSK_CH_OFF_STORED, 4 },
		{ "raw_len", NSK_CH_OFF_RAW, 4 },
		{ "records", NSK_CH_OFF_RECORDS, 4 },
		{ "seq", NSK_CH_OFF_SEQ, 8 },
		{ "base_time", NSK_CH_OFF_BASE, 8 },
		{ "first_time", NSK_CH_OFF_FIRST, 8 },
		{ "last_time", NSK_CH_OFF_LAST, 8 },
		{ "payload_crc", NSK_CH_OFF_PCRC, 4 },
		{ "header_crc", NSK_CH_OFF_HCRC, 4 },
	};
	check_layout("chunk-header", s, sizeof(s) / sizeof(s[0]), NSK_CH_SIZE);
}
END_TEST

START_TEST(test_index_entry)
{
	static const struct slot s[] = {
		{ "offset", NSK_IX_OFF_OFFSET, 8 },
		{ "seq", NSK_IX_OFF_SEQ, 8 },
		{ "first_time", NSK_IX_OFF_FIRST, 8 },
		{ "last_time", NSK_IX_OFF_LAST, 8 },
		{ "records", NSK_IX_OFF_RECORDS, 4 },
		{ "reserved", NSK_IX_OFF_RESERVED, 4 },
	};
	check_layout("index-entry", s, sizeof(s) / sizeof(s[0]), NSK_IX_SIZE);
}
END_TEST

START_TEST(test_constants)
{
	static const struct {
		const char *name;
		unsigned long long v;
	} nums[] = {
		{ "FORMAT_MAJOR", NSK_FORMAT_MAJOR },
		{ "FORMAT_MINOR", NSK_FORMAT_MINOR },
		{ "FILE_HEADER_SIZE", NSK_FH_SIZE },
		{ "FILE_HEADER_MAX", NSK_FH_MAX_SIZE },
		{ "CHUNK_HEADER_SIZE", NSK_CH_SIZE },
		{ "CHUNK_RECORDS", NSK_CHUNK_RECORDS },
		{ "CHUNK_INDEX", NSK_CHUNK_INDEX },
		{ "CODEC_NONE", NSK_CODEC_NONE },
		{ "CODEC_ZSTD", NSK_CODEC_ZSTD },
		{ "MAX_CHUNK_BYTES", NSK_MAX_CHUNK_BYTES },
		{ "MAX_RECORD_BYTES", NSK_MAX_RECORD_BYTES },
		{ "INDEX_ENTRY_SIZE", NSK_IX_SIZE },
	};
	struct table t;
	uint8_t b[16];
	unsigned found = 0;

	get_table("constants", &t);
	for (int i = 0; i < t.nrows; i++) {
		const char *n = t.cell[i][0], *v = t.cell[i][1];

		if (!strcmp(n, "MAGIC")) {
			ck_assert_uint_eq(parse_hex_bytes(v, b, sizeof(b)), NSK_MAGIC_LEN);
			ck_assert_int_eq(memcmp(b, NSK_MAGIC, NSK_MAGIC_LEN), 0);
			found++;
			continue;
		}
		if (!strcmp(n, "SYNC")) {
			ck_assert_uint_eq(parse_hex_bytes(v, b, sizeof(b)), NSK_SYNC_LEN);
			ck_assert_int_eq(memcmp(b, NSK_SYNC, NSK_SYNC_LEN), 0);
			found++;
			continue;
		}
		for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
			if (!strcmp(n, nums[k].name)) {
				ck_assert_msg(strtoull(v, NULL, 0) == nums[k].v,
					      "%s: doc %s, code %llu", n, v, nums[k].v);
				found++;
				n = NULL;
				break;
			}
		ck_assert_msg(n == NULL, "doc constant %s unknown to the test", n);
	}
	ck_assert_uint_eq(found, 2 + sizeof(nums) / sizeof(nums[0]));
}
END_TEST

START_TEST(test_crc_check_value)
{
	ck_assert_uint_eq(nsk_crc32c(0, "123456789", 9), 0xE3069283u);
	load_doc();
	ck_assert_ptr_nonnull(strstr(doc, "`0xE3069283`"));
	ck_assert_ptr_nonnull(strstr(doc, "`0x82F63B78`"));
}
END_TEST

/* ---- records ---------------------------------------------------------------- */

START_TEST(test_record_types)
{
	struct table t;

	get_table("record-types", &t);
	ck_assert_int_eq(t.nrows, NSK_REC_TYPE_MAX - 1);
	for (int i = 0; i < t.nrows; i++) {
		unsigned type = (unsigned)atoi(t.cell[i][0]);

		ck_assert_uint_eq(type, (unsigned)i + 1);
		ck_assert_str_eq(t.cell[i][1], nsk_rec_type__name(type));
	}
}
END_TEST

START_TEST(test_field_kinds)
{
	struct table t;

	get_table("field-kinds", &t);
	ck_assert_int_eq(t.nrows, NSK_F_U64S);
	for (int i = 0; i < t.nrows; i++)
		ck_assert_str_eq(t.cell[i][0], nsk_field_kind__name((unsigned)i + 1));
}
END_TEST

START_TEST(test_record_fields)
{
	for (uint32_t type = 1; type < NSK_REC_TYPE_MAX; type++) {
		const struct nsk_rec_desc *d = &nsk_rec_descs[type];
		char name[64];
		struct table t;

		snprintf(name, sizeof(name), "record:%s", nsk_rec_type__name(type));
		get_table(name, &t);
		ck_assert_msg(t.nrows == d->nfields, "%s: doc %d fields, code %u", name,
			      t.nrows, d->nfields);
		for (unsigned i = 0; i < d->nfields; i++) {
			ck_assert_uint_eq((unsigned)atoi(t.cell[i][0]), i);
			ck_assert_msg(!strcmp(t.cell[i][1], d->fields[i].name),
				      "%s field %u: doc '%s', code '%s'", name, i,
				      t.cell[i][1], d->fields[i].name);
			ck_assert_msg(!strcmp(t.cell[i][2], nsk_field_kind__name(d->fields[i].kind)),
				      "%s.%s: doc kind '%s', code '%s'", name, d->fields[i].name,
				      t.cell[i][2], nsk_field_kind__name(d->fields[i].kind));
		}
	}
}
END_TEST

/* Every member of each struct nsk_rec_* is in its descriptor: laid out by
 * the C rules, the descriptor's fields leave no gap bigger than alignment
 * padding and reach the end of the struct. */
START_TEST(test_descriptors_cover_structs)
{
	static const size_t sizes[NSK_REC_TYPE_MAX] = {
		[NSK_REC_META] = sizeof(struct nsk_rec_meta),
		[NSK_REC_CLOCK] = sizeof(struct nsk_rec_clock),
		[NSK_REC_STRING] = sizeof(struct nsk_rec_string),
		[NSK_REC_PROCESS] = sizeof(struct nsk_rec_process),
		[NSK_REC_THREAD] = sizeof(struct nsk_rec_thread),
		[NSK_REC_EXIT] = sizeof(struct nsk_rec_exit),
		[NSK_REC_MAPPING] = sizeof(struct nsk_rec_mapping),
		[NSK_REC_FRAME] = sizeof(struct nsk_rec_frame),
		[NSK_REC_STACK] = sizeof(struct nsk_rec_stack),
		[NSK_REC_SAMPLE] = sizeof(struct nsk_rec_sample),
		[NSK_REC_ALLOC] = sizeof(struct nsk_rec_alloc),
		[NSK_REC_FREE] = sizeof(struct nsk_rec_free),
		[NSK_REC_OFFCPU] = sizeof(struct nsk_rec_offcpu),
		[NSK_REC_SYSCALL_STAT] = sizeof(struct nsk_rec_syscall_stat),
		[NSK_REC_SYSCALL_SLOW] = sizeof(struct nsk_rec_syscall_slow),
		[NSK_REC_CONN] = sizeof(struct nsk_rec_conn),
		[NSK_REC_RETRANSMIT] = sizeof(struct nsk_rec_retransmit),
		[NSK_REC_LOSS] = sizeof(struct nsk_rec_loss),
		[NSK_REC_END] = sizeof(struct nsk_rec_end),
		[NSK_REC_SYSCALL_PATH] = sizeof(struct nsk_rec_syscall_path),
		[NSK_REC_SYSCALL_NAME] = sizeof(struct nsk_rec_syscall_name),
	};
	const unsigned u0 = offsetof(struct nsk_record, meta);

	for (uint32_t type = 1; type < NSK_REC_TYPE_MAX; type++) {
		const struct nsk_rec_desc *d = &nsk_rec_descs[type];
		unsigned order[32], nvar = 0, pos = 0;

		ck_assert_ptr_nonnull(d->fields);
		ck_assert_uint_le(d->nfields, 32);
		for (unsigned i = 0; i < d->nfields; i++)
			order[i] = i;
		/* by offset: wire order need not be memory order */
		for (unsigned i = 1; i < d->nfields; i++)
			for (unsigned j = i; j > 0 && d->fields[order[j]].off <
							   d->fields[order[j - 1]].off; j--) {
				unsigned x = order[j];

				order[j] = order[j - 1];
				order[j - 1] = x;
			}
		for (unsigned i = 0; i < d->nfields; i++) {
			const struct nsk_field *f = &d->fields[order[i]];
			unsigned size, align, off = f->off - u0;

			switch (f->kind) {
			case NSK_F_U32:
			case NSK_F_S32:
				size = align = 4;
				break;
			case NSK_F_BYTES:
				size = sizeof(struct nsk_bytes), align = 8;
				nvar++;
				break;
			case NSK_F_U64S:
				size = sizeof(struct nsk_u64s), align = 8;
				nvar++;
				break;
			default:
				size = align = 8;
			}
			pos = (pos + align - 1) / align * align;
			ck_assert_msg(off == pos, "%s: a member at offset %u is not in the descriptor "
				      "(next described: %s at %u)", nsk_rec_type__name(type), pos,
				      f->name, off);
			pos += size;
		}
		pos = (pos + 7) / 8 * 8;
		ck_assert_msg(pos == sizes[type], "%s: struct is %zu bytes, descriptor covers %u",
			      nsk_rec_type__name(type), sizes[type], pos);
		ck_assert_uint_eq(d->nvar, nvar);
		ck_assert_uint_eq(d->max_fixed, 10u * d->nfields);
	}
}
END_TEST

/* ---- bytes ------------------------------------------------------------------ */

static void example_sample(struct nsk_record *r, uint64_t time, uint64_t weight)
{
	memset(r, 0, sizeof(*r));
	r->type = NSK_REC_SAMPLE;
	r->sample.time = time;
	r->sample.pid = 42;
	r->sample.tid = 43;
	r->sample.cpu = 1;
	r->sample.stack_id = 7;
	r->sample.weight = weight;
}

START_TEST(test_hex_record)
{
	struct nsk_time_state ts = { .base = 1000000000, .have_base = 1 };
	struct nsk_record r;
	uint8_t doc_bytes[64], code[64], *e;
	size_t n = get_hex("record-sample", doc_bytes, sizeof(doc_bytes));

	example_sample(&r, 1000000500, 1000000);
	code[0] = NSK_REC_SAMPLE;
	e = nsk_codec__encode(&nsk_rec_descs[NSK_REC_SAMPLE], &r, code + 2, &ts);
	code[1] = (uint8_t)(e - (code + 2));
	ck_assert_uint_eq(n, (size_t)(e - code));
	ck_assert_int_eq(memcmp(doc_bytes, code, n), 0);
}
END_TEST

START_TEST(test_hex_file_and_chunk)
{
	struct nsk_writer_opts o = {
		.recording_id = { 0x0123456789abcdefull, 0xfedcba9876543210ull } };
	struct mem_io m = { 0 };
	struct nsk_writer *w;
	struct nsk_record r;
	uint8_t want[256];
	size_t n;

	ck_assert_int_eq(nsk_writer__new(mem_io__io(&m), &o, &w), 0);
	example_sample(&r, 1000000500, 1000000);
	ck_assert_int_eq(nsk_writer__append(w, &r), 0);
	example_sample(&r, 1000000000, 999);
	ck_assert_int_eq(nsk_writer__append(w, &r), 0);
	ck_assert_int_eq(nsk_writer__flush(w), 0);

	n = get_hex("file-header", want, sizeof(want));
	ck_assert_uint_eq(n, NSK_FH_SIZE);
	ck_assert_int_eq(memcmp(m.buf, want, n), 0);
	n = get_hex("chunk-example", want, sizeof(want));
	ck_assert_uint_eq(m.len, NSK_FH_SIZE + n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(m.buf[NSK_FH_SIZE + i] == want[i],
			      "chunk byte %zu: code %02x, doc %02x", i,
			      m.buf[NSK_FH_SIZE + i], want[i]);
	ck_assert_int_eq(nsk_writer__close(w), 0);
	mem_io__release(&m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("format-doc");
	TCase *tc = tcase_create("doc");

	tcase_add_test(tc, test_file_header);
	tcase_add_test(tc, test_chunk_header);
	tcase_add_test(tc, test_index_entry);
	tcase_add_test(tc, test_constants);
	tcase_add_test(tc, test_crc_check_value);
	tcase_add_test(tc, test_record_types);
	tcase_add_test(tc, test_field_kinds);
	tcase_add_test(tc, test_record_fields);
	tcase_add_test(tc, test_descriptors_cover_structs);
	tcase_add_test(tc, test_hex_record);
	tcase_add_test(tc, test_hex_file_and_chunk);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	free(doc);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
