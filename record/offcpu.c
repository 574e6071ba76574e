/* The offcpu signal: intervals target threads spent off CPU, with a reason.
 *
 * bpf/offcpu.bpf.c sends one record per interval of at least --min-block
 * (user stack at switch-out, kernel stack of the sleeping thread at
 * switch-in, waker and its stacks from sched_waking).  Here each one gets its
 * reason: the kernel stack is named through kallsyms and handed, with the
 * syscall in progress and the thread state, to the one classification table
 * (record/offcpu_reason.c).  A waker seen in an interrupt is not the task
 * that happened to be current: it is recorded as "[timer]" or "[irq]".
 *
 * The user stack of an interval in a syscall comes with a copy of the top
 * of the thread's stack: it is unwound here with DWARF CFI (the kernel's
 * frame-pointer walk skips the caller of every libc function, which is the
 * very function the report names) and the frame-pointer walk is spliced on
 * where the copy ends.
 *
 * Losses counted in the kernel (ring buffer full, per-thread map full) are
 * read on every poll and handed to the session as deltas.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "record/stacks/kallsyms.h"
#include "record/offcpu_reason.h"
#include "record/session.h"
#include <nusku/events/ustack.h>
#include <nusku/events/offcpu.h>
#include "offcpu.skel.h"
#include "offcpu_tw.skel.h"

#define NSK_OFFCPU_DEFAULT_MIN_BLOCK_NS 10000u
#define TASK_RUNNING 0u

struct offcpu_state {
	struct nsk_session *s;
	struct offcpu_bpf *skel;
	const struct nsk_kallsyms *ksyms; /* the session's */
	int drops_fd;
	int ncpu;
	uint64_t drops_seen[NSK_OFFCPU_DROP_MAX];
	uint64_t misses_seen; /* runs of our programs the kernel skipped */
};

static size_t name_stack(const struct offcpu_state *st, const __u64 *ips,
			 uint32_t n, const char **names)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *module;

		names[i] = NULL;
		if (st->ksyms)
			nsk_kallsyms__find(st->ksyms, ips[i], &names[i], &module);
	}
	return n;
}

/* Frames of the probe itself at the top of a stack taken from a BPF
 * program (the program, bpf_trace_run, the tracepoint): how many to skip. */
static uint32_t probe_frames(const char *const *names, uint32_t n)
{
	uint32_t skip = 0;

	for (uint32_t i = 0; i < n && i < 6; i++) {
		const char *fn = names[i];

		if (fn && (!strncmp(fn, "bpf_trace_run", 13) ||
			   !strncmp(fn, "__bpf_trace_", 12) ||
			   !strncmp(fn, "__traceiter_", 12)))
			skip = i + 1;
	}
	return skip;
}

