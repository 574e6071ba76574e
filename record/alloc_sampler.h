/* Where the preloaded allocation sampler (preload/sampler.c) can be used,
 * and where the recorder must fall back to allocator uprobes.
 *
 * The library comes with Nusku: beside the nusku binary in preload/ (a
 * build tree) or in the package library directory.  It is loaded into
 * programs that may run as root, so it is used only when it is a regular
 * file owned by root or by us and writable by nobody else.
 *
 * A program can load it when it is a dynamically linked ELF file (after
 * following #! lines to the interpreter), not set-user-ID or set-group-ID
 * (the loader ignores LD_PRELOAD in secure mode) and not built with a
 * sanitizer (whose runtime must come first and brings its own malloc).
 */
#ifndef NUSKU_RECORD_ALLOC_SAMPLER_H
#define NUSKU_RECORD_ALLOC_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/* The library's path into out; -ENOENT when it is not there, -EPERM when
 * it is not safe to load (why says which). */
int nsk_alloc_sampler__find(char *out, size_t outlen, char *why, size_t whylen);

/* The ELF file that runs when path is executed: path itself, or the
 * interpreter its #! lines lead to.  -ENOEXEC for a #! line without one. */
int nsk_alloc_sampler__resolve(const char *path, char *out, size_t outlen);

/* 1 when the program at path (a file, not yet running) can load the
 * library, 0 when not (why says why), negative errno when path cannot be
 * read. */
int nsk_alloc_sampler__program_ok(const char *path, char *why, size_t whylen);

/* 1 when process pid has loaded the library at lib, or will as its
 * loader starts (its environment preloads it, the library is the same file
 * under the process's root, its executable can load it, and it runs in
 * non-secure mode); 0 when not (why says why); negative errno when
 * the process is gone. */
/* The parent of pid, from /proc/PID/status; -errno when gone. */
int nsk_alloc_sampler__parent(uint32_t pid, uint32_t *ppid);

int nsk_alloc_sampler__process_ok(uint32_t pid, const char *lib, char *why,
				  size_t whylen);

#endif
