/* The kernel image's symbols kept between recordings
 * (record/stacks/kallsyms_cache.c) against the whole of /proc/kallsyms,
 * the oracle: a table read from the cache answers every address the way
 * the whole table does (at each symbol, one byte either side, and between
 * symbols), reading /proc/kallsyms only for addresses outside the image;
 * a cache file that is cut short, of another boot, writable by others or
 * a symbolic link is not read (and the link is replaced, not followed).
 * An address the session names (a BPF program's) needs no whole read.  Needs the addresses (root); skips without. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/stacks/kallsyms.h"
#include "record/stacks/kallsyms_int.h"

static char dir[64], file[128];

static struct nsk_kallsyms *cached(void)
{
	struct nsk_kallsyms *k = NULL;

	ck_assert_int_eq(nsk_kallsyms__load_cached(&k), 0);
	ck_assert_ptr_nonnull(k);
	return k;
}

/* 1 when k and want answer addr alike */
static int same(const struct nsk_kallsyms *k, const struct nsk_kallsyms *want,
		uint64_t addr)
{
	const char *n1 = NULL, *m1 = NULL, *n2 = NULL, *m2 = NULL;
	int a = nsk_kallsyms__find(k, addr, &n1, &m1);
	int b = nsk_kallsyms__find(want, addr, &n2, &m2);

	if (a != b)
		return 0;
	return !a || (!strcmp(n1, n2) && !strcmp(m1, m2));
}

START_TEST(test_same_answers)
{
	struct nsk_kallsyms *full = NULL, *later = NULL, *first, *k;
	size_t n, outside = 0, inside = 0, churned = 0;
	uint64_t r1, r2, w1, w2;

	ck_assert_int_eq(nsk_kallsyms__load(NULL, &full), 0);
	if (nsk_kallsyms__err(full)) {
		nsk_kallsyms__free(full);
		return; /* main() skipped already */
	}
	first = cached(); /* nothing kept yet: read whole, and kept */
	ck_assert_uint_eq(first->core_hi, 0);
	ck_assert_int_eq(access(file, R_OK), 0);
	k = cached();
	ck_assert_uint_ne(k->core_hi, 0);
	ck_assert_uint_lt(k->n, full->n + 1);
	ck_assert_int_eq(nsk_kallsyms__rodata(k, &r1, &r2), nsk_kallsyms__rodata(full, &w1, &w2));
	ck_assert_uint_eq(r1, w1);
	ck_assert_uint_eq(r2, w2);
	n = nsk_kallsyms__count(full);
	/* the image's addresses first: answered without /proc/kallsyms */
	for (int pass = 0; pass < 2; pass++) {
		if (pass) {
			/* BPF programs and modules outside the image come and
			 * go while the suite runs: k's whole read (now, at its
			 * first question outside) and full (earlier) may differ
			 * where something was loaded or freed between them.  A
			 * second whole read just after k's tells those apart:
			 * only what full and it agree on is compared. */
			for (size_t i = 0; i < n; i++) {
				uint64_t a;
				const char *name, *mod;

				nsk_kallsyms__at(full, i, &a, &name, &mod);
				if (!(a >= k->core_lo && a + 1 < k->core_hi && a > k->core_lo)) {
					nsk_kallsyms__find(k, a, &name, &mod);
					break;
				}
			}
			ck_assert_int_eq(nsk_kallsyms__load(NULL, &later), 0);
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t a, next;
			const char *name, *mod;
			int in;

			nsk_kallsyms__at(full, i, &a, &name, &mod);
			in = a >= k->core_lo && a + 1 < k->core_hi && a > k->core_lo;
			if (in != !pass)
				continue;
			next = i + 1 < n ? (nsk_kallsyms__at(full, i + 1, &next, &name, &mod), next) : a + 64;
			if (pass && !(same(later, full, a) && same(later, full, a - 1) &&
				      same(later, full, a + 1) &&
				      same(later, full, a + (next - a) / 2))) {
				churned++;
				continue;
			}
			ck_assert_msg(same(k, full, a) && same(k, full, a - 1) &&
				      same(k, full, a + 1) && same(k, full, a + (next - a) / 2),
				      "different answers near %#llx", (unsigned long long)a);
			if (pass)
				outside++;
			else
				inside++;
		}
		if (!pass)
			ck_assert_int_eq(k->whole->tried, 0);
	}
	ck_assert_uint_gt(inside, 10000);
	ck_assert_int_eq(k->whole->tried, outside + churned > 0);
	/* outside the image: against the read just after the cache's, where
	 * the one before agrees (the highest symbol is a BPF program's) */
	for (int i = 0; i < 3; i++) {
		uint64_t a = i == 2 ? UINT64_MAX : (uint64_t)i;

		if (same(later, full, a))
			ck_assert_msg(same(k, later, a), "different answers at %#llx",
				      (unsigned long long)a);
	}
	printf("%zu symbols inside the image, %zu outside, answered alike (%zu outside changed meanwhile)\n",
	       inside, outside, churned);
	nsk_kallsyms__free(k);
	nsk_kallsyms__free(first);
	nsk_kallsyms__free(full);
	nsk_kallsyms__free(later);
}
END_TEST

