// SPDX-License-Identifier: GPL-2.0
/* The allocation signal, kernel half.
 *
 * Two ways in.  Launched programs load the sampler (preload/sampler.c),
 * which samples in the process and calls its probe points only for what it
 * sampled: sampler_probe below, attached to the library.
 * Elsewhere (attach mode, and processes the sampler cannot reach) uprobes
 * on the allocator family, attached by record/alloc_attach.c to the object
 * that defines malloc in each target process, confined to it by the
 * kernel's pid filter.  Both are also filtered here by the shared target
 * map.  tp_btf sys_exit gives anonymous mmap, munmap, brk and mprotect.
 *
 * Per thread (task storage, freed with the task) we keep the arguments of the
 * outermost allocator call in progress and a nesting depth: calloc or realloc
 * built on malloc, operator new calling malloc, malloc calling mmap or brk,
 * are recorded once, as the outermost call.  The user stack is taken at the
 * uretprobe: there the frame pointer and the instruction pointer are the
 * caller's, so the leaf frame is the call site itself (at the uprobe, a frame
 * pointer walk misses the direct caller).  Frees take no stack.  Unless
 * --call-graph fp, an allocation also carries a copy of the user stack for
 * DWARF unwinding, as much as user space asked for its stack map id in
 * copy_needs (nothing where it trusts the frame-pointer walk).
 *
 * Sampling (sample_bytes > 0): byte-interval sampling as in heapprofd: a
 * Poisson process over allocated bytes, intervals drawn from an exponential
 * distribution (precomputed by user space: BPF has no floating point); an
 * allocation that contains n sample points is recorded with weight n *
 * sample_bytes (its size when it is larger than the interval), so totals stay
 * unbiased.  Sampled blocks are remembered in a hash, so a free of an
 * unsampled block is discarded after one lookup.
 *
 * Records go to the ring buffer without a wakeup; the consumer is woken only
 * when the buffer is past a fill threshold, and otherwise polls on a timer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "target.bpf.h"
#include "ustack.bpf.h"
#include "nusku/events/alloc.h"
#include "nusku/events/sampler.h"
#include "nusku/names.h"

char LICENSE[] SEC("license") = "GPL";


#if defined(__TARGET_ARCH_x86)
#define NR_MMAP 9
#define NR_MPROTECT 10
#define NR_MUNMAP 11
#define NR_BRK 12
#elif defined(__TARGET_ARCH_arm64)
#define NR_MMAP 222
#define NR_MPROTECT 226
#define NR_MUNMAP 215
#define NR_BRK 214
#endif
#define MAP_ANONYMOUS_ 0x20
#define MAP_NORESERVE_ 0x4000
#define PROT_WRITE_ 0x2
#define EEXIST_ 17 /* bpf_get_stackid: the stack's bucket holds another */

#define RING_BYTES (16 << 20) /* the largest; user space may set less */

const volatile __u64 sample_bytes = 0;	/* 0: record every allocation */
const volatile __u64 wake_bytes = 1 << 20; /* wake the consumer past this */
const volatile __u64 ring_bytes = RING_BYTES; /* alloc_events' size */
/* bytes of user stack to copy for DWARF unwinding; 0: frame pointers only */
const volatile __u32 ustack_bytes = 0;

struct tstate {
	__u64 size;	 /* requested bytes of the outermost call */
	__u64 arg;	 /* realloc: old block; posix_memalign: out-pointer */
	__s64 until_sample; /* bytes to the next sample point */
	__u32 fn;
	__u32 depth;	 /* allocator calls in progress on this thread */
	__u32 sampler_init; /* until_sample has been drawn */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} tstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} alloc_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, NSK_ALLOC_STACK_ENTRIES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, NSK_MAX_STACK_DEPTH * sizeof(__u64));
} alloc_stacks SEC(".maps");

