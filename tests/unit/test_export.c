/* Unit tests of nusku export on the synthetic recording of test_report
 * (tests/report/synth.c, whose every answer is known by construction):
 * the pprof profile is gunzipped and decoded with protobuf-c and checked
 * field by field (what readers insist on: string 0 empty, ids 1..n, every
 * reference in range; the inline frame as two lines of one location,
 * callee first; labels; the loss comment), the flame graph's frames
 * are checked against the known counts, and the timeline's slices
 * (export --format chrome) against the known samples' periods. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "report/db.h"
#include "report/export.h"
#include "report/export_track.h"
#include "report/load.h"
#include "report/report.h"
#include "report/views.h"
#include "tests/report/synth.h"

typedef Perftools__Profiles__Profile Profile;

static char path[64];
static sqlite3 *db;
static struct nsk_report_opts opts;
static struct nsk_report rep;
static char *out;
static size_t outlen;

static void setup_with(int (*write)(struct nsk_writer *w))
{
	struct nsk_writer *w;
	char msg[256];
	int fd;

	snprintf(path, sizeof(path), "/tmp/nsk-export-test.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(synth__open(path, &w), 0);
	ck_assert_int_eq(write(w), 0);
	ck_assert_int_eq(nsk_writer__close(w), 0);
	ck_assert_int_eq(nsk_db__open(&db), 0);
	ck_assert_msg(!nsk_load__file(db, path, msg, sizeof(msg)), "%s", msg);
	memset(&opts, 0, sizeof(opts));
	opts.since = opts.until = -1;
	opts.limit = -1;
	memset(&rep, 0, sizeof(rep));
	rep.db = db;
	rep.opts = &opts;
	rep.out.fmt = NSK_FMT_CSV;
	ck_assert_int_eq(nsk_filter__apply(&rep), 0);
}

static int write_known(struct nsk_writer *w)
{
	return synth__known(w, 1);
}

static void setup(void)
{
	setup_with(write_known);
}

static void setup_hostile(void)
{
	setup_with(synth__hostile);
}

static void teardown(void)
{
	sqlite3_close(db);
	unlink(path);
	free(out);
	out = NULL;
}

static void export(enum nsk_export_fmt fmt, const char *by)
{
	const struct nsk_measure *m = nsk_measure__find(by);
	FILE *f;
	int err;

	ck_assert_ptr_nonnull(m);
	free(out);
	out = NULL;
	f = open_memstream(&out, &outlen);
	ck_assert_ptr_nonnull(f);
	err = fmt == NSK_EXPORT_PPROF ? nsk_export__pprof(&rep, m, f) :
	      fmt == NSK_EXPORT_CHROME ? nsk_export__chrome(&rep, f)
				       : nsk_export__svg(&rep, m, f);
	fclose(f);
	ck_assert_msg(!err, "export failed: %s", rep.err);
}

static Profile *decode(void)
{
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	z_stream z = { 0 };
	Profile *p;

	ck_assert_ptr_nonnull(raw);
	ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (uint8_t *)out;
	z.avail_in = (uInt)outlen;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	ck_assert_ptr_nonnull(p);
	return p;
}

static const char *s(const Profile *p, int64_t i)
{
	ck_assert(i >= 0 && (size_t)i < p->n_string_table);
	return p->string_table[i];
}

/* The name of a line's function. */
static const char *fname(const Profile *p, uint64_t function_id)
{
	ck_assert(function_id >= 1 && function_id <= p->n_function);
	return s(p, p->function[function_id - 1]->name);
}

/* Samples whose leaf is in function `leaf` (the first line of the first
 * location), value index v. */
static int64_t flat(const Profile *p, const char *leaf, int v)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *smp = p->sample[i];
		const Perftools__Profiles__Location *l;

		if (!smp->n_location_id)
			continue;
		l = p->location[smp->location_id[0] - 1];
		if (l->n_line && !strcmp(fname(p, l->line[0]->function_id), leaf))
			sum += smp->value[v];
	}
	return sum;
}

static const char *label(const Profile *p, const Perftools__Profiles__Sample *smp,
			 const char *key)
{
	for (size_t i = 0; i < smp->n_label; i++)
		if (!strcmp(s(p, smp->label[i]->key), key))
			return s(p, smp->label[i]->str);
	return NULL;
}

