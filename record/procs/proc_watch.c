/* The process-event watcher (see proc_watch.h).
 *
 * One lock guards the ring buffer and the queue, so the thread and the main
 * thread may both drain the ring buffer (the main thread does before it
 * resolves a stack) and events stay in order.  Re-snapshots are due 5 and
 * 50 ms after an exec; a snapshot of a process that is gone is dropped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <bpf/libbpf.h>

#include "record/procs/maps.h"
#include "record/procs/proc_watch.h"
#include "record/session.h"

#define MAX_DUE 64

static const uint64_t resnap_ns[] = { 5000000ull, 50000000ull };

struct due {
	uint32_t pid;
	uint64_t at;
};

struct nsk_proc_watch {
	pthread_mutex_t lock;
	pthread_t thread;
	int running;
	int stop; /* atomic */
	struct ring_buffer *rb;
	struct nsk_proc_item *head, *tail;
	struct due due[MAX_DUE];
	int ndue;
};

static void push(struct nsk_proc_watch *w, struct nsk_proc_item *it)
{
	if (w->tail)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
}

static struct nsk_proc_item *snapshot(uint32_t pid)
{
	struct nsk_proc_item *it = calloc(1, sizeof(*it));
	size_t len;

	if (!it)
		return NULL;
	it->maps_at = nsk_session__now();
	it->maps = nsk_maps__snapshot(pid, &len);
	it->ev.pid = pid;
	return it;
}

/* Under the lock. */
static int on_event(void *ctx, void *data, size_t size)
{
	const struct nsk_ev_proc *e = data;
	struct nsk_proc_watch *w = ctx;
	struct nsk_proc_item *it;

	if (size < sizeof(*e))
		return 0;
	/* A new program, or a new process: its maps now, while it lives. */
	if (e->hdr.type == NSK_EV_PROC_EXEC ||
	    (e->hdr.type == NSK_EV_PROC_FORK && e->pid != e->ppid))
		it = snapshot(e->pid);
	else
		it = calloc(1, sizeof(*it));
	if (!it)
		return 0; /* the event is lost; so would be the recording */
	it->ev = *e;
	push(w, it);
	if (e->hdr.type == NSK_EV_PROC_EXEC) {
		for (size_t i = 0; i < sizeof(resnap_ns) / sizeof(resnap_ns[0]); i++) {
			if (w->ndue == MAX_DUE)
				break;
			w->due[w->ndue++] = (struct due){ e->pid, it->maps_at + resnap_ns[i] };
		}
	}
	return 0;
}

/* Under the lock: the re-snapshots that are due. */
static void resnap(struct nsk_proc_watch *w, uint64_t now)
{
	for (int i = 0; i < w->ndue;) {
		struct nsk_proc_item *it;

		if (w->due[i].at > now) {
			i++;
			continue;
		}
		it = snapshot(w->due[i].pid);
		/* an exited process (a zombie) has empty maps: nothing new */
		if (it && it->maps && *it->maps)
			push(w, it);
		else
			nsk_proc_item__free(it);
		w->due[i] = w->due[--w->ndue];
	}
}

static void *run(void *arg)
{
	struct nsk_proc_watch *w = arg;
	int ep = ring_buffer__epoll_fd(w->rb);

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		struct epoll_event ev;
		uint64_t now = nsk_session__now(), next = now + 50000000ull;
		int timeout;

		pthread_mutex_lock(&w->lock);
		for (int i = 0; i < w->ndue; i++)
			if (w->due[i].at < next)
				next = w->due[i].at;
		pthread_mutex_unlock(&w->lock);
		timeout = next > now ? (int)((next - now) / 1000000) + 1 : 0;
		epoll_wait(ep, &ev, 1, timeout);
		pthread_mutex_lock(&w->lock);
		ring_buffer__consume(w->rb);
		resnap(w, nsk_session__now());
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

int nsk_proc_watch__start(int ringbuf_map_fd, struct nsk_proc_watch **out)
{
	struct nsk_proc_watch *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	w->rb = ring_buffer__new(ringbuf_map_fd, on_event, w, NULL);
	if (!w->rb) {
		err = -errno;
		nsk_proc_watch__free(w);
		return err;
	}
	err = -pthread_create(&w->thread, NULL, run, w);
	if (err) {
		nsk_proc_watch__free(w);
		return err;
	}
	w->running = 1;
	*out = w;
	return 0;
}

int nsk_proc_watch__epoll_fd(const struct nsk_proc_watch *w)
{
	return ring_buffer__epoll_fd(w->rb);
}

struct nsk_proc_item *nsk_proc_watch__take(struct nsk_proc_watch *w)
{
	struct nsk_proc_item *list;

	pthread_mutex_lock(&w->lock);
	ring_buffer__consume(w->rb);
	list = w->head;
	w->head = w->tail = NULL;
	pthread_mutex_unlock(&w->lock);
	return list;
}

void nsk_proc_item__free(struct nsk_proc_item *it)
{
	if (!it)
		return;
	free(it->maps);
	free(it);
}

void nsk_proc_watch__free(struct nsk_proc_watch *w)
{
	if (!w)
		return;
	if (w->running) {
		__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
		pthread_join(w->thread, NULL);
	}
	while (w->head) {
		struct nsk_proc_item *next = w->head->next;

		nsk_proc_item__free(w->head);
		w->head = next;
	}
	ring_buffer__free(w->rb);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
