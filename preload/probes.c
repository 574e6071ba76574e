/* The probe points and the page that says whether this process may call
 * the fast probe (see probes.h). */
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "nusku/events/sampler.h"
#include "preload/probes.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

/* Protected: calls from here bind locally, without a PLT stub, and the
 * symbols stay in .dynsym for the recorder. */
#if defined(__x86_64__)
#define FAST_INSN ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n" /* nopl 0(%rax,%rax) */
#define TRAP_INSN "push %rbp\npop %rbp\n"
#else
#define FAST_INSN "nop\n"
#define TRAP_INSN "nop\n"
#endif
#define PROBE_POINT(name, insn)                               \
	".globl " name "\n.protected " name "\n"              \
	".type " name ", @function\n" name ":\n" insn "ret\n" \
	".size " name ", . - " name "\n"
__asm__(".text\n"
	PROBE_POINT(NSK_SAMPLER_PROBE_SYM, FAST_INSN)
	PROBE_POINT(NSK_SAMPLER_PROBE_TRAP_SYM, TRAP_INSN));

volatile uint64_t *nsk_probes_page;

void nsk_probes__start(void)
{
	static int started; /* once: a lost race keeps the trap twin */
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	volatile uint64_t *page;
	long p;

	if (__atomic_load_n(&started, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
		return;
	/* the raw call: the library's own mmap reports the program's
	 * mappings, and this one is not the program's */
	p = syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0L);
	page = (volatile uint64_t *)p;
	if (p == -1 || !page)
		return; /* the trap twin, always */
	if (madvise((void *)page, len, MADV_WIPEONFORK)) {
		syscall(SYS_munmap, (void *)page, len);
		return; /* a kernel before 4.14: no way to tell a child */
	}
	page[0] = 1;
	page[1] = 1;
	__atomic_store_n(&nsk_probes_page, page, __ATOMIC_RELEASE);
}
