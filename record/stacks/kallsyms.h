/* Kernel symbols from /proc/kallsyms, for kernel frames. */
#ifndef NUSKU_RECORD_KALLSYMS_H
#define NUSKU_RECORD_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct nsk_kallsyms;

/* Reads /proc/kallsyms (or path, for tests).  -errno; an unreadable file or
 * one with hidden addresses (kptr_restrict) gives an empty table, not an
 * error: kernel frames are then unresolved. */
int nsk_kallsyms__load(const char *path, struct nsk_kallsyms **out);
void nsk_kallsyms__free(struct nsk_kallsyms *k);
/* The same from the cache when an earlier recording of this boot left the
 * kernel image's symbols there (kallsyms_cache.c); else from /proc/kallsyms,
 * leaving them in the cache.  Lookups answer as the whole table would. */
int nsk_kallsyms__load_cached(struct nsk_kallsyms **out);

/* For a table from the cache: who else may name an address outside the
 * kernel image before /proc/kallsyms is read whole for it.  The session
 * names BPF programs' images so (record/own.h): every off-CPU stack and
 * every sample in a probe has one, and reading /proc/kallsyms for them
 * would undo the cache.  fn gives 1 with the name and module ("bpf") as
 * kallsyms would, 0 when it does not know the address. */
typedef int (*nsk_kallsyms_outside_fn)(void *ctx, uint64_t addr,
				       const char **name, const char **module);
void nsk_kallsyms__set_outside(struct nsk_kallsyms *k, nsk_kallsyms_outside_fn fn,
			       void *ctx);

/* nsk_kallsyms__load_cached in a thread (reading /proc/kallsyms whole
 * takes some 60 ms of CPU): start it early, take it when the first kernel
 * frame needs it.  take() waits, returns NULL when loading failed, and
 * frees the loader; free() of a loader never taken is fine. */
struct nsk_kallsyms_loader;
int nsk_kallsyms__load_async(struct nsk_kallsyms_loader **out);
struct nsk_kallsyms *nsk_kallsyms__take(struct nsk_kallsyms_loader *l);
void nsk_kallsyms_loader__free(struct nsk_kallsyms_loader *l);

/* Why a table has no symbols: 0 when it has some, -EPERM when the file
 * listed them with every address 0 (kernel.kptr_restrict, or a reader
 * without CAP_SYSLOG), fopen's -errno when it could not be read, -ENOENT
 * when it listed none (also for a NULL table). */
int nsk_kallsyms__err(const struct nsk_kallsyms *k);

/* The function containing addr and its module ("vmlinux" for the kernel
 * itself); 0 when unknown. */
int nsk_kallsyms__find(const struct nsk_kallsyms *k, uint64_t addr,
		       const char **name, const char **module);

/* The kernel's read-only data, [start, end) (to __init_begin, or 64 MiB
 * past its start when that is not listed); 0 when kallsyms lists none. */
int nsk_kallsyms__rodata(const struct nsk_kallsyms *k, uint64_t *start,
			 uint64_t *end);

/* The text symbols, by address: count, and the i-th. */
size_t nsk_kallsyms__count(const struct nsk_kallsyms *k);
void nsk_kallsyms__at(const struct nsk_kallsyms *k, size_t i, uint64_t *addr,
		      const char **name, const char **module);

#endif
