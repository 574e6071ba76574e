/* live_gen: writes a synthetic recording in real time, for the nusku live
 * tests.  It needs no BPF and no root, and its answer is known by
 * construction (LIVE_GEN_FLUSH_MS sets the flush interval, default 100):
 * CPU samples split 60/30/10 between gen_hot_a, gen_hot_b and
 * gen_hot_c, a loss record of 7 events, and samples stamped with the real
 * CLOCK_MONOTONIC so "last window" means what it says.
 *
 *   live_gen OUT SECONDS [--die]
 *   live_gen OUT --fast N        N samples at once, 1 ms apart (for bench/)
 *
 * OUT is a path or "-" (stdout).  Chunks are flushed every 100 ms.  With
 * --die the generator writes half of its last chunk and exits without an
 * END record, as a recorder killed mid-write would.  Without it, the
 * recording ends cleanly. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nusku/format.h>

struct cut_io {
	int fd;
	int armed; /* the next write is cut in half, then we die */
};

static ssize_t cut_write(void *ctx, const void *buf, size_t len)
{
	struct cut_io *c = ctx;
	ssize_t n;

	if (c->armed) {
		size_t half = len / 2 ? len / 2 : 1;

		n = write(c->fd, buf, half);
		(void)n;
		_exit(3);
	}
	n = write(c->fd, buf, len);
	return n < 0 ? -errno : n;
}

static int cut_close(void *ctx)
{
	(void)ctx;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#define BYTES(s) ((struct nsk_bytes){ (const uint8_t *)(s), sizeof(s) - 1 })

static int emit(struct nsk_writer *w, struct nsk_record *r)
{
	int err = nsk_writer__append(w, r);

	if (err < 0) {
		fprintf(stderr, "live_gen: append: %s\n", strerror(-err));
		exit(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const funcs[] = { "gen_hot_a", "gen_hot_b",
					     "gen_hot_c", "main" };
	struct cut_io cio = { .fd = -1 };
	struct nsk_io *io;
	struct nsk_writer *w;
	struct nsk_record r;
	uint64_t start, end, next, i = 0;
	unsigned long long fast;
	double seconds, flush_ms;
	int die, err;

	if (argc < 3) {
		fprintf(stderr, "usage: live_gen OUT SECONDS [--die]\n");
		return 2;
	}
	fast = !strcmp(argv[2], "--fast") && argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
	seconds = fast ? 0 : atof(argv[2]);
	die = argc > 3 && !strcmp(argv[3], "--die");
	cio.fd = strcmp(argv[1], "-") ? open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644)
				      : STDOUT_FILENO;
	if (cio.fd < 0) {
		perror(argv[1]);
		return 1;
	}
	io = calloc(1, sizeof(*io));
	if (!io)
		return 1;
	io->write = cut_write;
	io->close = cut_close;
	io->ctx = &cio;
	/* LIVE_GEN_FLUSH_MS: the writer's flush interval (bench/). */
	flush_ms = getenv("LIVE_GEN_FLUSH_MS") ? atof(getenv("LIVE_GEN_FLUSH_MS")) : 100;
	err = nsk_writer__new(io, &(struct nsk_writer_opts){
					  .flush_interval_ns = (uint64_t)(flush_ms * 1e6) },
			      &w);
	if (err < 0) {
		fprintf(stderr, "live_gen: writer: %s\n", strerror(-err));
		return 1;
	}

	start = mono_ns();
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_META;
	r.meta.key = BYTES("cmdline");
	r.meta.value = BYTES("live_gen");
	emit(w, &r);
	r.type = NSK_REC_CLOCK;
	r.clock.monotonic_ns = start;
	r.clock.realtime_ns = real_ns();
	emit(w, &r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_PROCESS;
	r.process.time = start;
	r.process.pid = 4242;
	r.process.ppid = 1;
	r.process.how = NSK_PROC_LAUNCHED;
	r.process.comm = BYTES("live_gen");
	r.process.cmdline = BYTES("live_gen");
	emit(w, &r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_THREAD;
	r.thread.time = start;
	r.thread.pid = 4242;
	r.thread.tid = 4242;
	r.thread.name = BYTES("live_gen");
	emit(w, &r);
	for (int f = 0; f < 4; f++) {
		uint64_t frames[2];

		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_STRING;
		r.string.id = f + 1;
		r.string.str = (struct nsk_bytes){ (const uint8_t *)funcs[f],
						   (uint32_t)strlen(funcs[f]) };
		emit(w, &r);
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_FRAME;
		r.frame.id = f + 1;
		r.frame.addr = 0x1000 + 0x100 * f;
		r.frame.function_id = f + 1;
		emit(w, &r);
		if (f == 3)
			break;
		/* Stacks: leaf first, under main. */
		frames[0] = f + 1;
		frames[1] = 4;
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_STACK;
		r.stack.id = f + 1;
		r.stack.flags = NSK_STACK_UNWIND_FP;
		r.stack.frames = (struct nsk_u64s){ frames, 2 };
		/* frames[] outlives the call: the writer copies it. */
		emit(w, &r);
	}
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_STRING;
	r.string.id = 10;
	r.string.str = BYTES("cpu.ringbuf");
	emit(w, &r);
	r.type = NSK_REC_LOSS;
	r.loss.time_start = start;
	r.loss.time_end = start;
	r.loss.source_id = 10;
	r.loss.count = 7;
	emit(w, &r);

	for (; i < fast; i++) {
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_SAMPLE;
		r.sample.time = start + i * 100000ull;
		r.sample.pid = 4242;
		r.sample.tid = 4242 + i % 4;
		r.sample.stack_id = i % 10 < 6 ? 1 : i % 10 < 9 ? 2 : 3;
		r.sample.weight = 100000;
		emit(w, &r);
	}
	end = start + (uint64_t)(seconds * 1e9);
	next = start;
	while (mono_ns() < end) {
		/* Ten samples of 1 ms every 10 ms: 6 a, 3 b, 1 c. */
		for (int k = 0; k < 10; k++, i++) {
			memset(&r, 0, sizeof(r));
			r.type = NSK_REC_SAMPLE;
			r.sample.time = mono_ns();
			r.sample.pid = 4242;
			r.sample.tid = 4242;
			r.sample.stack_id = k < 6 ? 1 : k < 9 ? 2 : 3;
			r.sample.weight = 1000000;
			emit(w, &r);
		}
		err = nsk_writer__tick(w, mono_ns());
		if (err < 0) {
			fprintf(stderr, "live_gen: %s\n", strerror(-err));
			return 1;
		}
		next += 10000000ull;
		while (mono_ns() < next)
			usleep(1000);
	}
	if (die) {
		cio.armed = 1;
		nsk_writer__flush(w);
		return 4; /* not reached: the cut write exits */
	}
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_END;
	r.end.time = mono_ns();
	r.end.records = i;
	r.end.lost = 7;
	emit(w, &r);
	err = nsk_writer__close(w);
	if (err < 0) {
		fprintf(stderr, "live_gen: close: %s\n", strerror(-err));
		return 1;
	}
	/* The writer owned io and freed it. */
	if (cio.fd != STDOUT_FILENO)
		close(cio.fd);
	return 0;
}
