/* The session's side of --continuous: the writer the session appends to
 * is the current segment's (record/segments.h), and the event loop's tick
 * begins a new segment each --segment.  Everything else of a recording
 * (the header, the signals, LOSS and END) is as for one file. */
#include <string.h>

#include "record/segments.h"
#include "record/session_int.h"

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
	/* losses so far belong to the segment that saw them */
	nsk_session__flush_losses(s, now);
	err = nsk_segments__rotate(s->seg, now, s->errmsg, sizeof(s->errmsg));
	s->w = nsk_segments__writer(s->seg);
	if (err && !s->err)
		s->err = err;
	return err;
}

int nsk_session__continuous_close(struct nsk_session *s)
{
	int err = nsk_segments__close(s->seg, s->errmsg, sizeof(s->errmsg));

	s->w = NULL;
	return err;
}
