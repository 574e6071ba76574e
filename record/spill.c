/* Ring buffers drained by a thread into memory (see spill.h).
 *
 * The thread copies each record into the current block as (ring, length,
 * bytes) and hands blocks over whole at the end of each pass.  The
 * session's thread takes blocks off the list under the lock, for a moment,
 * and runs the callbacks without it; once the thread has stopped, it
 * drains the ring buffers itself.
 *
 * Every ring buffer has a consumer of its own (record/ringbuf.c: its data
 * mapped once, not twice as libbpf's), consumed a bounded number of bytes
 * at a time: a plain consume goes on for as long
 * as the producers keep writing, and under a storm that is for ever.  It
 * once held the lock for the whole of a 9 s storm, so the session's thread
 * could not take a block, nor see a SIGINT, until the program ended.
 *
 * While the program runs the session's thread may give way to it
 * (nsk_spill__yield), or hold the records back (nsk_spill__hold): this
 * thread, at normal priority, watches how long the oldest block has
 * waited and lends the normal priority, or the leave to dispatch, back.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "record/caps.h"
#include "record/ringbuf.h"
#include "record/spill.h"

#define NSK_SPILL_RINGS 16
#define NSK_SPILL_BLOCK (1u << 20)
#define NSK_SPILL_POLL_MS 5 /* the longest a record waits in the kernel
			     * (default of nsk_spill__set_poll_ms) */
/* Bytes taken from one ring buffer before the lock is let go and the next
 * ring buffer has its turn: a few milliseconds of copying. */
#define NSK_SPILL_PASS (4u << 20)
/* Records handed to callbacks between two looks at the clock. */
#define NSK_SPILL_CHECK 64
/* Blocks dispatched and kept for the next ones, at most: a block from
 * malloc is a fresh mapping of its own (record/heap.c fixes the trim
 * threshold, which fixes the mmap threshold at 128 KiB), 256 page faults
 * to fill; under a flood of every allocation with its stack copy that cost
 * was enough for the kernel to give up copies.  A few spare blocks keep
 * the drain off the fault path and the memory bounded. */
#define NSK_SPILL_SPARE 4
/* The longest the oldest record waits for a yielding session's thread
 * before it gets the normal priority back: long enough that the work of a
 * short program's whole run can wait for its end, short enough that the
 * live view and the status line stay current. */
#define NSK_SPILL_LAG_MS 1000
/* A record that asks lends the leave at most this often (spill.h): a
 * build's processes may each have a hot stack, and a lend for each would
 * be the work beside the program that holding avoids. */
#define NSK_SPILL_ASK_MS 250
/* The draining thread's nice value: it runs ahead of the program.  Its
 * work is copying, a few percent of a CPU at most, but a ring buffer it
 * leaves alone for longer than the ring holds (an eighth of a second of
 * CPU samples) drops what comes next: at nice 0 beside cpu_hot's two
 * threads and other work on two CPUs, a 3 s recording lost 2,147 samples
 * (cpu.ringbuf).  Only with CAP_SYS_NICE; without it, nice 0. */
#define NSK_SPILL_NICE (-5)
/* epoll data of the yield's fd (ring buffers are 0..NSK_SPILL_RINGS-1) */
#define NSK_SPILL_HURRY_FD NSK_SPILL_RINGS

struct block {
	struct block *next;
	size_t used, size;
	size_t off; /* dispatched up to here */
	uint64_t at; /* when it was handed over (CLOCK_MONOTONIC ns) */
	uint8_t data[];
};

struct entry {
	uint32_t ring;
	uint32_t len;
};

struct ring {
	struct nsk_spill *sp;
	uint32_t index;
	ring_buffer_sample_fn fn;
	void *ctx;
	struct nsk_ringbuf *rb;
	size_t budget; /* bytes this pass may still take */
	nsk_spill_asks_fn asks;
};

