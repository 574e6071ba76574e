/* The sampler's judgement of executables, kept per file identity for a
 * recording (record/alloc_sampler.c): a file judged twice is read once and
 * answered the same; the same inode overwritten in place, or chmod'ed
 * set-user-ID, is judged again. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/alloc_sampler.h"

static char dir[] = "/tmp/nsk-sampler-XXXXXX";

/* Writes the bytes of from over path, in place (same inode). */
static void overwrite(const char *path, const char *from)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(path, "r+b");
	size_t n;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	ck_assert_int_eq(fflush(out), 0);
	ck_assert_int_eq(ftruncate(fileno(out), ftell(out)), 0);
	fclose(out);
}

START_TEST(test_judged_once_per_identity)
{
	struct nsk_alloc_sampler_memo memo = { 0 };
	char prog[sizeof(dir) + 16], why[256], cmd[128];
	struct stat before, after;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	f = fopen(prog, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a program\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(prog, 0755), 0);

	ck_assert_int_eq(nsk_alloc_sampler__program_ok(prog, &memo, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "not an ELF file");
	ck_assert_uint_eq(memo.njudged, 1);
	why[0] = '\0';
	ck_assert_int_eq(nsk_alloc_sampler__program_ok(prog, &memo, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "not an ELF file"); /* answered from the memo */
	ck_assert_uint_eq(memo.njudged, 1);

	/* a dynamic program over it, in place: same inode, judged again */
	ck_assert_int_eq(stat(prog, &before), 0);
	overwrite(prog, "/bin/ls");
	ck_assert_int_eq(stat(prog, &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);
	ck_assert_int_eq(nsk_alloc_sampler__program_ok(prog, &memo, why, sizeof(why)), 1);
	ck_assert_uint_eq(memo.njudged, 2);
	ck_assert_int_eq(nsk_alloc_sampler__program_ok(prog, &memo, why, sizeof(why)), 1);
	ck_assert_uint_eq(memo.njudged, 2);

	/* set-user-ID: its change time moves, so it is judged again */
	ck_assert_int_eq(chmod(prog, 04755), 0);
	ck_assert_int_eq(nsk_alloc_sampler__program_ok(prog, &memo, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "set-user-ID or set-group-ID");

	/* without a memo: the same answers */
	ck_assert_int_eq(nsk_alloc_sampler__program_ok(prog, NULL, why, sizeof(why)), 0);
	ck_assert_int_eq(chmod(prog, 0755), 0);
	ck_assert_int_eq(nsk_alloc_sampler__program_ok(prog, NULL, why, sizeof(why)), 1);
	nsk_alloc_sampler__forget(&memo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("alloc_sampler");
	TCase *tc = tcase_create("alloc_sampler");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_judged_once_per_identity);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
