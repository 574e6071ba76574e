/* The allocation signal, user half: loads bpf/alloc.bpf.c and turns its
 * ring buffer records into NSK_REC_ALLOC and NSK_REC_FREE.
 *
 * A launched program gets the sampler (preload/sampler.c, found and
 * vetted by record/alloc_sampler.c): its probe points are attached to the
 * library, and the program's environment preloads it.  Every process that
 * appears is checked; one that cannot load it (static, set-user-ID,
 * sanitized, its environment cleaned) gets uprobes on its allocator,
 * confined to it (record/alloc_attach.c), and is named once on stderr.
 * Attach mode always uses uprobes.
 *
 * Stacks come from a BPF stack map: the record carries the map id and the
 * stack is read and interned once per (process, id).  Ids are never reused
 * in the map (no BPF_F_REUSE_STACKID), so the cache stays true; a hash
 * collision shows up in the kernel as a lost stack, counted.
 *
 * That frame-pointer walk is wrong when the allocation is made inside code
 * without frame pointers (strdup, fopen, a -O2 program): the caller of that
 * code is skipped.  So unless --call-graph fp, the first allocations of each
 * (process, id) also carry a copy of the user stack, and the session decides
 * (record/stacks/ustack.c): a walk it trusts is cached per id and the kernel told to
 * stop copying for it (copy_needs = 0); otherwise every allocation of that id
 * is unwound with DWARF, and the kernel told how much copy that took.  The
 * same walk can stand for different true paths, so those are never cached.
 *
 * mmap/munmap come from tp_btf sys_exit filtered by syscall number
 * (no tracefs, no uprobes on libc wrappers, covers direct syscalls too); only
 * anonymous mappings made outside the allocator count.  A mapping made
 * PROT_NONE or MAP_NORESERVE is a reservation (no memory, written with fn
 * RESERVE); an mprotect that makes part of one writable commits those
 * bytes (an ALLOC with fn MPROTECT), one back to PROT_NONE ends them (a
 * FREE); other mprotect calls are dropped here (record/alloc_reserve.c
 * knows the reservations).  brk is followed per
 * process: a move of the break by the program itself (not by malloc) is an
 * allocation of the bytes it adds, or a release of the range it drops.
 */
#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloc.skel.h"
#include "nusku/events/alloc.h"
#include "nusku/events/ustack.h"
#include "nusku/format.h"
#include "nusku/events/sampler.h"
#include "record/alloc_attach.h"
#include "record/alloc_reserve.h"
#include "record/alloc_go.h"
#include "record/alloc_sampler.h"
#include "record/pidset.h"
#include "record/session.h"

struct stack_slot {
	uint64_t key;  /* 1 << 63 | pid << 32 | map id; 0 empty */
	uint64_t id;   /* session stack id of the frame-pointer walk, 0 none */
	uint32_t need; /* copy size last given to the kernel, or
			* NSK_USTACK_UNKNOWN */
	uint32_t n;    /* frames in ips */
	uint64_t told; /* when the kernel was told need (monotonic ns) */
	uint64_t *ips; /* the walk, kept while copies come (a map lookup is a
			* system call per record otherwise), or NULL */
};

struct brk_slot {
	uint32_t pid;
	uint64_t brk;
};

/* What exec_check found of a process, for alloc_on_process. */
struct exec_verdict {
	uint32_t pid; /* 0: an empty slot */
	uint64_t time; /* of the exec */
	int ok;	      /* nsk_alloc_sampler__process_ok's answer */
	char why[192];
};

/* Verdicts kept at once: a storm of execs the main thread has not come
 * round to yet writes over the oldest, which are then judged again. */
#define NSK_ALLOC_VERDICTS 64

struct alloc_state {
	struct nsk_session *s;
	struct alloc_bpf *skel;
	struct nsk_alloc_attach *attach;
	struct bpf_link *sys_exit; /* NULL until a process needs it */
	/* processes the sampler covers: it tells their mappings itself, so
	 * sys_exit's records of them are dropped */
	struct nsk_pidset covered;
	int stacks_fd;
	/* the walk the record being handled carried itself, if it did
	 * (stack_id NSK_ALLOC_STACK_INLINE) */
	const struct nsk_ev_alloc_ips *inline_ips;
	int needs_fd; /* copy_needs: bytes of stack to copy per (pid, id) */
	struct stack_slot *slots; /* open addressing, power of two */
	size_t nslots, used;
	struct brk_slot *brks;
	size_t nbrks;
	struct nsk_alloc_reserve reserved; /* reservations, per process */
	uint64_t lost_seen[NSK_ALLOC_LOST_MAX];
	char allocator[4096]; /* last one written as META */
	unsigned int refused; /* probe points refused, already counted */
	int err;	      /* first error in the ring-buffer callback */
	/* the preloaded sampler (launched programs) */
	int sampler;	      /* in use: processes that load it need no uprobes */
	char sampler_lib[4096];
	struct nsk_alloc_sampler_memo judged; /* the programs checked */
	/* Each exec is judged on the process watcher's thread (exec_check),
	 * as it is told of: the main thread is woken only for a process the
	 * sampler does not reach, and takes the verdicts of the others when
	 * it comes round (they may be gone by then). */
	int checking; /* exec_check registered with the session */
	pthread_mutex_t verdict_lock;
	struct exec_verdict verdicts[NSK_ALLOC_VERDICTS];
	unsigned int next_verdict;
	struct nsk_alloc_sampler_memo watch_judged; /* the watcher's memo */
	/* the sampler's probe points: one uprobe_multi link, or two links
	 * where the kernel has no uprobe_multi */
	struct bpf_link *sampler_links[2];
	int sampler_fd; /* ... or the uprobe_multi link's fd, -1 */
	int multi; /* uprobe_multi links */
	uint32_t root;	      /* the launched child */
	int root_execd;	      /* its first announcement (before exec) passed */
	int quiet;
	char said[8][256];    /* fallbacks told of, by executable */
	int nsaid;
	char go[4][256];      /* Go executables written as META alloc.go */
	struct nsk_alloc_go_memo go_memo; /* executables judged Go or not */
	int ngo;
};

