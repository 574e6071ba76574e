/* Copies the caller's stack as BPF would (see stack_capture.h). */
#include <stdio.h>

#include "tests/unit/stack_capture.h"

struct nsk_captured captured;

/* End of the mapping that holds addr, from /proc/self/maps. */
static uint64_t mapping_end(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];
	uint64_t end = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

/* The copy reads other frames' redzones, so AddressSanitizer must not
 * watch it (and memcpy would be intercepted). */
__attribute__((noipa, no_sanitize("address"))) void stack_capture(void)
{
	uint64_t ip, sp, bp, end;

	/* rbp first: the compiler may give an output rbp itself (it did
	 * under the sanitizers), and the later moves would then read that */
	__asm__ volatile("mov %%rbp, %2\n\tmov %%rsp, %1\n\tlea 0(%%rip), %0"
			 : "=&r"(ip), "=&r"(sp), "=&r"(bp));
	end = mapping_end(sp);
	captured.len = end - sp < NSK_CAPTURE_BYTES ? end - sp : NSK_CAPTURE_BYTES;
	for (size_t i = 0; i < captured.len; i++)
		captured.bytes[i] = ((const volatile uint8_t *)sp)[i];
	captured.regs = (struct nsk_user_regs){ ip, sp, bp };
}
