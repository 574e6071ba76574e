/* nusku export --format chrome: the recording as a timeline in the Trace
 * Event Format (JSON), which Perfetto's UI, chrome://tracing and the
 * Firefox Profiler open.
 *
 * Tracks (pid, tid):
 *   the thread (its own tid)   on-CPU stacks as nested complete ('X')
 *                              slices, one per function, and off-CPU
 *                              intervals as 'X' slices named by reason
 *                              (args: detail, waker, stacks); TCP
 *                              retransmits as instant ('i') events
 *   "NAME syscalls" (tid + 2^30, past any pid_max)
 *                              slow syscalls as 'X' slices, args: the fd's
 *                              target, return value, errno, stack
 *   the process (counter 'C')  "heap": live heap bytes
 * and metadata ('M') events naming every process and thread.
 *
 * A CPU sample stands for the period before it (its weight, ns): its
 * slice is [time - weight, time), cut where the thread's previous slice or
 * off-CPU interval ends.  Consecutive samples whose periods meet (within
 * half a period) share the slices of the frames their stacks have in
 * common, root first, so a function that ran for 40 samples is one slice
 * (the frames that close where new ones open end 1 ns early: close_to).
 * Slices of one track never overlap but by nesting, by construction:
 * every slice starts at or after the end of the one before it at its
 * depth, and a parent is closed only after its children.  So does the
 * syscall track (a call that starts before the previous one ended is cut
 * to start at its end; its real duration stays in args).
 *
 * Timestamps are microseconds on a grid of 1/1024 us (nsk_track__ticks:
 * finer than a ns, and doubles, so a reader's ts + dur is exact) from the
 * recording's start, whose CLOCK_MONOTONIC time otherData.ts_zero_ns
 * gives: readers take ts as a double, exact only below 2^53 ticks, which
 * the raw monotonic clock passes after 101 days of uptime, and a slice
 * whose start or end is rounded may no longer nest.  Every key comes
 * before "args", "ts" second, and no event holds an array: older
 * Perfetto tokenizers scan an event's keys in order for "ts" and refuse
 * arrays and \u escapes on the way.
 * Every string from the recording is JSON-escaped (nsk_out__json_str). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/export.h"
#include "report/export_track.h"
#include "report/syscall_names.h"
#include "report/views.h"

#define SYSCALL_TRACK (1u << 30)
#define MAX_DEPTH 4096 /* stack_frame rows of one stack (report/limits.h) */

struct frame {
	int64_t key; /* func id, or -1 - stack id for a frameless stack */
	const char *name;
	int64_t start;
};

struct chrome {
	struct nsk_report *rep;
	FILE *f;
	int first; /* no event written yet */
	struct nsk_xdata x; /* the samples' stacks */
	struct nsk_track track;
	struct frame open[MAX_DEPTH];
	uint32_t nopen;
	int64_t cur_end; /* of the thread's last slice at depth 0 */
	int64_t t0;	 /* the recording's start: ts 0 */
	int64_t pid, tid;
	/* cursors over the selected events, ORDER BY pid, tid, time */
	sqlite3_stmt *sample, *off, *sys, *retr;
	int has[4];
};

/* ---- JSON pieces ---- */

static void key_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, ",\"%s\":", key);
	nsk_out__json_str(f, s ? s : "");
}

static void key_col(FILE *f, const char *key, sqlite3_stmt *st, int c)
{
	if (sqlite3_column_type(st, c) == SQLITE_NULL)
		return;
	if (sqlite3_column_type(st, c) == SQLITE_INTEGER)
		fprintf(f, ",\"%s\":%lld", key,
			(long long)sqlite3_column_int64(st, c));
	else
		key_str(f, key, (const char *)sqlite3_column_text(st, c));
}

/* {"ph":PH,"ts":TS[,"dur":DUR],"pid":..,"tid":..,"name":NAME,"cat":CAT */
static void head(const struct chrome *c, FILE *f, char ph, int64_t ts,
		 int64_t dur, int64_t pid, int64_t tid, const char *name,
		 const char *cat)
{
	/* from the start: readers parse ts as a double, exact only below
	 * 2^53 (ticks of 1/1024 us: 101 days); unsigned, as a hostile file's
	 * times may be far apart */
	int64_t a = (int64_t)((uint64_t)ts - (uint64_t)c->t0);
	int64_t ta = nsk_track__ticks(a);

	fprintf(f, "{\"ph\":\"%c\",\"ts\":", ph);
	nsk_track__us(f, ta);
	if (dur >= 0) {
		/* the end on the grid, less the start: ts + dur is exactly
		 * where the next slice at that depth starts */
		uint64_t d = (uint64_t)nsk_track__ticks(nsk_xadd(a, dur)) -
			     (uint64_t)ta;

		fputs(",\"dur\":", f);
		nsk_track__us(f, d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d);
	}
	fprintf(f, ",\"pid\":%lld,\"tid\":%lld", (long long)pid, (long long)tid);
	key_str(f, "name", name);
	fprintf(f, ",\"cat\":\"%s\"", cat);
}