struct nsk_spill {
	struct ring rings[NSK_SPILL_RINGS];
	uint32_t nrings;
	int ep;			   /* every ring buffer's epoll fd */
	int poll_ms;		   /* nsk_spill__set_poll_ms */
	pthread_mutex_t lock;	   /* the ring buffers and everything below */
	struct block *head, *tail; /* filled, for the session's thread */
	struct block *spare;	   /* dispatched, NSK_SPILL_BLOCK each */
	int nspare;
	struct block *cur;	   /* being filled */
	size_t queued;		   /* bytes in blocks not yet dispatched */
	size_t cap;
	int efd;
	pthread_t thread;
	int running, stop;
	uint64_t dropped; /* records that could not be stashed (no memory) */
	int asked;	  /* a record asked since the last lend for one */
	uint64_t asked_lent; /* when the last lend for one was (ns), 0 none */
	/* nsk_spill__yield; atomics, set by either thread */
	int consumer;	/* the session's thread (its tid) */
	int yielding;	/* it gives way while lent is 0 */
	int holds;	/* giving way is holding the records, not SCHED_IDLE */
	int lent;	/* it has the normal priority (the leave) now */
	int hurry_fd;	/* in ep while it may still hurry; -1 none */
	uint64_t hurry_at;  /* hurry then (CLOCK_MONOTONIC ns); 0 none */
	uint64_t rested_ns; /* the loop last came round (nsk_spill__rest) */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int nsk_spill__new(size_t cap, struct nsk_spill **out)
{
	struct nsk_spill *sp = calloc(1, sizeof(*sp));

	*out = NULL;
	if (!sp)
		return -ENOMEM;
	sp->cap = cap;
	sp->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sp->ep = epoll_create1(EPOLL_CLOEXEC);
	if (sp->efd < 0 || sp->ep < 0) {
		int err = -errno;

		if (sp->efd >= 0)
			close(sp->efd);
		if (sp->ep >= 0)
			close(sp->ep);
		free(sp);
		return err;
	}
	pthread_mutex_init(&sp->lock, NULL);
	sp->hurry_fd = -1;
	sp->poll_ms = NSK_SPILL_POLL_MS;
	*out = sp;
	return 0;
}

/* Moves the current block to the list; under the lock. */
static void publish(struct nsk_spill *sp)
{
	if (!sp->cur || !sp->cur->used)
		return;
	sp->cur->at = now_ns();
	if (sp->tail)
		sp->tail->next = sp->cur;
	else
		sp->head = sp->cur;
	sp->tail = sp->cur;
	sp->cur = NULL;
}

/* ring buffer callback: copies the record; under the lock.  A negative
 * return stops the consume after this record (it has already moved
 * the consumer position past it): the pass's budget is spent, or the cap
 * is reached and the kernel side keeps (and drops) the rest. */
static int stash(void *ctx, void *data, size_t len)
{
	struct ring *r = ctx;
	struct nsk_spill *sp = r->sp;
	size_t need = (sizeof(struct entry) + len + 7) & ~(size_t)7;
	struct entry e = { r->index, (uint32_t)len };

	if (sp->cur && sp->cur->size - sp->cur->used < need)
		publish(sp);
	if (!sp->cur && sp->spare && sp->spare->size >= need) {
		sp->cur = sp->spare;
		sp->spare = sp->cur->next;
		sp->nspare--;
		sp->cur->next = NULL;
		sp->cur->used = 0;
		sp->cur->off = 0;
	}
	if (!sp->cur) {
		size_t size = need > NSK_SPILL_BLOCK ? need : NSK_SPILL_BLOCK;

		sp->cur = malloc(sizeof(*sp->cur) + size);
		if (!sp->cur) {
			sp->dropped++;
			return 0;
		}
		sp->cur->next = NULL;
		sp->cur->used = 0;
		sp->cur->off = 0;
		sp->cur->size = size;
	}
	memcpy(sp->cur->data + sp->cur->used, &e, sizeof(e));
	memcpy(sp->cur->data + sp->cur->used + sizeof(e), data, len);
	if (r->asks && !sp->asked && r->asks(data, len))
		sp->asked = 1;
	sp->cur->used += need;
	sp->queued += need;
	r->budget = r->budget > need ? r->budget - need : 0;
	return !r->budget || sp->queued >= sp->cap ? -EAGAIN : 0;
}

int nsk_spill__add(struct nsk_spill *sp, int map_fd, ring_buffer_sample_fn fn,
		   void *ctx, nsk_spill_asks_fn asks)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ring *r;
	int err;

