/* Answers kept between recordings by build-id (record/stacks/symcache.c):
 * a second symbolizer over the same files, reading what the first one
 * kept, gives the same answer for every address (function, file, line,
 * inlined, at every depth) without working any out, for real files of this
 * machine (this program with its DWARF, libc with its debug file when
 * libc6-dbg is installed, a stripped program whose unnamed code is named
 * module!0xSTART, which is not kept); and a kept file that is truncated,
 * corrupt, or writable by others is not used, the answers still right. */
#include <check.h>
#include <link.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "record/stacks/symbols.h"
#include "record/stacks/symcache.h"

static char dir[] = "/tmp/nsk-symcache-XXXXXX";

struct answer {
	int n;
	struct {
		char function[256], file[256];
		uint32_t line;
		int inlined;
	} l[NSK_SYMLOC_MAX];
};

static const char *files[] = {
	"/proc/self/exe",
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/bin/ls",
};
#define NFILES (sizeof(files) / sizeof(files[0]))
#define MAX_ADDRS 4000

static uint64_t addrs[NFILES][MAX_ADDRS];
static size_t naddrs[NFILES];

/* Every step-th address of the file's executable sections (ELF vaddrs). */
static void pick(size_t f, uint64_t step)
{
	int fd = open(files[f], O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size &&
					      naddrs[f] < MAX_ADDRS; a += step)
			addrs[f][naddrs[f]++] = a;
	}
	elf_end(elf);
	close(fd);
}

static struct nsk_module *module(struct nsk_symbols *s, size_t f)
{
	struct stat st;
	char real[4096];

	ck_assert_ptr_nonnull(realpath(files[f], real));
	ck_assert_int_eq(stat(real, &st), 0);
	return nsk_symbols__module(s, real, real, st.st_ino);
}

/* Every picked address of every file, answered by a new symbolizer that
 * then keeps what it worked out. */
static struct answer *answer_all(uint64_t *answered)
{
	struct answer *out = calloc(NFILES * MAX_ADDRS, sizeof(*out));
	struct nsk_symbols *s;

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(nsk_symbols__new(&s), 0);
	for (size_t f = 0; f < NFILES; f++) {
		struct nsk_module *m = module(s, f);

		for (size_t i = 0; i < naddrs[f]; i++) {
			struct nsk_symloc locs[NSK_SYMLOC_MAX];
			struct answer *a = &out[f * MAX_ADDRS + i];

			a->n = nsk_module__symbolize(m, addrs[f][i], locs, NSK_SYMLOC_MAX);
			for (int k = 0; k < a->n; k++) {
				snprintf(a->l[k].function, sizeof(a->l[k].function), "%s",
					 locs[k].function ? locs[k].function : "(null)");
				snprintf(a->l[k].file, sizeof(a->l[k].file), "%s",
					 locs[k].file ? locs[k].file : "(null)");
				a->l[k].line = locs[k].line;
				a->l[k].inlined = locs[k].inlined;
			}
		}
	}
	*answered = nsk_symbols__answered(s);
	nsk_symbols__store_cache(s);
	nsk_symbols__free(s);
	return out;
}

static void same(const struct answer *want, const struct answer *got)
{
	long diff = 0;

	for (size_t f = 0; f < NFILES; f++)
		for (size_t i = 0; i < naddrs[f]; i++) {
			const struct answer *w = &want[f * MAX_ADDRS + i];
			const struct answer *g = &got[f * MAX_ADDRS + i];

			if (!memcmp(w, g, sizeof(*w)))
				continue;
			if (++diff <= 5)
				fprintf(stderr, "%s 0x%llx: %d locations (%s), then %d (%s)\n",
					files[f], (unsigned long long)addrs[f][i], w->n,
					w->n ? w->l[0].function : "-", g->n,
					g->n ? g->l[0].function : "-");
		}
	ck_assert_int_eq(diff, 0);
}

/* The kept file of the module for files[f] in the cache's symbols/. */
static void kept_path(size_t f, char *out, size_t len)
{
	struct nsk_symbols *s;
	const uint8_t *id;
	size_t n, at;

	ck_assert_int_eq(nsk_symbols__new(&s), 0);
	id = nsk_module__build_id(module(s, f), &n);
	ck_assert_ptr_nonnull(id);
	at = (size_t)snprintf(out, len, "%s/symbols/", dir);
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(out + at, len - at, "%02x", id[i]);
	snprintf(out + at, len - at, ".sym");
	nsk_symbols__free(s);
}

