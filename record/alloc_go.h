/* Whether a process runs a Go program, whose heap the allocation probes
 * cannot see (the Go runtime does not call malloc). */
#ifndef NUSKU_RECORD_ALLOC_GO_H
#define NUSKU_RECORD_ALLOC_GO_H

#include <stddef.h>
#include <stdint.h>

/* Executables judged already, by identity: a build runs the same few
 * programs (sh, cc, cc1, as, ld) hundreds of times, and each judgment was
 * an ELF handle on a mapping of the whole file.  Zeroed to start. */
#define NSK_ALLOC_GO_MEMO 32
struct nsk_alloc_go_memo {
	struct {
		uint64_t dev, ino, size, mtime_ns;
		int go;
	} file[NSK_ALLOC_GO_MEMO];
	unsigned int n, next;
};

/* 1 when the executable of pid was built by Go (path: its name, into
 * path), 0 when not, negative errno when it cannot be read.  memo may be
 * NULL. */
int nsk_alloc_go__process(uint32_t pid, struct nsk_alloc_go_memo *memo, char *path,
			  size_t len);
/* 1 when the file at path is a Go executable, 0 when not (or not ELF),
 * negative errno when it cannot be opened. */
int nsk_alloc_go__file(const char *path);

#endif