	if (sp->running || sp->nrings == NSK_SPILL_RINGS)
		return -EINVAL;
	r = &sp->rings[sp->nrings];
	*r = (struct ring){ sp, sp->nrings, fn, ctx, NULL, 0, asks };
	err = nsk_ringbuf__new(map_fd, stash, r, &r->rb);
	if (err)
		return err;
	ev.data.u32 = sp->nrings;
	if (epoll_ctl(sp->ep, EPOLL_CTL_ADD, nsk_ringbuf__fd(r->rb), &ev)) {
		err = -errno;
		nsk_ringbuf__free(r->rb);
		r->rb = NULL;
		return err;
	}
	sp->nrings++;
	return 0;
}

static void lend(struct nsk_spill *sp);

/* Blocks the session's thread has dispatched come back here and this
 * thread frees what is past NSK_SPILL_SPARE, under the lock.  A free in
 * the session's thread would take this thread's malloc arena lock (the
 * block came from it), and held by an idle thread that was preempted it
 * would stop this one in its next malloc while the rings fill. */
static void trim_spares(struct nsk_spill *sp)
{
	while (sp->nspare > NSK_SPILL_SPARE) {
		struct block *b = sp->spare;

		sp->spare = b->next;
		sp->nspare--;
		free(b);
	}
}

/* The draining thread's lock.  The session's thread may hold it while it
 * gives way, and an idle thread preempted inside its few instructions
 * under the lock keeps it for as long as the machine stays busy, while the
 * ring buffers fill (seen: 988 CPU samples lost in a 3 s recording beside
 * other work).  So a lock found taken first lends the holder the normal
 * priority: priority inheritance by hand (a PI mutex does not raise a
 * SCHED_IDLE thread's weight). */
static void drain_lock(struct nsk_spill *sp)
{
	if (!pthread_mutex_trylock(&sp->lock))
		return;
	/* an idle session's thread holding the lock must get to let go; a
	 * holding one runs at its priority and lets go at once */
	if (__atomic_load_n(&sp->yielding, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&sp->holds, __ATOMIC_ACQUIRE))
		lend(sp);
	pthread_mutex_lock(&sp->lock);
}

/* Takes at most NSK_SPILL_PASS bytes from each ring buffer, under the lock
 * one ring buffer at a time.  Returns whether some ring buffer had more
 * (its budget ran out), or -1 when the cap is reached. */
static int pass(struct nsk_spill *sp)
{
	int more = 0;

	for (uint32_t i = 0; i < sp->nrings; i++) {
		struct ring *r = &sp->rings[i];

		drain_lock(sp);
		if (sp->queued >= sp->cap) {
			publish(sp);
			pthread_mutex_unlock(&sp->lock);
			return -1;
		}
		r->budget = NSK_SPILL_PASS;
		nsk_ringbuf__consume(r->rb);
		if (!r->budget)
			more = 1;
		publish(sp);
		trim_spares(sp);
		pthread_mutex_unlock(&sp->lock);
	}
	return more;
}

/* ---- the session's thread giving way ------------------------------------ */

static int set_policy(int tid, int policy)
{
	struct sched_param p = { 0 };

	/* the raw call: no glibc state, so a signal handler may make it */
	return syscall(SYS_sched_setscheduler, tid, policy, &p) ? -errno : 0;
}

/* The normal priority, or the leave to dispatch, for the session's
 * thread, until it takes it back. */