static void sep(struct chrome *c)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = 0;
}

/* ---- on-CPU stacks ---- */

/* Closes the open frames deeper than keep at the end of the last sample,
 * or (early) 1 ns before it: when new frames open right there.  A slice
 * that ends where another begins is a tie that speedscope breaks by name:
 * if the front of its queue of ends has the name of the next begin, it
 * opens that first, inside the frames still to close (recursion, or a
 * malloc under another malloc, as in an ASan program's start), and warns
 * "Tried to end ...".  1 ns is at least one tick of the grid, so the ends
 * come strictly first; not when the deepest frame is that short, so that
 * every closed frame keeps its child inside it. */
static int close_to(struct chrome *c, uint32_t keep, int early)
{
	int64_t end = c->cur_end;

	if (early && c->nopen > keep && c->open[c->nopen - 1].start < end - 1)
		end--;
	while (c->nopen > keep) {
		struct frame *fr = &c->open[--c->nopen];
		FILE *f = nsk_track__begin(&c->track, fr->start, c->nopen);

		if (!f)
			return -ENOMEM;
		head(c, f, 'X', fr->start, end - fr->start, c->pid, c->tid,
		     fr->name, "cpu");
		fputc('}', f);
		if (nsk_track__end(&c->track))
			return -ENOMEM;
	}
	return 0;
}

/* One sample: time t (the end of its period), weight w, clipped to
 * start no earlier than floor (the end of the latest off-CPU interval). */
static int sample(struct chrome *c, int64_t t, int64_t w, int64_t sid,
		  int64_t floor)
{
	const struct nsk_xstack *s = nsk_xdata__stack(&c->x, sid);
	int64_t start = w > 0 && t > INT64_MIN + w ? t - w : t;
	int64_t half = w > 0 ? w / 2 : 0;
	struct frame want[MAX_DEPTH];
	uint32_t n = 0, k = 0;

	if (start < floor)
		start = floor;
	if (c->nopen && start > c->cur_end && start - c->cur_end > half) {
		int err = close_to(c, 0, 0); /* not running in between */

		if (err)
			return err;
	}
	if (start < c->cur_end)
		start = c->cur_end;
	if (start >= t || !s)
		return 0; /* nothing left of it */
	if (!s->n) {
		want[n].key = -1 - sid;
		want[n++].name = nsk_xdata__frameless(&c->x, c->rep, sid);
	}
	for (size_t i = s->n; i-- > 0 && n < MAX_DEPTH;) {
		const struct nsk_xframe *fr = &c->x.frames[s->first + i];

		want[n].key = fr->func_id;
		want[n++].name = nsk_xdata__func(&c->x, fr->func_id)->name;
	}
	while (k < n && k < c->nopen && c->open[k].key == want[k].key)
		k++;
	/* the new frames open at start: the closed ones end before it */
	if (close_to(c, k, k < n && start == c->cur_end))
		return -ENOMEM;
	for (; k < n; k++) {
		c->open[k] = want[k];
		c->open[k].start = start;
	}
	c->nopen = n;
	c->cur_end = t;
	return 0;
}

/* ---- cursors ---- */

/* Does cursor i's current row belong to the current thread? */
static int at(struct chrome *c, int i, sqlite3_stmt *st)
{
	return c->has[i] && sqlite3_column_int64(st, 0) == c->pid &&
	       sqlite3_column_int64(st, 1) == c->tid;
}

static int step(struct chrome *c, int i, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	c->has[i] = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		snprintf(c->rep->err, sizeof(c->rep->err), "%s",
			 sqlite3_errmsg(c->rep->db));
		return -EIO;
	}
	return 0;
}

/* An off-CPU interval (the off cursor's row) as a slice at depth 0, from
 * start (its time, or the end of the one before) to end. */
