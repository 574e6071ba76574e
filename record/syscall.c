/* The syscall signal, user half: turns bpf/syscall.bpf.c's aggregates,
 * path samples and slow-call events into NSK_REC_SYSCALL_STAT,
 * NSK_REC_SYSCALL_PATH and NSK_REC_SYSCALL_SLOW, and names the running
 * kernel's syscalls (NSK_REC_SYSCALL_NAME, from record/sctable.c).
 *
 * Aggregates: the BPF programs write to one of two map sets; every
 * FLUSH_NS this file flips them and reads (and empties) the set that was
 * left a whole window earlier, so no program is still writing to what is
 * read.  The slots of that set are read through an mmap of the array,
 * each one used becomes a STAT record for (thread, syscall) over that
 * window with its errnos, and is zeroed for its next turn; the hash map
 * of the slotless is read the same way.  The slots of a thread that ended
 * go back to BPF (the sc_free queue) after two more flips: by then both
 * sets have been read since its last call.  The path map becomes PATH
 * records.  Paths are hashes; the stack behind a hash comes once per
 * (hash, pid) as a path event with a copy of the user stack, unwound
 * through the session (record/stacks/ustack.c); failing that, it is read from
 * the stacks map, completed with the frameless callers BPF found, and
 * interned.
 *
 * Slow calls come through a ring buffer, each with its arguments, the file
 * or socket behind its fd (record/fdinfo.c) and its user stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/fdinfo.h"
#include "record/sctable.h"
#include "record/stacks/kallsyms.h"
#include "record/session.h"
#include "syscall.skel.h"
#include <nusku/events/syscall.h>

#define FLUSH_NS 1000000000ULL	   /* length of an aggregation window */
#define DEFAULT_SLOW_NS 1000000ULL /* --slow-syscall default: 1 ms */
#define DEFAULT_SAMPLE_NS 100000ULL /* --syscall-sample default: 100 us */
#define BATCH 256
#define VIEW_STEP (64u << 10) /* slot arrays are mapped this much at a time */

/* (stack hash, pid) -> session stack id, open addressing. */
struct stack_slot {
	uint64_t hash; /* 0: empty (BPF hashes are >= 2) */
	uint32_t pid;
	uint64_t id;
};

struct sc_state {
	struct nsk_session *s;
	struct syscall_bpf *skel;
	struct nsk_fdinfo *fdinfo;
	struct stack_slot *stacks;
	size_t nstacks, capstacks;
	uint32_t active;	     /* the set BPF writes to */
	uint64_t set_start[2];	     /* when set i became active */
	uint64_t set_end[2];	     /* when it was left; 0 while active */
	uint64_t lost_seen[NSK_SC_LOST_MAX];
	int ncpus;
	/* The slot arrays, mmapped; of aggs only the slots handed out so
	 * far (see view_slots). */
	struct nsk_sc_agg *aggs;
	struct nsk_sc_key *owners;
	size_t aggs_len, owners_len;
	size_t aggs_viewed; /* bytes of each set mapped */
	/* Threads that ended, their slots not yet handed back. */
	struct gone {
		uint32_t pid, tid;
		int flips; /* flips to wait before their slots are free */
	} *gone;
	size_t ngone, capgone;
	/* Batch buffers. */
	struct nsk_sc_key keys[BATCH];
	struct nsk_sc_agg vals[BATCH];
	struct nsk_sc_pathkey pkeys[BATCH];
	struct nsk_sc_pathval pvals[BATCH];
	struct nsk_sc_errkey *errs;  /* errnos of the set being read */
	uint64_t *errcounts;
	size_t nerrs, caperrs;
	/* the kernel's names, read at load, written at start */
	struct nsk_sctable *names;
	int names_err;
	char names_why[256];
};

static const char *const lost_source[NSK_SC_LOST_MAX] = {
	[NSK_SC_LOST_STATS] = "syscall.stats",
	[NSK_SC_LOST_ERRNO] = "syscall.errno",
	[NSK_SC_LOST_STACK] = "syscall.stack",
	[NSK_SC_LOST_RINGBUF] = "syscall.ringbuf",
	[NSK_SC_LOST_USTACK] = "syscall.ustack",
	[NSK_SC_LOST_PATHS] = "syscall.paths",
};