static void lend(struct nsk_spill *sp)
{
	int want = 0;

	if (!__atomic_compare_exchange_n(&sp->lent, &want, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	if (!__atomic_load_n(&sp->holds, __ATOMIC_ACQUIRE))
		set_policy(__atomic_load_n(&sp->consumer, __ATOMIC_ACQUIRE), SCHED_OTHER);
	/* the blocks that waited are told of now (run) */
}

/* Whether the session's thread holds the records back now. */
static int holding(struct nsk_spill *sp)
{
	return __atomic_load_n(&sp->holds, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&sp->yielding, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&sp->lent, __ATOMIC_ACQUIRE);
}

/* From the draining thread after each pass: lends when the oldest block
 * has waited too long or the blocks fill an eighth of the cap, or the
 * session's loop has not come round for as long, or a record asked (not
 * twice within NSK_SPILL_ASK_MS); hurries when its time has come. */
static void lend_if_late(struct nsk_spill *sp)
{
	uint64_t at, now, until;
	size_t queued;
	int ask;

	if (!__atomic_load_n(&sp->yielding, __ATOMIC_ACQUIRE))
		return;
	now = now_ns();
	until = __atomic_load_n(&sp->hurry_at, __ATOMIC_ACQUIRE);
	if (until && now >= until) {
		nsk_spill__hurry(sp);
		return;
	}
	if (__atomic_load_n(&sp->lent, __ATOMIC_ACQUIRE))
		return;
	drain_lock(sp);
	at = sp->head ? sp->head->at : 0;
	queued = sp->queued;
	ask = sp->asked && sp->head &&
	      (!sp->asked_lent || now - sp->asked_lent >= NSK_SPILL_ASK_MS * 1000000ull);
	if (ask) {
		sp->asked = 0;
		sp->asked_lent = now;
	}
	pthread_mutex_unlock(&sp->lock);
	if (ask || (at && now - at >= NSK_SPILL_LAG_MS * 1000000ull) || queued >= sp->cap / 8 ||
	    now - __atomic_load_n(&sp->rested_ns, __ATOMIC_ACQUIRE) >=
		    NSK_SPILL_LAG_MS * 1000000ull)
		lend(sp);
}

/* Lent and about to wait with nothing left to dispatch: the session's
 * thread gives way again (idle first, then lent 0, so a lend racing with
 * this one is not lost: the draining thread lends only from lent 0). */
void nsk_spill__rest(struct nsk_spill *sp)
{
	int empty;

	if (!sp || !__atomic_load_n(&sp->yielding, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&sp->rested_ns, now_ns(), __ATOMIC_RELEASE);
	if (!__atomic_load_n(&sp->lent, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&sp->lock);
	empty = !sp->head;
	pthread_mutex_unlock(&sp->lock);
	if (!empty)
		return;
	if (__atomic_load_n(&sp->holds, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&sp->lent, 0, __ATOMIC_RELEASE);
		return; /* a hurry meanwhile set yielding 0: holding() says no */
	}
	set_policy(0, SCHED_IDLE);
	__atomic_store_n(&sp->lent, 0, __ATOMIC_RELEASE);
	/* a hurry between the look at yielding above and the idle: it set
	 * the normal priority first, and would leave this thread idle for
	 * good (seen: 4-10 s to stop at load 25) */
	if (!__atomic_load_n(&sp->yielding, __ATOMIC_ACQUIRE))
		set_policy(0, SCHED_OTHER);
}

int nsk_spill__yield(struct nsk_spill *sp, int fd, uint64_t until)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = NSK_SPILL_HURRY_FD };
	int err;

	if (!sp || !sp->running || !nsk_caps__have(NSK_CAP_SYS_NICE) /* a SCHED_IDLE thread may come back */)
		return -EPERM;
	__atomic_store_n(&sp->consumer, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	__atomic_store_n(&sp->hurry_at, until, __ATOMIC_RELEASE);
	__atomic_store_n(&sp->rested_ns, now_ns(), __ATOMIC_RELEASE);
	if (fd >= 0 && !epoll_ctl(sp->ep, EPOLL_CTL_ADD, fd, &ev))
		__atomic_store_n(&sp->hurry_fd, fd, __ATOMIC_RELEASE);
	err = set_policy(0, SCHED_IDLE);
	if (!err)
		__atomic_store_n(&sp->yielding, 1, __ATOMIC_RELEASE);
	return err;
}

int nsk_spill__hold(struct nsk_spill *sp, int fd, uint64_t until)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = NSK_SPILL_HURRY_FD };

	if (!sp || !sp->running)
		return -EINVAL;
	__atomic_store_n(&sp->holds, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&sp->hurry_at, until, __ATOMIC_RELEASE);
	__atomic_store_n(&sp->rested_ns, now_ns(), __ATOMIC_RELEASE);
	if (fd >= 0 && !epoll_ctl(sp->ep, EPOLL_CTL_ADD, fd, &ev))
		__atomic_store_n(&sp->hurry_fd, fd, __ATOMIC_RELEASE);
	__atomic_store_n(&sp->yielding, 1, __ATOMIC_RELEASE);
	return 0;
}

void nsk_spill__hurry(struct nsk_spill *sp)
{
	const uint64_t one = 1;

	if (!sp || !__atomic_exchange_n(&sp->yielding, 0, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&sp->lent, 1, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&sp->holds, __ATOMIC_ACQUIRE))
		set_policy(__atomic_load_n(&sp->consumer, __ATOMIC_ACQUIRE), SCHED_OTHER);
	/* and wake it: a signal taken by another thread did not */
	if (write(sp->efd, &one, sizeof(one)) < 0) {
		/* the counter is full: it is awake anyway */
	}
}

/* The yield's fd became readable: hurry, and stop watching it (a pidfd
 * stays readable). */
static void on_hurry_fd(struct nsk_spill *sp)
{
	int fd = __atomic_exchange_n(&sp->hurry_fd, -1, __ATOMIC_ACQ_REL);

	if (fd >= 0)
		epoll_ctl(sp->ep, EPOLL_CTL_DEL, fd, NULL);
	nsk_spill__hurry(sp);
}

static void *run(void *arg)
{
	struct nsk_spill *sp = arg;
	const uint64_t one = 1;

	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), NSK_SPILL_NICE)) {
		/* no CAP_SYS_NICE: the normal priority */
	}

	while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
		struct epoll_event evs[NSK_SPILL_RINGS + 1];
		int more, full, n;

		n = epoll_wait(sp->ep, evs, NSK_SPILL_RINGS + 1, sp->poll_ms);
		for (int i = 0; i < n; i++)
			if (evs[i].data.u32 == NSK_SPILL_HURRY_FD)
				on_hurry_fd(sp);
		full = pass(sp) < 0;
		lend_if_late(sp);
		drain_lock(sp);
		more = sp->head != NULL;
		pthread_mutex_unlock(&sp->lock);
		/* held back: the session's thread is not woken for them */
		if (more && !holding(sp) && write(sp->efd, &one, sizeof(one)) < 0) {
			/* the counter is full: the session is woken anyway */
		}
		if (full)
			usleep(NSK_SPILL_POLL_MS * 1000);
	}
	return NULL;
}

