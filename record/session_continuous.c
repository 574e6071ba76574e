/* The session's side of --continuous: the writer the session appends to
 * is the current segment's (record/segments.h), and the event loop's tick
 * begins a new segment each --segment.  Everything else of a recording
 * (the header, the signals, LOSS and END) is as for one file. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "record/own.h"
#include "record/segments.h"
#include "record/stacks/stacks.h"
#include "record/session_int.h"

/* The recording's cost up to the current segment's start. */
static struct nsk_own_cost seg_last;

static uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0; /* estimates: never below 0 */
}

void nsk_session__continuous_cost(struct nsk_session *s)
{
	struct nsk_own_cost c;
	char v[64];
	int err = s->own ? nsk_own__stats_error(s->own) : -ENOMEM;

	if (err) {
		nsk_session__meta(s, "cost.error", strerror(-err));
		return;
	}
	if (nsk_own__cost_so_far(s->own, &c))
		return;
	snprintf(v, sizeof(v), "%" PRIu64, since(c.run_ns, seg_last.run_ns));
	nsk_session__meta(s, "cost.bpf_run_ns", v);
	snprintf(v, sizeof(v), "%" PRIu64, since(c.runs, seg_last.runs));
	nsk_session__meta(s, "cost.bpf_runs", v);
	snprintf(v, sizeof(v), "%" PRIu32, c.progs);
	nsk_session__meta(s, "cost.bpf_progs", v);
	snprintf(v, sizeof(v), "%" PRIu64 " %" PRIu64, since(c.on_ns, seg_last.on_ns),
		 since(c.total_ns, seg_last.total_ns));
	nsk_session__meta(s, "cost.window_ns", v);
	seg_last = c;
}

int nsk_session__continuous_open(struct nsk_session *s)
{
	struct nsk_segments_opts o = {
		.dir = s->opts.output,
		.segment_ns = s->opts.segment_ns,
		.keep_ns = s->opts.keep_ns,
		.keep_bytes = s->opts.keep_bytes,
	};
	int err = nsk_segments__open(&o, &s->seg, s->errmsg, sizeof(s->errmsg));

	if (err)
		return err;
	s->w = nsk_segments__writer(s->seg);
	return 0;
}

int nsk_session__continuous_commit(struct nsk_session *s)
{
	return nsk_segments__commit(s->seg, s->errmsg, sizeof(s->errmsg));
}

int nsk_session__continuous_tick(struct nsk_session *s, uint64_t now)
{
	int err;

	if (!nsk_segments__due(s->seg, now))
		return 0;
	/* losses so far, and the cost, belong to the segment that saw them */
	nsk_session__flush_losses(s, now);
	nsk_session__continuous_cost(s);
	err = nsk_segments__rotate(s->seg, now, s->errmsg, sizeof(s->errmsg));
	s->w = nsk_segments__writer(s->seg);
	if (err && !s->err)
		s->err = err;
	if (!err) /* a recorder that runs for days leaves its copies early */
		nsk_stacks__store_cache(s->stk);
	return err;
}

int nsk_session__continuous_close(struct nsk_session *s)
{
	int err = nsk_segments__close(s->seg, s->errmsg, sizeof(s->errmsg));

	s->w = NULL;
	return err;
}
