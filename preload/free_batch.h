/* The frees of sampled blocks, kept in one batch per process until the
 * next trap hands them over (nusku/events/sampler.h says why and when).
 *
 * A spin lock guards the batch: sampled frees are rare (one per mean
 * interval of freed bytes), so it is seldom contended, and it never sleeps
 * or allocates.  A thread that already holds it (a signal handler that
 * frees, or allocates, inside the sampler) is told so and goes around the
 * batch.
 */
#ifndef NUSKU_PRELOAD_FREE_BATCH_H
#define NUSKU_PRELOAD_FREE_BATCH_H

#include <stdint.h>

#include "nusku/events/sampler.h"

/* The batch, locked, for a sampled allocation to carry; NULL when this
 * thread holds it already.  nsk_free_batch__told() after the probe. */
struct nsk_sampler_batch *nsk_free_batch__take(void);

/* The probe has read the batch taken (NULL: nothing was taken): empty it
 * and unlock it. */
void nsk_free_batch__told(struct nsk_sampler_batch *b);

/* Keeps a free for the next trap: 0 kept, -1 to be told at once by the
 * caller (this thread holds the batch, or the process is ending). */
int nsk_free_batch__add(uint64_t addr, uint32_t fn, uint64_t size);

/* A sample the set had no room for, told with the next batch. */
void nsk_free_batch__drop(void);

/* The process the batch belongs to is this one (the constructor). */
void nsk_free_batch__start(void);

/* Hands the batch over now, and every later free goes straight to the
 * probe: the process is ending.  Not in a vfork child, whose batch is its
 * parent's. */
void nsk_free_batch__final(void);

/* pthread_atfork handlers: a fork sees the batch unlocked, and the child
 * starts with none of its parent's frees. */
void nsk_free_batch__before_fork(void);
void nsk_free_batch__after_fork_parent(void);
void nsk_free_batch__after_fork_child(void);

#endif
