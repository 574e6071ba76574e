/* The inside of the stack room, shared by stacks.c (interning, frames)
 * and ustack.c (choosing and running the user-stack walk). */
#ifndef NUSKU_RECORD_STACKS_STACKS_INT_H
#define NUSKU_RECORD_STACKS_STACKS_INT_H

#include <pthread.h>
#include <stdint.h>

#include "record/sink.h"
#include "record/stacks/stacks.h"

struct nsk_intern;
struct nsk_kallsyms_loader;
struct nsk_unwinder;
struct nsk_perfmaps;

struct nsk_stacks {
	struct nsk_sink sink;
	struct nsk_aspaces as;
	struct nsk_stacks_opts opts;
	/* key bytes -> id; ids count from 1 */
	struct nsk_intern *frames, *stacks;
	uint64_t next_frame, next_stack, next_mapping;
	struct nsk_symbols *syms;
	struct nsk_kallsyms *ksyms;		  /* taken at the first kernel frame */
	struct nsk_kallsyms_loader *ksyms_loader; /* loading meanwhile */
	int ksyms_tried;			  /* atomic: ksyms is final */
	pthread_mutex_t ksyms_lock;		  /* taking it, from any thread */
	struct nsk_unwinder *unwinder; /* DWARF, made on first use (ustack.c) */
	struct nsk_perfmaps *perfmaps; /* JIT names, made on first use (perfmap.h) */
	/* distinct frames left without a name (meta symbols.*, format 1.2):
	 * not lost events, so never LOSS records */
	uint64_t unresolved_frames, unmapped_frames;
};

/* nsk_stacks__intern without handling the process events first: for a
 * caller that just did (ustack.c). */
uint64_t nsk_stacks__intern_synced(struct nsk_stacks *st, uint32_t pid,
				   uint64_t time, const uint64_t *kips,
				   uint32_t nk, const uint64_t *uips,
				   uint32_t nu, uint32_t flags);

static inline int nsk_stacks__emit(struct nsk_stacks *st, const struct nsk_record *rec)
{
	return st->sink.emit(st->sink.ctx, rec);
}

static inline uint64_t nsk_stacks__string(struct nsk_stacks *st, const char *str)
{
	return st->sink.string(st->sink.ctx, str);
}

static inline void nsk_stacks__lost(struct nsk_stacks *st, const char *source,
				    uint64_t n)
{
	st->sink.lost(st->sink.ctx, source, n);
}

#endif