static int offcpu(struct chrome *c, int64_t start, int64_t end)
{
	sqlite3_stmt *st = c->off;
	FILE *f = nsk_track__begin(&c->track, start, 0);

	if (!f)
		return -ENOMEM;
	head(c, f, 'X', start, end - start, c->pid, c->tid,
	     (const char *)sqlite3_column_text(st, 4), "off-cpu");
	fputs(",\"args\":{\"duration_ns\":", f);
	fprintf(f, "%lld", (long long)sqlite3_column_int64(st, 3));
	key_col(f, "detail", st, 5);
	key_col(f, "state", st, 6);
	key_col(f, "waker", st, 7);
	key_col(f, "waker_pid", st, 8);
	key_col(f, "waker_tid", st, 9);
	key_col(f, "stack", st, 10);
	key_col(f, "waker_stack", st, 11);
	fputs("}}", f);
	return nsk_track__end(&c->track);
}

/* The main track: samples and off-CPU intervals in time order, then the
 * retransmits as instants. */
static int main_track(struct chrome *c)
{
	/* no slice before the recording's start (a sample stands for the
	 * period before it) */
	int64_t floor = c->t0, off_end = INT64_MIN;
	int err = 0;

	c->nopen = 0;
	c->cur_end = INT64_MIN;
	while (!err && (at(c, 0, c->sample) || at(c, 1, c->off))) {
		int64_t ts = at(c, 0, c->sample) ?
			sqlite3_column_int64(c->sample, 2) : INT64_MAX;

		if (at(c, 1, c->off) && sqlite3_column_int64(c->off, 2) < ts) {
			/* an interval before the sample: stacks end */
			int64_t a = sqlite3_column_int64(c->off, 2);
			int64_t b = nsk_xadd(a, sqlite3_column_int64(c->off, 3));

			if (a < off_end)
				a = off_end; /* never over the one before */
			if (a < c->cur_end)
				a = c->cur_end;
			err = close_to(c, 0, 0);
			if (!err && b > a) {
				err = offcpu(c, a, b);
				off_end = floor = c->cur_end = b;
			}
			if (!err)
				err = step(c, 1, c->off);
			continue;
		}
		/* a sample inside an interval cannot be: dropped */
		if (ts >= floor)
			err = sample(c, ts, sqlite3_column_int64(c->sample, 3),
				     sqlite3_column_int64(c->sample, 4), floor);
		if (!err)
			err = step(c, 0, c->sample);
	}
	if (!err)
		err = close_to(c, 0, 0);
	while (!err && at(c, 3, c->retr)) {
		sqlite3_stmt *st = c->retr;
		FILE *f = nsk_track__begin(&c->track, sqlite3_column_int64(st, 2),
					   MAX_DEPTH);

		if (!f)
			return -ENOMEM;
		head(c, f, 'i', sqlite3_column_int64(st, 2), -1, c->pid, c->tid,
		     "retransmit", "net");
		fputs(",\"s\":\"t\",\"args\":{\"kind\":", f);
		nsk_out__json_str(f, sqlite3_column_text(st, 3) ?
				  (const char *)sqlite3_column_text(st, 3) : "");
		key_col(f, "state", st, 4);
		key_col(f, "srtt_us", st, 5);
		key_col(f, "rto_us", st, 6);
		key_col(f, "local", st, 7);
		key_col(f, "remote", st, 8);
		fputs("}}", f);
		err = nsk_track__end(&c->track) ?: step(c, 3, st);
	}
	return err ?: nsk_track__flush(&c->track, c->f, &c->first);
}

static int syscall_track(struct chrome *c)
{
	int64_t end = INT64_MIN;
	int err = 0;

	while (!err && at(c, 2, c->sys)) {
		sqlite3_stmt *st = c->sys;
		int64_t a = sqlite3_column_int64(st, 2);
		int64_t b = nsk_xadd(a, sqlite3_column_int64(st, 3));

		if (a < end)
			a = end;
		if (b > a) {
			sep(c);
			head(c, c->f, 'X', a, b - a, c->pid, c->tid | SYSCALL_TRACK,
			     (const char *)sqlite3_column_text(st, 4), "syscall");
			fprintf(c->f, ",\"args\":{\"duration_ns\":%lld",
				(long long)sqlite3_column_int64(st, 3));
			key_col(c->f, "target", st, 5);
			key_col(c->f, "ret", st, 6);
			key_col(c->f, "errno", st, 7);
			key_col(c->f, "stack", st, 8);
			fputs("}}", c->f);
			end = b;
		}
		err = step(c, 2, st);
	}
	return err;
}

/* ---- metadata ---- */

static void meta(struct chrome *c, const char *what, int64_t pid,
		 int64_t tid, const char *name, const char *suffix)
{
	char *full = NULL;

	if (suffix && asprintf(&full, "%s %s", name ? name : "", suffix) < 0)
		full = NULL;
	sep(c);
	fprintf(c->f, "{\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"name\":\"%s\","
		"\"args\":{\"name\":", (long long)pid, (long long)tid, what);
	nsk_out__json_str(c->f, full ? full : name ? name : "");
	fputs("}}", c->f);
	free(full);
}

