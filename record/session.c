/* A recording session: the writer, the shared target map, the ring buffers
 * and the event loop that drives every signal.
 *
 * The order matters and is the whole point of this file: check privileges
 * (creating the target map is the first thing that needs them), check the
 * target, create the output, start process tracking and every signal, and
 * only then let a launched program exec, so its first instruction is seen.
 * The loop drains the ring buffers on a 100 ms timer (BPF programs write
 * without waking us; only process events wake the loop), calls each
 * signal's poll(), flushes the writer and redraws the status line.  Every
 * way out writes LOSS and END records and closes the writer, so the file is
 * complete however the recording ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "config.h"
#include "record/stacks/intern.h"
#include "record/stacks/kallsyms.h"
#include "record/fdtable.h"
#include "record/heap.h"
#include "record/caps.h"
#include "record/hurry.h"
#include "record/spill.h"
#include "record/procs/proc_watch.h"
#include "record/record.h"
#include "record/own.h"
#include "record/segments.h"
#include "record/session_int.h"
#include "record/signals.h"
#include "record/stacks/symbols.h"
#include "record/stacks/unwind.h"

#define TICK_NS 100000000ull
/* The loaders' nice value (load_thread).  Verifying every signal's
 * programs is most of a recording's start, ~0.2 s of CPU on two CPUs:
 * at the normal priority it was taken from whatever else ran (a 54 ms
 * malloc loop started beside a recording's start took 100).  Niced, it
 * takes what is idle first; on an idle machine the start is as fast. */
#define NSK_LOAD_NICE 10
/* After a stop signal, the records already taken in get this long to be
 * written; what is left then is counted as lost (record.stop), so a
 * recorder behind a storm still stops within about a second. */
#define STOP_DRAIN_NS 300000000ull
/* Records drained from the ring buffers and not yet written, at most. */
#define NSK_SPILL_CAP (256u << 20)

static volatile sig_atomic_t stop_signal;
static volatile uint64_t stop_signal_ns; /* when it came (x86-64: one store) */
/* The spill whose consumer gives way (event_loop), for the handler. */
static struct nsk_spill *volatile yielding_spill;
static int blocked_stops; /* yield_to_program blocked the stop signals */

static void on_stop_signal(int sig)
{
	struct timespec ts;

	/* clock_gettime is async-signal-safe */
	if (!stop_signal && !clock_gettime(CLOCK_MONOTONIC, &ts))
		stop_signal_ns = (uint64_t)ts.tv_sec * 1000000000ull +
				 (uint64_t)ts.tv_nsec;
	stop_signal = sig;
	nsk_spill__hurry(yielding_spill); /* async-signal-safe (spill.h) */
	/* and higher than normal, whichever thread the signal came to */
	nsk_hurry__armed();
}

uint64_t nsk_session__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int nsk_session__fail(struct nsk_session *s, int err, const char *fmt, ...)
{
	va_list ap;

	if (!s->errmsg[0]) {
		va_start(ap, fmt);
		vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
		va_end(ap);
	}
	return err;
}

