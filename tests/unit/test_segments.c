/* Unit tests for continuous mode's pure parts: the segment names and time
 * ranges (format/segdir.c) and the definitions each segment carries
 * (record/segment_defs.c), fed records by hand. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nusku/segdir.h>

#include "record/segment_defs.h"

START_TEST(names_round_trip)
{
	/* 2026-12-01T21:49:00.123Z */
	uint64_t a = 1796161740123000000ull, b = a + 60001000000ull;
	struct nsk_seg s;
	char name[NSK_SEG_NAME_MAX];

	ck_assert_int_eq(nsk_seg__name(name, sizeof(name), a, b), 0);
	ck_assert_str_eq(name, "nusku-20261201T214900.123Z-20261201T215000.124Z.nsk");
	ck_assert_int_eq(nsk_seg__parse(name, &s), 0);
	ck_assert_uint_eq(s.start_ns, a);
	ck_assert_uint_eq(s.end_ns, b);
	ck_assert_int_eq(s.open, 0);
	ck_assert_int_eq(nsk_seg__name(name, sizeof(name), a, 0), 0);
	ck_assert_str_eq(name, "nusku-20261201T214900.123Z-open.nsk");
	ck_assert_int_eq(nsk_seg__parse(name, &s), 0);
	ck_assert_int_eq(s.open, 1);
	ck_assert_int_eq(nsk_seg__name(name, 20, a, b), -ENAMETOOLONG);
	ck_assert_int_eq(nsk_seg__parse("nusku-20261201T214900.123Z.nsk", &s), -EINVAL);
	ck_assert_int_eq(nsk_seg__parse(".nusku-20261201T214900.123Z-open.nsk", &s), -EINVAL);
	ck_assert_int_eq(nsk_seg__parse("nusku-20261201T214900.123Z-open.nskx", &s), -EINVAL);
}
END_TEST

START_TEST(times_relative_and_absolute)
{
	uint64_t end = 1796161740000000000ull, t;

	ck_assert_int_eq(nsk_seg__parse_time("10m", end, &t), 0);
	ck_assert_uint_eq(t, end - 600000000000ull);
	ck_assert_int_eq(nsk_seg__parse_time("-90s", end, &t), 0);
	ck_assert_uint_eq(t, end - 90000000000ull);
	ck_assert_int_eq(nsk_seg__parse_time("1.5h", end, &t), 0);
	ck_assert_uint_eq(t, end - 5400000000000ull);
	ck_assert_int_eq(nsk_seg__parse_time("600", end, &t), 0);
	ck_assert_uint_eq(t, end - 600000000000ull);
	ck_assert_int_eq(nsk_seg__parse_time("2026-12-01T21:49:00Z", end, &t), 0);
	ck_assert_uint_eq(t, end);
	ck_assert_int_eq(nsk_seg__parse_time("2026-12-01T21:49:00.5", end, &t), 0);
	ck_assert_uint_eq(t, end + 500000000ull);
	ck_assert_int_eq(nsk_seg__parse_time("yesterday", end, &t), -EINVAL);
	ck_assert_int_eq(nsk_seg__parse_time("10x", end, &t), -EINVAL);
	ck_assert_int_eq(nsk_seg__parse_time("", end, &t), -EINVAL);
	ck_assert_int_eq(nsk_seg__parse_time("+5m", end, &t), -EINVAL);
}
END_TEST

START_TEST(ranges_split)
{
	char *d, *f, *u;

	ck_assert_int_eq(nsk_segdir__split("/no/such/dir@-20m..-10m", &d, &f, &u), 0);
	ck_assert_str_eq(d, "/no/such/dir");
	ck_assert_str_eq(f, "-20m");
	ck_assert_str_eq(u, "-10m");
	free(d), free(f), free(u);
	ck_assert_int_eq(nsk_segdir__split("/no/such/dir@-10m..", &d, &f, &u), 0);
	ck_assert_str_eq(f, "-10m");
	ck_assert_ptr_null(u);
	free(d), free(f);
	ck_assert_int_eq(nsk_segdir__split("/no/such/dir@..-1m", &d, &f, &u), 0);
	ck_assert_ptr_null(f);
	ck_assert_str_eq(u, "-1m");
	free(d), free(u);
	ck_assert_int_eq(nsk_segdir__split("/no/such/dir@5m", &d, &f, &u), 0);
	ck_assert_str_eq(f, "5m");
	ck_assert_ptr_null(u);
	free(d), free(f);
	ck_assert_int_eq(nsk_segdir__split("/no/such/run.nsk", &d, &f, &u), 1);
}
END_TEST

/* ---- definitions -------------------------------------------------------- */

#define MAXOUT 64
static struct { uint32_t type; uint64_t id; } out[MAXOUT];
static int nout;

static int collect(void *ctx, const struct nsk_record *rec)
{
	uint64_t id = 0;

	(void)ctx;
	switch (rec->type) {
	case NSK_REC_STRING: id = rec->string.id; break;
	case NSK_REC_MAPPING: id = rec->mapping.id; break;
	case NSK_REC_FRAME: id = rec->frame.id; break;
	case NSK_REC_STACK: id = rec->stack.id; break;
	case NSK_REC_PROCESS: id = rec->process.pid; break;
	case NSK_REC_THREAD: id = rec->thread.tid; break;
	default: break;
	}
	ck_assert_int_lt(nout, MAXOUT);
	out[nout].type = rec->type;
	out[nout++].id = id;
	return 0;
}