static size_t slot_of(uint64_t hash, uint32_t pid, size_t cap)
{
	uint64_t h = (hash ^ ((uint64_t)pid * 0x9e3779b97f4a7c15ULL)) *
		     0xff51afd7ed558ccdULL;

	return (h >> 17) & (cap - 1);
}

static int stacks_grow(struct sc_state *st)
{
	size_t cap = st->capstacks ? st->capstacks * 2 : 256, i, j;
	struct stack_slot *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < st->capstacks; i++) {
		if (!st->stacks[i].hash)
			continue;
		j = slot_of(st->stacks[i].hash, st->stacks[i].pid, cap);
		while (n[j].hash)
			j = (j + 1) & (cap - 1);
		n[j] = st->stacks[i];
	}
	free(st->stacks);
	st->stacks = n;
	st->capstacks = cap;
	return 0;
}

/* ips[0], then the frameless callers BPF found, then the rest of the
 * frame-pointer walk.  A caller equal to the next walked frame is the same
 * frame seen twice (the leaf had a frame after all) and is dropped. */
static uint32_t complete_stack(const struct nsk_sc_stack *in, uint64_t *out)
{
	uint32_t n = 0, i, nips = in->n, ncallers = in->ncallers;

	if (nips > NSK_MAX_STACK_DEPTH)
		nips = NSK_MAX_STACK_DEPTH;
	if (ncallers > NSK_SC_MAX_CALLERS)
		ncallers = NSK_SC_MAX_CALLERS;
	if (!nips)
		return 0;
	out[n++] = in->ips[0];
	for (i = 0; i < ncallers; i++)
		if (nips < 2 || in->callers[i] != in->ips[1])
			out[n++] = in->callers[i];
	for (i = 1; i < nips; i++)
		out[n++] = in->ips[i];
	return n;
}

static uint64_t intern_stack(struct sc_state *st, uint32_t pid,
			     const struct nsk_sc_stack *stack)
{
	uint64_t ips[NSK_MAX_STACK_DEPTH + NSK_SC_MAX_CALLERS];
	uint32_t n = complete_stack(stack, ips), flags = NSK_STACK_UNWIND_FP;

	if (!n)
		return 0;
	if (stack->n >= NSK_MAX_STACK_DEPTH)
		flags |= NSK_STACK_TRUNCATED;
	return nsk_session__stack(st->s, pid, NULL, 0, ips, n, flags);
}

/* The cached stack id of (hash, pid); NULL when not cached. */
static struct stack_slot *cached(struct sc_state *st, uint32_t pid, uint64_t hash)
{
	if (!st->capstacks)
		return NULL;
	for (size_t i = slot_of(hash, pid, st->capstacks); st->stacks[i].hash;
	     i = (i + 1) & (st->capstacks - 1))
		if (st->stacks[i].hash == hash && st->stacks[i].pid == pid)
			return &st->stacks[i];
	return NULL;
}

static void remember(struct sc_state *st, uint32_t pid, uint64_t hash,
		     uint64_t id)
{
	struct stack_slot *c = cached(st, pid, hash);
	size_t i;

	if (c) {
		c->id = id;
		return;
	}
	if ((st->nstacks + 1) * 2 > st->capstacks && stacks_grow(st))
		return; /* not cached: looked up again next time */
	for (i = slot_of(hash, pid, st->capstacks); st->stacks[i].hash;
	     i = (i + 1) & (st->capstacks - 1))
		;
	st->stacks[i].hash = hash;
	st->stacks[i].pid = pid;
	st->stacks[i].id = id;
	st->nstacks++;
}

