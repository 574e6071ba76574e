/* libFuzzer target for the .nsk reader: any bytes, read through a memory
 * source, in plain or follow mode, whole or in short reads.  Every record
 * returned is walked field by field (every byte of every string and array
 * touched) so ASan sees any pointer the reader hands out that it should
 * not.  Built by tests/fuzz/run (standalone) or with --enable-fuzzing. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/wire.h"

struct src {
	const uint8_t *p;
	size_t len, pos, max;
};

static ssize_t src_read(void *ctx, void *buf, size_t len)
{
	struct src *s = ctx;

	if (len > s->max)
		len = s->max;
	if (len > s->len - s->pos)
		len = s->len - s->pos;
	memcpy(buf, s->p + s->pos, len);
	s->pos += len;
	return (ssize_t)len;
}

static void on_problem(void *ctx, const char *msg)
{
	size_t *n = ctx;

	*n += strlen(msg);
}

static uint64_t touch(const struct nsk_record *rec)
{
	const struct nsk_rec_desc *d = &nsk_rec_descs[rec->type];
	uint64_t sum = 0;

	for (unsigned i = 0; i < d->nfields; i++) {
		const char *at = (const char *)rec + d->fields[i].off;

		if (d->fields[i].kind == NSK_F_BYTES) {
			const struct nsk_bytes *b = (const void *)at;

			for (uint32_t k = 0; k < b->len; k++)
				sum += b->data[k];
		} else if (d->fields[i].kind == NSK_F_U64S) {
			const struct nsk_u64s *a = (const void *)at;

			for (uint32_t k = 0; k < a->n; k++)
				sum += a->v[k];
		}
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The last byte picks the mode, leaving the header where it is. */
	unsigned mode = size ? data[size - 1] : 0;
	struct src s = { data, size, 0, mode & 2 ? 1 + (mode >> 2) : 1 << 20 };
	struct nsk_io io_stack = { NULL, src_read, NULL, &s };
	size_t problems = 0;
	struct nsk_reader_opts ro = { .on_problem = on_problem, .ctx = &problems,
				      .follow = mode & 1 };
	struct nsk_reader *rd;
	struct nsk_record rec;
	struct nsk_io *io;
	volatile uint64_t sink = 0;
	int rc;

	io = malloc(sizeof(*io));
	if (!io)
		return 0;
	*io = io_stack;
	if (nsk_reader__new(io, &ro, &rd))
		return 0;
	while ((rc = nsk_reader__next(rd, &rec)) == 1)
		sink += touch(&rec);
	/* A second call after the end (or -EAGAIN) must be safe too. */
	rc = nsk_reader__next(rd, &rec);
	if (rc == 1)
		sink += touch(&rec);
	sink += nsk_reader__stats(rd)->records + strlen(nsk_reader__error(rd));
	nsk_reader__free(rd);
	(void)sink;
	return 0;
}
