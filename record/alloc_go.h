/* Whether a process runs a Go program, whose heap the allocation probes
 * cannot see (the Go runtime does not call malloc). */
#ifndef NUSKU_RECORD_ALLOC_GO_H
#define NUSKU_RECORD_ALLOC_GO_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the executable of pid was built by Go (path: its name, into
 * path), 0 when not, negative errno when it cannot be read. */
int nsk_alloc_go__process(uint32_t pid, char *path, size_t len);
/* 1 when the file at path is a Go executable, 0 when not (or not ELF),
 * negative errno when it cannot be opened. */
int nsk_alloc_go__file(const char *path);

#endif