/* The session stack id of a path hash in process pid; 0 if unknown. */
static uint64_t stack_id(struct sc_state *st, uint32_t pid, uint64_t hash)
{
	struct nsk_sc_stack stack;
	struct stack_slot *c;
	uint64_t id = 0;

	if (hash == NSK_SC_STACK_NONE || hash == NSK_SC_STACK_FAILED)
		return 0;
	if ((c = cached(st, pid, hash)))
		return c->id;
	/* no path event (ring full, or --call-graph fp): the map has the
	 * frame-pointer walk and its callers */
	if (bpf_map_lookup_elem(bpf_map__fd(st->skel->maps.sc_stacks), &hash,
				&stack) == 0)
		id = intern_stack(st, pid, &stack);
	if (!id)
		nsk_session__lost(st->s, "syscall.stack", 1);
	remember(st, pid, hash, id);
	return id;
}

/* A path seen for the first time: its stack, unwound from the copy. */
static int on_path(struct sc_state *st, const struct nsk_ev_syscall_path *e,
		   size_t len)
{
	uint64_t ips[NSK_MAX_STACK_DEPTH + NSK_SC_MAX_CALLERS], id;
	uint32_t n = complete_stack(&e->stack, ips), flags = NSK_STACK_UNWIND_FP;
	const struct nsk_ev_ustack *copy = &e->ustack;

	if (!copy->len || sizeof(*e) + copy->len > len)
		copy = NULL;
	if (e->stack.n >= NSK_MAX_STACK_DEPTH || n > NSK_MAX_STACK_DEPTH)
		flags |= NSK_STACK_TRUNCATED;
	if (n > NSK_MAX_STACK_DEPTH)
		n = NSK_MAX_STACK_DEPTH;
	/* the unwind continues the kernel's frame-pointer walk itself, entry
	 * by entry: not the callers BPF guessed between its first two */
	if (copy) {
		n = e->stack.n < NSK_MAX_STACK_DEPTH ? e->stack.n : NSK_MAX_STACK_DEPTH;
		memcpy(ips, e->stack.ips, n * sizeof(*ips));
	}
	id = nsk_session__stack_copied(st->s, e->pid, e->time, NULL, 0, ips, n,
				       copy, e + 1, flags);
	if (id)
		remember(st, e->pid, e->path, id);
	return 0;
}

static int errkey_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct nsk_sc_errkey));
}

/* Reads and empties the errno map of set `set` into st->errs, sorted. */
static int read_errnos(struct sc_state *st, int fd)
{
	struct nsk_sc_errkey keys[BATCH];
	uint64_t vals[BATCH];
	uint64_t in = 0, out = 0;
	int first = 1, err = 0;
	size_t i;

	st->nerrs = 0;
	for (;;) {
		__u32 count = BATCH;

		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in,
						      &out, keys, vals, &count,
						      NULL);
		if (err && errno != ENOENT)
			return -errno;
		if (st->nerrs + count > st->caperrs) {
			size_t cap = (st->nerrs + count) * 2;
			void *k = realloc(st->errs, cap * sizeof(*st->errs));

			if (!k)
				return -ENOMEM;
			st->errs = k;
			k = realloc(st->errcounts, cap * sizeof(*st->errcounts));
			if (!k)
				return -ENOMEM;
			st->errcounts = k;
			st->caperrs = cap;
		}
		for (i = 0; i < count; i++) {
			st->errs[st->nerrs] = keys[i];
			st->errcounts[st->nerrs++] = vals[i];
		}
		if (err) /* ENOENT: that was the last batch */
			break;
		in = out;
		first = 0;
	}
	/* Sort keys and counts together: sort indices by key. */
	if (st->nerrs > 1) {
		struct pair {
			struct nsk_sc_errkey k;
			uint64_t n;
		} *p = malloc(st->nerrs * sizeof(*p));

		if (!p)
			return -ENOMEM;
		for (i = 0; i < st->nerrs; i++) {
			p[i].k = st->errs[i];
			p[i].n = st->errcounts[i];
		}
		qsort(p, st->nerrs, sizeof(*p), errkey_cmp);
		for (i = 0; i < st->nerrs; i++) {
			st->errs[i] = p[i].k;
			st->errcounts[i] = p[i].n;
		}
		free(p);
	}
	return 0;
}