static int on_offcpu(void *ctx, void *data, size_t size)
{
	struct offcpu_state *st = ctx;
	const struct nsk_ev_offcpu *e = data;
	const size_t fixed = NSK_EV_OFFCPU_FIXED;
	struct nsk_ev_ustack copy;
	struct nsk_record rec = { .type = NSK_REC_OFFCPU };
	struct nsk_rec_offcpu *o = &rec.offcpu;
	const char *knames[NSK_OFFCPU_MAX_DEPTH], *wnames[NSK_OFFCPU_MAX_DEPTH];
	const char *detail = NULL, *waker_kind;
	const uint64_t *ips = (const uint64_t *)e->ips;
	uint32_t flags = 0, nips;
	struct nsk_offcpu_facts f;

	if (size < fixed || e->hdr.type != NSK_EV_OFFCPU)
		return 0;
	nips = e->nkernel + e->nuser + e->nwaker_kernel + e->nwaker_user;
	if (e->nkernel > NSK_OFFCPU_MAX_DEPTH || e->nuser > NSK_OFFCPU_MAX_DEPTH ||
	    e->nwaker_kernel > NSK_OFFCPU_MAX_DEPTH ||
	    e->nwaker_user > NSK_OFFCPU_MAX_DEPTH ||
	    e->ustack_len > NSK_OFFCPU_USTACK_COPY ||
	    e->waker_ustack_len > NSK_OFFCPU_WAKER_COPY ||
	    fixed + nips * 8ull + e->ustack_len + e->waker_ustack_len > size)
		return 0;

	f.kfuncs = knames;
	f.nkfuncs = name_stack(st, e->ips, e->nkernel, knames);
	f.syscall = e->syscall == NSK_OFFCPU_NO_SYSCALL ? -1 : (int32_t)e->syscall;
	f.state = e->state;
	f.preempted = (e->flags & NSK_OFFCPU_F_PREEMPT) || e->state == TASK_RUNNING;
	o->reason = nsk_offcpu__classify(&f, &detail);
	o->detail_id = detail ? nsk_session__string(st->s, detail) : 0;

	o->time = e->start_ns;
	o->duration = e->duration_ns;
	o->pid = e->pid;
	o->tid = e->tid;
	o->state = e->state;
	o->syscall = f.syscall;
	/* The futex word is the only wait address we know the meaning of. */
	o->wait_addr = o->reason == NSK_OFFCPU_LOCK && f.syscall == 202 ? e->arg0 : 0;

	if (e->flags & NSK_OFFCPU_F_USTACK_ERR)
		flags |= NSK_STACK_USER_ERROR;
	if (e->nuser == NSK_OFFCPU_MAX_DEPTH || e->nkernel == NSK_OFFCPU_MAX_DEPTH)
		flags |= NSK_STACK_TRUNCATED;
	/* the session unwinds the copied user stack with DWARF, by
	 * --call-graph, and continues it with the frame-pointer walk */
	copy = (struct nsk_ev_ustack){ e->user_regs[0], e->user_regs[1],
				       e->user_regs[2], e->ustack_len, 0 };
	o->stack_id = nsk_session__stack_copied(
		st->s, e->pid, e->start_ns, ips, e->nkernel, ips + e->nkernel,
		e->nuser, e->user_regs[0] ? &copy : NULL,
		(const uint8_t *)data + fixed + nips * 8ull, flags);
	if (!o->stack_id)
		nsk_session__lost(st->s, "offcpu.stack", 1);

	if (e->flags & NSK_OFFCPU_F_WAKER) {
		const uint64_t *wk = ips + e->nkernel + e->nuser;

		uint32_t skip, nwk;

		name_stack(st, e->ips + e->nkernel + e->nuser, e->nwaker_kernel,
			   wnames);
		skip = probe_frames(wnames, e->nwaker_kernel);
		nwk = e->nwaker_kernel - skip;
		waker_kind = nsk_offcpu__waker_kind(wnames, e->nwaker_kernel);
		if (waker_kind) {
			/* An interrupt: the current task was a bystander. */
			o->waker_comm.data = (const uint8_t *)waker_kind;
			o->waker_comm.len = strlen(waker_kind);
			/* ...whose stack below the interrupt entry is not
			 * the waker's either */
			for (uint32_t i = skip; i < e->nwaker_kernel; i++)
				if (wnames[i] && !strncmp(wnames[i], "asm_", 4)) {
					nwk = i + 1 - skip;
					break;
				}
			o->waker_stack_id = nsk_session__stack(
				st->s, 0, wk + skip, nwk, NULL, 0, 0);
		} else {
			o->waker_pid = e->waker_pid;
			o->waker_tid = e->waker_tid;
			o->waker_comm.data = (const uint8_t *)e->waker_comm;
			o->waker_comm.len = strnlen(e->waker_comm, NSK_COMM_LEN);
			/* its stack copy, taken at sched_waking, follows
			 * the thread's own */
			copy = (struct nsk_ev_ustack){
				e->waker_regs[0], e->waker_regs[1],
				e->waker_regs[2], e->waker_ustack_len, 0 };
			if (nwk || e->nwaker_user)
				o->waker_stack_id = nsk_session__stack_copied(
					st->s, e->waker_pid,
					e->start_ns + e->duration_ns, wk + skip,
					nwk, wk + e->nwaker_kernel,
					e->nwaker_user,
					e->waker_ustack_len ? &copy : NULL,
					(const uint8_t *)data + fixed +
						nips * 8ull + e->ustack_len, 0);
		}
	}
	/* A write error is the session's to report; keep draining. */
	nsk_session__emit(st->s, &rec);
	return 0;
}

static void offcpu_stop(void *state)
{
	struct offcpu_state *st = state;

	if (!st)
		return;
	offcpu_bpf__destroy(st->skel);
	free(st);
}

/* Whether the kernel has bpf_task_work (6.18) and takes it from
 * sched_switch: user stacks are then walked for kept intervals only, not
 * at every switch-out to a new place.  Asked of a program of one call
 * (bpf/offcpu_tw.bpf.c), not of the signal's own. */
static int have_task_work(void)
{
	struct offcpu_tw_bpf *probe = offcpu_tw_bpf__open_and_load();
	int ok = probe != NULL;

	offcpu_tw_bpf__destroy(probe);
	return ok;
}

/* Opens the skeleton and configures it, with the deferred user-stack walk
 * of bpf_task_work or without it (the walk at switch-out). */
