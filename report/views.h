/* The views each signal defines, listed in views.c. */
#ifndef NUSKU_REPORT_VIEWS_H
#define NUSKU_REPORT_VIEWS_H

#include "report/report.h"

/* cpu (view_cpu.c) */
extern const struct nsk_view nsk_view_cpu_function;
extern const struct nsk_view nsk_view_cpu_stack;
extern const struct nsk_view nsk_view_cpu_process;
extern const struct nsk_view nsk_view_cpu_thread;
/* alloc (view_alloc.c) */
extern const struct nsk_view nsk_view_alloc_site;
extern const struct nsk_view nsk_view_alloc_leaks;
extern const struct nsk_view nsk_view_alloc_memory_time;
/* Builds temp.asite (stack_id, func_id: each stack's site) and temp.asum
 * (one row per site: allocs, bytes, frees, ...) of the selected
 * allocations, for nusku diff.  0 or a negative errno (rep->err). */
int nsk_alloc__site_sums(struct nsk_report *rep);
/* Builds temp.asite alone, over every allocation row and sum loaded.  0
 * or a negative errno with a message in err. */
int nsk_alloc__sites(sqlite3 *db, char *err, size_t len);
/* The memory views' summary notes (alloc_notes.c): live at exit, reserved
 * address space, an invisible Go heap.  0 or -EIO. */
int nsk_alloc_notes__add(struct nsk_report *rep);
/* offcpu (view_blocking.c) */
extern const struct nsk_view nsk_view_blocking;
/* temp.bfn(stack_id, function): the program's own function of each stack
 * of the selected intervals, as --by blocking names paths.  0 or -EIO. */
int nsk_blocking__own_functions(struct nsk_report *rep);
/* syscall (view_syscall.c) */
/* The name of the syscall number in SQL column x, as SQL: a format with
 * one %s, the architecture nusku was built for (nsk_syscall_arch). */
#define NSK_SYSCALL_NAME_SQL(x)                                               \
	"COALESCE((SELECT name FROM syscall_name sn WHERE sn.nr = " x " AND " \
	"(sn.kernel = 1 OR NOT EXISTS (SELECT 1 FROM meta WHERE "             \
	"key = 'syscall.arch' AND value <> '%s'))), 'syscall_' || " x ")"
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
