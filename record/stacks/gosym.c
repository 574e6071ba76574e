/* A reader of Go's pc-line table (.gopclntab), for names in stripped Go
 * binaries.  Written from the public description of the format (Go's
 * runtime/symtab.go and debug/gosym, golang.org/s/go12symtab):
 *
 *   header   magic (4), 0, 0, pc quantum (1), pointer size (1), then
 *            pointer-sized words: the number of functions, and (1.16+) the
 *            number of files, (1.18+) the text start, and the offsets from
 *            the table's start of the function names, the compile units'
 *            file indexes, the file names, the pc tables and the functab
 *   functab  nfunc pairs (entry, offset of the function's _func record),
 *            then the end of the last function; 1.18+ as 4-byte offsets
 *            from the text start, before as pointers
 *   _func    the entry (1.18+: 4-byte offset, before: a pointer), then
 *            4-byte fields: name offset, args, deferreturn, pcsp, pcfile,
 *            pcln, npcdata, cu offset, ...
 *
 * Nothing is copied: the table is read where it lies, and each read is
 * checked against its length first, for the table may be hostile.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "record/stacks/gosym.h"

enum layout {
	GO12,  /* 1.2 to 1.15: one array, offsets from its start */
	GO116, /* 1.16, 1.17: separate tables, pointers as entries */
	GO118, /* 1.18 and later (1.20 changed the magic, not the layout) */
};

/* Names longer than this are not names (and are not scanned for a NUL) */
#define NAME_MAX_LEN 8192

struct nsk_gosym {
	const uint8_t *data;
	size_t len;
	enum layout layout;
	unsigned quantum, ptrsize;
	unsigned field; /* size of a functab field */
	uint64_t nfunc;
	uint64_t text; /* what 1.18+ entry offsets count from */
	/* offsets into data */
	uint64_t funcnames, cutab, filetab, pctab, functab, funcdata;
	uint64_t nfiles12; /* 1.2: entries of the file table at filetab */
};

/* The little-endian integer of n bytes at off; -1 past the end. */
static int rd(const struct nsk_gosym *g, uint64_t off, unsigned n, uint64_t *v)
{
	uint64_t x = 0;

	if (off > g->len || n > g->len - off)
		return -1;
	for (unsigned i = 0; i < n; i++)
		x |= (uint64_t)g->data[off + i] << (8 * i);
	*v = x;
	return 0;
}

/* base + off, when it stays inside the table */
static int at(const struct nsk_gosym *g, uint64_t base, uint64_t off,
	      uint64_t *out)
{
	if (base > g->len || off >= g->len - base)
		return -1;
	*out = base + off;
	return 0;
}

/* The NUL-terminated string at base + off, or NULL */
static const char *str(const struct nsk_gosym *g, uint64_t base, uint64_t off)
{
	uint64_t p, room;

	if (at(g, base, off, &p))
		return NULL;
	room = g->len - p;
	if (room > NAME_MAX_LEN)
		room = NAME_MAX_LEN;
	if (!memchr(g->data + p, 0, room) || !g->data[p])
		return NULL;
	return (const char *)g->data + p;
}

int nsk_gosym__open(const void *data, size_t len, uint64_t text_vaddr,
		    struct nsk_gosym **out)
{
	struct nsk_gosym h = { .data = data, .len = len }, *g;
	const uint8_t *d = data;
	uint64_t magic, w[8] = { 0 }, room;
	unsigned words;

