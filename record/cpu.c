/* The cpu signal: software cpu-clock perf events at the requested
 * frequency, on the target's threads (on every online CPU with -a:
 * record/cpu_events.h), each running bpf/cpu.bpf.c, which keeps the
 * samples of targets and copies their stacks into a ring buffer.
 *
 * Each sample becomes a SAMPLE record weighted by the event's period (the
 * ns of CPU it stands for); its stack is interned by the session.  Losses
 * counted in the kernel (ring buffer full, stack walk failed) are read on
 * every poll and handed to the session as deltas.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/cpu_events.h"
#include "record/session.h"
#include <nusku/events/cpu.h>
#include "cpu.skel.h"

struct cpu_state {
	struct nsk_session *s;
	struct cpu_bpf *skel;
	struct nsk_cpu_events *events;
	int ncpu;
	int lost_fd;
	uint64_t lost_seen[NSK_CPU_LOST_MAX];
	uint8_t copy[NSK_USTACK_MAX]; /* a stack copy with returns restored */
};

/* Puts the real return addresses back where a pending uretprobe left its
 * trampoline's: in the frame-pointer walk (kernels before 6.12 leave them
 * there) and in the stack copy, at the exact slots the kernel hijacked.
 * Fills ips and copy (a private copy of e's bytes) only where it changes
 * something; returns 1 when the copy was changed. */
static int restore_returns(const struct nsk_ev_cpu_sample *e, uint64_t *uips,
			   const uint8_t *bytes, uint8_t *copy)
{
	uint32_t n = e->nuret < NSK_CPU_URET_MAX ? e->nuret : NSK_CPU_URET_MAX;
	uint32_t next = 0;
	int changed = 0;

	for (uint32_t i = 0; i < e->nuser && next < n; i++)
		if (uips[i] == e->xol)
			uips[i] = e->uret[next++].ret;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = e->uret[i].slot - e->ustack.sp, was;

		if (e->uret[i].slot < e->ustack.sp || off + 8 > e->ustack.len)
			continue;
		memcpy(&was, bytes + off, 8);
		if (was != e->xol)
			continue; /* already returned through it */
		if (!changed)
			memcpy(copy, bytes, e->ustack.len);
		memcpy(copy + off, &e->uret[i].ret, 8);
		changed = 1;
	}
	return changed;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct cpu_state *st = ctx;
	const struct nsk_ev_cpu_sample *e = data;
	struct nsk_record rec = { .type = NSK_REC_SAMPLE };
	uint64_t uips[NSK_MAX_STACK_DEPTH];
	const uint8_t *bytes;
	uint32_t flags = 0;

	if (size < NSK_EV_CPU_SAMPLE_HDR_SIZE || e->hdr.type != NSK_EV_CPU_SAMPLE ||
	    e->nkernel > NSK_MAX_STACK_DEPTH || e->nuser > NSK_MAX_STACK_DEPTH ||
	    NSK_EV_CPU_SAMPLE_HDR_SIZE + (e->nkernel + e->nuser) * 8ull +
			    e->ustack.len > size || e->ustack.len > NSK_USTACK_MAX)
		return 0;
	if (e->flags & NSK_EV_CPU_USTACK_ERR)
		flags |= NSK_STACK_USER_ERROR;
	if (e->nuser == NSK_MAX_STACK_DEPTH)
		flags |= NSK_STACK_TRUNCATED;
	memcpy(uips, &e->ips[e->nkernel], e->nuser * sizeof(*uips));
	bytes = (const uint8_t *)&e->ips[e->nkernel + e->nuser];
	if (e->xol && e->nuret && restore_returns(e, uips, bytes, st->copy))
		bytes = st->copy;
	if (nsk_session__own_sample(st->s, (const uint64_t *)e->ips, e->nkernel,
				    e->nuser ? uips[0] : e->ustack.ip, e->xol) ||
	    nsk_session__launcher_sample(st->s, e->pid, e->time))
		flags |= NSK_STACK_OWN;
	rec.sample.time = e->time;
	rec.sample.pid = e->pid;
	rec.sample.tid = e->tid;
	rec.sample.cpu = e->cpu;
	rec.sample.weight = e->period;
	/* __u64 is unsigned long long, uint64_t unsigned long: same bits */
	/* the stack copy, when taken, follows the ips in use */
	rec.sample.stack_id = nsk_session__stack_copied(
		st->s, e->pid, e->time, (const uint64_t *)e->ips, e->nkernel,
		uips, e->nuser, &e->ustack, bytes, flags);
	if (!rec.sample.stack_id) {
		nsk_session__lost(st->s, "cpu.stack", 1);
		return 0;
	}
	/* A write error is the session's to report; keep draining. */
	nsk_session__emit(st->s, &rec);
	return 0;
}

static void cpu_stop(void *state)
{
	struct cpu_state *st = state;

	if (!st)
		return;
	nsk_cpu_events__close(st->events);
	cpu_bpf__destroy(st->skel);
	free(st);
}

/* Open, configure and load (struct nsk_signal's load: may run in a
 * thread of its own). */
