/* Function ranges from .eh_frame (record/stacks/fde_ranges.c) on this test's
 * own file, whose symbol table says where each function really starts: an
 * address anywhere in a function, past its prologue too, gives the
 * function's start; data gives none. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "record/stacks/fde_ranges.h"

static volatile long sink;
extern const char rodata_probe[64];
const char rodata_probe[64] = "not code";

/* Functions with a frame to set up, so their CFI has several rows. */
#define PROBE(name, k)                                                   \
	__attribute__((noinline)) long name(long n)                      \
	{                                                                \
		volatile long pad[16];                                   \
		for (long i = 0; i < n; i++)                             \
			pad[i & 15] = i * (k);                           \
		sink += pad[n & 15];                                     \
		return sink;                                             \
	}
long probe_one(long n);
long probe_two(long n);
long probe_three(long n);
PROBE(probe_one, 3)
PROBE(probe_two, 5)
PROBE(probe_three, 7)

START_TEST(test_every_address_of_a_function)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), checked = 0;
	struct nsk_fde_ranges *r;
	Elf_Scn *scn = NULL;
	Elf *elf;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ck_assert_ptr_nonnull(elf);
	r = nsk_fde_ranges__new(elf);
	ck_assert_ptr_nonnull(r);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			uint64_t start, end;
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(name, "rodata_probe")) {
				ck_assert_int_eq(nsk_fde_ranges__find(r, sym.st_value + 8,
								      &start, &end), -ENOENT);
				checked++;
			}
			if (strncmp(name, "probe_", 6) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			for (uint64_t a = sym.st_value; a < sym.st_value + sym.st_size; a++) {
				ck_assert_msg(!nsk_fde_ranges__find(r, a, &start, &end),
					      "%s+0x%llx: no range", name,
					      (unsigned long long)(a - sym.st_value));
				ck_assert_msg(start == sym.st_value,
					      "%s+0x%llx: starts at 0x%llx, not 0x%llx",
					      name, (unsigned long long)(a - sym.st_value),
					      (unsigned long long)start,
					      (unsigned long long)sym.st_value);
				ck_assert_uint_gt(end, a);
			}
			checked++;
		}
	}
	ck_assert_int_eq(checked, 4);
	ck_assert_int_eq(probe_one(3) + probe_two(4) + probe_three(5) != 0, 1);
	ck_assert_int_eq(rodata_probe[0], 'n');
	nsk_fde_ranges__free(r);
	elf_end(elf);
	close(fd);
}
END_TEST

START_TEST(test_no_cfi)
{
	ck_assert_ptr_null(nsk_fde_ranges__new(NULL));
	nsk_fde_ranges__free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fde_ranges");
	TCase *tc = tcase_create("fde_ranges");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_every_address_of_a_function);
	tcase_add_test(tc, test_no_cfi);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
