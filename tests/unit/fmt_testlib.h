/* Helpers for the format tests, the generator and the bench: an in-memory
 * struct nsk_io with fault injection, a seeded generator of records of every
 * type with every field set, and a record comparison. */
#ifndef NUSKU_TESTS_FMT_TESTLIB_H
#define NUSKU_TESTS_FMT_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include <nusku/format.h>

/* A growable memory sink/source.  Writes land in buf; reads come from
 * buf[rpos..len).  Faults: fail_at > 0 makes the write that would cross
 * byte fail_at write up to it and then fail with fail_err (0: report a short
 * write of 0, i.e. no progress); max_io > 0 cuts every write and read to at
 * most that many bytes (short writes, short reads); eagain_every > 0 makes
 * every Nth read return -EAGAIN. */
struct mem_io {
	uint8_t *buf;
	size_t len, cap, rpos;
	size_t fail_at;
	int fail_err;
	size_t max_io;
	unsigned eagain_every, reads;
	int closed;
};

/* A malloc'ed struct nsk_io on m (m stays the caller's). */
struct nsk_io *mem_io__io(struct mem_io *m);
/* Reads from a copy-free view of data[0, len). */
struct nsk_io *mem_io__reader(struct mem_io *m, const void *data, size_t len);
void mem_io__release(struct mem_io *m);

/* xorshift64*: deterministic across machines. */
struct rng {
	uint64_t s;
};
uint64_t rng__next(struct rng *r);
/* A value of random magnitude: exercises every varint length. */
uint64_t rng__mag(struct rng *r);

/* Storage for the byte strings and arrays of generated records. */
struct gen_store {
	uint8_t bytes[4][96];
	uint64_t u64s[2][48];
};

/* Fills rec with a record of the given type, every field set (padding 0). */
void gen__record(struct rng *r, uint32_t type, struct nsk_record *rec,
		 struct gen_store *st);
/* A sample record as the recorder would write it at 1 kHz on a few threads. */
void gen__sample(struct rng *r, uint64_t i, struct nsk_record *rec);

/* 1 when equal field by field (contents of bytes and arrays compared);
 * otherwise 0 and a description in why. */
int rec__equal(const struct nsk_record *a, const struct nsk_record *b,
	       char *why, size_t whylen);

/* Hand-built pieces of a stream, for tests of what the writer never writes.
 * Each returns the bytes written to out. */
size_t fmt__header(uint8_t *out, unsigned major, unsigned minor,
		   uint64_t compat, uint64_t incompat);
size_t fmt__chunk(uint8_t *out, unsigned type, unsigned codec, uint64_t seq,
		  uint64_t base, const void *payload, size_t len, uint32_t records);

#endif