static const char *const lost_names[NSK_ALLOC_LOST_MAX] = {
	"alloc.ringbuf", "alloc.stack", "alloc.sampled_live", "alloc.ustack",
	"alloc.free_batch",
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int cache_grow(struct alloc_state *st)
{
	size_t n = st->nslots ? 2 * st->nslots : 1024;
	struct stack_slot *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < st->nslots; i++) {
		size_t j;

		if (!st->slots[i].key)
			continue;
		for (j = mix(st->slots[i].key) & (n - 1); s[j].key; j = (j + 1) & (n - 1))
			;
		s[j] = st->slots[i];
	}
	free(st->slots);
	st->slots = s;
	st->nslots = n;
	return 0;
}

/* The walk of map stack id sid into ips (NSK_MAX_STACK_DEPTH, zeroed
 * past the end), from the map or from the record; -1 when there is none. */
static int stack_ips(struct alloc_state *st, int32_t sid, uint64_t *ips)
{
	uint32_t id32 = (uint32_t)sid, n = 0;

	memset(ips, 0, NSK_MAX_STACK_DEPTH * sizeof(*ips));
	if (sid == NSK_ALLOC_STACK_INLINE && st->inline_ips) {
		n = st->inline_ips->n;
		if (n > NSK_MAX_STACK_DEPTH)
			n = NSK_MAX_STACK_DEPTH;
		memcpy(ips, st->inline_ips->ips, n * sizeof(*ips));
		return (int)n;
	}
	if (sid < 0 || bpf_map_lookup_elem(st->stacks_fd, &id32, ips))
		return -1;
	while (n < NSK_MAX_STACK_DEPTH && ips[n])
		n++;
	return (int)n;
}

/* The stack of an mmap or brk: the map's stack with the wrapper's caller
 * put back after the leaf (see alloc_sys_exit).  Not cached: rare. */
static uint64_t syscall_stack_of(struct alloc_state *st, uint32_t pid,
				 uint64_t time, int32_t sid, uint64_t caller)
{
	uint64_t ips[NSK_MAX_STACK_DEPTH + 1];
	uint32_t n;
	int got = stack_ips(st, sid, ips + 1);

	if (got < 0)
		return 0;
	n = (uint32_t)got;
	ips[0] = ips[1];
	if (caller && n > 0 && caller != ips[2]) {
		ips[1] = caller;
		n++;
	} else {
		memmove(ips + 1, ips + 2, (n - (n > 0)) * sizeof(*ips));
	}
	return nsk_session__stack_at(st->s, pid, time, NULL, 0, ips, n,
				     NSK_STACK_UNWIND_FP |
				     (n >= NSK_MAX_STACK_DEPTH ? NSK_STACK_TRUNCATED : 0));
}

/* The slot of (pid, map id), found or made; NULL when out of memory. */
static struct stack_slot *slot_of(struct alloc_state *st, uint64_t key)
{
	size_t j;

	if (st->used * 2 >= st->nslots && cache_grow(st))
		return NULL;
	for (j = mix(key) & (st->nslots - 1); st->slots[j].key; j = (j + 1) & (st->nslots - 1))
		if (st->slots[j].key == key)
			return &st->slots[j];
	st->slots[j] = (struct stack_slot){ .key = key, .need = NSK_USTACK_UNKNOWN };
	st->used++;
	return &st->slots[j];
}

/* Tells the kernel how much stack to copy for this (pid, id) from now on:
 * never less than before (the same walk stands for several true paths).
 * A record with a larger copy than it was told, taken after it was told,
 * means the LRU map forgot: tell it again (records still in flight from
 * before cost nothing). */
static void learn_need(struct alloc_state *st, struct stack_slot *slot,
		       uint32_t pid, int32_t sid, uint32_t need, uint32_t got,
		       uint64_t time)
{
	uint64_t key = (uint64_t)pid << 32 | (uint32_t)sid;

	if (need == NSK_USTACK_UNKNOWN)
		return;
	if (slot->need != NSK_USTACK_UNKNOWN && slot->need > need)
		need = slot->need;
	if (need == slot->need && (got <= need || time < slot->told))
		return;
	if (!bpf_map_update_elem(st->needs_fd, &key, &need, BPF_ANY)) {
		slot->need = need;
		slot->told = nsk_session__now();
	}
}

/* The sampler's walk starts in the library: it is cut at the call site,
 * the return address the probe read at the interposed function's frame.  A
 * walk that never reaches it (a broken chain) keeps the call site alone. */
static void cut_at(uint64_t *ips, uint32_t *n, uint64_t site)
{
	for (uint32_t i = 0; i < *n; i++) {
		if (ips[i] == site) {
			memmove(ips, ips + i, (*n - i) * sizeof(*ips));
			*n -= i;
			return;
		}
	}
	ips[0] = site;
	*n = 1;
}

/* The session stack id of map stack id sid in process pid; 0 if none.
 * copy: the stack copy the record carried, NULL none.  site: where the
 * walk is cut (the sampler's records), 0 none. */
