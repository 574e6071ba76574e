/* nusku record --background: a recorder that outlives its terminal.
 *
 * The caller takes the session's lock (the name is then its own), opens
 * NAME.log and a pipe, and forks twice: the middle process calls setsid()
 * and exits, so the recorder has no controlling terminal (no SIGHUP when
 * the terminal closes) and is nobody's child but init's.  The recorder
 * keeps the lock's fd, writes its state file as it goes (sessions.h) and
 * says on the pipe when its probes are in ("ok") or why it failed; only
 * then does the caller return, so `nusku record --background ... && run
 * the test` records the test from its first instruction.  Every fd it
 * keeps is close-on-exec, so a launched program holds neither the lock
 * (which would make a dead recorder look alive) nor the pipe.  The working
 * directory is kept: a launched program's relative paths mean what they
 * meant on the command line. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "controller/sessions.h"
#include "record/record.h"

struct bg {
	int dirfd;
	int ready_fd; /* the pipe to the caller until the probes are in */
	struct nsk_session_state st;
};

static void say(int fd, const char *what, const char *msg)
{
	char line[400];
	int n = snprintf(line, sizeof(line), "%s %s\n", what, msg);

	if (n > 0 && write(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return; /* the caller is gone: nobody to tell */
}

static void own_usage(struct nsk_session_state *st)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return;
	st->cpu_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull +
		     (uint64_t)ru.ru_utime.tv_usec * 1000ull +
		     (uint64_t)ru.ru_stime.tv_sec * 1000000000ull +
		     (uint64_t)ru.ru_stime.tv_usec * 1000ull;
	st->max_rss_kb = (uint64_t)ru.ru_maxrss;
}

static void on_progress(void *ctx, const struct nsk_record_progress *p)
{
	struct bg *b = ctx;
	struct nsk_session_state *st = &b->st;

	st->target_pid = p->target_pid;
	snprintf(st->signals, sizeof(st->signals), "%s", p->signals ? p->signals : "");
	st->elapsed_ns = p->elapsed_ns;
	st->records = p->records;
	st->samples = p->samples;
	st->lost = p->lost;
	st->bytes = p->bytes;
	st->have_cost = p->have_cost;
	st->bpf_run_ns = p->bpf_run_ns;
	st->bpf_runs = p->bpf_runs;
	st->final = p->final;
	own_usage(st);
	if (p->started) {
		st->phase = NSK_PHASE_RUNNING;
		st->startup_cpu_ns = st->cpu_ns; /* loading, attaching: once */
	}
	/* a state that cannot be written leaves the last one: the recording
	 * itself goes on */
	nsk_session_state__write(b->dirfd, st);
	if (p->started && b->ready_fd >= 0) {
		say(b->ready_fd, "ok", st->name);
		close(b->ready_fd);
		b->ready_fd = -1;
	}
}

/* The recorder, in the grandchild.  Never returns. */
static void run_recorder(struct bg *b, struct nsk_record_opts *opts,
			 char *const *cmdline)
{
	char errbuf[600] = "";
	int status = 0, err;

	opts->on_progress = on_progress;
	opts->progress_ctx = b;
	b->st.pid = (int)getpid();
	b->st.pid_start = nsk_sessions__pid_start(b->st.pid);
	b->st.phase = NSK_PHASE_STARTING;
	err = nsk_session_state__write(b->dirfd, &b->st);
	if (err) {
		snprintf(errbuf, sizeof(errbuf), "cannot write the session's state: %s",
			 strerror(-err));
		say(b->ready_fd, "error", errbuf);
		_exit(1);
	}
	err = nsk_record__run(opts, cmdline, &status, errbuf, sizeof(errbuf));
	own_usage(&b->st);
	if (err && b->ready_fd >= 0) {
		/* never started: nothing to list, the caller says why */
		char path[NSK_SESSION_NAME_MAX + 8];

		say(b->ready_fd, "error", errbuf);
		snprintf(path, sizeof(path), "%s.state", b->st.name);
		unlinkat(b->dirfd, path, 0);
		snprintf(path, sizeof(path), "%s.log", b->st.name);
		unlinkat(b->dirfd, path, 0);
		_exit(1);
	}
	if (err) {
		b->st.phase = NSK_PHASE_FAILED;
		snprintf(b->st.error, sizeof(b->st.error), "%s", errbuf);
		fprintf(stderr, "nusku: record: %s\n", errbuf);
	} else {
		b->st.phase = NSK_PHASE_ENDED; /* the end marker */
		b->st.exit_status = status;
	}
	nsk_session_state__write(b->dirfd, &b->st);
	_exit(err ? 1 : status);
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

/* The recorder's answer into line: "ok NAME", "error MESSAGE", "" when it
 * died first, or "interrupted" when Ctrl-C came first (the recorder is
 * then sent SIGINT, and its answer still awaited, so nothing is left
 * half-started). */
static void wait_ready(int fd, char *line, size_t len)
{
	struct sigaction sa = { .sa_handler = on_interrupt }, old[3];
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	char buf[512];
	size_t got = 0;
	int rec = 0, asked = 0;

	/* no SA_RESTART: read() returns at the signal */
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	line[0] = '\0';
	for (;;) {
		ssize_t r;
		char *nl;

		if (interrupted && rec > 0 && !asked) {
			kill(rec, SIGINT);
			asked = 1;
		}
		nl = memchr(buf, '\n', got);
		if (nl) {
			*nl = '\0';
			if (!strncmp(buf, "pid ", 4)) {
				rec = atoi(buf + 4);
				got -= (size_t)(nl + 1 - buf);
				memmove(buf, nl + 1, got);
				continue;
			}
			snprintf(line, len, "%s", asked ? "interrupted" : buf);
			break;
		}
		if (got >= sizeof(buf) - 1)
			break;
		r = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (asked)
				snprintf(line, len, "interrupted");
			break;
		}
		got += (size_t)r;
	}
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
}

/* A name from the target: the program's or the process's name. */
static void base_name(const struct nsk_record_opts *o, char *buf, size_t len)
{
	char comm[64] = "", path[64];
	const char *src = comm;
	size_t n = 0;

	if (o->all) {
		src = "all";
	} else if (o->pid) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", o->pid);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
	} else if (o->argv && o->argv[0]) {
		src = strrchr(o->argv[0], '/') ? strrchr(o->argv[0], '/') + 1 : o->argv[0];
	}
	for (; *src && *src != '\n' && n + 1 < len && n < 40; src++) {
		char c = *src;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

		buf[n++] = ok ? c : '_';
	}
	buf[n] = '\0';
	if (!n || buf[0] == '.' || buf[0] == '-')
		snprintf(buf, len, "session");
}