static void put(struct nsk_defs *d, struct nsk_record r)
{
	ck_assert_int_eq(nsk_defs__write(d, &r, collect, NULL), 0);
}

static void expect(int i, uint32_t type, uint64_t id)
{
	ck_assert_int_lt(i, nout);
	ck_assert_uint_eq(out[i].type, type);
	ck_assert_uint_eq(out[i].id, id);
}

START_TEST(segments_carry_what_they_use)
{
	static const uint64_t frames[] = { 1, 2 };
	struct nsk_record r;
	struct nsk_defs *d;
	int n;

	ck_assert_int_eq(nsk_defs__new(&d), 0);
	r = (struct nsk_record){ .type = NSK_REC_META };
	r.meta.key = (struct nsk_bytes){ (const uint8_t *)"host", 4 };
	r.meta.value = (struct nsk_bytes){ (const uint8_t *)"vm", 2 };
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_PROCESS };
	r.process.pid = 10;
	r.process.how = NSK_PROC_LAUNCHED;
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_PROCESS };
	r.process.pid = 11;
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_STRING };
	r.string.id = 1;
	r.string.str = (struct nsk_bytes){ (const uint8_t *)"/bin/x", 6 };
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_STRING };
	r.string.id = 2;
	r.string.str = (struct nsk_bytes){ (const uint8_t *)"main", 4 };
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_MAPPING };
	r.mapping.id = 7;
	r.mapping.pid = 10;
	r.mapping.path_id = 1;
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_MAPPING };
	r.mapping.id = 8;	/* no frame uses it: goes with pid 11 */
	r.mapping.pid = 11;
	r.mapping.path_id = 1;
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_FRAME };
	r.frame.id = 1;
	r.frame.mapping_id = 7;
	r.frame.function_id = 2;
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_FRAME };
	r.frame.id = 2;
	r.frame.mapping_id = 7;
	r.frame.inline_parent = 1;
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_STACK };
	r.stack.id = 5;
	r.stack.frames = (struct nsk_u64s){ frames, 2 };
	put(d, r);
	r = (struct nsk_record){ .type = NSK_REC_SAMPLE };
	r.sample.stack_id = 5;
	put(d, r);
	ck_assert_int_eq(nout, 11); /* nothing written twice in one segment */
	r = (struct nsk_record){ .type = NSK_REC_EXIT };
	r.exit.pid = r.exit.tid = 11;
	put(d, r);

	/* segment 2: the header, the living process; then, at its first use,
	 * the stack and what it needs, each once, before it */
	nout = 0;
	ck_assert_int_eq(nsk_defs__new_segment(d, 1000, collect, NULL), 0);
	expect(0, NSK_REC_META, 0);
	expect(1, NSK_REC_PROCESS, 10);
	ck_assert_int_eq(nout, 2);
	r = (struct nsk_record){ .type = NSK_REC_SAMPLE };
	r.sample.stack_id = 5;
	put(d, r);
	put(d, r);
	n = nout;
	ck_assert_int_eq(n, 10); /* the second sample alone */
	expect(2, NSK_REC_STRING, 1); /* mapping 7's path */
	expect(3, NSK_REC_MAPPING, 7);
	expect(4, NSK_REC_STRING, 2); /* frame 1's function */
	expect(5, NSK_REC_FRAME, 1);
	expect(6, NSK_REC_FRAME, 2);
	expect(7, NSK_REC_STACK, 5);
	expect(8, NSK_REC_SAMPLE, 0);
	expect(9, NSK_REC_SAMPLE, 0);
	/* pid 11 and its unused mapping are gone; 10's frames' mapping stays */
	ck_assert_uint_eq(nsk_defs__count(d), 8);
	nsk_defs__free(d);
	nsk_defs__free(NULL);
}
END_TEST

START_TEST(flat_over_many_processes)
{
	struct nsk_record r;
	struct nsk_defs *d;

	ck_assert_int_eq(nsk_defs__new(&d), 0);
	for (uint32_t seg = 0; seg < 50; seg++) {
		for (uint32_t i = 0; i < 100; i++) {
			uint32_t pid = 1000 + seg * 100 + i;

			r = (struct nsk_record){ .type = NSK_REC_PROCESS };
			r.process.pid = pid;
			put(d, r);
			r = (struct nsk_record){ .type = NSK_REC_THREAD };
			r.thread.pid = r.thread.tid = pid;
			put(d, r);
			r = (struct nsk_record){ .type = NSK_REC_MAPPING };
			r.mapping.id = pid;
			r.mapping.pid = pid;
			put(d, r);
			r = (struct nsk_record){ .type = NSK_REC_EXIT };
			r.exit.pid = r.exit.tid = pid;
			put(d, r);
			nout = 0;
		}
		ck_assert_int_eq(nsk_defs__new_segment(d, seg, collect, NULL), 0);
		nout = 0;
		ck_assert_uint_eq(nsk_defs__count(d), 0);
	}
	nsk_defs__free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("segments");
	TCase *tc = tcase_create("segments");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, names_round_trip);
	tcase_add_test(tc, times_relative_and_absolute);
	tcase_add_test(tc, ranges_split);
	tcase_add_test(tc, segments_carry_what_they_use);
	tcase_add_test(tc, flat_over_many_processes);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
