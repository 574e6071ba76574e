/* The process-event watcher: a thread that takes fork/exec/exit events off
 * the ring buffer of bpf/proc.bpf.c the moment they come, and snapshots the
 * maps of each new process and program right away and again shortly after (once the
 * dynamic loader has mapped the libraries).  The main thread may be busy
 * symbolizing for a while; a process that lives 10 ms still gets its maps
 * read.  The main thread handles the events in order (nsk_proc_watch__take).
 */
#ifndef NUSKU_RECORD_PROC_WATCH_H
#define NUSKU_RECORD_PROC_WATCH_H

#include <stdint.h>

#include <nusku/events/proc.h>

struct nsk_proc_watch;

struct nsk_proc_item {
	struct nsk_proc_item *next;
	struct nsk_ev_proc ev; /* ev.hdr.type 0: a later maps snapshot only */
	char *maps;	       /* /proc/PID/maps text, or NULL */
	uint64_t maps_at;      /* CLOCK_MONOTONIC ns when the read began */
};

int nsk_proc_watch__start(int ringbuf_map_fd, struct nsk_proc_watch **out);
/* Becomes readable when events arrive (for the main event loop). */
int nsk_proc_watch__epoll_fd(const struct nsk_proc_watch *w);
/* Everything that arrived so far, oldest first (the ring buffer is drained
 * first, so no event the kernel wrote before the call is missed). */
struct nsk_proc_item *nsk_proc_watch__take(struct nsk_proc_watch *w);
void nsk_proc_item__free(struct nsk_proc_item *it);
/* Stops the thread; accepts NULL. */
void nsk_proc_watch__free(struct nsk_proc_watch *w);

#endif
