/* A session's state file and its lock.
 *
 * NAME.state is text, one key=value a line, so a person can read it; a
 * value's bytes below 0x20, DEL and '%' are written %XX (a target's
 * command line may hold a newline).  It is replaced whole, never edited:
 * written to a new 0600 file and renamed over the old one, so a reader
 * sees the old state or the new one, never half.  Keys it does not know
 * are skipped, keys it misses keep their zero: a newer or older nusku
 * reads what it can.
 *
 * NAME.lock holds no data; the recorder's exclusive flock on it is the
 * session's life (sessions.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "controller/sessions.h"

#define STATE_MAX_BYTES (64u << 10)

static double now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, "%s=", key);
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '%')
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
	}
	fputc('\n', f);
}

static void put_u64(FILE *f, const char *key, uint64_t v)
{
	fprintf(f, "%s=%" PRIu64 "\n", key, v);
}

static const char *const phase_names[] = { "starting", "running", "ended", "failed" };

int nsk_session_state__write(int dirfd, struct nsk_session_state *st)
{
	char tmp[NSK_SESSION_NAME_MAX + 32], dst[NSK_SESSION_NAME_MAX + 8];
	FILE *f = NULL;
	int fd, err = 0;

	if (!nsk_sessions__name_ok(st->name))
		return -EINVAL;
	st->updated = now_unix();
	snprintf(tmp, sizeof(tmp), ".%s.state.%d", st->name, (int)getpid());
	snprintf(dst, sizeof(dst), "%s.state", st->name);
	unlinkat(dirfd, tmp, 0); /* ours, left by an earlier write that failed */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto cleanup;
	}
	fprintf(f, "nusku-session=1\n");
	put_str(f, "name", st->name);
	put_str(f, "phase", phase_names[st->phase >= 0 && st->phase <= 3 ? st->phase : 0]);
	fprintf(f, "pid=%d\npid_start=%llu\ntarget_pid=%d\nall=%d\n", st->pid,
		st->pid_start, st->target_pid, st->all);
	put_str(f, "target", st->target);
	put_str(f, "signals", st->signals);
	put_str(f, "file", st->file);
	put_str(f, "log", st->log);
	fprintf(f, "started=%.3f\nupdated=%.3f\nfinal=%d\n", st->started, st->updated,
		st->final);
	put_u64(f, "elapsed_ns", st->elapsed_ns);
	put_u64(f, "records", st->records);
	put_u64(f, "samples", st->samples);
	put_u64(f, "lost", st->lost);
	put_u64(f, "bytes", st->bytes);
	fprintf(f, "have_cost=%d\n", st->have_cost);
	put_u64(f, "bpf_run_ns", st->bpf_run_ns);
	put_u64(f, "bpf_runs", st->bpf_runs);
	put_u64(f, "cpu_ns", st->cpu_ns);
	put_u64(f, "startup_cpu_ns", st->startup_cpu_ns);
	put_u64(f, "max_rss_kb", st->max_rss_kb);
	fprintf(f, "exit_status=%d\n", st->exit_status);
	put_str(f, "error", st->error);
	fprintf(f, "checked=%d\nchecked_ended=%d\n", st->checked, st->checked_ended);
	put_u64(f, "checked_bytes", st->checked_bytes);
	put_u64(f, "checked_mtime_ns", st->checked_mtime_ns);
	put_u64(f, "checked_dropped", st->checked_dropped);
	if (fflush(f) || ferror(f))
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (!err && renameat(dirfd, tmp, dirfd, dst) < 0)
		err = -errno;
cleanup:
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

