/* Interning: byte strings to stable ids, in an open-addressing table.
 *
 * Strings, frames (module + address) and stacks (frame ids) all become ids
 * the same way: look the key's bytes up, and on a miss give them the next
 * id of the caller's counter.  Keys are copied; ids are never reused.
 */
#ifndef NUSKU_RECORD_INTERN_H
#define NUSKU_RECORD_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct nsk_intern;

struct nsk_intern *nsk_intern__new(void);
void nsk_intern__free(struct nsk_intern *t); /* accepts NULL */

/* The value stored for key, or 0 when absent. */
uint64_t nsk_intern__find(const struct nsk_intern *t, const void *key,
			  size_t len);
/* Store key -> value (value != 0); the key must be absent.  -ENOMEM. */
int nsk_intern__add(struct nsk_intern *t, const void *key, size_t len,
		    uint64_t value);
size_t nsk_intern__count(const struct nsk_intern *t);

/* FNV-1a, 64 bits. */
uint64_t nsk_hash__bytes(const void *p, size_t len);

#endif