/* Bytes of stack to copy per (tgid << 32 | stack map id), as user space
 * learned them (see nusku/events/alloc.h); absent: ustack_bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NSK_ALLOC_COPY_NEEDS);
	__type(key, __u64);
	__type(value, __u32);
} copy_needs SEC(".maps");

/* An allocation with its stack copy is built here, then sent with only the
 * bytes it holds.  A uprobe program can be preempted (it only keeps its
 * CPU), so another task may find the slot busy: it then sends no copy. */
struct alloc_copy {
	__u32 busy;
	__u32 pad;
	struct nsk_ev_alloc a;
	struct nsk_ev_ustack u;
	__u8 bytes[NSK_USTACK_ROOM];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct alloc_copy);
} copy_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NSK_ALLOC_INTERVALS);
	__type(key, __u32);
	__type(value, __u64);
} intervals SEC(".maps");

/* Sampled blocks still live: key (tgid << 64 is too wide) = address, value =
 * tgid, checked on free. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, NSK_ALLOC_SAMPLED_LIVE);
	__type(key, __u64);
	__type(value, __u32);
} sampled_live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NSK_ALLOC_LOST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void count_lost(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &what);

	if (v)
		*v += 1;
}

/* Wake the consumer once, when the unread data crosses wake_bytes with
 * this record; otherwise it drains on its timer.  pending: bytes of this
 * record already counted in the ring (reserved), 0 for one still to be
 * output. */
