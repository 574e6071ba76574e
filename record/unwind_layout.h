/* Replaying DWARF walks without libdw, by checking the copied stack.
 *
 * A DWARF walk from a given instruction finds each caller's return address
 * at an offset from sp that depends only on the code it walks through (the
 * CFA rules of each pc), not on the values on the stack.  So once libdw has
 * walked from ip, the walk can be replayed on a later copy taken at the same
 * ip: if the word at every remembered return-address slot is the return
 * address remembered there, libdw would take the same steps and find the
 * same frames.  The first mismatch means another path (or a frame of
 * dynamic size): libdw walks that copy and its layout is remembered too.
 * Replay costs a word compare per frame instead of a few microseconds.
 *
 * Layouts belong to one address space (the unwinder keeps one table per
 * cached Dwfl) and are keyed by the leaf ip; a few paths are kept per ip.
 */
#ifndef NUSKU_RECORD_UNWIND_LAYOUT_H
#define NUSKU_RECORD_UNWIND_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct nsk_unwind_layouts;

int nsk_unwind_layouts__new(struct nsk_unwind_layouts **out);
void nsk_unwind_layouts__free(struct nsk_unwind_layouts *l); /* NULL is fine */

/* Replays a remembered walk from ip over the len bytes of stack: fills ips
 * (leaf first), reach (bytes of the copy each frame needed, or NULL) and
 * *n, and returns what the walk returned (0 complete, 1 stopped early), or
 * -ENOENT when no remembered walk fits this copy. */
int nsk_unwind_layouts__replay(struct nsk_unwind_layouts *l, uint64_t ip,
			       const uint8_t *stack, size_t len, uint64_t *ips,
			       uint32_t *reach, uint32_t max, uint32_t *n);

/* Remembers a libdw walk of the len-byte copy (its ips, reach and result
 * rc as nsk_unwinder__unwind returns them), when every return address sits
 * at the end of the bytes its frame read, so a replay can check it. */
void nsk_unwind_layouts__remember(struct nsk_unwind_layouts *l, uint64_t ip,
				  const uint8_t *stack, size_t len,
				  const uint64_t *ips, const uint32_t *reach,
				  uint32_t n, int rc);

#endif