void nsk_spill__set_poll_ms(struct nsk_spill *sp, int ms)
{
	sp->poll_ms = ms > 0 ? ms : NSK_SPILL_POLL_MS;
}

int nsk_spill__start(struct nsk_spill *sp)
{
	int err;

	if (!sp->nrings || sp->running)
		return 0;
	err = -pthread_create(&sp->thread, NULL, run, sp);
	if (!err)
		sp->running = 1;
	return err;
}

int nsk_spill__event_fd(const struct nsk_spill *sp)
{
	return sp->efd;
}

int nsk_spill__dispatch(struct nsk_spill *sp, uint64_t deadline)
{
	uint64_t count;
	int n = 0;

	if (!sp || !sp->nrings)
		return 0;
	if (read(sp->efd, &count, sizeof(count)) < 0) {
		/* nothing signalled: still drain below */
	}
	if (holding(sp))
		return 0; /* not yet (nsk_spill__hold) */
	/* While the thread runs, draining is its job alone: this thread
	 * holding the lock through a drain, and preempted, would stall it.
	 * Once it has stopped, the ring buffers are drained from here, pass
	 * by pass, between the blocks. */
	for (;;) {
		struct block *b;
		size_t done;
		int more = 0;

		if (!sp->running)
			more = pass(sp) != 0;
		pthread_mutex_lock(&sp->lock);
		b = sp->head;
		pthread_mutex_unlock(&sp->lock);
		if (!b && !more)
			return 0;
		if (deadline && now_ns() >= deadline)
			return 1;
		if (!b)
			continue;
		/* Only this thread takes blocks off the list, and the other
		 * only appends: b stays the head while it is read. */
		done = b->off;
		while (b->off < b->used) {
			struct entry e;
			const struct ring *r;

			if (deadline && ++n % NSK_SPILL_CHECK == 0 &&
			    now_ns() >= deadline)
				break;
			memcpy(&e, b->data + b->off, sizeof(e));
			r = &sp->rings[e.ring];
			r->fn(r->ctx, b->data + b->off + sizeof(e), e.len);
			b->off += (sizeof(e) + e.len + 7) & ~(size_t)7;
		}
		pthread_mutex_lock(&sp->lock);
		sp->queued -= b->off - done;
		if (b->off == b->used) {
			sp->head = b->next;
			if (!sp->head)
				sp->tail = NULL;
			/* handed back, never freed here: see trim_spares */
			b->next = sp->spare;
			sp->spare = b;
			sp->nspare++;
			b = NULL;
		}
		pthread_mutex_unlock(&sp->lock);
		if (b && b->off < b->used)
			return 1; /* the deadline passed */
		free(b);
	}
}

