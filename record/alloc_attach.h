/* Finding the allocator a process uses and attaching uprobes to it.
 *
 * The allocator is the object that defines `malloc` in its ELF symbols among
 * the objects a process maps: the executable itself when it is statically
 * linked or defines its own malloc, else a preloaded or linked allocator
 * (jemalloc, tcmalloc, ...), else libc.  The malloc family and free are
 * probed there; C++ operator new is probed in every object that defines it
 * (libstdc++, or an allocator that replaces it), so the call site of `new`
 * is the recorded frame; operator delete is not probed, it ends in free().
 *
 * Probes are confined to one process: each (process, file) gets its own
 * links with the kernel's pid filter, which keeps the breakpoints out of
 * every other address space, so no other process on the machine takes a
 * trap.  A forked child loses its parent's breakpoints at its first hit and
 * is attached anew when the recorder hears of it (its allocations in
 * between are not seen).  Uprobes are the attach mode and the fallback for
 * processes the preloaded sampler cannot reach (record/alloc.c).
 */
#ifndef NUSKU_RECORD_ALLOC_ATTACH_H
#define NUSKU_RECORD_ALLOC_ATTACH_H

#include <stdint.h>
#include <bpf/libbpf.h>

struct nsk_alloc_attach;

struct nsk_alloc_progs {
	struct bpf_program *enter; /* uprobe, cookie = function */
	struct bpf_program *exit;  /* uretprobe, cookie = function */
	struct bpf_program *free;  /* uprobe on free */
	int multi; /* the programs were loaded for uprobe_multi links */
};

/* Whether the kernel has uprobe_multi links (6.6+); when it does, the
 * caller sets expected_attach_type BPF_TRACE_UPROBE_MULTI (48) on the
 * three programs before load and progs.multi = 1. */
int nsk_alloc_attach__multi_supported(void);
#define NSK_ALLOC_ATTACH_UPROBE_MULTI 48

/* One uprobe_multi link of prog on the functions names[0..n) of path, for
 * every process (the kernel's pid filter off), each with its cookie: the
 * link's fd, or a negative errno (-ENOENT: a function is not there).
 * Needs nsk_alloc_attach__multi_supported() and prog loaded for it. */
int nsk_alloc_attach__multi_syms(struct bpf_program *prog, const char *path,
				 const char *const *names, const uint64_t *cookies,
				 uint32_t n);

int nsk_alloc_attach__new(const struct nsk_alloc_progs *progs,
			  struct nsk_alloc_attach **out);

/* Attach to the allocator objects process pid maps now (/proc/PID/maps),
 * for that process only.
 * Returns the number of objects newly attached, or a negative errno. */
int nsk_alloc_attach__process(struct nsk_alloc_attach *a, uint32_t pid);

/* Before a launched program execs in process pid: attach to the objects it
 * will map, found from its ELF file (the executable, LD_PRELOAD, its
 * DT_NEEDED libraries in the usual directories), so its first allocation is
 * seen. */
int nsk_alloc_attach__program(struct nsk_alloc_attach *a, const char *path,
			      uint32_t pid);

/* Probe points the kernel refused (counted, the others attached). */
unsigned int nsk_alloc_attach__refused(const struct nsk_alloc_attach *a);

/* Number of uprobes attached so far. */
unsigned int nsk_alloc_attach__count(const struct nsk_alloc_attach *a);

/* Which file holds the malloc family ("" before any attach). */
const char *nsk_alloc_attach__allocator(const struct nsk_alloc_attach *a);

/* Detach everything and free; NULL is fine. */
void nsk_alloc_attach__free(struct nsk_alloc_attach *a);

/* Symbols an ELF file defines among those we probe (a bit per NSK_ASYM_*);
 * negative errno when the file cannot be read as ELF. */
#define NSK_ASYM_MALLOC (1u << 0)
#define NSK_ASYM_NEW (1u << 1)
int nsk_alloc_attach__defines(const char *path);

#endif
