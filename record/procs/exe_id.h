/* A file's identity as bpf/proc.bpf.c sees it at an exec (struct
 * nsk_exe_id): the device in the kernel's numbering, the inode and the
 * status change time, from the file's stat. */
#ifndef NUSKU_RECORD_PROCS_EXE_ID_H
#define NUSKU_RECORD_PROCS_EXE_ID_H

#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <nusku/events/proc.h>

/* A device as the kernel numbers it (major << 20 | minor). */
static inline __u32 nsk_exe_id__kdev(dev_t dev)
{
	return (__u32)(major(dev) << 20 | minor(dev));
}

static inline void nsk_exe_id__of(const struct stat *st, struct nsk_exe_id *id)
{
	memset(id, 0, sizeof(*id));
	id->ino = (__u64)st->st_ino;
	id->ctime_sec = (__s64)st->st_ctim.tv_sec;
	id->ctime_nsec = (__u32)st->st_ctim.tv_nsec;
	id->dev = nsk_exe_id__kdev(st->st_dev);
}

#endif
