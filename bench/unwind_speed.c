/* bench/unwind_speed: what one DWARF unwind costs the recorder, through
 * libdw and through the cached CFI rules (record/stacks/unwind_rules.h), on a
 * copy of this program's own stack 20 frames deep (built without frame
 * pointers, as record/stacks/unwind_dwarf.c sees a sample of such code).  Not a
 * test: it prints numbers.
 *
 *   bench/unwind_speed [WALKS]      (default 100000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "record/procs/maps.h"
#include "record/stacks/symbols.h"
#include "record/stacks/unwind.h"
#include "tests/unit/stack_capture.h"

static volatile int sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noipa)) void descend(int depth)
{
	if (depth)
		descend(depth - 1);
	else
		stack_capture();
	sink++;
}

/* ns per walk, with or without the cached rules; frames in *frames */
static double run(struct nsk_unwinder *u, struct nsk_aspace *as, int libdw,
		  long walks, uint32_t *frames)
{
	uint64_t ips[128];
	double t;

	nsk_unwinder__libdw_only(u, libdw);
	/* the first builds the Dwfl and learns the rules */
	nsk_unwinder__unwind(u, as, &captured.regs, captured.bytes, captured.len,
			     ips, NULL, 128, frames);
	t = cpu_now();
	for (long i = 0; i < walks; i++)
		nsk_unwinder__unwind(u, as, &captured.regs, captured.bytes,
				     captured.len, ips, NULL, 128, frames);
	return (cpu_now() - t) / (double)walks * 1e9;
}

int main(int argc, char **argv)
{
	long walks = argc > 1 ? atol(argv[1]) : 100000;
	struct nsk_symbols *syms = NULL;
	struct nsk_aspace *as = NULL;
	struct nsk_unwinder *u = NULL;
	uint32_t n1 = 0, n2 = 0;
	double dw, fast;
	int rc = 1;

	descend(16);
	if (nsk_symbols__new(&syms) || nsk_aspace__read(getpid(), 0, syms, &as) ||
	    nsk_unwinder__new(&u)) {
		fprintf(stderr, "unwind_speed: setup failed\n");
		goto cleanup;
	}
	dw = run(u, as, 1, walks / 10 ? walks / 10 : 1, &n1);
	fast = run(u, as, 0, walks, &n2);
	printf("unwind_speed: %u frames: libdw %.0f ns/walk, cached rules %.0f ns/walk (%.1fx)\n",
	       n1, dw, fast, dw / fast);
	rc = n1 == n2 ? 0 : 1;
	if (rc)
		fprintf(stderr, "unwind_speed: libdw found %u frames, the rules %u\n", n1, n2);
cleanup:
	nsk_unwinder__free(u);
	nsk_aspace__put(as);
	nsk_symbols__free(syms);
	return rc;
}