ssize_t nsk_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < size - 1) {
		n = read(fd, buf + total, size - 1 - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = 0;
	return total;
}

const struct nsk_record_opts *nsk_session__opts(const struct nsk_session *s)
{
	return &s->opts;
}

int nsk_session__target_pid(const struct nsk_session *s)
{
	return (int)s->root;
}

uint32_t nsk_session__all_but(const struct nsk_session *s)
{
	return s->opts.all ? (uint32_t)getpid() : 0;
}

int nsk_session__targets_fd(const struct nsk_session *s)
{
	return s->targets_fd;
}

uint32_t nsk_session__launched(const struct nsk_session *s)
{
	return s->launched && s->root > 0 ? (uint32_t)s->root : 0;
}

uint32_t nsk_session__ring_bytes(uint64_t want)
{
	uint32_t n = 256u << 10;

	while (n < want && n < (256u << 20))
		n <<= 1;
	return n;
}

int nsk_session__add_ringbuf_asking(struct nsk_session *s, int map_fd,
				    ring_buffer_sample_fn fn, void *ctx,
				    int (*asks)(const void *data, size_t len))
{
	int err;

	if (!s->spill && (err = nsk_spill__new(NSK_SPILL_CAP, &s->spill)))
		return err;
	s->nrings++;
	return nsk_spill__add(s->spill, map_fd, fn, ctx, asks);
}

int nsk_session__add_ringbuf(struct nsk_session *s, int map_fd,
			     ring_buffer_sample_fn fn, void *ctx)
{
	return nsk_session__add_ringbuf_asking(s, map_fd, fn, ctx, NULL);
}

int nsk_session__emit(struct nsk_session *s, const struct nsk_record *rec)
{
	int err;

	if (s->err)
		return s->err;
	err = s->seg ? nsk_segments__append(s->seg, rec)
		     : nsk_writer__append(s->w, rec);
	if (err) {
		s->err = err;
		return nsk_session__fail(s, err, "writing %s: %s",
					 s->opts.output, strerror(-err));
	}
	s->records++;
	if (rec->type == NSK_REC_SAMPLE)
		s->samples++;
	/* A long drain (the first symbolization of a big library can take
	 * a second) must not hold back chunks: readers follow the file. */
	if ((++s->emitted & 63) == 0)
		nsk_writer__tick(s->w, nsk_session__now());
	return 0;
}

uint64_t nsk_session__string(struct nsk_session *s, const char *str)
{
	size_t len = strlen(str);
	uint64_t id = nsk_intern__find(s->strings, str, len);
	struct nsk_record rec = { .type = NSK_REC_STRING };

	if (id)
		return id;
	id = ++s->next_string;
	if (nsk_intern__add(s->strings, str, len, id))
		return 0;
	rec.string.id = id;
	rec.string.str.data = (const uint8_t *)str;
	rec.string.str.len = (uint32_t)len;
	if (nsk_session__emit(s, &rec))
		return 0;
	return id;
}

void nsk_session__lost(struct nsk_session *s, const char *source,
		       uint64_t count)
{
	struct nsk_loss *l = NULL;

	if (!count)
		return;
	for (int i = 0; i < s->nlosses; i++)
		if (!strcmp(s->losses[i].source, source))
			l = &s->losses[i];
	if (!l) {
		if (s->nlosses == NSK_SESSION_MAX_LOSSES)
			l = &s->losses[NSK_SESSION_MAX_LOSSES - 1];
		else if ((s->losses[s->nlosses].source = strdup(source)))
			l = &s->losses[s->nlosses++];
		else
			return;
	}
	if (!l->pending)
		l->since = nsk_session__now();
	l->pending += count;
	l->total += count;
	s->lost_total += count;
}

int nsk_session__drain_lost(struct nsk_session *s, int map_fd,
			    const char *const *sources, uint32_t n,
			    uint64_t *seen)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		uint64_t sum = 0;

		if (!sources[k] || bpf_map_lookup_elem(map_fd, &k, v))
			continue;
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
		if (sum > seen[k]) {
			nsk_session__lost(s, sources[k], sum - seen[k]);
			seen[k] = sum;
		}
	}
	free(v);
	return 0;
}

void nsk_session__flush_losses(struct nsk_session *s, uint64_t now)
{
	for (int i = 0; i < s->nlosses; i++) {
		struct nsk_loss *l = &s->losses[i];
		struct nsk_record rec = { .type = NSK_REC_LOSS };

		if (!l->pending)
			continue;
		if (!l->source_id)
			l->source_id = nsk_session__string(s, l->source);
		rec.loss.time_start = l->since;
		rec.loss.time_end = now;
		rec.loss.source_id = l->source_id;
		rec.loss.count = l->pending;
		l->pending = 0;
		nsk_session__emit(s, &rec);
	}
}

static int meta(struct nsk_session *s, const char *key, const char *value)
{
	struct nsk_record rec = { .type = NSK_REC_META };

	rec.meta.key.data = (const uint8_t *)key;
	rec.meta.key.len = (uint32_t)strlen(key);
	rec.meta.value.data = (const uint8_t *)value;
	rec.meta.value.len = (uint32_t)strlen(value);
	return nsk_session__emit(s, &rec);
}

int nsk_session__meta(struct nsk_session *s, const char *key, const char *value)
{
	return meta(s, key, value);
}

/* argv joined with spaces, for META (PROCESS records keep NULs). */
static void join_argv(char *buf, size_t size, char *const *argv)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; argv && argv[i] && off + 1 < size; i++)
		off += snprintf(buf + off, size - off, "%s%s", i ? " " : "",
				argv[i]);
}

