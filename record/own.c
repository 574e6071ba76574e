/* Nusku's own cost (record/own.h).
 *
 * Our programs are found by the fds this process holds (every skeleton
 * keeps its programs' fds open), so no signal has to register anything;
 * their run time is the recording's cost.  Their JIT images
 * (bpf_prog_info.jited_ksyms / jited_func_lens, one range per subprogram)
 * identify a kernel frame as a probe by address, which needs no kallsyms
 * entry: /proc/kallsyms may have been read before the programs loaded.
 *
 * The images of every other program on the system are learned too, by
 * id: those of probe type (tracepoint, raw tracepoint, perf event,
 * kprobe/uprobe, tracing) count as probes, since another tracer's program
 * on the same hook (a second recorder) runs through the same machinery,
 * which is matched by name and cannot be told apart, and where the
 * kernel's unwinder stops in a program's image (interrupted in a thunk it
 * called) the image is all a stack shows.  Programs of other kinds
 * (cgroup, socket, XDP) are the program's own business and stay as they
 * are; an image no scan saw (a short-lived tracer's, gone by the time of
 * the rescan) is taken for a probe's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/own.h"

struct range {
	uint64_t start, end;
	int probe; /* 1 a probe program's image, -1 another kind's */
	const char *name; /* as kallsyms names it; in names, never moved */
};

struct nsk_own {
	/* the windows: the window thread and the readers, under lock */
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the thread's sleep; signalled to stop it */
	pthread_t thread;
	int running, stopping;
	int stats_fd;	/* BPF_ENABLE_STATS; -1 when off */
	int stats_err;	/* why the first window could not open; 0 */
	uint64_t born_ns;   /* nsk_own__start */
	uint64_t opened_ns; /* the open window's start; 0 none open */
	uint64_t on_ns;	    /* closed windows, summed */
	uint64_t next_ns;   /* the next window's start */
	uint32_t *ids;	/* program ids seen (a program has one image) */
	size_t nids, ids_cap;
	char **names; /* one per program seen, freed with o */
	size_t nnames, names_cap;
	struct range *ranges; /* sorted by start */
	size_t nranges, ranges_cap;
	uint64_t scanned_ns; /* last scan, for rescans on a miss */
	int scanning_others; /* learn(): programs of other processes */
};

static uint64_t now_ns(void);

static void window_open(struct nsk_own *o, uint64_t now)
{
	o->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (o->stats_fd < 0) {
		if (!o->on_ns)
			o->stats_err = -errno; /* never on: no cost recorded */
		o->stats_fd = -1;
		return;
	}
	o->opened_ns = now;
}