uint64_t nsk_spill__discard(struct nsk_spill *sp)
{
	uint64_t n = 0;

	if (!sp || !sp->nrings)
		return 0;
	nsk_spill__stop(sp);
	pthread_mutex_lock(&sp->lock);
	publish(sp);
	while (sp->head) {
		struct block *b = sp->head;

		for (size_t off = b->off; off < b->used; n++) {
			struct entry e;

			memcpy(&e, b->data + off, sizeof(e));
			off += (sizeof(e) + e.len + 7) & ~(size_t)7;
		}
		sp->head = b->next;
		free(b);
	}
	sp->tail = NULL;
	sp->queued = 0;
	/* and what the kernel holds, one ring's worth each at most: the
	 * producers may write on (a storm outside the recording), and
	 * counting until they stop took 0.6 s at load 13 */
	for (uint32_t i = 0; i < sp->nrings; i++)
		n += nsk_ringbuf__skip(sp->rings[i].rb);
	pthread_mutex_unlock(&sp->lock);
	return n;
}

uint64_t nsk_spill__take_dropped(struct nsk_spill *sp)
{
	uint64_t n;

	pthread_mutex_lock(&sp->lock);
	n = sp->dropped;
	sp->dropped = 0;
	pthread_mutex_unlock(&sp->lock);
	return n;
}

void nsk_spill__stop(struct nsk_spill *sp)
{
	nsk_spill__hurry(sp);
	if (!sp || !sp->running)
		return;
	__atomic_store_n(&sp->stop, 1, __ATOMIC_RELEASE);
	pthread_join(sp->thread, NULL);
	sp->running = 0;
}

void nsk_spill__free(struct nsk_spill *sp)
{
	if (!sp)
		return;
	nsk_spill__stop(sp);
	while (sp->head) {
		struct block *next = sp->head->next;

		free(sp->head);
		sp->head = next;
	}
	free(sp->cur);
	while (sp->spare) {
		struct block *next = sp->spare->next;

		free(sp->spare);
		sp->spare = next;
	}
	for (uint32_t i = 0; i < sp->nrings; i++)
		nsk_ringbuf__free(sp->rings[i].rb);
	close(sp->ep);
	close(sp->efd);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}
