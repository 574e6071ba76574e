/* Which blocks each process may still hold, for the allocation loader's
 * exits (load_alloc.c): per pid, the addresses it allocated at, kept
 * loosely (a block freed since stays listed until the list is next
 * compacted; an address reused is listed twice).  An exit then looks up
 * only its own process's addresses, not every live block of the load.
 * (A scan of the whole table per exit took 242 s for a 2.8 MB file: a
 * million blocks held by one process while 10,000 others came and went.)
 * A list is compacted when full, against holds(ctx, pid, addr, pass): 1
 * for an address pid holds, the first time it is asked in this pass (so
 * an address listed twice is kept once); the list grows only when half of
 * it is still held, so its length stays within twice the blocks the
 * process holds, plus 8. */
#ifndef NUSKU_REPORT_ALLOC_OWNED_H
#define NUSKU_REPORT_ALLOC_OWNED_H

#include <stddef.h>
#include <stdint.h>

#include "report/idmap.h"

struct nsk_owned_list {
	uint64_t *addr;
	uint32_t n, cap;
};

struct nsk_owned {
	struct nsk_idmap index; /* pid -> list index + 1 */
	struct nsk_owned_list *l;
	size_t n, cap;
	uint32_t pass; /* of the last compaction; never 0 */
};

typedef int (*nsk_owned_holds_fn)(void *ctx, uint32_t pid, uint64_t addr,
				  uint32_t pass);

/* Lists addr for pid.  0 or -ENOMEM. */
int nsk_owned__add(struct nsk_owned *o, uint32_t pid, uint64_t addr,
		   nsk_owned_holds_fn holds, void *ctx);
/* pid's list, or NULL when it has none. */
struct nsk_owned_list *nsk_owned__of(struct nsk_owned *o, uint32_t pid);
/* Keeps in l only the addresses pid still holds, each once.  A pass
 * number that wraps comes back as 0 once: holds must then forget what it
 * marked. */
void nsk_owned__keep(struct nsk_owned *o, struct nsk_owned_list *l,
		     uint32_t pid, nsk_owned_holds_fn holds, void *ctx);
void nsk_owned__release(struct nsk_owned *o);

#endif