static uint64_t stack_of(struct alloc_state *st, uint32_t pid, uint64_t time,
			 int32_t sid, const struct nsk_ev_ustack *copy,
			 uint64_t site)
{
	uint64_t key = ((uint64_t)pid << 32) | (uint32_t)sid | (1ULL << 63);
	uint64_t ips[NSK_MAX_STACK_DEPTH], id;
	uint32_t n = 0, flags, need;
	struct stack_slot *slot;

	if (sid == NSK_ALLOC_STACK_INLINE) {
		/* not in the map: nothing to cache by its id */
		int got = stack_ips(st, sid, ips);

		if (got <= 0)
			return 0;
		n = (uint32_t)got;
		if (site)
			cut_at(ips, &n, site);
		return nsk_session__stack_at(st->s, pid, time, NULL, 0, ips, n,
					     NSK_STACK_UNWIND_FP |
					     (n == NSK_MAX_STACK_DEPTH ? NSK_STACK_TRUNCATED : 0));
	}
	if (sid < 0 || !(slot = slot_of(st, key)))
		return 0;
	if (slot->id && (!copy || slot->need == 0)) {
		/* a copy of a stack whose walk holds: still in flight from
		 * before the kernel was told, or the LRU map forgot */
		if (copy)
			learn_need(st, slot, pid, sid, 0, copy->len, time);
		return slot->id;
	}
	if (slot->ips) {
		n = slot->n;
		memcpy(ips, slot->ips, n * sizeof(*ips));
	} else {
		int got = stack_ips(st, sid, ips);

		if (got < 0)
			return 0;
		n = (uint32_t)got;
		if (site)
			cut_at(ips, &n, site);
	}
	flags = NSK_STACK_UNWIND_FP | (n == NSK_MAX_STACK_DEPTH ? NSK_STACK_TRUNCATED : 0);
	/* Interning may handle process events (an exec clears the slots,
	 * alloc_on_process): the slot is looked up again after it. */
	if (!copy) { /* not copied: trusted, or the copy could not be sent */
		id = nsk_session__stack_at(st->s, pid, time, NULL, 0, ips, n, flags);
		if (id && (slot = slot_of(st, key)))
			slot->id = id;
		return id;
	}
	id = nsk_session__stack_learned(st->s, pid, time, NULL, 0, ips, n, copy,
					copy + 1, flags, &need);
	if (!(slot = slot_of(st, key)))
		return id;
	if (need == 0)
		slot->id = id; /* the walk holds: the same for every record */
	else if (!slot->ips && (slot->ips = malloc(n * sizeof(*ips) + 1)))
		memcpy(slot->ips, ips, (slot->n = n) * sizeof(*ips));
	learn_need(st, slot, pid, sid, need, copy->len, time);
	return id;
}

/* Forgets every stack: an exec may reuse stack map ids for other code. */
static void slots_clear(struct alloc_state *st)
{
	for (size_t i = 0; i < st->nslots; i++)
		free(st->slots[i].ips);
	if (st->slots) /* none yet when the first process appears */
		memset(st->slots, 0, st->nslots * sizeof(*st->slots));
	st->used = 0;
}

static struct brk_slot *brk_of(struct alloc_state *st, uint32_t pid)
{
	struct brk_slot *b;

	for (size_t i = 0; i < st->nbrks; i++)
		if (st->brks[i].pid == pid)
			return &st->brks[i];
	b = realloc(st->brks, (st->nbrks + 1) * sizeof(*b));
	if (!b)
		return NULL;
	st->brks = b;
	b = &b[st->nbrks++];
	b->pid = pid;
	b->brk = 0;
	return b;
}

static int emit_free(struct alloc_state *st, uint64_t time, uint32_t pid,
		     uint32_t tid, uint64_t addr, uint64_t size, uint32_t fn)
{
	struct nsk_record r = { .type = NSK_REC_FREE };

	r.free.time = time;
	r.free.pid = pid;
	r.free.tid = tid;
	r.free.addr = addr;
	r.free.size = size;
	r.free.fn = fn;
	return nsk_session__emit(st->s, &r);
}

static int from_allocator(struct alloc_state *st, const struct nsk_ev_alloc *e);

#define BRK_MAX_MOVE (64ULL << 30)

/* The program moved its break: growth is an allocation of the new bytes,
 * shrinking releases the top range.  Moves by malloc only update the break. */
static int on_brk(struct alloc_state *st, const struct nsk_ev_alloc *e,
		  struct nsk_record *r)
{
	struct brk_slot *b = brk_of(st, e->pid);
	uint64_t old;

	if (!b || (int64_t)e->addr <= 0)
		return 0;
	old = b->brk;
	b->brk = e->addr;
	if (!e->weight || !old || e->addr == old || from_allocator(st, e))
		return 0;
	/* A move by more than any heap: the break of a program before an
	 * exec whose event came after the new one's first brk (ASLR puts the
	 * heaps far apart). */
	if ((e->addr > old ? e->addr - old : old - e->addr) > BRK_MAX_MOVE)
		return 0;
	if (e->addr < old)
		return emit_free(st, e->time, e->pid, e->tid, e->addr,
				 old - e->addr, NSK_ALLOC_BRK);
	r->alloc.addr = old;
	r->alloc.size = r->alloc.weight = e->addr - old;
	r->alloc.stack_id = syscall_stack_of(st, e->pid, e->time, e->stack_id,
					     e->old_addr);
	return nsk_session__emit(st->s, r);
}

/* Whether the object at path is an allocator: libc and the loader (whose
 * syscall wrappers every program calls too), or a library that is one,
 * the sampler's own among them.  The sanitizer runtimes are allocators: a
 * program built with -fsanitize=address gets its blocks from libasan,
 * which maps its regions itself. */
static int is_allocator(const char *path, int wrappers_too)
{
	static const char *const wrappers[] = { "libc.so", "libc-", "ld-linux" };
	static const char *const allocators[] = {
		"libjemalloc", "libtcmalloc", "libmimalloc", "libasan.so", "liblsan.so",
		"libtsan.so", "libhwasan.so", NSK_SAMPLER_LIB,
	};
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; wrappers_too && i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (!strncmp(base, wrappers[i], strlen(wrappers[i])))
			return 1;
	for (size_t i = 0; i < sizeof(allocators) / sizeof(allocators[0]); i++)
		if (!strncmp(base, allocators[i], strlen(allocators[i])))
			return 1;
	return 0;
}

