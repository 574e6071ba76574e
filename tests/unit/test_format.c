/* Unit tests of the .nsk writer and reader: round trips, streaming through a
 * pipe, truncation at every byte, corruption and resynchronization, unknown
 * types and versions, and I/O faults injected through struct nsk_io. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/wire.h"
#include "tests/unit/fmt_testlib.h"

/* ---- helpers ---------------------------------------------------------------- */

struct sink {
	char last[256];
	unsigned problems;
	unsigned chunks;
	struct nsk_chunk_info chunk[64];
};

static void on_problem(void *ctx, const char *msg)
{
	struct sink *s = ctx;

	snprintf(s->last, sizeof(s->last), "%s", msg);
	s->problems++;
}

static void on_chunk(void *ctx, const struct nsk_chunk_info *c)
{
	struct sink *s = ctx;

	if (s->chunks < 64)
		s->chunk[s->chunks] = *c;
	s->chunks++;
}

static uint32_t pick_type(struct rng *r)
{
	/* END only at the end: a random one would end follow mode early. */
	uint32_t t = 1 + (uint32_t)(rng__next(r) % (NSK_REC_TYPE_MAX - 2));

	return t >= NSK_REC_END ? t + 1 : t;
}

/* Writes n seeded records of mixed types (or of one type) into m. */
static void write_seeded(struct mem_io *m, const struct nsk_writer_opts *o,
			 uint64_t seed, size_t n, uint32_t only)
{
	struct nsk_writer *w;
	struct rng r = { seed }, rt = { seed ^ 0x9e3779b97f4a7c15ull };
	struct gen_store st;
	struct nsk_record rec;

	ck_assert_int_eq(nsk_writer__new(mem_io__io(m), o, &w), 0);
	for (size_t i = 0; i < n; i++) {
		gen__record(&r, only ? only : pick_type(&rt), &rec, &st);
		ck_assert_int_eq(nsk_writer__append(w, &rec), 0);
	}
	ck_assert_int_eq(nsk_writer__close(w), 0);
}

/* Reads data back and checks the first `expect` records equal the seeded
 * sequence; returns how many records were read. */
static size_t read_seeded(const uint8_t *data, size_t len, uint64_t seed,
			  uint32_t only, struct sink *s, size_t max_io,
			  struct nsk_reader_stats *stats_out)
{
	struct nsk_reader_opts ro = { .on_problem = on_problem, .ctx = s, .on_chunk = on_chunk };
	struct nsk_reader *rd;
	struct mem_io src;
	struct nsk_io *io = mem_io__reader(&src, data, len);
	struct rng r = { seed }, rt = { seed ^ 0x9e3779b97f4a7c15ull };
	struct gen_store st;
	struct nsk_record want, got;
	size_t n = 0;
	char why[128];
	int rc;

	src.max_io = max_io;
	ck_assert_int_eq(nsk_reader__new(io, &ro, &rd), 0);
	while ((rc = nsk_reader__next(rd, &got)) == 1) {
		gen__record(&r, only ? only : pick_type(&rt), &want, &st);
		if (!rec__equal(&want, &got, why, sizeof(why)))
			ck_abort_msg("record %zu: %s", n, why);
		n++;
	}
	ck_assert_int_eq(rc, 0);
	if (stats_out)
		*stats_out = *nsk_reader__stats(rd);
	nsk_reader__free(rd);
	return n;
}

/* ---- round trips ------------------------------------------------------------ */

START_TEST(test_every_type)
{
	struct nsk_writer_opts o = { .chunk_bytes = 4096 };
	struct nsk_reader_stats st;
	struct mem_io m = { 0 };
	struct sink s = { 0 };

	for (uint32_t t = 1; t < NSK_REC_TYPE_MAX; t++) {
		memset(&m, 0, sizeof(m));
		memset(&s, 0, sizeof(s));
		write_seeded(&m, &o, 1000 + t, 200, t);
		ck_assert_uint_eq(read_seeded(m.buf, m.len, 1000 + t, t, &s, 0, &st), 200);
		ck_assert_uint_eq(st.records, 200);
		ck_assert_uint_eq(st.corrupt_chunks + st.truncated_bytes + st.seq_gaps, 0);
		ck_assert_msg(s.problems == 0, "problem: %s", s.last);
		ck_assert_int_eq(st.ended, t == NSK_REC_END);
		mem_io__release(&m);
	}
}
END_TEST

START_TEST(test_million_mixed)
{
	struct nsk_reader_stats st;
	struct mem_io m = { 0 };
	struct sink s = { 0 };

	write_seeded(&m, NULL, 77, 1000000, 0);
	/* Short reads: the reader must stitch chunks across read calls. */
	ck_assert_uint_eq(read_seeded(m.buf, m.len, 77, 0, &s, 100000, &st), 1000000);
	ck_assert_uint_gt(st.chunks, 10);
	ck_assert_msg(s.problems == 0, "problem: %s", s.last);
	mem_io__release(&m);
}
END_TEST

START_TEST(test_interleavings)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct nsk_writer_opts o = { .chunk_bytes = 64 + seed * 97,
					     .zstd_level = (int)(seed % 5) - 1 };
		struct mem_io m = { 0 };
		struct sink s = { 0 };
		size_t n = 500 + seed * 131;

		write_seeded(&m, &o, seed, n, 0);
		ck_assert_uint_eq(read_seeded(m.buf, m.len, seed, 0, &s, 1 + seed * 7, NULL), n);
		ck_assert_msg(s.problems == 0, "seed %lu: %s", (unsigned long)seed, s.last);
		mem_io__release(&m);
	}
}
END_TEST