static int write_header(struct nsk_session *s, char *const *nusku_argv)
{
	struct nsk_record rec = { .type = NSK_REC_CLOCK };
	char buf[4096];
	struct utsname u;
	struct timespec rt;
	int err;

	rec.clock.monotonic_ns = nsk_session__now();
	clock_gettime(CLOCK_REALTIME, &rt);
	rec.clock.realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	err = nsk_session__emit(s, &rec);
	if (err)
		return err;
	uname(&u);
	meta(s, "nusku.version", PACKAGE_VERSION);
	meta(s, "host", u.nodename);
	meta(s, "kernel", u.release);
	meta(s, "arch", u.machine);
	join_argv(buf, sizeof(buf), nusku_argv);
	meta(s, "nusku.cmdline", buf);
	if (s->opts.all) {
		meta(s, "target.cmdline", "");
		meta(s, "target.mode", "all");
	} else if (s->launched) {
		join_argv(buf, sizeof(buf), s->opts.argv);
		meta(s, "target.cmdline", buf);
		meta(s, "target.mode", "launch");
	} else {
		char path[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", s->opts.pid);
		n = nsk_read_file(path, buf, sizeof(buf));
		for (ssize_t i = 0; i + 1 < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		meta(s, "target.cmdline", n > 0 ? buf : "");
		meta(s, "target.mode", "attach");
	}
	snprintf(buf, sizeof(buf), "%d", (int)s->root);
	meta(s, "target.pid", buf);
	snprintf(buf, sizeof(buf), "%u", s->opts.freq_hz);
	meta(s, "cpu.freq_hz", buf);
	meta(s, "inherit", s->opts.inherit ? "1" : "0");
	meta(s, "kernel_stacks", s->opts.kernel_stacks ? "1" : "0");
	return s->err;
}

/* The signals --events names, in table order; by default all of them but
 * two.  alloc in attach mode: a running program can only be probed with
 * uprobes on its allocator, a trap on every malloc and free (about 2 us
 * each here, sampled or not), which no busy server should pay unasked.
 * syscall unless a syscall option asks for it: the kernel's syscall
 * tracepoints cannot be confined to a target, so while they are attached
 * every task on the machine takes the slow syscall path (150-200 ns a call
 * more here for any other process, 300 for the target: docs/syscall.md);
 * blocking calls are the off-CPU signal's, with the syscall they sleep in. */
static int pick_signals(struct nsk_session *s)
{
	for (int i = 0; nsk_signals[i]; i++) {
		const char *ev = s->opts.events;
		size_t len = strlen(nsk_signals[i]->name);
		int dflt = !ev || !*ev;
		int want = dflt || !strcmp(ev, "all");

		if (dflt && s->opts.pid > 0 && !strcmp(nsk_signals[i]->name, "alloc"))
			want = 0;
		if (dflt && !s->opts.syscall_asked && !strcmp(nsk_signals[i]->name, "syscall"))
			want = 0;
		/* -a: CPU and off-CPU, as perf record -a -g and its --off-cpu;
		 * never alloc (its sampler is preloaded into a launched
		 * program, its uprobes would trap every process's malloc):
		 * the CLI refuses it by name, "all" leaves it out */
		if (s->opts.all && !strcmp(nsk_signals[i]->name, "alloc"))
			continue;
		if (dflt && s->opts.all && strcmp(nsk_signals[i]->name, "cpu") &&
		    strcmp(nsk_signals[i]->name, "offcpu"))
			want = 0;
		/* continuous: the signal whose cost its rate bounds to well
		 * under 1% of a core; not yet alloc (its sampler costs per
		 * call) nor offcpu (a stack walk per preemption, before the
		 * --min-block threshold can be known): docs/record.md */
		if (dflt && s->opts.continuous && strcmp(nsk_signals[i]->name, "cpu"))
			want = 0;

		while (!want && ev && *ev) {
			if (!strncmp(ev, nsk_signals[i]->name, len) &&
			    (ev[len] == ',' || !ev[len]))
				want = 1;
			ev = strchr(ev, ',');
			if (ev)
				ev++;
		}
		if (want && s->nsigs < NSK_SESSION_MAX_SIGNALS)
			s->sigs[s->nsigs++].sig = nsk_signals[i];
	}
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (!getenv("NUSKU_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void *load_thread(void *arg)
{
	struct nsk_session_sig *e = arg;

	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), NSK_LOAD_NICE)) {
		/* as it was */
	}
	e->load_err = e->sig->load(e->s, &e->state);
	return NULL;
}

/* The session's thread during the start, at the loaders' nice (on 1), then
 * back to where it was (on 0, before the program runs): it verifies and
 * attaches process tracking's programs and those of the signals without a
 * loader of their own, ~70 ms of CPU in a default start here, which at the
 * normal priority was taken from whatever else ran (a malloc loop of 16 ms
 * started with a recording took 20-40).  Only where it may come back
 * (CAP_SYS_NICE): a session's thread left niced would fall behind. */
static void start_niced(int on)
{
	static int was = INT32_MIN; /* its nice before, when lowered */
	id_t tid = (id_t)syscall(SYS_gettid);
	int now;

	if (on) {
		errno = 0;
		now = getpriority(PRIO_PROCESS, tid);
		if ((now == -1 && errno) || now >= NSK_LOAD_NICE ||
		    !nsk_caps__have(NSK_CAP_SYS_NICE) ||
		    setpriority(PRIO_PROCESS, tid, NSK_LOAD_NICE))
			return;
		was = now;
	} else if (was != INT32_MIN) {
		if (setpriority(PRIO_PROCESS, tid, was)) {
			/* kept the privilege it was lowered with: cannot fail */
		}
		was = INT32_MIN;
	}
}

/* Each signal's load() in a thread of its own (struct nsk_signal): they
 * run while process tracking starts and the signals without one start,
 * and the kernel verifies their programs side by side. */
static void start_loads(struct nsk_session *s)
{
	for (int i = 0; i < s->nsigs; i++) {
		struct nsk_session_sig *e = &s->sigs[i];

		if (!e->sig->load)
			continue;
		e->s = s;
		if (!pthread_create(&e->loader, NULL, load_thread, e))
			e->loading = 1;
		else
			load_thread(e); /* here, then */
	}
}

/* Waits for sigs[i]'s load; returns its error, 0 when it has none. */
static int join_load(struct nsk_session *s, int i)
{
	struct nsk_session_sig *e = &s->sigs[i];

	if (e->loading) {
		pthread_join(e->loader, NULL);
		e->loading = 0;
	}
	return e->load_err;
}

/* sigs[from..to) will not start: their loads are waited for and freed. */
static void drop_loads(struct nsk_session *s, int from, int to)
{
	for (int i = from; i < to; i++) {
		join_load(s, i);
		if (s->sigs[i].state && s->sigs[i].sig->stop)
			s->sigs[i].sig->stop(s->sigs[i].state);
		s->sigs[i].state = NULL;
	}
}

/* A stop signal during start-up: sigs[from..to) will not start, and
 * their loads, which on a busy machine can take seconds, are not waited
 * for.  One still running keeps its thread and its state, and the
 * session is then not freed (the process is about to exit). */
static void abandon_loads(struct nsk_session *s, int from, int to)
{
	for (int i = from; i < to; i++) {
		if (s->sigs[i].loading) {
			pthread_detach(s->sigs[i].loader);
			s->sigs[i].loading = 0;
			s->abandoned = 1;
			continue;
		}
		if (s->sigs[i].state && s->sigs[i].sig->stop)
			s->sigs[i].sig->stop(s->sigs[i].state);
		s->sigs[i].state = NULL;
	}
}

static void session_free(struct nsk_session *s)
{
	if (!s || s->abandoned)
		return;
	for (int i = 0; i < s->nsigs; i++)
		join_load(s, i); /* a start-up that failed early */
	nsk_spill__stop(s->spill); /* before the rings it drains go */
	for (int i = s->nsigs - 1; i >= 0; i--)
		if (s->sigs[i].sig->stop)
			s->sigs[i].sig->stop(s->sigs[i].state);
	nsk_proc__stop(s);
	nsk_spill__free(s->spill);
	if (s->seg)
		s->w = NULL; /* the segments' own */
	nsk_segments__free(s->seg);
	nsk_writer__free(s->w);
	if (s->out_fd >= 0 && !s->w && s->out_fd != STDOUT_FILENO)
		close(s->out_fd);
	if (s->targets_fd >= 0)
		close(s->targets_fd);
	if (s->go_fd >= 0)
		close(s->go_fd);
	free(s->launch_env);
	if (s->pidfd >= 0)
		close(s->pidfd);
	nsk_proc__free_all(s);
	nsk_intern__free(s->strings);
	nsk_stacks__free(s->stk);
	nsk_own__free(s->own);
	for (int i = 0; i < s->nlosses; i++)
		free(s->losses[i].source);
	free(s);
}

/* -o FILE is made under a temporary name (include/nusku/outfile.h) and
 * renamed into place by commit_output, once it holds the first chunk. */
static int open_output(struct nsk_session *s)
{
	struct nsk_io *io;
	int err;

	if (s->opts.continuous)
		return nsk_session__continuous_open(s);
	if (!strcmp(s->opts.output, "-")) {
		s->out_fd = STDOUT_FILENO;
	} else {
		err = nsk_outfile__create_recording(&s->out, s->opts.output,
						    s->errmsg,
						    sizeof(s->errmsg));
		if (err)
			return err;
		s->out_fd = s->out.fd;
		s->out.fd = -1; /* the writer's io closes it */
	}
	io = nsk_io__from_fd(s->out_fd, s->out_fd != STDOUT_FILENO);
	if (!io)
		return -ENOMEM;
	err = nsk_writer__new(io, NULL, &s->w);
	if (err) {
		s->out_fd = -1; /* closed with the io */
		return nsk_session__fail(s, err, "cannot write %s: %s",
					 s->opts.output, strerror(-err));
	}
	return 0;
}

/* The header records go out as the first chunk at once: a recorder
 * killed at any later moment leaves a file that says what it was.  Only
 * then does the file take its name, so the name never shows a file
 * without them. */
static int commit_output(struct nsk_session *s)
{
	int err;

	if (s->seg)
		return nsk_session__continuous_commit(s);
	err = nsk_writer__flush(s->w);

	if (err)
		return nsk_session__fail(s, err, "writing %s: %s",
					 s->opts.output, strerror(-err));
	return nsk_outfile__commit(&s->out, s->errmsg, sizeof(s->errmsg));
}

/* Start the signals.  One that was asked for by name must start; of the
 * default set, one that cannot (a kernel without what it needs) is left out
 * with a warning and a META note, unless it got as far as registering a
 * ring buffer (which cannot be taken back). */
static int start_signals(struct nsk_session *s)
{
	const char *ev = s->opts.events;
	int by_name = ev && *ev && strcmp(ev, "all");
	char events[256] = "", key[64];
	int n = 0, err, total = s->nsigs;

	for (int i = 0; i < total; i++) {
		const struct nsk_signal *sig = s->sigs[i].sig;
		int rings = s->nrings;
		void *state;
		const char *why;

		/* Stopped while starting (a start can take seconds on a busy
		 * machine): the program will not run, the rest need not load. */
		if (stop_signal) {
			abandon_loads(s, i, total);
			break;
		}
		err = join_load(s, i);
		state = s->sigs[i].state;
		s->sigs[i].state = NULL;
		if (!err)
			err = sig->start(s, &state);
		if (!err) {
			s->sigs[n].sig = sig;
			s->sigs[n].loading = 0;
			s->sigs[n++].state = state;
			continue;
		}
		why = strerror(-err);
		if ((err == -EPERM || err == -EACCES) && nsk_caps__can_trace())
			why = "the kernel refused its BPF programs (NUSKU_DEBUG=1 shows why)";
		else if (err == -EPERM || err == -EACCES)
			why = "permission denied (needs root, or CAP_BPF + CAP_PERFMON)";
		if (by_name || rings != s->nrings || err == -EPERM || err == -EACCES) {
			drop_loads(s, i + 1, total);
			s->nsigs = n;
			return nsk_session__fail(s, err, "cannot start %s: %s",
						 sig->name, why);
		}
		fprintf(stderr, "nusku: record: warning: %s not recorded: %s\n",
			sig->name, why);
		snprintf(key, sizeof(key), "%s.error", sig->name);
		meta(s, key, why);
	}
	s->nsigs = n;
	if (!n && !stop_signal)
		return nsk_session__fail(s, -ENODEV, "no signal could be started");
	for (int i = 0; i < s->nsigs; i++) {
		size_t len = strlen(events);

		snprintf(events + len, sizeof(events) - len, "%s%s",
			 i ? "," : "", s->sigs[i].sig->name);
	}
	meta(s, "events", events);
	return s->err;
}

static void poll_signals(struct nsk_session *s, int final)
{
	nsk_proc__poll(s, final);
	for (int i = 0; i < s->nsigs; i++) {
		int err = s->sigs[i].sig->poll(s, s->sigs[i].state, final);

		if (err && !s->err)
			nsk_session__fail(s, err, "%s: %s", s->sigs[i].sig->name,
					  strerror(-err));
	}
}

/* Hands what the ring buffers gave to the signals, until deadline (0:
 * all of it); returns 1 when records wait still. */
static int drain(struct nsk_session *s, uint64_t deadline)
{
	uint64_t dropped;
	int more;

	nsk_proc__sync(s);
	if (!s->spill)
		return 0;
	more = nsk_spill__dispatch(s->spill, deadline);
	dropped = nsk_spill__take_dropped(s->spill);
	if (dropped)
		nsk_session__lost(s, "record.memory", dropped);
	return more;
}

void nsk_session__keep_pace(struct nsk_session *s)
{
	__atomic_store_n(&s->keep_pace, 1, __ATOMIC_RELEASE); /* a load thread */
}

void nsk_session__prompt_procs(struct nsk_session *s)
{
	nsk_proc__prompt(s);
}

void nsk_session__check_execs(struct nsk_session *s, nsk_session_exec_check_fn fn,
			      void *ctx, const char *preload)
{
	nsk_proc__set_exec_check(s, fn, ctx, preload);
}

void nsk_session__exec_passes(struct nsk_session *s, const struct stat *st)
{
	nsk_proc__exec_passes(s, st);
}

uint32_t nsk_session__parent(struct nsk_session *s, uint32_t pid)
{
	const struct nsk_proc *p = nsk_proc__get(s, pid, 0);

	return p ? p->ppid : 0;
}

int nsk_session__exec_flags(struct nsk_session *s, uint32_t pid, uint32_t *flags)
{
	const struct nsk_proc *p = nsk_proc__get(s, pid, 0);

	*flags = 0;
	if (!p || !p->exec_told)
		return 0;
	*flags = p->exec_flags;
	return 1;
}

/* While the program runs this thread holds its records back (spill.h:
 * nsk_spill__hold): handled beside the program, they slowed it whatever
 * this thread's priority.  With --give-way it runs at SCHED_IDLE instead,
 * and the stop signals go to a thread of normal priority meanwhile: the
 * kernel would otherwise pick this one, and on a busy machine its handler
 * could wait a long time to run.  Neither when a signal needs its answers
 * at once (keep_pace: the stack copies of every allocation). */
static void yield_to_program(struct nsk_session *s, int on, uint64_t until)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (on) {
		if (!s->spill || __atomic_load_n(&s->keep_pace, __ATOMIC_ACQUIRE))
			return;
		if (!s->opts.give_way) {
			/* held back, where no reader waits for them: not
			 * a pipe (nusku live), not the segments of a
			 * continuous recording */
			if (s->opts.continuous || !strcmp(s->opts.output, "-") ||
			    nsk_spill__hold(s->spill, s->pidfd, until))
				return;
			yielding_spill = s->spill;
			return;
		}
		if (nsk_spill__yield(s->spill, s->pidfd, until))
			return;
		yielding_spill = s->spill;
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		blocked_stops = 1;
		return;
	}
	if (!yielding_spill)
		return;
	nsk_spill__hurry(yielding_spill);
	yielding_spill = NULL;
	if (blocked_stops)
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	blocked_stops = 0;
}

static int event_loop(struct nsk_session *s)
{
	uint64_t end = 0, next_tick = nsk_session__now() + TICK_NS;
	struct epoll_event ev = { .events = EPOLLIN }, evs[4];
	int ep, err = 0;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return nsk_session__fail(s, -errno, "epoll: %s", strerror(errno));
	if (s->spill) {
		ev.data.u32 = 1;
		epoll_ctl(ep, EPOLL_CTL_ADD, nsk_spill__event_fd(s->spill), &ev);
		/* continuous: at its low rates, a look every 50 ms (the rings
		 * hold far more), not 200 wakeups a second of an idle recorder */
		if (s->opts.continuous)
			nsk_spill__set_poll_ms(s->spill, 50);
		err = nsk_spill__start(s->spill);
		nsk_hurry__arm(); /* and the draining thread */
		if (err) {
			close(ep);
			return nsk_session__fail(s, err, "cannot start a thread: %s",
						 strerror(-err));
		}
	}
	if (s->proc_watch) {
		ev.data.u32 = 1;
		epoll_ctl(ep, EPOLL_CTL_ADD, nsk_proc_watch__urgent_fd(s->proc_watch), &ev);
	}
	if (s->pidfd >= 0) {
		ev.data.u32 = 2;
		epoll_ctl(ep, EPOLL_CTL_ADD, s->pidfd, &ev);
	}
	if (s->opts.duration_s > 0)
		end = s->start_ns + (uint64_t)(s->opts.duration_s * 1e9);
	err = nsk_own__start(s->own); /* the cost windows, from here */
	if (err) {
		close(ep);
		return nsk_session__fail(s, err, "cannot start a thread: %s",
					 strerror(-err));
	}
	yield_to_program(s, 1, end);
	while (!stop_signal && !s->err) {
		uint64_t now = nsk_session__now();
		int timeout = next_tick > now ? (int)((next_tick - now) / 1000000) + 1 : 0;
		int n;

		nsk_spill__rest(s->spill); /* gives way again, if lent */
		n = epoll_wait(ep, evs, 4, timeout);

		if (n < 0 && errno != EINTR) {
			err = nsk_session__fail(s, -errno, "epoll: %s", strerror(errno));
			break;
		}
		/* a slice at a time: a backlog must not hide a stop signal */
		drain(s, nsk_session__now() + TICK_NS);
		for (int i = 0; i < n; i++)
			if (evs[i].data.u32 == 2)
				s->root_done = 1;
		if (s->root_done)
			break;
		now = nsk_session__now();
		if (now >= next_tick) {
			poll_signals(s, 0);
			nsk_session__flush_losses(s, now);
			if (s->seg && !s->err)
				nsk_session__continuous_tick(s, now);
			if (!s->err)
				nsk_writer__tick(s->w, now);
			nsk_status__update(s, now, 0);
			next_tick = now + TICK_NS;
		}
		if (end && now >= end)
			break;
	}
	yield_to_program(s, 0, 0);
	close(ep);
	return err ? err : s->err;
}

static void prog_cost(void *ctx, const char *name, uint64_t run_ns,
		      uint64_t runs)
{
	char key[64], value[64];

	snprintf(key, sizeof(key), "cost.bpf.%s", name);
	snprintf(value, sizeof(value), "%" PRIu64 " %" PRIu64, run_ns, runs);
	meta(ctx, key, value);
}

/* What the recording cost: our programs' run time, from the kernel's
 * statistics (docs/format.md, meta keys cost.*), estimated from the
 * windows they were on in (record/own.h).  Read once the probes are
 * quiet, before END, so a reader of a whole file finds it. */
static void write_cost(struct nsk_session *s)
{
	struct nsk_own_cost c;
	char value[64];
	int err = s->own ? nsk_own__stats_error(s->own) : -ENOMEM;

	if (err) {
		meta(s, "cost.error", strerror(-err));
		return;
	}
	if (nsk_own__cost(s->own, &c, prog_cost, s))
		return;
	snprintf(value, sizeof(value), "%" PRIu64, c.run_ns);
	meta(s, "cost.bpf_run_ns", value);
	snprintf(value, sizeof(value), "%" PRIu64, c.runs);
	meta(s, "cost.bpf_runs", value);
	snprintf(value, sizeof(value), "%" PRIu32, c.progs);
	meta(s, "cost.bpf_progs", value);
	snprintf(value, sizeof(value), "%" PRIu64 " %" PRIu64, c.on_ns, c.total_ns);
	meta(s, "cost.window_ns", value);
}

/* Samples still in flight when the target ended are in the ring buffers:
 * drain, let each signal read its last aggregates, drain again.  After a
 * stop signal the drain has until STOP_DRAIN_NS past the signal, then the
 * rest is counted as lost: behind a storm it could take many seconds. */
static int finish(struct nsk_session *s)
{
	struct nsk_record rec = { .type = NSK_REC_END };
	uint64_t now, deadline = 0;
	int err;

	if (stop_signal)
		deadline = (stop_signal_ns ? stop_signal_ns : nsk_session__now()) +
			   STOP_DRAIN_NS;
	nsk_spill__stop(s->spill); /* the rest is drained from here */
	if (drain(s, deadline))
		nsk_session__lost(s, "record.stop", nsk_spill__discard(s->spill));
	poll_signals(s, 1);
	if (drain(s, deadline))
		nsk_session__lost(s, "record.stop", nsk_spill__discard(s->spill));
	if (s->seg)
		nsk_session__continuous_cost(s);
	else
		write_cost(s);
	nsk_stacks__write_counts(s->stk);
	now = nsk_session__now();
	nsk_session__flush_losses(s, now);
	nsk_status__progress(s, now, 0, 1); /* END's figures */
	rec.end.time = now;
	rec.end.records = s->records;
	rec.end.lost = s->lost_total;
	nsk_session__emit(s, &rec);
	nsk_status__update(s, now, 1);
	err = s->seg ? nsk_session__continuous_close(s) : nsk_writer__close(s->w);
	s->w = NULL;
	s->out_fd = -1;
	if (!err)
		nsk_stacks__store_cache(s->stk); /* the file is whole first */
	if (err && !s->err)
		return nsk_session__fail(s, err, "writing %s: %s", s->opts.output,
					 strerror(-err));
	return s->err;
}

/* A new process or program (procs/): the stack room learns of it, and
 * the signals that attach probes to what a process maps. */
static void notify_signals(struct nsk_session *s, uint32_t pid, uint32_t how,
			   uint64_t time)
{
	nsk_stacks__new_process(s->stk, pid); /* first: the stack room holds its root */
	for (int i = 0; i < s->nsigs; i++) {
		const struct nsk_signal *sig = s->sigs[i].sig;
		int err;

		if (!sig->on_process)
			continue;
		err = sig->on_process(s, s->sigs[i].state, pid, how, time);
		if (err && !s->err)
			nsk_session__lost(s, "proc.on_process", 1);
	}
}

static int session_init(struct nsk_session *s)
{
	int fd;

	/* The first thing that needs privileges: say which ones. */
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "nsk_targets", sizeof(__u32),
			    sizeof(__u8), 8192, NULL);
	if (fd < 0) {
		if (errno == EPERM || errno == EACCES)
			return nsk_session__fail(s, -EPERM,
				"permission denied: recording needs root, or CAP_BPF + CAP_PERFMON");
		return nsk_session__fail(s, -errno, "cannot create a BPF map: %s",
					 strerror(errno));
	}
	s->targets_fd = fd;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return nsk_session__fail(s, -ENOTSUP,
			"this kernel has no BTF (/sys/kernel/btf/vmlinux); nusku needs CONFIG_DEBUG_INFO_BTF=y");
	s->strings = nsk_intern__new();
	s->proc_index = nsk_intern__new();
	if (!s->strings || !s->proc_index || nsk_session__stacks_init(s))
		return -ENOMEM;
	s->on_new_process = notify_signals;
	/* before any program loads, so every run of ours is counted */
	return nsk_own__new(&s->own);
}

