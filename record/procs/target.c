/* Target control: launch a program so that its first instruction is
 * observed, attach to a running process, or record them all (-a).
 *
 * A launched program is forked at once but waits on a pipe; the recorder
 * puts its pid in the target map, starts every probe, and only then writes
 * the message that lets it exec, with the environment the signals asked
 * for (the allocation sampler's LD_PRELOAD).  If anything fails before that, closing the
 * pipe makes the child exit without running the program.  A pidfd tells
 * the event loop when the target ended, for a child or a stranger alike.
 * With -a there is no target to end: key 0 of the map turns every process
 * into one (bpf/target.bpf.h), the processes already running are read from
 * /proc once the probes are in, and the recording ends on a signal or -d.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "record/hurry.h"
#include "record/session_int.h"

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int add_target(struct nsk_session *s, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;

	if (bpf_map_update_elem(s->targets_fd, &key, &one, BPF_ANY))
		return nsk_session__fail(s, -errno, "cannot add pid %d to the target map: %s",
					 (int)pid, strerror(errno));
	return 0;
}

/* execvp's search, done before forking so "not found" is a clean error. */
static int find_program(struct nsk_session *s, const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];
	int saw_eacces = 0;

	if (strchr(prog, '/')) {
		struct stat st;

		if (stat(prog, &st))
			return nsk_session__fail(s, -errno, "%s: %s", prog,
						 errno == ENOENT ? "program not found"
								 : strerror(errno));
		if (S_ISDIR(st.st_mode) || access(prog, X_OK))
			return nsk_session__fail(s, -EACCES, "%s: not an executable file", prog);
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)len, path,
			 len ? "/" : "", prog);
		if (!stat(buf, &st) && !S_ISDIR(st.st_mode)) {
			if (!access(buf, X_OK))
				return 0;
			saw_eacces = 1;
		}
		path += len + (path[len] == ':');
	}
	if (saw_eacces)
		return nsk_session__fail(s, -EACCES, "%s: not an executable file", prog);
	return nsk_session__fail(s, -ENOENT, "%s: program not found (searched PATH)", prog);
}

/* The go message: 'g', a 32-bit length and NAME=value strings, the
 * environment the signals asked for.  It is written at once and fits in
 * PIPE_BUF, so one read takes it whole: the program's syscalls then start
 * at its exec as they did before there was an environment to pass. */
#define GO_MAX 4096

