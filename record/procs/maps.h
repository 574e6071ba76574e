/* Address spaces: the executable mappings of a process, from
 * /proc/PID/maps, each tied to its module (record/stacks/symbols.h).
 *
 * A process has one address space per program it ran: exec starts a new
 * one, valid from the exec's time, so a sample taken before the exec but
 * drained after it still resolves against the old program.  A fork shares
 * its parent's until it needs to re-read its own.
 */
#ifndef NUSKU_RECORD_MAPS_H
#define NUSKU_RECORD_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct nsk_symbols;
struct nsk_module;

struct nsk_map {
	uint64_t start, end, pgoff, ino;
	struct nsk_module *mod; /* the file, or a pseudo-module ([vdso], [anon]) */
	uint64_t mapping_id;	/* 0 until its MAPPING record was written */
	int file;		/* backed by a file */
};

struct nsk_aspace {
	uint32_t pid;	/* the process whose maps these are */
	uint64_t since; /* CLOCK_MONOTONIC ns from which it is valid */
	uint64_t read_at; /* when /proc/PID/maps was last read */
	struct nsk_map *maps; /* sorted by start, no overlap */
	size_t n;
	int refs;
	int exec_unclaimed; /* made by the kernel's exec record; BPF's exec
			     * event for it not handled yet */
	uint64_t exec_done; /* when that exec finished (BPF's event): until
			     * then the user registers of its thread may
			     * still be the old program's */
	struct nsk_aspace *older; /* the program before the last exec */
};

/* The module of a file pid maps at [start, end) from path (as the process
 * sees it; " (deleted)" is dropped), with inode ino; held_fd, when >= 0,
 * is that file opened while it was mapped.  A path not starting with '/'
 * is a pseudo-module ("[vdso]"; "" is "[anon]").  NULL only on ENOMEM. */
struct nsk_module *nsk_maps__module(struct nsk_symbols *syms, uint32_t pid,
				    const char *path, uint64_t ino,
				    uint64_t start, uint64_t end, int held_fd);
/* The text of /proc/PID/maps (malloc, NUL-terminated), or NULL when the
 * process is gone.  Cheap, and safe from any thread. */
char *nsk_maps__snapshot(uint32_t pid, size_t *len);
/* An address space from a snapshot's text (NULL: empty).  Main thread. */
int nsk_aspace__parse(uint32_t pid, uint64_t since, const char *text,
		      struct nsk_symbols *syms, struct nsk_aspace **out);
/* Read the executable mappings of pid.  An unreadable maps file gives an
 * empty address space (the process is gone): not an error.  -ENOMEM. */
int nsk_aspace__read(uint32_t pid, uint64_t since, struct nsk_symbols *syms,
		     struct nsk_aspace **out);
/* Keep the mapping ids of old for the identical mappings of new, so a
 * re-read does not define them twice. */
void nsk_aspace__inherit_ids(struct nsk_aspace *new_as,
			     const struct nsk_aspace *old);
/* A copy of as for pid (one that is about to change apart from the
 * processes sharing as); NULL on ENOMEM. */
struct nsk_aspace *nsk_aspace__clone(const struct nsk_aspace *as, uint32_t pid);
/* Adds m, which replaces whatever it overlaps (as mmap does).  -ENOMEM. */
int nsk_aspace__map(struct nsk_aspace *as, const struct nsk_map *m);
struct nsk_map *nsk_aspace__find(struct nsk_aspace *as, uint64_t addr);
struct nsk_aspace *nsk_aspace__get(struct nsk_aspace *as);
/* Drops a reference (and the older chain's when it was the last). */
void nsk_aspace__put(struct nsk_aspace *as);

#endif
