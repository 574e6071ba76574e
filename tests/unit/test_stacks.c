/* Unit tests of the stack room (record/stacks/stacks.h) through an
 * in-memory sink: no BPF, no root.  The address space is this process's
 * own, so the frames are functions of this very binary, and the answers
 * are known: their names, that each is defined once, that a stack seen
 * twice is one id, that an address nothing maps is unresolved. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/procs/maps.h"
#include "record/sink.h"
#include "record/stacks/stacks.h"

#define MAX_RECS 4096

/* The sink: records kept (strings by id), losses summed. */
struct mem_sink {
	char *strings[MAX_RECS];
	uint64_t nstrings;
	struct nsk_rec_frame frames[MAX_RECS];
	size_t nframes;
	struct {
		uint64_t id;
		uint32_t flags;
		uint64_t frames[64];
		uint32_t n;
	} stacks[MAX_RECS];
	size_t nstacks;
	size_t nmappings;
	uint64_t lost;
	int fail; /* emit fails from now */
};

static int mem_emit(void *ctx, const struct nsk_record *rec)
{
	struct mem_sink *m = ctx;

	if (m->fail)
		return -ENOSPC;
	switch (rec->type) {
	case NSK_REC_FRAME:
		ck_assert_uint_lt(m->nframes, MAX_RECS);
		m->frames[m->nframes++] = rec->frame;
		break;
	case NSK_REC_STACK:
		ck_assert_uint_lt(m->nstacks, MAX_RECS);
		m->stacks[m->nstacks].id = rec->stack.id;
		m->stacks[m->nstacks].flags = rec->stack.flags;
		m->stacks[m->nstacks].n = (uint32_t)rec->stack.frames.n;
		ck_assert_uint_le(rec->stack.frames.n, 64);
		memcpy(m->stacks[m->nstacks].frames, rec->stack.frames.v,
		       rec->stack.frames.n * sizeof(uint64_t));
		m->nstacks++;
		break;
	case NSK_REC_MAPPING:
		m->nmappings++;
		break;
	default:
		break;
	}
	return 0;
}

static uint64_t mem_string(void *ctx, const char *str)
{
	struct mem_sink *m = ctx;

	for (uint64_t i = 0; i < m->nstrings; i++)
		if (!strcmp(m->strings[i], str))
			return i + 1;
	ck_assert_uint_lt(m->nstrings, MAX_RECS);
	m->strings[m->nstrings++] = strdup(str);
	return m->nstrings;
}

static void mem_lost(void *ctx, const char *source, uint64_t n)
{
	(void)source;
	((struct mem_sink *)ctx)->lost += n;
}

static const char *str(const struct mem_sink *m, uint64_t id)
{
	return id && id <= m->nstrings ? m->strings[id - 1] : "";
}

static const struct nsk_rec_frame *frame(const struct mem_sink *m, uint64_t id)
{
	for (size_t i = 0; i < m->nframes; i++)
		if (m->frames[i].id == id)
			return &m->frames[i];
	return NULL;
}

/* The process room, played by one address space: ours. */
static struct nsk_aspace *self_as;
static int syncs;

static void as_sync(void *ctx) { (void)ctx; syncs++; }
static struct nsk_aspace *as_at(void *ctx, uint32_t pid, uint64_t t)
{
	(void)ctx; (void)pid; (void)t;
	return self_as;
}
static struct nsk_aspace *as_newest(void *ctx, uint32_t pid)
{
	(void)ctx; (void)pid;
	return self_as;
}
static struct nsk_aspace *as_reread(void *ctx, uint32_t pid, uint64_t t)
{
	(void)ctx; (void)pid; (void)t;
	return NULL;
}

static struct mem_sink *sink_mem;
static struct nsk_stacks *st;