	*out = NULL;
	if (!data || len < 8 || rd(&h, 0, 4, &magic))
		return -EINVAL;
	switch (magic) {
	case 0xfffffffb: h.layout = GO12; words = 1; break;
	case 0xfffffffa: h.layout = GO116; words = 7; break;
	case 0xfffffff0: /* 1.18, 1.19 */
	case 0xfffffff1: h.layout = GO118; words = 8; break; /* 1.20+ */
	default: return -EINVAL; /* also every big-endian table */
	}
	h.quantum = d[6];
	h.ptrsize = d[7];
	if (d[4] || d[5] || (h.quantum != 1 && h.quantum != 2 && h.quantum != 4) ||
	    (h.ptrsize != 4 && h.ptrsize != 8))
		return -EINVAL;
	for (unsigned i = 0; i < words; i++)
		if (rd(&h, 8 + (uint64_t)i * h.ptrsize, h.ptrsize, &w[i]))
			return -EINVAL;
	h.nfunc = w[0];
	h.field = h.layout == GO118 ? 4 : h.ptrsize;
	switch (h.layout) {
	case GO12:
		h.functab = 8 + h.ptrsize;
		break;
	case GO116:
		h.funcnames = w[2];
		h.cutab = w[3];
		h.filetab = w[4];
		h.pctab = w[5];
		h.functab = h.funcdata = w[6];
		break;
	case GO118:
		/* The header's word is runtime.text, right even when the C
		 * linker put code before Go's; 0 where left to relocation. */
		h.text = w[2] ? w[2] : text_vaddr;
		h.funcnames = w[3];
		h.cutab = w[4];
		h.filetab = w[5];
		h.pctab = w[6];
		h.functab = h.funcdata = w[7];
		break;
	}
	if (h.funcnames > len || h.cutab > len || h.filetab > len ||
	    h.pctab > len || h.functab > len)
		return -EINVAL;
	/* nfunc pairs and the end must fit: (2 nfunc + 1) fields */
	room = (len - h.functab) / h.field;
	if (!h.nfunc || room < 1 || h.nfunc > (room - 1) / 2)
		return -EINVAL;
	if (h.layout == GO12) {
		uint64_t off, n;

		/* after the functab, the offset of the file table, whose
		 * first entry is its length; files are optional here */
		if (!rd(&h, h.functab + (2 * h.nfunc + 1) * h.field, 4, &off) &&
		    !rd(&h, off, 4, &n)) {
			h.filetab = off;
			h.nfiles12 = n;
		}
	}
	g = malloc(sizeof(*g));
	if (!g)
		return -ENOMEM;
	*g = h;
	*out = g;
	return 0;
}

int nsk_gosym__open_elf(Elf *elf, struct nsk_gosym **out)
{
	Elf_Scn *scn = NULL, *pcln = NULL;
	uint64_t text = 0;
	size_t shstrndx;
	Elf_Data *d;

	*out = NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;
		size_t n;

		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		n = strlen(name);
		if (!strcmp(name, ".text"))
			text = sh.sh_addr;
		else if (sh.sh_type == SHT_PROGBITS && n >= 10 &&
			 !strcmp(name + n - 10, ".gopclntab"))
			pcln = scn;
	}
	if (!pcln || !(d = elf_getdata(pcln, NULL)) || !d->d_buf)
		return -ENOENT;
	return nsk_gosym__open(d->d_buf, d->d_size, text, out);
}

void nsk_gosym__free(struct nsk_gosym *g)
{
	free(g);
}

/* The entry address of function i (i == nfunc: the end of the last) */
static int entry(const struct nsk_gosym *g, uint64_t i, uint64_t *pc)
{
	if (rd(g, g->functab + 2 * i * g->field, g->field, pc))
		return -1;
	if (g->layout == GO118)
		*pc += g->text;
	return 0;
}

/* The 4-byte field n (1: name, 5: pcfile, 6: pcln, 8: cu) of a _func */
static int field(const struct nsk_gosym *g, uint64_t fn, unsigned n,
		 uint64_t *v)
{
	unsigned first = g->layout == GO118 ? 4 : g->ptrsize;

	return rd(g, fn + first + (uint64_t)(n - 1) * 4, 4, v);
}