static int emit_stat(struct sc_state *st, const struct nsk_sc_key *k,
		     const struct nsk_sc_agg *v, uint64_t start, uint64_t end)
{
	uint64_t errnos[2 * 64], hist[NSK_SC_HIST_BUCKETS];
	struct nsk_sc_errkey probe = { .key = *k };
	struct nsk_record rec = { .type = NSK_REC_SYSCALL_STAT };
	struct nsk_rec_syscall_stat *r = &rec.syscall_stat;
	uint32_t nhist = NSK_SC_HIST_BUCKETS, nerr = 0, i;
	size_t lo = 0, hi = st->nerrs;

	if (!v->count)
		return 0;
	while (nhist && !v->hist[nhist - 1])
		nhist--;
	for (i = 0; i < nhist; i++)
		hist[i] = v->hist[i];
	/* First errno entry of this key (errs sorted; err is after key). */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (memcmp(&st->errs[mid], &probe, sizeof(probe)) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < st->nerrs && nerr < 64 &&
	       !memcmp(&st->errs[lo].key, k, sizeof(*k));
	     lo++) {
		errnos[2 * nerr] = st->errs[lo].err;
		errnos[2 * nerr + 1] = st->errcounts[lo];
		nerr++;
	}
	r->time = end;
	r->window_ns = end - start;
	r->pid = k->pid;
	r->tid = k->tid;
	r->nr = k->nr;
	r->stack_id = 0; /* paths are NSK_REC_SYSCALL_PATH records */
	r->count = v->count;
	r->errors = v->errors;
	r->total_ns = v->total_ns;
	r->max_ns = v->max_ns;
	r->hist.v = hist;
	r->hist.n = nhist;
	r->errnos.v = errnos;
	r->errnos.n = 2 * nerr;
	return nsk_session__emit(st->s, &rec);
}

static int emit_path(struct sc_state *st, const struct nsk_sc_pathkey *k,
		     const struct nsk_sc_pathval *v, uint64_t start, uint64_t end)
{
	struct nsk_record rec = { .type = NSK_REC_SYSCALL_PATH };
	struct nsk_rec_syscall_path *r = &rec.syscall_path;

	if (!v->time_ns)
		return 0;
	r->time = end;
	r->window_ns = end - start;
	r->pid = k->key.pid;
	r->tid = k->key.tid;
	r->nr = k->key.nr;
	r->stack_id = stack_id(st, k->key.pid, k->stack);
	r->calls = (v->calls_x256 + 128) >> 8;
	r->total_ns = v->time_ns;
	return nsk_session__emit(st->s, &rec);
}

/* Reads and empties a hash map of aggregates or paths, BATCH at a time. */
static int drain_hash(struct sc_state *st, int fd, int paths, uint64_t start,
		      uint64_t end)
{
	uint64_t in = 0, out = 0;
	int first = 1, err, done = 0;
	__u32 i, count;

	while (!done) {
		count = BATCH;
		err = bpf_map_lookup_and_delete_batch(
			fd, first ? NULL : &in, &out,
			paths ? (void *)st->pkeys : (void *)st->keys,
			paths ? (void *)st->pvals : (void *)st->vals, &count, NULL);
		if (err && errno != ENOENT)
			return -errno;
		done = err != 0;
		for (i = 0; i < count; i++) {
			err = paths ? emit_path(st, &st->pkeys[i], &st->pvals[i],
						start, end)
				    : emit_stat(st, &st->keys[i], &st->vals[i],
						start, end);
			if (err)
				return err;
		}
		in = out;
		first = 0;
	}
	return 0;
}

/* One set of aggregates, in bytes: page-aligned (16384 slots of 184). */
#define SET_BYTES ((size_t)NSK_SC_SLOTS * sizeof(struct nsk_sc_agg))
_Static_assert(SET_BYTES % VIEW_STEP == 0, "a set is whole view steps");

/* Maps the first n slots of both sets, if they are not yet.  The kernel
 * puts every page of a mapping of the array in at once, so mapping all
 * 16384 slots of both sets cost 5.8 MB of RSS where a small program uses
 * a few dozen; the kernel's own copy is there either way. */
