/* A copy of this process's own registers and top of stack, taken the way
 * the BPF side takes one (bpf/ustack.bpf.h), for the unwinder's test and
 * benchmark (tests/unit/test_unwind.c, bench/unwind_speed.c). */
#ifndef NUSKU_TESTS_STACK_CAPTURE_H
#define NUSKU_TESTS_STACK_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "record/stacks/unwind.h"

#define NSK_CAPTURE_BYTES 8192

struct nsk_captured {
	struct nsk_user_regs regs;
	size_t len; /* bytes copied: up to the end of the stack's mapping */
	uint8_t bytes[NSK_CAPTURE_BYTES];
};

extern struct nsk_captured captured;

/* Fills captured with stack_capture's own registers and stack: the walk of
 * it starts in stack_capture, then its callers. */
void stack_capture(void);

#endif
