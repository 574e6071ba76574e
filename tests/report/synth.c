/* Synthetic recordings: see synth.h.
 *
 * The known recording (100 samples, 10 ms apart from SYNTH_T0):
 *
 *   i      pid  tid  stack (leaf first)                          samples
 *   0-39   100  100  S1 hot_a < main < __libc_start_main            40
 *   40-59  100  100  S2 hot_b < main < __libc_start_main            20
 *   60-69  100  100  S3 helper (inlined in hot_c) < main < ...      10
 *   70-79  100  101  S4 recurse < recurse < recurse < main < ...    10
 *                        (S4 is flagged truncated: the walk stopped early)
 *   80-89  100  101  S5 libc.so.6+0x1234 (no symbol) < hot_a < ...  10
 *   90-94  100  101  S6 frame 99 (never defined) < main < ...        5
 *   95-97  200  200  S1                                              3
 *   98-99  200  200  stack 77 (never defined)                        2
 *
 * pid 100 is "cpu_hot", its thread 101 "worker", pid 200 "other".
 * Losses: cpu.ringbuf 7, cpu.stack 3.  END at SYNTH_T0 + 1 s. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/report/synth.h"

#define B(s) ((struct nsk_bytes){ (const uint8_t *)(s), sizeof(s) - 1 })

static int put_string(struct nsk_writer *w, uint64_t id, const char *s)
{
	struct nsk_record r = { .type = NSK_REC_STRING };

	r.string.id = id;
	r.string.str.data = (const uint8_t *)s;
	r.string.str.len = (uint32_t)strlen(s);
	return nsk_writer__append(w, &r);
}

/* Mapping 1 of process 100: the page at 0x400000, of file path_id. */
static int put_mapping(struct nsk_writer *w, uint64_t path_id,
		       struct nsk_bytes build_id)
{
	struct nsk_record r = { .type = NSK_REC_MAPPING };

	r.mapping.id = 1;
	r.mapping.pid = 100;
	r.mapping.start = 0x400000;
	r.mapping.end = 0x401000;
	r.mapping.path_id = path_id;
	r.mapping.build_id = build_id;
	return nsk_writer__append(w, &r);
}

static int put_frame(struct nsk_writer *w, uint64_t id, uint64_t fn,
		     uint64_t module, uint64_t addr, uint32_t flags,
		     uint64_t inline_parent)
{
	struct nsk_record r = { .type = NSK_REC_FRAME };

	r.frame.id = id;
	r.frame.mapping_id = 1;
	r.frame.addr = addr;
	r.frame.function_id = fn;
	r.frame.file_id = fn ? 12 : 0;
	r.frame.line = (uint32_t)(10 * id);
	r.frame.flags = flags;
	r.frame.inline_parent = inline_parent;
	r.frame.module_id = module;
	return nsk_writer__append(w, &r);
}

static int put_stack(struct nsk_writer *w, uint64_t id, const uint64_t *f,
		     uint32_t n)
{
	struct nsk_record r = { .type = NSK_REC_STACK };

	r.stack.id = id;
	/* the recursion's walk is marked as cut short (a loss to count) */
	r.stack.flags = NSK_STACK_UNWIND_FP | (id == 4 && n == 5 ?
					       NSK_STACK_TRUNCATED : 0);
	r.stack.frames.v = f;
	r.stack.frames.n = n;
	return nsk_writer__append(w, &r);
}

static int put_sample(struct nsk_writer *w, uint64_t i, uint32_t pid,
		      uint32_t tid, uint64_t stack)
{
	struct nsk_record r = { .type = NSK_REC_SAMPLE };

	r.sample.time = SYNTH_T0 + i * SYNTH_STEP;
	r.sample.pid = pid;
	r.sample.tid = tid;
	r.sample.cpu = (uint32_t)(i % 2);
	r.sample.stack_id = stack;
	r.sample.weight = SYNTH_STEP;
	return nsk_writer__append(w, &r);
}

