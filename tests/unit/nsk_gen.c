/* nsk_gen: writes a synthetic multi-chunk recording with known contents, for
 * the `nusku info` end-to-end test and the fuzz seed corpus.
 *
 *   nsk_gen [-n SAMPLES] [-c CHUNK_BYTES] [--no-end] OUT|-
 *
 * Contents, for N samples (default 20000): META host/kernel/cmdline, one
 * CLOCK, STRINGs, a PROCESS and two THREADs, a MAPPING, 4 FRAMEs, 3 STACKs,
 * N SAMPLEs 1 ms apart, one LOSS "cpu.ringbuf" of 5 per 1000 samples, one
 * LOSS "cpu.stack" of 2, an ALLOC, a FREE, an OFFCPU, a SYSCALL_STAT, a
 * SYSCALL_SLOW, a CONN, a RETRANSMIT, an EXIT, and END (unless --no-end):
 * every record type.  Everything is fixed: the same arguments give the
 * same bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nusku/format.h>

#define T0 1000000000000ull		  /* monotonic ns of the first record */
#define WALL0 1764433777000000000ull /* 2025-11-29 16:29:37 UTC */

static struct nsk_writer *w;
static uint64_t nrec;

static void put(const struct nsk_record *r)
{
	int err = nsk_writer__append(w, r);

	if (err) {
		fprintf(stderr, "nsk_gen: append: %s\n", strerror(-err));
		exit(1);
	}
	nrec++;
}

static struct nsk_bytes B(const char *s, size_t n)
{
	return (struct nsk_bytes){ (const uint8_t *)s, (uint32_t)n };
}

#define S(s) B(s, strlen(s))

static void meta(const char *k, const char *v, size_t vlen)
{
	struct nsk_record r = { .type = NSK_REC_META };

	r.meta.key = S(k);
	r.meta.value = B(v, vlen);
	put(&r);
}

static void string(uint64_t id, const char *s)
{
	struct nsk_record r = { .type = NSK_REC_STRING };

	r.string.id = id;
	r.string.str = S(s);
	put(&r);
}

static void loss(uint64_t t, uint64_t src, uint64_t count)
{
	struct nsk_record r = { .type = NSK_REC_LOSS };

	r.loss.time_start = t - 1000000;
	r.loss.time_end = t;
	r.loss.source_id = src;
	r.loss.count = count;
	put(&r);
}