/* Takes the lock of the first free name: base-1, base-2, ...; a name
 * whose state is kept (an ended or crashed session) is not reused, nor
 * one whose default recording (NAME.nsk here) exists. */
static int pick_name(int dirfd, const struct nsk_record_opts *o, char *name,
		     size_t len)
{
	char base[48], path[NSK_SESSION_NAME_MAX + 8];
	struct stat sb;

	base_name(o, base, sizeof(base));
	for (int i = 1; i < 10000; i++) {
		int fd;

		snprintf(name, len, "%s-%d", base, i);
		snprintf(path, sizeof(path), "%s.state", name);
		if (!fstatat(dirfd, path, &sb, AT_SYMLINK_NOFOLLOW))
			continue;
		/* nor over a recording of that name here (NAME.nsk) */
		snprintf(path, sizeof(path), "%s.nsk", name);
		if (!o->output && !fstatat(AT_FDCWD, path, &sb, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(path, sizeof(path), "%s.state", name);
		fd = nsk_session_lock__take(dirfd, name);
		if (fd == -EBUSY)
			continue;
		if (fd < 0)
			return fd;
		/* made by another recorder between the look and the lock */
		if (!fstatat(dirfd, path, &sb, AT_SYMLINK_NOFOLLOW)) {
			close(fd);
			continue;
		}
		return fd;
	}
	return -EEXIST;
}

static void describe_target(const struct nsk_record_opts *o, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (o->all) {
		snprintf(buf, len, "all processes");
		return;
	}
	if (o->pid) {
		char comm[64] = "", path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", o->pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(buf, len, "pid %d (%s)", o->pid, comm);
		return;
	}
	for (int i = 0; o->argv && o->argv[i] && n + 1 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", o->argv[i]);
}

int nsk_sessions__start_background(struct nsk_record_opts *opts,
				  const char *name, char *const *cmdline,
				  FILE *out, char *err, size_t errlen)
{
	struct bg b = { .dirfd = -1, .ready_fd = -1 };
	char dirpath[PATH_MAX], line[512] = "", cwd[PATH_MAX], logname[NSK_SESSION_NAME_MAX + 8];
	int lock = -1, logfd = -1, nullfd = -1, p[2] = { -1, -1 }, e, status;
	const char *output = opts->output;
	pid_t mid;
	int n;

	b.dirfd = nsk_session_dir__open(1, dirpath, sizeof(dirpath), err, errlen);
	if (b.dirfd < 0)
		return b.dirfd;
	if (name) {
		if (!nsk_sessions__name_ok(name)) {
			e = -EINVAL;
			snprintf(err, errlen, "--name '%.64s': 1 to %d letters, digits, '.', "
				 "'_' or '-', not first '.' or '-'", name, NSK_SESSION_NAME_MAX);
			goto cleanup;
		}
		snprintf(b.st.name, sizeof(b.st.name), "%s", name);
		lock = nsk_session_lock__take(b.dirfd, name);
	} else {
		lock = pick_name(b.dirfd, opts, b.st.name, sizeof(b.st.name));
	}
	if (lock < 0) {
		e = lock;
		if (e == -EBUSY)
			snprintf(err, errlen, "a session named %s is running ('nusku stop %s' "
				 "ends it)", b.st.name, b.st.name);
		else
			snprintf(err, errlen, "cannot lock the session %s in %s: %s",
				 b.st.name, dirpath, strerror(-e));
		goto cleanup;
	}
	/* The recording's path, absolute: nusku sessions and live read it
	 * from anywhere.  Default: NAME.nsk here. */
	if (!getcwd(cwd, sizeof(cwd))) {
		e = -errno;
		snprintf(err, errlen, "cannot tell the working directory: %s", strerror(errno));
		goto cleanup;
	}
	if (!output)
		n = snprintf(b.st.file, sizeof(b.st.file), "%s/%s.nsk", cwd, b.st.name);
	else if (output[0] == '/')
		n = snprintf(b.st.file, sizeof(b.st.file), "%s", output);
	else
		n = snprintf(b.st.file, sizeof(b.st.file), "%s/%s", cwd, output);
	if (n < 0 || (size_t)n >= sizeof(b.st.file) ||
	    (n = snprintf(b.st.log, sizeof(b.st.log), "%s/%s.log", dirpath,
			  b.st.name)) < 0 || (size_t)n >= sizeof(b.st.log)) {
		e = -ENAMETOOLONG;
		snprintf(err, errlen, "the recording's path is too long");
		goto cleanup;
	}
	opts->output = b.st.file;
	opts->quiet = 1;
	describe_target(opts, b.st.target, sizeof(b.st.target));
	b.st.all = opts->all;
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		b.st.started = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	snprintf(logname, sizeof(logname), "%s.log", b.st.name);
	logfd = openat(b.dirfd, logname, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		       O_CLOEXEC, 0600);
	nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (logfd < 0 || nullfd < 0 || pipe2(p, O_CLOEXEC) < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot set up the session: %s", strerror(errno));
		goto cleanup;
	}
	fflush(NULL);
	mid = fork();
	if (mid < 0) {
		e = -errno;
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto cleanup;
	}
	if (mid == 0) {
		pid_t rec;

		close(p[0]);
		setsid();
		rec = fork();
		if (rec > 0) {
			char msg[32];

			/* so an interrupted caller can stop it */
			snprintf(msg, sizeof(msg), "%d", (int)rec);
			say(p[1], "pid", msg);
		}
		if (rec != 0)
			_exit(rec < 0 ? 1 : 0);
		/* the recorder: stdio away from the terminal */
		if (dup2(nullfd, STDIN_FILENO) < 0 || dup2(logfd, STDOUT_FILENO) < 0 ||
		    dup2(logfd, STDERR_FILENO) < 0)
			_exit(1);
		close(nullfd);
		close(logfd);
		b.ready_fd = p[1];
		run_recorder(&b, opts, cmdline);
	}
	close(p[1]);
	p[1] = -1;
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	wait_ready(p[0], line, sizeof(line));
	if (!strncmp(line, "ok ", 3)) {
		fprintf(out, "%s\t%s\n", b.st.name, b.st.file);
		fflush(out);
		e = 0;
	} else if (!strncmp(line, "error ", 6)) {
		e = -EIO;
		snprintf(err, errlen, "%s", line + 6);
	} else if (!strcmp(line, "interrupted")) {
		e = -EINTR;
		snprintf(err, errlen, "interrupted: the recorder was asked to stop ('nusku "
			 "sessions' says how %s ended)", b.st.name);
	} else {
		e = -EIO;
		snprintf(err, errlen, "the background recorder ended before its probes "
			 "were in (its log: %s)", b.st.log);
	}
cleanup:
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	if (logfd >= 0)
		close(logfd);
	if (nullfd >= 0)
		close(nullfd);
	if (lock >= 0)
		close(lock); /* the recorder keeps its own copy */
	close(b.dirfd);
	return e;
}