static int processes(struct chrome *c)
{
	sqlite3_stmt *st = nsk_report__prepare(c->rep,
		"SELECT u.pid, " NSK_PROCESS_NAME("u.pid") " FROM (SELECT pid "
		"FROM f_sample UNION SELECT pid FROM f_offcpu UNION SELECT pid "
		"FROM f_syscall_slow UNION SELECT pid FROM f_retransmit UNION "
		"SELECT pid FROM f_alloc) u ORDER BY u.pid");
	int rc;

	if (!st)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		meta(c, "process_name", sqlite3_column_int64(st, 0),
		     sqlite3_column_int64(st, 0),
		     (const char *)sqlite3_column_text(st, 1), NULL);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int threads(struct chrome *c)
{
	sqlite3_stmt *st = nsk_report__prepare(c->rep,
		"SELECT pid, tid, coalesce((SELECT name FROM thread t WHERE "
		"t.pid = u.pid AND t.tid = u.tid ORDER BY time DESC LIMIT 1), "
		"(SELECT name FROM thread t WHERE t.tid = u.tid ORDER BY time "
		"DESC LIMIT 1), '[tid ' || tid || ']'), EXISTS (SELECT 1 FROM "
		"f_syscall_slow s WHERE s.pid = u.pid AND s.tid = u.tid) FROM ("
		"SELECT pid, tid FROM f_sample UNION SELECT pid, tid FROM f_offcpu "
		"UNION SELECT pid, tid FROM f_syscall_slow UNION SELECT pid, tid "
		"FROM f_retransmit) u ORDER BY pid, tid");
	int rc, err = 0;

	if (!st)
		return -EIO;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 2);

		c->pid = sqlite3_column_int64(st, 0);
		c->tid = sqlite3_column_int64(st, 1);
		meta(c, "thread_name", c->pid, c->tid, name, NULL);
		if (sqlite3_column_int(st, 3))
			meta(c, "thread_name", c->pid, c->tid | SYSCALL_TRACK,
			     name, "syscalls");
		err = main_track(c) ?: syscall_track(c);
	}
	if (!err && rc != SQLITE_DONE) {
		snprintf(c->rep->err, sizeof(c->rep->err), "%s",
			 sqlite3_errmsg(c->rep->db));
		err = -EIO;
	}
	sqlite3_finalize(st);
	return err;
}

/* ---- the heap counter ---- */

/* Live heap bytes per process: +weight at each allocation, -weight when
 * it is freed (or its process exits).  Many changes within one bucket of
 * time (1/50000 of the span, at least 10 us) are written as at most two
 * points: the bucket's peak, when above where it ends, and its end. */
static int heap(struct chrome *c)
{
	const struct nsk_report_opts *o = c->rep->opts;
	int64_t t0 = nsk_report__info(c->rep, "time_start_ns");
	int64_t t1 = nsk_report__info(c->rep, "time_end_ns");
	int64_t bucket = (int64_t)(((uint64_t)t1 - (uint64_t)t0) / 50000);
	int64_t until = o->until >= 0 ? nsk_xadd(t0, (int64_t)(o->until * 1e9))
				      : INT64_MAX;
	int64_t pid = 0, live = 0, peak = 0, peak_t = 0, last_t = 0, b = 0;
	int have = 0, rc;
	sqlite3_stmt *st;

	if (bucket < 10000)
		bucket = 10000;
	st = nsk_report__prepare(c->rep,
		"SELECT pid, time, weight FROM f_alloc WHERE addr != 0 AND fn IS "
		"NOT 'reserve' UNION ALL SELECT a.pid, fr.time, -a.weight FROM "
		"free fr JOIN f_alloc a ON a.id = fr.alloc_id WHERE a.addr != 0 "
		"AND a.fn IS NOT 'reserve' AND fr.time <= %lld ORDER BY 1, 2",
		(long long)until);
	if (!st)
		return -EIO;
#define POINT(t, v)                                                          \
	do {                                                                  \
		sep(c);                                           \
		head(c, c->f, 'C', (t), -1, pid, pid, "heap", "heap");           \
		fprintf(c->f, ",\"args\":{\"live_bytes\":%lld}}", (long long)(v)); \
	} while (0)
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		int64_t t = sqlite3_column_int64(st, 1);
		int64_t w = sqlite3_column_int64(st, 2);
		/* unsigned: a hostile file's times may be far apart */
		int64_t tb = (int64_t)(((uint64_t)t - (uint64_t)t0) / (uint64_t)bucket);

		if (have && (p != pid || tb != b)) {
			if (peak > live)
				POINT(peak_t, peak);
			POINT(last_t, live);
			have = 0;
		}
		if (p != pid) {
			pid = p;
			live = 0;
		}
		live = nsk_xadd(live, w);
		if (!have || live > peak) {
			peak = live;
			peak_t = t;
		}
		have = 1;
		b = tb;
		last_t = t;
	}
	if (have) {
		if (peak > live)
			POINT(peak_t, peak);
		POINT(last_t, live);
	}
