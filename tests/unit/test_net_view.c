/* Unit tests of --by retransmit: records with known times go straight into
 * the loader (no kernel, no randomness), and the view's rows are compared
 * exactly with the answers worked out below.
 *
 * The timeline (ns), client thread 10 of process 10, connection 1
 * 127.0.0.1:40000 -> 127.0.0.1:5000:
 *   100  owner learned at connect (stack "connect <- main")
 *   105  retransmit (a SYN): no wait contains it -> charged to the owner's
 *        stack then, "connect <- main", waited 0
 *   130  owner learned at recv (stack "fetch_reply <- main")
 *   190..250  off CPU, reason network (stack "schedule / fetch_reply <- main")
 *   200, 210  retransmits: both in that interval -> one row, 2
 *        retransmits, waited 60 (once), explained 60 / (60 + 100) = 37.5%
 *   400..500  off CPU, network, no retransmit: only in the share's base
 * Connection 2 (the listener, process 10) has no retransmit: a row of zeros.
 * Without the offcpu records, a slow recvfrom on a socket (195..255) takes
 * their place (waited_in "syscall").
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/db.h"
#include "report/load.h"
#include "report/report.h"

static sqlite3 *db;
static struct nsk_load *ld;
static char *out;
static size_t outlen;

static void rec(struct nsk_record *r)
{
	ck_assert_int_eq(nsk_load__record(ld, r), 0);
}

static void string(uint64_t id, const char *s)
{
	struct nsk_record r = { .type = NSK_REC_STRING };

	r.string.id = id;
	r.string.str = (struct nsk_bytes){ (const uint8_t *)s, (uint32_t)strlen(s) };
	rec(&r);
}

static void frame(uint64_t id, uint64_t fn, uint64_t module, uint32_t flags)
{
	struct nsk_record r = { .type = NSK_REC_FRAME };

	r.frame.id = id;
	r.frame.addr = 0x1000 * id;
	r.frame.function_id = fn;
	r.frame.module_id = module;
	r.frame.flags = flags;
	rec(&r);
}

static void stack(uint64_t id, const uint64_t *frames, uint32_t n)
{
	struct nsk_record r = { .type = NSK_REC_STACK };

	r.stack.id = id;
	r.stack.frames = (struct nsk_u64s){ frames, n };
	rec(&r);
}

static void conn(uint64_t id, uint32_t sport, uint32_t dport, uint64_t t,
		 uint32_t state, uint64_t stack_id)
{
	static const uint8_t lo[4] = { 127, 0, 0, 1 }, any[4] = { 0 };
	struct nsk_record r = { .type = NSK_REC_CONN };

	r.conn.id = id;
	r.conn.family = 2;
	r.conn.saddr = (struct nsk_bytes){ lo, 4 };
	r.conn.daddr = (struct nsk_bytes){ dport ? lo : any, 4 };
	r.conn.sport = sport;
	r.conn.dport = dport;
	r.conn.pid = r.conn.tid = 10;
	r.conn.time = t;
	r.conn.state = state;
	r.conn.stack_id = stack_id;
	rec(&r);
}

static void retransmit(uint64_t t, uint32_t kind)
{
	struct nsk_record r = { .type = NSK_REC_RETRANSMIT };

	r.retransmit.time = t;
	r.retransmit.conn_id = 1;
	r.retransmit.pid = r.retransmit.tid = 10;
	r.retransmit.kind = kind;
	r.retransmit.state = 1;
	r.retransmit.srtt_us = 40;
	r.retransmit.rto_us = 200000;
	rec(&r);
}

static void offcpu(uint64_t t, uint64_t d)
{
	struct nsk_record r = { .type = NSK_REC_OFFCPU };

	r.offcpu.time = t;
	r.offcpu.duration = d;
	r.offcpu.pid = r.offcpu.tid = 10;
	r.offcpu.reason = NSK_OFFCPU_NETWORK;
	r.offcpu.stack_id = 3;
	r.offcpu.syscall = 45;
	rec(&r);
}

static void slow_recv(uint64_t t, uint64_t d)
{
	static const uint64_t args[6] = { 3 };
	struct nsk_record r = { .type = NSK_REC_SYSCALL_SLOW };

	r.syscall_slow.time = t;
	r.syscall_slow.duration = d;
	r.syscall_slow.pid = r.syscall_slow.tid = 10;
	r.syscall_slow.nr = 45;
	r.syscall_slow.ret = 64;
	r.syscall_slow.args = (struct nsk_u64s){ args, 6 };
	r.syscall_slow.target_id = 20;
	r.syscall_slow.stack_id = 1;
	rec(&r);
}

/* The recording of the timeline; waits: 'o' off-CPU intervals, 's' a slow
 * syscall, 0 none. */
