/* DWARF CFI unwinding of copied user stacks with libdwfl (see unwind.h).
 *
 * libdwfl unwinds a "thread" through callbacks: we hand it the copied
 * registers as the initial state and serve its memory reads from the copied
 * stack bytes.  A read outside the copy ends the walk; that is the only way
 * a walk is cut short by us, and it is reported as truncation. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>

#include "record/unwind.h"

/* x86-64 DWARF register numbers (System V psABI, figure 3.36). */
enum { DW_X86_64_RBP = 6, DW_X86_64_RSP = 7 };

/* The sample being unwound: what the callbacks read. */
struct sample {
	const struct nsk_user_regs *regs;
	const uint8_t *stack;
	size_t len;
	int out_of_copy; /* a read fell outside the copied bytes */
};

struct proc_unwind {
	uint32_t pid;
	Dwfl *dwfl;
	struct sample cur;
	struct proc_unwind *next;
};

#define NBUCKETS 256

struct nsk_unwinder {
	struct proc_unwind *buckets[NBUCKETS];
	struct nsk_unwind_stats stats;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return dwfl_pid(dwfl);
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	struct proc_unwind *p = arg;
	const struct sample *s = &p->cur;
	uint64_t sp = s->regs->sp;

	if (addr < sp || addr - sp > s->len || s->len - (addr - sp) < 8) {
		p->cur.out_of_copy = 1;
		return false;
	}
	memcpy(result, s->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct proc_unwind *p = arg;
	Dwarf_Word bp_sp[2] = { p->cur.regs->bp, p->cur.regs->sp };

	if (!dwfl_thread_state_registers(thread, DW_X86_64_RBP, 2, bp_sp))
		return false;
	dwfl_thread_state_register_pc(thread, p->cur.regs->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static struct proc_unwind **slot_of(struct nsk_unwinder *u, uint32_t pid)
{
	struct proc_unwind **pp = &u->buckets[pid % NBUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static void proc_free(struct proc_unwind *p)
{
	if (!p)
		return;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p);
}

/* Builds the Dwfl of pid from /proc/PID/maps and attaches our callbacks. */
static int proc_new(uint32_t pid, struct proc_unwind **out)
{
	struct proc_unwind *p;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl) {
		err = -ENOMEM;
		goto cleanup;
	}
	dwfl_report_begin(p->dwfl);
	err = dwfl_linux_proc_report(p->dwfl, (pid_t)pid);
	if (dwfl_report_end(p->dwfl, NULL, NULL) != 0 && !err)
		err = EIO;
	if (err) {
		/* A positive errno from reading /proc; -1 from libdwfl. */
		err = err > 0 ? -err : -ESRCH;
		goto cleanup;
	}
	if (!dwfl_attach_state(p->dwfl, NULL, (pid_t)pid, &thread_callbacks, p)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	*out = p;
	return 0;
cleanup:
	proc_free(p);
	return err;
}

struct collect {
	uint64_t *ips;
	uint32_t max;
	uint32_t n;
};

static int collect_frame(Dwfl_Frame *frame, void *arg)
{
	struct collect *c = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || pc == 0)
		return DWARF_CB_ABORT;
	c->ips[c->n++] = pc;
	return c->n < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int nsk_unwinder__new(struct nsk_unwinder **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

int nsk_unwinder__unwind(struct nsk_unwinder *u, uint32_t pid,
			 const struct nsk_user_regs *regs, const void *stack,
			 size_t stack_len, uint64_t *ips, uint32_t max,
			 uint32_t *n)
{
	struct proc_unwind **slot = slot_of(u, pid);
	struct collect c = { .ips = ips, .max = max };
	int err, rc;

	*n = 0;
	if (max == 0)
		return -EINVAL;
	/* Code mapped since the maps were read: read them again, once. */
	if (*slot && !dwfl_addrmodule((*slot)->dwfl, regs->ip)) {
		nsk_unwinder__forget(u, pid);
		slot = slot_of(u, pid);
	}
	if (!*slot) {
		err = proc_new(pid, slot);
		if (err) {
			u->stats.failed++;
			return err;
		}
	}
	(*slot)->cur = (struct sample){ regs, stack, stack_len, 0 };
	rc = dwfl_getthread_frames((*slot)->dwfl, (pid_t)pid, collect_frame, &c);
	(*slot)->cur.regs = NULL;
	*n = c.n;
	if (c.n == 0) {
		u->stats.failed++;
		return -ENOENT;
	}
	u->stats.stacks++;
	u->stats.frames += c.n;
	/* libdwfl ends an outermost frame with 0 or an error; only a read past
	 * our copy, or the caller's limit, means frames are missing. */
	if ((*slot)->cur.out_of_copy || (rc == DWARF_CB_ABORT && c.n == max)) {
		u->stats.truncated++;
		return 1;
	}
	return 0;
}

void nsk_unwinder__forget(struct nsk_unwinder *u, uint32_t pid)
{
	struct proc_unwind **slot = slot_of(u, pid);
	struct proc_unwind *p = *slot;

	if (!p)
		return;
	*slot = p->next;
	proc_free(p);
}

const struct nsk_unwind_stats *nsk_unwinder__stats(const struct nsk_unwinder *u)
{
	return &u->stats;
}

void nsk_unwinder__free(struct nsk_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < NBUCKETS; i++) {
		while (u->buckets[i]) {
			struct proc_unwind *p = u->buckets[i];

			u->buckets[i] = p->next;
			proc_free(p);
		}
	}
	free(u);
}