static void setup(void)
{
	struct nsk_sink sink = { NULL, mem_emit, mem_string, mem_lost };
	struct nsk_aspaces as = { NULL, as_sync, as_at, as_newest, as_reread };
	struct nsk_stacks_opts opts = { NSK_CALL_GRAPH_FP, 0 };

	sink_mem = calloc(1, sizeof(*sink_mem));
	ck_assert_ptr_nonnull(sink_mem);
	sink.ctx = sink_mem;
	ck_assert_int_eq(nsk_stacks__new(&sink, &as, &opts, &st), 0);
	ck_assert_int_eq(nsk_aspace__read((uint32_t)getpid(), 0,
					  nsk_stacks__symbols(st), &self_as), 0);
	ck_assert_uint_gt(self_as->n, 0);
	syncs = 0;
}

static void teardown(void)
{
	nsk_stacks__free(st);
	nsk_aspace__put(self_as);
	for (uint64_t i = 0; i < sink_mem->nstrings; i++)
		free(sink_mem->strings[i]);
	free(sink_mem);
}

/* Return addresses as a frame-pointer walk would give them: leaf first,
 * each caller's after its call. */
static uint64_t ret_of_leaf, ret_of_mid;

__attribute__((noinline)) static void st_leaf(void)
{
	ret_of_leaf = (uint64_t)__builtin_return_address(0);
	__asm__ volatile("");
}

__attribute__((noinline)) static void st_mid(void)
{
	st_leaf();
	ret_of_mid = (uint64_t)__builtin_return_address(0);
	__asm__ volatile("");
}

__attribute__((noinline)) void st_outer(void);
__attribute__((noinline)) void st_outer(void)
{
	st_mid();
	__asm__ volatile("");
}

/* The innermost function of a frame id (skipping nothing: our functions
 * are not inlined). */
static const char *fn_of(uint64_t fid)
{
	const struct nsk_rec_frame *f = frame(sink_mem, fid);

	ck_assert_ptr_nonnull(f);
	return str(sink_mem, f->function_id);
}

START_TEST(names_the_frames_of_this_binary)
{
	uint64_t ips[3], id;

	st_outer();
	ips[0] = (uint64_t)(uintptr_t)st_leaf + 1; /* a pc inside the leaf */
	ips[1] = ret_of_leaf;			   /* in st_mid */
	ips[2] = ret_of_mid;			   /* in st_outer */
	id = nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 3, 0);
	ck_assert_uint_ne(id, 0);
	ck_assert_int_gt(syncs, 0); /* process events first */
	ck_assert_uint_eq(sink_mem->nstacks, 1);
	ck_assert_uint_eq(sink_mem->stacks[0].id, id);
	ck_assert_uint_eq(sink_mem->stacks[0].n, 3);
	ck_assert_str_eq(fn_of(sink_mem->stacks[0].frames[0]), "st_leaf");
	ck_assert_str_eq(fn_of(sink_mem->stacks[0].frames[1]), "st_mid");
	ck_assert_str_eq(fn_of(sink_mem->stacks[0].frames[2]), "st_outer");
	ck_assert_str_eq(str(sink_mem, frame(sink_mem, sink_mem->stacks[0].frames[0])->module_id),
			 "test_stacks");
	ck_assert_uint_eq(sink_mem->stacks[0].flags & NSK_STACK_UNWIND_FP, NSK_STACK_UNWIND_FP);
	ck_assert_uint_ge(sink_mem->nmappings, 1);
	ck_assert_uint_eq(sink_mem->lost, 0);
}
END_TEST

START_TEST(defines_each_frame_and_stack_once)
{
	uint64_t ips[2], a, b, c;
	size_t frames;

	st_outer();
	ips[0] = ret_of_leaf;
	ips[1] = ret_of_mid;
	a = nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 2, 0);
	frames = sink_mem->nframes;
	/* the same stack again, and from another process mapping the same
	 * file: one stack, no new frame */
	b = nsk_stacks__intern(st, 1, 5, NULL, 0, ips, 2, 0);
	c = nsk_stacks__intern(st, 2, 0, NULL, 0, ips, 2, 0);
	ck_assert_uint_eq(a, b);
	ck_assert_uint_eq(a, c);
	ck_assert_uint_eq(sink_mem->nstacks, 1);
	ck_assert_uint_eq(sink_mem->nframes, frames);
	/* other flags make another stack of the same frames */
	b = nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 2, NSK_STACK_TRUNCATED);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_eq(sink_mem->nstacks, 2);
	ck_assert_uint_eq(sink_mem->nframes, frames);
}
END_TEST

