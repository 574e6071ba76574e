/* A BPF ring buffer's consumer that maps the data area once.
 *
 * libbpf's ring_buffer maps a ring's data pages twice in a row, so that a
 * record wrapping past the end reads as one piece.  The kernel inserts
 * every page of such a mapping at mmap time, so each ring costs its size
 * twice in the recorder's RSS (44 MB of the 90 MB a `record -- sleep 3`
 * once held).  This consumer maps the data once and copies the rare record
 * that wraps into a buffer of its own.  Its semantics are libbpf's
 * ring_buffer__consume: records in order, a negative return from the
 * callback stops after that record (already consumed).
 */
#ifndef NUSKU_RECORD_RINGBUF_H
#define NUSKU_RECORD_RINGBUF_H

#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>

struct nsk_ringbuf;

/* map_fd: a BPF_MAP_TYPE_RINGBUF map; records go to fn(ctx, data, len). */
int nsk_ringbuf__new(int map_fd, ring_buffer_sample_fn fn, void *ctx,
		     struct nsk_ringbuf **out);

/* Readable (EPOLLIN) when the kernel has woken consumers. */
int nsk_ringbuf__fd(const struct nsk_ringbuf *r);

/* Hands every committed record to the callback, until none is left or the
 * callback returns a negative value (then returned).  Returns how many
 * records were handed over otherwise. */
int nsk_ringbuf__consume(struct nsk_ringbuf *r);

/* Drops every record committed so far without reading it; returns how
 * many.  It looks at the producer once, so it ends after at most a ring's
 * worth of records even while the producers write on. */
uint64_t nsk_ringbuf__skip(struct nsk_ringbuf *r);

/* Bytes mapped for the ring (its resident cost). */
size_t nsk_ringbuf__mapped(const struct nsk_ringbuf *r);

void nsk_ringbuf__free(struct nsk_ringbuf *r); /* NULL is fine */

#endif
