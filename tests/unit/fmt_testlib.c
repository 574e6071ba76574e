/* See fmt_testlib.h. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/wire.h"
#include "tests/unit/fmt_testlib.h"

static ssize_t m_write(void *ctx, const void *buf, size_t len)
{
	struct mem_io *m = ctx;

	if (m->max_io && len > m->max_io)
		len = m->max_io;
	if (m->fail_at && m->len + len >= m->fail_at) {
		if (m->len >= m->fail_at)
			return m->fail_err ? -m->fail_err : 0;
		len = m->fail_at - m->len; /* a short write up to the fault */
	}
	if (m->len + len > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;

		while (cap < m->len + len)
			cap *= 2;
		m->buf = realloc(m->buf, cap);
		if (!m->buf)
			abort();
		m->cap = cap;
	}
	memcpy(m->buf + m->len, buf, len);
	m->len += len;
	return (ssize_t)len;
}

static ssize_t m_read(void *ctx, void *buf, size_t len)
{
	struct mem_io *m = ctx;

	if (m->eagain_every && ++m->reads % m->eagain_every == 0)
		return -EAGAIN;
	if (m->max_io && len > m->max_io)
		len = m->max_io;
	if (len > m->len - m->rpos)
		len = m->len - m->rpos;
	memcpy(buf, m->buf + m->rpos, len);
	m->rpos += len;
	return (ssize_t)len;
}

static int m_close(void *ctx)
{
	struct mem_io *m = ctx;

	m->closed++;
	return 0;
}

struct nsk_io *mem_io__io(struct mem_io *m)
{
	struct nsk_io *io = calloc(1, sizeof(*io));

	if (!io)
		abort();
	io->write = m_write;
	io->read = m_read;
	io->close = m_close;
	io->ctx = m;
	return io;
}

struct nsk_io *mem_io__reader(struct mem_io *m, const void *data, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->buf = (uint8_t *)data;
	m->len = m->cap = len;
	return mem_io__io(m);
}

void mem_io__release(struct mem_io *m)
{
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

uint64_t rng__next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1Dull;
}

uint64_t rng__mag(struct rng *r)
{
	uint64_t v = rng__next(r);

	return v >> (rng__next(r) % 64);
}

static uint32_t r32(struct rng *r)
{
	return (uint32_t)rng__mag(r);
}

static uint64_t rtime(struct rng *r)
{
	switch (rng__next(r) % 16) {
	case 0:
		return 0;
	case 1:
		return UINT64_MAX - rng__next(r) % 4;
	default:
		return 1000000000000ull + rng__next(r) % 5000000000ull;
	}
}

static struct nsk_bytes rbytes(struct rng *r, uint8_t *buf, size_t cap)
{
	uint32_t n = (uint32_t)(rng__next(r) % cap);

	if (rng__next(r) % 8 == 0)
		n = 0;
	for (uint32_t i = 0; i < n; i++)
		buf[i] = (uint8_t)rng__next(r);
	return (struct nsk_bytes){ n ? buf : NULL, n };
}

static struct nsk_u64s ru64s(struct rng *r, uint64_t *v, size_t cap)
{
	uint32_t n = (uint32_t)(rng__next(r) % cap);

	if (rng__next(r) % 8 == 0)
		n = 0;
	for (uint32_t i = 0; i < n; i++)
		v[i] = rng__mag(r);
	return (struct nsk_u64s){ n ? v : NULL, n };
}

#define B(i) rbytes(r, st->bytes[i], sizeof(st->bytes[i]))
#define A(i) ru64s(r, st->u64s[i], sizeof(st->u64s[i]) / sizeof(uint64_t))