static void set_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	/* no SA_RESTART: epoll_wait returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int nsk_record__run(const struct nsk_record_opts *opts, char *const *cmdline,
		    int *exit_status, char *errbuf, size_t errlen)
{
	struct nsk_session *s = calloc(1, sizeof(*s));
	int started = 0, err;

	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->out_fd = s->targets_fd = s->go_fd = s->pidfd = -1;
	s->out.fd = -1;
	s->launched = !opts->pid && !opts->all;
	s->status_tty = !opts->quiet && isatty(STDERR_FILENO);
	libbpf_set_print(libbpf_quiet);
	nsk_fdtable__reserve(); /* while this is the only thread */
	nsk_heap__bound();
	nsk_hurry__arm(); /* the session's thread */
	set_signals();
	pick_signals(s);

	err = session_init(s);
	if (err)
		goto cleanup;
	err = nsk_target__prepare(s);
	if (err)
		goto cleanup;
	err = open_output(s);
	if (err)
		goto cleanup;
	s->start_ns = nsk_session__now();
	err = write_header(s, cmdline);
	if (err)
		goto cleanup;
	err = commit_output(s);
	if (err)
		goto cleanup;
	start_niced(1);
	start_loads(s);
	err = nsk_proc__start(s);
	if (err)
		goto cleanup;
	err = start_signals(s);
	if (err)
		goto cleanup;
	if (stop_signal)
		goto stopped;
	/* every program is loaded now: learn which are ours */
	err = nsk_own__scan(s->own);
	if (err)
		goto cleanup;
	/* kallsyms loaded meanwhile, in a thread; if it is not done, wait
	 * here rather than on the first kernel frame, when the consumer
	 * stalling lets the ring buffers fill (and stack copies go first). */
	err = nsk_session__check_kallsyms(s);
	if (err)
		goto cleanup;
	nsk_heap__trim(); /* what the loads freed */
	start_niced(0);
	err = nsk_target__release(s);
	if (err)
		goto cleanup;
	started = 1;
	nsk_status__progress(s, nsk_session__now(), 1, 0);
	err = event_loop(s);