START_TEST(unmapped_is_unresolved)
{
	uint64_t ips[1] = { 0x10 }, id;
	const struct nsk_rec_frame *f;

	id = nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 1, 0);
	ck_assert_uint_ne(id, 0);
	f = frame(sink_mem, sink_mem->stacks[0].frames[0]);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->flags & NSK_FRAME_UNRESOLVED, NSK_FRAME_UNRESOLVED);
	ck_assert_str_eq(str(sink_mem, f->module_id), "[unknown]");
	ck_assert_uint_eq(f->addr, 0x10);
}
END_TEST

START_TEST(a_caller_no_code_can_be_ends_the_stack)
{
	uint64_t ips[4], id;

	st_outer();
	/* a mapped leaf, a caller in no mapping (a word of data the walk
	 * took for a return address), then one that would be fine */
	ips[0] = (uint64_t)(uintptr_t)st_leaf + 1;
	ips[1] = 0x10000;
	ips[2] = ret_of_mid;
	id = nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 3, 0);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_eq(sink_mem->stacks[0].n, 1);
	ck_assert_uint_eq(sink_mem->stacks[0].flags & NSK_STACK_TRUNCATED, NSK_STACK_TRUNCATED);
	/* zero and the kernel's half are never a caller: the same stack */
	ips[1] = 0;
	ck_assert_uint_eq(nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 3, 0), id);
	ips[1] = 0xffffffff81000000ull;
	ck_assert_uint_eq(nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 3, 0), id);
	ck_assert_uint_eq(sink_mem->nstacks, 1);
}
END_TEST

START_TEST(kernel_frames_without_kallsyms)
{
	uint64_t k[2] = { 0xffffffff81000000ull, 0xffffffff81000100ull }, id;
	const struct nsk_rec_frame *f;

	id = nsk_stacks__intern(st, 1, 0, k, 2, NULL, 0, 0);
	ck_assert_uint_ne(id, 0);
	ck_assert_uint_eq(sink_mem->stacks[0].n, 2);
	f = frame(sink_mem, sink_mem->stacks[0].frames[0]);
	ck_assert_uint_eq(f->flags & NSK_FRAME_KERNEL, NSK_FRAME_KERNEL);
	ck_assert_str_eq(str(sink_mem, f->module_id), "[kernel]");
	/* a caller's return address is looked up at addr - 1 */
	ck_assert_uint_eq(frame(sink_mem, sink_mem->stacks[0].frames[1])->addr,
			  0xffffffff81000100ull - 1);
}
END_TEST

START_TEST(a_failing_sink_gives_no_id)
{
	uint64_t ips[1];

	st_outer();
	ips[0] = ret_of_mid;
	sink_mem->fail = 1;
	ck_assert_uint_eq(nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 1, 0), 0);
	sink_mem->fail = 0;
	ck_assert_uint_ne(nsk_stacks__intern(st, 1, 0, NULL, 0, ips, 1, 0), 0);
}
END_TEST

START_TEST(module_path_of_an_address)
{
	ck_assert_str_eq(nsk_stacks__module_path(st, 1, 0, 0x10), "");
	ck_assert_ptr_nonnull(strstr(nsk_stacks__module_path(st, 1, 0,
				     (uint64_t)(uintptr_t)st_leaf), "test_stacks"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stacks");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, names_the_frames_of_this_binary);
	tcase_add_test(tc, defines_each_frame_and_stack_once);
	tcase_add_test(tc, unmapped_is_unresolved);
	tcase_add_test(tc, a_caller_no_code_can_be_ends_the_stack);
	tcase_add_test(tc, kernel_frames_without_kallsyms);
	tcase_add_test(tc, a_failing_sink_gives_no_id);
	tcase_add_test(tc, module_path_of_an_address);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