START_TEST(test_kept_answers)
{
	struct answer *cold, *warm, *again;
	uint64_t answered;
	char path[4096];
	struct stat st;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("NUSKU_CACHE_DIR", dir, 1);
	pick(0, 13);
	pick(1, 997);
	pick(2, 101);

	cold = answer_all(&answered);
	ck_assert_int_eq(answered, 0);
	kept_path(0, path, sizeof(path));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);

	warm = answer_all(&answered);
	same(cold, warm);
	/* this program's addresses and libc's, not ls's module!0x names */
	ck_assert_uint_ge(answered, naddrs[0]);
	ck_assert_uint_lt(answered, naddrs[0] + naddrs[1] + naddrs[2]);

	/* a truncated file, then garbage: not used, answers the same */
	ck_assert_int_eq(truncate(path, st.st_size - 7), 0);
	again = answer_all(&answered);
	same(cold, again);
	free(again);
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "NSKSYMC2 and then nothing that holds", 36), 36);
	close(fd);
	again = answer_all(&answered);
	same(cold, again);
	free(again);

	/* written again by the last run; open to others' writes: not read */
	ck_assert_int_eq(chmod(path, 0622), 0);
	again = answer_all(&answered);
	same(cold, again);
	ck_assert_uint_lt(answered, naddrs[0]);
	free(again);
	free(cold);
	free(warm);
}
END_TEST

/* Every other address, the last first: a file kept from them holds
 * answers added out of order, which the write sorts. */
static void answer_odd_backwards(void)
{
	struct nsk_symbols *s;

	ck_assert_int_eq(nsk_symbols__new(&s), 0);
	for (size_t f = 0; f < NFILES; f++) {
		struct nsk_module *m = module(s, f);

		for (size_t i = naddrs[f] - (naddrs[f] % 2 ? 2 : 1); i < naddrs[f]; i -= 2) {
			struct nsk_symloc locs[NSK_SYMLOC_MAX];

			nsk_module__symbolize(m, addrs[f][i], locs, NSK_SYMLOC_MAX);
		}
	}
	nsk_symbols__store_cache(s);
	nsk_symbols__free(s);
}

/* A file kept from half the addresses, read by a run that adds the other
 * half, then written whole: the answers stay those of a run without any
 * kept file, the second run answers the half it was given and the third
 * all.  A file whose entries are out of order is not used. */
START_TEST(test_grown)
{
	static char dir2[] = "/tmp/nsk-symcache-XXXXXX";
	struct answer *fresh, *grown, *whole;
	uint64_t answered;
	char path[4096], cmd[128];
	char saved[sizeof(dir)];
	uint8_t ent[2][16];
	int fd;

	ck_assert_uint_gt(naddrs[0], 100); /* (picked by test_kept_answers) */
	setenv("NUSKU_CACHE_DIR", "off", 1);
	fresh = answer_all(&answered);
	ck_assert_int_eq(answered, 0);
	ck_assert_ptr_nonnull(mkdtemp(dir2));
	setenv("NUSKU_CACHE_DIR", dir2, 1);
	memcpy(saved, dir, sizeof(dir));
	memcpy(dir, dir2, sizeof(dir)); /* for kept_path */
	answer_odd_backwards();
	grown = answer_all(&answered);
	same(fresh, grown);
	ck_assert_uint_ge(answered, naddrs[0] / 2);
	ck_assert_uint_lt(answered, naddrs[0]);
	whole = answer_all(&answered);
	same(fresh, whole);
	ck_assert_uint_ge(answered, naddrs[0]);
	free(whole);

	/* the first two entries swapped (after the 104-byte header) */
	kept_path(0, path, sizeof(path));
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, ent, sizeof(ent), 104), (int)sizeof(ent));
	ck_assert_int_eq(pwrite(fd, ent[1], 16, 104), 16);
	ck_assert_int_eq(pwrite(fd, ent[0], 16, 120), 16);
	close(fd);
	whole = answer_all(&answered);
	same(fresh, whole);
	ck_assert_uint_lt(answered, naddrs[0]);
	free(whole);
	free(grown);
	free(fresh);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir2);
	ck_assert_int_eq(system(cmd), 0);
	memcpy(dir, saved, sizeof(dir));
}
END_TEST

