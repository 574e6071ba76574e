/* Function ranges from .eh_frame (see fde_ranges.h).
 *
 * libdw reads the CFI, through the sorted table of .eh_frame_hdr when
 * the file has one (a binary search), else by scanning .eh_frame once;
 * the FDE that covers an address gives its range.  Lookups come once per
 * distinct address (the caller caches frames), so nothing more is kept.
 */
#include <errno.h>
#include <stdlib.h>

#include <elfutils/libdw.h>

#include "record/stacks/fde_ranges.h"

struct nsk_fde_ranges {
	Dwarf_CFI *cfi; /* dwarf_cfi_end before the Elf ends */
};

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
	return r;
}

void nsk_fde_ranges__free(struct nsk_fde_ranges *r)
{
	if (!r)
		return;
	dwarf_cfi_end(r->cfi);
	free(r);
}

int nsk_fde_ranges__find(struct nsk_fde_ranges *r, uint64_t vaddr,
			 uint64_t *start, uint64_t *end)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr s = 0, e = 0;
	int err = -ENOENT;

	if (!r || dwarf_cfi_addrframe(r->cfi, vaddr, &frame))
		goto out;
	/* returns the return-address register, or -1 on error */
	if (dwarf_frame_info(frame, &s, &e, NULL) < 0 || s >= e ||
	    vaddr < s || vaddr >= e)
		goto out;
	*start = s;
	*end = e;
	err = 0;
out:
	free(frame);
	return err;
}