static int view_slots(struct sc_state *st, uint32_t n)
{
	size_t want = ((size_t)n * sizeof(struct nsk_sc_agg) + VIEW_STEP - 1) /
		      VIEW_STEP * VIEW_STEP;
	int fd = bpf_map__fd(st->skel->maps.sc_aggs);

	if (want <= st->aggs_viewed)
		return 0;
	for (size_t set = 0; set < 2; set++) {
		size_t at = set * SET_BYTES + st->aggs_viewed;
		void *p = mmap((char *)st->aggs + at, want - st->aggs_viewed,
			       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			       (off_t)at);

		if (p == MAP_FAILED)
			return -errno;
	}
	st->aggs_viewed = want;
	return 0;
}

/* Reads and empties map set `set`, whose window is [start, end]. */
static int drain_set(struct sc_state *st, uint32_t set, uint64_t start,
		     uint64_t end)
{
	struct syscall_bpf *skel = st->skel;
	uint32_t n = skel->bss->next_slot, i;
	struct nsk_sc_agg *aggs = st->aggs + (set ? NSK_SC_SLOTS : 0);
	int err;

	if (n > NSK_SC_SLOTS)
		n = NSK_SC_SLOTS;
	err = view_slots(st, n);
	if (err)
		return err;
	err = read_errnos(st, bpf_map__fd(set ? skel->maps.sc_errnos1
					      : skel->maps.sc_errnos0));
	if (err)
		return err;
	/* Slots past n are unused; a slot taken since n was read is empty
	 * in this set. */
	for (i = 0; i < n && i < NSK_SC_SLOTS; i++) {
		if (!aggs[i].count)
			continue;
		err = emit_stat(st, &st->owners[i], &aggs[i], start, end);
		if (err)
			return err;
		memset(&aggs[i], 0, sizeof(aggs[i]));
	}
	err = drain_hash(st, bpf_map__fd(set ? skel->maps.sc_over1
					     : skel->maps.sc_over0),
			 0, start, end);
	if (err)
		return err;
	return drain_hash(st, bpf_map__fd(set ? skel->maps.sc_paths1
					      : skel->maps.sc_paths0),
			  1, start, end);
}

static void drain_lost(struct sc_state *st)
{
	nsk_session__drain_lost(st->s, bpf_map__fd(st->skel->maps.sc_lost),
				lost_source, NSK_SC_LOST_MAX, st->lost_seen);
}

static int on_slow(struct sc_state *st, const struct nsk_ev_syscall_slow *e)
{
	struct nsk_record rec = { .type = NSK_REC_SYSCALL_SLOW };
	struct nsk_rec_syscall_slow *r = &rec.syscall_slow;
	char name[256], dname[sizeof(e->file_name) + 1];
	int fd_arg;

	r->time = e->time;
	r->duration = e->duration;
	r->pid = e->pid;
	r->tid = e->tid;
	r->nr = e->nr;
	r->ret = e->ret;
	r->args.v = (const uint64_t *)e->args;
	r->args.n = 6;
	r->target_id = 0;
	fd_arg = nsk_fdinfo__fd_arg(e->nr);
	if (fd_arg >= 0 && (e->flags & NSK_SC_SLOW_FILE) && fd_arg == 0) {
		memcpy(dname, e->file_name, sizeof(e->file_name));
		dname[sizeof(e->file_name)] = 0;
		if (nsk_fdinfo__describe(st->fdinfo, e->pid, (int)e->args[0],
					 e->file_ino, e->file_mode, dname, name,
					 sizeof(name)))
			r->target_id = nsk_session__string(st->s, name);
	} else if (fd_arg > 0) {
		/* Only args[0] is described by BPF; another fd argument is
		 * named from /proc alone. */
		if (nsk_fdinfo__describe(st->fdinfo, e->pid,
					 (int)e->args[fd_arg], 0, 0, NULL, name,
					 sizeof(name)))
			r->target_id = nsk_session__string(st->s, name);
	}
	r->stack_id = 0;
	if (!(e->flags & NSK_SC_SLOW_NOSTACK)) {
		/* its path event came just before it, unwound */
		const struct stack_slot *c = cached(st, e->pid, e->path);

		r->stack_id = c && c->id ? c->id : intern_stack(st, e->pid, &e->stack);
		if (!r->stack_id)
			nsk_session__lost(st->s, "syscall.stack", 1);
	}
	return nsk_session__emit(st->s, &rec) < 0 ? -1 : 0;
}

