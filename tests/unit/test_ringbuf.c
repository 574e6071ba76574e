/* record/ringbuf.c against the kernel's ring buffer: records written by a
 * BPF program (BPF_PROG_TYPE_SYSCALL, run with BPF_PROG_TEST_RUN, copying
 * from an array whose value user space wrote) come
 * out whole and in order, also those that wrap past the end of the data
 * (mapped once, so they are put together); a negative callback stops
 * after its record; skip drops what is there, a ring's worth at most.
 * Needs root (exit 77 without). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "record/ringbuf.h"

#define RING (16u << 10)
#define CTX 8192 /* the program's record, from an array's value */

static int map_fd = -1, arr_fd = -1, prog_fd = -1;

/* v = array[0]; bpf_ringbuf_output(ring, v, v->len & 0x1fff, 0) */
static int load_prog(int arr, int ring)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = 10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = arr },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 0, .off = 7, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 0 },
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 3, .src_reg = 0, .off = 8 },
		{ .code = BPF_ALU64 | BPF_AND | BPF_K, .dst_reg = 3, .imm = 0x1fff },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = ring },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 4, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_output },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[65536];
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_SLEEPABLE,
		    .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	int fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "nsk_rb_test", "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &o);

	if (fd < 0)
		fprintf(stderr, "%s\n", log); /* the verifier's reason */
	return fd;
}

/* One record of len bytes: seq, len, then bytes that follow from seq. */
static void put(uint64_t seq, uint32_t len)
{
	static uint8_t ctx[CTX];
	uint32_t zero = 0;
	LIBBPF_OPTS(bpf_test_run_opts, o);

	memset(ctx, 0, sizeof(ctx));
	memcpy(ctx, &seq, 8);
	memcpy(ctx + 8, &len, 4);
	for (uint32_t i = 16; i < len; i++)
		ctx[i] = (uint8_t)(seq * 7 + i);
	ck_assert_int_eq(bpf_map_update_elem(arr_fd, &zero, ctx, 0), 0);
	ck_assert_int_eq(bpf_prog_test_run_opts(prog_fd, &o), 0);
}

struct seen {
	uint64_t next;	/* the seq expected */
	int bad;	/* records not whole */
	int stop_at;	/* return -1 on this many-th record (0: never) */
	int n;
};

static int check_record(void *ctx, void *data, size_t len)
{
	struct seen *s = ctx;
	const uint8_t *p = data;
	uint64_t seq;
	uint32_t l;

	memcpy(&seq, p, 8);
	memcpy(&l, p + 8, 4);
	if (seq != s->next || l != len)
		s->bad++;
	for (size_t i = 16; i < len; i++)
		if (p[i] != (uint8_t)(seq * 7 + i)) {
			s->bad++;
			break;
		}
	s->next = seq + 1;
	return ++s->n == s->stop_at ? -1 : 0;
}

static void setup(void)
{
	map_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "nsk_rb_test", 0, 0, RING, NULL);
	ck_assert_int_ge(map_fd, 0);
	arr_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "nsk_rb_src", 4, CTX, 1, NULL);
	ck_assert_int_ge(arr_fd, 0);
	prog_fd = load_prog(arr_fd, map_fd);
	ck_assert_msg(prog_fd >= 0, "load: %s", strerror(errno));
}

static void teardown(void)
{
	close(prog_fd);
	close(arr_fd);
	close(map_fd);
}

START_TEST(test_wrapped_records_whole)
{
	struct seen s = { 0 };
	struct nsk_ringbuf *r;
	uint64_t seq = 0;

	ck_assert_int_eq(nsk_ringbuf__new(map_fd, check_record, &s, &r), 0);
	/* data once: the consumer page, the producer page, the data */
	ck_assert_uint_eq(nsk_ringbuf__mapped(r), 2 * (size_t)getpagesize() + RING);
	/* 3,000-byte records, 3 per consume: 3,008 bytes each with the
	 * header, so every 16 KiB or so one straddles the end */
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 3; i++)
			put(seq++, 3000 + (uint32_t)round);
		ck_assert_int_eq(nsk_ringbuf__consume(r), 3);
	}
	ck_assert_int_eq(s.bad, 0);
	ck_assert_uint_eq(s.next, seq);
	nsk_ringbuf__free(r);
}
END_TEST

START_TEST(test_negative_stops_after_its_record)
{
	struct seen s = { .stop_at = 1 };
	struct nsk_ringbuf *r;

	ck_assert_int_eq(nsk_ringbuf__new(map_fd, check_record, &s, &r), 0);
	for (uint64_t i = 0; i < 3; i++)
		put(i, 100);
	ck_assert_int_eq(nsk_ringbuf__consume(r), -1);
	ck_assert_int_eq(s.n, 1);
	s.stop_at = 0;
	ck_assert_int_eq(nsk_ringbuf__consume(r), 2);
	ck_assert_int_eq(s.bad, 0);
	ck_assert_uint_eq(s.next, 3);
	nsk_ringbuf__free(r);
}
END_TEST

START_TEST(test_skip_drops_what_is_there)
{
	struct seen s = { 0 };
	struct nsk_ringbuf *r;

	ck_assert_int_eq(nsk_ringbuf__new(map_fd, check_record, &s, &r), 0);
	for (uint64_t i = 0; i < 5; i++)
		put(i, 3000);
	/* full: the kernel drops the next one (the ring holds 5 of 3,008) */
	put(5, 3000);
	ck_assert_uint_eq(nsk_ringbuf__skip(r), 5);
	ck_assert_int_eq(nsk_ringbuf__consume(r), 0);
	ck_assert_uint_eq(nsk_ringbuf__skip(r), 0);
	s.next = 6;
	put(6, 3000);
	put(7, 3000);
	ck_assert_int_eq(nsk_ringbuf__consume(r), 2);
	ck_assert_int_eq(s.bad, 0);
	nsk_ringbuf__free(r);
}
END_TEST

START_TEST(test_not_a_ring)
{
	struct nsk_ringbuf *r = (void *)1;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "nsk_rb_arr", 4, 4, 1, NULL);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(nsk_ringbuf__new(fd, check_record, NULL, &r), -EINVAL);
	ck_assert_ptr_null(r);
	close(fd);
	nsk_ringbuf__free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ringbuf");
	TCase *tc = tcase_create("ringbuf");
	SRunner *sr;
	int failed, fd;

	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "nsk_rb_probe", 0, 0, RING, NULL);
	if (fd < 0) {
		printf("SKIP: cannot create a BPF ring buffer (%s)\n", strerror(errno));
		return 77;
	}
	close(fd);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_wrapped_records_whole);
	tcase_add_test(tc, test_negative_stops_after_its_record);
	tcase_add_test(tc, test_skip_drops_what_is_there);
	tcase_add_test(tc, test_not_a_ring);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
