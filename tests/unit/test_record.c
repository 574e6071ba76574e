/* Unit tests for the pure parts of the recorder: interning, option parsing,
 * kallsyms, maps parsing, and symbolization (with an inlined call) of this
 * very binary. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/stacks/intern.h"
#include "record/stacks/kallsyms.h"
#include "record/procs/maps.h"
#include "record/record.h"
#include "record/stacks/symbols.h"

START_TEST(intern_finds_what_it_added)
{
	struct nsk_intern *t = nsk_intern__new();
	char key[32];

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		ck_assert_int_eq(nsk_intern__find(t, key, strlen(key)), 0);
		ck_assert_int_eq(nsk_intern__add(t, key, strlen(key), (uint64_t)i + 1), 0);
	}
	for (int i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		ck_assert_uint_eq(nsk_intern__find(t, key, strlen(key)), (uint64_t)i + 1);
	}
	ck_assert_uint_eq(nsk_intern__find(t, "key-", 4), 0);
	ck_assert_uint_eq(nsk_intern__find(t, "", 0), 0);
	ck_assert_int_eq(nsk_intern__add(t, "", 0, 77), 0);
	ck_assert_uint_eq(nsk_intern__find(t, "", 0), 77);
	ck_assert_uint_eq(nsk_intern__count(t), 10001);
	nsk_intern__free(t);
	nsk_intern__free(NULL);
}
END_TEST

START_TEST(durations_and_sizes)
{
	uint64_t v;

	ck_assert_int_eq(nsk_parse_duration("10us", 1, &v), 0);
	ck_assert_uint_eq(v, 10000);
	ck_assert_int_eq(nsk_parse_duration("1.5ms", 1, &v), 0);
	ck_assert_uint_eq(v, 1500000);
	ck_assert_int_eq(nsk_parse_duration("2", 1000000000ull, &v), 0);
	ck_assert_uint_eq(v, 2000000000ull);
	ck_assert_int_eq(nsk_parse_duration("2m", 1, &v), 0);
	ck_assert_uint_eq(v, 120000000000ull);
	ck_assert_int_eq(nsk_parse_duration("250ns", 1, &v), 0);
	ck_assert_uint_eq(v, 250);
	ck_assert_int_eq(nsk_parse_duration("", 1, &v), -EINVAL);
	ck_assert_int_eq(nsk_parse_duration("ms", 1, &v), -EINVAL);
	ck_assert_int_eq(nsk_parse_duration("-1s", 1, &v), -EINVAL);
	ck_assert_int_eq(nsk_parse_duration("5q", 1, &v), -EINVAL);
	ck_assert_int_eq(nsk_parse_duration("1e30s", 1, &v), -EINVAL);

	ck_assert_int_eq(nsk_parse_size("4096", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(nsk_parse_size("4k", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(nsk_parse_size("1MiB", &v), 0);
	ck_assert_uint_eq(v, 1u << 20);
	ck_assert_int_eq(nsk_parse_size("2G", &v), 0);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(nsk_parse_size("12x", &v), -EINVAL);
	ck_assert_int_eq(nsk_parse_size("-4", &v), -EINVAL);
	ck_assert_int_eq(nsk_parse_size("4kk", &v), -EINVAL);
}
END_TEST

START_TEST(kallsyms_lookup)
{
	char path[] = "/tmp/nsk-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct nsk_kallsyms *k;
	const char *name, *mod;

	ck_assert_ptr_nonnull(f);
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81000100 t do_one\n"
	      "ffffffff81000200 D some_data\n"
	      "ffffffff81000300 W weak_fn\n"
	      "ffffffffc0000000 t ext4_thing\t[ext4]\n"
	      "0000000000000000 t hidden\n", f);
	fclose(f);
	ck_assert_int_eq(nsk_kallsyms__load(path, &k), 0);
	unlink(path);
	ck_assert_int_eq(nsk_kallsyms__find(k, 0xffffffff80000000ull, &name, &mod), 0);
	ck_assert_int_eq(nsk_kallsyms__find(k, 0xffffffff81000150ull, &name, &mod), 1);
	ck_assert_str_eq(name, "do_one");
	ck_assert_str_eq(mod, "vmlinux");
	/* data symbols are not functions: the text before them holds */
	ck_assert_int_eq(nsk_kallsyms__find(k, 0xffffffff81000250ull, &name, &mod), 1);
	ck_assert_str_eq(name, "do_one");
	ck_assert_int_eq(nsk_kallsyms__find(k, 0xffffffff81000300ull, &name, &mod), 1);
	ck_assert_str_eq(name, "weak_fn");
	ck_assert_int_eq(nsk_kallsyms__find(k, 0xffffffffc0000010ull, &name, &mod), 1);
	ck_assert_str_eq(name, "ext4_thing");
	ck_assert_str_eq(mod, "ext4");
	ck_assert_int_eq(nsk_kallsyms__err(k), 0);
	nsk_kallsyms__free(k);
	/* an unreadable file: an empty table, not an error */
	ck_assert_int_eq(nsk_kallsyms__load("/nonexistent/kallsyms", &k), 0);
	ck_assert_int_eq(nsk_kallsyms__find(k, 0xffffffff81000150ull, &name, &mod), 0);
	ck_assert_int_eq(nsk_kallsyms__err(k), -ENOENT);
	nsk_kallsyms__free(k);
}
END_TEST

/* What a reader without CAP_SYSLOG sees (kptr_restrict): every address 0,
 * told apart from a file that lists nothing. */
