/* The sessions of this user: what each state file says, what its lock
 * says about the recorder (sessions.h), and for a crashed one what its
 * file holds; printed as a table or JSON. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nusku/segdir.h>

#include "controller/sessions.h"
#include "report/output.h"

const char *nsk_session_status__name(int status)
{
	switch (status) {
	case NSK_SESSION_STARTING: return "starting";
	case NSK_SESSION_RUNNING: return "running";
	case NSK_SESSION_ENDED: return "ended";
	default: return "crashed";
	}
}

static double now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A crashed session's figures: its file's, read through the format
 * reader the first time and kept in its state while the file stays the
 * same size and age (a crashed session's file has no writer; reading a
 * big one takes a while, and every listing would). */
static void crashed_figures(int dirfd, struct nsk_session_info *out, const struct stat *sb)
{
	struct nsk_session_state *st = &out->st;
	uint64_t mtime = (uint64_t)sb->st_mtim.tv_sec * 1000000000ull +
			 (uint64_t)sb->st_mtim.tv_nsec;
	struct nsk_file_figures fig;
	int lock;

	if (!st->checked || st->checked_bytes != (uint64_t)sb->st_size ||
	    st->checked_mtime_ns != mtime) {
		if (nsk_sessions__file_figures(st->file, &fig))
			return; /* the recorder's last figures, then */
		st->checked = 1;
		st->checked_bytes = (uint64_t)sb->st_size;
		st->checked_mtime_ns = mtime;
		st->checked_dropped = fig.dropped;
		st->checked_ended = fig.ended;
		st->records = fig.records;
		st->lost = fig.lost;
		st->elapsed_ns = fig.elapsed_ns;
		if (fig.have_cost) {
			st->have_cost = 1;
			st->bpf_run_ns = fig.bpf_run_ns;
			st->bpf_runs = fig.bpf_runs;
		}
		/* kept only under the lock: a new session of this name may
		 * have just started and be writing its own state */
		lock = nsk_session_lock__take(dirfd, st->name);
		if (lock >= 0) {
			struct nsk_session_state now;

			if (!nsk_session_state__read(dirfd, st->name, &now) &&
			    now.pid == st->pid && now.pid_start == st->pid_start)
				nsk_session_state__write(dirfd, st);
			close(lock);
		}
	}
	out->figures_from_file = 1;
	out->file_ended = st->checked_ended;
	out->dropped_bytes = st->checked_dropped;
}

/* A continuous session's size: its segments' (include/nusku/segdir.h). */
static int64_t dir_bytes(const char *path)
{
	struct nsk_seg *v = NULL;
	int64_t sum = 0;
	size_t n = 0;
	char err[64];
	int fd = nsk_segdir__open(path, err, sizeof(err));

	if (fd < 0)
		return -1;
	if (!nsk_segdir__list(fd, &v, &n))
		for (size_t i = 0; i < n; i++)
			sum += (int64_t)v[i].bytes;
	free(v);
	close(fd);
	return sum;
}

int nsk_sessions__get(int dirfd, const char *name, int flags,
		      struct nsk_session_info *out)
{
	struct stat sb;
	int err, held;

	memset(out, 0, sizeof(*out));
	err = nsk_session_state__read(dirfd, name, &out->st);
	if (err < 0)
		return err;
	held = nsk_session_lock__held(dirfd, name);
	if (held < 0)
		return held;
	if (out->st.phase == NSK_PHASE_ENDED)
		out->status = NSK_SESSION_ENDED; /* also in its last moment */
	else if (held)
		out->status = out->st.phase == NSK_PHASE_STARTING ? NSK_SESSION_STARTING
								   : NSK_SESSION_RUNNING;
	else
		out->status = NSK_SESSION_CRASHED;
	out->file_bytes = -1;
	if (out->st.file[0] && !stat(out->st.file, &sb))
		out->file_bytes = S_ISDIR(sb.st_mode) ? dir_bytes(out->st.file)
						      : (int64_t)sb.st_size;
	out->file_ended = out->status == NSK_SESSION_ENDED;
	/* The recorder is gone without its end marker: the file is the
	 * truth about what was recorded. */
	if (out->status == NSK_SESSION_CRASHED && out->file_bytes >= 0 &&
	    (flags & NSK_SESSIONS_FIGURES))
		crashed_figures(dirfd, out, &sb);
	/* the recorder's CPU time and its programs' are as of its last
	 * state; a file's span is the time they cover once it has died */
	out->cost_elapsed_ns = out->st.elapsed_ns;
	if (out->status == NSK_SESSION_RUNNING && out->st.started > 0) {
		double age = now_unix() - out->st.started;

		if (age > 0)
			out->st.elapsed_ns = (uint64_t)(age * 1e9);
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct nsk_session_info *x = a, *y = b;

	if (x->st.started != y->st.started)
		return x->st.started < y->st.started ? -1 : 1;
	return strcmp(x->st.name, y->st.name);
}

int nsk_sessions__list(int dirfd, int flags, struct nsk_session_info **out, int *n)
{
	struct nsk_session_info *v = NULL, *nv;
	int cap = 0, cnt = 0, fd, err = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*n = 0;
	fd = dup(dirfd);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		char name[NSK_SESSION_NAME_MAX + 8];
		size_t len = strlen(de->d_name);

		if (len <= 6 || len - 6 > NSK_SESSION_NAME_MAX ||
		    strcmp(de->d_name + len - 6, ".state"))
			continue;
		memcpy(name, de->d_name, len - 6);
		name[len - 6] = '\0';
		if (!nsk_sessions__name_ok(name))
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, (size_t)cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				goto cleanup;
			}
			v = nv;
		}
		if (nsk_sessions__get(dirfd, name, flags, &v[cnt]) == 0)
			cnt++; /* one gone meanwhile, or not ours: skipped */
	}
	if (cnt > 1)
		qsort(v, (size_t)cnt, sizeof(*v), by_start);
	*out = v;
	*n = cnt;
	v = NULL;
