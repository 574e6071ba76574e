/* The session registry's pure parts (controller/sessions.h), without BPF:
 * the directory's checks, a state file's round trip with bytes a command
 * line may hold, the lock that tells a live recorder from a dead one, the
 * states a reader makes of them, and names. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/sessions.h"

static char top[PATH_MAX], sd[PATH_MAX + 16];

static void setup(void)
{
	char t[] = "/tmp/nsk-sessions-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(t));
	snprintf(top, sizeof(top), "%s", t);
	snprintf(sd, sizeof(sd), "%s/nusku", top);
	setenv("XDG_RUNTIME_DIR", top, 1);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	ck_assert_int_eq(system(cmd), 0);
}

static int open_dir(int create)
{
	char path[PATH_MAX], err[PATH_MAX + 200];

	return nsk_session_dir__open(create, path, sizeof(path), err, sizeof(err));
}

START_TEST(dir_made_private)
{
	struct stat st;
	int fd;

	ck_assert_int_eq(open_dir(0), -ENOENT);
	fd = open_dir(1);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(stat(sd, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	close(fd);
	/* open to others: refused, not repaired */
	ck_assert_int_eq(chmod(sd, 0750), 0);
	ck_assert_int_eq(open_dir(1), -EPERM);
	ck_assert_int_eq(stat(sd, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0750);
	/* a symbolic link, even to a private directory of ours */
	ck_assert_int_eq(rmdir(sd), 0);
	ck_assert_int_eq(symlink("/tmp", sd), 0);
	fd = open_dir(1); /* O_NOFOLLOW | O_DIRECTORY: ENOTDIR or ELOOP */
	ck_assert(fd == -ENOTDIR || fd == -ELOOP);
	ck_assert_int_eq(unlink(sd), 0);
	/* another user's */
	if (geteuid() == 0) {
		ck_assert_int_eq(mkdir(sd, 0700), 0);
		ck_assert_int_eq(chown(sd, 65534, 65534), 0);
		ck_assert_int_eq(open_dir(1), -EPERM);
	}
}
END_TEST

START_TEST(state_round_trip)
{
	struct nsk_session_state a = { 0 }, b;
	char path[PATH_MAX + 32], cmd[2 * sizeof(sd) + 64];
	struct stat st;
	int fd = open_dir(1);

	ck_assert_int_ge(fd, 0);
	snprintf(a.name, sizeof(a.name), "web-1");
	a.phase = NSK_PHASE_RUNNING;
	a.pid = 4242;
	a.pid_start = 123456789012ull;
	a.target_pid = 4243;
	snprintf(a.target, sizeof(a.target), "./app --x 'a\nb' 100%% \x1b[2J");
	snprintf(a.signals, sizeof(a.signals), "cpu,offcpu");
	snprintf(a.file, sizeof(a.file), "/tmp/with space/%%41.nsk");
	a.records = 1ull << 40;
	a.lost = 7;
	a.have_cost = 1;
	a.bpf_run_ns = 999;
	a.cpu_ns = 5;
	a.startup_cpu_ns = 3;
	a.started = 1700000000.5;
	ck_assert_int_eq(nsk_session_state__write(fd, &a), 0);
	ck_assert_int_eq(nsk_session_state__read(fd, "web-1", &b), 0);
	ck_assert_str_eq(b.name, a.name);
	ck_assert_str_eq(b.target, a.target);
	ck_assert_str_eq(b.file, a.file);
	ck_assert_str_eq(b.signals, a.signals);
	ck_assert_int_eq(b.phase, NSK_PHASE_RUNNING);
	ck_assert_int_eq(b.pid, 4242);
	ck_assert_uint_eq(b.pid_start, a.pid_start);
	ck_assert_uint_eq(b.records, a.records);
	ck_assert_uint_eq(b.startup_cpu_ns, 3);
	ck_assert(b.started > 1700000000.4 && b.started < 1700000000.6);
	snprintf(path, sizeof(path), "%s/web-1.state", sd);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	/* a state file under another name, or not one at all */
	snprintf(cmd, sizeof(cmd), "cp '%s/web-1.state' '%s/other.state'", sd, sd);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(nsk_session_state__read(fd, "other", &b), -EBADMSG);
	snprintf(cmd, sizeof(cmd), "echo hello > '%s/junk.state'", sd);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(nsk_session_state__read(fd, "junk", &b), -EBADMSG);
	ck_assert_int_eq(nsk_session_state__read(fd, "none", &b), -ENOENT);
	ck_assert_int_eq(nsk_session_state__read(fd, "../x", &b), -EINVAL);
	close(fd);
}
END_TEST

