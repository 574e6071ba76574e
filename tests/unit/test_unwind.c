/* The DWARF unwinder on a stack it can check: this test, built with
 * -fomit-frame-pointer, copies its own registers and stack the way the BPF
 * side does and asks the unwinder for main -> outer -> inner -> leaf. */
#include <check.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/procs/maps.h"
#include "record/stacks/symbols.h"
#include "record/stacks/unwind.h"
#include "tests/unit/stack_capture.h"

static volatile int sink;

static __attribute__((noipa)) void leaf(int n)
{
	volatile char pad[64 + n];

	pad[0] = 1;
	stack_capture();
	sink += pad[0];
}

static __attribute__((noipa)) void inner(int n)
{
	leaf(n + 1);
	sink++;
}

static __attribute__((noipa)) void outer(int n)
{
	inner(n + 1);
	sink++;
}

static const char *name_of(Dwfl *dwfl, uint64_t pc)
{
	Dwfl_Module *m = dwfl_addrmodule(dwfl, pc);
	const char *s = m ? dwfl_module_addrname(m, pc) : NULL;

	return s ? s : "?";
}

static struct nsk_symbols *syms;
static struct nsk_aspace *self_as;

/* This process's address space, read the way the recorder reads it. */
static void setup(void)
{
	ck_assert_int_eq(nsk_symbols__new(&syms), 0);
	ck_assert_int_eq(nsk_aspace__read(getpid(), 0, syms, &self_as), 0);
}

static void teardown(void)
{
	nsk_aspace__put(self_as);
	nsk_symbols__free(syms);
}

START_TEST(unwinds_without_frame_pointers)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	const char *want[] = { "stack_capture", "leaf", "inner", "outer" };
	struct nsk_unwinder *u;
	uint64_t ips[64];
	uint32_t reach[64], n, n2;
	int saw_main = 0;
	Dwfl *dwfl;
	int rc;

	outer(1);
	ck_assert_int_eq(nsk_unwinder__new(&u), 0);
	nsk_unwinder__libdw_only(u, 1);
	rc = nsk_unwinder__unwind(u, self_as, &captured.regs, captured.bytes,
				  captured.len, ips,
				  reach, 64, &n);
	ck_assert_int_ge(rc, 0);
	ck_assert_uint_ge(n, 5);
	/* The cached rules walk as libdw does: same frames, same reach, same
	 * end, for the whole copy and for copies cut at every frame. */
	nsk_unwinder__libdw_only(u, 0);
	for (uint32_t cut = 0; cut <= n; cut++) {
		size_t len = cut < n ? reach[cut] : captured.len;
		uint64_t a[64], b[64];
		uint32_t ra[64], rb[64], na, nb;
		int rca, rcb;

		nsk_unwinder__libdw_only(u, 1);
		rca = nsk_unwinder__unwind(u, self_as, &captured.regs,
					   captured.bytes, len, a,
					   ra, 64, &na);
		nsk_unwinder__libdw_only(u, 0);
		rcb = nsk_unwinder__unwind(u, self_as, &captured.regs,
					   captured.bytes, len, b,
					   rb, 64, &nb);
		/* 2: the same cut, with the frame-pointer walk's place */
		ck_assert_int_eq(rcb == 2 ? 1 : rcb, rca);
		ck_assert_uint_eq(nb, na);
		ck_assert_mem_eq(b, a, na * sizeof(*a));
		ck_assert_mem_eq(rb, ra, na * sizeof(*ra));
	}
	ck_assert_uint_gt(nsk_unwinder__stats(u)->fast, n / 2);
	/* The leaf needs no stack; each caller needs more, within the copy,
	 * and a copy cut at a frame's reach still gives that frame. */
	ck_assert_uint_eq(reach[0], 0);
	for (uint32_t i = 1; i < n; i++) {
		ck_assert_uint_ge(reach[i], reach[i - 1]);
		ck_assert_uint_le(reach[i], captured.len);
	}
	ck_assert_uint_gt(reach[3], 0);
	{
		uint64_t ips2[64];

		rc = nsk_unwinder__unwind(u, self_as, &captured.regs, captured.bytes,
					  reach[3], ips2, NULL, 64, &n2);
		ck_assert_int_eq(rc, 1);
		ck_assert_uint_ge(n2, 4);
		ck_assert_mem_eq(ips2, ips, 4 * sizeof(*ips));
	}

	dwfl = dwfl_begin(&cb);
	dwfl_report_begin(dwfl);
	ck_assert_int_eq(dwfl_linux_proc_report(dwfl, getpid()), 0);
	dwfl_report_end(dwfl, NULL, NULL);
	/* ips[0] is where stack_capture was; the rest are return addresses, so
	 * look up the call instruction just before each. */
	for (int i = 0; i < 4; i++)
		ck_assert_str_eq(name_of(dwfl, ips[i] - (i > 0)), want[i]);
	/* The walk goes on through check's runner into main. */
	for (uint32_t i = 4; i < n; i++)
		saw_main |= !strcmp(name_of(dwfl, ips[i] - 1), "main");
	ck_assert_msg(saw_main, "main not reached in %u frames", n);
	dwfl_end(dwfl);
	nsk_unwinder__free(u);
}
END_TEST

START_TEST(short_copy_is_truncated_not_invented)
{
	struct nsk_unwinder *u;
	uint64_t ips[64];
	uint32_t n;
	int rc;

	outer(1);
	ck_assert_int_eq(nsk_unwinder__new(&u), 0);
	/* Only the first bytes of stack_capture's own frame: the walk must stop
	 * early and say so. */
	rc = nsk_unwinder__unwind(u, self_as, &captured.regs, captured.bytes,
				  16, ips, NULL, 64,
				  &n);
	ck_assert_int_eq(rc, 1);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_lt(n, 4);
	ck_assert_uint_eq(nsk_unwinder__stats(u)->truncated, 1);
	nsk_unwinder__free(u);
}
END_TEST

START_TEST(empty_address_space_fails_cleanly)
{
	struct nsk_aspace *gone;
	struct nsk_unwinder *u;
	uint64_t ips[8];
	uint32_t n = 99;

	outer(1);
	ck_assert_int_eq(nsk_unwinder__new(&u), 0);
	/* pid_max is at most 2^22: this pid cannot exist, its maps are
	 * empty, as for a process that exited before it was read. */
	ck_assert_int_eq(nsk_aspace__read(1u << 23, 0, syms, &gone), 0);
	ck_assert_int_lt(nsk_unwinder__unwind(u, gone, &captured.regs,
					      captured.bytes,
					      captured.len, ips, NULL, 8, &n), 0);
	ck_assert_uint_eq(n, 0);
	nsk_aspace__put(gone);
	nsk_unwinder__free(u);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("dwarf");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, unwinds_without_frame_pointers);
	tcase_add_test(tc, short_copy_is_truncated_not_invented);
	tcase_add_test(tc, empty_address_space_fails_cleanly);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
