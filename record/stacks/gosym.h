/* Function names of Go programs from the Go runtime's own table.
 *
 * Go binaries that are stripped (`-ldflags=-s`, Debian's gofmt and go) have
 * no .symtab, no DWARF and no .eh_frame, but the runtime needs its own
 * pc-line table (.gopclntab) for tracebacks, so it is always there.  This
 * reads it in place, as the layouts of Go 1.2-1.15 (magic 0xfffffffb), 1.16
 * and 1.17 (0xfffffffa), 1.18 and 1.19 (0xfffffff0) and 1.20 and later
 * (0xfffffff1) lay it out, little-endian, 4- or 8-byte pointers.
 *
 * The table comes from files other users wrote: every read is bounds-checked
 * against the table, and a truncated or hostile table answers "not found".
 * Names are as Go prints them (`main.main`, `net/http.(*conn).serve`).
 */
#ifndef NUSKU_RECORD_GOSYM_H
#define NUSKU_RECORD_GOSYM_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct nsk_gosym;

/* Reads the header of a table of len bytes at data, which the caller keeps
 * readable (and unchanged) while the result lives; the strings returned
 * below point into it.  text_vaddr is where the Go text starts (the .text
 * section's address), used by Go 1.18+ tables whose header does not say.
 * -EINVAL when data is not a table this reads, -ENOMEM. */
int nsk_gosym__open(const void *data, size_t len, uint64_t text_vaddr,
		    struct nsk_gosym **out);

/* The same over an ELF file's .gopclntab (".data.rel.ro.gopclntab" in a
 * position-independent build); -ENOENT when the file has none.  The Elf
 * must outlive the result. */
int nsk_gosym__open_elf(Elf *elf, struct nsk_gosym **out);

void nsk_gosym__free(struct nsk_gosym *g); /* accepts NULL */

/* The function containing vaddr (an address as the ELF file lays it out):
 * its name and, when start is not NULL, its entry address.  0, or -ENOENT
 * when no function of the table holds vaddr. */
int nsk_gosym__find(const struct nsk_gosym *g, uint64_t vaddr,
		    const char **name, uint64_t *start);

/* The source file and line of the code at vaddr, from the function's pc
 * tables; 0, or -ENOENT when the table does not say. */
int nsk_gosym__line(const struct nsk_gosym *g, uint64_t vaddr,
		    const char **file, int *line);

#endif