START_TEST(kallsyms_hidden)
{
	char path[] = "/tmp/nsk-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct nsk_kallsyms *k;
	const char *name, *mod;

	ck_assert_ptr_nonnull(f);
	fputs("0000000000000000 T _stext\n"
	      "0000000000000000 t do_one\n"
	      "0000000000000000 t ext4_thing\t[ext4]\n", f);
	fclose(f);
	ck_assert_int_eq(nsk_kallsyms__load(path, &k), 0);
	ck_assert_int_eq(nsk_kallsyms__count(k), 0);
	ck_assert_int_eq(nsk_kallsyms__find(k, 0, &name, &mod), 0);
	ck_assert_int_eq(nsk_kallsyms__err(k), -EPERM);
	nsk_kallsyms__free(k);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(nsk_kallsyms__load(path, &k), 0);
	unlink(path);
	ck_assert_int_eq(nsk_kallsyms__err(k), -ENOENT);
	nsk_kallsyms__free(k);
	ck_assert_int_eq(nsk_kallsyms__err(NULL), -ENOENT);
}
END_TEST

START_TEST(maps_keeps_executable_mappings)
{
	const char *text =
		"55d000000000-55d000001000 r--p 00000000 fe:00 123 /nonexistent/app\n"
		"55d000001000-55d000002000 r-xp 00001000 fe:00 123 /nonexistent/app\n"
		"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \n"
		"7f0000100000-7f0000101000 r-xp 00000000 00:00 0 \n"
		"7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0 [vdso]\n";
	struct nsk_symbols *syms;
	struct nsk_aspace *as;
	struct nsk_map *m;

	ck_assert_int_eq(nsk_symbols__new(&syms), 0);
	ck_assert_int_eq(nsk_aspace__parse(42, 7, text, syms, &as), 0);
	ck_assert_uint_eq(as->n, 3);
	ck_assert_uint_eq(as->pid, 42);
	ck_assert_uint_eq(as->since, 7);
	m = nsk_aspace__find(as, 0x55d000001800ull);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(nsk_module__name(m->mod), "app");
	ck_assert_uint_eq(m->pgoff, 0x1000);
	ck_assert_int_eq(m->file, 1);
	/* an unreadable file: no symbols, offsets as they are */
	ck_assert_int_eq(nsk_module__symbolize(m->mod, 0x1800, NULL, 0), 0);
	ck_assert_uint_eq(nsk_module__vaddr(m->mod, 0x1800), 0x1800);
	ck_assert_ptr_null(nsk_aspace__find(as, 0x55d000000800ull)); /* not x */
	m = nsk_aspace__find(as, 0x7ffc00000010ull);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(nsk_module__name(m->mod), "[vdso]");
	ck_assert_str_eq(nsk_module__name(nsk_aspace__find(as, 0x7f0000100010ull)->mod), "[anon]");
	ck_assert_ptr_null(nsk_aspace__find(as, 0x10));
	nsk_aspace__put(as);
	ck_assert_int_eq(nsk_aspace__parse(42, 0, NULL, syms, &as), 0);
	ck_assert_uint_eq(as->n, 0);
	nsk_aspace__put(as);
	nsk_symbols__free(syms);
}
END_TEST

/* outer_fn calls inner_inl, inlined into it, which calls capture: the
 * return address capture sees lies in outer_fn, inside inner_inl. */
static uint64_t captured;

__attribute__((noinline)) static void capture(void)
{
	captured = (uint64_t)__builtin_return_address(0);
	__asm__ volatile("");
}

static inline __attribute__((always_inline)) void inner_inl(void)
{
	capture();
	__asm__ volatile("");
}

__attribute__((noinline)) void outer_fn(void);
__attribute__((noinline)) void outer_fn(void)
{
	inner_inl();
	__asm__ volatile("");
}

START_TEST(symbolizes_this_binary_with_its_inline_call)
{
	struct nsk_symloc locs[NSK_SYMLOC_MAX];
	struct nsk_symbols *syms;
	struct nsk_aspace *as;
	struct nsk_map *m;
	uint64_t vaddr;
	int n;

	outer_fn();
	ck_assert_int_eq(nsk_symbols__new(&syms), 0);
	ck_assert_int_eq(nsk_aspace__read((uint32_t)getpid(), 0, syms, &as), 0);
	m = nsk_aspace__find(as, captured);
	ck_assert_ptr_nonnull(m);
	vaddr = nsk_module__vaddr(m->mod, captured - m->start + m->pgoff);
	n = nsk_module__symbolize(m->mod, vaddr - 1, locs, NSK_SYMLOC_MAX);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(locs[0].function, "inner_inl");
	ck_assert_int_eq(locs[0].inlined, 1);
	ck_assert_ptr_nonnull(strstr(locs[0].file, "test_record.c"));
	ck_assert_str_eq(locs[1].function, "outer_fn");
	ck_assert_int_eq(locs[1].inlined, 0);
	ck_assert_uint_gt(locs[1].line, 0);
	ck_assert_uint_gt(locs[0].line, locs[1].line - 20);
	nsk_aspace__put(as);
	nsk_symbols__free(syms);
}
END_TEST

START_TEST(demangles_cxx_only)
{
	char *d = nsk_demangle("_ZN2ns6Burner4spinEm");

	ck_assert_str_eq(d, "ns::Burner::spin(unsigned long)");
	free(d);
	ck_assert_ptr_null(nsk_demangle("main"));
	ck_assert_ptr_null(nsk_demangle("_Zgarbage"));
	ck_assert_ptr_null(nsk_demangle(NULL));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("record");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, intern_finds_what_it_added);
	tcase_add_test(tc, durations_and_sizes);
	tcase_add_test(tc, kallsyms_lookup);
	tcase_add_test(tc, kallsyms_hidden);
	tcase_add_test(tc, maps_keeps_executable_mappings);
	tcase_add_test(tc, symbolizes_this_binary_with_its_inline_call);
	tcase_add_test(tc, demangles_cxx_only);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
