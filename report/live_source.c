/* Where nusku live's bytes come from: a file still being written (followed
 * like tail -f), a pipe on stdin, or a recorder child (local, or remote over
 * ssh) whose stdout is a pipe.
 *
 * The io handed to the format reader never blocks once the view is up: a
 * pipe with nothing in it says -EAGAIN, a file at its current end says 0
 * (the reader's follow mode turns both into "try later").  Every byte read
 * is also copied to -o, so the recording shown is the recording kept.
 *
 * A followed file has no end-of-file of its own; it has ended when no
 * process holds it open for writing any more (found in /proc) and nothing
 * new arrived, which is how a recorder that died mid-chunk is told apart
 * from one that is only quiet. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nusku/infile.h>
#include <nusku/outfile.h>

#include "report/live.h"

enum src_kind { SRC_FILE, SRC_PIPE, SRC_CHILD };

struct nsk_live_source {
	int kind;
	int fd;
	int close_fd;
	int tee_fd;
	int err_fd;	  /* the child's stderr, -1 when closed */
	pid_t child;	  /* 0: none or reaped */
	int remote;
	const char *host;
	int eof;	  /* read() said 0 on a pipe */
	int child_status;
	int child_reaped;
	uint64_t bytes;
	dev_t dev;	  /* the followed file */
	ino_t ino;
	uint64_t last_check_ns; /* writer scan, at most every 500 ms */
	uint64_t last_growth_ns;
	int writer_gone;
	char name[128];
	char errline[256]; /* the child's last stderr line */
	char errpart[256]; /* a line still being written */
	size_t errpart_len;
	int echo_err;	   /* copy the child's stderr to ours */
	struct nsk_io io;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Keeps the child's last complete stderr line: the recorder's own one-line
 * error, or ssh's. */
static void drain_err(struct nsk_live_source *s)
{
	char buf[1024];
	ssize_t n;

	while (s->err_fd >= 0) {
		n = read(s->err_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return; /* EAGAIN: nothing more now */
		if (n == 0) {
			close(s->err_fd);
			s->err_fd = -1;
			break;
		}
		if (s->echo_err)
			(void)!write(STDERR_FILENO, buf, n);
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];

			if (c == '\n' || c == '\r') {
				if (s->errpart_len) {
					s->errpart[s->errpart_len] = '\0';
					snprintf(s->errline, sizeof(s->errline),
						 "%s", s->errpart);
					s->errpart_len = 0;
				}
			} else if (s->errpart_len + 1 < sizeof(s->errpart)) {
				s->errpart[s->errpart_len++] = c;
			}
		}
	}
	if (s->errpart_len) {
		s->errpart[s->errpart_len] = '\0';
		snprintf(s->errline, sizeof(s->errline), "%s", s->errpart);
		s->errpart_len = 0;
	}
}