void gen__record(struct rng *r, uint32_t type, struct nsk_record *rec,
		 struct gen_store *st)
{
	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	switch (type) {
	case NSK_REC_META:
		rec->meta.key = B(0);
		rec->meta.value = B(1);
		break;
	case NSK_REC_CLOCK:
		rec->clock.monotonic_ns = rtime(r);
		rec->clock.realtime_ns = rng__mag(r);
		break;
	case NSK_REC_STRING:
		rec->string.id = rng__mag(r);
		rec->string.str = B(0);
		break;
	case NSK_REC_PROCESS:
		rec->process.time = rtime(r);
		rec->process.pid = r32(r);
		rec->process.ppid = r32(r);
		rec->process.how = r32(r);
		rec->process.comm = B(0);
		rec->process.cmdline = B(1);
		break;
	case NSK_REC_THREAD:
		rec->thread.time = rtime(r);
		rec->thread.pid = r32(r);
		rec->thread.tid = r32(r);
		rec->thread.name = B(0);
		break;
	case NSK_REC_EXIT:
		rec->exit.time = rtime(r);
		rec->exit.pid = r32(r);
		rec->exit.tid = r32(r);
		rec->exit.exit_code = (int32_t)r32(r);
		break;
	case NSK_REC_MAPPING:
		rec->mapping.id = rng__mag(r);
		rec->mapping.pid = r32(r);
		rec->mapping.start = rng__mag(r);
		rec->mapping.end = rng__mag(r);
		rec->mapping.pgoff = rng__mag(r);
		rec->mapping.path_id = rng__mag(r);
		rec->mapping.build_id = B(0);
		break;
	case NSK_REC_FRAME:
		rec->frame.id = rng__mag(r);
		rec->frame.mapping_id = rng__mag(r);
		rec->frame.addr = rng__mag(r);
		rec->frame.function_id = rng__mag(r);
		rec->frame.file_id = rng__mag(r);
		rec->frame.line = r32(r);
		rec->frame.flags = r32(r);
		rec->frame.inline_parent = rng__mag(r);
		rec->frame.module_id = rng__mag(r);
		break;
	case NSK_REC_STACK:
		rec->stack.id = rng__mag(r);
		rec->stack.flags = r32(r);
		rec->stack.frames = A(0);
		break;
	case NSK_REC_SAMPLE:
		rec->sample.time = rtime(r);
		rec->sample.pid = r32(r);
		rec->sample.tid = r32(r);
		rec->sample.cpu = r32(r);
		rec->sample.stack_id = rng__mag(r);
		rec->sample.weight = rng__mag(r);
		break;
	case NSK_REC_ALLOC:
		rec->alloc.time = rtime(r);
		rec->alloc.pid = r32(r);
		rec->alloc.tid = r32(r);
		rec->alloc.addr = rng__mag(r);
		rec->alloc.size = rng__mag(r);
		rec->alloc.stack_id = rng__mag(r);
		rec->alloc.fn = r32(r);
		rec->alloc.weight = rng__mag(r);
		break;
	case NSK_REC_FREE:
		rec->free.time = rtime(r);
		rec->free.pid = r32(r);
		rec->free.tid = r32(r);
		rec->free.addr = rng__mag(r);
		rec->free.fn = r32(r);
		rec->free.size = rng__mag(r);
		break;
	case NSK_REC_OFFCPU:
		rec->offcpu.time = rtime(r);
		rec->offcpu.duration = rng__mag(r);
		rec->offcpu.pid = r32(r);
		rec->offcpu.tid = r32(r);
		rec->offcpu.state = r32(r);
		rec->offcpu.reason = r32(r);
		rec->offcpu.stack_id = rng__mag(r);
		rec->offcpu.syscall = (int32_t)r32(r);
		rec->offcpu.wait_addr = rng__mag(r);
		rec->offcpu.waker_pid = r32(r);
		rec->offcpu.waker_tid = r32(r);
		rec->offcpu.waker_comm = B(0);
		rec->offcpu.waker_stack_id = rng__mag(r);
		rec->offcpu.detail_id = rng__mag(r);
		break;
	case NSK_REC_SYSCALL_STAT:
		rec->syscall_stat.time = rtime(r);
		rec->syscall_stat.window_ns = rng__mag(r);
		rec->syscall_stat.pid = r32(r);
		rec->syscall_stat.tid = r32(r);
		rec->syscall_stat.nr = r32(r);
		rec->syscall_stat.stack_id = rng__mag(r);
		rec->syscall_stat.count = rng__mag(r);
		rec->syscall_stat.errors = rng__mag(r);
		rec->syscall_stat.total_ns = rng__mag(r);
		rec->syscall_stat.max_ns = rng__mag(r);
		rec->syscall_stat.hist = A(0);
		rec->syscall_stat.errnos = A(1);
		break;
	case NSK_REC_SYSCALL_SLOW:
		rec->syscall_slow.time = rtime(r);
		rec->syscall_slow.duration = rng__mag(r);
		rec->syscall_slow.pid = r32(r);
		rec->syscall_slow.tid = r32(r);
		rec->syscall_slow.nr = r32(r);
		rec->syscall_slow.ret = (int64_t)rng__mag(r) * (rng__next(r) & 1 ? -1 : 1);
		rec->syscall_slow.args = A(0);
		rec->syscall_slow.target_id = rng__mag(r);
		rec->syscall_slow.stack_id = rng__mag(r);
		break;
	case NSK_REC_CONN:
		rec->conn.id = rng__mag(r);
		rec->conn.family = r32(r);
		rec->conn.saddr = B(0);
		rec->conn.daddr = B(1);
		rec->conn.sport = r32(r);
		rec->conn.dport = r32(r);
		rec->conn.pid = r32(r);
		rec->conn.tid = r32(r);
		rec->conn.time = rtime(r);
		rec->conn.state = r32(r);
		rec->conn.stack_id = rng__mag(r);
		break;
	case NSK_REC_RETRANSMIT:
		rec->retransmit.time = rtime(r);
		rec->retransmit.conn_id = rng__mag(r);
		rec->retransmit.pid = r32(r);
		rec->retransmit.tid = r32(r);
		rec->retransmit.kind = r32(r);
		rec->retransmit.state = r32(r);
		rec->retransmit.srtt_us = rng__mag(r);
		rec->retransmit.rto_us = rng__mag(r);
		break;
	case NSK_REC_LOSS:
		rec->loss.time_start = rtime(r);
		rec->loss.time_end = rtime(r);
		rec->loss.source_id = rng__mag(r);
		rec->loss.count = rng__mag(r);
		break;
	case NSK_REC_END:
		rec->end.time = rtime(r);
		rec->end.records = rng__mag(r);
		rec->end.lost = rng__mag(r);
		break;
	case NSK_REC_SYSCALL_PATH:
		rec->syscall_path.time = rtime(r);
		rec->syscall_path.window_ns = rng__mag(r);
		rec->syscall_path.pid = r32(r);
		rec->syscall_path.tid = r32(r);
		rec->syscall_path.nr = r32(r);
		rec->syscall_path.stack_id = rng__mag(r);
		rec->syscall_path.calls = rng__mag(r);
		rec->syscall_path.total_ns = rng__mag(r);
		break;
	case NSK_REC_SYSCALL_NAME:
		rec->syscall_name.nr = r32(r);
		rec->syscall_name.name = B(0);
		break;
	default:
		abort();
	}
}

