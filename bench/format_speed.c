/* bench/format_speed: how fast the .nsk writer and reader go, and how small
 * the file is, on 1e6 CPU-sample records as the recorder writes them (4
 * threads at 1 kHz, a few hundred stacks).  Not a test: it prints numbers.
 *
 *   bench/format_speed [RECORDS] [CHUNK_BYTES] [ZSTD_LEVEL]
 *
 * Writes into memory (so it measures the library, not the disk), then
 * reads the bytes back.  Prints records/s and MB/s (of file bytes) for
 * each, from the CPU time the thread used (wall time alongside), and file
 * bytes per record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nusku/format.h>

#include "tests/unit/fmt_testlib.h"

/* CPU time of this thread: on a shared machine wall time measures the
 * neighbours too.  Wall time is printed alongside. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	struct nsk_writer_opts o = {
		.chunk_bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : 0,
		.zstd_level = argc > 3 ? atoi(argv[3]) : 0,
	};
	struct mem_io m = { 0 }, src;
	struct nsk_writer *w;
	struct nsk_reader *rd;
	struct nsk_record rec, *recs;
	struct rng r = { 42 };
	double t0, c0, tw, tr, cw, cr;
	uint64_t sum = 0;
	size_t got = 0;
	int rc;

	/* Generate first so the timing is the writer's alone. */
	recs = malloc(n * sizeof(*recs));
	if (!recs)
		return 1;
	for (size_t i = 0; i < n; i++)
		gen__sample(&r, i, &recs[i]);
	/* Pre-size the sink so realloc is not timed either. */
	m.cap = n * 8 + (1 << 20);
	m.buf = malloc(m.cap);

	t0 = now();
	c0 = cpu_now();
	if (nsk_writer__new(mem_io__io(&m), &o, &w))
		return 1;
	for (size_t i = 0; i < n; i++)
		if (nsk_writer__append(w, &recs[i]))
			return 1;
	if (nsk_writer__close(w))
		return 1;
	tw = now() - t0;
	cw = cpu_now() - c0;

	t0 = now();
	c0 = cpu_now();
	if (nsk_reader__new(mem_io__reader(&src, m.buf, m.len), NULL, &rd))
		return 1;
	while ((rc = nsk_reader__next(rd, &rec)) == 1) {
		sum += rec.sample.stack_id;
		got++;
	}
	nsk_reader__free(rd);
	tr = now() - t0;
	cr = cpu_now() - c0;
	if (rc || got != n) {
		fprintf(stderr, "format_speed: read back %zu of %zu records\n", got, n);
		return 1;
	}

	printf("records          %zu sample records, chunk %zu bytes, zstd level %d\n", n,
	       o.chunk_bytes ? o.chunk_bytes : 256u << 10, o.zstd_level ? o.zstd_level : 3);
	printf("file             %zu bytes, %.2f bytes/record\n", m.len, (double)m.len / (double)n);
	printf("write            %.0f records/s, %.1f MB/s of file, %.0f ns/record (CPU time; "
	       "wall %.0f ns)\n",
	       (double)n / cw, (double)m.len / cw / 1e6, cw * 1e9 / (double)n,
	       tw * 1e9 / (double)n);
	printf("read             %.0f records/s, %.1f MB/s of file, %.0f ns/record (CPU time; "
	       "wall %.0f ns)\n",
	       (double)n / cr, (double)m.len / cr / 1e6, cr * 1e9 / (double)n,
	       tr * 1e9 / (double)n);
	fprintf(stderr, "(checksum %llu)\n", (unsigned long long)sum);
	free(recs);
	mem_io__release(&m);
	return 0;
}