/* kernel.bpf_stats_enabled reads 1 while anyone holds them on. */
static int stats_on_elsewhere(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

static void window_close(struct nsk_own *o, uint64_t now)
{
	if (o->stats_fd < 0)
		return;
	close(o->stats_fd);
	o->stats_fd = -1;
	o->on_ns += now - o->opened_ns;
	o->opened_ns = 0;
}

int nsk_own__new(struct nsk_own **out)
{
	struct nsk_own *o = calloc(1, sizeof(*o));
	pthread_condattr_t ca;

	if (!o)
		return -ENOMEM;
	o->stats_fd = -1;
	pthread_mutex_init(&o->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&o->wake, &ca);
	pthread_condattr_destroy(&ca);
	*out = o;
	return 0;
}

/* Sleeps until CLOCK_MONOTONIC ns `until` or a stop; under lock.  1 when
 * stopping. */
static int sleep_until(struct nsk_own *o, uint64_t until)
{
	struct timespec ts = { (time_t)(until / 1000000000ull),
			       (long)(until % 1000000000ull) };

	while (!o->stopping && now_ns() < until)
		if (pthread_cond_timedwait(&o->wake, &o->lock, &ts) == ETIMEDOUT)
			break;
	return o->stopping;
}

static void *windows(void *arg)
{
	struct nsk_own *o = arg;

	pthread_mutex_lock(&o->lock);
	for (;;) {
		if (sleep_until(o, o->opened_ns + NSK_OWN_WINDOW_NS))
			break;
		window_close(o, now_ns());
		if (sleep_until(o, o->next_ns))
			break;
		window_open(o, now_ns());
		o->next_ns += NSK_OWN_PERIOD_NS;
		if (o->stats_fd < 0)
			o->opened_ns = now_ns(); /* none open: the next try */
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

int nsk_own__start(struct nsk_own *o)
{
	uint64_t now = now_ns();
	int err;

	if (!o || o->running)
		return 0;
	pthread_mutex_lock(&o->lock);
	o->born_ns = now;
	window_open(o, now);
	o->next_ns = now + NSK_OWN_PERIOD_NS;
	pthread_mutex_unlock(&o->lock);
	if (o->stats_err)
		return 0; /* never on: nothing to time */
	err = -pthread_create(&o->thread, NULL, windows, o);
	if (!err)
		o->running = 1;
	return err;
}

/* Stops the window thread; the open window, if any, stays open. */
static void stop_windows(struct nsk_own *o)
{
	if (!o->running)
		return;
	pthread_mutex_lock(&o->lock);
	o->stopping = 1;
	pthread_cond_signal(&o->wake);
	pthread_mutex_unlock(&o->lock);
	pthread_join(o->thread, NULL);
	o->running = 0;
}

void nsk_own__free(struct nsk_own *o)
{
	if (!o)
		return;
	stop_windows(o);
	if (o->stats_fd >= 0)
		close(o->stats_fd);
	pthread_cond_destroy(&o->wake);
	pthread_mutex_destroy(&o->lock);
	free(o->ids);
	free(o->ranges);
	for (size_t i = 0; i < o->nnames; i++)
		free(o->names[i]);
	free(o->names);
	free(o);
}

int nsk_own__stats_error(const struct nsk_own *o)
{
	return o->stats_err;
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 32;
	void *q;

	if (n < *cap)
		return 0;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Calls fn for every BPF program fd this process holds; stops at the
 * first nonzero return. */
static int for_each_prog_fd(int (*fn)(void *ctx, int fd), void *ctx)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char link[64];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:bpf-prog"))
			continue;
		err = fn(ctx, atoi(de->d_name));
	}
	closedir(d);
	return err;
}

static int seen(struct nsk_own *o, uint32_t id)
{
	for (size_t i = 0; i < o->nids; i++)
		if (o->ids[i] == id)
			return 1;
	return 0;
}

/* Probe programs: what runs on a tracepoint, a perf event, a k/uprobe. */
static int is_probe_type(__u32 type)
{
	return type == BPF_PROG_TYPE_KPROBE || type == BPF_PROG_TYPE_TRACEPOINT ||
	       type == BPF_PROG_TYPE_PERF_EVENT ||
	       type == BPF_PROG_TYPE_RAW_TRACEPOINT ||
	       type == BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE ||
	       type == BPF_PROG_TYPE_TRACING;
}

static int learn(void *ctx, int fd)
{
	struct nsk_own *o = ctx;
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), n;
	__u64 *ksyms = NULL;
	int kind;
	__u32 *lens = NULL;
	char *name, *p;
	int err;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0; /* gone meanwhile */
	if (seen(o, info.id))
		return 0;
	kind = !o->scanning_others || is_probe_type(info.type) ? 1 : -1;
	n = info.nr_jited_ksyms;
	if (n != info.nr_jited_func_lens)
		n = 0;
	if (n) {
		ksyms = calloc(n, sizeof(*ksyms));
		lens = calloc(n, sizeof(*lens));
		if (!ksyms || !lens) {
			err = -ENOMEM;
			goto cleanup;
		}
		memset(&info, 0, sizeof(info));
		info.nr_jited_ksyms = n;
		info.nr_jited_func_lens = n;
		info.jited_ksyms = (__u64)(uintptr_t)ksyms;
		info.jited_func_lens = (__u64)(uintptr_t)lens;
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			n = 0;
	}
	err = grow((void **)&o->ids, &o->ids_cap, o->nids, sizeof(*o->ids)) ?:
	      grow((void **)&o->names, &o->names_cap, o->nnames, sizeof(*o->names));
	if (err)
		goto cleanup;
	o->ids[o->nids++] = info.id;
	/* kallsyms' name for it: bpf_prog_TAG_NAME (kernel/bpf/core.c) */
	name = malloc(sizeof("bpf_prog__") + 2 * BPF_TAG_SIZE + BPF_OBJ_NAME_LEN);
	if (!name) {
		err = -ENOMEM;
		goto cleanup;
	}
	p = name + sprintf(name, "bpf_prog_");
	for (int i = 0; i < BPF_TAG_SIZE; i++)
		p += sprintf(p, "%02x", info.tag[i]);
	if (info.name[0])
		sprintf(p, "_%.*s", BPF_OBJ_NAME_LEN - 1, info.name);
	o->names[o->nnames++] = name;
	for (__u32 i = 0; i < n; i++) {
		if (!ksyms[i] || !lens[i])
			continue; /* addresses hidden (kptr_restrict) */
		err = grow((void **)&o->ranges, &o->ranges_cap, o->nranges,
			   sizeof(*o->ranges));
		if (err)
			goto cleanup;
		o->ranges[o->nranges++] = (struct range){ ksyms[i],
							  ksyms[i] + lens[i], kind,
							  name };
	}
	err = 0;
cleanup:
	free(ksyms);
	free(lens);
	return err;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every program on the system, by id (needs CAP_SYS_ADMIN; without it,
 * ours are all we know). */
static int learn_others(struct nsk_own *o)
{
	__u32 id = 0;
	int err = 0;

	o->scanning_others = 1;
	while (!err && !bpf_prog_get_next_id(id, &id)) {
		int fd;

		if (seen(o, id))
			continue;
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue; /* gone meanwhile, or not allowed */
		err = learn(o, fd);
		close(fd);
	}
	o->scanning_others = 0;
	return err;
}

int nsk_own__scan(struct nsk_own *o)
{
	int err = for_each_prog_fd(learn, o);

	err = err ?: learn_others(o);
	if (o->nranges) /* none without the programs' info: ranges NULL */
		qsort(o->ranges, o->nranges, sizeof(*o->ranges), cmp_range);
	o->scanned_ns = now_ns();
	return err;
}

int nsk_own__rescan(struct nsk_own *o)
{
	if (!o || now_ns() - o->scanned_ns < 100000000u)
		return 0;
	return nsk_own__scan(o);
}

static const struct range *range_at(const struct nsk_own *o, uint64_t addr)
{
	size_t lo = 0, hi = o ? o->nranges : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < o->ranges[mid].start)
			hi = mid;
		else if (addr >= o->ranges[mid].end)
			lo = mid + 1;
		else
			return &o->ranges[mid];
	}
	return NULL;
}