START_TEST(test_header_info)
{
	struct nsk_writer_opts o = { .recording_id = { 0x1122334455667788ull, 42 } };
	struct nsk_reader *rd;
	struct nsk_writer *w;
	struct mem_io m = { 0 }, src;
	const struct nsk_file_info *fi;

	ck_assert_int_eq(nsk_writer__new(mem_io__io(&m), &o, &w), 0);
	ck_assert_uint_eq(nsk_writer__bytes(w), NSK_FH_SIZE);
	ck_assert_int_eq(nsk_writer__close(w), 0);
	ck_assert_int_eq(m.closed, 1);
	ck_assert_uint_eq(m.len, NSK_FH_SIZE); /* no records: no chunk, no index */
	ck_assert_int_eq(nsk_reader__new(mem_io__reader(&src, m.buf, m.len), NULL, &rd), 0);
	fi = nsk_reader__info(rd);
	ck_assert_uint_eq(fi->major, NSK_FORMAT_MAJOR);
	ck_assert_uint_eq(fi->minor, NSK_FORMAT_MINOR);
	ck_assert_uint_eq(fi->recording_id[0], 0x1122334455667788ull);
	ck_assert_uint_eq(fi->recording_id[1], 42);
	nsk_reader__free(rd);
	mem_io__release(&m);
}
END_TEST

START_TEST(test_bad_appends)
{
	struct mem_io m = { 0 };
	struct nsk_writer *w;
	struct nsk_record rec = { .type = 0 };
	size_t big = 17u << 20;
	uint8_t *blob = calloc(1, big);

	ck_assert_int_eq(nsk_writer__new(mem_io__io(&m), NULL, &w), 0);
	ck_assert_int_eq(nsk_writer__append(w, &rec), -EINVAL);
	rec.type = NSK_REC_TYPE_MAX;
	ck_assert_int_eq(nsk_writer__append(w, &rec), -EINVAL);
	rec.type = NSK_REC_STRING;
	rec.string.id = 1;
	rec.string.str = (struct nsk_bytes){ blob, (uint32_t)big };
	ck_assert_int_eq(nsk_writer__append(w, &rec), -E2BIG);
	/* A refused record is not an I/O error: the writer goes on. */
	rec.string.str.len = 1 << 20;
	ck_assert_int_eq(nsk_writer__append(w, &rec), 0);
	ck_assert_int_eq(nsk_writer__close(w), 0);
	free(blob);
	mem_io__release(&m);
}
END_TEST

/* ---- streaming through a pipe ---------------------------------------------- */

struct pipe_run {
	int fd;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int reader_got_first_half;
	int err;
};

static void *pipe_writer(void *arg)
{
	struct pipe_run *pr = arg;
	struct nsk_writer_opts o = { .chunk_bytes = 1 << 20 };
	struct rng r = { 5 }, rt = { 5 ^ 0x9e3779b97f4a7c15ull };
	struct gen_store st;
	struct nsk_record rec;
	struct nsk_writer *w;
	struct timespec until;
	int err;

	err = nsk_writer__new(nsk_io__from_fd(pr->fd, 1), &o, &w);
	for (int i = 0; !err && i < 2000; i++) {
		gen__record(&r, pick_type(&rt), &rec, &st);
		err = nsk_writer__append(w, &rec);
		if (!err && i == 999) {
			/* Half written: flush as tick would after 250 ms, then
			 * wait for the reader to have read it while this
			 * writer is still open. */
			err = nsk_writer__tick(w, UINT64_MAX);
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 20;
			pthread_mutex_lock(&pr->mu);
			while (!pr->reader_got_first_half && !err)
				if (pthread_cond_timedwait(&pr->cv, &pr->mu, &until))
					err = -ETIMEDOUT;
			pthread_mutex_unlock(&pr->mu);
		}
	}
	if (!err)
		err = nsk_writer__close(w);
	else
		nsk_writer__free(w);
	pr->err = err;
	return NULL;
}

START_TEST(test_pipe_streaming)
{
	struct pipe_run pr = { .mu = PTHREAD_MUTEX_INITIALIZER,
			       .cv = PTHREAD_COND_INITIALIZER };
	struct rng r = { 5 }, rt = { 5 ^ 0x9e3779b97f4a7c15ull };
	struct gen_store st;
	struct nsk_record want, got;
	struct nsk_reader *rd;
	pthread_t th;
	int fds[2], rc, n = 0;
	char why[128];

	ck_assert_int_eq(pipe(fds), 0);
	pr.fd = fds[1];
	ck_assert_int_eq(pthread_create(&th, NULL, pipe_writer, &pr), 0);
	ck_assert_int_eq(nsk_reader__new(nsk_io__from_fd(fds[0], 1), NULL, &rd), 0);
	while ((rc = nsk_reader__next(rd, &got)) == 1) {
		gen__record(&r, pick_type(&rt), &want, &st);
		if (!rec__equal(&want, &got, why, sizeof(why)))
			ck_abort_msg("record %d: %s", n, why);
		if (++n == 1000) {
			pthread_mutex_lock(&pr.mu);
			pr.reader_got_first_half = 1;
			pthread_cond_signal(&pr.cv);
			pthread_mutex_unlock(&pr.mu);
		}
	}
	ck_assert_int_eq(rc, 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(pr.err, 0);
	ck_assert_int_eq(n, 2000);
	nsk_reader__free(rd);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("format");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_every_type);
	tcase_add_test(tc, test_million_mixed);
	tcase_add_test(tc, test_interleavings);
	tcase_add_test(tc, test_header_info);
	tcase_add_test(tc, test_bad_appends);
	tcase_add_test(tc, test_pipe_streaming);
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