int synth__known(struct nsk_writer *w, int with_end)
{
	static const char *const strs[] = {
		NULL, "main", "hot_a", "hot_b", "helper", "recurse", "cpu_hot",
		"libc.so.6", "cpu.ringbuf", "/bin/cpu_hot", "hot_c",
		"__libc_start_main", "cpu_hot.c", "cpu.stack",
	};
	static const uint64_t s1[] = { 2, 1, 8 }, s2[] = { 3, 1, 8 },
			      s3[] = { 4, 1, 8 }, s4[] = { 6, 6, 6, 1, 8 },
			      s5[] = { 7, 2, 1, 8 }, s6[] = { 99, 1, 8 };
	struct nsk_record r;
	int err = 0;
	uint64_t i = 0;

	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_META;
	r.meta.key = B("cmdline");
	r.meta.value = B("cpu_hot 1");
	err = err ?: nsk_writer__append(w, &r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_CLOCK;
	r.clock.monotonic_ns = SYNTH_T0;
	r.clock.realtime_ns = 1700000000000000000ull;
	err = err ?: nsk_writer__append(w, &r);
	for (uint64_t id = 1; id < sizeof(strs) / sizeof(strs[0]); id++)
		err = err ?: put_string(w, id, strs[id]);

	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_PROCESS;
	r.process.time = SYNTH_T0;
	r.process.pid = 100;
	r.process.ppid = 1;
	r.process.how = NSK_PROC_LAUNCHED;
	r.process.comm = B("cpu_hot");
	r.process.cmdline = B("./cpu_hot\0001");
	err = err ?: nsk_writer__append(w, &r);
	r.process.pid = 200;
	r.process.how = NSK_PROC_ATTACHED;
	r.process.comm = B("other");
	r.process.cmdline = B("other");
	err = err ?: nsk_writer__append(w, &r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_THREAD;
	r.thread.time = SYNTH_T0;
	r.thread.pid = 100;
	r.thread.tid = 101;
	r.thread.name = B("worker");
	err = err ?: nsk_writer__append(w, &r);
	err = err ?: put_mapping(w, 9, B("\x01\x02\xab"));

	err = err ?: put_frame(w, 1, 1, 6, 0x1100, 0, 0);	/* main */
	err = err ?: put_frame(w, 2, 2, 6, 0x1200, 0, 0);	/* hot_a */
	err = err ?: put_frame(w, 3, 3, 6, 0x1300, 0, 0);	/* hot_b */
	err = err ?: put_frame(w, 5, 10, 6, 0x1400, 0, 0);	/* hot_c */
	err = err ?: put_frame(w, 4, 4, 6, 0x1400, NSK_FRAME_INLINED, 5);
	err = err ?: put_frame(w, 6, 5, 6, 0x1500, 0, 0);	/* recurse */
	err = err ?: put_frame(w, 7, 0, 7, 0x1234, NSK_FRAME_UNRESOLVED, 0);
	err = err ?: put_frame(w, 8, 11, 7, 0x2000, 0, 0);
	err = err ?: put_stack(w, 1, s1, 3);
	err = err ?: put_stack(w, 2, s2, 3);
	err = err ?: put_stack(w, 3, s3, 3);
	err = err ?: put_stack(w, 4, s4, 5);
	err = err ?: put_stack(w, 5, s5, 4);
	err = err ?: put_stack(w, 6, s6, 3);

	for (; i < 40; i++)
		err = err ?: put_sample(w, i, 100, 100, 1);
	for (; i < 60; i++)
		err = err ?: put_sample(w, i, 100, 100, 2);
	for (; i < 70; i++)
		err = err ?: put_sample(w, i, 100, 100, 3);
	for (; i < 80; i++)
		err = err ?: put_sample(w, i, 100, 101, 4);
	for (; i < 90; i++)
		err = err ?: put_sample(w, i, 100, 101, 5);
	for (; i < 95; i++)
		err = err ?: put_sample(w, i, 100, 101, 6);
	for (; i < 98; i++)
		err = err ?: put_sample(w, i, 200, 200, 1);
	for (; i < 100; i++)
		err = err ?: put_sample(w, i, 200, 200, 77);

	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_LOSS;
	r.loss.time_start = SYNTH_T0;
	r.loss.time_end = SYNTH_T0 + 500000000ull;
	r.loss.source_id = 8;
	r.loss.count = 7;
	err = err ?: nsk_writer__append(w, &r);
	r.loss.source_id = 13;
	r.loss.count = 3;
	err = err ?: nsk_writer__append(w, &r);
	if (with_end) {
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_END;
		r.end.time = SYNTH_T0 + 1000000000ull;
		r.end.records = 0;
		r.end.lost = 10;
		err = err ?: nsk_writer__append(w, &r);
	}
	return err;
}

/* ---- a hostile recording (issue 17) ---- */

#define EVIL "\x1b]0;pwned\x07\x1b[2J"

int synth__hostile(struct nsk_writer *w)
{
	static const uint64_t s1[] = { 1 };
	struct nsk_record r;
	int err = 0;

	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_META;
	r.meta.key = B("target.cmdline");
	r.meta.value = B(EVIL);
	err = err ?: nsk_writer__append(w, &r);
	/* An empty STRING body: its bytes arrive as NULL, length 0. */
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_STRING;
	r.string.id = 3;
	err = err ?: nsk_writer__append(w, &r);
	err = err ?: put_string(w, 1, EVIL "fn");
	err = err ?: put_string(w, 2, EVIL ".so");
	err = err ?: put_string(w, 4, "loss" EVIL);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_PROCESS;
	r.process.time = SYNTH_T0;
	r.process.pid = 100;
	r.process.ppid = 1;
	r.process.how = NSK_PROC_LAUNCHED;
	r.process.comm = B(EVIL);
	r.process.cmdline = B(EVIL);
	err = err ?: nsk_writer__append(w, &r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_THREAD;
	r.thread.time = SYNTH_T0;
	r.thread.pid = 100;
	r.thread.tid = 100;
	r.thread.name = B(EVIL);
	err = err ?: nsk_writer__append(w, &r);
	err = err ?: put_frame(w, 1, 1, 2, 0x1100, 0, 0);
	err = err ?: put_stack(w, 1, s1, 1);
	err = err ?: put_sample(w, 0, 100, 100, 1);
	/* A time past 2^63 ns: the span and the buckets must not overflow. */
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_SAMPLE;
	r.sample.time = (1ull << 63) + 12345;
	r.sample.pid = r.sample.tid = 100;
	r.sample.stack_id = 1;
	r.sample.weight = SYNTH_STEP;
	err = err ?: nsk_writer__append(w, &r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_ALLOC;
	r.alloc.time = SYNTH_T0;
	r.alloc.pid = r.alloc.tid = 100;
	r.alloc.addr = 0x1000;
	r.alloc.size = r.alloc.weight = 64;
	r.alloc.stack_id = 1;
	r.alloc.fn = NSK_ALLOC_MALLOC;
	err = err ?: nsk_writer__append(w, &r);
	r.alloc.time = (1ull << 63) + 99;
	r.alloc.addr = 0x2000;
	err = err ?: nsk_writer__append(w, &r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_LOSS;
	r.loss.time_start = SYNTH_T0;
	r.loss.time_end = SYNTH_T0 + 1;
	r.loss.source_id = 4;
	r.loss.count = 1;
	err = err ?: nsk_writer__append(w, &r);
	return err;
}

/* ---- deep stacks and long names (issue 17) ---- */

int synth__deep(struct nsk_writer *w, unsigned nstacks, uint32_t depth,
		uint32_t name_bytes)
{
	unsigned nframes = nstacks + 1;
	uint64_t *fr = NULL;
	char *name = NULL;
	struct nsk_record r;
	int err = 0;

	fr = calloc(depth ? depth : 1, sizeof(*fr));
	name = malloc((size_t)name_bytes + 32);
	if (!fr || !name) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = put_string(w, 1, "app");
	/* Names differ in their first bytes so that each is its own func. */
	for (unsigned f = 0; f < nframes && !err; f++) {
		int n = snprintf(name, 32, "f%u_", f);

		memset(name + n, 'x', name_bytes > (uint32_t)n ? name_bytes - n : 0);
		name[name_bytes > (uint32_t)n ? name_bytes : (uint32_t)n] = '\0';
		err = put_string(w, 100 + f, name);
		err = err ?: put_frame(w, 1 + f, 100 + f, 1, 0x1000 + 16 * f, 0, 0);
	}
	for (unsigned s = 0; s < nstacks && !err; s++) {
		for (uint32_t i = 0; i < depth; i++)
			fr[i] = 1 + (s + i) % nframes;
		err = put_stack(w, 1 + s, fr, depth);
		err = err ?: put_sample(w, s, 100, 100, 1 + s);
	}
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_END;
	r.end.time = SYNTH_T0 + (uint64_t)nstacks * SYNTH_STEP;
	err = err ?: nsk_writer__append(w, &r);
cleanup:
	free(fr);
	free(name);
	return err;
}

/* ---- the benchmark recording ---- */

static uint64_t next(uint64_t *s)
{
	uint64_t x = *s; /* xorshift64* */

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

#define NFUNC 600
#define NMOD 6

int synth__bench(struct nsk_writer *w, uint64_t n, unsigned freq_hz,
		 unsigned nstacks)
{
	static const char *const mods[NMOD] = {
		"app", "libc.so.6", "libstdc++.so.6", "libssl.so.3",
		"libz.so.1", "[kernel]"
	};
	uint64_t seed = 0x9e3779b97f4a7c15ull, fr[128], period;
	char name[128];
	struct nsk_record r;
	int err = 0;

	/* Strings: modules 1..NMOD, functions NMOD+1..NMOD+NFUNC. */
	for (unsigned m = 0; m < NMOD; m++)
		err = err ?: put_string(w, 1 + m, mods[m]);
	for (unsigned f = 0; f < NFUNC && !err; f++) {
		snprintf(name, sizeof(name), f % 7 ? "ns%u::Class%u::method_%u"
			 : "std::vector<std::pair<int, long>, std::allocator<"
			   "std::pair<int, long> > >::_M_realloc_insert_%u%u%u",
			 f % 13, f % 37, f);
		err = put_string(w, NMOD + 1 + f, name);
	}
	/* Frames: one per function, plus an inlined copy of every 10th
	 * function inside the next one. */
	for (unsigned f = 0; f < NFUNC && !err; f++)
		err = put_frame(w, 1 + f, NMOD + 1 + f, 1 + f % NMOD,
				0x1000 + 16 * f, f % NMOD == NMOD - 1 ?
				NSK_FRAME_KERNEL : 0, 0);
	for (unsigned f = 0; f + 1 < NFUNC && !err; f += 10)
		err = put_frame(w, 10000 + f, NMOD + 1 + f, 1 + f % NMOD,
				0x1000 + 16 * (f + 1), NSK_FRAME_INLINED,
				2 + f);
	/* Stacks: a common root chain of 6, then a random walk of 4..40
	 * frames through a few "subsystems", so that prefixes are shared. */
	for (unsigned s = 1; s <= nstacks && !err; s++) {
		uint32_t depth = 10 + (uint32_t)(next(&seed) % 36), k = 0;
		unsigned sub = (unsigned)(next(&seed) % 20);

		for (uint32_t d = 0; d < depth; d++) {
			unsigned f = d < 6 ? d : 6 + (sub * 29 + d * 7 +
				(unsigned)(next(&seed) % 3)) % (NFUNC - 6);

			fr[depth - 1 - k++] = f % 10 == 0 && d > 6 && d + 1 < depth
					      ? 10000 + f : 1 + f;
		}
		err = put_stack(w, s, fr, depth);
	}
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_PROCESS;
	r.process.time = SYNTH_T0;
	r.process.pid = 4242;
	r.process.how = NSK_PROC_LAUNCHED;
	r.process.comm = B("bench");
	err = err ?: nsk_writer__append(w, &r);
	period = 1000000000ull / (freq_hz ? freq_hz : 999);
	for (uint64_t i = 0; i < n && !err; i++) {
		/* Skewed: a few stacks take most samples, like real profiles. */
		uint64_t x = next(&seed) % 1000000, s;

		s = 1 + (x * x / 1000000) * (x % 7 + 1) % nstacks;
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_SAMPLE;
		r.sample.time = SYNTH_T0 + (i / 4) * period + i % 4;
		r.sample.pid = 4242;
		r.sample.tid = 4242 + (uint32_t)(i % 4);
		r.sample.cpu = (uint32_t)(i % 2);
		r.sample.stack_id = s;
		r.sample.weight = period;
		err = nsk_writer__append(w, &r);
	}
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_END;
	r.end.time = SYNTH_T0 + (n / 4 + 1) * period;
	return err ?: nsk_writer__append(w, &r);
}

int synth__open(const char *path, struct nsk_writer **out)
{
	int fd = strcmp(path, "-") ? open(path, O_WRONLY | O_CREAT | O_TRUNC |
					  O_CLOEXEC, 0644) : STDOUT_FILENO;
	struct nsk_io *io;

	if (fd < 0)
		return -errno;
	io = nsk_io__from_fd(fd, fd != STDOUT_FILENO);
	if (!io) {
		if (fd != STDOUT_FILENO)
			close(fd);
		return -ENOMEM;
	}
	return nsk_writer__new(io, NULL, out);
}

int synth__own(struct nsk_writer *w)
{
	static const char *const strs[] = {
		NULL, "main", "uprobe_prog_run", "prog", "[kernel]",
	};
	static const uint64_t user[] = { 1 }, own[] = { 2, 1 };
	struct nsk_record r;
	int err = 0;
	uint64_t i = 0;

	memset(&r, 0, sizeof(r));
	for (uint64_t id = 1; id < sizeof(strs) / sizeof(*strs) && !err; id++)
		err = put_string(w, id, strs[id]);
	err = err ?: put_frame(w, 1, 1, 3, 0x1000, 0, 0);
	err = err ?: put_frame(w, 2, 2, 4, 0xffffffff81000000ull,
			       NSK_FRAME_KERNEL, 0);
	err = err ?: put_stack(w, 1, user, 1);
	r.type = NSK_REC_STACK;
	r.stack.id = 2;
	r.stack.flags = NSK_STACK_UNWIND_FP | NSK_STACK_OWN;
	r.stack.frames.v = own;
	r.stack.frames.n = 2;
	err = err ?: nsk_writer__append(w, &r);
	for (; i < 10 && !err; i++)
		err = put_sample(w, i, 42, 42, i < 7 ? 1 : 2);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_META;
	r.meta.key = B("cost.bpf_run_ns");
	r.meta.value = B("5000000");
	err = err ?: nsk_writer__append(w, &r);
	r.meta.key = B("cost.bpf_runs");
	r.meta.value = B("1000");
	err = err ?: nsk_writer__append(w, &r);
	/* measured in 100 ms of 2 s: the figures above are estimates */
	r.meta.key = B("cost.window_ns");
	r.meta.value = B("100000000 2000000000");
	err = err ?: nsk_writer__append(w, &r);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_END;
	r.end.time = SYNTH_T0 + i * SYNTH_STEP;
	r.end.records = 20;
	return err ?: nsk_writer__append(w, &r);
}

/* ---- allocations (the memory views' loader, its sums and second read) ---- */

static int put_alloc(struct nsk_writer *w, uint64_t time, uint32_t pid,
		     uint64_t addr, uint64_t size, uint64_t stack, uint32_t fn)
{
	struct nsk_record r = { .type = NSK_REC_ALLOC };

	r.alloc.time = time;
	r.alloc.pid = r.alloc.tid = pid;
	r.alloc.addr = addr;
	r.alloc.size = r.alloc.weight = size;
	r.alloc.stack_id = stack;
	r.alloc.fn = fn;
	return nsk_writer__append(w, &r);
}

static int put_free(struct nsk_writer *w, uint64_t time, uint32_t pid,
		    uint64_t addr, uint64_t size, uint32_t fn)
{
	struct nsk_record r = { .type = NSK_REC_FREE };

	r.free.time = time;
	r.free.pid = r.free.tid = pid;
	r.free.addr = addr;
	r.free.size = size;
	r.free.fn = fn;
	return nsk_writer__append(w, &r);
}

int synth__alloc(struct nsk_writer *w, uint64_t n, uint64_t live)
{
	static const char *const strs[] = {
		NULL, "malloc", "site_a", "site_b", "main", "libc.so.6", "app",
		"child", "/lib/x86_64-linux-gnu/libc.so.6",
	};
	/* site_a and site_b through malloc in libc, main directly */
	static const uint64_t s1[] = { 1, 2, 4 }, s2[] = { 1, 3, 4 },
			      s3[] = { 4 };
	struct nsk_record r;
	uint64_t t = SYNTH_T0, i;
	int err = 0;

	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_META;
	r.meta.key = B("alloc.allocator");
	r.meta.value = B("/lib/x86_64-linux-gnu/libc.so.6");
	err = err ?: nsk_writer__append(w, &r);
	for (uint64_t id = 1; id < sizeof(strs) / sizeof(strs[0]); id++)
		err = err ?: put_string(w, id, strs[id]);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_PROCESS;
	r.process.time = t;
	r.process.pid = 100;
	r.process.ppid = 1;
	r.process.how = NSK_PROC_LAUNCHED;
	r.process.comm = B("app");
	err = err ?: nsk_writer__append(w, &r);
	r.process.pid = 200;
	r.process.ppid = 100;
	r.process.how = NSK_PROC_FORKED;
	r.process.comm = B("child");
	err = err ?: nsk_writer__append(w, &r);
	err = err ?: put_frame(w, 1, 1, 5, 0x1000, 0, 0);
	err = err ?: put_frame(w, 2, 2, 6, 0x2000, 0, 0);
	err = err ?: put_frame(w, 3, 3, 6, 0x3000, 0, 0);
	err = err ?: put_frame(w, 4, 4, 6, 0x4000, 0, 0);
	err = err ?: put_stack(w, 1, s1, 3);
	err = err ?: put_stack(w, 2, s2, 3);
	err = err ?: put_stack(w, 3, s3, 1);
	/* a churn over 64 addresses: each one freed before it is reused,
	 * every 7th handed out again unfreed (an implied free), every 13th
	 * failed; the free of a block never seen allocated */
	err = err ?: put_free(w, t, 100, 0xdead0, 0, NSK_ALLOC_FREE);
	for (i = 0; i < n && !err; i++) {
		uint64_t a = 0x100000 + (i % 64) * 0x1000;

		t += 1000;
		if (i >= 64 && i % 7)
			err = put_free(w, t, 100, a, 0, NSK_ALLOC_FREE);
		err = err ?: put_alloc(w, t + 10, 100, i % 13 ? a : 0,
				       16 + i % 100, 1 + i % 2, NSK_ALLOC_MALLOC);
	}
	/* never freed, in the child, which exits holding them */
	for (i = 0; i < live && !err; i++)
		err = put_alloc(w, t + i, 200, 0x10000000 + 32 * i, 32, 3,
				NSK_ALLOC_MALLOC);
	t += live + 1000;
	/* a region ended by munmap, a reservation and a commit in it, a
	 * record out of time order (another CPU's ring, 1 s late) */
	err = err ?: put_alloc(w, t, 100, 0x7f0000000000, 1 << 20, 2, NSK_ALLOC_MMAP);
	err = err ?: put_alloc(w, t + 1, 100, 0x7f1000000000, 1 << 30, 2, NSK_ALLOC_RESERVE);
	err = err ?: put_alloc(w, t + 2, 100, 0x7f1000000000, 1 << 16, 2, NSK_ALLOC_MPROTECT);
	err = err ?: put_free(w, t + 3, 100, 0x7f0000000000, 1 << 20, NSK_ALLOC_MUNMAP);
	err = err ?: put_alloc(w, t - 1000000000 > SYNTH_T0 ? t - 1000000000 : SYNTH_T0,
			       100, 0x5000, 48, 1, NSK_ALLOC_CALLOC);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_EXIT;
	r.exit.time = t + 5;
	r.exit.pid = r.exit.tid = 200;
	err = err ?: nsk_writer__append(w, &r);
	/* the stream goes on past the exit margin, then an exec of pid 100 */
	err = err ?: put_alloc(w, t + 3000000000ull, 100, 0x6000, 64, 1, NSK_ALLOC_MALLOC);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_PROCESS;
	r.process.time = t + 3000000001ull;
	r.process.pid = 100;
	r.process.ppid = 1;
	r.process.how = NSK_PROC_EXECED;
	r.process.comm = B("app");
	err = err ?: nsk_writer__append(w, &r);
	err = err ?: put_alloc(w, t + 3000000002ull, 100, 0x6000, 80, 2, NSK_ALLOC_MALLOC);
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_END;
	r.end.time = t + 3000000010ull;
	return err ?: nsk_writer__append(w, &r);
}

int synth__scan(struct nsk_writer *w, uint64_t regions, uint64_t live,
		uint64_t exits)
{
	static const uint64_t s1[] = { 1 };
	struct nsk_record r;
	uint64_t t = SYNTH_T0, i;
	int err = put_string(w, 1, "main");

	err = err ?: put_string(w, 2, "app");
	err = err ?: put_frame(w, 1, 1, 2, 0x1000, 0, 0);
	err = err ?: put_stack(w, 1, s1, 1);
	/* regions that stay mapped, then unmaps of ranges that hold none */
	for (i = 0; i < regions && !err; i++)
		err = put_alloc(w, t += 10, 100, 0x100000000000ull + (i << 12),
				4096, 1, NSK_ALLOC_MMAP);
	for (i = 0; i < regions && !err; i++)
		err = put_free(w, t += 10, 100, 0x200000000000ull + (i << 30),
			       1ull << 30, NSK_ALLOC_MUNMAP);
	/* blocks one process holds, while others come, allocate and go */
	for (i = 0; i < live && !err; i++)
		err = put_alloc(w, t += 10, 100, 0x300000000000ull + (i << 5), 32,
				1, NSK_ALLOC_MALLOC);
	for (i = 0; i < exits && !err; i++) {
		uint32_t pid = (uint32_t)(1000 + i);

		err = put_alloc(w, t += 10, pid, 0x400000000000ull, 64, 1,
				NSK_ALLOC_MALLOC);
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_EXIT;
		r.exit.time = t += 10;
		r.exit.pid = r.exit.tid = pid;
		err = err ?: nsk_writer__append(w, &r);
	}
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_END;
	r.end.time = t + 10;
	return err ?: nsk_writer__append(w, &r);
}

int synth__run(struct nsk_writer *w, uint64_t t0, uint64_t realtime_ns,
	       const char *func, const char *module, uint64_t nsamples)
{
	static const uint64_t leaf[] = { 1, 2 };
	struct nsk_record r;
	int err = 0;

	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_CLOCK;
	r.clock.monotonic_ns = t0;
	r.clock.realtime_ns = realtime_ns;
	err = err ?: nsk_writer__append(w, &r);
	err = err ?: put_string(w, 1, func);
	err = err ?: put_string(w, 2, module);
	err = err ?: put_string(w, 3, "main");
	err = err ?: put_mapping(w, 2, (struct nsk_bytes){ NULL, 0 });
	err = err ?: put_frame(w, 1, 1, 2, 0x1100, 0, 0);
	err = err ?: put_frame(w, 2, 3, 2, 0x1000, 0, 0);
	err = err ?: put_stack(w, 1, leaf, 2);
	for (uint64_t i = 0; i < nsamples; i++) {
		memset(&r, 0, sizeof(r));
		r.type = NSK_REC_SAMPLE;
		r.sample.time = t0 + i * SYNTH_STEP;
		r.sample.pid = 100;
		r.sample.tid = 100;
		r.sample.stack_id = 1;
		r.sample.weight = SYNTH_STEP;
		err = err ?: nsk_writer__append(w, &r);
	}
	memset(&r, 0, sizeof(r));
	r.type = NSK_REC_END;
	r.end.time = t0 + nsamples * SYNTH_STEP;
	return err ?: nsk_writer__append(w, &r);
}