cleanup:
	free(v);
	closedir(d);
	return err;
}

void nsk_sessions__of_pid(const struct nsk_session_info *v, int n, int pid,
			  char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && pid > 0; i++) {
		if ((!v[i].st.all && v[i].st.target_pid != pid) ||
		    (v[i].status != NSK_SESSION_RUNNING &&
						   v[i].status != NSK_SESSION_STARTING))
			continue;
		size_t need = strlen(v[i].st.name) + (used ? 1 : 0);

		if (used + need >= len)
			return; /* whole names only */
		snprintf(buf + used, len - used, "%s%s", used ? "," : "", v[i].st.name);
		used += need;
	}
}

/* ---- printing ---------------------------------------------------------- */

/* The recording's own cost as a share of one CPU while it runs: its BPF
 * programs' run time and the recorder's CPU time since it started, over
 * that time (what it cost to start, once, is apart: startup_cpu_ns); -1
 * when not known. */
static double cost_pct(const struct nsk_session_info *s)
{
	uint64_t cpu = s->st.cpu_ns > s->st.startup_cpu_ns ? s->st.cpu_ns - s->st.startup_cpu_ns : 0;
	double ns = (double)cpu + (s->st.have_cost ? (double)s->st.bpf_run_ns : 0);

	if (!s->cost_elapsed_ns || (!s->st.have_cost && !s->st.cpu_ns))
		return -1;
	return 100.0 * ns / (double)s->cost_elapsed_ns;
}

static void fmt_bytes(char *buf, size_t len, int64_t v)
{
	static const char unit[] = "BKMGT";
	double d = (double)v;
	int u = 0;

	if (v < 0) {
		snprintf(buf, len, "-");
		return;
	}
	while (d >= 1000.0 && u < 4) {
		d /= 1024.0;
		u++;
	}
	snprintf(buf, len, d < 10.0 && u ? "%.1f%c" : "%.0f%c", d, unit[u]);
}

static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	uint64_t s = ns / 1000000000ull;

	if (s < 60)
		snprintf(buf, len, "%.1fs", (double)ns / 1e9);
	else if (s < 3600)
		snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, len, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s / 60 % 60);
}

static void fmt_count(char *buf, size_t len, uint64_t v)
{
	if (v < 100000)
		snprintf(buf, len, "%" PRIu64, v);
	else if (v < 100000000)
		snprintf(buf, len, "%.0fk", (double)v / 1e3);
	else
		snprintf(buf, len, "%.0fM", (double)v / 1e6);
}