stopped:
	start_niced(0);
	/* The recording ends here, however it ends: the probes stop writing
	 * (a storm would otherwise keep the last drain busy for as long as it
	 * lasts), then the program is stopped if it still runs. */
	if (stop_signal)
		nsk_hurry__all(); /* the threads that finish with it */
	nsk_target__forget_all(s);
	nsk_target__finish(s, !s->root_done);
	if (!err)
		err = finish(s);
	if (!err) {
		/* The program's status, also when Nusku ended it (SIGTERM at
		 * the end of the recording, SIGKILL 5 s later): 128 + the
		 * signal, as a shell would say. */
		*exit_status = 0;
		if (!started && s->launched)
			/* stopped before the program could run (it exits
			 * 127 on its own): the stop signal's status */
			*exit_status = 128 + stop_signal;
		else if (s->launched && s->reaped) {
			if (WIFEXITED(s->root_status))
				*exit_status = WEXITSTATUS(s->root_status);
			else if (WIFSIGNALED(s->root_status))
				*exit_status = 128 + WTERMSIG(s->root_status);
		}
	}
cleanup:
	start_niced(0); /* a start that failed, or was stopped */
	if (err) {
		nsk_target__finish(s, 1);
		/* Nothing was recorded yet: leave no half file behind.  Only
		 * the file made here goes, and only while its name holds it. */
		if (!started) {
			nsk_outfile__discard(&s->out);
			nsk_segments__discard(s->seg);
		}
		if (!s->errmsg[0])
			nsk_session__fail(s, err, "%s", strerror(-err));
		snprintf(errbuf, errlen, "%s", s->errmsg);
	}
	nsk_outfile__release(&s->out);
	session_free(s);
	return err;
}
