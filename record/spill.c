/* Ring buffers drained by a thread into memory (see spill.h).
 *
 * The thread copies each record into the current block as (ring, length,
 * bytes) and hands blocks over whole at the end of each pass.  The
 * session's thread takes the list of blocks under the lock, for a moment,
 * and runs the callbacks without it; once the thread has stopped, it
 * drains the ring buffers itself.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "record/spill.h"

#define NSK_SPILL_RINGS 16
#define NSK_SPILL_BLOCK (1u << 20)
#define NSK_SPILL_POLL_MS 5 /* the longest a record waits in the kernel */

struct block {
	struct block *next;
	size_t used, size;
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
};

struct nsk_spill {
	struct ring_buffer *rb;
	struct ring rings[NSK_SPILL_RINGS];
	uint32_t nrings;
	pthread_mutex_t lock; /* the ring buffers and everything below */
	struct block *head, *tail; /* filled, for the session's thread */
	struct block *cur;	   /* being filled */
	size_t queued;		   /* bytes in blocks not yet dispatched */
	size_t cap;
	int efd;
	pthread_t thread;
	int running, stop;
	uint64_t dropped; /* records that could not be stashed (no memory) */
};

int nsk_spill__new(size_t cap, struct nsk_spill **out)
{
	struct nsk_spill *sp = calloc(1, sizeof(*sp));

	*out = NULL;
	if (!sp)
		return -ENOMEM;
	sp->cap = cap;
	sp->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sp->efd < 0) {
		free(sp);
		return -errno;
	}
	pthread_mutex_init(&sp->lock, NULL);
	*out = sp;
	return 0;
}

/* Moves the current block to the list; under the lock. */
static void publish(struct nsk_spill *sp)
{
	if (!sp->cur || !sp->cur->used)
		return;
	if (sp->tail)
		sp->tail->next = sp->cur;
	else
		sp->head = sp->cur;
	sp->tail = sp->cur;
	sp->cur = NULL;
}

/* ring_buffer callback: copies the record; under the lock. */
static int stash(void *ctx, void *data, size_t len)
{
	struct ring *r = ctx;
	struct nsk_spill *sp = r->sp;
	size_t need = (sizeof(struct entry) + len + 7) & ~(size_t)7;
	struct entry e = { r->index, (uint32_t)len };

	if (sp->cur && sp->cur->size - sp->cur->used < need)
		publish(sp);
	if (!sp->cur) {
		size_t size = need > NSK_SPILL_BLOCK ? need : NSK_SPILL_BLOCK;

		sp->cur = malloc(sizeof(*sp->cur) + size);
		if (!sp->cur) {
			sp->dropped++;
			return 0;
		}
		sp->cur->next = NULL;
		sp->cur->used = 0;
		sp->cur->size = size;
	}
	memcpy(sp->cur->data + sp->cur->used, &e, sizeof(e));
	memcpy(sp->cur->data + sp->cur->used + sizeof(e), data, len);
	sp->cur->used += need;
	sp->queued += need;
	return 0;
}

int nsk_spill__add(struct nsk_spill *sp, int map_fd, ring_buffer_sample_fn fn,
		   void *ctx)
{
	struct ring *r;

	if (sp->running || sp->nrings == NSK_SPILL_RINGS)
		return -EINVAL;
	r = &sp->rings[sp->nrings];
	*r = (struct ring){ sp, sp->nrings, fn, ctx };
	if (!sp->rb) {
		sp->rb = ring_buffer__new(map_fd, stash, r, NULL);
		if (!sp->rb)
			return -errno;
	} else if (ring_buffer__add(sp->rb, map_fd, stash, r)) {
		return -errno;
	}
	sp->nrings++;
	return 0;
}

static void *run(void *arg)
{
	struct nsk_spill *sp = arg;
	int ep = ring_buffer__epoll_fd(sp->rb);
	const uint64_t one = 1;

	while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
		struct epoll_event ev;
		int more, full;

		epoll_wait(ep, &ev, 1, NSK_SPILL_POLL_MS);
		pthread_mutex_lock(&sp->lock);
		/* past the cap, the kernel side keeps (and drops) the rest */
		full = sp->queued >= sp->cap;
		if (!full)
			ring_buffer__consume(sp->rb);
		publish(sp);
		more = sp->head != NULL;
		pthread_mutex_unlock(&sp->lock);
		if (more && write(sp->efd, &one, sizeof(one)) < 0) {
			/* the counter is full: the session is woken anyway */
		}
		if (full)
			usleep(NSK_SPILL_POLL_MS * 1000);
	}
	return NULL;
}

int nsk_spill__start(struct nsk_spill *sp)
{
	int err;

	if (!sp->rb || sp->running)
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

void nsk_spill__dispatch(struct nsk_spill *sp)
{
	struct block *list;
	uint64_t count;

	if (!sp || !sp->rb)
		return;
	if (read(sp->efd, &count, sizeof(count)) < 0) {
		/* nothing signalled: still drain below */
	}
	pthread_mutex_lock(&sp->lock);
	/* While the thread runs, draining is its job alone: this thread
	 * holding the lock through a drain, and preempted, would stall it. */
	if (!sp->running)
		ring_buffer__consume(sp->rb);
	publish(sp);
	list = sp->head;
	sp->head = sp->tail = NULL;
	pthread_mutex_unlock(&sp->lock);
	while (list) {
		struct block *next = list->next;

		for (size_t off = 0; off < list->used;) {
			struct entry e;
			const struct ring *r;

			memcpy(&e, list->data + off, sizeof(e));
			r = &sp->rings[e.ring];
			r->fn(r->ctx, list->data + off + sizeof(e), e.len);
			off += (sizeof(e) + e.len + 7) & ~(size_t)7;
		}
		pthread_mutex_lock(&sp->lock);
		sp->queued -= list->used;
		pthread_mutex_unlock(&sp->lock);
		free(list);
		list = next;
	}
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
	ring_buffer__free(sp->rb);
	close(sp->efd);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}
