/* What a segment of a continuous recording must define to be read alone.
 *
 * The recorder interns strings, mappings, frames, stacks and connections
 * once for its whole life and writes each definition once, before its
 * first use.  A continuous recording cuts that stream into segments, and
 * each must be readable without the others: so this store keeps a copy
 * of every definition it sees go by, notes in which segment each was last
 * written, and before a record goes into the current segment writes every
 * definition the record refers to (and theirs) that the segment lacks.
 * Ids stay those of the recorder, the same in every segment of one run.
 * A new segment also begins with the recording's META records, the
 * syscall names and a PROCESS and THREAD record of every process still
 * alive (as attached at the segment's start).
 *
 * Memory: a copy per definition, as the stack room holds one per stack;
 * processes, threads and the mappings no frame uses leave with their
 * process, so a recorder of many short-lived processes stays flat.
 */
#ifndef NUSKU_RECORD_SEGMENT_DEFS_H
#define NUSKU_RECORD_SEGMENT_DEFS_H

#include <stdint.h>

#include <nusku/format.h>

struct nsk_defs;

typedef int (*nsk_defs_emit_fn)(void *ctx, const struct nsk_record *rec);

int nsk_defs__new(struct nsk_defs **out);
void nsk_defs__free(struct nsk_defs *d); /* NULL is fine */

/* rec is about to be written to the current segment: first writes,
 * through emit, every definition it refers to that this segment has not
 * had yet; then notes what rec defines.  0 or emit's error. */
int nsk_defs__write(struct nsk_defs *d, const struct nsk_record *rec,
		    nsk_defs_emit_fn emit, void *ctx);

/* A new segment begins at time (CLOCK_MONOTONIC ns): nothing is defined
 * in it yet; writes what every segment starts with (after its CLOCK):
 * META, SYSCALL_NAME, and PROCESS and THREAD of the living processes.
 * Frees what the processes that ended left behind. */
int nsk_defs__new_segment(struct nsk_defs *d, uint64_t time,
			  nsk_defs_emit_fn emit, void *ctx);

/* Definitions held, for a test of flat memory. */
uint64_t nsk_defs__count(const struct nsk_defs *d);

#endif
