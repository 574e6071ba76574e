/* The stack room: user and kernel addresses in, stack ids out.
 *
 * One entry point interns a stack (nsk_stacks__intern, or
 * nsk_stacks__intern_copied with the copy of the user stack a signal took):
 * it walks the copy by --call-graph (ustack.c), turns each address into
 * frames through the process's address space and the symbolizer, and
 * writes the STRING, MAPPING, FRAME and STACK records the stack needs to a
 * sink (record/sink.h), each once.  The room owns the symbolizer, the one
 * kallsyms of the recording, the DWARF unwinder and the interning tables;
 * it learns address spaces from the process room through struct
 * nsk_aspaces and never calls back into the session.
 */
#ifndef NUSKU_RECORD_STACKS_STACKS_H
#define NUSKU_RECORD_STACKS_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "record/stacks/kallsyms.h"

struct nsk_sink;
struct nsk_stacks;
struct nsk_aspace;
struct nsk_symbols;
struct nsk_kallsyms;
struct nsk_ev_ustack;

/* Where a process's addresses are (the process room). */
struct nsk_aspaces {
	void *ctx;
	/* Handle the process events the kernel has written, so a stack about
	 * to be resolved finds the fork or exec that made its process.  */
	void (*sync)(void *ctx);
	/* The address space of pid at time (UINT64_MAX: unknown). */
	struct nsk_aspace *(*at)(void *ctx, uint32_t pid, uint64_t time);
	/* pid's newest address space, NULL if none is known. */
	struct nsk_aspace *(*newest)(void *ctx, uint32_t pid);
	/* After a miss of an address taken at time: pid's maps read again,
	 * or NULL when that cannot help. */
	struct nsk_aspace *(*reread)(void *ctx, uint32_t pid, uint64_t time);
};

/* How user stacks are walked (--call-graph). */
enum nsk_call_graph {
	NSK_CALL_GRAPH_AUTO = 0, /* frame pointers where they hold, else DWARF */
	NSK_CALL_GRAPH_FP,	 /* frame pointers only: no stack copy */
	NSK_CALL_GRAPH_DWARF,	 /* DWARF CFI for every stack with a copy */
};

struct nsk_stacks_opts {
	int call_graph;	   /* enum nsk_call_graph (record/session.h) */
	int kernel_stacks; /* load kallsyms (in a thread, from now) */
	/* handed to the kallsyms table (nsk_kallsyms__set_outside) */
	nsk_kallsyms_outside_fn kernel_outside;
	void *kernel_outside_ctx;
};

int nsk_stacks__new(const struct nsk_sink *sink, const struct nsk_aspaces *as,
		    const struct nsk_stacks_opts *opts, struct nsk_stacks **out);
void nsk_stacks__free(struct nsk_stacks *st); /* NULL is fine */

/* Once the recording is written: what later recordings may reuse goes
 * into the cache (nsk_symbols__store_cache). */
void nsk_stacks__store_cache(struct nsk_stacks *st);

/* The symbolizer: the process room makes modules in it. */
struct nsk_symbols *nsk_stacks__symbols(struct nsk_stacks *st);
/* The recording's kallsyms, waiting for its loader if it is not done;
 * NULL without kernel stacks or symbols. */
struct nsk_kallsyms *nsk_stacks__kallsyms(struct nsk_stacks *st);

/* Kernel ips (leaf first) then user ips (leaf first) of a thread of pid at
 * time (UINT64_MAX: unknown): the stack id, 0 when nothing could be
 * recorded (the sink's error, or ENOMEM). */
uint64_t nsk_stacks__intern(struct nsk_stacks *st, uint32_t pid, uint64_t time,
			    const uint64_t *kips, uint32_t nk,
			    const uint64_t *uips, uint32_t nu, uint32_t flags);

/* The same with the signal's copy of the user stack (NULL or len 0: none),
 * walked by --call-graph; *copy_needed (may be NULL) says how much copy
 * the stack needed (see nsk_session__stack_learned in record/session.h). */
uint64_t nsk_stacks__intern_copied(struct nsk_stacks *st, uint32_t pid,
				   uint64_t time, const uint64_t *kips,
				   uint32_t nk, const uint64_t *uips,
				   uint32_t nu, const struct nsk_ev_ustack *copy,
				   const void *copy_bytes, uint32_t flags,
				   uint32_t *copy_needed);

/* The file mapped at addr in pid at time, "" when none is known. */
const char *nsk_stacks__module_path(struct nsk_stacks *st, uint32_t pid,
				    uint64_t time, uint64_t addr);

/* A process appeared (launched, forked, exec'd, attached): what the room
 * must take while it lives (its root, for its JIT map). */
void nsk_stacks__new_process(struct nsk_stacks *st, uint32_t pid);

/* META symbols.unresolved and symbols.unmapped: the frames left without a
 * name, written once at the end. */
void nsk_stacks__write_counts(struct nsk_stacks *st);

/* Opens the file at path and loads its tables now (nsk_module__warm). */
int nsk_stacks__warm_module(struct nsk_stacks *st, const char *path);

#endif
