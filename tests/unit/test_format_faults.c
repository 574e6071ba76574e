/* Unit tests of the .nsk reader and writer under damage: a file cut at every
 * byte, flipped bytes, unknown record and chunk types, newer versions and
 * unknown flags, I/O errors injected at every byte, and follow mode fed a
 * growing file a few bytes at a time. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/wire.h"
#include "tests/unit/fmt_testlib.h"

#define MAXC 64

struct sink {
	char last[256];
	char all[4096];
	unsigned problems;
	unsigned nchunks;
	struct nsk_chunk_info chunk[MAXC];
};

static void on_problem(void *ctx, const char *msg)
{
	struct sink *s = ctx;
	size_t n = strlen(s->all);

	snprintf(s->last, sizeof(s->last), "%s", msg);
	snprintf(s->all + n, sizeof(s->all) - n, "%s\n", msg);
	s->problems++;
}

static void on_chunk(void *ctx, const struct nsk_chunk_info *c)
{
	struct sink *s = ctx;

	if (s->nchunks < MAXC)
		s->chunk[s->nchunks++] = *c;
}

static void numbered(uint64_t i, struct nsk_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->type = NSK_REC_SAMPLE;
	rec->sample.time = 9000000000ull + i * 1000003ull;
	rec->sample.pid = 100;
	rec->sample.tid = 100 + (uint32_t)(i % 3);
	rec->sample.stack_id = 1 + (i * 7919) % 50;
	rec->sample.weight = i; /* the record's identity */
}

/* Writes n numbered samples; returns the writer's first error. */
static int write_numbered(struct mem_io *m, size_t chunk_bytes, size_t n,
			  size_t *appended)
{
	struct nsk_writer_opts o = { .chunk_bytes = chunk_bytes,
				     .recording_id = { 1, 2 } };
	struct nsk_writer *w;
	struct nsk_record rec;
	int err, first = 0;

	*appended = 0;
	err = nsk_writer__new(mem_io__io(m), &o, &w);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		numbered(i, &rec);
		err = nsk_writer__append(w, &rec);
		if (err && !first)
			first = err;
		if (err) {
			/* Fails fast, with the first error, from now on. */
			ck_assert_int_eq(nsk_writer__append(w, &rec), first);
			ck_assert_int_eq(nsk_writer__flush(w), first);
			break;
		}
		(*appended)++;
	}
	err = nsk_writer__close(w);
	if (first)
		ck_assert_int_eq(err, first);
	return err;
}

/* Reads weights into out; returns the count, the last next() code in *rc. */
static size_t read_weights(const uint8_t *data, size_t len, uint64_t *out,
			   size_t max, struct sink *s, struct nsk_reader_stats *st,
			   int *rc_out)
{
	struct nsk_reader_opts ro = { .on_problem = on_problem, .ctx = s,
				      .on_chunk = on_chunk };
	struct nsk_reader *rd;
	struct nsk_record rec;
	struct mem_io src;
	size_t n = 0;
	int rc;

	rc = nsk_reader__new(mem_io__reader(&src, data, len), &ro, &rd);
	if (rc) {
		*rc_out = rc;
		return 0;
	}
	while ((rc = nsk_reader__next(rd, &rec)) == 1) {
		ck_assert_uint_eq(rec.type, NSK_REC_SAMPLE);
		ck_assert_uint_lt(n, max);
		out[n++] = rec.sample.weight;
	}
	*rc_out = rc;
	*st = *nsk_reader__stats(rd);
	nsk_reader__free(rd);
	return n;
}

/* A clean multi-chunk file and its chunk table. */
struct clean {
	struct mem_io m;
	struct sink s;
	size_t n;
};

static void make_clean(struct clean *c, size_t chunk_bytes, size_t n)
{
	struct nsk_reader_stats st;
	uint64_t *w = calloc(n, sizeof(*w));
	size_t appended;
	int rc;

	memset(c, 0, sizeof(*c));
	c->n = n;
	ck_assert_int_eq(write_numbered(&c->m, chunk_bytes, n, &appended), 0);
	ck_assert_uint_eq(read_weights(c->m.buf, c->m.len, w, n, &c->s, &st, &rc), n);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(c->s.problems, 0);
	free(w);
}

