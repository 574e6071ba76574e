/* Function ranges from .eh_frame (see fde_ranges.h).
 *
 * libdw finds the FDE that covers an address (dwarf_cfi_addrframe), but
 * tells only the range of its CFI row (after a prologue, the rows change
 * a few bytes in), not where the FDE starts.  The starts are in the
 * binary search table of .eh_frame_hdr, sorted, which the linker writes
 * for every executable and shared object (--eh-frame-hdr): the function of
 * a covered address starts at the greatest start at or below it.  A file
 * without that table (or with an encoding other than ld's) falls back to
 * the row's start, which may split a function in two.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <gelf.h>

#include "record/stacks/fde_ranges.h"

/* .eh_frame_hdr encodings ld writes (DW_EH_PE_*) */
#define ENC_UDATA4 0x03
#define ENC_SDATA4 0x0b
#define ENC_PCREL 0x10
#define ENC_DATAREL 0x30

struct nsk_fde_ranges {
	Dwarf_CFI *cfi; /* dwarf_cfi_end before the Elf ends */
	uint64_t *starts; /* sorted; NULL: no usable .eh_frame_hdr */
	size_t n;
};

static int32_t get_s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4); /* the file is x86-64's: little-endian, as we are */
	return v;
}

/* The starts of the table in the section .eh_frame_hdr, if it has one in
 * the encodings above. */
static void read_table(struct nsk_fde_ranges *r, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, count;
	const uint8_t *p;
	Elf_Data *data;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, &sh) &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, ".eh_frame_hdr"))
			break;
	}
	if (!scn || sh.sh_type == SHT_NOBITS || !(data = elf_getdata(scn, NULL)) ||
	    data->d_size < 12)
		return;
	p = data->d_buf;
	/* version 1; eh_frame_ptr any 4-byte form; count udata4; table
	 * datarel sdata4 pairs (start, FDE) */
	if (p[0] != 1 || (p[1] & 0x0f) != ENC_SDATA4 || p[2] != ENC_UDATA4 ||
	    p[3] != (ENC_DATAREL | ENC_SDATA4))
		return;
	count = (uint32_t)get_s32(p + 8);
	if (count > (data->d_size - 12) / 8)
		return;
	r->starts = malloc((count ? count : 1) * sizeof(*r->starts));
	if (!r->starts)
		return;
	for (size_t i = 0; i < count; i++)
		r->starts[i] = sh.sh_addr + (uint64_t)(int64_t)get_s32(p + 12 + 8 * i);
	r->n = count;
	/* sorted by the linker; a table that is not is not used */
	for (size_t i = 1; i < count; i++)
		if (r->starts[i] < r->starts[i - 1]) {
			free(r->starts);
			r->starts = NULL;
			r->n = 0;
			return;
		}
}

struct nsk_fde_ranges *nsk_fde_ranges__new(Elf *elf)
{
	struct nsk_fde_ranges *r;
	Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;

	if (!cfi)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		dwarf_cfi_end(cfi);
		return NULL;
	}
	r->cfi = cfi;
	read_table(r, elf);
	return r;
}

void nsk_fde_ranges__free(struct nsk_fde_ranges *r)
{
	if (!r)
		return;
	dwarf_cfi_end(r->cfi);
	free(r->starts);
	free(r);
}

/* Index of the greatest start <= vaddr, or n when there is none. */
static size_t floor_start(const struct nsk_fde_ranges *r, uint64_t vaddr)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->starts[mid] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : r->n;
}

int nsk_fde_ranges__find(struct nsk_fde_ranges *r, uint64_t vaddr,
			 uint64_t *start, uint64_t *end)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr s = 0, e = 0;
	int err = -ENOENT;
	size_t i;

	/* covered by an FDE at all? (padding between functions is not) */
	if (!r || dwarf_cfi_addrframe(r->cfi, vaddr, &frame))
		goto out;
	/* returns the return-address register, or -1 on error */
	if (dwarf_frame_info(frame, &s, &e, NULL) < 0 || s >= e ||
	    vaddr < s || vaddr >= e)
		goto out;
	i = floor_start(r, vaddr);
	if (i < r->n && r->starts[i] <= s) {
		s = r->starts[i];
		if (i + 1 < r->n && r->starts[i + 1] > e)
			e = r->starts[i + 1];
	}
	*start = s;
	*end = e;
	err = 0;
out:
	free(frame);
	return err;
}