/* The lock, and the states a reader makes: a lock held by another
 * process is a running session; that process gone without the end mark,
 * crashed; the end mark, ended. */
START_TEST(lock_and_status)
{
	struct nsk_session_state a = { 0 };
	struct nsk_session_info in;
	int fd = open_dir(1), go[2], done[2], lk, status;
	char c;
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(nsk_session_lock__held(fd, "r"), 0);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int l = nsk_session_lock__take(fd, "r");

		if (write(done[1], l >= 0 ? "y" : "n", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(l >= 0 ? 0 : 1); /* dies holding it: the kernel drops it */
	}
	ck_assert_int_eq(read(done[0], &c, 1), 1);
	ck_assert_int_eq(c, 'y');
	snprintf(a.name, sizeof(a.name), "r");
	a.pid = pid;
	a.phase = NSK_PHASE_RUNNING;
	ck_assert_int_eq(nsk_session_state__write(fd, &a), 0);
	ck_assert_int_eq(nsk_session_lock__held(fd, "r"), 1);
	ck_assert_int_eq(nsk_session_lock__take(fd, "r"), -EBUSY);
	ck_assert_int_eq(nsk_sessions__get(fd, "r", 0, &in), 0);
	ck_assert_int_eq(in.status, NSK_SESSION_RUNNING);
	ck_assert_int_eq(nsk_session_state__remove(fd, "r"), -EBUSY);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(nsk_session_lock__held(fd, "r"), 0);
	ck_assert_int_eq(nsk_sessions__get(fd, "r", 0, &in), 0);
	ck_assert_int_eq(in.status, NSK_SESSION_CRASHED);
	a.phase = NSK_PHASE_ENDED;
	ck_assert_int_eq(nsk_session_state__write(fd, &a), 0);
	ck_assert_int_eq(nsk_sessions__get(fd, "r", 0, &in), 0);
	ck_assert_int_eq(in.status, NSK_SESSION_ENDED);
	/* ours now, and the name free again once let go */
	lk = nsk_session_lock__take(fd, "r");
	ck_assert_int_ge(lk, 0);
	close(lk);
	ck_assert_int_eq(nsk_session_state__remove(fd, "r"), 0);
	ck_assert_int_eq(nsk_sessions__get(fd, "r", 0, &in), -ENOENT);
	close(fd);
}
END_TEST

START_TEST(names)
{
	struct nsk_session_info v[3];
	char buf[64], long_name[NSK_SESSION_NAME_MAX + 2];

	ck_assert(nsk_sessions__name_ok("cpu_hot-1"));
	ck_assert(nsk_sessions__name_ok("a.b"));
	ck_assert(!nsk_sessions__name_ok(""));
	ck_assert(!nsk_sessions__name_ok(".hidden"));
	ck_assert(!nsk_sessions__name_ok("-opt"));
	ck_assert(!nsk_sessions__name_ok("a/b"));
	ck_assert(!nsk_sessions__name_ok("a b"));
	ck_assert(!nsk_sessions__name_ok("\x1b[2J"));
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	ck_assert(!nsk_sessions__name_ok(long_name));
	long_name[NSK_SESSION_NAME_MAX] = '\0';
	ck_assert(nsk_sessions__name_ok(long_name));
	/* ps's column: the running sessions of a pid */
	memset(v, 0, sizeof(v));
	snprintf(v[0].st.name, sizeof(v[0].st.name), "a");
	v[0].st.target_pid = 7;
	v[0].status = NSK_SESSION_RUNNING;
	snprintf(v[1].st.name, sizeof(v[1].st.name), "b");
	v[1].st.target_pid = 7;
	v[1].status = NSK_SESSION_ENDED;
	snprintf(v[2].st.name, sizeof(v[2].st.name), "c");
	v[2].st.target_pid = 7;
	v[2].status = NSK_SESSION_RUNNING;
	nsk_sessions__of_pid(v, 3, 7, buf, sizeof(buf));
	ck_assert_str_eq(buf, "a,c");
	nsk_sessions__of_pid(v, 3, 8, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	nsk_sessions__of_pid(v, 3, 7, buf, 3);
	ck_assert_str_eq(buf, "a"); /* whole names only */
}
END_TEST

START_TEST(pid_start_of_self)
{
	ck_assert_uint_gt(nsk_sessions__pid_start(getpid()), 0);
	ck_assert_uint_eq(nsk_sessions__pid_start(-1), 0);
	ck_assert_uint_eq(nsk_sessions__pid_start(0x3fffffff), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sessions");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, dir_made_private);
	tcase_add_test(tc, state_round_trip);
	tcase_add_test(tc, lock_and_status);
	tcase_add_test(tc, names);
	tcase_add_test(tc, pid_start_of_self);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