static int on_gone(struct sc_state *st, const struct nsk_ev_syscall_gone *e)
{
	if (st->ngone == st->capgone) {
		size_t cap = st->capgone ? 2 * st->capgone : 64;
		struct gone *g = realloc(st->gone, cap * sizeof(*g));

		if (!g)
			return 0; /* its slots stay taken */
		st->gone = g;
		st->capgone = cap;
	}
	st->gone[st->ngone++] = (struct gone){ e->pid, e->tid, 2 };
	return 0;
}

/* After a flip: hands back the slots of threads whose last window has
 * been read (the set they wrote in last has been drained since). */
static void free_slots(struct sc_state *st)
{
	uint32_t n = st->skel->bss->next_slot, i;
	int fd = bpf_map__fd(st->skel->maps.sc_free);
	size_t g = 0, kept = 0;

	if (n > NSK_SC_SLOTS)
		n = NSK_SC_SLOTS;
	for (g = 0; g < st->ngone; g++) {
		struct gone *x = &st->gone[g];

		if (--x->flips > 0) {
			st->gone[kept++] = *x;
			continue;
		}
		for (i = 0; i < n; i++) {
			struct nsk_sc_key *o = &st->owners[i];

			if (o->tid != x->tid || o->pid != x->pid)
				continue;
			memset(o, 0, sizeof(*o));
			if (bpf_map_update_elem(fd, NULL, &i, 0))
				break; /* the queue is full: slots stay taken */
		}
	}
	st->ngone = kept;
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct nsk_ev_header *h = data;

	if (len >= sizeof(struct nsk_ev_syscall_gone) && h->type == NSK_EV_SYSCALL_GONE)
		return on_gone(ctx, data);

	if (len >= sizeof(struct nsk_ev_syscall_path) && h->type == NSK_EV_SYSCALL_PATH)
		return on_path(ctx, data, len);
	if (len >= sizeof(struct nsk_ev_syscall_slow) && h->type == NSK_EV_SYSCALL_SLOW)
		return on_slow(ctx, data);
	return 0;
}

static void sc_stop(void *state)
{
	struct sc_state *st = state;

	if (!st)
		return;
	if (st->aggs)
		munmap(st->aggs, st->aggs_len);
	if (st->owners)
		munmap(st->owners, st->owners_len);
	syscall_bpf__destroy(st->skel);
	nsk_sctable__free(st->names);
	nsk_fdinfo__free(st->fdinfo);
	free(st->stacks);
	free(st->errs);
	free(st->errcounts);
	free(st->gone);
	free(st);
}

static int emit_arch(struct nsk_session *s)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	return nsk_session__meta(s, "syscall.arch", u.machine);
}

/* The running kernel's names, read before load: the numbers of the
 * probes' own syscalls, which are never the program's, go into rodata.
 * Without the kernel's table, the build's headers (and a note) stand in.
 * May run in the load thread: it keeps what it found for emit_names. */
static void read_names(struct sc_state *st)
{
	struct nsk_kallsyms *own = NULL, *k = nsk_session__kallsyms(st->s);
	int self0 = -ENOENT, self1 = -ENOENT;

	/* the recording's kallsyms; without kernel stacks there is none */
	if (!k && !nsk_session__opts(st->s)->kernel_stacks &&
	    !nsk_kallsyms__load(NULL, &own))
		k = own;
	st->names_err = nsk_sctable__read(k, &st->names, st->names_why,
					  sizeof(st->names_why));
	nsk_kallsyms__free(own);
	if (st->names_err) {
		st->names = NULL;
#ifdef __NR_uretprobe
		self0 = __NR_uretprobe;
#endif
#ifdef __NR_uprobe
		self1 = __NR_uprobe;
#endif
	} else {
		self0 = nsk_sctable__find(st->names, "uretprobe");
		self1 = nsk_sctable__find(st->names, "uprobe");
	}
	if (self0 >= 0)
		st->skel->rodata->nr_self0 = self0;
	if (self1 >= 0)
		st->skel->rodata->nr_self1 = self1;
}

