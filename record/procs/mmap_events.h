/* Mappings from the kernel at the moment they are made.
 *
 * A dummy software perf event per CPU with mmap2 and comm_exec: the kernel
 * writes a record for every executable mapping (file-backed or anonymous,
 * the vdso included) and for every exec, synchronously, in the process that
 * makes it.  perf record learns address spaces the same way.  A process
 * that lives one millisecond after its exec is then as well named as one
 * that lives an hour; /proc/PID/maps is read only for what existed before
 * the recording began (attach).
 *
 * The events watch every task of the machine, and the reader keeps the
 * target's records (proc_watch.c).  Events on the target's own tasks,
 * inherited by its children, would cost each of its context switches,
 * forks and exits the switching of a perf context: 130 ns a switch here,
 * more than the off-CPU signal's own programs (docs/offcpu.md).
 *
 * Records carry CLOCK_MONOTONIC times (use_clockid), the clock of the BPF
 * events, so they sort with them.
 */
#ifndef NUSKU_RECORD_PROCS_MMAP_EVENTS_H
#define NUSKU_RECORD_PROCS_MMAP_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct nsk_mmap_events;

enum nsk_mmap_ev_kind {
	NSK_MMAP_EV_MAP = 1, /* an executable mapping */
	NSK_MMAP_EV_EXEC,    /* pid runs a new program from time on */
	NSK_MMAP_EV_LOST,    /* the kernel dropped count records */
};

struct nsk_mmap_ev {
	uint32_t kind; /* enum nsk_mmap_ev_kind */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t prot, flags;
	uint64_t lost;	  /* NSK_MMAP_EV_LOST */
	const char *path; /* as the process sees it, or "[vdso]", "//anon" */
};

/* Opens the events, one per online CPU, for every process of the machine
 * (the caller keeps what it follows).  -errno when the kernel has no perf
 * events or refuses them. */
int nsk_mmap_events__open(struct nsk_mmap_events **out);
/* The fds to poll for input (EPOLLIN when records wait). */
size_t nsk_mmap_events__fds(const struct nsk_mmap_events *e, const int **fds);
/* Calls fn for every record waiting, oldest first within one CPU.  Returns
 * the number of records read. */
int nsk_mmap_events__read(struct nsk_mmap_events *e,
			  void (*fn)(void *ctx, const struct nsk_mmap_ev *ev),
			  void *ctx);
void nsk_mmap_events__free(struct nsk_mmap_events *e); /* NULL is fine */

#endif
