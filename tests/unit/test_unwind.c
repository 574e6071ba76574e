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

/* The same shape with frame pointers (the test is built without):
 * fp_outer -> fp_inner -> stack_capture, a leaf that sets up no frame. */
/* Not sanitized: ASan moves a VLA and its frame out of the shape. */
static __attribute__((noipa, optimize("no-omit-frame-pointer"), no_sanitize("address"))) void
fp_inner(int n)
{
	volatile char pad[32 + n];

	pad[0] = 1;
	stack_capture();
	sink += pad[0];
}

static __attribute__((noipa, optimize("no-omit-frame-pointer"), no_sanitize("address"))) void
fp_outer(int n)
{
	fp_inner(n + 1);
	sink++;
}

/* The kernel's frame-pointer walk of the captured stack: ip, then the
 * return address of each frame record from rbp on, while the records are
 * in the copy (past the program's frames rbp holds anything: the walk
 * goes on through whatever it finds, as the kernel's does). */
static uint32_t fp_walk(uint64_t *ips, uint32_t max)
{
	uint64_t bp = captured.regs.bp, sp = captured.regs.sp, rec[2];
	uint32_t n = 0;

	ips[n++] = captured.regs.ip;
	while (n < max && bp >= sp && bp - sp + 16 <= captured.len) {
		memcpy(rec, captured.bytes + (bp - sp), sizeof(rec));
		ips[n++] = rec[1];
		bp = rec[0];
	}
	return n;
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

/* Under auto: where the CFI gives a frame a record at rbp its caller comes
 * from the frame-pointer walk, nowhere else, so the frames are libdw's
 * whatever the walk holds past them; and a copy that ends after the
 * frameless leaf's return address still gives the frames with records. */
START_TEST(frame_pointers_only_where_the_cfi_agrees)
{
	uint64_t fp[64], dw[64], mx[64];
	uint32_t rdw[64], rmx[64], ndw, nmx, from_fp, nfp;
	struct nsk_unwinder *u;
	int rc;

	fp_outer(1);
	nfp = fp_walk(fp, 64);
	ck_assert_int_eq(nsk_unwinder__new(&u), 0);
	nsk_unwinder__libdw_only(u, 1);
	rc = nsk_unwinder__unwind(u, self_as, &captured.regs, captured.bytes,
				  captured.len, dw, rdw, 64, &ndw);
	ck_assert_int_ge(rc, 0);
	ck_assert_uint_ge(ndw, 5);
	nsk_unwinder__libdw_only(u, 0);
	rc = nsk_unwinder__unwind_fp(u, self_as, &captured.regs, captured.bytes,
				     captured.len,
				     &(struct nsk_fp_walk){ fp, nfp, 0, 0 }, mx,
				     rmx, 64, &nmx, &from_fp);
	ck_assert_int_ge(rc, 0);
	ck_assert_uint_eq(nmx, ndw);
	ck_assert_mem_eq(mx, dw, ndw * sizeof(*dw));
	/* the leaf's caller from the copy, fp_inner's and fp_outer's callers
	 * from the walk, which skipped the leaf's caller */
	ck_assert_uint_eq(fp[1], dw[2]);
	ck_assert_uint_ge(from_fp, 2);
	ck_assert_uint_eq(rmx[2], rmx[1]);
	ck_assert_uint_eq(rmx[3], rmx[1]);
	/* a copy of no more than the leaf's frame: the frames with records
	 * still come from the walk, and the one past it needs more copy */
	rc = nsk_unwinder__unwind_fp(u, self_as, &captured.regs, captured.bytes,
				     rdw[1],
				     &(struct nsk_fp_walk){ fp, nfp, 0, 0 }, mx,
				     rmx, 64, &nmx, &from_fp);
	ck_assert_int_eq(rc, NSK_UNWIND_COPY_END);
	ck_assert_uint_ge(nmx, 4);
	ck_assert_mem_eq(mx, dw, nmx * sizeof(*dw));
	ck_assert_uint_ge(from_fp, 2);
	ck_assert_uint_eq(rmx[nmx - 1], rdw[1]);
	/* a walk that ends in fp_outer's caller, which keeps no record, is no
	 * end of the stack, even when told to trust ends (that is for ends
	 * in another module: libc's start code) */
	ck_assert_uint_ge(nfp, 3);
	rc = nsk_unwinder__unwind_fp(u, self_as, &captured.regs, captured.bytes,
				     captured.len,
				     &(struct nsk_fp_walk){ fp, 3, 0, 1 }, mx,
				     rmx, 64, &nmx, &from_fp);
	ck_assert_int_ge(rc, 0);
	ck_assert_uint_eq(nmx, ndw);
	ck_assert_mem_eq(mx, dw, nmx * sizeof(*dw));
	/* without frame pointers (but in leaf, whose array needs one) the
	 * walk is garbage past leaf's record: none of that is taken */
	outer(1);
	nfp = fp_walk(fp, 64);
	ck_assert_uint_ge(nfp, 2);
	fp[2] = 0x69666e6f436b742eull; /* text on the stack */
	fp[3] = 0;
	nfp = nfp > 4 ? nfp : 4;
	nsk_unwinder__libdw_only(u, 1);
	rc = nsk_unwinder__unwind(u, self_as, &captured.regs, captured.bytes,
				  captured.len, dw, rdw, 64, &ndw);
	ck_assert_int_ge(rc, 0);
	nsk_unwinder__libdw_only(u, 0);
	rc = nsk_unwinder__unwind_fp(u, self_as, &captured.regs, captured.bytes,
				     captured.len,
				     &(struct nsk_fp_walk){ fp, nfp, 0, 0 }, mx,
				     rmx, 64, &nmx, &from_fp);
	ck_assert_int_ge(rc, 0);
	ck_assert_uint_eq(nmx, ndw);
	ck_assert_mem_eq(mx, dw, ndw * sizeof(*dw));
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
	tcase_add_test(tc, frame_pointers_only_where_the_cfi_agrees);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