static int offcpu_open(struct offcpu_state *st, int task_work)
{
	struct nsk_session *s = st->s;
	const struct nsk_record_opts *o = nsk_session__opts(s);

	st->skel = offcpu_bpf__open();
	if (!st->skel)
		return -errno;
	st->skel->rodata->min_block_ns = o->min_block_ns ?
		o->min_block_ns : NSK_OFFCPU_DEFAULT_MIN_BLOCK_NS;
	st->skel->rodata->kernel_stacks = o->kernel_stacks ? 1 : 0;
	/* --call-graph fp: no stack copies (the walk alone) */
	st->skel->rodata->copy_stacks = nsk_session__ustack_bytes(s) ? 1 : 0;
	st->skel->rodata->task_work = task_work ? 1 : 0;
	/* kept intervals (10 us or more by default) with their stacks, up to
	 * 6 KiB each: 2 MiB a CPU, 4 MiB at least */
	bpf_map__set_max_entries(st->skel->maps.offcpu_events,
				 nsk_session__ring_bytes((uint64_t)(st->ncpu > 2 ? st->ncpu : 2)
							 << 21));
	st->skel->rodata->nsk_all_but = nsk_session__all_but(s);
	return bpf_map__reuse_fd(st->skel->maps.nsk_targets,
				 nsk_session__targets_fd(s));
}

/* Open, configure and load (struct nsk_signal's load: may run in a
 * thread of its own). */
static int offcpu_load(struct nsk_session *s, void **state)
{
	struct offcpu_state *st = calloc(1, sizeof(*st));
	int task_work = have_task_work(), err;

	*state = NULL;
	if (!st)
		return -ENOMEM;
	st->s = s;
	st->ncpu = libbpf_num_possible_cpus();
	if (st->ncpu <= 0) {
		err = st->ncpu ? st->ncpu : -EINVAL;
		goto cleanup;
	}
	err = offcpu_open(st, task_work);
	if (!err)
		err = offcpu_bpf__load(st->skel);
	/* The probe said yes and the signal's programs were refused all the
	 * same (a verifier stricter with the real callback): the walk at
	 * switch-out, as where the probe says no. */
	if (err && task_work) {
		offcpu_bpf__destroy(st->skel);
		st->skel = NULL;
		err = offcpu_open(st, 0);
		if (!err)
			err = offcpu_bpf__load(st->skel);
	}
	if (err)
		goto cleanup;
	*state = st;
	st = NULL;
cleanup:
	offcpu_stop(st);
	return err;
}

static int offcpu_start(struct nsk_session *s, void **state)
{
	const struct nsk_record_opts *o = nsk_session__opts(s);
	struct offcpu_state *st = *state;
	int err;

	*state = NULL;
	if (!st && (err = offcpu_load(s, (void **)&st)))
		return err;
	err = offcpu_bpf__attach(st->skel);
	if (err)
		goto cleanup;
	/* The recording's one kallsyms.  Without kernel names every interval
	 * is classified by its syscall alone; that is worse, not fatal.  Our
	 * programs' frames on top of the wakers' stacks need no names: the
	 * tracepoint frames under them (probe_frames) are kernel text. */
	if (o->kernel_stacks)
		st->ksyms = nsk_session__kallsyms(s);
	st->drops_fd = bpf_map__fd(st->skel->maps.offcpu_drops);
	err = nsk_session__add_ringbuf(s, bpf_map__fd(st->skel->maps.offcpu_events),
				       on_offcpu, st);
	if (err)
		goto cleanup;
	*state = st;
	st = NULL;
cleanup:
	offcpu_stop(st);
	return err;
}

static int offcpu_poll(struct nsk_session *s, void *state, int final)
{
	static const char *const sources[NSK_OFFCPU_DROP_MAX] = {
		[NSK_OFFCPU_DROP_RINGBUF] = "offcpu.ringbuf",
		[NSK_OFFCPU_DROP_TIDS] = "offcpu.threads",
		[NSK_OFFCPU_DROP_UNPAIRED] = "offcpu.unpaired",
	};
	struct offcpu_state *st = state;
	int err = nsk_session__drain_lost(s, st->drops_fd, sources,
					  NSK_OFFCPU_DROP_MAX, st->drops_seen);

	if (err)
		return err;
	/* The kernel skips a program it finds already running on the CPU
	 * (recursion protection): a switch or a wakeup we never saw. */
	{
		struct bpf_program *prog;
		uint64_t misses = 0;

		bpf_object__for_each_program(prog, st->skel->obj) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);

			memset(&info, 0, sizeof(info));
			if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
				misses += info.recursion_misses;
		}
		if (misses > st->misses_seen) {
			nsk_session__lost(s, "offcpu.recursion",
					  misses - st->misses_seen);
			st->misses_seen = misses;
		}
	}
	return 0;
}

const struct nsk_signal nsk_signal_offcpu = {
	.name = "offcpu",
	.load = offcpu_load,
	.start = offcpu_start,
	.poll = offcpu_poll,
	.stop = offcpu_stop,
};
