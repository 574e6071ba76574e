/* Perf map files (record/stacks/perfmap.c) read through a directory laid
 * out like /proc: PID/status (NSpid, Uid) and PID/root, the process's root,
 * holding tmp/perf-NSPID.map.  What a JIT writes, what it appends later,
 * and what a hostile process could put there instead. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/stacks/perfmap.h"

static char dir[PATH_MAX];

static void write_file(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* proc/PID with status (NSpid ... nspid, Uid euid) and root -> rootN/ */
static void make_proc(uint32_t pid, uint32_t nspid, uint32_t euid)
{
	char p[PATH_MAX + 64], t[PATH_MAX + 256];

	snprintf(p, sizeof(p), "%s/proc/%u", dir, pid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/%u/status", dir, pid);
	snprintf(t, sizeof(t), "Name:\tnode\nPid:\t%u\nNSpid:\t%u\t%u\n"
		 "Uid:\t%u\t%u\t%u\t%u\n", pid, pid, nspid, euid, euid, euid, euid);
	write_file(p, "w", t);
	snprintf(p, sizeof(p), "%s/root%u", dir, pid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/root%u/tmp", dir, pid);
	mkdir(p, 0755);
	snprintf(t, sizeof(t), "%s/root%u", dir, pid);
	snprintf(p, sizeof(p), "%s/proc/%u/root", dir, pid);
	ck_assert_int_eq(symlink(t, p), 0);
}

static void map_path(char *p, size_t n, uint32_t pid, uint32_t nspid)
{
	snprintf(p, n, "%s/root%u/tmp/perf-%u.map", dir, pid, nspid);
}

static struct nsk_perfmaps *perfmaps(void)
{
	char proc[PATH_MAX + 8];
	struct nsk_perfmaps *pm;

	snprintf(proc, sizeof(proc), "%s/proc", dir);
	ck_assert_int_eq(nsk_perfmaps__new(proc, &pm), 0);
	return pm;
}

static void setup(void)
{
	char p[PATH_MAX + 8];

	snprintf(dir, sizeof(dir), "%s/nsk-perfmap.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/proc", dir);
	mkdir(p, 0755);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_lines)
{
	struct nsk_perfmaps *pm;
	char p[PATH_MAX + 64];
	uint64_t start = 0;
	const char *n;

	/* the pid namespace: the file has the inner pid, 7 */
	make_proc(100, 7, getuid());
	map_path(p, sizeof(p), 100, 7);
	write_file(p, "w",
		   "7f90c8005b80 1a0 JS:*fib /app/x.js:1:13\n"
		   "0x7f90c8006000 0x40 LazyCompile:~main /app/x.js:3:1\n"
		   "not a line\n"
		   "7f90c8007000 0 zero-sized\n"
		   "7f90c8008000 10\n"
		   "zz 10 bad start\n"
		   "7f90c8009000 20 py::f:\x1b[31mred.py\r\n");
	map_path(p, sizeof(p), 100, 100);
	write_file(p, "w", "7f90c8005b80 1a0 the host pid's file, not this one\n");
	pm = perfmaps();
	n = nsk_perfmaps__find(pm, 100, 0x7f90c8005b80, &start);
	ck_assert_str_eq(n, "JS:*fib /app/x.js:1:13");
	ck_assert_uint_eq(start, 0x7f90c8005b80);
	n = nsk_perfmaps__find(pm, 100, 0x7f90c8005d1f, &start);
	ck_assert_str_eq(n, "JS:*fib /app/x.js:1:13");
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 100, 0x7f90c8005d20, &start));
	n = nsk_perfmaps__find(pm, 100, 0x7f90c8006010, &start);
	ck_assert_str_eq(n, "LazyCompile:~main /app/x.js:3:1");
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 100, 0x7f90c8007000, &start));
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 100, 0x7f90c8008000, &start));
	/* control characters replaced, the CR of a CRLF line dropped */
	n = nsk_perfmaps__find(pm, 100, 0x7f90c8009000, &start);
	ck_assert_str_eq(n, "py::f:?[31mred.py");
	/* another process: no file */
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 101, 0x7f90c8005b80, &start));
	nsk_perfmaps__free(pm);
}
END_TEST

START_TEST(test_grows)
{
	struct nsk_perfmaps *pm;
	char p[PATH_MAX + 64];
	uint64_t start;
	const char *n;

	make_proc(200, 200, getuid());
	map_path(p, sizeof(p), 200, 200);
	write_file(p, "w", "1000 100 first\n2000 100 sec");
	pm = perfmaps();
	ck_assert_str_eq(nsk_perfmaps__find(pm, 200, 0x1010, &start), "first");
	/* a line still being written is not read */
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 200, 0x2010, &start));
	write_file(p, "a", "ond\n3000 100 third\n");
	ck_assert_str_eq(nsk_perfmaps__find(pm, 200, 0x2010, &start), "second");
	ck_assert_str_eq(nsk_perfmaps__find(pm, 200, 0x3010, &start), "third");
	/* code replaced at the same place: the later line names it */
	write_file(p, "a", "1000 80 recompiled\n");
	ck_assert_str_eq(nsk_perfmaps__find(pm, 200, 0x1090, &start), "first");
	/* (found without reading: the file is read again on a miss) */
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 200, 0x5000, &start));
	ck_assert_str_eq(nsk_perfmaps__find(pm, 200, 0x1010, &start), "recompiled");
	ck_assert_str_eq(nsk_perfmaps__find(pm, 200, 0x1090, &start), "first");
	/* written anew, shorter (a new process with the pid): read anew */
	write_file(p, "w", "9000 10 new\n");
	n = nsk_perfmaps__find(pm, 200, 0x9000, &start);
	ck_assert_str_eq(n, "new");
	nsk_perfmaps__free(pm);
}
END_TEST

