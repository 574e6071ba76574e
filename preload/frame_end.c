/* The outermost frame of a sampled program's main thread: where every
 * frame-pointer walk of its stack ends, without a fault.
 *
 * The kernel's walk (perf_callchain_user, behind bpf_get_stackid and
 * bpf_get_stack) follows saved frame pointers until one is not a user
 * address.  The frame below main is glibc's __libc_start_call_main, built
 * without frame pointers, which leaves whatever its rbp held in main's
 * saved slot (1 here): a user address that is not mapped, so every walk
 * of the main thread ended in a page fault and its exception fixup, about
 * 0.6 us of the ~2 us an allocation sample cost in exact mode on this VM
 * (alloc_churn: 1.9 -> 1.44 us a malloc/free pair with the slot set).
 *
 * So main is called from a frame of ours whose saved frame pointer reads
 * as ~0: not a user address for the kernel, and misaligned and -1 for a
 * walker of the program's own that checks either (HotSpot's, gperftools').
 * The walk stores our frame's return address (into libc, as before) and
 * stops there.  The slot's own value is put back before our frame
 * returns, so libc gets its rbp as it left it.  Our frame is in this
 * library, whose frames every stack leaves out (record/stacks), so stacks
 * read as before.  DWARF unwinding of a copied stack reads ~0 as the
 * caller's rbp, which the frames below (rsp-based CFI) do not use.
 *
 * Other threads are left alone: theirs end in 0 (clone clears rbp), which
 * the kernel's walk reads and faults on too, but which a walker of the
 * program's own may take as the end (while (fp) ...) where ~0 would crash
 * it; main's 1 would crash such a walker already.
 */
#include <dlfcn.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* A saved frame pointer no walk follows: not a user address. */
#define FRAME_END ((uintptr_t)-1)

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void),
			     void (*)(void), void (*)(void), void *);

EXPORT int __libc_start_main(main_fn main_, int argc, char **argv,
			     void (*init)(void), void (*fini)(void),
			     void (*rtld_fini)(void), void *stack_end);

/* The saved frame pointer of the calling function's frame (built with
 * frame pointers: it is at the frame address). */
#define SAVED_FP() ((volatile uintptr_t *)__builtin_frame_address(0))

static main_fn program_main;

__attribute__((noinline)) static int outer_main(int argc, char **argv, char **envp)
{
	volatile uintptr_t *slot = SAVED_FP();
	uintptr_t saved = *slot;
	int rc;

	*slot = FRAME_END;
	rc = program_main(argc, argv, envp);
	*slot = saved;
	return rc;
}

EXPORT int __libc_start_main(main_fn main_, int argc, char **argv,
			     void (*init)(void), void (*fini)(void),
			     void (*rtld_fini)(void), void *stack_end)
{
	start_main_fn next = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");

	if (!next)
		return 127; /* cannot happen with a libc: the program called us */
	program_main = main_;
	return next(outer_main, argc, argv, init, fini, rtld_fini, stack_end);
}
