/* format/outfile.c and format/infile.c: output files made safely, inputs
 * opened without hanging.  A scratch directory; no root needed. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nusku/infile.h>
#include <nusku/outfile.h>

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/nsk-files.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static char *at(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static int entries(void)
{
	char cmd[128];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

START_TEST(probe_refuses_what_is_not_a_file)
{
	struct stat st;
	uint8_t head[8];
	size_t n = sizeof(head);
	char err[256];

	ck_assert_int_eq(nsk_outfile__probe(at("none"), &st, head, &n, err,
					    sizeof(err)), 0);
	put(at("victim"), "precious");
	ck_assert_int_eq(symlink(at("victim"), at("link")), 0);
	ck_assert_int_eq(nsk_outfile__probe(at("link"), &st, head, &n, err,
					    sizeof(err)), -ELOOP);
	ck_assert_ptr_nonnull(strstr(err, "symbolic link"));
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	ck_assert_int_eq(nsk_outfile__probe(at("fifo"), &st, head, &n, err,
					    sizeof(err)), -EEXIST);
	ck_assert_int_eq(nsk_outfile__probe(dir, &st, head, &n, err,
					    sizeof(err)), -EISDIR);
	n = sizeof(head);
	ck_assert_int_eq(nsk_outfile__probe(at("victim"), &st, head, &n, err,
					    sizeof(err)), 1);
	ck_assert_uint_eq(n, 8);
	ck_assert(!memcmp(head, "precious", 8));
}
END_TEST

START_TEST(create_commit_discard)
{
	struct nsk_outfile of;
	struct stat st;
	char err[256];

	/* created 0600 under a hidden name, renamed over the old file */
	put(at("out.nsk"), "");
	umask(022);
	ck_assert_int_eq(nsk_outfile__create(&of, at("out.nsk"), err,
					     sizeof(err)), 0);
	ck_assert_int_eq(fstat(of.fd, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(write(of.fd, "new", 3), 3);
	ck_assert_int_eq(entries(), 2);
	ck_assert_int_eq(nsk_outfile__commit(&of, err, sizeof(err)), 0);
	ck_assert_int_eq(entries(), 1);
	ck_assert_int_eq(stat(at("out.nsk"), &st), 0);
	ck_assert_int_eq(st.st_size, 3);
	/* discard after commit removes it while the name holds it ... */
	nsk_outfile__release(&of); /* done: the file stays */
	ck_assert_int_eq(access(at("out.nsk"), F_OK), 0);
	ck_assert_int_eq(nsk_outfile__create(&of, at("b.nsk"), err,
					     sizeof(err)), 0);
	ck_assert_int_eq(nsk_outfile__commit(&of, err, sizeof(err)), 0);
	nsk_outfile__discard(&of);
	ck_assert_int_ne(access(at("b.nsk"), F_OK), 0);
	/* ... and not once something else took the name */
	ck_assert_int_eq(nsk_outfile__create(&of, at("c.nsk"), err,
					     sizeof(err)), 0);
	ck_assert_int_eq(nsk_outfile__commit(&of, err, sizeof(err)), 0);
	ck_assert_int_eq(unlink(at("c.nsk")), 0);
	put(at("c.nsk"), "someone else's");
	nsk_outfile__discard(&of);
	ck_assert_int_eq(access(at("c.nsk"), F_OK), 0);
	/* discard before commit: the temporary goes, nothing else */
	ck_assert_int_eq(nsk_outfile__create(&of, at("d.nsk"), err,
					     sizeof(err)), 0);
	nsk_outfile__discard(&of);
	ck_assert_int_eq(entries(), 2);
}
END_TEST

START_TEST(commit_refuses_a_swapped_temporary)
{
	struct nsk_outfile of;
	char err[256];

	ck_assert_int_eq(nsk_outfile__create(&of, at("e.nsk"), err,
					     sizeof(err)), 0);
	ck_assert_int_eq(unlink(of.tmp), 0);
	ck_assert_int_eq(symlink(at("victim"), of.tmp), 0);
	ck_assert_int_eq(nsk_outfile__commit(&of, err, sizeof(err)), -EEXIST);
	ck_assert_int_ne(access(at("e.nsk"), F_OK), 0);
	unlink(of.tmp);
	nsk_outfile__release(&of);
}
END_TEST

START_TEST(recording_policy)
{
	struct nsk_outfile of;
	char err[256];

	put(at("notes"), "someone's notes");
	ck_assert_int_eq(nsk_outfile__create_recording(&of, at("notes"), err,
						       sizeof(err)), -EEXIST);
	ck_assert_ptr_nonnull(strstr(err, "not a .nsk recording"));
	nsk_outfile__release(&of);
	put(at("old.nsk"), "\x89NSK\r\n\x1a\n and the rest");
	ck_assert_int_eq(nsk_outfile__create_recording(&of, at("old.nsk"), err,
						       sizeof(err)), 0);
	nsk_outfile__discard(&of);
	ck_assert_int_eq(access(at("old.nsk"), F_OK), 0);
}
END_TEST

START_TEST(infile_fifo_and_devices)
{
	struct timespec t0, t1;
	char err[256];
	int fd, fifo;

	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = nsk_infile__open(at("fifo"), 200, &fifo, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_eq(fd, -ETIMEDOUT);
	ck_assert_int_eq(fifo, 1);
	ck_assert_ptr_nonnull(strstr(err, "FIFO"));
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 3);
	ck_assert_int_eq(nsk_infile__open("/dev/null", 200, NULL, err,
					  sizeof(err)), -EINVAL);
	ck_assert_int_eq(nsk_infile__open(at("none"), 200, NULL, err,
					  sizeof(err)), -ENOENT);
	put(at("file"), "x");
	fd = nsk_infile__open(at("file"), 200, &fifo, err, sizeof(err));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fifo, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("files");
	TCase *tc = tcase_create("safe");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, probe_refuses_what_is_not_a_file);
	tcase_add_test(tc, create_commit_discard);
	tcase_add_test(tc, commit_refuses_a_swapped_temporary);
	tcase_add_test(tc, recording_policy);
	tcase_add_test(tc, infile_fifo_and_devices);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