/* Under the sampler no uprobe tells when a thread is inside the
 * allocator, so an mmap or brk is the allocator's own (already counted in
 * the block it serves) when its caller, the return address at the user
 * stack pointer, is in an allocator, libc included; or when the syscall
 * itself is made from an allocator other than libc (libasan makes its own:
 * the word at its stack pointer is then no return address at all). */
static int from_allocator(struct alloc_state *st, const struct nsk_ev_alloc *e)
{
	uint64_t ips[NSK_MAX_STACK_DEPTH];
	const char *path;

	if (!st->sampler)
		return 0;
	/* told by the sampler: old_addr is the call site of the exported
	 * function, and the walk starts in the sampler itself */
	if (e->hdr.type == NSK_EV_ALLOC_SAMPLED)
		return e->old_addr &&
		       is_allocator(nsk_session__module_of(st->s, e->pid, e->time, e->old_addr), 1);
	if (e->old_addr) {
		path = nsk_session__module_of(st->s, e->pid, e->time, e->old_addr);
		/* a break moved from code we cannot place: the loader's, as
		 * a program starts (its maps not read yet), far more often
		 * than the program's */
		if (!*path && e->fn == NSK_ALLOC_BRK)
			return 1;
		if (is_allocator(path, 1))
			return 1;
	}
	if (stack_ips(st, e->stack_id, ips) <= 0)
		return 0;
	return is_allocator(nsk_session__module_of(st->s, e->pid, e->time, ips[0]), 0);
}

/* A mapping kind: what sys_exit sees, or the sampler tells of. */
static int is_mapping(uint32_t fn)
{
	return fn == NSK_ALLOC_MMAP || fn == NSK_ALLOC_RESERVE || fn == NSK_ALLOC_MPROTECT ||
	       fn == NSK_ALLOC_BRK || fn == NSK_ALLOC_MUNMAP;
}

static int on_alloc(struct alloc_state *st, const struct nsk_ev_alloc *e,
		    const struct nsk_ev_ustack *copy)
{
	struct nsk_record r = { .type = NSK_REC_ALLOC };
	int err;

	r.alloc.time = e->time;
	r.alloc.pid = e->pid;
	r.alloc.tid = e->tid;
	r.alloc.fn = e->fn;
	if (e->hdr.type == NSK_EV_ALLOC && is_mapping(e->fn) &&
	    nsk_pidset__has(&st->covered, e->pid))
		return 0; /* the sampler tells this process's mappings */
	if (e->fn == NSK_ALLOC_BRK && e->hdr.type == NSK_EV_ALLOC)
		return on_brk(st, e, &r);
	if (is_mapping(e->fn)) {
		if (from_allocator(st, e))
			return 0;
		if (e->fn == NSK_ALLOC_MPROTECT &&
		    !nsk_alloc_reserve__covers(&st->reserved, e->pid, e->addr, e->size))
			return 0; /* not a commit: writable already, or not ours */
		if (e->fn == NSK_ALLOC_RESERVE)
			err = nsk_alloc_reserve__add(&st->reserved, e->pid, e->addr,
						     e->size);
		else if (e->fn == NSK_ALLOC_MMAP && e->addr)
			err = nsk_alloc_reserve__remove(&st->reserved, e->pid,
							e->addr, e->size);
		else
			err = 0;
		if (err)
			return err;
		r.alloc.addr = e->addr;
		r.alloc.size = e->size;
		r.alloc.weight = e->weight;
		r.alloc.stack_id = e->hdr.type == NSK_EV_ALLOC_SAMPLED ?
			stack_of(st, e->pid, e->time, e->stack_id, copy, e->old_addr) :
			syscall_stack_of(st, e->pid, e->time, e->stack_id, e->old_addr);
		return nsk_session__emit(st->s, &r);
	}
	if (e->hdr.type == NSK_EV_ALLOC_SAMPLED) {
		/* old_addr is the call site; the sampler sent any free
		 * of a realloc's old block on its own */
		r.alloc.stack_id = stack_of(st, e->pid, e->time, e->stack_id, copy,
					    e->old_addr);
	} else {
		if (e->old_addr) {
			err = emit_free(st, e->time, e->pid, e->tid, e->old_addr, 0,
					NSK_ALLOC_REALLOC);
			if (err)
				return err;
		}
		r.alloc.stack_id = stack_of(st, e->pid, e->time, e->stack_id, copy, 0);
	}
	r.alloc.addr = e->addr;
	r.alloc.size = e->size;
	r.alloc.weight = e->weight;
	return nsk_session__emit(st->s, &r);
}

/* The stack copy an allocation record of len bytes carries (the record
 * says it is longer than an allocation and the copy fits), or NULL: none,
 * or the walk follows instead (NSK_ALLOC_STACK_INLINE). */
static const struct nsk_ev_ustack *copy_of(const struct nsk_ev_alloc *a, size_t len)
{
	const size_t fixed = sizeof(*a) + sizeof(struct nsk_ev_ustack);
	const struct nsk_ev_ustack *copy = (const void *)(a + 1);

	if (a->stack_id == NSK_ALLOC_STACK_INLINE || a->hdr.size < fixed ||
	    len < fixed || !copy->len || fixed + copy->len > len)
		return NULL;
	return copy;
}

static int is_alloc(const struct nsk_ev_header *h, size_t len)
{
	return len >= sizeof(struct nsk_ev_alloc) &&
	       (h->type == NSK_EV_ALLOC || h->type == NSK_EV_ALLOC_SAMPLED);
}