START_TEST(pprof_structure)
{
	Profile *p;
	int64_t samples = 0;

	export(NSK_EXPORT_PPROF, "cpu");
	ck_assert_uint_ge(outlen, 2);
	ck_assert_int_eq((uint8_t)out[0], 0x1f);
	ck_assert_int_eq((uint8_t)out[1], 0x8b);
	p = decode();
	ck_assert_uint_ge(p->n_string_table, 1);
	ck_assert_str_eq(p->string_table[0], "");
	for (size_t i = 1; i < p->n_string_table; i++)
		ck_assert_msg(strcmp(p->string_table[i], ""), "string %zu empty", i);
	ck_assert_uint_eq(p->n_sample_type, 2);
	ck_assert_str_eq(s(p, p->sample_type[0]->type), "samples");
	ck_assert_str_eq(s(p, p->sample_type[0]->unit), "count");
	ck_assert_str_eq(s(p, p->sample_type[1]->type), "cpu");
	ck_assert_str_eq(s(p, p->sample_type[1]->unit), "nanoseconds");
	ck_assert_str_eq(s(p, p->default_sample_type), "cpu");
	ck_assert_ptr_nonnull(p->period_type);
	ck_assert_str_eq(s(p, p->period_type->type), "cpu");
	/* no cpu.freq_hz in the file: the samples' own periods, 10 ms */
	ck_assert_int_eq(p->period, 10000000);
	/* ids 1..n in order, every reference in range */
	for (size_t i = 0; i < p->n_mapping; i++)
		ck_assert_uint_eq(p->mapping[i]->id, i + 1);
	for (size_t i = 0; i < p->n_function; i++)
		ck_assert_uint_eq(p->function[i]->id, i + 1);
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		ck_assert_uint_eq(l->id, i + 1);
		ck_assert_uint_le(l->mapping_id, p->n_mapping);
		ck_assert_uint_ge(l->n_line, 1);
		for (size_t k = 0; k < l->n_line; k++)
			(void)fname(p, l->line[k]->function_id);
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *smp = p->sample[i];

		ck_assert_uint_eq(smp->n_value, 2);
		/* one sample stands for its period */
		ck_assert_int_eq(smp->value[1], smp->value[0] * 10000000);
		samples += smp->value[0];
		for (size_t k = 0; k < smp->n_location_id; k++)
			ck_assert(smp->location_id[k] >= 1 &&
				  smp->location_id[k] <= p->n_location);
		for (size_t k = 0; k < smp->n_label; k++)
			ck_assert_int_eq(smp->label[k]->num, 0); /* strings only */
	}
	ck_assert_int_eq(samples, 100);
	/* the mapping: file and build-id */
	ck_assert_uint_ge(p->n_mapping, 1);
	ck_assert_str_eq(s(p, p->mapping[0]->build_id), "0102ab");
	perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(pprof_answers)
{
	Profile *p;
	int inline_ok = 0, labelled = 0, lost = 0;

	export(NSK_EXPORT_PPROF, "cpu");
	p = decode();
	/* synth.c's table: leaf samples per function */
	ck_assert_int_eq(flat(p, "hot_a", 0), 43);
	ck_assert_int_eq(flat(p, "hot_b", 0), 20);
	ck_assert_int_eq(flat(p, "helper", 0), 10);
	ck_assert_int_eq(flat(p, "recurse", 0), 10);
	ck_assert_int_eq(flat(p, "libc.so.6+0x1234", 0), 10);
	ck_assert_int_eq(flat(p, "[unknown stack 77]", 0), 2);
	/* helper is inlined in hot_c at one address: one location, the
	 * inlined callee first */
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		if (l->n_line == 2 &&
		    !strcmp(fname(p, l->line[0]->function_id), "helper") &&
		    !strcmp(fname(p, l->line[1]->function_id), "hot_c"))
			inline_ok = 1;
		ck_assert_msg(!(l->n_line == 1 &&
				!strcmp(fname(p, l->line[0]->function_id), "helper")),
			      "helper as a location of its own");
	}
	ck_assert(inline_ok);
	for (size_t i = 0; i < p->n_sample; i++) {
		const char *pid = label(p, p->sample[i], "pid");
		const char *tid = label(p, p->sample[i], "tid");
		const char *comm = label(p, p->sample[i], "comm");

		ck_assert_ptr_nonnull(pid);
		ck_assert_ptr_nonnull(tid);
		if (!strcmp(tid, "101")) {
			ck_assert_str_eq(pid, "100");
			ck_assert_str_eq(comm, "worker");
			labelled++;
		}
	}
	ck_assert_int_gt(labelled, 0);
	for (size_t i = 0; i < p->n_comment; i++)
		lost |= !strcmp(s(p, p->comment[i]),
				"lost events: 10 (cpu.ringbuf 7, cpu.stack 3)");
	ck_assert_msg(lost, "no loss comment");
	perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(pprof_filtered)
{
	Profile *p;

	opts.pids = "200";
	ck_assert_int_eq(nsk_filter__apply(&rep), 0);
	export(NSK_EXPORT_PPROF, "function"); /* a view's name: its measure */
	p = decode();
	ck_assert_int_eq(flat(p, "hot_a", 0), 3);
	ck_assert_int_eq(flat(p, "hot_b", 0), 0);
	perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(svg_frames)
{
	export(NSK_EXPORT_SVG, "cpu");
	ck_assert_ptr_nonnull(strstr(out, "<?xml version=\"1.0\""));
	ck_assert_ptr_nonnull(strstr(out, "<title>all (100 samples, 100.00%)</title>"
				     "<rect x=\"10.00\" y=\"" ));
	/* the processes under the root, by name */
	ck_assert_ptr_nonnull(strstr(out, "<title>cpu_hot (95 samples, 95.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(out, "<title>other (5 samples, 5.00%)</title>"));
	/* hot_a in cpu_hot (S1 40 and S5 10 samples): 600 of the 1200 px,
	 * after the 5 samples of "[unknown frame 99]" (siblings by name) */
	ck_assert_ptr_nonnull(strstr(out, "<title>hot_a (50 samples, 50.00%)</title>"
				     "<rect x=\"70.00\""));
	ck_assert_ptr_nonnull(strstr(strstr(out, "<title>hot_a (50 samples"),
				     "width=\"600.00\""));
	ck_assert_ptr_nonnull(strstr(out, "<title>helper (10 samples, 10.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(out, "lost events: 10 (cpu.ringbuf 7, cpu.stack 3)"));
	ck_assert_ptr_nonnull(strstr(out, "]]></script>\n</svg>\n"));
}
END_TEST

/* Samples 0-69 of tid 100, 10 ms apart, each standing for the 10 ms
 * before it, cut at the recording's start (ts 0: T0, the first sample's
 * time, so the first sample has nothing left): one run from 0 to 690 ms,
 * in which __libc_start_main and main last 690 ms, hot_a 390 ms (S1, 40
 * samples but the first), then hot_b 200 ms (S2), then hot_c with helper
 * inlined in it 100 ms (S3); written outer first.  ts in us. */
START_TEST(chrome_slices)
{
	const char *libc, *mn, *a, *b, *c, *h;

	export(NSK_EXPORT_CHROME, "cpu");
	ck_assert(!strncmp(out, "{\"traceEvents\":[\n", 17));
	libc = strstr(out, "{\"ph\":\"X\",\"ts\":0.000,\"dur\":690000.000,"
		      "\"pid\":100,\"tid\":100,\"name\":\"__libc_start_main\",\"cat\":\"cpu\"}");
	mn = strstr(out, "{\"ph\":\"X\",\"ts\":0.000,\"dur\":690000.000,"
		    "\"pid\":100,\"tid\":100,\"name\":\"main\"");
	/* hot_a and hot_b end 1 ns (a tick of 1/1024 us) before the next
	 * begins: the ends strictly before the begin (export_chrome.c) */
	a = strstr(out, "{\"ph\":\"X\",\"ts\":0.000,\"dur\":389999.9990234375,"
		   "\"pid\":100,\"tid\":100,\"name\":\"hot_a\"");
	b = strstr(out, "{\"ph\":\"X\",\"ts\":390000.000,\"dur\":199999.9990234375,"
		   "\"pid\":100,\"tid\":100,\"name\":\"hot_b\"");
	c = strstr(out, "\"ts\":590000.000,\"dur\":100000.000,\"pid\":100,"
		   "\"tid\":100,\"name\":\"hot_c\"");
	h = strstr(out, "\"ts\":590000.000,\"dur\":100000.000,\"pid\":100,"
		   "\"tid\":100,\"name\":\"helper\"");
	ck_assert(libc && mn && a && b && c && h);
	ck_assert(libc < mn && mn < a && a < b && b < c && c < h);
	/* tid 101: samples 70-94, one run of 250 ms */
	ck_assert_ptr_nonnull(strstr(out, "{\"ph\":\"X\",\"ts\":690000.000,"
				     "\"dur\":250000.000,\"pid\":100,\"tid\":101,"
				     "\"name\":\"__libc_start_main\""));
	ck_assert_ptr_nonnull(strstr(out, "{\"ph\":\"M\",\"pid\":100,\"tid\":101,"
				     "\"name\":\"thread_name\",\"args\":{\"name\":\"worker\"}}"));
	ck_assert_ptr_nonnull(strstr(out, "{\"ph\":\"M\",\"pid\":100,\"tid\":100,"
				     "\"name\":\"process_name\",\"args\":{\"name\":\"cpu_hot\"}}"));
	ck_assert_ptr_nonnull(strstr(out, "lost events: 10 (cpu.ringbuf 7, cpu.stack 3)"));
	ck_assert_ptr_nonnull(strstr(out, "\"ts_zero_ns\":\"1000000000\""));
	ck_assert(outlen > 3 && !strcmp(out + outlen - 3, "}}\n"));
}
END_TEST

/* The track writes outer slices first at one start, then by depth;
 * microseconds are exact, negative ones too. */
START_TEST(track_order)
{
	struct nsk_track t = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int first = 1;

	ck_assert_ptr_nonnull(f);
	fputs("leaf", nsk_track__begin(&t, 5, 2));
	ck_assert_int_eq(nsk_track__end(&t), 0);
	fputs("late", nsk_track__begin(&t, 9, 0));
	ck_assert_int_eq(nsk_track__end(&t), 0);
	fputs("root", nsk_track__begin(&t, 5, 0));
	ck_assert_int_eq(nsk_track__end(&t), 0);
	fputs("mid", nsk_track__begin(&t, 5, 1));
	ck_assert_int_eq(nsk_track__end(&t), 0);
	ck_assert_int_eq(nsk_track__flush(&t, f, &first), 0);
	fputs("again", nsk_track__begin(&t, 1, 0));
	ck_assert_int_eq(nsk_track__end(&t), 0);
	ck_assert_int_eq(nsk_track__flush(&t, f, &first), 0);
	nsk_track__us(f, nsk_track__ticks(1234567));
	fputc(' ', f);
	nsk_track__us(f, nsk_track__ticks(-1500));
	fputc(' ', f);
	nsk_track__us(f, nsk_track__ticks(1000));
	fputc(' ', f);
	nsk_track__us(f, nsk_track__ticks(INT64_MIN));
	fclose(f);
	/* 1234567 ns is 1264196.6 ticks of 1/1024 us: 1264197 */
	ck_assert_str_eq(buf, "\nroot,\nmid,\nleaf,\nlate,\nagain"
			 "1234.5673828125 -1.500 1.000 -9007199254740991.9990234375");
	/* every ns its own tick, in order */
	for (int64_t ns = 0; ns < 200000; ns++)
		ck_assert_int_gt(nsk_track__ticks(ns + 1), nsk_track__ticks(ns));
	ck_assert_int_eq(nsk_track__ticks(INT64_MAX), INT64_MAX);
	nsk_track__release(&t);
	free(buf);
}
END_TEST

START_TEST(hostile_escaped)
{
	Profile *p;

	export(NSK_EXPORT_SVG, "cpu");
	ck_assert_ptr_null(memchr(out, 0x1b, outlen));
	ck_assert_ptr_null(memchr(out, 0x07, outlen));
	export(NSK_EXPORT_CHROME, "cpu");
	ck_assert_ptr_null(memchr(out, 0x1b, outlen));
	ck_assert_ptr_nonnull(strstr(out, "\\u001b"));
	export(NSK_EXPORT_PPROF, "cpu");
	p = decode();
	for (size_t i = 0; i < p->n_string_table; i++)
		ck_assert_ptr_null(strchr(p->string_table[i], 0x1b));
	perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("export");
	TCase *tc = tcase_create("known");
	TCase *th = tcase_create("hostile");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pprof_structure);
	tcase_add_test(tc, pprof_answers);
	tcase_add_test(tc, pprof_filtered);
	tcase_add_test(tc, svg_frames);
	tcase_add_test(tc, chrome_slices);
	tcase_add_test(tc, track_order);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(th, setup_hostile, teardown);
	tcase_add_test(th, hostile_escaped);
	suite_add_tcase(s, th);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
