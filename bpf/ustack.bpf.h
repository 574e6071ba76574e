/* Copies the user registers and the top of the user stack into an event,
 * for DWARF unwinding in user space (include/nusku/events/ustack.h).
 *
 * The registers are the task's saved user registers (bpf_task_pt_regs), so
 * the copy is right whether the program fired in user mode or in the
 * kernel (a syscall, a page fault).  bpf_probe_read_user fails as a whole
 * when any byte is unmapped, and the top of a stack is rarely a whole copy
 * away from sp, so the copy goes page by page and keeps what it got.
 */
#ifndef NUSKU_USTACK_BPF_H
#define NUSKU_USTACK_BPF_H

#include <nusku/events/ustack.h>

#define NSK_PAGE 4096

/* The copy for a program stopped at ip with stack pointer sp and frame
 * pointer bp (a state the caller computed: the allocation sampler's probe
 * stands where the program called the allocator).  dst must have
 * NSK_USTACK_ROOM bytes of room.  Returns bytes copied. */
static __always_inline __u32 nsk_copy_ustack_at(struct nsk_ev_ustack *u,
						__u8 *dst, __u32 want, __u64 ip,
						__u64 sp, __u64 bp)
{
	__u64 off = 0, chunk;

	u->ip = ip;
	u->sp = sp;
	u->bp = bp;
	u->len = 0;
	u->flags = 0;
	if (!u->sp || want > NSK_USTACK_MAX)
		return 0;
	/* The main thread's frames end below start_stack (argc, where _start
	 * began); above it are the arguments, environment and auxv, which no
	 * unwind reads.  A shallow program's copy was the whole 8 KiB of
	 * them: the allocation sampler's, of alloc_churn, 8 KiB a sample
	 * where its frames take a few hundred bytes.  Another stack (a
	 * thread's, a coroutine's, sigaltstack) is not bounded here. */
	{
		struct task_struct *t = bpf_get_current_task_btf();
		__u64 top = 0;

		if (t->pid == t->tgid)
			top = BPF_CORE_READ(t, mm, start_stack);
		if (top > u->sp && top - u->sp < want)
			want = (__u32)(top - u->sp);
	}
	/* the rest of sp's page first, then whole pages */
	chunk = NSK_PAGE - (u->sp & (NSK_PAGE - 1));
	for (int i = 0; i < NSK_USTACK_MAX / NSK_PAGE + 1; i++) {
		if (off >= want)
			break;
		if (chunk > want - off)
			chunk = want - off;
		/* bounds the verifier can follow: off < MAX, chunk <= PAGE;
		 * the barriers keep clang from merging them away */
		off &= NSK_USTACK_MAX - 1;
		chunk &= 2 * NSK_PAGE - 1;
		__asm__ volatile("" : "+r"(off), "+r"(chunk));
		if (chunk > NSK_PAGE || chunk == 0)
			break;
		if (bpf_probe_read_user(dst + off, chunk, (void *)(u->sp + off)))
			break;
		off += chunk;
		chunk = NSK_PAGE;
	}
	u->len = off;
	return off;
}

/* The copy for the task's saved user registers. */
static __always_inline __u32 nsk_copy_ustack(struct nsk_ev_ustack *u,
					     __u8 *dst, __u32 want)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	return nsk_copy_ustack_at(u, dst, want, regs->ip, regs->sp, regs->bp);
}

#endif
