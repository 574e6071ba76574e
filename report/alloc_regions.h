/* The live mmap/brk regions and reservations of the allocation loader
 * (load_alloc.c), ordered by (pid, start address); equal keys keep the
 * order they came in.  A position is valid until the next add; remove
 * leaves it on the entry after the one removed. */
#ifndef NUSKU_REPORT_ALLOC_REGIONS_H
#define NUSKU_REPORT_ALLOC_REGIONS_H

#include <stddef.h>
#include <stdint.h>

struct nsk_alloc_slot;

struct nsk_region_chunk;

struct nsk_regions {
	struct nsk_region_chunk **c;
	size_t n, cap; /* chunks */
	size_t count;  /* regions */
};

struct nsk_region_pos {
	size_t c;
	uint32_t i;
};

/* 0 or -ENOMEM. */
int nsk_regions__add(struct nsk_regions *r, const struct nsk_alloc_slot *v);
/* The first region at or after (pid, addr), or NULL; pos set. */
struct nsk_alloc_slot *nsk_regions__seek(struct nsk_regions *r, uint32_t pid,
					 uint64_t addr, struct nsk_region_pos *pos);
/* The region at pos (after a next or a remove), or NULL past the end. */
struct nsk_alloc_slot *nsk_regions__at(struct nsk_regions *r,
				       struct nsk_region_pos *pos);
void nsk_regions__next(struct nsk_region_pos *pos);
void nsk_regions__remove(struct nsk_regions *r, struct nsk_region_pos *pos);
void nsk_regions__release(struct nsk_regions *r);

#endif