static void load(int waits)
{
	static const uint64_t s1[] = { 1, 2 }, s2[] = { 3, 2 }, s3[] = { 4, 1, 2 };
	struct nsk_record p = { .type = NSK_REC_PROCESS };
	struct nsk_record end = { .type = NSK_REC_END };

	ck_assert_int_eq(nsk_db__open(&db), 0);
	ck_assert_int_eq(nsk_load__new(db, &ld), 0);
	p.process.pid = 10;
	p.process.how = NSK_PROC_LAUNCHED;
	p.process.comm = (struct nsk_bytes){ (const uint8_t *)"client", 6 };
	rec(&p);
	string(1, "fetch_reply");
	string(2, "main");
	string(3, "connect");
	string(4, "schedule");
	string(5, "app");
	string(6, "[kernel]");
	string(20, "socket:[1234]");
	frame(1, 1, 5, 0);
	frame(2, 2, 5, 0);
	frame(3, 3, 5, 0);
	frame(4, 4, 6, NSK_FRAME_KERNEL);
	stack(1, s1, 2); /* fetch_reply <- main */
	stack(2, s2, 2); /* connect <- main */
	stack(3, s3, 3); /* schedule <- fetch_reply <- main */
	conn(2, 5000, 0, 90, 10, 0);
	conn(1, 40000, 5000, 100, 2, 2);
	retransmit(105, 1);
	conn(1, 40000, 5000, 130, 1, 1);
	if (waits == 'o') {
		offcpu(190, 60);
		offcpu(400, 100);
	}
	if (waits == 's')
		slow_recv(195, 60);
	retransmit(200, 3);
	retransmit(210, 1);
	end.end.time = 600;
	rec(&end);
	ck_assert_int_eq(nsk_load__finish(ld, "test", NULL, NULL), 0);
	nsk_load__free(ld);
}

static void run(void)
{
	struct nsk_report_opts opts;
	struct nsk_report rep;
	const struct nsk_view *v = nsk_view__find("retransmit");

	ck_assert_ptr_nonnull(v);
	memset(&opts, 0, sizeof(opts));
	opts.since = opts.until = -1;
	opts.limit = -1;
	memset(&rep, 0, sizeof(rep));
	rep.db = db;
	rep.opts = &opts;
	rep.out.fmt = NSK_FMT_CSV;
	rep.out.f = open_memstream(&out, &outlen);
	ck_assert_ptr_nonnull(rep.out.f);
	ck_assert_int_eq(nsk_filter__apply(&rep), 0);
	ck_assert_msg(!v->run(&rep, v), "view failed: %s", rep.err);
	fclose(rep.out.f);
}

static void teardown(void)
{
	sqlite3_close(db);
	free(out);
	out = NULL;
}

#define HEADER "local,remote,retransmits,pid,comm,tid,waited_ns," \
	       "explained_pct,srtt_us,rto_us,waited_in,stack\n"

START_TEST(linked_to_offcpu)
{
	load('o');
	run();
	ck_assert_str_eq(out, HEADER
		"127.0.0.1:40000,127.0.0.1:5000,2,10,client,10,60,37.5,40,200000,offcpu,schedule <- fetch_reply <- main\n"
		"127.0.0.1:40000,127.0.0.1:5000,1,10,client,10,0,,40,200000,owner,connect <- main\n"
		"127.0.0.1:5000,0.0.0.0:0,0,10,client,10,0,,,,owner,[no stack]\n");
}
END_TEST

START_TEST(linked_to_slow_syscall)
{
	load('s');
	run();
	ck_assert_str_eq(out, HEADER
		"127.0.0.1:40000,127.0.0.1:5000,2,10,client,10,60,100,40,200000,syscall,fetch_reply <- main\n"
		"127.0.0.1:40000,127.0.0.1:5000,1,10,client,10,0,,40,200000,owner,connect <- main\n"
		"127.0.0.1:5000,0.0.0.0:0,0,10,client,10,0,,,,owner,[no stack]\n");
}
END_TEST

START_TEST(owner_only)
{
	/* Neither signal: each retransmit gets the owner's stack as it was
	 * learned before it. */
	load(0);
	run();
	ck_assert_str_eq(out, HEADER
		"127.0.0.1:40000,127.0.0.1:5000,2,10,client,10,0,,40,200000,owner,fetch_reply <- main\n"
		"127.0.0.1:40000,127.0.0.1:5000,1,10,client,10,0,,40,200000,owner,connect <- main\n"
		"127.0.0.1:5000,0.0.0.0:0,0,10,client,10,0,,,,owner,[no stack]\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("net_view");
	TCase *tc = tcase_create("retransmit");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, linked_to_offcpu);
	tcase_add_test(tc, linked_to_slow_syscall);
	tcase_add_test(tc, owner_only);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
