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
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* What the checks of the processes of one recording keep between calls:
 * the programs judged, by file identity (a build execs the same cc1, as
 * and ld again and again, and the look for a malloc of its own reads all
 * 30,000 dynamic symbols cc1 exports), and a buffer for /proc files made
 * once.  Zeroed to start; nsk_alloc_sampler__forget() frees it. */
#define NSK_SAMPLER_JUDGED 32
struct nsk_sampler_judged {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime; /* changed, or chmod'ed: judged again */
	int ok;
	char why[120];
};
struct nsk_alloc_sampler_memo {
	struct nsk_sampler_judged judged[NSK_SAMPLER_JUDGED];
	unsigned njudged, next; /* filled, and the next to replace */
	char *buf;
};
void nsk_alloc_sampler__forget(struct nsk_alloc_sampler_memo *memo);

/* The library's path into out; -ENOENT when it is not there, -EPERM when
 * it is not safe to load (why says which). */
int nsk_alloc_sampler__find(char *out, size_t outlen, char *why, size_t whylen);

/* The ELF file that runs when path is executed: path itself, or the
 * interpreter its #! lines lead to.  -ENOEXEC for a #! line without one. */
int nsk_alloc_sampler__resolve(const char *path, char *out, size_t outlen);

/* 1 when the program at path (a file, not yet running) can load the
 * library, 0 when not (why says why), negative errno when path cannot be
 * read.  memo may be NULL. */
int nsk_alloc_sampler__program_ok(const char *path, struct nsk_alloc_sampler_memo *memo,
				  char *why, size_t whylen);

/* 1 when process pid loads the library at lib as its loader starts: its
 * environment preloads it, the library is the same file under the
 * process's root, its executable can load it, and it runs in non-secure
 * mode; 0 when not (why says why); negative errno when the process is
 * gone.  exec_flags: what the exec's event said (NSK_EV_EXEC_* of
 * nusku/events/proc.h), when told is set; otherwise /proc says it.  An
 * exec the kernel side passed (NSK_EV_EXEC_PASSED) is 1 without a look.
 * When the executable was judged here and passed, *exe (may be NULL) is
 * its status; else exe->st_ino is 0. */
int nsk_alloc_sampler__process_ok(uint32_t pid, const char *lib, int told,
				  uint32_t exec_flags, struct nsk_alloc_sampler_memo *memo,
				  char *why, size_t whylen, struct stat *exe);

#endif