START_TEST(test_found_later)
{
	struct nsk_perfmaps *pm;
	char p[PATH_MAX + 64];
	uint64_t start;

	make_proc(300, 300, getuid());
	pm = perfmaps();
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 300, 0x1000, &start));
	map_path(p, sizeof(p), 300, 300);
	write_file(p, "w", "1000 10 late\n");
	/* looked for again once the retry interval (200 ms) has passed */
	usleep(300000);
	ck_assert_str_eq(nsk_perfmaps__find(pm, 300, 0x1000, &start), "late");
	nsk_perfmaps__free(pm);
}
END_TEST

/* A process watched from its start that exits before its samples are
 * symbolized: its /proc entry is gone, its root is held. */
START_TEST(test_after_exit)
{
	struct nsk_perfmaps *pm = perfmaps();
	char p[PATH_MAX + 64], t[PATH_MAX + 64];
	uint64_t start;

	make_proc(500, 9, getuid());
	nsk_perfmaps__watch(pm, 500);
	snprintf(p, sizeof(p), "rm -rf '%s/proc/500'", dir);
	ck_assert_int_eq(system(p), 0);
	map_path(p, sizeof(p), 500, 9);
	write_file(p, "w", "1000 10 after exit\n");
	ck_assert_str_eq(nsk_perfmaps__find(pm, 500, 0x1000, &start), "after exit");
	/* a new process of the pid: the old names are forgotten */
	make_proc(500, 500, getuid());
	nsk_perfmaps__watch(pm, 500);
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 500, 0x1000, &start));
	nsk_perfmaps__free(pm);

	/* 501's /tmp (a mount of its namespace) is gone from its root by the
	 * time it is read: the /tmp held from its start still has the file */
	pm = perfmaps();
	make_proc(501, 501, getuid());
	nsk_perfmaps__watch(pm, 501);
	snprintf(p, sizeof(p), "%s/root501/tmp", dir);
	snprintf(t, sizeof(t), "%s/root501/unmounted", dir);
	ck_assert_int_eq(rename(p, t), 0);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root501/unmounted/perf-501.map", dir);
	write_file(p, "w", "2000 10 in the held tmp\n");
	ck_assert_str_eq(nsk_perfmaps__find(pm, 501, 0x2000, &start), "in the held tmp");
	nsk_perfmaps__free(pm);
}
END_TEST

START_TEST(test_hostile)
{
	struct nsk_perfmaps *pm;
	char p[PATH_MAX + 64], t[PATH_MAX + 64];
	uint64_t start;
	size_t big = (1u << 20) + 100;
	char *line = malloc(big + 1);
	FILE *f;

	/* 400: the map is a symlink to a file elsewhere */
	make_proc(400, 400, getuid());
	snprintf(t, sizeof(t), "%s/secret", dir);
	write_file(t, "w", "1000 10 secret\n");
	map_path(p, sizeof(p), 400, 400);
	ck_assert_int_eq(symlink(t, p), 0);
	/* 401: its /tmp is an absolute symlink, meant for the host's dir */
	make_proc(401, 401, getuid());
	snprintf(t, sizeof(t), "%s/outside", dir);
	mkdir(t, 0755);
	snprintf(p, sizeof(p), "%s/outside/perf-401.map", dir);
	write_file(p, "w", "1000 10 outside\n");
	snprintf(p, sizeof(p), "%s/root401/tmp", dir);
	rmdir(p);
	ck_assert_int_eq(symlink(t, p), 0);
	/* 402: a FIFO (an open that would block, a read without end) */
	make_proc(402, 402, getuid());
	map_path(p, sizeof(p), 402, 402);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	/* 403: a file not owned by the process's user */
	make_proc(403, 403, getuid() + 1);
	map_path(p, sizeof(p), 403, 403);
	write_file(p, "w", "1000 10 not yours\n");
	/* 404: a line longer than the read chunk, then good lines; a name
	 * longer than the bound is cut */
	make_proc(404, 404, getuid());
	map_path(p, sizeof(p), 404, 404);
	memset(line, 'x', big);
	line[big] = 0;
	f = fopen(p, "w");
	fprintf(f, "%s\n5000 10 ok\n6000 10 %.5000s\n", line, line);
	fclose(f);

	pm = perfmaps();
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 400, 0x1000, &start));
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 401, 0x1000, &start));
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 402, 0x1000, &start));
	ck_assert_ptr_null(nsk_perfmaps__find(pm, 403, 0x1000, &start));
	ck_assert_str_eq(nsk_perfmaps__find(pm, 404, 0x5000, &start), "ok");
	ck_assert_ptr_nonnull(nsk_perfmaps__find(pm, 404, 0x6000, &start));
	ck_assert_uint_eq(strlen(nsk_perfmaps__find(pm, 404, 0x6000, &start)),
			  NSK_PERFMAP_MAX_NAME);
	nsk_perfmaps__free(pm);
	free(line);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("perfmap");
	TCase *tc = tcase_create("files");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_grows);
	tcase_add_test(tc, test_found_later);
	tcase_add_test(tc, test_after_exit);
	tcase_add_test(tc, test_hostile);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