/* %XX back to bytes, in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		unsigned v;

		if (*s == '%' && sscanf(s + 1, "%2X", &v) == 1 && v) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static void set(struct nsk_session_state *st, const char *k, char *v)
{
	struct { const char *key; char *dst; size_t len; } strs[] = {
		{ "name", st->name, sizeof(st->name) },
		{ "target", st->target, sizeof(st->target) },
		{ "signals", st->signals, sizeof(st->signals) },
		{ "file", st->file, sizeof(st->file) },
		{ "log", st->log, sizeof(st->log) },
		{ "error", st->error, sizeof(st->error) },
	};
	struct { const char *key; uint64_t *dst; } nums[] = {
		{ "elapsed_ns", &st->elapsed_ns }, { "records", &st->records },
		{ "samples", &st->samples }, { "lost", &st->lost },
		{ "bytes", &st->bytes }, { "bpf_run_ns", &st->bpf_run_ns },
		{ "bpf_runs", &st->bpf_runs }, { "cpu_ns", &st->cpu_ns },
		{ "startup_cpu_ns", &st->startup_cpu_ns },
		{ "checked_bytes", &st->checked_bytes },
		{ "checked_mtime_ns", &st->checked_mtime_ns },
		{ "checked_dropped", &st->checked_dropped },
		{ "max_rss_kb", &st->max_rss_kb },
	};

	unescape(v);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!strcmp(k, strs[i].key)) {
			snprintf(strs[i].dst, strs[i].len, "%s", v);
			return;
		}
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (!strcmp(k, nums[i].key)) {
			*nums[i].dst = strtoull(v, NULL, 10);
			return;
		}
	if (!strcmp(k, "phase")) {
		for (int i = 0; i < 4; i++)
			if (!strcmp(v, phase_names[i]))
				st->phase = i;
	} else if (!strcmp(k, "pid")) {
		st->pid = atoi(v);
	} else if (!strcmp(k, "pid_start")) {
		st->pid_start = strtoull(v, NULL, 10);
	} else if (!strcmp(k, "target_pid")) {
		st->target_pid = atoi(v);
	} else if (!strcmp(k, "all")) {
		st->all = atoi(v) == 1;
	} else if (!strcmp(k, "started")) {
		st->started = strtod(v, NULL);
	} else if (!strcmp(k, "updated")) {
		st->updated = strtod(v, NULL);
	} else if (!strcmp(k, "final")) {
		st->final = atoi(v);
	} else if (!strcmp(k, "have_cost")) {
		st->have_cost = atoi(v);
	} else if (!strcmp(k, "exit_status")) {
		st->exit_status = atoi(v);
	} else if (!strcmp(k, "checked")) {
		st->checked = atoi(v);
	} else if (!strcmp(k, "checked_ended")) {
		st->checked_ended = atoi(v);
	}
}

int nsk_session_state__read(int dirfd, const char *name,
			    struct nsk_session_state *st)
{
	char path[NSK_SESSION_NAME_MAX + 8], *buf = NULL, *line, *save = NULL;
	struct stat sb;
	ssize_t n, got = 0;
	int fd, err = 0;

	memset(st, 0, sizeof(*st));
	if (!nsk_sessions__name_ok(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s.state", name);
	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    sb.st_size > STATE_MAX_BYTES) {
		err = -EBADMSG;
		goto cleanup;
	}
	buf = malloc(STATE_MAX_BYTES + 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (got < (ssize_t)STATE_MAX_BYTES &&
	       (n = read(fd, buf + got, STATE_MAX_BYTES - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	if (strncmp(buf, "nusku-session=1\n", 16)) {
		err = -EBADMSG;
		goto cleanup;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			continue;
		*eq = '\0';
		set(st, line, eq + 1);
	}
	if (strcmp(st->name, name))
		err = -EBADMSG; /* a state file under another's name */
cleanup:
	free(buf);
	close(fd);
	return err;
}

int nsk_session_state__remove(int dirfd, const char *name)
{
	static const char *const ext[] = { ".state", ".log", ".lock" };
	char path[NSK_SESSION_NAME_MAX + 8];
	int lock;

	/* held while removing, so no recorder is running under this name;
	 * one that opened the lock file meanwhile sees it is gone (above) */
	lock = nsk_session_lock__take(dirfd, name);
	if (lock < 0)
		return lock;
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", name, ext[i]);
		unlinkat(dirfd, path, 0);
	}
	close(lock);
	return 0;
}

static int open_lock(int dirfd, const char *name, int create)
{
	char path[NSK_SESSION_NAME_MAX + 8];
	struct stat sb;
	int fd;

	if (!nsk_sessions__name_ok(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s.lock", name);
	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
		    (create ? O_CREAT : 0), 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EBADMSG;
	}
	return fd;
}

int nsk_session_lock__take(int dirfd, const char *name)
{
	int fd = open_lock(dirfd, name, 1);

	if (fd < 0)
		return fd;
	/* A lister holds a shared lock for a moment (nsk_session_lock__held):
	 * wait that out, not a running session. */
	for (int i = 0; i < 40; i++) {
		struct timespec ms5 = { 0, 5000000 };
		char path[NSK_SESSION_NAME_MAX + 8];
		struct stat a, b;

		if (!flock(fd, LOCK_EX | LOCK_NB)) {
			/* Still the file of that name?  One removed meanwhile
			 * (sessions --clean) would be a lock nobody else sees. */
			snprintf(path, sizeof(path), "%s.lock", name);
			if (!fstat(fd, &a) && !fstatat(dirfd, path, &b, AT_SYMLINK_NOFOLLOW) &&
			    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
				return fd;
			close(fd);
			fd = open_lock(dirfd, name, 1);
			if (fd < 0)
				return fd;
			continue;
		}
		if (errno != EWOULDBLOCK)
			break;
		nanosleep(&ms5, NULL);
	}
	close(fd);
	return errno == EWOULDBLOCK ? -EBUSY : -errno;
}

int nsk_session_lock__held(int dirfd, const char *name)
{
	int fd = open_lock(dirfd, name, 0), held;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd); /* drops the shared lock if we got it */
	return held;
}

unsigned long long nsk_sessions__pid_start(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* after the comm, which may hold anything but ends at the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* fields 3..21 skipped, 22 is the start time */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return start;
}
