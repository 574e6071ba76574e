/* Segments of several recorder runs loaded as one recording.
 *
 * A continuous recording's directory can hold the segments of more than
 * one run of the recorder (it was stopped, or crashed, and started again
 * into the same directory).  Each run numbers its frames, stacks, mappings,
 * connections and strings from scratch, so the same id in two runs names
 * two different things.  Strings are resolved to their values as they are
 * read (a new run starts with no string ids known); the other ids of every
 * run after the first are moved past the highest id any earlier run used,
 * here, before a handler sees the record, so no handler and no SQL table
 * needs to know about runs.  Functions are keyed by name and module, so
 * the same function in two runs is one function of the report.
 *
 * Times need no moving: every run writes CLOCK_MONOTONIC times, one clock
 * for as long as the machine stays up.  A run after a reboot would not
 * share it; the clock records tell (their realtime - monotonic offset
 * differs by the time the machine was down) and such a range is refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/load.h"

/* Two runs of one boot: their clock offsets agree to within the clock's
 * slewing and small steps (NTP); a reboot moves them by the boot's start. */
#define NSK_RUN_CLOCK_SLACK_NS 2000000000ull

/* Ids are bound to SQL as int64: every moved id stays below this. */
#define NSK_RUN_ID_LIMIT ((uint64_t)INT64_MAX)

/* id moved into this run (0, "none", stays 0), noting the highest.  The
 * first run's ids stay as they are, whatever they are, as in a file read
 * alone; a later run's must fit above the earlier ones. */
static int move(struct nsk_load *ld, uint64_t *id)
{
	if (!*id)
		return 0;
	if (ld->run_base && *id > NSK_RUN_ID_LIMIT - ld->run_base) {
		snprintf(ld->err, sizeof(ld->err), "an id of %llu is too large "
			 "to join the segments of two recorder runs",
			 (unsigned long long)*id);
		return -E2BIG;
	}
	*id += ld->run_base;
	if (*id > ld->run_id_max)
		ld->run_id_max = *id;
	return 0;
}

/* The stack's frame ids, moved, in ld's buffer. */
static int move_frames(struct nsk_load *ld, struct nsk_u64s *frames)
{
	int err = 0;

	if (frames->n > ld->run_frames_cap) {
		uint64_t *v = realloc(ld->run_frames, frames->n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ld->run_frames = v;
		ld->run_frames_cap = frames->n;
	}
	for (uint32_t i = 0; i < frames->n && !err; i++) {
		ld->run_frames[i] = frames->v[i];
		err = move(ld, &ld->run_frames[i]);
	}
	frames->v = ld->run_frames;
	return err;
}

int nsk_load__run_ids(struct nsk_load *ld, const struct nsk_record *in,
		      struct nsk_record *out)
{
	*out = *in;
	switch (out->type) {
	case NSK_REC_MAPPING:
		return move(ld, &out->mapping.id);
	case NSK_REC_FRAME:
		return move(ld, &out->frame.id) ?:
		       move(ld, &out->frame.mapping_id) ?:
		       move(ld, &out->frame.inline_parent);
	case NSK_REC_STACK:
		return move(ld, &out->stack.id) ?:
		       move_frames(ld, &out->stack.frames);
	case NSK_REC_SAMPLE:
		return move(ld, &out->sample.stack_id);
	case NSK_REC_ALLOC:
		return move(ld, &out->alloc.stack_id);
	case NSK_REC_OFFCPU:
		return move(ld, &out->offcpu.stack_id) ?:
		       move(ld, &out->offcpu.waker_stack_id);
	case NSK_REC_SYSCALL_STAT:
		return move(ld, &out->syscall_stat.stack_id);
	case NSK_REC_SYSCALL_PATH:
		return move(ld, &out->syscall_path.stack_id);
	case NSK_REC_SYSCALL_SLOW:
		return move(ld, &out->syscall_slow.stack_id);
	case NSK_REC_CONN:
		return move(ld, &out->conn.id) ?: move(ld, &out->conn.stack_id);
	case NSK_REC_RETRANSMIT:
		return move(ld, &out->retransmit.conn_id);
	default:
		return 0;
	}
}

int nsk_load__new_run(struct nsk_load *ld)
{
	int err;

	if (!ld->runs) {
		/* the first: ids as they are, the highest noted */
		ld->runs = 1;
		return 0;
	}
	/* what the run before may still have owed its processes' memory
	 * (an exit waiting for its late records) is settled now */
	err = nsk_load_alloc__flush(ld);
	if (err)
		return err;
	ld->run_base = ld->run_id_max;
	nsk_idmap__release(&ld->strings);
	ld->run_clock_pending = 1;
	ld->runs++;
	return 0;
}

int nsk_load__run_clock(struct nsk_load *ld, const struct nsk_rec_clock *c)
{
	/* offsets and their difference modulo 2^64: a file's times may be
	 * anything, and a signed difference could overflow */
	uint64_t off = c->realtime_ns - c->monotonic_ns, d;

	if (!ld->runs)
		return 0;
	if (!ld->run_clock_known) {
		ld->run_clock_off = off;
		ld->run_clock_known = 1;
		ld->run_clock_pending = 0;
		return 0;
	}
	if (!ld->run_clock_pending)
		return 0;
	ld->run_clock_pending = 0;
	d = off - ld->run_clock_off;
	if (d + NSK_RUN_CLOCK_SLACK_NS > 2 * NSK_RUN_CLOCK_SLACK_NS) { /* |d| > slack */
		snprintf(ld->err, sizeof(ld->err), "the recorder ran again here "
			 "after a reboot (its times are of another clock): "
			 "give a range on one side of it");
		return -EXDEV;
	}
	return 0;
}