int main(int argc, char **argv)
{
	struct nsk_writer_opts o = { .chunk_bytes = 4096,
				     .recording_id = { 0x6e736b67656e0001ull, 0x1234 } };
	uint64_t n = 20000, lost = 0, t = T0;
	struct nsk_record r;
	int end = 1, fd, err, i;
	const char *out = NULL;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			o.chunk_bytes = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--no-end"))
			end = 0;
		else if (!out)
			out = argv[i];
		else
			goto usage;
	}
	if (!out)
		goto usage;
	fd = strcmp(out, "-") ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	if (fd < 0) {
		fprintf(stderr, "nsk_gen: %s: %s\n", out, strerror(errno));
		return 1;
	}
	err = nsk_writer__new(nsk_io__from_fd(fd, fd != 1), &o, &w);
	if (err) {
		fprintf(stderr, "nsk_gen: %s: %s\n", out, strerror(-err));
		return 1;
	}

	meta("host", "gen-host", 8);
	meta("kernel", "6.18.0-test", 11);
	meta("cmdline", "./workload\0--spin\0", 18);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_CLOCK;
	r.clock.monotonic_ns = T0;
	r.clock.realtime_ns = WALL0;
	put(&r);
	string(1, "cpu.ringbuf");
	string(2, "cpu.stack");
	string(3, "/usr/bin/workload");
	string(4, "main");
	string(5, "spin");
	string(6, "workload");

	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_PROCESS;
	r.process = (struct nsk_rec_process){ t, 1000, 1, NSK_PROC_LAUNCHED, S("workload"),
					      B("./workload\0--spin\0", 18) };
	put(&r);
	for (uint32_t tid = 1000; tid <= 1001; tid++) {
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_THREAD;
		r.thread = (struct nsk_rec_thread){ t, 1000, tid, S("workload") };
		put(&r);
	}
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_MAPPING;
	r.mapping = (struct nsk_rec_mapping){ 1, 1000, 0x400000, 0x500000, 0, 3,
					      B("\x01\x02\x03\x04", 4) };
	put(&r);
	for (uint64_t f = 1; f <= 4; f++) {
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_FRAME;
		r.frame.id = f;
		r.frame.mapping_id = 1;
		r.frame.addr = 0x1000 + f * 0x40;
		r.frame.function_id = f % 2 ? 4 : 5;
		r.frame.line = (uint32_t)(10 * f);
		r.frame.module_id = 6;
		put(&r);
	}
	for (uint64_t s = 1; s <= 3; s++) {
		static const uint64_t frames[] = { 4, 3, 2, 1 };

		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_STACK;
		r.stack.id = s;
		r.stack.flags = NSK_STACK_UNWIND_FP;
		r.stack.frames = (struct nsk_u64s){ frames + s - 1, (uint32_t)(5 - s) };
		put(&r);
	}

	for (uint64_t k = 0; k < n; k++) {
		t = T0 + 1000000 * (k + 1);
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_SAMPLE;
		r.sample = (struct nsk_rec_sample){ t, 1000, 1000 + (uint32_t)(k % 2),
						    (uint32_t)(k % 2), 1 + k % 3, 1000000 };
		put(&r);
		if (k % 1000 == 999) {
			loss(t, 1, 5);
			lost += 5;
		}
	}
	loss(t, 2, 2);
	lost += 2;

	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_ALLOC;
	r.alloc = (struct nsk_rec_alloc){ t, 1000, 1000, 0x7f0000001000, 4096, 2,
					  NSK_ALLOC_MALLOC, 4096 };
	put(&r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_FREE;
	r.free = (struct nsk_rec_free){ t, 1000, 1000, 0x7f0000001000, NSK_ALLOC_FREE, 0 };
	put(&r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_OFFCPU;
	r.offcpu.time = t;
	r.offcpu.duration = 5000000;
	r.offcpu.pid = 1000;
	r.offcpu.tid = 1001;
	r.offcpu.reason = NSK_OFFCPU_SLEEP;
	r.offcpu.stack_id = 3;
	r.offcpu.syscall = 35;
	r.offcpu.waker_comm = S("swapper/0");
	put(&r);
	{
		static const uint64_t hist[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 7 };
		static const uint64_t errnos[] = { 11, 2 };

		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_SYSCALL_STAT;
		r.syscall_stat.time = t;
		r.syscall_stat.window_ns = 1000000000;
		r.syscall_stat.pid = 1000;
		r.syscall_stat.tid = 1000;
		r.syscall_stat.nr = 0;
		r.syscall_stat.stack_id = 1;
		r.syscall_stat.count = 10;
		r.syscall_stat.errors = 2;
		r.syscall_stat.total_ns = 20000;
		r.syscall_stat.max_ns = 3000;
		r.syscall_stat.hist = (struct nsk_u64s){ hist, 12 };
		r.syscall_stat.errnos = (struct nsk_u64s){ errnos, 2 };
		put(&r);
	}
	{
		static const uint64_t args[] = { 3, 0x7ffc0000, 4096 };

		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_SYSCALL_SLOW;
		r.syscall_slow = (struct nsk_rec_syscall_slow){ t, 20000000, 1000, 1000, 0, -11,
								{ args, 3 }, 3, 1 };
		put(&r);
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_CONN;
		r.conn.id = 1;
		r.conn.family = 2;
		r.conn.saddr = B("\x7f\x00\x00\x01", 4);
		r.conn.daddr = B("\x7f\x00\x00\x01", 4);
		r.conn.sport = 40000;
		r.conn.dport = 8080;
		r.conn.pid = 1000;
		r.conn.tid = 1001;
		r.conn.time = t;
		r.conn.state = 1;
		r.conn.stack_id = 2;
		put(&r);
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_RETRANSMIT;
		r.retransmit = (struct nsk_rec_retransmit){ t, 1, 1000, 1001, 1, 1, 200, 204000 };
		put(&r);
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_EXIT;
		r.exit = (struct nsk_rec_exit){ t, 1000, 1000, 0 };
		put(&r);
	}
	if (end) {
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_END;
		r.end = (struct nsk_rec_end){ t + 1, nrec, lost };
		put(&r);
	}
	err = end ? nsk_writer__close(w) : nsk_writer__flush(w);
	if (!end) /* as if killed: no index chunk */
		nsk_writer__free(w);
	if (err) {
		fprintf(stderr, "nsk_gen: %s: %s\n", out, strerror(-err));
		return 1;
	}
	return 0;

usage:
	fprintf(stderr, "usage: nsk_gen [-n SAMPLES] [-c CHUNK_BYTES] [--no-end] OUT|-\n");
	return 2;
}
