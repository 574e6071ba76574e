/* The sorted symbol index (record/stacks/symtab.c) against libdwfl's own
 * answer, dwfl_module_addrinfo, the oracle it replaces: for addresses all
 * through the code of real files of this machine (a program with a full
 * symbol table, libc, a stripped program with .dynsym only, and a large
 * C++ one when installed), the same symbol, the same offset and the same
 * size, every time. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "record/stacks/symtab.h"

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Compares every step-th address of each executable section of path;
 * returns how many were compared, -1 when the file is absent. */
static long compare_file(const char *path, uint64_t step, long *mismatches)
{
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct nsk_symtab *t;
	Elf_Scn *scn = NULL;
	GElf_Addr bias;
	Elf *elf;
	long checked = 0;

	if (access(path, R_OK))
		return -1;
	dwfl = dwfl_begin(&offline);
	ck_assert_ptr_nonnull(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	ck_assert_msg(mod != NULL, "%s: %s", path, dwfl_errmsg(-1));
	dwfl_report_end(dwfl, NULL, NULL);
	t = nsk_symtab__new(mod);
	ck_assert_msg(t != NULL, "%s: no symbol index", path);
	elf = dwfl_module_getelf(mod, &bias);
	ck_assert_ptr_nonnull(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		for (uint64_t a = sh.sh_addr + bias; a < sh.sh_addr + bias + sh.sh_size;
		     a += step) {
			GElf_Off off = 0;
			GElf_Sym sym;
			uint64_t o2 = 0, size2 = 0;
			const char *want = dwfl_module_addrinfo(mod, a, &off, &sym, NULL,
								NULL, NULL);
			const char *got = nsk_symtab__find(t, a, &o2, &size2);

			checked++;
			if (!want && !got)
				continue;
			if (!want || !got || strcmp(want, got) || off != o2 ||
			    sym.st_size != size2) {
				if (++*mismatches <= 10)
					fprintf(stderr, "%s 0x%llx: dwfl %s+0x%llx/%llu, index %s+0x%llx/%llu\n",
						path, (unsigned long long)a, want ? want : "-",
						(unsigned long long)off,
						(unsigned long long)(want ? sym.st_size : 0),
						got ? got : "-", (unsigned long long)o2,
						(unsigned long long)size2);
			}
		}
	}
	nsk_symtab__free(t);
	dwfl_end(dwfl);
	return checked;
}

START_TEST(test_same_as_libdwfl)
{
	/* the step keeps each file to a few thousand dwfl lookups, which
	 * are linear in the symbol count */
	static const struct {
		const char *path;
		uint64_t step;
		int required;
	} files[] = {
		{ "/proc/self/exe", 7, 1 },			     /* .symtab */
		{ "/lib/x86_64-linux-gnu/libc.so.6", 401, 1 },	     /* .dynsym + more */
		{ "/usr/bin/ls", 61, 1 },			     /* stripped */
		{ "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 797, 0 }, /* C++ */
		{ "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", 65537, 0 },  /* big */
		{ "/usr/bin/node", 262147, 0 },			     /* bigger */
	};
	long mismatches = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		long n = compare_file(files[i].path, files[i].step, &mismatches);

		ck_assert_msg(n != -1 || !files[i].required, "%s is missing", files[i].path);
		if (n >= 0)
			ck_assert_msg(n > 100, "%s: only %ld addresses", files[i].path, n);
	}
	ck_assert_int_eq(mismatches, 0);
}
END_TEST

START_TEST(test_nothing_below_the_first)
{
	uint64_t off = 1, size = 1;

	ck_assert_ptr_null(nsk_symtab__find(NULL, 0x1000, &off, &size));
	ck_assert_ptr_null(nsk_symtab__new(NULL));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symtab");
	TCase *tc = tcase_create("symtab");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_same_as_libdwfl);
	tcase_add_test(tc, test_nothing_below_the_first);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
