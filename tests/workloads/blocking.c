/* A workload that blocks for known reasons, for known times, in functions
 * named after them: the known answers of tests/e2e/offcpu.sh.
 *
 * Each situation runs in its own thread (named after it), one after the
 * other so they do not disturb each other:
 *
 *   lock_victim    waits ROUNDS times for a mutex lock_holder holds for
 *                  HOLD_MS each time (the waker is lock_holder)
 *   disk_fsync     writes fresh data to a file and fsyncs it, ROUNDS times
 *   pipe_reader    reads from a pipe a child process (comm pipe_writer)
 *                  writes to after sleeping PIPE_MS (the waker is the child)
 *   sleeper        nanosleeps ROUNDS x SLEEP_MS
 *   runqueue_spin  two threads spinning on one CPU for SPIN_MS of wall time:
 *                  together they wait on the run queue at least SPIN_MS
 *
 * It prints what it measured itself (CLOCK_MONOTONIC around each blocking
 * call) as "name key=value" lines, so a test can compare the recording with
 * the time actually spent even when the machine is loaded.
 *
 * Usage: blocking [DIR]   (DIR for the fsync file, default /tmp)
 *        blocking --pingpong N [DELAY_S]
 *          for bench/offcpu.sh: after DELAY_S seconds (time for a tracer to
 *          attach), two threads pass a byte back and forth over two pipes N
 *          times (2 blocks per round trip); prints the round trips' wall
 *          time and the CPU time the process spent on them (which a loaded
 *          machine disturbs less).
 *        blocking --alternate N
 *          for tests/e2e/offcpu_storm.sh: a thread (alt_reader) reads one
 *          byte N times from each of two pipes in turn, in reader_a and
 *          reader_b, two functions alike to the byte (so each blocks with
 *          the same registers but for the file), while another
 *          (alt_writer) writes to them a millisecond apart.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5
#define HOLD_MS 40
#define SLEEP_MS 40
#define PIPE_MS 100
#define PIPE_ROUNDS 2
#define SPIN_MS 300
#define DISK_BYTES (4 << 20)

#define NOINLINE __attribute__((noinline))

static const char *dir = "/tmp";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A macro, not a function: the sleep must be charged to the function that
 * sleeps, and an inlined helper would show up in its place. */
#define sleep_ms(ms)                                                        \
	do {                                                                \
		struct timespec ts_ = { (ms) / 1000,                        \
					(long)((ms) % 1000) * 1000000L };   \
		while (nanosleep(&ts_, &ts_) && errno == EINTR)             \
			;                                                   \
	} while (0)

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* ---- lock: a mutex held by another thread -------------------------------- */

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held_round, done_round;
static uint64_t lock_blocked_ns;

/* Busy-waits (briefly) so the hand-over itself takes no lock. */
static void spin_until(atomic_int *v, int want)
{
	while (atomic_load(v) != want)
		;
}

static NOINLINE void *lock_holder(void *arg)
{
	(void)arg;
	for (int i = 1; i <= ROUNDS; i++) {
		pthread_mutex_lock(&the_lock);
		atomic_store(&held_round, i);
		sleep_ms(HOLD_MS);
		pthread_mutex_unlock(&the_lock);
		spin_until(&done_round, i);
	}
	return NULL;
}

static NOINLINE void *lock_victim(void *arg)
{
	(void)arg;
	for (int i = 1; i <= ROUNDS; i++) {
		uint64_t t0;

		spin_until(&held_round, i);
		t0 = now_ns();
		pthread_mutex_lock(&the_lock);
		lock_blocked_ns += now_ns() - t0;
		pthread_mutex_unlock(&the_lock);
		atomic_store(&done_round, i);
	}
	return NULL;
}

/* ---- disk: fsync of fresh data --------------------------------------------- */

static uint64_t disk_ns;
static char disk_path[4096];

/* The file is removed by main: unlink waits on the disk too, and only the
 * fsyncs are measured here. */
static NOINLINE void *disk_fsync(void *arg)
{
	char *path = disk_path;
	char *buf = malloc(DISK_BYTES);
	int fd;

	(void)arg;
	if (!buf)
		die("malloc");
	snprintf(path, sizeof(disk_path), "%s/nusku-blocking.%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path);
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t t0;

		memset(buf, 'a' + i, DISK_BYTES);
		if (pwrite(fd, buf, DISK_BYTES, 0) != DISK_BYTES)
			die("pwrite");
		t0 = now_ns();
		if (fsync(fd))
			die("fsync");
		disk_ns += now_ns() - t0;
	}
	close(fd);
	free(buf);
	return NULL;
}

/* ---- process: a pipe fed by a child that sleeps first ---------------------- */

static uint64_t pipe_ns;

static NOINLINE void pipe_writer_child(int wfd)
{
	prctl(PR_SET_NAME, "pipe_writer");
	sleep_ms(PIPE_MS);
	if (write(wfd, "x", 1) != 1)
		_exit(1);
	_exit(0);
}

static NOINLINE void *pipe_reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < PIPE_ROUNDS; i++) {
		int fds[2];
		pid_t child;
		char c;
		uint64_t t0;

		if (pipe(fds))
			die("pipe");
		child = fork();
		if (child < 0)
			die("fork");
		if (child == 0) {
			close(fds[0]);
			pipe_writer_child(fds[1]);
		}
		close(fds[1]);
		t0 = now_ns();
		if (read(fds[0], &c, 1) != 1)
			die("read");
		pipe_ns += now_ns() - t0;
		close(fds[0]);
		waitpid(child, NULL, 0);
	}
	return NULL;
}