/* An allocation whose stack the kernel has copied NSK_USTACK_ASK_AFTER
 * times without an answer asks for it (how much copy that stack needs:
 * none when its frame-pointer walk holds), which stops the copies of the
 * allocations after it at that stack (nsk_session__add_ringbuf_asking).
 * Held back until a short program ended, every sample of alloc_churn
 * copied its stack: ~340 ns of the probe's ~1.25 us.  Asked by every first
 * copy, a make -j2 had its records handled beside it, from its first
 * compiler's first sample on: ~20 ms of the recorder's CPU in a 230 ms
 * build of two CPUs, where its stacks are copied once or twice each. */
static int asks(const void *data, size_t len)
{
	const struct nsk_ev_ustack *copy;

	if (len < sizeof(struct nsk_ev_header) || !is_alloc(data, len))
		return 0;
	copy = copy_of(data, len);
	return copy && (copy->flags & NSK_USTACK_F_ASKS);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct alloc_state *st = ctx;
	const struct nsk_ev_header *h = data;
	int err = 0;

	if (len < sizeof(*h))
		return 0;
	if (is_alloc(h, len)) {
		/* the forks and execs before it first: an exec makes the
		 * cached stacks of its process (by map id) stale */
		nsk_session__sync_procs(st->s);
		const struct nsk_ev_alloc *a = data;

		st->inline_ips = NULL;
		/* the walk follows, not a copy */
		if (a->stack_id == NSK_ALLOC_STACK_INLINE &&
		    len >= sizeof(*a) + sizeof(struct nsk_ev_alloc_ips))
			st->inline_ips = (const void *)(a + 1);
		err = on_alloc(st, data, copy_of(a, len));
	} else if (h->type == NSK_EV_FREE && len >= sizeof(struct nsk_ev_free)) {
		const struct nsk_ev_free *f = data;

		/* once sys_exit runs (for another process), a covered
		 * process's unmappings come from both: the sampler's count */
		if (!f->sampler && is_mapping(f->fn) &&
		    nsk_pidset__has(&st->covered, f->pid))
			return 0;
		if (f->fn == NSK_ALLOC_MUNMAP)
			err = nsk_alloc_reserve__remove(&st->reserved, f->pid,
							f->addr, f->size);
		/* PROT_NONE again: the end of a commit, else nothing */
		if (!err && (f->fn != NSK_ALLOC_MPROTECT ||
			     nsk_alloc_reserve__meets(&st->reserved, f->pid,
						      f->addr, f->size)))
			err = emit_free(st, f->time, f->pid, f->tid, f->addr,
					f->size, f->fn);
	}
	if (err && !st->err)
		st->err = err;
	return 0; /* keep draining: an error is reported by poll */
}

/* Exponential intervals with mean bytes (inverse transform), so sample
 * points form a Poisson process over allocated bytes. */
