/* Names of record types, for messages and `nusku info`. */
#include <nusku/format.h>

static const char *const names[NSK_REC_TYPE_MAX] = {
	[NSK_REC_META] = "meta",
	[NSK_REC_CLOCK] = "clock",
	[NSK_REC_STRING] = "string",
	[NSK_REC_PROCESS] = "process",
	[NSK_REC_THREAD] = "thread",
	[NSK_REC_EXIT] = "exit",
	[NSK_REC_MAPPING] = "mapping",
	[NSK_REC_FRAME] = "frame",
	[NSK_REC_STACK] = "stack",
	[NSK_REC_SAMPLE] = "sample",
	[NSK_REC_ALLOC] = "alloc",
	[NSK_REC_FREE] = "free",
	[NSK_REC_OFFCPU] = "offcpu",
	[NSK_REC_SYSCALL_STAT] = "syscall_stat",
	[NSK_REC_SYSCALL_SLOW] = "syscall_slow",
	[NSK_REC_CONN] = "conn",
	[NSK_REC_RETRANSMIT] = "retransmit",
	[NSK_REC_LOSS] = "loss",
	[NSK_REC_END] = "end",
	[NSK_REC_SYSCALL_PATH] = "syscall_path",
	[NSK_REC_SYSCALL_NAME] = "syscall_name",
};

const char *nsk_rec_type__name(uint32_t type)
{
	return type < NSK_REC_TYPE_MAX ? names[type] : 0;
}
