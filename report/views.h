/* The views each signal defines, listed in views.c. */
#ifndef NUSKU_REPORT_VIEWS_H
#define NUSKU_REPORT_VIEWS_H

#include "report/report.h"

/* cpu (view_cpu.c) */
extern const struct nsk_view nsk_view_cpu_function;
extern const struct nsk_view nsk_view_cpu_stack;
extern const struct nsk_view nsk_view_cpu_thread;
/* alloc (view_alloc.c) */
extern const struct nsk_view nsk_view_alloc_site;
extern const struct nsk_view nsk_view_alloc_leaks;
extern const struct nsk_view nsk_view_alloc_memory_time;
/* The memory views' summary notes (alloc_notes.c): live at exit, reserved
 * address space, an invisible Go heap.  0 or -EIO. */
int nsk_alloc_notes__add(struct nsk_report *rep);
/* offcpu (view_blocking.c) */
extern const struct nsk_view nsk_view_blocking;
/* syscall (view_syscall.c) */
extern const struct nsk_view nsk_view_syscall;
extern const struct nsk_view nsk_view_syscall_thread;
extern const struct nsk_view nsk_view_syscall_path;
extern const struct nsk_view nsk_view_syscall_slow;
/* What exports write of them (each defined beside its views) */
extern const struct nsk_measure *const nsk_measure_cpu;
extern const struct nsk_measure *const nsk_measure_alloc;
extern const struct nsk_measure *const nsk_measure_live;
extern const struct nsk_measure *const nsk_measure_offcpu;
extern const struct nsk_measure *const nsk_measure_syscall;
/* net (view_retransmit.c) */
extern const struct nsk_view nsk_view_net_retransmit;

#endif
