/* DWARF unwinding of user stacks copied by BPF, done in user space.
 *
 * gcc -O2 omits frame pointers on x86-64 and so do Debian's libraries, so a
 * frame-pointer walk in the kernel loses the caller of every libc function.
 * The BPF side copies the user registers and the top of the user stack; this
 * module replays them through libdw's CFI unwinder (.eh_frame/.debug_frame),
 * as perf does for --call-graph dwarf, but at record time so the file keeps
 * only the resulting addresses.
 *
 * One Dwfl per address space (record/procs/maps.h), built from the modules the
 * recorder already opened (so a stack drained after its process exited or
 * exec'd still unwinds against the program that ran), kept for the most
 * recently used address spaces.
 */
#ifndef NUSKU_RECORD_UNWIND_H
#define NUSKU_RECORD_UNWIND_H

#include <stdint.h>
#include <stddef.h>

struct nsk_unwinder;
struct nsk_aspace;

/* The registers the unwinder starts from (x86-64). */
struct nsk_user_regs {
	uint64_t ip;
	uint64_t sp;
	uint64_t bp;
};

/* Frames one walk gives at most (a larger max is clamped). */
#define NSK_UNWIND_MAX_FRAMES 256

int nsk_unwinder__new(struct nsk_unwinder **out);

/* Unwinds one stack taken in address space as.  stack holds stack_len bytes copied
 * from regs->sp upwards.  Writes up to max return addresses, leaf first
 * (ips[0] = regs->ip), into ips and their number into *n; when reach is
 * not NULL, reach[i] is how many bytes of the copy (from sp) the walk had
 * read to find ips[i], so a caller can learn how much copy a stack needs.
 * Returns 0 when
 * the walk reached the outermost frame, 1 when it stopped early (the copy
 * ended, or no CFI for a frame: the stack is truncated, not invented), 2
 * when it stopped because the copy ended in the frame whose frame record
 * rbp pointed at (a frame-pointer walk from regs continues the stack from
 * its second entry, see record/stacks/unwind_rules.h), or a negative errno when
 * nothing could be unwound (*n is then 0). */
int nsk_unwinder__unwind(struct nsk_unwinder *u, struct nsk_aspace *as,
			 const struct nsk_user_regs *regs, const void *stack,
			 size_t stack_len, uint64_t *ips, uint32_t *reach,
			 uint32_t max, uint32_t *n);

/* Stacks unwound (fast: of those, without libdw, from cached CFI rules;
 * record/stacks/unwind_rules.h), frames produced, and walks that stopped early. */
struct nsk_unwind_stats {
	uint64_t stacks;
	uint64_t fast;
	uint64_t frames;
	uint64_t truncated;
	uint64_t failed;
};
const struct nsk_unwind_stats *nsk_unwinder__stats(const struct nsk_unwinder *u);

/* Tests: every walk through libdw, none through the cached rules. */
void nsk_unwinder__libdw_only(struct nsk_unwinder *u, int on);

void nsk_unwinder__free(struct nsk_unwinder *u); /* NULL is fine */

#endif