void gen__sample(struct rng *r, uint64_t i, struct nsk_record *rec)
{
	/* 4 threads sampled at 1 kHz each, a few hundred distinct stacks. */
	memset(rec, 0, sizeof(*rec));
	rec->type = NSK_REC_SAMPLE;
	rec->sample.time = 5000000000000ull + i * 250000ull + rng__next(r) % 20000;
	rec->sample.pid = 4242;
	rec->sample.tid = 4242 + (uint32_t)(i % 4);
	rec->sample.cpu = (uint32_t)(rng__next(r) % 2);
	rec->sample.stack_id = 1 + rng__next(r) % 300;
	rec->sample.weight = 1000000;
}

int rec__equal(const struct nsk_record *a, const struct nsk_record *b,
	       char *why, size_t whylen)
{
	struct nsk_record ca, cb;
	const struct nsk_rec_desc *d;

	if (a->type != b->type) {
		snprintf(why, whylen, "type %u != %u", a->type, b->type);
		return 0;
	}
	if (!a->type || a->type >= NSK_REC_TYPE_MAX) {
		snprintf(why, whylen, "bad type %u", a->type);
		return 0;
	}
	d = &nsk_rec_descs[a->type];
	memcpy(&ca, a, sizeof(ca));
	memcpy(&cb, b, sizeof(cb));
	/* Compare what pointers point to, then blank them and compare the
	 * rest of the structs whole: a field the descriptor forgot shows. */
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct nsk_field *f = &d->fields[i];

		if (f->kind == NSK_F_BYTES) {
			struct nsk_bytes *x = (void *)((char *)&ca + f->off);
			struct nsk_bytes *y = (void *)((char *)&cb + f->off);

			if (x->len != y->len || (x->len && memcmp(x->data, y->data, x->len))) {
				snprintf(why, whylen, "%s.%s differs", nsk_rec_type__name(a->type),
					 f->name);
				return 0;
			}
			x->data = y->data = NULL;
		} else if (f->kind == NSK_F_U64S) {
			struct nsk_u64s *x = (void *)((char *)&ca + f->off);
			struct nsk_u64s *y = (void *)((char *)&cb + f->off);

			if (x->n != y->n || (x->n && memcmp(x->v, y->v, x->n * sizeof(uint64_t)))) {
				snprintf(why, whylen, "%s.%s differs", nsk_rec_type__name(a->type),
					 f->name);
				return 0;
			}
			x->v = y->v = NULL;
		}
	}
	if (memcmp((char *)&ca + offsetof(struct nsk_record, meta),
		   (char *)&cb + offsetof(struct nsk_record, meta),
		   sizeof(ca) - offsetof(struct nsk_record, meta))) {
		snprintf(why, whylen, "%s: scalar fields differ", nsk_rec_type__name(a->type));
		return 0;
	}
	return 1;
}

