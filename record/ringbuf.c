/* A BPF ring buffer's consumer with the data area mapped once (see
 * ringbuf.h).
 *
 * The layout is the kernel's (kernel/bpf/ringbuf.c): page 0 holds the
 * consumer position (the only page user space may write), page 1 the
 * producer position, and the data follows from page 2, its size a power of
 * two.  Each record is an 8-byte header (length with a busy and a discard
 * bit, and a page offset) and its data, 8-byte aligned; positions only
 * grow and are taken modulo the size.  A header never straddles the end
 * (both are 8-aligned), only data does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "record/ringbuf.h"

struct nsk_ringbuf {
	int fd;
	ring_buffer_sample_fn fn;
	void *ctx;
	size_t page;
	uint64_t mask;		 /* data size - 1 */
	uint64_t *consumer_pos;	 /* page 0, read-write */
	const uint64_t *producer_pos; /* page 1, read-only */
	const uint8_t *data;	 /* the data area, once */
	/* a record that wraps, put together: as large as the ring, and
	 * resident only as far as the largest such record touched it */
	uint8_t *scratch;
};

int nsk_ringbuf__new(int map_fd, ring_buffer_sample_fn fn, void *ctx,
		     struct nsk_ringbuf **out)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	struct nsk_ringbuf *r;
	void *p;
	int err;

	*out = NULL;
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = map_fd;
	r->fn = fn;
	r->ctx = ctx;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->mask = info.max_entries - 1;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	r->consumer_pos = p;
	/* the producer page and the data, once: libbpf maps the data twice */
	p = mmap(NULL, r->page + info.max_entries, PROT_READ, MAP_SHARED, map_fd,
		 (off_t)r->page);
	if (p == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	r->producer_pos = p;
	r->data = (const uint8_t *)p + r->page;
	r->scratch = malloc(info.max_entries);
	if (!r->scratch) {
		err = -ENOMEM;
		goto cleanup;
	}
	*out = r;
	return 0;
cleanup:
	nsk_ringbuf__free(r);
	return err;
}

int nsk_ringbuf__fd(const struct nsk_ringbuf *r)
{
	return r->fd;
}

size_t nsk_ringbuf__mapped(const struct nsk_ringbuf *r)
{
	return 2 * r->page + r->mask + 1;
}

/* The record of len bytes at data offset off, in one piece. */
static void *piece(struct nsk_ringbuf *r, uint64_t off, size_t len)
{
	size_t size = r->mask + 1, first;

	if (off + len <= size)
		return (void *)(r->data + off);
	first = size - off;
	memcpy(r->scratch, r->data + off, first);
	memcpy(r->scratch + first, r->data, len - first);
	return r->scratch;
}

int nsk_ringbuf__consume(struct nsk_ringbuf *r)
{
	uint64_t cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	int n = 0, more;

	do {
		uint64_t prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);

		more = 0;
		while (cons < prod) {
			const uint32_t *hdr = (const uint32_t *)(r->data + (cons & r->mask));
			uint32_t word = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			uint32_t len = word & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			uint64_t at = (cons + BPF_RINGBUF_HDR_SZ) & r->mask;
			int err = 0;

			if (word & BPF_RINGBUF_BUSY_BIT)
				break; /* reserved, not yet committed */
			more = 1;
			cons += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ull;
			if (!(word & BPF_RINGBUF_DISCARD_BIT) && len <= r->mask + 1) {
				err = r->fn(r->ctx, piece(r, at, len), len);
				n++;
			}
			__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
			if (err < 0)
				return err;
		}
	} while (more);
	return n;
}

uint64_t nsk_ringbuf__skip(struct nsk_ringbuf *r)
{
	uint64_t cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	uint64_t prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	uint64_t n = 0;

	/* one look at the producer: at most a ring's worth, however fast
	 * the producers go on writing */
	while (cons < prod) {
		const uint32_t *hdr = (const uint32_t *)(r->data + (cons & r->mask));
		uint32_t word = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint32_t len = word & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);

		if (word & BPF_RINGBUF_BUSY_BIT)
			break;
		cons += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ull;
		if (!(word & BPF_RINGBUF_DISCARD_BIT))
			n++;
	}
	__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	return n;
}

void nsk_ringbuf__free(struct nsk_ringbuf *r)
{
	if (!r)
		return;
	if (r->consumer_pos)
		munmap(r->consumer_pos, r->page);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, r->page + r->mask + 1);
	free(r->scratch);
	free(r);
}