static int fill_intervals(struct alloc_state *st, uint64_t bytes)
{
	int fd = bpf_map__fd(st->skel->maps.intervals);
	unsigned short seed[3];
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed[0] = (unsigned short)ts.tv_nsec;
	seed[1] = (unsigned short)(ts.tv_nsec >> 16);
	seed[2] = (unsigned short)getpid();
	for (uint32_t i = 0; i < NSK_ALLOC_INTERVALS; i++) {
		double u = 1.0 - erand48(seed); /* (0, 1] */
		double v = -log(u) * (double)bytes;
		uint64_t iv = v < 1.0 ? 1 : v > 1e18 ? (uint64_t)1e18 : (uint64_t)v;

		if (bpf_map_update_elem(fd, &i, &iv, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* Says which file holds the allocator, once per new one: the report skips
 * its frames to find the call site. */
static int note_allocator(struct alloc_state *st)
{
	const char *path = nsk_alloc_attach__allocator(st->attach);
	const char *root;

	/* /proc/PID/root/lib/... -> /lib/... */
	if (!strncmp(path, "/proc/", 6) && (root = strstr(path, "/root/")))
		path = root + 5;
	unsigned int refused = nsk_alloc_attach__refused(st->attach);

	if (refused > st->refused) {
		/* Calls to those functions go unseen: a loss, shown. */
		nsk_session__lost(st->s, "alloc.probe_refused", refused - st->refused);
		st->refused = refused;
	}
	if (!*path || !strcmp(path, st->allocator))
		return 0;
	snprintf(st->allocator, sizeof(st->allocator), "%s", path);
	/* Every allocation's stack starts in it: loading its debug info
	 * (libc6-dbg: tens of ms) on the first record would let the ring
	 * buffer fill meanwhile.  A failure only leaves that for later. */
	nsk_session__warm_module(st->s, nsk_alloc_attach__allocator(st->attach));
	return nsk_session__meta(st->s, "alloc.allocator", path);
}

/* argv[0] as execvp would find it. */
static int resolve_program(const char *arg, char *out, size_t outlen)
{
	const char *p = getenv("PATH");

	if (strchr(arg, '/')) {
		snprintf(out, outlen, "%s", arg);
		return 0;
	}
	while (p && *p) {
		size_t l = strcspn(p, ":");

		snprintf(out, outlen, "%.*s/%s", (int)l, p, arg);
		if (!access(out, X_OK))
			return 0;
		p += l + (p[l] == ':');
	}
	return -ENOENT;
}

/* Tells once per executable that it falls back to uprobes: a program
 * about to be launched (pid 0), or process pid (exe NULL: its own). */
static void say_fallback(struct alloc_state *st, const char *exe, uint32_t pid,
			 const char *why)
{
	char buf[256], link[64];
	ssize_t n;

	if (!exe) {
		snprintf(link, sizeof(link), "/proc/%u/exe", pid);
		n = readlink(link, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		/* a path the process chose goes to a terminal: no control
		 * bytes (the report's escaping is not this room's) */
		for (char *c = buf; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		exe = *buf ? buf : "a process";
	}
	for (int i = 0; i < st->nsaid; i++)
		if (!strcmp(st->said[i], exe))
			return;
	if (st->nsaid < (int)(sizeof(st->said) / sizeof(st->said[0])))
		snprintf(st->said[st->nsaid++], sizeof(st->said[0]), "%s", exe);
	if (st->quiet)
		return;
	if (pid)
		fprintf(stderr, "nusku: alloc: %s (pid %u) cannot use the sampler (%s): "
			"uprobes on its allocator, a trap per call\n", exe, pid, why);
	else
		fprintf(stderr, "nusku: alloc: %s cannot use the sampler (%s): "
			"uprobes on its allocator, a trap per call\n", exe, why);
}

/* The library's probe points (nusku/events/sampler.h): a fast one and a
 * trap twin, for forked processes; one program behind both. */
static const char *const probe_syms[2] = {
	NSK_SAMPLER_PROBE_SYM, NSK_SAMPLER_PROBE_TRAP_SYM,
};
static const uint64_t probe_cookies[2] = {
	NSK_ALLOC_COOKIE_SAMPLER, NSK_ALLOC_COOKIE_SAMPLER,
};

/* Launched programs get the sampler when it is there and the program can
 * load it: its probe points are attached to the library (only processes
 * that load it can meet them) and the program's environment preloads it.
 * 1 when it is used, 0 when the program needs uprobes (said why). */
static int sampler_start(struct alloc_state *st, const char *program,
			 uint64_t sample_bytes)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	char why[256], rate[32], *preload;
	const char *old = getenv("LD_PRELOAD");
	int ok, err;

	err = nsk_alloc_sampler__find(st->sampler_lib, sizeof(st->sampler_lib), why,
				      sizeof(why));
	ok = err ? 0 : nsk_alloc_sampler__program_ok(program, &st->judged, why, sizeof(why));
	if (ok <= 0) {
		say_fallback(st, program, 0, *why ? why : strerror(ok ? -ok : -err));
		return 0;
	}
	if (st->multi) {
		/* one link: taking it away costs one grace period, not two */
		st->sampler_fd = nsk_alloc_attach__multi_syms(st->skel->progs.sampler_probe,
							      st->sampler_lib, probe_syms,
							      probe_cookies, 2);
		if (st->sampler_fd < 0)
			return st->sampler_fd;
	} else {
		for (int i = 0; i < 2; i++) {
			uo.func_name = probe_syms[i];
			uo.bpf_cookie = probe_cookies[i];
			st->sampler_links[i] = bpf_program__attach_uprobe_opts(
				st->skel->progs.sampler_probe, -1, st->sampler_lib, 0, &uo);
			if (!st->sampler_links[i])
				return -errno;
		}
	}
	/* first, so that RTLD_NEXT finds a preloaded allocator after it */
	if (asprintf(&preload, "%s%s%s", st->sampler_lib, old && *old ? ":" : "",
		     old ? old : "") < 0)
		return -ENOMEM;
	err = nsk_session__launch_env(st->s, "LD_PRELOAD", preload);
	free(preload);
	snprintf(rate, sizeof(rate), "%llu",
		 (unsigned long long)(sample_bytes ? sample_bytes : 1));
	if (!err)
		err = nsk_session__launch_env(st->s, NSK_SAMPLER_ENV_RATE, rate);
	return err ? err : 1;
}

static void alloc_stop(void *state)
{
	struct alloc_state *st = state;

	if (!st)
		return;
	if (st->checking) /* waits for a check running */
		nsk_session__check_execs(st->s, NULL, NULL, NULL);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(st->sampler_links[i]);
	if (st->sampler_fd >= 0)
		close(st->sampler_fd);
	nsk_alloc_attach__free(st->attach);
	bpf_link__destroy(st->sys_exit);
	nsk_pidset__free(&st->covered);
	alloc_bpf__destroy(st->skel);
	slots_clear(st);
	free(st->slots);
	free(st->brks);
	nsk_alloc_reserve__release(&st->reserved);
	nsk_alloc_sampler__forget(&st->judged);
	nsk_alloc_sampler__forget(&st->watch_judged);
	pthread_mutex_destroy(&st->verdict_lock);
	free(st);
}

/* On the process watcher's thread: the exec of pid judged now, while the
 * process lives; > 0 when the sampler does not reach it (the main thread
 * then gives it uprobes at once). */
static int exec_check(void *ctx, uint32_t pid, uint64_t time, uint32_t exec_flags)
{
	struct alloc_state *st = ctx;
	struct exec_verdict v = { .pid = pid, .time = time };
	struct stat exe;

	v.ok = nsk_alloc_sampler__process_ok(pid, st->sampler_lib, 1, exec_flags,
					     &st->watch_judged, v.why, sizeof(v.why), &exe);
	if (v.ok == -ENOENT || v.ok == -ESRCH)
		return 0; /* gone already: nothing to probe */
	/* its next execs need no look of ours at all (the kernel side
	 * checks the rest: environment, root, secure mode) */
	if (v.ok == 1 && exe.st_ino)
		nsk_session__exec_passes(st->s, &exe);
	pthread_mutex_lock(&st->verdict_lock);
	st->verdicts[st->next_verdict++ % NSK_ALLOC_VERDICTS] = v;
	pthread_mutex_unlock(&st->verdict_lock);
	return v.ok <= 0;
}

/* The verdict on pid's exec at time, taken: 1, or 0 when there is none
 * (the main thread came round first: a check after it left one nobody
 * takes, which the next ones write over). */
static int verdict_take(struct alloc_state *st, uint32_t pid, uint64_t time,
			int *ok, char *why, size_t whylen)
{
	int found = 0;

	pthread_mutex_lock(&st->verdict_lock);
	for (unsigned int i = 0; i < NSK_ALLOC_VERDICTS && !found; i++) {
		struct exec_verdict *v =
			&st->verdicts[(st->next_verdict + i) % NSK_ALLOC_VERDICTS];

		if (v->pid != pid || v->time != time)
			continue;
		*ok = v->ok;
		snprintf(why, whylen, "%s", v->why);
		v->pid = 0;
		found = 1;
	}
	pthread_mutex_unlock(&st->verdict_lock);
	return found;
}

/* A Go program's heap is invisible to the probes (Go does not call
 * malloc): META alloc.go names its executable, once each, so the report
 * can say so. */
static int note_go(struct alloc_state *st, uint32_t pid, const char *file)
{
	char path[256];

	if (file) {
		if (nsk_alloc_go__file(file) <= 0)
			return 0;
		snprintf(path, sizeof(path), "%s", file);
	} else if (nsk_alloc_go__process(pid, &st->go_memo, path, sizeof(path)) <= 0) {
		return 0; /* not Go, or gone */
	}
	for (int i = 0; i < st->ngo; i++)
		if (!strcmp(st->go[i], path))
			return 0;
	if (st->ngo == (int)(sizeof(st->go) / sizeof(st->go[0])))
		return 0;
	snprintf(st->go[st->ngo++], sizeof(st->go[0]), "%s", path);
	return nsk_session__meta(st->s, "alloc.go", path);
}

/* The kernel-side mmap, munmap, brk and mprotect probe, attached the
 * first time a process needs it: it runs for every syscall of the machine
 * (bpf/alloc.bpf.c), which a process the sampler covers does not need. */
static int sys_exit_on(struct alloc_state *st)
{
	if (st->sys_exit)
		return 0;
	/* and the processes it follows are probed as they start */
	nsk_session__prompt_procs(st->s);
	st->sys_exit = bpf_program__attach(st->skel->progs.alloc_sys_exit);
	return st->sys_exit ? 0 : -errno;
}

static int alloc_start(struct nsk_session *s, void **state)
{
	const struct nsk_record_opts *o = nsk_session__opts(s);
	struct nsk_alloc_progs progs;
	struct alloc_state *st;
	char path[4096], buf[32];
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->s = s;
	pthread_mutex_init(&st->verdict_lock, NULL);
	st->sampler_fd = -1;
	st->quiet = o->quiet;
	st->skel = alloc_bpf__open();
	if (!st->skel) {
		err = -errno;
		goto cleanup;
	}
	st->skel->rodata->sample_bytes = o->alloc_sample_bytes;
	/* sampled (every 512 KiB by default), allocations are a few per
	 * millisecond even at GB/s; every allocation needs room for bursts
	 * of a million a second */
	bpf_map__set_max_entries(st->skel->maps.alloc_events,
				 o->alloc_sample_bytes >= (64u << 10) ? 2u << 20 : 16u << 20);
	if (o->alloc_sample_bytes < (64u << 10))
		nsk_session__keep_pace(s); /* copy_needs answers at once */
	st->skel->rodata->ring_bytes = bpf_map__max_entries(st->skel->maps.alloc_events);
	st->skel->rodata->wake_bytes = bpf_map__max_entries(st->skel->maps.alloc_events) / 4;
	st->skel->rodata->ustack_bytes = nsk_session__ustack_bytes(s);
	st->skel->rodata->nsk_all_but = nsk_session__all_but(s);
	err = bpf_map__reuse_fd(st->skel->maps.nsk_targets, nsk_session__targets_fd(s));
	if (err)
		goto cleanup;
	progs.enter = st->skel->progs.alloc_enter;
	progs.exit = st->skel->progs.alloc_exit;
	progs.free = st->skel->progs.free_enter;
	progs.multi = nsk_alloc_attach__multi_supported();
	if (progs.multi) {
		bpf_program__set_expected_attach_type(progs.enter, NSK_ALLOC_ATTACH_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(progs.exit, NSK_ALLOC_ATTACH_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(progs.free, NSK_ALLOC_ATTACH_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(st->skel->progs.sampler_probe,
						      NSK_ALLOC_ATTACH_UPROBE_MULTI);
	}
	st->multi = progs.multi;
	err = alloc_bpf__load(st->skel);
	if (err)
		goto cleanup;
	st->stacks_fd = bpf_map__fd(st->skel->maps.alloc_stacks);
	st->needs_fd = bpf_map__fd(st->skel->maps.copy_needs);
	if (o->alloc_sample_bytes) {
		err = fill_intervals(st, o->alloc_sample_bytes);
		if (err)
			goto cleanup;
	}
	err = nsk_alloc_attach__new(&progs, &st->attach);
	if (err)
		goto cleanup;
	err = nsk_session__add_ringbuf_asking(s, bpf_map__fd(st->skel->maps.alloc_events),
					      on_event, st, asks);
	if (err)
		goto cleanup;
	/* A launched program uses the sampler when it can; otherwise it is
	 * probed before it execs, from its ELF file (or its #! interpreter's),
	 * so its first allocation is seen; on_process adds what it maps. */
	st->root = (uint32_t)nsk_session__target_pid(s);
	if (o->pid > 0) {
		if (!o->quiet)
			fprintf(stderr, "nusku: alloc: attached to a running process, the "
				"allocator is probed with uprobes: about 2 us per malloc and "
				"free, sampled or not\n");
		err = nsk_alloc_attach__process(st->attach, (uint32_t)o->pid);
	} else if (o->argv && o->argv[0] && !resolve_program(o->argv[0], path, sizeof(path))) {
		char elf[4096];

		/* looked at now: it may be gone before we hear of it */
		err = note_go(st, 0, path);
		if (!err)
			err = o->alloc_uprobes ? 0 :
			      sampler_start(st, path, o->alloc_sample_bytes);
		if (err > 0) {
			st->sampler = 1;
			st->checking = 1;
			nsk_session__check_execs(s, exec_check, st, st->sampler_lib);
			err = 0;
		} else if (!err && !nsk_alloc_sampler__resolve(path, elf, sizeof(elf))) {
			err = nsk_alloc_attach__program(st->attach, elf, st->root);
		}
	}
	/* under the sampler, only once a process it cannot reach comes */
	if (err >= 0 && !st->sampler) {
		int e = sys_exit_on(st);

		err = e ? e : err;
	}
	if (err < 0)
		goto cleanup;
	err = nsk_session__meta(st->s, "alloc.mode", st->sampler ? "sampler" : "uprobes");
	if (err)
		goto cleanup;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->alloc_sample_bytes);
	err = nsk_session__meta(st->s, "alloc.sample_bytes", buf);
	if (!err)
		err = note_allocator(st);
	if (err)
		goto cleanup;
	*state = st;
	return 0;
cleanup:
	alloc_stop(st);
	return err;
}

static int alloc_on_process(struct nsk_session *s, void *state, uint32_t pid,
			    uint32_t how, uint64_t time)
{
	struct alloc_state *st = state;
	char why[256], exe[64];
	int err;

	/* An exec may reuse stack map ids for other code: forget them all,
	 * and what the kernel was told to copy for this process. */
	for (size_t i = 0; i < st->nslots; i++) {
		const struct stack_slot *sl = &st->slots[i];
		uint64_t key = sl->key & ~(1ULL << 63);

		if (sl->key && key >> 32 == pid && sl->need != NSK_USTACK_UNKNOWN)
			bpf_map_delete_elem(st->needs_fd, &key);
	}
	slots_clear(st);
	for (size_t i = 0; i < st->nbrks; i++)
		if (st->brks[i].pid == pid)
			st->brks[i].brk = 0;
	nsk_alloc_reserve__forget(&st->reserved, pid);
	if (pid == st->root && !st->root_execd && !nsk_session__opts(s)->pid) {
		/* announced before its exec: still a copy of the recorder */
		st->root_execd = 1;
		return 0;
	}
	err = note_go(st, pid, NULL);
	if (err)
		return err;
	if (st->sampler) {
		int ok;

		/* A fork is a copy of its parent, sampler and all; judged by its
		 * own maps and environment it might not look so: it may be in an
		 * exec already, between the new image and its environment (an
		 * empty environ), and that exec is judged when it is told of. */
		if (how == NSK_PROC_FORKED &&
		    nsk_pidset__has(&st->covered, nsk_session__parent(s, pid)))
			return nsk_pidset__add(&st->covered, pid);
		if (how != NSK_PROC_EXECED ||
		    !verdict_take(st, pid, time, &ok, why, sizeof(why))) {
			/* what the exec's event said, as the watcher's check
			 * would have had it */
			uint32_t flags = 0;
			int told = how == NSK_PROC_EXECED &&
				   nsk_session__exec_flags(s, pid, &flags);

			ok = nsk_alloc_sampler__process_ok(pid, st->sampler_lib, told, flags,
							   &st->judged, why, sizeof(why), NULL);
		}

		if (ok == -ENOENT || ok == -ESRCH)
			return 0; /* already gone */
		if (ok > 0)
			return nsk_pidset__add(&st->covered, pid); /* the sampler covers it */
		nsk_pidset__remove(&st->covered, pid);
		if (ok < 0)
			snprintf(why, sizeof(why), "%s", strerror(-ok));
		err = sys_exit_on(st);
		if (err)
			return err;
	}
	if (how == NSK_PROC_FORKED) {
		/* A fork runs its parent's program: without the sampler its
		 * parent had uprobes, now its own copy of them.  It may also be
		 * in an exec of its own already, whose maps and environment are
		 * not readable yet: that exec is told of when it is done, and
		 * judged then (no message now). */
		err = nsk_alloc_attach__process(st->attach, pid);
		return err == -ENOENT || err == -ESRCH ? 0 : err < 0 ? err : 0;
	}
	/* Told of at its exec, before the dynamic loader has mapped any
	 * library: the ones the executable needs are probed now, by file,
	 * so its first allocation is seen; then what it maps already. */
	snprintf(exe, sizeof(exe), "/proc/%u/exe", pid);
	err = nsk_alloc_attach__program(st->attach, exe, pid);
	if (err == -ENOENT || err == -ESRCH)
		return 0; /* already gone */
	err = nsk_alloc_attach__process(st->attach, pid);
	if (err == -ENOENT || err == -ESRCH)
		return 0; /* already gone */
	if (err < 0)
		return err;
	/* said once the probes are in: a test (and a user) may take the
	 * line as the sign that allocations from here on are seen */
	if (st->sampler)
		say_fallback(st, NULL, pid, why);
	return note_allocator(st);
}

static int alloc_poll(struct nsk_session *s, void *state, int final)
{
	struct alloc_state *st = state;
	int err = st->err, e;

	st->err = 0;
	e = nsk_session__drain_lost(s, bpf_map__fd(st->skel->maps.lost),
				    lost_names, NSK_ALLOC_LOST_MAX, st->lost_seen);
	if (!err)
		err = e;
	return err;
}

const struct nsk_signal nsk_signal_alloc = {
	.name = "alloc",
	.start = alloc_start,
	.poll = alloc_poll,
	.on_process = alloc_on_process,
	.stop = alloc_stop,
};