/* ... and into the recording, so that a report anywhere names every
 * number this kernel has. */
static int emit_names(struct sc_state *st)
{
	struct nsk_record rec = { .type = NSK_REC_SYSCALL_NAME };
	struct nsk_sctable *t = st->names;
	int err;

	if (st->names_err) {
		if (!nsk_session__opts(st->s)->quiet)
			fprintf(stderr, "nusku: record: note: syscall names from "
				"the build's headers: %s\n", st->names_why);
		return nsk_session__meta(st->s, "syscall.names", st->names_why);
	}
	for (uint32_t nr = 0; nr < nsk_sctable__count(t); nr++) {
		const char *name = nsk_sctable__name(t, nr);

		if (!name)
			continue;
		rec.syscall_name.nr = nr;
		rec.syscall_name.name.data = (const uint8_t *)name;
		rec.syscall_name.name.len = strlen(name);
		err = nsk_session__emit(st->s, &rec);
		if (err)
			goto cleanup;
	}
	err = nsk_session__meta(st->s, "syscall.names", "kernel");
cleanup:
	nsk_sctable__free(t);
	st->names = NULL;
	return err;
}

/* What the programs saw and did not charge to the program. */
static int emit_self(struct sc_state *st)
{
	static const char *const keys[NSK_SC_SELF_MAX] = {
		[NSK_SC_SELF_PROBE] = "syscall.self.probe_calls",
		[NSK_SC_SELF_LAUNCHER] = "syscall.self.launcher_calls",
	};
	int fd = bpf_map__fd(st->skel->maps.sc_self), err = 0;
	uint64_t *v = calloc(st->ncpus, sizeof(*v));
	char buf[32];

	if (!v)
		return -ENOMEM;
	for (__u32 k = 0; k < NSK_SC_SELF_MAX && !err; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &k, v))
			continue;
		for (int c = 0; c < st->ncpus; c++)
			sum += v[c];
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)sum);
		err = nsk_session__meta(st->s, keys[k], buf);
	}
	free(v);
	return err;
}

static int map_slots(struct sc_state *st)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	/* address space for both sets; the slots are mapped into it as they
	 * are handed out (view_slots) */
	st->aggs_len = 2 * SET_BYTES;
	p = mmap(NULL, st->aggs_len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	st->aggs = p;
	st->owners_len = (NSK_SC_SLOTS * sizeof(struct nsk_sc_key) + page - 1) &
			 ~(page - 1);
	p = mmap(NULL, st->owners_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(st->skel->maps.sc_owners), 0);
	if (p == MAP_FAILED)
		return -errno;
	st->owners = p;
	return 0;
}

/* Open, configure and load (struct nsk_signal's load: may run in a
 * thread of its own). */
