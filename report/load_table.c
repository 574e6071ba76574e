/* Which handler loads which record type.  A signal adds its lines here;
 * a type without a handler is counted (ignored_records) and skipped. */
#include "report/load.h"

const nsk_load_fn nsk_load__table[NSK_REC_TYPE_MAX] = {
	/* core */
	[NSK_REC_META] = nsk_load__meta,
	[NSK_REC_CLOCK] = nsk_load__clock,
	[NSK_REC_STRING] = nsk_load__string_rec,
	[NSK_REC_PROCESS] = nsk_load__process,
	[NSK_REC_THREAD] = nsk_load__thread,
	[NSK_REC_EXIT] = nsk_load__exit,
	[NSK_REC_MAPPING] = nsk_load__mapping,
	[NSK_REC_FRAME] = nsk_load__frame,
	[NSK_REC_STACK] = nsk_load__stack,
	[NSK_REC_LOSS] = nsk_load__loss,
	[NSK_REC_END] = nsk_load__end,
	/* cpu */
	[NSK_REC_SAMPLE] = nsk_load_cpu__sample,
	/* alloc */
	[NSK_REC_ALLOC] = nsk_load_alloc__alloc,
	[NSK_REC_FREE] = nsk_load_alloc__free,
	/* offcpu */
	[NSK_REC_OFFCPU] = nsk_load_offcpu__interval,
	/* syscall */
	[NSK_REC_SYSCALL_STAT] = nsk_load_syscall__stat,
	[NSK_REC_SYSCALL_SLOW] = nsk_load_syscall__slow,
	[NSK_REC_SYSCALL_PATH] = nsk_load_syscall__path,
	[NSK_REC_SYSCALL_NAME] = nsk_load_syscall__name,
	/* net */
	[NSK_REC_CONN] = nsk_load_net__conn,
	[NSK_REC_RETRANSMIT] = nsk_load_net__retransmit,
};