int nsk_own__prog_at(const struct nsk_own *o, uint64_t addr)
{
	const struct range *r = range_at(o, addr);

	return r ? r->probe : 0;
}

int nsk_own__name_at(const struct nsk_own *o, uint64_t addr, const char **name)
{
	const struct range *r = range_at(o, addr);

	if (!r)
		return 0;
	*name = r->name;
	return 1;
}

/* The functions that exist to run probes.  A uprobe in the target is
 * ours (Nusku cannot tell another tracer's uprobe from its own; inside a
 * recording it is almost always its own), and so is a BPF program run
 * from a tracepoint or a perf event: the dispatch before and after the
 * program is what the probe costs.  Prefixes end in '*'. */
static const char *const machinery[] = {
	"uprobe_*",		/* uprobe_notify_resume, uprobe_prog_run,
				 * uprobe_dispatcher, uprobe_handle_trampoline,
				 * uprobe_multi_link_*handler, uprobe_mmap ... */
	"uretprobe_*",		/* uretprobe_dispatcher */
	"__uprobe_*",
	"handle_swbp",		/* the breakpoint hit */
	"handler_chain",	/* its consumers */
	"handle_uretprobe_chain",
	"find_active_uprobe*",
	"arch_uprobe_*",	/* single-step, return-address hijack */
	"arch_uretprobe_*",
	"__x64_sys_uretprobe",	/* the return trampoline's syscall */
	"__ia32_sys_uretprobe",
	"__do_sys_uretprobe",
	"__x64_sys_uprobe",	/* the optimized-uprobe syscall */
	"__do_sys_uprobe",
	"bpf_trace_run*",	/* raw_tp and tp_btf programs */
	"__bpf_trace_*",
	"trace_call_bpf",	/* tracepoint programs */
	"bpf_overflow_handler", /* perf_event programs */
	"bpf_task_work_*",	/* task work a program scheduled (the off-CPU
				 * signal's user stacks, bpf/offcpu.bpf.c): its
				 * callback runs on the way back to user space,
				 * then puts the program (__bpf_prog_put) */
	NULL
};

