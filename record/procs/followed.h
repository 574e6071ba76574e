/* Which processes' mapping records the watcher keeps.
 *
 * The mmap stream is the whole machine's (mmap_events.h); the records of
 * the processes recorded are kept, the rest dropped before any file is
 * opened for them.  A process is followed from the first event or record
 * that shows it is a target: its fork or exec on the proc ring buffer, or
 * the kernel's map of targets (bpf/target.bpf.h), which a child enters
 * before it first runs.  It is forgotten once the records it wrote before
 * its exit have been read: at the end of the drain whose ring buffer held
 * that exit (the ring buffer is read first, and the kernel writes a
 * mapping record before the process can exit).
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
	uint32_t *leaving; /* ended since the drain began */
	size_t nleaving, capleaving;
};

/* targets_fd < 0: nothing is filtered (record -a). */
void nsk_followed__init(struct nsk_followed *f, int targets_fd);
void nsk_followed__free(struct nsk_followed *f);
/* A fork, exec or exit of a target, from the proc ring buffer. */
void nsk_followed__event(struct nsk_followed *f, const struct nsk_ev_proc *e);
/* 1 when the records of process pid are kept. */
int nsk_followed__has(struct nsk_followed *f, uint32_t pid);
/* The drain is done: the processes that ended are forgotten. */
void nsk_followed__settle(struct nsk_followed *f);

#endif