static int sc_load(struct nsk_session *s, void **state)
{
	const struct nsk_record_opts *opts = nsk_session__opts(s);
	struct sc_state *st;
	int err;

	*state = NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->s = s;
	st->ncpus = libbpf_num_possible_cpus();
	if (st->ncpus <= 0) {
		err = st->ncpus ? st->ncpus : -EINVAL;
		goto cleanup;
	}
	err = nsk_fdinfo__new(&st->fdinfo);
	if (err)
		goto cleanup;
	st->skel = syscall_bpf__open();
	if (!st->skel) {
		err = -errno;
		goto cleanup;
	}
	st->skel->rodata->slow_ns = opts->slow_syscall_ns ? opts->slow_syscall_ns
							  : DEFAULT_SLOW_NS;
	st->skel->rodata->sample_ns = opts->syscall_sample_ns
					      ? opts->syscall_sample_ns
					      : DEFAULT_SAMPLE_NS;
	st->skel->rodata->nr_exit = SYS_exit;
	st->skel->rodata->nr_exit_group = SYS_exit_group;
	st->skel->rodata->nr_execve = SYS_execve;
	st->skel->rodata->nr_execveat = SYS_execveat;
	st->skel->rodata->launch_tgid = nsk_session__launched(s);
	st->skel->rodata->ustack_bytes = nsk_session__ustack_bytes(s);
	read_names(st);
	st->skel->rodata->nsk_all_but = nsk_session__all_but(s);
	if (getenv("NUSKU_SYSCALL_THREADS")) {
		/* tests: fewer threads' state in the array, the rest in task
		 * storage (bpf/syscall.bpf.c) */
		unsigned long n = strtoul(getenv("NUSKU_SYSCALL_THREADS"), NULL, 0);

		if (n >= 1 && n < st->skel->rodata->threads_max) {
			st->skel->rodata->threads_max = (uint32_t)n;
			bpf_map__set_max_entries(st->skel->maps.sc_tfree, (uint32_t)n);
		}
	}
	/* the threads' states, then each CPU's spare (bpf/syscall.bpf.c) */
	err = bpf_map__set_max_entries(st->skel->maps.sc_tstate,
				       st->skel->rodata->threads_max +
					       (uint32_t)st->ncpus);
	if (err)
		goto cleanup;
	err = bpf_map__reuse_fd(st->skel->maps.nsk_targets,
				nsk_session__targets_fd(s));
	if (err)
		goto cleanup;
	err = syscall_bpf__load(st->skel);
	if (err)
		goto cleanup;
	err = map_slots(st);
	if (err)
		goto cleanup;
	*state = st;
	return 0;
cleanup:
	sc_stop(st);
	return err;
}

static int sc_start(struct nsk_session *s, void **state)
{
	struct sc_state *st = *state;
	int err;

	*state = NULL;
	if (!st && (err = sc_load(s, (void **)&st)))
		return err;
	err = emit_names(st);
	if (err)
		goto cleanup;
	err = syscall_bpf__attach(st->skel);
	if (err)
		goto cleanup;
	/* Asked for by name, so said once: what it costs the machine. */
	if (!nsk_session__opts(s)->quiet)
		fprintf(stderr, "nusku: syscall: the kernel's syscall tracepoints "
			"are machine-wide: every process's calls are slower while "
			"this records (about 150 ns each, docs/syscall.md)\n");
	err = nsk_session__add_ringbuf(s, bpf_map__fd(st->skel->maps.sc_events),
				       on_event, st);
	if (err)
		goto cleanup;
	err = emit_arch(s);
	if (err)
		goto cleanup;
	st->active = 0;
	st->set_start[0] = nsk_session__now();
	*state = st;
	return 0;
cleanup:
	sc_stop(st);
	return err;
}

static int sc_poll(struct nsk_session *s, void *state, int final)
{
	struct sc_state *st = state;
	uint64_t now = nsk_session__now();
	uint32_t old = st->active, other = !st->active;
	int err = 0;

	if (!final && now - st->set_start[old] < FLUSH_NS)
		goto cleanup;
	/* The other set was left a window ago: nothing writes to it now. */
	if (st->set_end[other]) {
		err = drain_set(st, other, st->set_start[other],
				st->set_end[other]);
		if (err)
			goto cleanup;
		st->set_end[other] = 0;
	}
	st->skel->bss->active = other;
	st->active = other;
	st->set_start[other] = now;
	st->set_end[old] = now;
	free_slots(st);
	if (final) {
		/* A program that read `active` just before the flip finishes
		 * within microseconds; give it a millisecond. */
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		err = drain_set(st, old, st->set_start[old], now);
		if (err)
			goto cleanup;
		st->set_end[old] = 0;
		err = emit_self(st);
	}
cleanup:
	drain_lost(st);
	(void)s;
	return err;
}

const struct nsk_signal nsk_signal_syscall = {
	.name = "syscall",
	.load = sc_load,
	.start = sc_start,
	.poll = sc_poll,
	.on_process = NULL,
	.stop = sc_stop,
};
