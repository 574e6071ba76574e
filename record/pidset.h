/* A set of process ids (open addressing; sized for the ids in it at
 * once, never shrinks).  The allocation signal keeps the processes its
 * preloaded sampler covers, so that the kernel-side syscall probe's
 * records of them, once that probe runs for another process, are not
 * counted twice; the process watcher, the processes whose mapping records
 * it keeps (record/procs/followed.h). */
#ifndef NUSKU_RECORD_PIDSET_H
#define NUSKU_RECORD_PIDSET_H

#include <stdint.h>
#include <stddef.h>

struct nsk_pidset {
	uint32_t *slot; /* pid + 1; 0 empty; UINT32_MAX removed */
	size_t n, used;	/* slots (a power of two), slots not empty */
};

/* 0, or -ENOMEM (the set is unchanged). pid 0 is never in the set. */
int nsk_pidset__add(struct nsk_pidset *s, uint32_t pid);
void nsk_pidset__remove(struct nsk_pidset *s, uint32_t pid);
int nsk_pidset__has(const struct nsk_pidset *s, uint32_t pid);
void nsk_pidset__free(struct nsk_pidset *s);

#endif