/* ---- sleep ------------------------------------------------------------------ */

static uint64_t sleep_ns;

static NOINLINE void *sleeper(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t t0 = now_ns();

		sleep_ms(SLEEP_MS);
		sleep_ns += now_ns() - t0;
	}
	return NULL;
}

/* ---- runqueue: two spinners on one CPU --------------------------------------- */

static uint64_t spin_start_ns;
static volatile uint64_t spin_sink;

static NOINLINE void *runqueue_spin(void *arg)
{
	uint64_t x = (uintptr_t)arg;

	while (now_ns() - spin_start_ns < (uint64_t)SPIN_MS * 1000000u)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
	spin_sink = x;
	return NULL;
}

/* ---- pingpong: a scheduler-heavy load for the benchmark -------------------- */

static int ping_fds[2], pong_fds[2];
static long ping_rounds;

static NOINLINE void *pong(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < ping_rounds; i++)
		if (read(ping_fds[0], &c, 1) != 1 || write(pong_fds[1], &c, 1) != 1)
			die("pong");
	return NULL;
}

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
		       1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static NOINLINE int pingpong(long rounds, double delay_s)
{
	pthread_t t;
	uint64_t t0, c0;
	char c = 'p';

	ping_rounds = rounds;
	if (pipe(ping_fds) || pipe(pong_fds))
		die("pipe");
	if (delay_s > 0)
		sleep_ms((unsigned int)(delay_s * 1000));
	if (pthread_create(&t, NULL, pong, NULL))
		die("pthread_create");
	t0 = now_ns();
	c0 = cpu_ns();
	for (long i = 0; i < rounds; i++)
		if (write(ping_fds[1], &c, 1) != 1 || read(pong_fds[0], &c, 1) != 1)
			die("ping");
	pthread_join(t, NULL);
	printf("pingpong rounds=%ld ns=%llu cpu_ns=%llu\n", rounds,
	       (unsigned long long)(now_ns() - t0),
	       (unsigned long long)(cpu_ns() - c0));
	return 0;
}

/* ---- alternate: two paths that block alike --------------------------------- */

static int alt_a[2], alt_b[2];
static long alt_rounds;

static NOINLINE void reader_a(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		die("reader_a");
}

static NOINLINE void reader_b(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		die("reader_b");
}

static NOINLINE void *alt_reader(void *arg)
{
	(void)arg;
	for (long i = 0; i < alt_rounds; i++) {
		reader_a(alt_a[0]);
		reader_b(alt_b[0]);
	}
	return NULL;
}

static NOINLINE void *alt_writer(void *arg)
{
	(void)arg;
	for (long i = 0; i < alt_rounds; i++) {
		sleep_ms(1);
		if (write(alt_a[1], "a", 1) != 1)
			die("alt_writer");
		sleep_ms(1);
		if (write(alt_b[1], "b", 1) != 1)
			die("alt_writer");
	}
	return NULL;
}

static void run(const char *name, void *(*fn)(void *), void *arg, int ncpu0,
		pthread_t *t);

static int alternate(long rounds)
{
	pthread_t r, w;

	alt_rounds = rounds;
	if (pipe(alt_a) || pipe(alt_b))
		die("pipe");
	run("alt_reader", alt_reader, NULL, -1, &r);
	run("alt_writer", alt_writer, NULL, -1, &w);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	printf("alternate rounds=%ld\n", rounds);
	return 0;
}

/* ---- driver --------------------------------------------------------------- */

static void run(const char *name, void *(*fn)(void *), void *arg, int ncpu0,
		pthread_t *t)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	if (ncpu0 >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(ncpu0, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	if (pthread_create(t, &attr, fn, arg))
		die("pthread_create");
	pthread_setname_np(*t, name);
	pthread_attr_destroy(&attr);
}

static void run_one(const char *name, void *(*fn)(void *))
{
	pthread_t t;

	run(name, fn, NULL, -1, &t);
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	cpu_set_t set;
	int cpu = 0;

	if (argc > 2 && !strcmp(argv[1], "--pingpong"))
		return pingpong(atol(argv[2]), argc > 3 ? atof(argv[3]) : 0);
	if (argc > 2 && !strcmp(argv[1], "--alternate"))
		return alternate(atol(argv[2]));
	if (argc > 1)
		dir = argv[1];
	/* The first CPU we may run on, for the spinners. */
	if (!sched_getaffinity(0, sizeof(set), &set))
		for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
			;

	run("lock_holder", lock_holder, NULL, -1, &a);
	run("lock_victim", lock_victim, NULL, -1, &b);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("lock_victim blocked_ns=%llu held_ns=%llu\n",
	       (unsigned long long)lock_blocked_ns,
	       (unsigned long long)ROUNDS * HOLD_MS * 1000000u);

	run_one("disk_fsync", disk_fsync);
	unlink(disk_path);
	printf("disk_fsync fsync_ns=%llu\n", (unsigned long long)disk_ns);

	run_one("pipe_reader", pipe_reader);
	printf("pipe_reader read_ns=%llu\n", (unsigned long long)pipe_ns);

	run_one("sleeper", sleeper);
	printf("sleeper sleep_ns=%llu\n", (unsigned long long)sleep_ns);

	spin_start_ns = now_ns();
	run("runqueue_spin", runqueue_spin, (void *)1, cpu, &a);
	run("runqueue_spin", runqueue_spin, (void *)2, cpu, &b);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("runqueue_spin window_ns=%llu\n",
	       (unsigned long long)(now_ns() - spin_start_ns));
	return 0;
}
