/* The table of views: `nusku report --by NAME`.  A signal adds its views
 * (declared in views.h, defined in view_<signal>.c) here; the first entry
 * is the default view. */
#include <stdlib.h>
#include <string.h>

#include "nusku/format.h"

#include "report/load.h"
#include "report/views.h"

const struct nsk_view *const nsk_views[] = {
	/* cpu */
	&nsk_view_cpu_function,
	&nsk_view_cpu_stack,
	&nsk_view_cpu_process,
	&nsk_view_cpu_thread,
	/* alloc */
	&nsk_view_alloc_site,
	&nsk_view_alloc_leaks,
	&nsk_view_alloc_memory_time,
	/* offcpu */
	&nsk_view_blocking,
	/* syscall */
	&nsk_view_syscall,
	&nsk_view_syscall_thread,
	&nsk_view_syscall_path,
	&nsk_view_syscall_slow,
	/* net */
	&nsk_view_net_retransmit,
	NULL
};

const struct nsk_view *nsk_view__find(const char *name)
{
	for (const struct nsk_view *const *v = nsk_views; *v; v++)
		if (!strcmp((*v)->name, name))
			return *v;
	return NULL;
}

/* The measures of `nusku export --by`, in the order --help lists them.
 * Pointers to constants of other files are not constant expressions in
 * C, so the table is built where it is read. */
const struct nsk_measure *nsk_measure__at(unsigned i)
{
	const struct nsk_measure *const m[] = {
		nsk_measure_cpu, nsk_measure_alloc, nsk_measure_live,
		nsk_measure_offcpu, nsk_measure_syscall,
	};

	return i < sizeof(m) / sizeof(m[0]) ? m[i] : NULL;
}

const struct nsk_measure *nsk_measure__find(const char *name)
{
	const struct nsk_measure *m;
	const struct nsk_view *v;

	for (unsigned i = 0; (m = nsk_measure__at(i)); i++)
		if (!strcmp(m->name, name))
			return m;
	v = nsk_view__find(name);
	return v ? v->measure : NULL;
}

unsigned nsk_view__sums(const struct nsk_report_opts *o,
			const struct nsk_view *v, int stacks_only)
{
	/* NUSKU_ALLOC_ROWS=1: rows whatever the view, the path the sums
	 * must agree with (tests/e2e/report_alloc_sums.sh) */
	const char *rows = getenv("NUSKU_ALLOC_ROWS");

	if (!(v->reads & NSK_VIEW_READS_ALLOC) || o->sql || o->db ||
	    (rows && *rows && strcmp(rows, "0")))
		return 0;
	if (stacks_only || o->tree || o->folded ||
	    !(v->reads & NSK_VIEW_READS_ALLOC_TIME))
		return NSK_LOAD_SUMS;
	return NSK_LOAD_SUMS | NSK_LOAD_SUMS_TIME;
}

uint64_t nsk_view__skips(const struct nsk_view *v)
{
	uint64_t skip = 0;

	if (!(v->reads & NSK_VIEW_READS_ALLOC))
		skip |= (1ull << NSK_REC_ALLOC) | (1ull << NSK_REC_FREE);
	if (!(v->reads & NSK_VIEW_READS_OFFCPU))
		skip |= 1ull << NSK_REC_OFFCPU;
	return skip;
}
