/* Which processes' mapping records the watcher keeps (record/procs/
 * followed.c), against a real map of targets: a process in the map is
 * followed from its first record and stays so when it leaves the map (its
 * exit deletes it there before its last records are read); one the ring
 * buffer showed forking or exec'ing is followed without the map; an exit
 * forgets it only when the records read after it are done (an exit read
 * after the mark a drain takes before it reads the stream stays followed
 * to the next); with no map (record -a) every process is followed. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "record/procs/followed.h"

static void put(int fd, uint32_t pid)
{
	uint8_t one = 1;

	ck_assert_int_eq(bpf_map_update_elem(fd, &pid, &one, BPF_ANY), 0);
}

static struct nsk_ev_proc ev(uint32_t type, uint32_t pid, uint32_t flags)
{
	struct nsk_ev_proc e = { .hdr = { .type = type }, .pid = pid, .flags = flags };

	return e;
}

static int fd = -1; /* the map of targets */

START_TEST(test_followed)
{
	struct nsk_followed f;
	struct nsk_ev_proc e;
	uint32_t root = 1000;
	size_t mark;

	nsk_followed__init(&f, fd);
	put(fd, root);
	ck_assert_int_eq(nsk_followed__has(&f, 999), 0); /* not a target */
	ck_assert_int_eq(nsk_followed__has(&f, root), 1);
	/* gone from the map (its exit), its records still kept until the
	 * drain that read its exit is done */
	ck_assert_int_eq(bpf_map_delete_elem(fd, &root), 0);
	ck_assert_int_eq(nsk_followed__has(&f, root), 1);
	e = ev(NSK_EV_PROC_EXIT, root, 0); /* a thread's exit: no */
	nsk_followed__event(&f, &e);
	nsk_followed__forget(&f, nsk_followed__ended(&f));
	ck_assert_int_eq(nsk_followed__has(&f, root), 1);
	mark = nsk_followed__ended(&f);
	e = ev(NSK_EV_PROC_EXIT, root, NSK_EV_PROC_GROUP_DEAD); /* after the mark */
	nsk_followed__event(&f, &e);
	nsk_followed__forget(&f, mark);
	ck_assert_int_eq(nsk_followed__has(&f, root), 1);
	nsk_followed__forget(&f, nsk_followed__ended(&f)); /* the next drain */
	ck_assert_int_eq(nsk_followed__has(&f, root), 0);

	/* a child the ring buffer showed, never in the map (it had exited
	 * by the time its records were read) */
	e = ev(NSK_EV_PROC_FORK, 1001, 0);
	nsk_followed__event(&f, &e);
	ck_assert_int_eq(nsk_followed__has(&f, 1001), 1);
	e = ev(NSK_EV_PROC_EXEC, 1002, 0);
	nsk_followed__event(&f, &e);
	ck_assert_int_eq(nsk_followed__has(&f, 1002), 1);
	for (uint32_t pid = 2000; pid < 4000; pid++) { /* many come and go */
		e = ev(NSK_EV_PROC_FORK, pid, 0);
		nsk_followed__event(&f, &e);
		e = ev(NSK_EV_PROC_EXIT, pid, NSK_EV_PROC_GROUP_DEAD);
		nsk_followed__event(&f, &e);
	}
	ck_assert_int_eq(nsk_followed__has(&f, 3999), 1);
	nsk_followed__forget(&f, nsk_followed__ended(&f));
	ck_assert_int_eq(nsk_followed__has(&f, 3999), 0);
	ck_assert_int_eq(nsk_followed__has(&f, 1001), 1);
	nsk_followed__free(&f);

	nsk_followed__init(&f, -1); /* record -a */
	ck_assert_int_eq(nsk_followed__has(&f, 999), 1);
	nsk_followed__free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("followed");
	TCase *tc = tcase_create("followed");
	SRunner *sr;
	int failed;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_targets", sizeof(uint32_t),
			    sizeof(uint8_t), 64, NULL);
	if (fd < 0) {
		fprintf(stderr, "test_followed: no BPF map: %s\n", strerror(errno));
		return errno == EPERM || errno == EACCES ? 77 : 1;
	}
	tcase_add_test(tc, test_followed);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	close(fd);
	return failed ? 1 : 0;
}
