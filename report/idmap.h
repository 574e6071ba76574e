/* Small hash maps for the loader: ids from the file to our own ids, and
 * strings to dense ids.  The loader resolves every definition once, in C,
 * so that the SQL tables it fills already hold names, not string ids. */
#ifndef NUSKU_REPORT_IDMAP_H
#define NUSKU_REPORT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

/* u64 key -> u64 value, open addressing.  Any key is allowed (tids can be 0). */
struct nsk_idmap {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap; /* power of two, or 0 */
	size_t n;
};

/* 1 and *val set when found, 0 when not. */
int nsk_idmap__get(const struct nsk_idmap *m, uint64_t key, uint64_t *val);
/* Insert or overwrite; 0 or -ENOMEM. */
int nsk_idmap__set(struct nsk_idmap *m, uint64_t key, uint64_t val);
void nsk_idmap__release(struct nsk_idmap *m);

/* Interned strings with dense ids 1..n; strings may hold any byte but NUL. */
struct nsk_strtab {
	char **strs;	  /* strs[id - 1] */
	size_t n, cap;
	uint32_t *slots;  /* hash slots holding ids, 0 = empty */
	size_t nslots;
};

/* The id of s[0..len) (interned on first sight), or 0 on -ENOMEM. */
uint32_t nsk_strtab__intern(struct nsk_strtab *t, const char *s, size_t len);
/* The string of an id, or NULL for an id out of range. */
const char *nsk_strtab__get(const struct nsk_strtab *t, uint32_t id);
void nsk_strtab__release(struct nsk_strtab *t);

#endif
