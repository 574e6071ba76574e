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
/* offcpu (view_blocking.c) */
extern const struct nsk_view nsk_view_blocking;
/* syscall (view_syscall.c) */
extern const struct nsk_view nsk_view_syscall;
extern const struct nsk_view nsk_view_syscall_thread;
extern const struct nsk_view nsk_view_syscall_path;
extern const struct nsk_view nsk_view_syscall_slow;
/* net (view_retransmit.c) */
extern const struct nsk_view nsk_view_net_retransmit;

#endif
