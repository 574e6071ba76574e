/* The kallsyms table's insides, for kallsyms.c and kallsyms_cache.c only. */
#ifndef NUSKU_RECORD_KALLSYMS_INT_H
#define NUSKU_RECORD_KALLSYMS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* 16 bytes a symbol: a kernel has some 100,000 of them. */
struct ksym {
	uint64_t addr;
	uint32_t name; /* offsets into the arena */
	uint32_t module;
};

#define NO_OFFSET UINT32_MAX

/* The whole table behind a table of the kernel image alone. */
struct nsk_kallsyms_whole {
	pthread_mutex_t lock;
	int tried;
	struct nsk_kallsyms *k; /* NULL: could not be read */
};

struct nsk_kallsyms {
	struct ksym *syms;
	size_t n, cap;
	char *arena; /* all names, NUL-separated; grows geometrically */
	size_t used, size;
	uint64_t rodata, rodata_end; /* the kernel's read-only data, 0 unknown */
	int err; /* why there are no symbols: see nsk_kallsyms__err() */
	/* A table from the cache holds the image's symbols only, those in
	 * [core_lo, core_hi); other addresses are asked of whole.  0, 0 and
	 * NULL for a table read whole. */
	uint64_t core_lo, core_hi;
	struct nsk_kallsyms_whole *whole;
	nsk_kallsyms_outside_fn outside; /* asked before whole: see kallsyms.h */
	void *outside_ctx;
};

/* The image's part of the cache in directory dir: 0 and a table, or a
 * negative errno when there is none for this boot or it does not read
 * (then nothing is changed). */
int nsk_kallsyms_cache__read(int dir, struct nsk_kallsyms **out);
/* Leaves the image's part of whole table k in dir, when it can be told
 * apart (no other symbol among its addresses). */
void nsk_kallsyms_cache__write(int dir, const struct nsk_kallsyms *k);

#endif