static __always_inline __u64 wake_flags(__u64 len, __u64 pending)
{
	__u64 avail = bpf_ringbuf_query(&alloc_events, BPF_RB_AVAIL_DATA);
	__u64 before = avail - pending;

	if (before < wake_bytes && before + len >= wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline struct tstate *tstate_get(int create)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return bpf_task_storage_get(&tstates, t, 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

static __always_inline __u64 next_interval(void)
{
	__u32 i = bpf_get_prandom_u32() % NSK_ALLOC_INTERVALS;
	__u64 *v = bpf_map_lookup_elem(&intervals, &i);

	return v && *v ? *v : sample_bytes;
}

/* Weight of an allocation of size bytes under sampling, 0: not sampled. */
static __always_inline __u64 sample_weight(struct tstate *st, __u64 size)
{
	__u64 n = 0;

	if (size >= sample_bytes)
		return size;
	if (!st->sampler_init) {
		st->until_sample = next_interval();
		st->sampler_init = 1;
	}
	st->until_sample -= size;
	/* Each sample point this block covers adds an interval's worth. */
	for (int i = 0; i < 64 && st->until_sample <= 0; i++) {
		st->until_sample += next_interval();
		n++;
	}
	return n * sample_bytes;
}

static __always_inline __u64 mul_sat(__u64 a, __u64 b)
{
	__u64 lim;

	if (!b)
		return 0;
	/* The barrier keeps clang from turning this into a 128-bit multiply
	 * (__multi3), which BPF cannot call. */
	lim = ~0ULL / b;
	asm volatile("" : "+r"(lim));
	if (a > lim)
		return ~0ULL;
	return a * b;
}

SEC("uprobe")
int BPF_KPROBE(alloc_enter, __u64 a0, __u64 a1, __u64 a2)
{
	__u32 tgid = nsk_cur_tgid();
	struct tstate *st;
	__u32 fn = bpf_get_attach_cookie(ctx);

	if (!nsk_is_target(tgid))
		return 0;
	st = tstate_get(1);
	if (!st)
		return 0;
	if (st->depth++ > 0)
		return 0;
	st->arg = 0;
	switch (fn) {
	case NSK_ALLOC_CALLOC:
		st->size = mul_sat(a0, a1);
		break;
	case NSK_ALLOC_REALLOC:
		st->arg = a0;
		st->size = a1;
		break;
	case NSK_ALLOC_REALLOCARRAY:
		st->arg = a0;
		st->size = mul_sat(a1, a2);
		break;
	case NSK_ALLOC_ALIGNED_ALLOC:
	case NSK_ALLOC_MEMALIGN:
		st->size = a1;
		break;
	case NSK_ALLOC_POSIX_MEMALIGN:
		st->arg = a0;
		st->size = a2;
		break;
	case NSK_ALLOC_COOKIE_NEW:
	case NSK_ALLOC_COOKIE_NEW_ALIGNED:
		fn = NSK_ALLOC_MALLOC;
		st->size = a0;
		break;
	default: /* malloc, valloc, pvalloc */
		st->size = a0;
		break;
	}
	st->fn = fn;
	return 0;
}

/* A free record, of thread tid at time (a batched free's own). */
static __always_inline int emit_free_at(__u32 tgid, __u32 tid, __u64 time,
					__u64 addr, __u64 size, __u32 fn,
					__u32 sampler)
{
	struct nsk_ev_free *e;

	e = bpf_ringbuf_reserve(&alloc_events, sizeof(*e), 0);
	if (!e) {
		count_lost(NSK_ALLOC_LOST_RINGBUF);
		return 0;
	}
	e->hdr.type = NSK_EV_FREE;
	e->hdr.size = sizeof(*e);
	e->time = time;
	e->pid = tgid;
	e->tid = tid;
	e->addr = addr;
	e->size = size;
	e->fn = fn;
	e->sampler = sampler;
	bpf_ringbuf_submit(e, wake_flags(sizeof(*e), sizeof(*e)));
	return 0;
}

static __always_inline int emit_free_as(__u32 tgid, __u64 addr, __u64 size,
					__u32 fn, __u32 sampler)
{
	return emit_free_at(tgid, (__u32)bpf_get_current_pid_tgid(), bpf_ktime_get_ns(),
			    addr, size, fn, sampler);
}

static __always_inline int emit_free(__u32 tgid, __u64 addr, __u64 size,
				     __u32 fn)
{
	return emit_free_as(tgid, addr, size, fn, 0);
}

/* A block is released: record it unless sampling says nobody knows it. */
static __always_inline int release(__u32 tgid, __u64 addr, __u32 fn)
{
	if (sample_bytes) {
		__u32 *owner = bpf_map_lookup_elem(&sampled_live, &addr);

		if (!owner || *owner != tgid)
			return 0;
		bpf_map_delete_elem(&sampled_live, &addr);
	}
	return emit_free(tgid, addr, 0, fn);
}

static __always_inline void fill_alloc(struct nsk_ev_alloc *e, __u32 tgid,
				       __u64 addr, __u64 size, __u64 old,
				       __u64 weight, __u32 fn, __s32 sid)
{
	e->hdr.type = NSK_EV_ALLOC;
	e->hdr.size = sizeof(*e);
	e->time = bpf_ktime_get_ns();
	e->pid = tgid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->addr = addr;
	e->size = size;
	e->old_addr = old;
	e->weight = weight;
	e->fn = fn;
	e->stack_id = sid;
}

/* Sends the allocation with a copy of the user stack, as much as user space
 * asked for this stack.  Returns 0 when sent, 1 when the plain record
 * should go instead (no copy wanted, or none could be sent). */
/* Where a copy starts: the program's registers at the allocator's return
 * (or as the sampler's probe reconstructs them). */
struct at_regs {
	__u64 ip, sp, bp;
};

static __always_inline int emit_copied(__u32 tgid, __u64 addr, __u64 size,
				       __u64 old, __u64 weight, __u32 fn,
				       __s32 sid, const struct at_regs *at,
				       __u32 type)
{
	__u64 key = (__u64)tgid << 32 | (__u32)sid;
	__u32 *need = bpf_map_lookup_elem(&copy_needs, &key);
	__u32 want = need ? *need : ustack_bytes, zero = 0, flags = 0;
	struct alloc_copy *c;
	long len;
	int rc = 1;

	/* Not told yet: counted, and past NSK_USTACK_ASK_AFTER copies the
	 * record asks for the answer (record/alloc.c, asks). */
	if (!need) {
		__u32 first = NSK_USTACK_COUNTING | 1;

		bpf_map_update_elem(&copy_needs, &key, &first, BPF_NOEXIST);
	} else if (want & NSK_USTACK_COUNTING) {
		if ((__sync_fetch_and_add(need, 1) & ~NSK_USTACK_COUNTING) >=
		    NSK_USTACK_ASK_AFTER - 1)
			flags = NSK_USTACK_F_ASKS;
		want = ustack_bytes;
	}
	if (!want)
		return 1; /* the frame-pointer walk is trusted here */
	if (want > ustack_bytes)
		want = ustack_bytes;
	/* Copies are the first thing to give up when the consumer falls
	 * behind: the allocation records themselves must not be lost. */
	if (bpf_ringbuf_query(&alloc_events, BPF_RB_AVAIL_DATA) > ring_bytes / 8 * 7)
		goto lost;
	c = bpf_map_lookup_elem(&copy_scratch, &zero);
	if (!c)
		goto lost;
	if (__sync_fetch_and_add(&c->busy, 1)) {
		__sync_fetch_and_add(&c->busy, -1);
		goto lost;
	}
	fill_alloc(&c->a, tgid, addr, size, old, weight, fn, sid);
	c->a.hdr.type = type;
	if (at)
		len = nsk_copy_ustack_at(&c->u, c->bytes, want, at->ip, at->sp, at->bp);
	else
		len = nsk_copy_ustack(&c->u, c->bytes, want);
	c->u.flags = flags;
	len += sizeof(c->a) + sizeof(c->u);
	if (len > sizeof(*c) - 8)
		len = sizeof(*c) - 8;
	c->a.hdr.size = len;
	rc = bpf_ringbuf_output(&alloc_events, &c->a, len, wake_flags(len, 0)) ? 1 : 0;
	__sync_fetch_and_add(&c->busy, -1);
	if (!rc)
		return 0;
lost:
	count_lost(NSK_ALLOC_LOST_USTACK);
	return 1;
}

/* The map's bucket for this stack holds another one: the walk goes in
 * the record (nusku/events/alloc.h, NSK_ALLOC_STACK_INLINE). */
static __always_inline int emit_inline(void *ctx, __u32 tgid, __u64 addr,
				  __u64 size, __u64 old, __u64 weight, __u32 fn,
				  __u32 type)
{
	const __u32 total = sizeof(struct nsk_ev_alloc) + sizeof(struct nsk_ev_alloc_ips);
	struct nsk_ev_alloc_ips *ips;
	struct nsk_ev_alloc *e;
	long n;

	e = bpf_ringbuf_reserve(&alloc_events, total, 0);
	if (!e) {
		count_lost(NSK_ALLOC_LOST_RINGBUF);
		return 0;
	}
	ips = (void *)(e + 1);
	n = bpf_get_stack(ctx, ips->ips, sizeof(ips->ips), BPF_F_USER_STACK);
	if (n <= 0) {
		bpf_ringbuf_discard(e, 0);
		count_lost(NSK_ALLOC_LOST_STACK);
		return 0;
	}
	ips->n = (__u32)(n / 8);
	ips->pad = 0;
	fill_alloc(e, tgid, addr, size, old, weight, fn, NSK_ALLOC_STACK_INLINE);
	e->hdr.type = type;
	e->hdr.size = total;
	bpf_ringbuf_submit(e, wake_flags(total, total));
	return 0;
}

/* copy: may carry a stack copy (at the allocator's return, where the
 * registers are the caller's; or from the registers at).  type:
 * NSK_EV_ALLOC, or NSK_EV_ALLOC_SAMPLED with old = the call site. */
static __always_inline int emit_alloc_as(void *ctx, __u32 tgid, __u64 addr,
					 __u64 size, __u64 old, __u64 weight,
					 __u32 fn, int copy,
					 const struct at_regs *at, __u32 type)
{
	__s32 sid = bpf_get_stackid(ctx, &alloc_stacks, BPF_F_USER_STACK);
	struct nsk_ev_alloc *e;

	if (sid == -EEXIST_)
		return emit_inline(ctx, tgid, addr, size, old, weight, fn, type);
	if (sid < 0)
		count_lost(NSK_ALLOC_LOST_STACK);
	else if (copy && ustack_bytes &&
		 !emit_copied(tgid, addr, size, old, weight, fn, sid, at, type))
		return 0;
	e = bpf_ringbuf_reserve(&alloc_events, sizeof(*e), 0);
	if (!e) {
		count_lost(NSK_ALLOC_LOST_RINGBUF);
		return 0;
	}
	fill_alloc(e, tgid, addr, size, old, weight, fn, sid);
	e->hdr.type = type;
	bpf_ringbuf_submit(e, wake_flags(sizeof(*e), sizeof(*e)));
	return 0;
}

static __always_inline int emit_alloc(void *ctx, __u32 tgid, __u64 addr,
				      __u64 size, __u64 old, __u64 weight,
				      __u32 fn, int copy)
{
	return emit_alloc_as(ctx, tgid, addr, size, old, weight, fn, copy, NULL,
			     NSK_EV_ALLOC);
}

SEC("uretprobe")
int BPF_KRETPROBE(alloc_exit, __u64 rc)
{
	__u32 tgid = nsk_cur_tgid();
	struct tstate *st;
	__u64 addr = rc, weight, size, old = 0;
	__u32 fn;

	if (!nsk_is_target(tgid))
		return 0;
	st = tstate_get(0);
	if (!st || st->depth == 0)
		return 0; /* entered before the probes were attached */
	if (--st->depth > 0)
		return 0;
	fn = st->fn;
	size = st->size;
	if (fn == NSK_ALLOC_POSIX_MEMALIGN) {
		addr = 0;
		if ((int)rc == 0 && st->arg)
			bpf_probe_read_user(&addr, sizeof(addr), (void *)st->arg);
	} else if (fn == NSK_ALLOC_REALLOC || fn == NSK_ALLOC_REALLOCARRAY) {
		/* The old block is gone if a new one came back, or if
		 * realloc(p, 0) freed it; a failed realloc leaves it. */
		if (st->arg && (addr || size == 0)) {
			if (sample_bytes) {
				release(tgid, st->arg, NSK_ALLOC_REALLOC);
			} else {
				old = st->arg;
			}
		}
		if (!addr && size == 0) {
			if (old)
				emit_free(tgid, old, 0, NSK_ALLOC_REALLOC);
			return 0; /* realloc(p, 0): a free, not an allocation */
		}
	}
	weight = size;
	if (sample_bytes) {
		weight = addr ? sample_weight(st, size) : 0;
		if (!weight)
			return 0;
		if (bpf_map_update_elem(&sampled_live, &addr, &tgid, BPF_ANY))
			count_lost(NSK_ALLOC_LOST_SAMPLED);
	}
	return emit_alloc(ctx, tgid, addr, size, old, weight, fn, 1);
}

SEC("uprobe")
int BPF_KPROBE(free_enter, __u64 ptr)
{
	__u32 tgid = nsk_cur_tgid();
	struct tstate *st;

	if (!ptr || !nsk_is_target(tgid))
		return 0;
	/* free() inside realloc() or inside another allocator call is part
	 * of that call. */
	st = tstate_get(0);
	if (st && st->depth > 0)
		return 0;
	return release(tgid, ptr, NSK_ALLOC_FREE);
}

/* ---- the preloaded sampler's probe points (nusku/events/sampler.h) ------- */

#if defined(__TARGET_ARCH_x86)
#define PARM6(ctx) (((struct pt_regs *)(ctx))->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PARM6(ctx) (((struct pt_regs *)(ctx))->regs[5])
#endif

/* The frees the library kept (struct nsk_sampler_batch at batch), told in
 * the order they were made, each with its own time and thread, and the
 * samples it dropped. */
struct batch_ctx {
	__u64 batch;
	__u32 tgid;
};

/* The i-th free of a batch, as a record.  A bpf_loop callback: the
 * verifier checks it once, where an open loop of 64 was checked 64 times
 * (sampler_probe took ~48 ms of every recording's start to load). */
static long sampler_batch_one(__u32 i, void *data)
{
	const struct batch_ctx *c = data;
	struct nsk_sampler_freed f;

	if (bpf_probe_read_user(&f, sizeof(f),
				(void *)(c->batch + 16 + (__u64)i * sizeof(f)))) {
		count_lost(NSK_ALLOC_LOST_BATCH);
		return 0;
	}
	return emit_free_at(c->tgid, f.tid, f.time, f.addr, f.size, f.fn, 1);
}

static __always_inline void sampler_batch(__u32 tgid, __u64 batch)
{
	struct { __u32 n, pad; __u64 dropped; } head;
	struct batch_ctx c = { .batch = batch, .tgid = tgid };
	__u32 lost_at = NSK_ALLOC_LOST_SAMPLED;

	if (bpf_probe_read_user(&head, sizeof(head), (void *)batch)) {
		count_lost(NSK_ALLOC_LOST_BATCH); /* how many is not known */
		return;
	}
	if (head.dropped) {
		__u64 *v = bpf_map_lookup_elem(&lost, &lost_at);

		if (v)
			*v += head.dropped;
	}
	bpf_loop(head.n < NSK_SAMPLER_BATCH ? head.n : NSK_SAMPLER_BATCH,
		 sampler_batch_one, &c, 0);
}

/* A sampled allocation.  The probe sits in the library, two calls below the
 * program; frame is the interposed function's frame, so the program's state
 * at the call is known exactly: the return address at frame + 8 is the call
 * site (the leaf, as at a uretprobe), the stack pointer after the return
 * frame + 16, the caller's frame pointer at frame.  The stack copy starts
 * there; the frame-pointer walk from the probe passes through the library's
 * frames first, which user space cuts at the call site.  The frees waiting
 * in the library's batch go first: one of them may be of the address this
 * allocation got. */
static __always_inline int sampler_alloc(struct pt_regs *ctx, __u64 addr,
					 __u64 size, __u64 weight, __u64 fn,
					 __u64 frame)
{
	__u32 tgid = nsk_cur_tgid();
	__u64 batch = PARM6(ctx), link[2] = { 0, 0 };
	struct at_regs at;

	if (!nsk_is_target(tgid))
		return 0;
	if (batch)
		sampler_batch(tgid, batch);
	if (frame && bpf_probe_read_user(link, sizeof(link), (void *)frame))
		link[1] = 0;
	at.ip = link[1];
	at.sp = frame + 16;
	at.bp = link[0];
	return emit_alloc_as(ctx, tgid, addr, size, link[1], weight, (__u32)fn,
			     link[1] != 0, &at, NSK_EV_ALLOC_SAMPLED);
}

/* A sampled block released (fn FREE or REALLOC), or a range the program
 * unmapped (MUNMAP, MPROTECT to PROT_NONE, BRK shrinking; size its
 * length): no stack.  fn NSK_SAMPLER_FN_BATCH: a batch told by itself. */
static __always_inline int sampler_free(__u64 addr, __u64 fn, __u64 size)
{
	__u32 tgid = nsk_cur_tgid();

	if (!addr || !nsk_is_target(tgid))
		return 0;
	if ((__u32)fn == NSK_SAMPLER_FN_BATCH) {
		sampler_batch(tgid, addr);
		return 0;
	}
	return emit_free_as(tgid, addr, size, (__u32)fn, 1);
}

/* Both probe points of the library are this one program, on one
 * uprobe_multi link (the kernel waits a grace period, about 100 ms here,
 * when it takes a link's uprobes away, once per link); an allocation and
 * a release are told apart by fn (nusku/events/sampler.h). */
SEC("uprobe")
int BPF_KPROBE(sampler_probe, __u64 a0, __u64 a1, __u64 a2, __u64 a3, __u64 a4)
{
	if ((__u32)a3 & NSK_SAMPLER_FN_RELEASE)
		return sampler_free(a0, (__u32)a3 == NSK_SAMPLER_FN_BATCH ?
					    NSK_SAMPLER_FN_BATCH :
					    (__u32)a3 & ~NSK_SAMPLER_FN_RELEASE,
				    a1);
	return sampler_alloc(ctx, a0, a1, a2, a3, a4);
}

/* ---- mmap, munmap, brk ----------------------------------------------------- */

/* Under the sampler the library reports the program's own mmap, munmap,
 * mprotect, brk and sbrk calls itself (they reach sampler_probe), and this
 * program is attached only once a process the sampler cannot reach is
 * recorded (attach mode, the uprobe fallback): it runs for every syscall
 * of every process on the machine.
 *
 * One program at the syscall's exit: every syscall of every process passes
 * here, so the number comes first, read straight from the saved user
 * registers (a BTF pointer: no probe read), before any map lookup.  The
 * arguments are still in those registers at exit, so no entry program is
 * needed.
 *
 * An mmap with PROT_NONE or MAP_NORESERVE reserves address space, no
 * memory (Go's arenas, glibc's thread heaps): sent as RESERVE, never
 * sampled.  A successful mprotect that makes a range writable, or
 * PROT_NONE again, goes to user space, which keeps it only inside a
 * reservation (a commit, or its end); mprotect to read-only or executable
 * (RELRO, JIT code) is not memory and stays here. */
SEC("tp_btf/sys_exit")
int BPF_PROG(alloc_sys_exit, struct pt_regs *regs, long ret)
{
	__u32 nr = (__u32)regs->orig_ax, tgid;
	struct tstate *st;
	__u64 caller = 0, arg0, arg1, prot = 0;

	if (nr != NR_MMAP && nr != NR_MUNMAP && nr != NR_BRK && nr != NR_MPROTECT)
		return 0;
	tgid = nsk_cur_tgid();
	if (!nsk_is_target(tgid))
		return 0;
	if (nr == NR_MMAP && !(regs->r10 & MAP_ANONYMOUS_))
		return 0;
	if (nr == NR_MMAP || nr == NR_MPROTECT)
		prot = regs->dx;
	if (nr == NR_MPROTECT && (ret != 0 || (prot && !(prot & PROT_WRITE_))))
		return 0;
	arg0 = regs->di;
	arg1 = regs->si;
	st = tstate_get(1);
	if (!st)
		return 0;
	/* The libc wrappers are leaves that call the kernel without a frame:
	 * the word at the user stack pointer is the caller's return address,
	 * which a frame-pointer walk from here skips.  User space puts it
	 * back into the stack. */
	if (st->depth == 0 &&
	    bpf_probe_read_user(&caller, sizeof(caller), (void *)regs->sp))
		caller = 0;
	if (nr == NR_BRK) {
		/* Always reported, so user space follows the break; weight 0
		 * marks a move made by the allocator itself. */
		return emit_alloc(ctx, tgid, ret, arg0, caller,
				  st->depth > 0 ? 0 : 1, NSK_ALLOC_BRK, 0);
	}
	if (st->depth > 0)
		return 0; /* the allocator's own mapping */
	if (nr == NR_MUNMAP) {
		if (ret == 0)
			emit_free(tgid, arg0, arg1, NSK_ALLOC_MUNMAP);
		return 0;
	}
	if (nr == NR_MPROTECT) {
		if (!prot)
			return emit_free(tgid, arg0, arg1, NSK_ALLOC_MPROTECT);
		return emit_alloc(ctx, tgid, arg0, arg1, caller, arg1,
				  NSK_ALLOC_MPROTECT, 0);
	}
	if (ret < 0 && ret > -4096)
		ret = 0;
	if (ret && (!prot || (regs->r10 & MAP_NORESERVE_)))
		return emit_alloc(ctx, tgid, ret, arg1, caller, arg1,
				  NSK_ALLOC_RESERVE, 0);
	if (sample_bytes && ret) {
		__u64 weight = sample_weight(st, arg1);

		if (!weight)
			return 0;
		return emit_alloc(ctx, tgid, ret, arg1, caller, weight,
				  NSK_ALLOC_MMAP, 0);
	}
	return emit_alloc(ctx, tgid, ret, arg1, caller, arg1,
			  NSK_ALLOC_MMAP, 0);
}