static uint64_t fake_addr;

static int fake_outside(void *ctx, uint64_t addr, const char **name,
			const char **module)
{
	(void)ctx;
	if (addr != fake_addr)
		return 0;
	*name = "bpf_prog_0123456789abcdef_fake";
	*module = "bpf";
	return 1;
}

/* What the outside hook names needs no /proc/kallsyms; the rest does. */
START_TEST(test_outside_hook)
{
	struct nsk_kallsyms *k;
	const char *name, *mod;

	nsk_kallsyms__free(cached()); /* a good file in place */
	k = cached();
	ck_assert_uint_ne(k->core_hi, 0);
	nsk_kallsyms__set_outside(k, fake_outside, NULL);
	fake_addr = k->core_hi + (1 << 20);
	ck_assert_int_eq(nsk_kallsyms__find(k, fake_addr, &name, &mod), 1);
	ck_assert_str_eq(name, "bpf_prog_0123456789abcdef_fake");
	ck_assert_str_eq(mod, "bpf");
	ck_assert_int_eq(k->whole->tried, 0);
	nsk_kallsyms__find(k, fake_addr + 1, &name, &mod);
	ck_assert_int_eq(k->whole->tried, 1);
	nsk_kallsyms__free(k);
}
END_TEST

/* a table read whole, i.e. the cache file was not taken */
static void not_taken(const char *what)
{
	struct nsk_kallsyms *k = cached();

	ck_assert_msg(k->core_hi == 0, "%s: read", what);
	nsk_kallsyms__free(k);
}

START_TEST(test_refused_files)
{
	struct nsk_kallsyms *k;
	char link[160];
	struct stat st, before;
	int fd;

	nsk_kallsyms__free(cached()); /* a good file in place */
	k = cached();
	if (!k->core_hi) { /* addresses hidden: nothing kept */
		nsk_kallsyms__free(k);
		return;
	}
	nsk_kallsyms__free(k);
	ck_assert_int_eq(stat(file, &st), 0);
	/* cut short */
	ck_assert_int_eq(truncate(file, st.st_size - 1), 0);
	not_taken("cut short"); /* and written again, whole */
	k = cached();
	ck_assert_uint_ne(k->core_hi, 0);
	nsk_kallsyms__free(k);
	/* another boot's */
	fd = open(file, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "x", 1, 8), 1);
	close(fd);
	not_taken("another boot's");
	/* writable by others */
	ck_assert_int_eq(chmod(file, 0666), 0);
	not_taken("writable by others");
	/* a symbolic link to a good file */
	snprintf(link, sizeof(link), "%s.good", file);
	ck_assert_int_eq(chmod(file, 0600), 0);
	nsk_kallsyms__free(cached()); /* rewrites it */
	ck_assert_int_eq(rename(file, link), 0);
	ck_assert_int_eq(truncate(link, 200), 0); /* would read: cut short */
	ck_assert_int_eq(stat(link, &st), 0);
	ck_assert_int_eq(symlink(link, file), 0);
	not_taken("a symbolic link");
	/* the link replaced by a file of its own, not written through */
	ck_assert_int_eq(stat(link, &before), 0);
	ck_assert_int_eq(before.st_size, 200);
	ck_assert(before.st_mtim.tv_nsec == st.st_mtim.tv_nsec &&
		  before.st_mtim.tv_sec == st.st_mtim.tv_sec);
	ck_assert_int_eq(lstat(file, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
}
END_TEST

int main(void)
{
	struct nsk_kallsyms *probe = NULL;
	Suite *s = suite_create("kallsyms_cache");
	TCase *tc = tcase_create("kallsyms_cache");
	SRunner *sr;
	int failed;

	if (nsk_kallsyms__load(NULL, &probe) || nsk_kallsyms__err(probe)) {
		fprintf(stderr, "SKIP: /proc/kallsyms shows no addresses (needs root)\n");
		nsk_kallsyms__free(probe);
		return 77;
	}
	nsk_kallsyms__free(probe);
	snprintf(dir, sizeof(dir), "/tmp/nusku-kc.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	strcat(dir, "/c");
	snprintf(file, sizeof(file), "%s/kernel/kallsyms", dir);
	setenv("NUSKU_CACHE_DIR", dir, 1);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_same_answers);
	tcase_add_test(tc, test_outside_hook);
	tcase_add_test(tc, test_refused_files);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strlen(dir) - 2), dir);
		if (system(cmd))
			failed++;
	}
	return failed ? 1 : 0;
}
