/* The index of code scopes (record/stacks/scopes.c) against libdw.
 *
 * Known by construction: this file holds a function with two nested
 * always_inline calls and a marker instruction in the innermost one; at the
 * marker, the symbolizer gives the three frames, innermost first, with the
 * lines of the two calls (dwarf_getscopes alone gave the innermost call and
 * then only the ELF symbol: the middle one was lost).
 *
 * Against libdw, the oracle: for addresses all through the code of this
 * program and of libc (through its debug file, when libc6-dbg is
 * installed), the innermost code DIE is the one dwarf_getscopes finds and
 * the chain above it is the one dwarf_getscopes_die gives for that DIE,
 * every time. */
#include <check.h>
#include <dwarf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "record/stacks/scopes.h"
#include "record/stacks/symbols.h"

extern char nsk_scopes_mark[];
static volatile int sink;
static int inner_call_line, middle_call_line;

static inline __attribute__((always_inline)) void scopes_inner(int x)
{
	sink = x;
	__asm__ volatile(".globl nsk_scopes_mark\nnsk_scopes_mark: nop");
	sink = x + 1;
}

static inline __attribute__((always_inline)) void scopes_middle(int x)
{
	sink = x * 3;
	inner_call_line = __LINE__ + 1;
	scopes_inner(x + 2);
	sink = x * 5;
}

__attribute__((noinline)) void scopes_outer(int x);
__attribute__((noinline)) void scopes_outer(int x)
{
	sink = x - 1;
	middle_call_line = __LINE__ + 1;
	scopes_middle(x);
	sink = x - 2;
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1; /* the first object is the program */
}

START_TEST(test_nested_inlined_calls)
{
	struct nsk_symloc locs[NSK_SYMLOC_MAX];
	struct nsk_symbols *syms;
	struct nsk_module *m;
	uintptr_t bias = 0;
	struct stat st;
	int n;

	scopes_outer(7);
	ck_assert_int_gt(inner_call_line, 0);
	dl_iterate_phdr(main_bias, &bias);
	ck_assert_int_eq(stat("/proc/self/exe", &st), 0);
	setenv("NUSKU_CACHE_DIR", "off", 1);
	ck_assert_int_eq(nsk_symbols__new(&syms), 0);
	m = nsk_symbols__module(syms, "test_scopes", "/proc/self/exe", st.st_ino);
	ck_assert_ptr_nonnull(m);
	n = nsk_module__symbolize(m, (uintptr_t)nsk_scopes_mark - bias, locs,
				  NSK_SYMLOC_MAX);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(locs[0].function, "scopes_inner");
	ck_assert_int_eq(locs[0].inlined, 1);
	ck_assert_str_eq(locs[1].function, "scopes_middle");
	ck_assert_int_eq(locs[1].inlined, 1);
	ck_assert_int_eq(locs[1].line, inner_call_line);
	ck_assert_str_eq(locs[2].function, "scopes_outer");
	ck_assert_int_eq(locs[2].inlined, 0);
	ck_assert_int_eq(locs[2].line, middle_call_line);
	ck_assert_ptr_nonnull(strstr(locs[2].file, "test_scopes.c"));
	nsk_symbols__free(syms);
}
END_TEST

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int is_code(Dwarf_Die *d)
{
	int tag = dwarf_tag(d);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* libdw's answer at pc: the innermost code DIE dwarf_getscopes finds, then
 * the code DIEs above it in the tree up to the first subprogram. */
static int oracle(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Off *out, int max)
{
	Dwarf_Die *sc = NULL, *chain = NULL;
	int ns = dwarf_getscopes(cu, pc, &sc), i = 0, n = 0, nc;

	while (i < ns && !is_code(&sc[i]))
		i++;
	if (i >= ns) {
		free(sc);
		return 0;
	}
	nc = dwarf_getscopes_die(&sc[i], &chain);
	for (int k = 0; k < nc && n < max; k++) {
		if (!is_code(&chain[k]))
			continue;
		out[n++] = dwarf_dieoffset(&chain[k]);
		if (dwarf_tag(&chain[k]) == DW_TAG_subprogram)
			break;
	}
	free(sc);
	free(chain);
	return n;
}

/* Compares every step-th address of each executable section of path;
 * returns how many addresses had a scope, -1 when the file or its DWARF is
 * absent. */
static long compare_file(const char *path, uint64_t step, long *mismatches)
{
	struct nsk_scopes *s;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf_Scn *scn = NULL;
	GElf_Addr bias, dbias;
	Elf *elf;
	long found = 0;

	if (access(path, R_OK))
		return -1;
	dwfl = dwfl_begin(&offline);
	ck_assert_ptr_nonnull(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	ck_assert_msg(mod != NULL, "%s: %s", path, dwfl_errmsg(-1));
	dwfl_report_end(dwfl, NULL, NULL);
	if (!dwfl_module_getdwarf(mod, &dbias)) {
		dwfl_end(dwfl);
		return -1;
	}
	s = nsk_scopes__new();
	ck_assert_ptr_nonnull(s);
	elf = dwfl_module_getelf(mod, &bias);
	ck_assert_ptr_nonnull(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		for (uint64_t a = sh.sh_addr + bias; a < sh.sh_addr + bias + sh.sh_size;
		     a += step) {
			Dwarf_Off want[NSK_SYMLOC_MAX];
			Dwarf_Die got[NSK_SYMLOC_MAX];
			Dwarf_Addr cubias;
			Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &cubias);
			int nw, ng, same;

			if (!cu)
				continue;
			nw = oracle(cu, a - cubias, want, NSK_SYMLOC_MAX);
			ng = nsk_scopes__at(s, cu, a - cubias, got, NSK_SYMLOC_MAX);
			ck_assert_int_ge(ng, 0);
			same = nw == ng;
			for (int k = 0; same && k < ng; k++)
				same = want[k] == dwarf_dieoffset(&got[k]);
			found += ng > 0;
			if (!same && ++*mismatches <= 10)
				fprintf(stderr, "%s 0x%llx: libdw %d scopes (innermost 0x%llx), index %d (0x%llx)\n",
					path, (unsigned long long)a, nw,
					nw ? (unsigned long long)want[0] : 0ull, ng,
					ng ? (unsigned long long)dwarf_dieoffset(&got[0]) : 0ull);
		}
	}
	nsk_scopes__free(s);
	dwfl_end(dwfl);
	return found;
}

START_TEST(test_same_as_libdw)
{
	static const struct {
		const char *path;
		uint64_t step;
		int required;
	} files[] = {
		{ "/proc/self/exe", 3, 1 },
		{ "/lib/x86_64-linux-gnu/libc.so.6", 1021, 0 }, /* libc6-dbg */
		{ "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 61, 0 },
	};
	long mismatches = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		long n = compare_file(files[i].path, files[i].step, &mismatches);

		ck_assert_msg(n != -1 || !files[i].required, "%s: no DWARF", files[i].path);
		if (n >= 0)
			ck_assert_msg(n > 50, "%s: only %ld addresses in a scope",
				      files[i].path, n);
	}
	ck_assert_int_eq(mismatches, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("scopes");
	TCase *tc = tcase_create("scopes");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_nested_inlined_calls);
	tcase_add_test(tc, test_same_as_libdw);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