int nsk_own__machinery(const char *name, int outermost)
{
	/* int3 taken from user space: a uprobe breakpoint (a debugger's
	 * would stop the program, not run through here on every call) */
	if (outermost && (!strcmp(name, "asm_exc_int3") || !strcmp(name, "exc_int3")))
		return 1;
	/* the padding before a function (CONFIG_CALL_PADDING) has a symbol
	 * of its own */
	if (!strncmp(name, "__pfx_", 6))
		name += 6;
	for (int i = 0; machinery[i]; i++) {
		size_t len = strlen(machinery[i]);

		if (machinery[i][len - 1] == '*' ?
			    !strncmp(name, machinery[i], len - 1) :
			    !strcmp(name, machinery[i]))
			return 1;
	}
	return 0;
}

struct cost_ctx {
	struct nsk_own_cost *c;
	double scale; /* total / on */
	void (*visit)(void *ctx, const char *name, uint64_t run_ns,
		      uint64_t runs);
	void *ctx;
	uint32_t *ids; /* counted already */
	size_t nids, cap;
};

static int add_cost(void *ctx, int fd)
{
	struct cost_ctx *cc = ctx;
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	uint64_t run_ns, runs;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	for (size_t i = 0; i < cc->nids; i++)
		if (cc->ids[i] == info.id)
			return 0;
	if (grow((void **)&cc->ids, &cc->cap, cc->nids, sizeof(*cc->ids)))
		return -ENOMEM;
	cc->ids[cc->nids++] = info.id;
	run_ns = (uint64_t)((double)info.run_time_ns * cc->scale + 0.5);
	runs = (uint64_t)((double)info.run_cnt * cc->scale + 0.5);
	cc->c->run_ns += run_ns;
	cc->c->runs += runs;
	cc->c->progs++;
	if (cc->visit)
		cc->visit(cc->ctx, info.name, run_ns, runs);
	return 0;
}

/* The scaled run time of our programs, the windows having been on for
 * c->on_ns of the time since the first tick; open: one of ours is open
 * now (the statistics being on then says nothing about other tracers). */
static int cost_of(struct nsk_own *o, struct nsk_own_cost *c, struct cost_ctx *cc,
		   uint64_t now, int open)
{
	int err;

	c->total_ns = o->born_ns ? now - o->born_ns : 0;
	/* Still on with our window closed: someone else keeps them on (the
	 * sysctl, another tracer), most likely all along: the figures are
	 * then whole, not a window's. */
	if (c->on_ns && !open && stats_on_elsewhere())
		c->on_ns = c->total_ns;
	if (c->on_ns)
		cc->scale = (double)c->total_ns / (double)c->on_ns;
	err = for_each_prog_fd(add_cost, cc);
	free(cc->ids);
	return err;
}

int nsk_own__cost(struct nsk_own *o, struct nsk_own_cost *c,
		  void (*visit)(void *ctx, const char *name, uint64_t run_ns,
				uint64_t runs),
		  void *ctx)
{
	struct cost_ctx cc = { c, 1.0, visit, ctx, NULL, 0, 0 };
	uint64_t now = now_ns();

	memset(c, 0, sizeof(*c));
	/* the open window ends here: what ran after is not counted */
	stop_windows(o);
	window_close(o, now);
	c->on_ns = o->on_ns;
	return cost_of(o, c, &cc, now, 0);
}

int nsk_own__cost_so_far(struct nsk_own *o, struct nsk_own_cost *c)
{
	struct cost_ctx cc = { c, 1.0, NULL, NULL, NULL, 0, 0 };
	uint64_t now;
	int open;

	memset(c, 0, sizeof(*c));
	/* the open window counts up to now, and stays open */
	pthread_mutex_lock(&o->lock);
	now = now_ns();
	open = o->stats_fd >= 0;
	c->on_ns = o->on_ns + (open ? now - o->opened_ns : 0);
	pthread_mutex_unlock(&o->lock);
	return cost_of(o, c, &cc, now, open);
}
