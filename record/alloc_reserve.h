/* Address space a process reserved (anonymous mappings made PROT_NONE or
 * MAP_NORESERVE), so that the allocation signal knows which mprotect
 * calls commit memory: those inside a reservation.  A plain set of ranges
 * per process; reservations are few (Go's arenas, glibc's thread heaps). */
#ifndef NUSKU_RECORD_ALLOC_RESERVE_H
#define NUSKU_RECORD_ALLOC_RESERVE_H

#include <stddef.h>
#include <stdint.h>

struct nsk_alloc_reserve {
	struct nsk_reserve_range {
		uint32_t pid;
		uint64_t start, end; /* [start, end) */
	} *r;
	size_t n, cap;
};

/* Adds [start, start + len) of pid.  0 or -ENOMEM. */
int nsk_alloc_reserve__add(struct nsk_alloc_reserve *set, uint32_t pid,
			   uint64_t start, uint64_t len);
/* Removes [start, start + len) of pid (munmap), splitting ranges it cuts.
 * 0 or -ENOMEM. */
int nsk_alloc_reserve__remove(struct nsk_alloc_reserve *set, uint32_t pid,
			      uint64_t start, uint64_t len);
/* 1 when [start, start + len) lies inside one reservation of pid. */
int nsk_alloc_reserve__covers(const struct nsk_alloc_reserve *set, uint32_t pid,
			      uint64_t start, uint64_t len);
/* 1 when [start, start + len) meets a reservation of pid. */
int nsk_alloc_reserve__meets(const struct nsk_alloc_reserve *set, uint32_t pid,
			     uint64_t start, uint64_t len);
/* Forgets pid's reservations: a new process or image. */
void nsk_alloc_reserve__forget(struct nsk_alloc_reserve *set, uint32_t pid);
void nsk_alloc_reserve__release(struct nsk_alloc_reserve *set);

#endif
