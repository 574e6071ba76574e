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

/* The kernel's frame-pointer walk from the same registers: ips[0] is
 * regs->ip, ips[i + 1] the return address in the frame record at the i-th
 * rbp of the chain (from regs->bp on).  cut: it stopped at its depth
 * limit.  end: where it ended, in a frame that keeps no record of another
 * module than its callee's, the stack ends, as a frame-pointer walk has it
 * (__libc_start_call_main under main), without reading on: for a signal
 * that pays for every byte of copy it takes. */
struct nsk_fp_walk {
	const uint64_t *ips;
	uint32_t n;
	int cut;
	int end;
};

/* Frames one walk gives at most (a larger max is clamped). */
#define NSK_UNWIND_MAX_FRAMES 256

/* How a walk ended. */
enum nsk_unwind_end {
	NSK_UNWIND_DONE = 0,	 /* at the outermost frame */
	NSK_UNWIND_COPY_END = 1, /* the copy ended, or no CFI: truncated */
	NSK_UNWIND_FP_CONT = 2,	 /* the copy ended where the frame-pointer walk goes on */
	NSK_UNWIND_STOPPED = 3,	 /* at max frames or an impossible address */
	NSK_UNWIND_UNMAPPED = 4, /* at a return address in no mapping */
};

/* Whether addr can be user code: not in the first page, nor past 47 bits
 * (the kernel's half and non-canonical addresses are beyond; with 5-level
 * page tables Linux maps user memory higher only where mmap is asked to,
 * which JITs do not).  A walk stops before any other. */
static inline int nsk_unwind__user_addr(uint64_t addr)
{
	return addr >= 4096 && addr < (1ull << 47);
}

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
 * its second entry, see record/stacks/unwind_rules.h), 3 when it stopped
 * at a frame that cannot be (a return address no user code has, a caller's
 * frame not above its callee's: truncated), or a negative errno when
 * nothing could be unwound (*n is then 0). */
int nsk_unwinder__unwind(struct nsk_unwinder *u, struct nsk_aspace *as,
			 const struct nsk_user_regs *regs, const void *stack,
			 size_t stack_len, uint64_t *ips, uint32_t *reach,
			 uint32_t max, uint32_t *n);

/* Under --call-graph auto: unwinds as nsk_unwinder__unwind does, but takes
 * the kernel's frame-pointer walk fp for every frame whose CFI says its
 * frame record is where the walk read it, and CFI from the copy for the
 * others (record/stacks/unwind_mixed.h).  *from_fp: frames taken from fp.
 * Returns an enum nsk_unwind_end other than _FP_CONT, -ENOENT when a frame
 * needs libdw (then nsk_unwinder__unwind), or another negative errno. */
int nsk_unwinder__unwind_fp(struct nsk_unwinder *u, struct nsk_aspace *as,
			    const struct nsk_user_regs *regs, const void *stack,
			    size_t stack_len, const struct nsk_fp_walk *fp,
			    uint64_t *ips, uint32_t *reach, uint32_t max,
			    uint32_t *n, uint32_t *from_fp);

/* Whether a frame-pointer walk steps right out of the frame at pc (a
 * return address minus 1): its CFI puts a frame record at rbp, or it is
 * mapped code without CFI (JIT, where the walk is all there is). */
int nsk_unwinder__fp_holds(struct nsk_unwinder *u, struct nsk_aspace *as,
			   uint64_t pc);

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
