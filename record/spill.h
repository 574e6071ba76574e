/* Draining the signals' ring buffers in a thread of their own.
 *
 * Turning a record into the recording can take a while: the first stack of
 * a process symbolizes its modules (tens of milliseconds with debug info),
 * a new path costs a DWARF walk.  If the ring buffers waited for that, the
 * kernel would drop what does not fit, stack copies first.  So a thread
 * does nothing but copy records out of the ring buffers into memory, and
 * the session's thread hands them to the signals' callbacks, in order per
 * ring buffer, when it gets to them.  The memory is bounded (cap): past it
 * the thread stops draining and the kernel side counts its drops as usual.
 */
#ifndef NUSKU_RECORD_SPILL_H
#define NUSKU_RECORD_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>

struct nsk_spill;

int nsk_spill__new(size_t cap, struct nsk_spill **out);

/* Whether a record wants an answer the kernel side waits for (asks:
 * NULL, none ever does): see nsk_spill__hold.  Called in the draining
 * thread, with the record's bytes only. */
typedef int (*nsk_spill_asks_fn)(const void *data, size_t len);

/* Adds a ring buffer whose records go to fn(ctx, ...) in the session's
 * thread.  Before nsk_spill__start only. */
int nsk_spill__add(struct nsk_spill *sp, int map_fd, ring_buffer_sample_fn fn,
		   void *ctx, nsk_spill_asks_fn asks);

/* The longest a record waits in the kernel before the thread looks
 * (default 5 ms; a ring buffer past its wakeup threshold wakes it
 * sooner).  Longer: fewer wakeups of an idle recorder (continuous mode's
 * low rates).  Before nsk_spill__start only. */
void nsk_spill__set_poll_ms(struct nsk_spill *sp, int ms);

/* Starts the draining thread. */
int nsk_spill__start(struct nsk_spill *sp);

/* Readable when records wait for nsk_spill__dispatch. */
int nsk_spill__event_fd(const struct nsk_spill *sp);

/* Hands every record drained so far to its callback (draining the ring
 * buffers too once the thread has stopped), until deadline
 * (CLOCK_MONOTONIC ns; 0: none).  Returns 1 when the deadline came first
 * and records wait still, 0 when none do.  The session's thread only. */
int nsk_spill__dispatch(struct nsk_spill *sp, uint64_t deadline);

/* Stops the thread and drops every record not yet dispatched, in memory
 * and (a bounded amount) in the ring buffers; returns how many. */
uint64_t nsk_spill__discard(struct nsk_spill *sp);

/* Records lost since the last call because memory ran out. */
uint64_t nsk_spill__take_dropped(struct nsk_spill *sp);

/* Stops the thread (records left in the ring buffers stay for a last
 * nsk_spill__dispatch); the session's thread gets its normal priority
 * back first (nsk_spill__yield). */
void nsk_spill__stop(struct nsk_spill *sp);

/* The session's thread gives way while the program runs.
 *
 * What that thread does with a record (unwinding a copied stack,
 * symbolizing a module the first time it is met, compressing a chunk) is
 * work the program did not ask for.  On a machine whose cores the program
 * keeps busy (make -j2 on two cores) every millisecond of it is taken from
 * the program.  So the calling thread asks for the CPU only when nothing
 * else wants it (SCHED_IDLE), and the draining thread, which keeps its
 * normal priority, lends the normal priority back while records have
 * waited longer than NSK_SPILL_LAG_MS or fill an eighth of the cap, or
 * when the session's loop has not come round to nsk_spill__rest for that
 * long (its timers: a status line, a poll); and for good once
 * nsk_spill__hurry is called, fd (a pidfd: the program's end) becomes
 * readable or the time until (CLOCK_MONOTONIC ns, 0: none; a --duration)
 * comes.  The records wait in memory meanwhile, as they do behind any slow
 * consumer; nothing is dropped that would not be.
 *
 * Only with CAP_SYS_NICE: without it a thread that went to SCHED_IDLE
 * could not come back.  Returns 0, or -EPERM when it stays as it is.
 * After nsk_spill__start, from the session's thread; fd -1: none. */
int nsk_spill__yield(struct nsk_spill *sp, int fd, uint64_t until);

/* The session's thread holds the records back while the program runs:
 * nsk_spill__dispatch hands none over, and the session's thread is not
 * woken for them, until the draining thread lends the leave back (on the
 * same terms as nsk_spill__yield's normal priority: the oldest record
 * has waited NSK_SPILL_LAG_MS, the records fill an eighth of the cap, or
 * the loop has not come round for that long) or hurries (fd readable,
 * until, nsk_spill__hurry).  What the session's thread does with a record
 * (unwinding a copied stack with the rules of the program's modules,
 * symbolizing, interning, compressing) slows the program beside it even
 * at SCHED_IDLE: on two CPUs, a make -j2 built in 291 ms with every
 * recorder thread SCHED_IDLE, 294 without, 255 with the recorder stopped
 * (bare 237); its processes' own CPU time 491, 490, 461 ms (425 bare).
 * Held back, a program that runs less than a second has its records
 * handled after its end.  The draining thread copies on meanwhile, so
 * nothing is dropped that would not be.  A record that asks (its ring's
 * asks function says so: an allocation whose stack was copied often
 * without an answer, which, how much copy that stack needs, stops the
 * copies of the records after it) lends the leave too, at once the first
 * time and then at most every NSK_SPILL_ASK_MS.  Needs no privilege.  After
 * nsk_spill__start, from the session's thread; fd -1: none. */
int nsk_spill__hold(struct nsk_spill *sp, int fd, uint64_t until);

/* From the session's thread, about to wait for more: lent the normal
 * priority (or the leave), it gives way again now if no record waits. */
void nsk_spill__rest(struct nsk_spill *sp);

/* The normal priority back for good, now.  Async-signal-safe: a stop
 * signal's handler calls it, in whichever thread the kernel picked. */
void nsk_spill__hurry(struct nsk_spill *sp);

void nsk_spill__free(struct nsk_spill *sp); /* NULL is fine */

#endif
