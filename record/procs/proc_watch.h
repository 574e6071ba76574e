/* The process-event watcher: a thread that takes fork/exec/exit events off
 * the ring buffer of bpf/proc.bpf.c, and mapping and exec records off the
 * kernel's mmap stream (mmap_events.h): woken by an exec of a program whose
 * file it does not hold yet, or that the exec check must see at once,
 * else every 50 ms.  For each file mapped it opens the file through
 * /proc/PID/map_files while the process lives, so a program that exits a
 * millisecond later, or whose file is deleted, is still read; the files
 * it keeps for the recording it tells the kernel side, whose execs of them
 * need not wake it.  The main thread may be busy symbolizing
 * for a while; it handles everything in time order (nsk_proc_watch__take).
 *
 * Without the mmap stream (a kernel that refuses it) the watcher instead
 * snapshots /proc/PID/maps of each new process and program right away and
 * again shortly after (once the dynamic loader has mapped the libraries).
 */
#ifndef NUSKU_RECORD_PROC_WATCH_H
#define NUSKU_RECORD_PROC_WATCH_H

#include <stdint.h>

#include <nusku/events/proc.h>

#include "record/procs/mmap_events.h"
#include "record/session.h"

struct nsk_proc_watch;

enum nsk_proc_item_kind {
	NSK_PROC_ITEM_EVENT = 0, /* ev; ev.hdr.type 0: a later maps snapshot */
	NSK_PROC_ITEM_MAP,	 /* map: an executable mapping made */
	NSK_PROC_ITEM_EXEC,	 /* map.pid runs a new program from map.time */
	NSK_PROC_ITEM_MAP_LOST,	 /* map.lost mapping records dropped */
};

struct nsk_proc_item {
	struct nsk_proc_item *next;
	uint32_t kind;	       /* enum nsk_proc_item_kind */
	struct nsk_ev_proc ev; /* NSK_PROC_ITEM_EVENT */
	char *maps;	       /* /proc/PID/maps text, or NULL */
	uint64_t maps_at;      /* CLOCK_MONOTONIC ns when the read began */
	struct nsk_mmap_ev map; /* the others; map.path is owned */
	int map_fd;	       /* the mapped file, opened as it was mapped, or -1 */
	char *args;	       /* an exec's arguments as the kernel read them
				* (NUL after each), or NULL */
	uint32_t args_len;
	uint32_t exec_flags;   /* an exec's NSK_EV_EXEC_* */
};

/* The time an item happened, for ordering. */
uint64_t nsk_proc_item__time(const struct nsk_proc_item *it);

/* mev may be NULL (no mmap stream: maps are snapshotted instead); the
 * watcher owns it from now on.  The stream is the machine's: only the
 * records of the targets in the map targets_fd are kept (followed.h);
 * targets_fd -1 keeps every record (record -a).  Each file the watcher
 * keeps open for the recording goes in the map held_map_fd (-1: none), by
 * its struct nsk_exe_id: an exec of it does not wake the watcher. */
int nsk_proc_watch__start(int ringbuf_map_fd, int held_map_fd, struct nsk_mmap_events *mev,
			  int targets_fd, struct nsk_proc_watch **out);

/* Becomes readable when the main thread must take what arrived now (for
 * the main event loop): an exec the check asks for, or every event once
 * prompt.  Otherwise what arrives waits for the main thread's next look
 * (its tick, or a stack it resolves): woken for every exec, it slowed a
 * loop of fork and exec of /bin/true by ~25 us a program. */
int nsk_proc_watch__urgent_fd(const struct nsk_proc_watch *w);
/* Every event is urgent from now on (allocator uprobes for each new
 * process; maps read from /proc). */
void nsk_proc_watch__set_prompt(struct nsk_proc_watch *w);
/* The check of every exec from now on (nsk_session__check_execs), run on
 * the watcher's thread as each exec is told of, without the watcher's
 * lock; fn NULL: none. */
void nsk_proc_watch__set_check(struct nsk_proc_watch *w, nsk_session_exec_check_fn fn,
			       void *ctx);
/* Everything that arrived so far, oldest first (the ring buffer is drained
 * first, so no event the kernel wrote before the call is missed). */
struct nsk_proc_item *nsk_proc_watch__take(struct nsk_proc_watch *w);
void nsk_proc_item__free(struct nsk_proc_item *it);
/* Stops the thread; accepts NULL. */
void nsk_proc_watch__free(struct nsk_proc_watch *w);

#endif