#undef POINT
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		snprintf(c->rep->err, sizeof(c->rep->err), "%s",
			 sqlite3_errmsg(c->rep->db));
		return -EIO;
	}
	return 0;
}

/* ---- the whole ---- */

static int open_cursors(struct chrome *c)
{
	char *sys = sqlite3_mprintf(
		"SELECT s.pid, s.tid, s.time, s.duration, " NSK_SYSCALL_NAME_SQL("s.nr")
		", s.target, s.ret, s.errno, (SELECT chain FROM stack k WHERE k.id "
		"= s.stack_id AND k.chain != '') FROM f_syscall_slow s ORDER BY "
		"s.pid, s.tid, s.time", nsk_syscall_arch);

	if (!sys)
		return -ENOMEM;
	c->sample = nsk_report__prepare(c->rep, "SELECT pid, tid, time, weight, "
					"stack_id FROM f_sample ORDER BY pid, tid, time");
	c->off = nsk_report__prepare(c->rep,
		"SELECT o.pid, o.tid, o.time, o.duration, o.reason, o.detail, "
		"o.state, o.waker_comm, o.waker_pid, o.waker_tid, (SELECT chain "
		"FROM stack k WHERE k.id = o.stack_id AND k.chain != ''), (SELECT "
		"chain FROM stack k WHERE k.id = o.waker_stack_id AND k.chain != "
		"'') FROM f_offcpu o ORDER BY o.pid, o.tid, o.time");
	c->sys = nsk_report__prepare(c->rep, "%s", sys);
	c->retr = nsk_report__prepare(c->rep,
		"SELECT r.pid, r.tid, r.time, r.kind, r.state, r.srtt_us, "
		"r.rto_us, n.local, n.remote FROM f_retransmit r LEFT JOIN conn n "
		"ON n.id = r.conn_id ORDER BY r.pid, r.tid, r.time");
	sqlite3_free(sys);
	if (!c->sample || !c->off || !c->sys || !c->retr)
		return -EIO;
	return step(c, 0, c->sample) ?: step(c, 1, c->off) ?:
	       step(c, 2, c->sys) ?: step(c, 3, c->retr);
}

int nsk_export__chrome(struct nsk_report *rep, FILE *f)
{
	struct chrome *c = calloc(1, sizeof(*c));
	char lines[8][256];
	int n, err;

	if (!c) {
		snprintf(rep->err, sizeof(rep->err), "out of memory");
		return -ENOMEM;
	}
	c->rep = rep;
	c->f = f;
	c->first = 1;
	c->t0 = nsk_report__info(rep, "time_start_ns");
	err = nsk_xdata__load(&c->x, rep, nsk_measure_cpu);
	if (!err)
		err = open_cursors(c);
	if (err)
		goto cleanup;
	fputs("{\"traceEvents\":[", f);
	err = processes(c) ?: threads(c) ?: heap(c);
	if (err)
		goto cleanup;
	fprintf(f, "\n],\n\"otherData\":{\"producer\":\"nusku export --format "
		"chrome\",\"clock\":\"CLOCK_MONOTONIC\",\"ts_zero_ns\":\"%lld\","
		"\"summary\":", (long long)c->t0);
	n = nsk_report__summary_lines(rep, lines, 8);
	{
		char all[8 * 260] = "";

		for (int i = 0; i < n; i++) {
			if (i)
				strcat(all, " | ");
			strcat(all, lines[i]);
		}
		nsk_out__json_str(f, all);
	}
	fputs("}}\n", f);
cleanup:
	if (err == -ENOMEM)
		snprintf(rep->err, sizeof(rep->err), "out of memory");
	else if (err && !rep->err[0])
		snprintf(rep->err, sizeof(rep->err), "%s", sqlite3_errmsg(rep->db));
	sqlite3_finalize(c->sample);
	sqlite3_finalize(c->off);
	sqlite3_finalize(c->sys);
	sqlite3_finalize(c->retr);
	nsk_track__release(&c->track);
	nsk_xdata__release(&c->x);
	free(c);
	return err;
}