static int child_go(int rfd)
{
	char msg[GO_MAX + 1], *p, *end;
	ssize_t got = 0, r;
	uint32_t len = 0;

	while (got < 5 || got < 5 + (ssize_t)len) {
		r = read(rfd, msg + got, GO_MAX - (size_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || msg[0] != 'g')
			return -1;
		got += r;
		if (got >= 5) {
			memcpy(&len, msg + 1, sizeof(len));
			if (len > GO_MAX - 5)
				return -1;
		}
	}
	msg[got] = '\0';
	for (p = msg + 5, end = msg + 5 + len; p < end;) {
		char *eq = strchr(p, '='), *next = p + strlen(p) + 1;

		if (!eq || next > end)
			return -1;
		*eq = '\0';
		if (setenv(p, eq + 1, 1))
			return -1;
		p = next;
	}
	return 0;
}

static void child(struct nsk_session *s, int rfd)
{
	/* The recorder's dispositions must not leak into the program. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	/* With -o -, stdout carries the recording: the program writes to
	 * stderr instead. */
	if (!strcmp(s->opts.output, "-") && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		_exit(127);
	if (child_go(rfd))
		_exit(127); /* the recorder gave up */
	close(rfd);
	execvp(s->opts.argv[0], s->opts.argv);
	fprintf(stderr, "nusku: record: cannot execute %s: %s\n",
		s->opts.argv[0], strerror(errno));
	_exit(127);
}

static int launch(struct nsk_session *s)
{
	int p[2], err;
	pid_t pid;

	if (!s->opts.argv || !s->opts.argv[0])
		return nsk_session__fail(s, -EINVAL, "no program to record");
	err = find_program(s, s->opts.argv[0]);
	if (err)
		return err;
	if (pipe2(p, O_CLOEXEC))
		return nsk_session__fail(s, -errno, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return nsk_session__fail(s, err, "fork: %s", strerror(-err));
	}
	if (pid == 0) {
		close(p[1]);
		child(s, p[0]);
	}
	close(p[0]);
	s->go_fd = p[1];
	s->root = pid;
	s->pidfd = pidfd_open(pid);
	return add_target(s, pid);
}

#define PF_KTHREAD_FLAG 0x00200000u /* include/linux/sched.h */

/* The state (3rd) and flags (9th) fields of /proc/PID/stat, after the
 * parenthesised name, which may hold spaces and parentheses itself, and
 * the name. */
static int read_stat_flags(pid_t pid, char *state, unsigned int *flags,
			   char *comm, size_t len)
{
	char path[64], buf[1024], *lp, *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp ||
	    sscanf(rp + 1, " %c %*d %*d %*d %*d %*d %u", state, flags) != 2)
		return -EIO;
	snprintf(comm, len, "%.*s", (int)(rp - lp - 1), lp + 1);
	return 0;
}

/* What a recording of an existing process needs beyond the BPF
 * privileges, checked now so the error names it: a process with user
 * space (a kernel thread has none: its profile would be empty), and its
 * memory map, which the kernel's ptrace access check guards (CAP_PERFMON
 * passes it for most processes, not for every init): without it no user
 * frame of the process can be named. */
static int check_attachable(struct nsk_session *s, pid_t pid)
{
	unsigned int flags = 0;
	char path[64], comm[64], state = 0;
	int fd, err;

	err = read_stat_flags(pid, &state, &flags, comm, sizeof(comm));
	if (err == -ENOENT)
		return nsk_session__fail(s, -ESRCH, "no such process: %d", (int)pid);
	if (err)
		return nsk_session__fail(s, err, "cannot read /proc/%d/stat: %s",
					 (int)pid, strerror(-err));
	if (flags & PF_KTHREAD_FLAG)
		return nsk_session__fail(s, -EINVAL,
			"pid %d (%s) is a kernel thread: it has no user space, "
			"a profile of it would be empty", (int)pid, comm);
	if (state == 'Z' || state == 'X')
		return nsk_session__fail(s, -ESRCH,
			"pid %d (%s) has exited (its parent has not reaped it "
			"yet): nothing of it runs", (int)pid, comm);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -EACCES || err == -EPERM)
			return nsk_session__fail(s, err,
				"cannot read %s: %s (the kernel's ptrace access "
				"check; without its memory map none of its code "
				"can be named)", path, strerror(-err));
		return nsk_session__fail(s, err == -ENOENT ? -ESRCH : err,
					 "cannot read %s: %s", path, strerror(-err));
	}
	close(fd);
	return 0;
}

static int attach(struct nsk_session *s)
{
	pid_t pid = s->opts.pid;
	int err;

	if (pid <= 0)
		return nsk_session__fail(s, -ESRCH, "no such process: %d", (int)pid);
	err = check_attachable(s, pid);
	if (err)
		return err;
	s->root = pid;
	s->pidfd = pidfd_open(pid);
	if (s->pidfd < 0)
		return nsk_session__fail(s, -errno, "cannot watch process %d: %s",
					 (int)pid, strerror(errno));
	return add_target(s, pid);
}

/* -a: every process, from the moment the probes attach. */
static int all(struct nsk_session *s)
{
	__u32 key = 0;
	__u8 on = 1;

	if (bpf_map_update_elem(s->targets_fd, &key, &on, BPF_ANY))
		return nsk_session__fail(s, -errno, "cannot switch the target map "
					 "to every process: %s", strerror(errno));
	return 0;
}

int nsk_target__prepare(struct nsk_session *s)
{
	if (s->opts.all)
		return all(s);
	return s->launched ? launch(s) : attach(s);
}

/* -a: the processes running now, kernel threads included (their CPU
 * samples are theirs), the recorder left out.  Process tracking is on, so
 * one that starts from here is told of by its fork; the events already
 * waiting are handled first, and a pid already known is not told of
 * twice.  One that exits during the scan is simply not there. */