static void print_text(FILE *f, const struct nsk_session_info *v, int n)
{
	/* NAME STATE SIZE TIME EVENTS LOST COST TARGET: 80 columns, the
	 * target cut; the file and signals on a line of their own. */
	fprintf(f, "%-16s %-8s %6s %7s %7s %6s %6s %s\n", "NAME", "STATE", "SIZE",
		"TIME", "EVENTS", "LOST", "COST", "TARGET");
	for (int i = 0; i < n; i++) {
		const struct nsk_session_info *s = &v[i];
		char size[16], tm[16], ev[16], lost[16], cost[16], *t, *file, *sig;
		double c = cost_pct(s);

		fmt_bytes(size, sizeof(size), s->file_bytes);
		fmt_time(tm, sizeof(tm), s->st.elapsed_ns);
		fmt_count(ev, sizeof(ev), s->st.records);
		fmt_count(lost, sizeof(lost), s->st.lost);
		if (c < 0)
			snprintf(cost, sizeof(cost), "?");
		else
			snprintf(cost, sizeof(cost), c < 10 ? "%.2f%%" : "%.1f%%", c);
		{
			/* the program's directory would fill the column */
			const char *tg = s->st.target, *sp = strchr(tg, ' '), *sl = tg;

			for (const char *q = tg; *q && (!sp || q < sp); q++)
				if (*q == '/' && q[1] && q[1] != ' ')
					sl = q + 1;
			t = nsk_out__escaped(sl);
		}
		file = nsk_out__escaped(s->st.file);
		sig = nsk_out__escaped(s->st.signals);
		/* 63 columns before the target: 17 are left of 80 */
		fprintf(f, "%-16.16s %-8s %6s %7s %7s %6s %6s %.17s\n", s->st.name,
			nsk_session_status__name(s->status), size, tm, ev, lost, cost,
			t ? t : "?");
		fprintf(f, "  %s  [%s]%s\n", file ? file : "?", sig ? sig : "",
			s->status == NSK_SESSION_CRASHED && !s->file_ended ?
			"  (no END)" : "");
		free(t);
		free(file);
		free(sig);
	}
}

static void json_kv(FILE *f, const char *key, const char *v)
{
	fprintf(f, ",\"%s\":", key);
	nsk_out__json_str(f, v);
}

static void print_json(FILE *f, const struct nsk_session_info *v, int n)
{
	fputs("[", f);
	for (int i = 0; i < n; i++) {
		const struct nsk_session_info *s = &v[i];
		double c = cost_pct(s);

		fprintf(f, "%s\n{\"name\":", i ? "," : "");
		nsk_out__json_str(f, s->st.name);
		json_kv(f, "state", nsk_session_status__name(s->status));
		fprintf(f, ",\"pid\":%d,\"target_pid\":%d,\"all\":%s", s->st.pid,
			s->st.target_pid, s->st.all ? "true" : "false");
		json_kv(f, "target", s->st.target);
		json_kv(f, "signals", s->st.signals);
		json_kv(f, "file", s->st.file);
		json_kv(f, "log", s->st.log);
		fprintf(f, ",\"size_bytes\":%" PRId64 ",\"started\":%.3f,\"duration_s\":%.3f",
			s->file_bytes, s->st.started, (double)s->st.elapsed_ns / 1e9);
		fprintf(f, ",\"events\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"lost\":%" PRIu64,
			s->st.records, s->st.samples, s->st.lost);
		json_kv(f, "figures", s->figures_from_file ? "file" : s->st.final ? "end"
				       : "recorder");
		fprintf(f, ",\"file_complete\":%s,\"dropped_bytes\":%" PRIu64,
			s->file_ended ? "true" : "false", s->dropped_bytes);
		if (s->st.have_cost)
			fprintf(f, ",\"cost_bpf_ns\":%" PRIu64 ",\"cost_bpf_runs\":%" PRIu64,
				s->st.bpf_run_ns, s->st.bpf_runs);
		else
			fputs(",\"cost_bpf_ns\":null,\"cost_bpf_runs\":null", f);
		fprintf(f, ",\"cost_recorder_cpu_ns\":%" PRIu64 ",\"cost_startup_cpu_ns\":%" PRIu64
			",\"recorder_max_rss_kb\":%" PRIu64,
			s->st.cpu_ns > s->st.startup_cpu_ns ? s->st.cpu_ns - s->st.startup_cpu_ns : 0,
			s->st.startup_cpu_ns, s->st.max_rss_kb);
		if (c >= 0)
			fprintf(f, ",\"cost_pct\":%.3f", c);
		else
			fputs(",\"cost_pct\":null", f);
		if (s->st.phase == NSK_PHASE_ENDED)
			fprintf(f, ",\"exit_status\":%d", s->st.exit_status);
		else
			fputs(",\"exit_status\":null", f);
		if (s->st.error[0])
			json_kv(f, "error", s->st.error);
		else
			fputs(",\"error\":null", f);
		fputc('}', f);
	}
	fputs(n ? "\n]\n" : "]\n", f);
}

int nsk_sessions__print(FILE *f, const struct nsk_session_info *v, int n, int json)
{
	if (json)
		print_json(f, v, n);
	else
		print_text(f, v, n);
	if (fflush(f) != 0)
		return errno ? -errno : -EIO;
	return ferror(f) ? -EIO : 0;
}