size_t fmt__header(uint8_t *out, unsigned major, unsigned minor,
		   uint64_t compat, uint64_t incompat)
{
	memset(out, 0, NSK_FH_SIZE);
	memcpy(out, NSK_MAGIC, NSK_MAGIC_LEN);
	nsk_put16(out + NSK_FH_OFF_MAJOR, (uint16_t)major);
	nsk_put16(out + NSK_FH_OFF_MINOR, (uint16_t)minor);
	nsk_put32(out + NSK_FH_OFF_LEN, NSK_FH_SIZE);
	nsk_put64(out + NSK_FH_OFF_COMPAT, compat);
	nsk_put64(out + NSK_FH_OFF_INCOMPAT, incompat);
	nsk_put64(out + NSK_FH_OFF_ID, 0xabcdef);
	nsk_put32(out + NSK_FH_OFF_CRC, nsk_crc32c(0, out, NSK_FH_OFF_CRC));
	return NSK_FH_SIZE;
}

size_t fmt__chunk(uint8_t *out, unsigned type, unsigned codec, uint64_t seq,
		  uint64_t base, const void *payload, size_t len, uint32_t records)
{
	memset(out, 0, NSK_CH_SIZE);
	memcpy(out, NSK_SYNC, NSK_SYNC_LEN);
	nsk_put16(out + NSK_CH_OFF_TYPE, (uint16_t)type);
	nsk_put16(out + NSK_CH_OFF_CODEC, (uint16_t)codec);
	nsk_put32(out + NSK_CH_OFF_STORED, (uint32_t)len);
	nsk_put32(out + NSK_CH_OFF_RAW, (uint32_t)len);
	nsk_put32(out + NSK_CH_OFF_RECORDS, records);
	nsk_put64(out + NSK_CH_OFF_SEQ, seq);
	nsk_put64(out + NSK_CH_OFF_BASE, base);
	nsk_put64(out + NSK_CH_OFF_FIRST, base);
	nsk_put64(out + NSK_CH_OFF_LAST, base);
	memcpy(out + NSK_CH_SIZE, payload, len);
	nsk_put32(out + NSK_CH_OFF_PCRC, nsk_crc32c(0, payload, len));
	nsk_put32(out + NSK_CH_OFF_HCRC, nsk_crc32c(0, out, NSK_CH_OFF_HCRC));
	return NSK_CH_SIZE + len;
}