static int tee_bytes(struct nsk_live_source *s, const void *buf, size_t len)
{
	const char *p = buf;

	while (s->tee_fd >= 0 && len) {
		ssize_t n = write(s->tee_fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

static ssize_t src_read(void *ctx, void *buf, size_t len)
{
	struct nsk_live_source *s = ctx;
	ssize_t n;
	int err;

	if (s->err_fd >= 0)
		drain_err(s);
	do
		n = read(s->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0) {
		/* A followed file's current end is "later" until its
		 * writer is gone; the reader then sees a real end and
		 * says what an unfinished last chunk cost. */
		if (s->kind == SRC_FILE && !nsk_live_source__ended(s))
			return -EAGAIN;
		s->eof = 1;
		return 0;
	}
	s->bytes += n;
	s->last_growth_ns = now_ns();
	err = tee_bytes(s, buf, n);
	if (err < 0)
		return err;
	return n;
}

static int src_close(void *ctx)
{
	(void)ctx; /* the source outlives the reader and is freed on its own */
	return 0;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static int spawn(struct nsk_live_source *s, char **argv, int null_stdin,
		 char *err, size_t errlen)
{
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	pid_t pid;
	int res;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		res = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(-res));
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		res = -errno;
		snprintf(err, errlen, "fork: %s", strerror(-res));
		goto fail;
	}
	if (pid == 0) {
		int devnull;

		if (null_stdin) {
			devnull = open("/dev/null", O_RDONLY);
			if (devnull >= 0)
				dup2(devnull, STDIN_FILENO);
		}
		dup2(out[1], STDOUT_FILENO);
		dup2(errp[1], STDERR_FILENO);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(out[1]);
	close(errp[1]);
	s->fd = out[0];
	s->close_fd = 1;
	s->err_fd = errp[0];
	s->child = pid;
	set_nonblock(s->err_fd);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return res;
}

int nsk_live_source__open(const struct nsk_live_opts *o,
			  struct nsk_live_source **out, char *err,
			  size_t errlen)
{
	struct nsk_live_source *s = calloc(1, sizeof(*s));
	char **argv = NULL;
	struct stat st;
	int res = 0;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->fd = -1;
	s->tee_fd = -1;
	s->err_fd = -1;
	s->io.read = src_read;
	s->io.close = src_close;
	s->io.ctx = s;
	s->last_growth_ns = now_ns();

	if (o->output && o->input && strcmp(o->input, "-")) {
		struct stat in, outst;

		if (stat(o->input, &in) == 0 && stat(o->output, &outst) == 0 &&
		    in.st_dev == outst.st_dev && in.st_ino == outst.st_ino) {
			res = -EINVAL;
			snprintf(err, errlen, "-o %s is the recording being read",
				 o->output);
			goto cleanup;
		}
	}
	if (o->output) {
		struct nsk_outfile of;

		/* As record -o does (include/nusku/outfile.h); the copy
		 * takes its name at once, as it grows like a recording. */
		res = nsk_outfile__create_recording(&of, o->output, err, errlen);
		if (!res) {
			res = nsk_outfile__commit(&of, err, errlen);
			if (res)
				nsk_outfile__discard(&of);
		}
		if (res)
			goto cleanup;
		s->tee_fd = of.fd;
		of.fd = -1;
		nsk_outfile__release(&of);
	}

	if (o->ssh_host) {
		s->kind = SRC_CHILD;
		s->remote = 1;
		s->host = o->ssh_host;
		snprintf(s->name, sizeof(s->name), "ssh %s", o->ssh_host);
		/* With a terminal, ssh may ask for a password on /dev/tty
		 * before the view starts; without one it must not wait. */
		argv = nsk_live__ssh_argv(o, !isatty(STDIN_FILENO));
		if (!argv) {
			res = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto cleanup;
		}
		res = spawn(s, argv, 1, err, errlen);
	} else if (!o->input) {
		s->kind = SRC_CHILD;
		snprintf(s->name, sizeof(s->name), "record %s",
			 o->all ? "-a" : o->pid > 0 ? "-p" : o->cmd[0]);
		if (o->pid > 0)
			snprintf(s->name, sizeof(s->name), "record -p %d",
				 o->pid);
		argv = nsk_live__record_argv(o, "/proc/self/exe");
		if (!argv) {
			res = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto cleanup;
		}
		res = spawn(s, argv, !o->force_snapshot &&
					     isatty(STDOUT_FILENO),
			    err, errlen);
	} else if (!strcmp(o->input, "-")) {
		s->kind = SRC_PIPE;
		snprintf(s->name, sizeof(s->name), "stdin");
		if (isatty(STDIN_FILENO)) {
			res = -EINVAL;
			snprintf(err, errlen,
				 "stdin is a terminal; pipe a recording in "
				 "(nusku record -o - ... | nusku live -)");
			goto cleanup;
		}
		s->fd = STDIN_FILENO;
		if (fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode)) {
			/* `nusku live - < run.nsk`: a file, followed. */
			s->kind = SRC_FILE;
			s->dev = st.st_dev;
			s->ino = st.st_ino;
		}
	} else {
		const char *base = strrchr(o->input, '/');

		s->kind = SRC_FILE;
		snprintf(s->name, sizeof(s->name), "%s",
			 base ? base + 1 : o->input);
		/* Not a device, and a FIFO only once its writer writes
		 * (include/nusku/infile.h). */
		s->fd = nsk_infile__open(o->input, NSK_INFILE_FIFO_WAIT_MS,
					 NULL, err, errlen);
		/* `nusku record -o run.nsk ... & nusku live run.nsk`: the
		 * recorder creates its file once its probes are attached;
		 * give it a few seconds to appear. */
		for (int i = 0; s->fd == -ENOENT && i < 50; i++) {
			usleep(100000);
			s->fd = nsk_infile__open(o->input,
						 NSK_INFILE_FIFO_WAIT_MS, NULL,
						 err, errlen);
		}
		if (s->fd < 0) {
			res = s->fd;
			s->fd = -1;
			if (res == -ENOENT)
				snprintf(err, errlen, "cannot open %s: %s",
					 o->input, strerror(-res));
			goto cleanup;
		}
		s->close_fd = 1;
		if (fstat(s->fd, &st) < 0) {
			res = -errno;
			snprintf(err, errlen, "%s: %s", o->input,
				 strerror(-res));
			goto cleanup;
		}
		if (!S_ISREG(st.st_mode)) {
			/* A named pipe: read like stdin. */
			s->kind = SRC_PIPE;
		}
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
cleanup:
	nsk_live__free_argv(argv);
	if (res < 0) {
		nsk_live_source__free(s);
		return res;
	}
	*out = s;
	return 0;
}

/* Does any other process hold the file open for writing?  Walks
 * /proc/PID/fd; processes we may not look into count as "maybe". */
static int file_has_writer(struct nsk_live_source *s)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	int found = 0;

	if (!proc)
		return 1;
	while (!found && (de = readdir(proc))) {
		char path[300], info[600], line[128];
		struct dirent *fe;
		DIR *fds;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    atoi(de->d_name) == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		fds = opendir(path);
		if (!fds) {
			/* Another user's process may be the writer. */
			if (errno == EACCES || errno == EPERM)
				found = 1;
			continue;
		}
		while (!found && (fe = readdir(fds))) {
			struct stat st;
			FILE *f;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(info, sizeof(info), "%s/%s", path,
				 fe->d_name);
			if (stat(info, &st) < 0 || st.st_dev != s->dev ||
			    st.st_ino != s->ino)
				continue;
			snprintf(info, sizeof(info), "/proc/%s/fdinfo/%s",
				 de->d_name, fe->d_name);
			f = fopen(info, "re");
			if (!f) {
				found = 1;
				break;
			}
			while (fgets(line, sizeof(line), f)) {
				unsigned long flags;

				if (sscanf(line, "flags: %lo", &flags) == 1 &&
				    (flags & O_ACCMODE) != O_RDONLY)
					found = 1;
			}
			fclose(f);
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

int nsk_live_source__ended(struct nsk_live_source *s)
{
	uint64_t now;

	if (s->eof || s->kind != SRC_FILE)
		return s->eof;
	if (s->writer_gone)
		return 1;
	now = now_ns();
	/* Only a quiet file needs the scan; a growing one has a writer. */
	if (now - s->last_growth_ns < 500000000ull ||
	    now - s->last_check_ns < 500000000ull)
		return 0;
	s->last_check_ns = now;
	if (!file_has_writer(s)) {
		/* Bytes written just before the writer closed may still
		 * be unread: say "ended" only once they are read too. */
		struct stat st;
		off_t pos = lseek(s->fd, 0, SEEK_CUR);

		if (fstat(s->fd, &st) == 0 && pos >= 0 && st.st_size > pos)
			return 0;
		s->writer_gone = 1;
	}
	return s->writer_gone;
}

int nsk_live_source__wait_start(struct nsk_live_source *s, char *err,
				size_t errlen)
{
	struct pollfd pfd[2];
	struct stat st;

	if (s->kind == SRC_FILE) {
		for (;;) {
			if (fstat(s->fd, &st) < 0)
				return -errno;
			if (st.st_size > 0)
				return 0;
			s->last_growth_ns = 0;
			if (nsk_live_source__ended(s)) {
				snprintf(err, errlen,
					 "%s is empty and nothing is writing it",
					 s->name);
				return -EPIPE;
			}
			usleep(100000);
		}
	}
	for (;;) {
		int n = 0;

		pfd[n].fd = s->fd;
		pfd[n++].events = POLLIN;
		if (s->err_fd >= 0) {
			pfd[n].fd = s->err_fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				return -EINTR;
			return -errno;
		}
		if (n > 1 && pfd[1].revents)
			drain_err(s);
		if (pfd[0].revents & POLLIN)
			return 0;
		if (pfd[0].revents & (POLLHUP | POLLERR)) {
			int status;
			char msg[320];

			s->eof = 1;
			if (s->child) {
				drain_err(s);
				waitpid(s->child, &status, 0);
				s->child_reaped = 1;
				s->child_status = WIFEXITED(status)
					? WEXITSTATUS(status)
					: 128 + WTERMSIG(status);
				s->child = 0;
				drain_err(s);
				nsk_live__explain_exit(msg, sizeof(msg),
						       s->remote,
						       s->child_status,
						       s->errline, s->host);
				snprintf(err, errlen, "%s",
					 *msg ? msg
					      : "the recorder wrote nothing");
			} else {
				snprintf(err, errlen,
					 "the stream ended before it began");
			}
			return -EPIPE;
		}
	}
}

struct nsk_io *nsk_live_source__io(struct nsk_live_source *s)
{
	struct nsk_io *io = malloc(sizeof(*io));

	if (!io)
		return NULL;
	*io = s->io;
	if (s->kind != SRC_FILE)
		set_nonblock(s->fd);
	return io;
}

int nsk_live_source__fd(const struct nsk_live_source *s)
{
	return s->kind == SRC_FILE ? -1 : s->fd;
}

uint64_t nsk_live_source__bytes(const struct nsk_live_source *s)
{
	return s->bytes;
}

const char *nsk_live_source__name(const struct nsk_live_source *s)
{
	return s->name;
}

int nsk_live_source__child_done(struct nsk_live_source *s, int *status,
				char *msg, size_t len)
{
	int ws;
	pid_t r;

	if (s->err_fd >= 0)
		drain_err(s);
	if (!s->child_reaped) {
		if (!s->child)
			return 0;
		r = waitpid(s->child, &ws, WNOHANG);
		if (r <= 0)
			return 0;
		s->child_reaped = 1;
		s->child = 0;
		s->child_status = WIFEXITED(ws) ? WEXITSTATUS(ws)
						: 128 + WTERMSIG(ws);
		drain_err(s);
	}
	*status = s->child_status;
	nsk_live__explain_exit(msg, len, s->remote, s->child_status,
			       s->errline, s->host);
	return 1;
}

static void reaped(struct nsk_live_source *s, int ws)
{
	s->child = 0;
	s->child_reaped = 1;
	s->child_status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

void nsk_live_source__interrupt(struct nsk_live_source *s)
{
	if (s->child)
		kill(s->child, SIGINT);
}

void nsk_live_source__wait_child(struct nsk_live_source *s, int timeout_ms)
{
	int ws;

	for (int i = 0; s->child && i <= timeout_ms / 20; i++) {
		if (waitpid(s->child, &ws, WNOHANG) == s->child) {
			reaped(s, ws);
			break;
		}
		usleep(20000);
	}
	if (s->err_fd >= 0)
		drain_err(s);
}

void nsk_live_source__stop(struct nsk_live_source *s)
{
	int ws;

	if (!s->child)
		return;
	/* SIGINT lets the recorder end its file cleanly; then insist. */
	kill(s->child, SIGINT);
	for (int i = 0; i < 30; i++) {
		if (waitpid(s->child, &ws, WNOHANG) == s->child)
			goto done;
		usleep(100000);
	}
	kill(s->child, SIGTERM);
	for (int i = 0; i < 20; i++) {
		if (waitpid(s->child, &ws, WNOHANG) == s->child)
			goto done;
		usleep(100000);
	}
	kill(s->child, SIGKILL);
	if (waitpid(s->child, &ws, 0) != s->child)
		return;
done:
	reaped(s, ws);
}

void nsk_live_source__free(struct nsk_live_source *s)
{
	if (!s)
		return;
	nsk_live_source__stop(s);
	if (s->close_fd && s->fd >= 0)
		close(s->fd);
	if (s->err_fd >= 0)
		close(s->err_fd);
	if (s->tee_fd >= 0)
		close(s->tee_fd);
	free(s);
}