static uint64_t chunk_end(const struct nsk_chunk_info *ci)
{
	return ci->offset + NSK_CH_SIZE + ci->stored_len;
}

/* Records in the records chunks that end at or before byte `cut`. */
static size_t records_before(const struct clean *c, uint64_t cut, uint64_t *last_end)
{
	size_t n = 0;

	*last_end = NSK_FH_SIZE;
	for (unsigned i = 0; i < c->s.nchunks; i++) {
		if (chunk_end(&c->s.chunk[i]) > cut)
			break;
		if (c->s.chunk[i].type == NSK_CHUNK_RECORDS)
			n += c->s.chunk[i].records;
		*last_end = chunk_end(&c->s.chunk[i]);
	}
	return n;
}

static void assert_sequence(const uint64_t *w, size_t n, size_t from)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] != from + i)
			ck_abort_msg("record %zu is %lu, expected %zu", i,
				     (unsigned long)w[i], from + i);
}

/* ---- truncation at every byte -------------------------------------------- */

START_TEST(test_truncate_every_byte)
{
	struct clean c;
	uint64_t *w;

	make_clean(&c, 600, 400);
	ck_assert_uint_ge(c.s.nchunks, 5);
	w = calloc(c.n, sizeof(*w));
	for (size_t cut = 0; cut <= c.m.len; cut++) {
		struct nsk_reader_stats st;
		struct sink s = { 0 };
		uint64_t last_end;
		size_t want = records_before(&c, cut, &last_end), got;
		int rc;

		got = read_weights(c.m.buf, cut, w, c.n, &s, &st, &rc);
		if (cut < NSK_FH_SIZE) {
			ck_assert_int_eq(rc, -EPROTO);
			ck_assert_msg(strstr(s.last, "not a .nsk file"), "cut %zu: %s", cut, s.last);
			continue;
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_msg(got == want, "cut %zu: %zu records, expected %zu", cut, got, want);
		assert_sequence(w, got, 0);
		ck_assert_uint_eq(st.truncated_bytes, cut - last_end);
		ck_assert_uint_eq(st.corrupt_chunks, 0);
		if (cut > last_end) {
			char want_msg[128];

			snprintf(want_msg, sizeof(want_msg),
				 "truncated: last %zu bytes at offset %lu do not form a whole chunk",
				 (size_t)(cut - last_end), (unsigned long)last_end);
			ck_assert_msg(strstr(s.last, want_msg), "cut %zu: '%s'", cut, s.last);
		} else {
			ck_assert_msg(s.problems == 0, "cut %zu: %s", cut, s.last);
		}
	}
	free(w);
	mem_io__release(&c.m);
}
END_TEST

/* ---- corruption ------------------------------------------------------------ */

static void flip_and_check(struct clean *c, unsigned k, size_t at, const char *what)
{
	const struct nsk_chunk_info *ck = &c->s.chunk[k];
	uint8_t *copy = malloc(c->m.len);
	uint64_t *w = calloc(c->n, sizeof(*w));
	struct nsk_reader_stats st;
	struct sink s = { 0 };
	size_t before = 0, got;
	char off[64];
	int rc;

	for (unsigned i = 0; i < k; i++)
		before += c->s.chunk[i].records;
	memcpy(copy, c->m.buf, c->m.len);
	copy[at] ^= 0x20;
	got = read_weights(copy, c->m.len, w, c->n, &s, &st, &rc);
	ck_assert_int_eq(rc, 0);
	/* Everything but the damaged chunk, in order. */
	ck_assert_msg(got == c->n - ck->records, "%s: %zu records", what, got);
	assert_sequence(w, before, 0);
	assert_sequence(w + before, got - before, before + ck->records);
	ck_assert_uint_eq(st.corrupt_chunks, 1);
	ck_assert_uint_eq(st.truncated_bytes, 0);
	snprintf(off, sizeof(off), "offset %lu", (unsigned long)ck->offset);
	ck_assert_msg(strstr(s.all, off), "%s: '%s' lacks '%s'", what, s.all, off);
	free(copy);
	free(w);
}

START_TEST(test_flipped_byte)
{
	struct clean c;
	const struct nsk_chunk_info *ck;

	make_clean(&c, 600, 400);
	ck = &c.s.chunk[2];
	/* In the payload: the checksum catches it, the header says how far
	 * to skip. */
	flip_and_check(&c, 2, ck->offset + NSK_CH_SIZE + ck->stored_len / 2, "payload");
	/* In the header (seq, lengths, sync): the header no longer checks,
	 * the reader scans to the next sync marker. */
	flip_and_check(&c, 2, ck->offset + NSK_CH_OFF_SEQ, "header seq");
	flip_and_check(&c, 2, ck->offset + NSK_CH_OFF_STORED + 2, "header length");
	flip_and_check(&c, 2, ck->offset + 3, "sync");
	flip_and_check(&c, 0, c.s.chunk[0].offset + NSK_CH_SIZE + 1, "first chunk");
	/* And the message says checksum. */
	{
		struct sink s = { 0 };
		struct nsk_reader_stats st;
		uint64_t *w = calloc(c.n, sizeof(*w));
		int rc;

		c.m.buf[ck->offset + NSK_CH_SIZE + 5] ^= 1;
		read_weights(c.m.buf, c.m.len, w, c.n, &s, &st, &rc);
		ck_assert_msg(strstr(s.all, "checksum mismatch"), "%s", s.all);
		c.m.buf[ck->offset + NSK_CH_SIZE + 5] ^= 1;
		free(w);
	}
	mem_io__release(&c.m);
}
END_TEST

START_TEST(test_garbage_between_chunks)
{
	struct clean c;
	uint8_t *buf;
	uint64_t *w;
	const struct nsk_chunk_info *ck;
	struct nsk_reader_stats st;
	struct sink s = { 0 };
	size_t at, len;
	int rc;

	make_clean(&c, 600, 400);
	ck = &c.s.chunk[3];
	at = ck->offset;
	/* 1000 bytes of junk with partial sync markers in it. */
	len = c.m.len + 1000;
	buf = malloc(len);
	w = calloc(c.n, sizeof(*w));
	memcpy(buf, c.m.buf, at);
	for (size_t i = 0; i < 1000; i++)
		buf[at + i] = i % 50 < 5 ? (uint8_t)NSK_SYNC[i % 50] : (uint8_t)(i * 31);
	memcpy(buf + at + 1000, c.m.buf + at, c.m.len - at);
	ck_assert_uint_eq(read_weights(buf, len, w, c.n, &s, &st, &rc), c.n);
	assert_sequence(w, c.n, 0);
	ck_assert_uint_eq(st.corrupt_chunks, 1);
	ck_assert_msg(strstr(s.all, "1000 bytes without a valid chunk header"), "%s", s.all);
	free(buf);
	free(w);
	mem_io__release(&c.m);
}
END_TEST

/* ---- unknown types, versions, flags --------------------------------------- */

START_TEST(test_unknown_types_and_minor_changes)
{
	uint8_t file[4096], raw[512], *p = raw;
	struct nsk_time_state ts = { 0 };
	struct nsk_record rec;
	struct nsk_reader *rd;
	struct mem_io src;
	struct sink s = { 0 };
	struct nsk_reader_opts ro = { .on_problem = on_problem, .ctx = &s };
	size_t len;
	uint8_t *body;

	/* 1: a sample, as the writer encodes it */
	numbered(1, &rec);
	*p++ = NSK_REC_SAMPLE;
	body = nsk_codec__encode(&nsk_rec_descs[NSK_REC_SAMPLE], &rec, p + 1, &ts);
	*p = (uint8_t)(body - (p + 1));
	p = body;
	/* 2: a record type from the future */
	*p++ = 120;
	*p++ = 3;
	memcpy(p, "xyz", 3);
	p += 3;
	/* 3: a sample from a newer minor: two extra trailing fields */
	numbered(2, &rec);
	*p++ = NSK_REC_SAMPLE;
	body = nsk_codec__encode(&nsk_rec_descs[NSK_REC_SAMPLE], &rec, p + 1, &ts);
	body = nsk_put_uvar(body, 12345);
	body = nsk_put_uvar(body, 6);
	*p = (uint8_t)(body - (p + 1));
	p = body;
	/* 4: a sample from an older minor: only time and pid */
	*p++ = NSK_REC_SAMPLE;
	*p++ = 2;
	*p++ = 0; /* time delta 0: the chunk's base */
	*p++ = 7;

	len = fmt__header(file, 1, 0, 0, 0);
	len += fmt__chunk(file + len, NSK_CHUNK_RECORDS, NSK_CODEC_NONE, 0, ts.base,
			  raw, (size_t)(p - raw), 4);
	/* a chunk type from the future between two chunks */
	len += fmt__chunk(file + len, 99, NSK_CODEC_NONE, 1, 0, "future", 6, 1);
	len += fmt__chunk(file + len, NSK_CHUNK_RECORDS, NSK_CODEC_NONE, 2, ts.base,
			  raw, (size_t)(p - raw), 4);

	ck_assert_int_eq(nsk_reader__new(mem_io__reader(&src, file, len), &ro, &rd), 0);
	for (int pass = 0; pass < 2; pass++) {
		ck_assert_int_eq(nsk_reader__next(rd, &rec), 1);
		ck_assert_uint_eq(rec.sample.weight, 1);
		ck_assert_uint_eq(rec.sample.time, 9000000000ull + 1000003ull);
		ck_assert_int_eq(nsk_reader__next(rd, &rec), 1);
		ck_assert_uint_eq(rec.sample.weight, 2);
		ck_assert_uint_eq(rec.sample.stack_id, 1 + (2 * 7919) % 50);
		ck_assert_int_eq(nsk_reader__next(rd, &rec), 1);
		ck_assert_uint_eq(rec.type, NSK_REC_SAMPLE);
		ck_assert_uint_eq(rec.sample.time, ts.base);
		ck_assert_uint_eq(rec.sample.pid, 7);
		ck_assert_uint_eq(rec.sample.tid, 0);
		ck_assert_uint_eq(rec.sample.weight, 0);
	}
	ck_assert_int_eq(nsk_reader__next(rd, &rec), 0);
	ck_assert_uint_eq(nsk_reader__stats(rd)->skipped_records, 2);
	ck_assert_uint_eq(nsk_reader__stats(rd)->skipped_chunks, 1);
	ck_assert_uint_eq(nsk_reader__stats(rd)->corrupt_chunks, 0);
	ck_assert_uint_eq(nsk_reader__stats(rd)->seq_gaps, 0);
	ck_assert_msg(strstr(s.all, "unknown type 120"), "%s", s.all);
	ck_assert_msg(strstr(s.all, "unknown type 99"), "%s", s.all);
	nsk_reader__free(rd);
}
END_TEST

static int open_header(unsigned major, unsigned minor, uint64_t compat,
		       uint64_t incompat, char *msg, size_t msglen)
{
	uint8_t file[NSK_FH_SIZE];
	struct sink s = { 0 };
	struct nsk_reader_opts ro = { .on_problem = on_problem, .ctx = &s };
	struct nsk_reader *rd;
	struct mem_io src;
	int rc;

	fmt__header(file, major, minor, compat, incompat);
	rc = nsk_reader__new(mem_io__reader(&src, file, sizeof(file)), &ro, &rd);
	snprintf(msg, msglen, "%s", s.last);
	if (!rc) {
		struct nsk_record rec;

		ck_assert_int_eq(nsk_reader__next(rd, &rec), 0);
		nsk_reader__free(rd);
	}
	return rc;
}

START_TEST(test_versions_and_flags)
{
	char msg[256];

	ck_assert_int_eq(open_header(NSK_FORMAT_MAJOR + 1, 3, 0, 0, msg, sizeof(msg)), -ENOTSUP);
	ck_assert_msg(strstr(msg, "format 2.3") && strstr(msg, "format 1."), "%s", msg);
	ck_assert_int_eq(open_header(NSK_FORMAT_MAJOR, 0, 0, 1ull << 5, msg, sizeof(msg)), -ENOTSUP);
	ck_assert_msg(strstr(msg, "incompat"), "%s", msg);
	/* A newer minor and unknown compat flags are read. */
	ck_assert_int_eq(open_header(NSK_FORMAT_MAJOR, NSK_FORMAT_MINOR + 7, 1ull << 9, 0, msg,
				     sizeof(msg)), 0);
	ck_assert_int_eq(open_header(0, 0, 0, 0, msg, sizeof(msg)), -ENOTSUP);
}
END_TEST

START_TEST(test_not_nsk)
{
	static const char text[] = "this is not a recording, just some text that is long "
				   "enough to hold a header";
	struct sink s = { 0 };
	struct nsk_reader_opts ro = { .on_problem = on_problem, .ctx = &s };
	struct nsk_reader *rd;
	struct mem_io src;
	uint8_t hdr[NSK_FH_SIZE];

	ck_assert_int_eq(nsk_reader__new(mem_io__reader(&src, text, sizeof(text)), &ro, &rd),
			 -EPROTO);
	ck_assert_msg(strstr(s.last, "not a .nsk file"), "%s", s.last);
	ck_assert_int_eq(nsk_reader__new(mem_io__reader(&src, "", 0), &ro, &rd), -EPROTO);
	fmt__header(hdr, 1, 0, 0, 0);
	hdr[NSK_FH_OFF_ID] ^= 1;
	ck_assert_int_eq(nsk_reader__new(mem_io__reader(&src, hdr, sizeof(hdr)), &ro, &rd),
			 -EPROTO);
	ck_assert_msg(strstr(s.last, "checksum"), "%s", s.last);
}
END_TEST

/* ---- writer faults ---------------------------------------------------------- */

static void fault_run(const struct clean *c, size_t fail_at, int fail_err, size_t max_io)
{
	struct mem_io m = { 0 };
	struct nsk_reader_stats st;
	struct sink s = { 0 };
	uint64_t *w = calloc(c->n, sizeof(*w)), last_end;
	size_t appended, got, want;
	int err, rc;

	m.fail_at = fail_at;
	m.fail_err = fail_err;
	m.max_io = max_io;
	err = write_numbered(&m, 600, c->n, &appended);
	if (fail_at && fail_at <= c->m.len) {
		ck_assert_msg(err == (fail_err ? -fail_err : -EIO),
			      "fault at %zu: err %d", fail_at, err);
		ck_assert_uint_le(m.len, fail_at);
	} else {
		ck_assert_int_eq(err, 0);
		ck_assert_uint_eq(m.len, c->m.len);
		ck_assert_int_eq(memcmp(m.buf, c->m.buf, m.len), 0);
	}
	/* What reached the sink before the fault reads back. */
	got = read_weights(m.buf, m.len, w, c->n, &s, &st, &rc);
	if (m.len < NSK_FH_SIZE) {
		ck_assert_int_eq(rc, -EPROTO);
	} else {
		want = records_before(c, m.len, &last_end);
		ck_assert_int_eq(rc, 0);
		ck_assert_msg(got == want, "fault at %zu: %zu records, expected %zu",
			      fail_at, got, want);
		assert_sequence(w, got, 0);
		ck_assert_uint_eq(st.truncated_bytes, m.len - last_end);
	}
	free(w);
	mem_io__release(&m);
}

START_TEST(test_write_faults)
{
	struct clean c;

	make_clean(&c, 600, 400);
	/* Short writes alone lose nothing. */
	fault_run(&c, 0, 0, 1);
	fault_run(&c, 0, 0, 7);
	for (size_t at = 1; at <= c.m.len; at += 13) {
		fault_run(&c, at, ENOSPC, 0);
		fault_run(&c, at, EIO, 5);
		fault_run(&c, at, 0, 0);
	}
	mem_io__release(&c.m);
}
END_TEST

/* ---- follow mode ------------------------------------------------------------ */

START_TEST(test_follow_growing_file)
{
	struct nsk_writer_opts o = { .chunk_bytes = 700 };
	struct nsk_reader_opts ro = { .follow = 1 };
	struct mem_io m = { 0 }, src;
	struct nsk_writer *w;
	struct nsk_reader *rd;
	struct nsk_record rec;
	struct rng r = { 11 };
	size_t n = 0, total;
	int rc;

	ck_assert_int_eq(nsk_writer__new(mem_io__io(&m), &o, &w), 0);
	for (uint64_t i = 0; i < 300; i++) {
		numbered(i, &rec);
		ck_assert_int_eq(nsk_writer__append(w, &rec), 0);
	}
	memset(&rec, 0, sizeof(rec));
	rec.type = NSK_REC_END;
	rec.end.records = 300;
	ck_assert_int_eq(nsk_writer__append(w, &rec), 0);
	ck_assert_int_eq(nsk_writer__close(w), 0);
	total = m.len;

	/* Reveal the file a few bytes at a time, from nothing at all. */
	ck_assert_int_eq(nsk_reader__new(mem_io__reader(&src, m.buf, 0), &ro, &rd), 0);
	while (src.len < total) {
		src.len += 1 + rng__next(&r) % 97;
		if (src.len > total)
			src.len = total;
		while ((rc = nsk_reader__next(rd, &rec)) == 1) {
			if (rec.type == NSK_REC_END)
				continue;
			ck_assert_uint_eq(rec.sample.weight, n);
			n++;
		}
		if (src.len < total && !nsk_reader__stats(rd)->ended)
			ck_assert_int_eq(rc, -EAGAIN);
	}
	ck_assert_uint_eq(n, 300);
	ck_assert_int_eq(nsk_reader__stats(rd)->ended, 1);
	/* END was read: the end of data is the end. */
	ck_assert_int_eq(nsk_reader__next(rd, &rec), 0);
	ck_assert_uint_eq(nsk_reader__stats(rd)->truncated_bytes, 0);
	nsk_reader__free(rd);
	mem_io__release(&m);
}
END_TEST

START_TEST(test_eagain_resume)
{
	struct clean c;
	struct nsk_reader *rd;
	struct nsk_record rec;
	struct mem_io src;
	struct nsk_io *io;
	size_t n = 0, again = 0;
	int rc;

	make_clean(&c, 600, 400);
	io = mem_io__reader(&src, c.m.buf, c.m.len);
	src.eagain_every = 3;
	src.max_io = 50;
	ck_assert_int_eq(nsk_reader__new(io, NULL, &rd), 0);
	while ((rc = nsk_reader__next(rd, &rec)) != 0) {
		if (rc == -EAGAIN) {
			again++;
			continue;
		}
		ck_assert_int_eq(rc, 1);
		ck_assert_uint_eq(rec.sample.weight, n);
		n++;
	}
	ck_assert_uint_eq(n, c.n);
	ck_assert_uint_gt(again, 0);
	nsk_reader__free(rd);
	mem_io__release(&c.m);
}
END_TEST

START_TEST(test_tick)
{
	struct nsk_writer_opts o = { .flush_interval_ns = 1000000000ull };
	struct mem_io m = { 0 };
	struct nsk_writer *w;
	struct nsk_record rec;
	struct timespec now;
	uint64_t t;

	ck_assert_int_eq(nsk_writer__new(mem_io__io(&m), &o, &w), 0);
	numbered(0, &rec);
	ck_assert_int_eq(nsk_writer__append(w, &rec), 0);
	clock_gettime(CLOCK_MONOTONIC, &now);
	t = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	ck_assert_int_eq(nsk_writer__tick(w, t), 0);
	ck_assert_uint_eq(nsk_writer__bytes(w), NSK_FH_SIZE); /* too young */
	ck_assert_int_eq(nsk_writer__tick(w, t + 1500000000ull), 0);
	ck_assert_uint_gt(nsk_writer__bytes(w), NSK_FH_SIZE);
	ck_assert_uint_eq(nsk_writer__bytes(w), m.len);
	ck_assert_int_eq(nsk_writer__close(w), 0);
	mem_io__release(&m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("format-faults");
	TCase *tc = tcase_create("faults");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_truncate_every_byte);
	tcase_add_test(tc, test_flipped_byte);
	tcase_add_test(tc, test_garbage_between_chunks);
	tcase_add_test(tc, test_unknown_types_and_minor_changes);
	tcase_add_test(tc, test_versions_and_flags);
	tcase_add_test(tc, test_not_nsk);
	tcase_add_test(tc, test_write_faults);
	tcase_add_test(tc, test_follow_growing_file);
	tcase_add_test(tc, test_eagain_resume);
	tcase_add_test(tc, test_tick);
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
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
