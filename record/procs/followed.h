/* Which processes' mapping records the watcher keeps.
 *
 * The mmap stream is the whole machine's (mmap_events.h); the records of
 * the processes recorded are kept, the rest dropped before any file is
 * opened for them.  A process is followed from the first event or record
 * that shows it is a target: its fork or exec on the proc ring buffer, or
 * the kernel's map of targets (bpf/target.bpf.h), which a child enters
 * before it first runs.  It is forgotten once the records it wrote before
 * its exit have been read: after a drain of the stream that began after
 * its exit was read from the ring buffer (the kernel writes a mapping
 * record before the process can exit).
 */
#ifndef NUSKU_RECORD_PROCS_FOLLOWED_H
#define NUSKU_RECORD_PROCS_FOLLOWED_H

#include <stddef.h>
#include <stdint.h>

#include <nusku/events/proc.h>

#include "record/pidset.h"

struct nsk_followed {
	int targets_fd; /* the map of targets; -1: every process is followed */
	struct nsk_pidset set;
	uint32_t *leaving; /* ended, oldest first, not forgotten yet */
	size_t nleaving, capleaving;
};

/* targets_fd < 0: nothing is filtered (record -a). */
void nsk_followed__init(struct nsk_followed *f, int targets_fd);
void nsk_followed__free(struct nsk_followed *f);
/* A fork, exec or exit of a target, from the proc ring buffer. */
void nsk_followed__event(struct nsk_followed *f, const struct nsk_ev_proc *e);
/* 1 when the records of process pid are kept. */
int nsk_followed__has(struct nsk_followed *f, uint32_t pid);
/* How many processes have ended so far (a mark for nsk_followed__forget). */
size_t nsk_followed__ended(const struct nsk_followed *f);
/* Forgets the first n of the processes that ended (their records are all
 * read); the later ones stay followed. */
void nsk_followed__forget(struct nsk_followed *f, size_t n);

#endif