static int announce_all(struct nsk_session *s)
{
	uint64_t now = nsk_session__now();
	uint32_t self = (uint32_t)getpid();
	struct dirent *de;
	DIR *d;

	nsk_proc__sync(s);
	d = opendir("/proc");
	if (!d)
		return nsk_session__fail(s, -errno, "cannot list /proc: %s",
					 strerror(errno));
	while ((de = readdir(d)) && !s->err) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid == self || pid > UINT32_MAX ||
		    nsk_proc__get(s, (uint32_t)pid, 0))
			continue;
		/* gone meanwhile, or its maps unreadable: what can be
		 * named of it is */
		(void)nsk_proc__announce(s, (uint32_t)pid, 0, NSK_PROC_ATTACHED, now);
	}
	closedir(d);
	return s->err;
}

int nsk_session__launch_env(struct nsk_session *s, const char *name,
			    const char *value)
{
	size_t add = strlen(name) + 1 + strlen(value) + 1;
	char *grown;

	if (!s->launched || s->go_fd < 0 || strchr(name, '='))
		return -EINVAL;
	if (5 + s->launch_env_len + add > GO_MAX)
		return -E2BIG; /* see child_go() */
	grown = realloc(s->launch_env, s->launch_env_len + add);
	if (!grown)
		return -ENOMEM;
	sprintf(grown + s->launch_env_len, "%s=%s", name, value);
	s->launch_env = grown;
	s->launch_env_len += add;
	return 0;
}

int nsk_target__release(struct nsk_session *s)
{
	uint64_t now = nsk_session__now();
	char msg[GO_MAX];
	uint32_t len;
	int err;

	if (s->opts.all)
		return announce_all(s);
	if (!s->launched)
		return nsk_proc__announce(s, (uint32_t)s->root, 0,
					  NSK_PROC_ATTACHED, now);
	err = nsk_proc__announce(s, (uint32_t)s->root, (uint32_t)getpid(),
				 NSK_PROC_LAUNCHED, now);
	if (err)
		return err;
	len = (uint32_t)s->launch_env_len;
	msg[0] = 'g';
	memcpy(msg + 1, &len, sizeof(len));
	if (len)
		memcpy(msg + 5, s->launch_env, len);
	if (write(s->go_fd, msg, 5 + len) != (ssize_t)(5 + len))
		return nsk_session__fail(s, -errno, "cannot start %s: %s",
					 s->opts.argv[0], strerror(errno));
	close(s->go_fd);
	s->go_fd = -1;
	return 0;
}

void nsk_target__finish(struct nsk_session *s, int terminate)
{
	int status;

	if (!s->launched || s->root <= 0 || s->reaped)
		return;
	if (s->go_fd >= 0) {
		/* never released: the child exits on its own */
		close(s->go_fd);
		s->go_fd = -1;
	} else if (terminate && waitpid(s->root, &status, WNOHANG) == 0) {
		struct pollfd pfd = { .fd = s->pidfd, .events = POLLIN };

		/* The recording is over; the program gets 5 s to go, and
		 * the priority to go at once: on a loaded machine a shell
		 * waited 80-270 ms to run its death. */
		nsk_hurry__thread(s->root);
		kill(s->root, SIGTERM);
		if (s->pidfd >= 0 && poll(&pfd, 1, 5000) == 0)
			kill(s->root, SIGKILL);
	} else if (!terminate) {
		status = 0;
	}
	while (waitpid(s->root, &status, 0) < 0 && errno == EINTR)
		;
	s->root_status = status;
	s->reaped = 1;
}

void nsk_target__forget_all(struct nsk_session *s)
{
	/* Deleting the key in hand makes get_next_key start over, so each
	 * sweep asks for the first key until the map is empty.  A fork that
	 * read its parent in the map before the sweep adds its child after
	 * it: the second sweep takes that one out. */
	for (int sweep = 0; sweep < 2 && s->targets_fd >= 0; sweep++) {
		__u32 key;

		for (int n = 0; n < 2 * 8192 &&
				!bpf_map_get_next_key(s->targets_fd, NULL, &key); n++)
			bpf_map_delete_elem(s->targets_fd, &key);
	}
}
