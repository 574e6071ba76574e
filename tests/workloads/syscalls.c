/* Workload for the syscall signal: calls whose numbers are known.
 *
 *   syscalls [N]   (N defaults to 1000)
 *   syscalls --restart
 *   syscalls --paths N
 *   syscalls --nr NR
 *
 * A thread named "sc-worker" makes exactly N getpid (through syscall(2), so
 * libc caching cannot hide any), N reads of 4 KiB from /dev/zero, N writes
 * of 4 KiB to /dev/null and N/10 close(-1), each failing with EBADF; nothing
 * else in the process calls getpid or fails with EBADF.
 *
 * Then the main thread makes the slow calls, each from its own function:
 *   slow_pipe_read()  one read on a pipe that "sc-writer" fills after
 *                     sleeping 30 ms (the read blocks about 30 ms);
 *   slow_nanosleep()  two nanosleeps of 20 ms;
 *   slow_fsync()      one fsync of a file written in $TMPDIR (or /tmp);
 * and exits with exit_group.  The writer's own 30 ms nanosleep is a slow
 * call of "pipe_writer".
 *
 * With --restart it only makes one read that a signal interrupts and the
 * kernel restarts (SA_RESTART): restarted_read() blocks on a pipe;
 * "sc-interrupter" waits until /proc says the main thread is blocked in
 * read, waits 5 ms more, sends it SIGALRM, waits 20 ms and writes.  The
 * read returns -ERESTARTSYS to the kernel after >= 5 ms, the handler runs
 * (rt_sigreturn), and the read is made again and lasts >= 20 ms.
 *
 * With --paths it only makes 4N getpid from two functions, in turn one
 * from path_a() and three from path_b(): a quarter of the calls, and of
 * their time, is path_a's, and the order repeats with a period of four
 * calls (a sampler that kept step with it would see only one path).
 *
 * With --nr it only makes syscall NR three times with arguments -1, 0, ...
 * (for a number the build's headers may not know; -1 is a bad fd, so the
 * calls fail harmlessly).
 *
 * Built with frame pointers; the functions are noinline so each shows in
 * the stacks under its own name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static long n_calls = 1000;
static int zero_fd = -1, null_fd = -1;
static char buf[4096];

static void die(const char *what)
{
	fprintf(stderr, "syscalls: %s: %s\n", what, strerror(errno));
	exit(1);
}

static NOINLINE void do_getpid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
}

static NOINLINE void do_read_zero(long n)
{
	for (long i = 0; i < n; i++)
		if (read(zero_fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			die("read /dev/zero");
}

static NOINLINE void do_write_null(long n)
{
	for (long i = 0; i < n; i++)
		if (write(null_fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			die("write /dev/null");
}

static NOINLINE void do_close_bad(long n)
{
	for (long i = 0; i < n; i++)
		if (close(-1) == 0 || errno != EBADF)
			die("close(-1) did not fail with EBADF");
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sc-worker");
	do_getpid(n_calls);
	do_read_zero(n_calls);
	do_write_null(n_calls);
	do_close_bad(n_calls / 10);
	return NULL;
}

static NOINLINE void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *pipe_writer(void *arg)
{
	int fd = *(int *)arg;

	pthread_setname_np(pthread_self(), "sc-writer");
	sleep_ms(30);
	if (write(fd, "x", 1) != 1)
		die("write pipe");
	return NULL;
}

static NOINLINE void slow_pipe_read(void)
{
	int p[2];
	pthread_t t;
	char c;

	if (pipe(p))
		die("pipe");
	if (pthread_create(&t, NULL, pipe_writer, &p[1]))
		die("pthread_create");
	if (read(p[0], &c, 1) != 1)
		die("read pipe");
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
}

static pid_t main_tid;

static void on_alarm(int sig)
{
	(void)sig;
}

static void *interrupter(void *arg)
{
	int fd = *(int *)arg;
	char path[64], line[64] = "";
	FILE *f;

	pthread_setname_np(pthread_self(), "sc-interrupter");
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)main_tid);
	for (;;) {
		f = fopen(path, "r");
		if (!f)
			die("open /proc/self/task/TID/syscall");
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		if (!strncmp(line, "0 ", 2)) /* blocked in read (x86-64: 0) */
			break;
		sleep_ms(1);
	}
	sleep_ms(5);
	if (syscall(SYS_tgkill, getpid(), main_tid, SIGALRM))
		die("tgkill");
	sleep_ms(20);
	if (write(fd, "x", 1) != 1)
		die("write pipe");
	return NULL;
}

static NOINLINE void restarted_read(void)
{
	struct sigaction sa;
	int p[2];
	pthread_t t;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGALRM, &sa, NULL))
		die("sigaction");
	main_tid = (pid_t)syscall(SYS_gettid);
	if (pipe(p))
		die("pipe");
	if (pthread_create(&t, NULL, interrupter, &p[1]))
		die("pthread_create");
	if (read(p[0], &c, 1) != 1)
		die("read pipe");
	pthread_join(t, NULL);
	close(p[0]);
	close(p[1]);
}

static NOINLINE void slow_nanosleep(void)
{
	struct timespec ts = { 0, 20 * 1000000L };

	for (int i = 0; i < 2; i++)
		if (nanosleep(&ts, NULL))
			die("nanosleep");
}

static NOINLINE void slow_fsync(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/nusku-syscalls.XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp");
	unlink(path);
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("write file");
	if (fsync(fd))
		die("fsync");
	close(fd);
}

/* The checks keep the calls out of tail position, so each function stays
 * on the stack; their messages differ so the compiler does not fold the
 * two into one (-fipa-icf). */
static NOINLINE void path_a(void)
{
	if (syscall(SYS_getpid) < 0)
		die("getpid in path_a");
}

static NOINLINE void path_b(void)
{
	if (syscall(SYS_getpid) < 0)
		die("getpid in path_b");
}

static void two_paths(long n)
{
	for (long i = 0; i < n; i++) {
		path_a();
		path_b();
		path_b();
		path_b();
	}
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1 && !strcmp(argv[1], "--restart")) {
		restarted_read();
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--paths")) {
		two_paths(strtol(argv[2], NULL, 10));
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--nr")) {
		long nr = strtol(argv[2], NULL, 10);

		for (int i = 0; i < 3; i++)
			syscall(nr, -1L, 0L, 0L, 0L, 0L, 0L);
		return 0;
	}
	if (argc > 1) {
		char *end;

		n_calls = strtol(argv[1], &end, 10);
		if (*end || n_calls < 0) {
			fprintf(stderr, "usage: syscalls [N]\n");
			return 2;
		}
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	null_fd = open("/dev/null", O_WRONLY);
	if (zero_fd < 0 || null_fd < 0)
		die("open /dev/zero or /dev/null");
	if (pthread_create(&t, NULL, worker, NULL))
		die("pthread_create");
	pthread_join(t, NULL);
	slow_pipe_read();
	slow_nanosleep();
	slow_fsync();
	return 0;
}
