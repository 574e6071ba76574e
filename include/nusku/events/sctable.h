/* What bpf/sctable.bpf.c shares with record/sctable.c: the sizes of the
 * syscall-table reader (see there). */
#ifndef NUSKU_EVENTS_SCTABLE_H
#define NUSKU_EVENTS_SCTABLE_H

/* Words of the table copied: more than any architecture has syscalls. */
#define NSK_SCT_MAX 1024
/* Words compared per step of the scan (a power of two). */
#define NSK_SCT_CHUNK 64

#endif
