/* Why a thread was off CPU: the one classification table (offcpu_reason.c).
 *
 * Pure functions of the symbolized kernel stack at switch-out, the syscall in
 * progress and the thread state, so the table is unit-tested without a
 * kernel.  docs/blocking.md shows the same table to users.
 */
#ifndef NUSKU_RECORD_OFFCPU_REASON_H
#define NUSKU_RECORD_OFFCPU_REASON_H

#include <stddef.h>
#include <stdint.h>

#include <nusku/format.h>

struct nsk_offcpu_facts {
	const char *const *kfuncs; /* kernel function names, leaf first; an
				    * entry may be NULL (unresolved) */
	size_t nkfuncs;
	int32_t syscall;  /* x86-64 syscall number, -1 none */
	uint32_t state;	  /* prev_state at switch-out */
	int preempted;	  /* switched out while runnable */
};

/* The reason, and in *detail the kernel function (or syscall name) that
 * decided it; for "other", the first frame that is not the scheduler's own
 * (NULL when the stack is empty).  *detail points into facts or a static
 * string. */
enum nsk_offcpu_reason nsk_offcpu__classify(const struct nsk_offcpu_facts *f,
					    const char **detail);

/* Whether the waker's kernel stack (leaf first) ran in an interrupt:
 * "[timer]" for a timer, "[irq]" for another interrupt, NULL for a wakeup
 * from task context (the current task is then the waker). */
const char *nsk_offcpu__waker_kind(const char *const *kfuncs, size_t n);

#endif