/* The first location's function at vaddr of path, by a new symbolizer. */
static void name_at(const char *path, uint64_t vaddr, char *out, size_t len)
{
	struct nsk_symloc locs[NSK_SYMLOC_MAX];
	struct nsk_symbols *s;
	struct stat st;
	int n;

	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(nsk_symbols__new(&s), 0);
	n = nsk_module__symbolize(nsk_symbols__module(s, path, path, st.st_ino), vaddr,
				  locs, NSK_SYMLOC_MAX);
	snprintf(out, len, "%s", n > 0 && locs[n - 1].function ? locs[n - 1].function : "-");
	nsk_symbols__store_cache(s);
	nsk_symbols__free(s);
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1; /* the first object is the program */
}

/* A copy stripped with objcopy keeps the build-id.  The stripped copy's
 * answer for a function of its own (module!0xSTART) is not kept, so a
 * copy with its symbol table names it from that table, and the stripped
 * copy is then named from the answers kept for the fuller one. */
START_TEST(test_stripped_copy)
{
	static char dir2[] = "/tmp/nsk-symcache-XXXXXX";
	char copy[1024], fuller[1024], cmd[8192], exe[1024], got[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uintptr_t bias = 0;
	uint64_t vaddr;

	ck_assert_int_gt(n, 0);
	exe[n] = 0;
	dl_iterate_phdr(main_bias, &bias);
	vaddr = (uintptr_t)name_at - bias + 4; /* inside name_at */
	ck_assert_ptr_nonnull(mkdtemp(dir2));
	setenv("NUSKU_CACHE_DIR", dir2, 1);
	snprintf(copy, sizeof(copy), "%s/stripped", dir2);
	snprintf(fuller, sizeof(fuller), "%s/symtab-only", dir2);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s' && objcopy --strip-debug '%s' '%s'",
		 exe, copy, exe, fuller);
	ck_assert_msg(!system(cmd), "objcopy (binutils) failed");
	name_at(copy, vaddr, got, sizeof(got)); /* its !0x name: not kept */
	ck_assert_str_ne(got, "name_at");
	name_at(fuller, vaddr, got, sizeof(got)); /* not those: its own */
	ck_assert_str_eq(got, "name_at");
	name_at(copy, vaddr, got, sizeof(got)); /* the original's kept now */
	ck_assert_str_eq(got, "name_at");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir2);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Three files of 64 KiB used 3, 2 and 1 hours ago and a stale temporary
 * one: a limit of 150 KiB removes the oldest and the temporary one. */
START_TEST(test_prune)
{
	static char dir3[] = "/tmp/nsk-symcache-XXXXXX";
	static const char *names[] = { "old.sym", "mid.sym", "new.sym", ".tmp-x.sym-1" };
	static const int hours[] = { 3, 2, 1, 2 };
	char buf[65536] = { 0 }, cmd[128];
	int d;

	ck_assert_ptr_nonnull(mkdtemp(dir3));
	d = open(dir3, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(d, 0);
	for (int i = 0; i < 4; i++) {
		struct timespec t[2] = { { time(NULL) - hours[i] * 3600, 0 },
					 { time(NULL) - hours[i] * 3600, 0 } };
		int fd = openat(d, names[i], O_WRONLY | O_CREAT, 0600);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, buf, sizeof(buf)), (int)sizeof(buf));
		ck_assert_int_eq(fsync(fd), 0);
		ck_assert_int_eq(futimens(fd, t), 0);
		close(fd);
	}
	nsk_symcache__prune(d, 150 << 10);
	ck_assert_int_ne(faccessat(d, "old.sym", F_OK, 0), 0);
	ck_assert_int_eq(faccessat(d, "mid.sym", F_OK, 0), 0);
	ck_assert_int_eq(faccessat(d, "new.sym", F_OK, 0), 0);
	ck_assert_int_ne(faccessat(d, ".tmp-x.sym-1", F_OK, 0), 0);
	close(d);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir3);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symcache");
	TCase *tc = tcase_create("symcache");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_kept_answers);
	tcase_add_test(tc, test_grown);
	tcase_add_test(tc, test_stripped_copy);
	tcase_add_test(tc, test_prune);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			failed = 1;
	}
	return failed ? 1 : 0;
}