static int cpu_load(struct nsk_session *s, void **state)
{
	const struct nsk_record_opts *o = nsk_session__opts(s);
	struct cpu_state *st = calloc(1, sizeof(*st));
	int err;

	*state = NULL;
	if (!st)
		return -ENOMEM;
	st->s = s;
	st->ncpu = libbpf_num_possible_cpus();
	if (st->ncpu <= 0) {
		err = st->ncpu ? st->ncpu : -EINVAL;
		goto cleanup;
	}
	st->skel = cpu_bpf__open();
	if (!st->skel) {
		err = -errno;
		goto cleanup;
	}
	st->skel->rodata->kernel_stacks = o->kernel_stacks ? 1 : 0;
	st->skel->rodata->ustack_bytes = nsk_session__ustack_bytes(s);
	/* room for a quarter of a second of samples of the largest size
	 * sent, with their stack copies, on every CPU (the ring is drained
	 * every 5 ms, but the drain thread can wait to run that long on a
	 * busy machine: with an eighth, an ASan build's recording of
	 * tests/workloads/mixleaf lost the stack copies that name a
	 * frameless leaf's caller for 6% of its samples).  Not
	 * sizeof(struct nsk_ev_cpu_sample): that holds the largest copy
	 * already. */
	bpf_map__set_max_entries(st->skel->maps.cpu_events,
				 nsk_session__ring_bytes(
					 (uint64_t)st->ncpu * (o->freq_hz ? o->freq_hz : 999) *
					 (NSK_EV_CPU_SAMPLE_HDR_SIZE +
					  8 * 2 * NSK_MAX_STACK_DEPTH +
					  st->skel->rodata->ustack_bytes) / 4));
	/* For tests of loss accounting: a ring buffer small enough to fill
	 * (a power of two, at least a page). */
	if (getenv("NUSKU_CPU_RINGBUF_BYTES")) {
		unsigned long v = strtoul(getenv("NUSKU_CPU_RINGBUF_BYTES"), NULL, 0);

		if (v >= 4096 && !(v & (v - 1)))
			bpf_map__set_max_entries(st->skel->maps.cpu_events, (__u32)v);
	}
	st->skel->rodata->nsk_all_but = nsk_session__all_but(s);
	err = bpf_map__reuse_fd(st->skel->maps.nsk_targets,
				nsk_session__targets_fd(s));
	if (!err)
		err = cpu_bpf__load(st->skel);
	if (err)
		goto cleanup;
	*state = st;
	st = NULL;
cleanup:
	cpu_stop(st);
	return err;
}

static int cpu_start(struct nsk_session *s, void **state)
{
	const struct nsk_record_opts *o = nsk_session__opts(s);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = o->freq_hz ? o->freq_hz : 999,
	};
	struct nsk_cpu_where where = {
		.all = o->all,
		.pid = nsk_session__target_pid(s),
		.launched = nsk_session__launched(s) != 0,
	};
	struct cpu_state *st = *state;
	int err = 0;

	*state = NULL;
	if (!st && (err = cpu_load(s, (void **)&st)))
		return err;
	err = nsk_cpu_events__open(&where, &attr, st->skel->progs.nsk_cpu_sample,
				   &st->events);
	if (err)
		goto cleanup;
	if (!where.all && nsk_cpu_events__per_cpu(st->events) && !o->quiet)
		fprintf(stderr, "nusku: cpu: process %d has more threads than this "
			"recorder may open descriptors (RLIMIT_NOFILE): sampling "
			"every CPU instead, which interrupts every process\n",
			(int)where.pid);
	err = nsk_session__meta(s, "cpu.events",
				nsk_cpu_events__per_cpu(st->events) ? "cpu" : "task");
	if (err)
		goto cleanup;
	st->lost_fd = bpf_map__fd(st->skel->maps.cpu_lost);
	err = nsk_session__add_ringbuf(s, bpf_map__fd(st->skel->maps.cpu_events),
				       on_sample, st);
	if (err)
		goto cleanup;
	*state = st;
	st = NULL;
cleanup:
	cpu_stop(st);
	return err;
}

/* META cpu.elsewhere: the samples of processes not recorded (record/
 * cpu_events.h says why a targeted recording has none). */
static int write_elsewhere(struct nsk_session *s, struct cpu_state *st)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t key = NSK_CPU_ELSEWHERE;
	uint64_t sum = 0, *v;
	char buf[32];
	int err = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(st->lost_fd, &key, v)) {
		err = -errno;
		goto cleanup;
	}
	for (int i = 0; i < ncpu; i++)
		sum += v[i];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)sum);
	err = nsk_session__meta(s, "cpu.elsewhere", buf);
cleanup:
	free(v);
	return err;
}

static int cpu_poll(struct nsk_session *s, void *state, int final)
{
	static const char *const sources[NSK_CPU_LOST_MAX] = {
		[NSK_CPU_LOST_RINGBUF] = "cpu.ringbuf",
		[NSK_CPU_LOST_KSTACK] = "cpu.kstack",
		[NSK_CPU_LOST_USTACK] = "cpu.ustack",
	};
	struct cpu_state *st = state;
	int err = nsk_session__drain_lost(s, st->lost_fd, sources, NSK_CPU_LOST_MAX,
					  st->lost_seen);

	if (!err && final)
		err = write_elsewhere(s, st);
	return err;
}

const struct nsk_signal nsk_signal_cpu = {
	.name = "cpu",
	.load = cpu_load,
	.start = cpu_start,
	.poll = cpu_poll,
	.on_process = NULL,
	.stop = cpu_stop,
};