/* The _func record of the function holding vaddr, and its entry. */
static int lookup(const struct nsk_gosym *g, uint64_t vaddr, uint64_t *fn,
		  uint64_t *start)
{
	uint64_t lo = 0, hi = g->nfunc, pc, off, e;

	if (entry(g, lo, &pc) || pc > vaddr || entry(g, hi, &pc) || pc <= vaddr)
		return -ENOENT;
	/* entry(lo) <= vaddr < entry(hi) holds throughout, sorted or not,
	 * so the answer is a function whose range holds vaddr */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (entry(g, mid, &pc))
			return -ENOENT;
		if (pc <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	if (entry(g, lo, start) ||
	    rd(g, g->functab + (2 * lo + 1) * g->field, g->field, &off) ||
	    at(g, g->funcdata, off, fn))
		return -ENOENT;
	/* the record names its own entry: a cheap check of both tables */
	if (g->layout == GO118) {
		if (rd(g, *fn, 4, &e))
			return -ENOENT;
		e += g->text;
	} else if (rd(g, *fn, g->ptrsize, &e)) {
		return -ENOENT;
	}
	return e == *start ? 0 : -ENOENT;
}

int nsk_gosym__find(const struct nsk_gosym *g, uint64_t vaddr,
		    const char **name, uint64_t *start)
{
	uint64_t fn, entry_pc, nameoff;
	const char *s;

	if (!g || lookup(g, vaddr, &fn, &entry_pc) || field(g, fn, 1, &nameoff) ||
	    !(s = str(g, g->funcnames, nameoff)))
		return -ENOENT;
	*name = s;
	if (start)
		*start = entry_pc;
	return 0;
}

/* An unsigned LEB128 of at most 32 bits at *p */
static int varint(const struct nsk_gosym *g, uint64_t *p, uint32_t *v)
{
	uint32_t x = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*p >= g->len)
			return -1;
		b = g->data[(*p)++];
		x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* The value a pc table (at off in the pc tables) gives target, in the
 * function that starts at start: pairs of (value delta, zig-zag; pc delta
 * in quanta) from -1 at the entry, until a zero value delta.  Each step
 * reads two bytes or more, so a hostile table ends at its end. */
static int pcvalue(const struct nsk_gosym *g, uint64_t off, uint64_t start,
		   uint64_t target, int32_t *out)
{
	uint64_t p, pc = start;
	uint32_t val = UINT32_MAX; /* -1, in arithmetic that may wrap */

	if (!off || at(g, g->pctab, off, &p))
		return -1;
	for (;;) {
		uint32_t dv, dpc;

		if (varint(g, &p, &dv) || (dv == 0 && pc != start) ||
		    varint(g, &p, &dpc))
			return -1;
		val += dv & 1 ? ~(dv >> 1) : dv >> 1;
		pc += (uint64_t)dpc * g->quantum;
		if (target < pc) {
			*out = (int32_t)val;
			return 0;
		}
	}
}

/* The name of file number fno of the function's compile unit */
static const char *file_name(const struct nsk_gosym *g, uint64_t fn,
			     int32_t fno)
{
	uint64_t cu, off, p;

	if (g->layout == GO12) {
		/* an index into one table of offsets from the start; 0 is
		 * not a file */
		if (fno <= 0 || (uint64_t)fno >= g->nfiles12 ||
		    rd(g, g->filetab + 4 * (uint64_t)fno, 4, &off))
			return NULL;
		return str(g, 0, off);
	}
	if (fno < 0 || field(g, fn, 8, &cu) || cu == UINT32_MAX ||
	    at(g, g->cutab, 4 * (cu + (uint64_t)fno), &p) || rd(g, p, 4, &off) ||
	    off == UINT32_MAX)
		return NULL;
	return str(g, g->filetab, off);
}

int nsk_gosym__line(const struct nsk_gosym *g, uint64_t vaddr,
		    const char **file, int *line)
{
	uint64_t fn, start, pcfile, pcln;
	int32_t fno, l;
	const char *f = NULL;
	int found = 0;

	if (!g || lookup(g, vaddr, &fn, &start) || field(g, fn, 5, &pcfile) ||
	    field(g, fn, 6, &pcln))
		return -ENOENT;
	if (!pcvalue(g, pcfile, start, vaddr, &fno))
		f = file_name(g, fn, fno);
	if (f) {
		*file = f;
		found = 1;
	}
	if (!pcvalue(g, pcln, start, vaddr, &l) && l > 0) {
		*line = l;
		found = 1;
	}
	return found ? 0 : -ENOENT;
}
