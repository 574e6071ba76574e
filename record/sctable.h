/* The running kernel's syscall names, by number (record/sctable.c). */
#ifndef NUSKU_RECORD_SCTABLE_H
#define NUSKU_RECORD_SCTABLE_H

#include <stddef.h>
#include <stdint.h>

struct nsk_sctable;
struct nsk_kallsyms;

/* Reads the table of the running kernel from its kallsyms k (needs root:
 * kallsyms addresses and a BPF program).  -errno, with a one-line reason
 * in why, when it cannot (k NULL too); the caller falls back on the
 * build's headers. */
int nsk_sctable__read(const struct nsk_kallsyms *k, struct nsk_sctable **out,
		      char *why, size_t len);
void nsk_sctable__free(struct nsk_sctable *t);

/* Numbers 0 .. count-1 are in the table; a name is NULL where the kernel
 * has no syscall of that number. */
uint32_t nsk_sctable__count(const struct nsk_sctable *t);
const char *nsk_sctable__name(const struct nsk_sctable *t, uint32_t nr);
/* The number of a syscall by name, or -ENOENT. */
int nsk_sctable__find(const struct nsk_sctable *t, const char *name);

#endif
