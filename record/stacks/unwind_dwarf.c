/* DWARF CFI unwinding of copied user stacks with libdwfl (see unwind.h).
 *
 * libdwfl unwinds a "thread" through callbacks: we hand it the copied
 * registers as the initial state and serve its memory reads from the copied
 * stack bytes.  A read outside the copy ends the walk; that is the only way
 * a walk is cut short by us, and it is reported as truncation.
 *
 * The modules come from the address space the recorder keeps (record/procs/maps.h)
 * rather than /proc/PID/maps, which is gone once the process exits and wrong
 * once it execs; each module's file is the one the symbolizer holds open. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "record/procs/maps.h"
#include "record/stacks/debuginfo.h"
#include "record/stacks/symbols.h"
#include "record/stacks/unwind.h"
#include "record/stacks/unwind_mixed.h"
#include "record/stacks/unwind_rules.h"

/* x86-64 DWARF register numbers (System V psABI, figure 3.36). */
enum { DW_X86_64_RBP = 6, DW_X86_64_RSP = 7 };

/* Address spaces whose Dwfl is kept; more are rebuilt on demand. */
#define NSK_UNWIND_CACHE 32

struct cached {
	struct nsk_aspace *as; /* a reference: the pointer stays unique */
	Dwfl *dwfl; /* made when libdw is needed (dwfl_of); NULL until then */
	int dwfl_tried;
	struct nsk_unwind_rules *rules; /* walks done without libdw */
	uint64_t used;
	/* The sample being unwound: what the callbacks read. */
	const struct nsk_user_regs *regs;
	const uint8_t *stack;
	size_t len;
	size_t high; /* bytes of the copy read so far, from sp */
	int out_of_copy;
};

struct nsk_unwinder {
	struct cached cache[NSK_UNWIND_CACHE];
	uint64_t clock;
	struct nsk_unwind_stats stats;
	int libdw_only; /* tests: no fast path */
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
	struct cached *c = arg;
	uint64_t sp = c->regs->sp;

	if (addr < sp || addr - sp > c->len || c->len - (addr - sp) < 8) {
		c->out_of_copy = 1;
		return false;
	}
	memcpy(result, c->stack + (addr - sp), sizeof(*result));
	if (addr - sp + 8 > c->high)
		c->high = addr - sp + 8;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct cached *c = arg;
	/* rbp and rsp are DWARF registers 6 and 7: one block */
	Dwarf_Word bp_sp[2] = { c->regs->bp, c->regs->sp };

	if (!dwfl_thread_state_registers(thread, DW_X86_64_RBP, 2, bp_sp))
		return false;
	dwfl_thread_state_register_pc(thread, c->regs->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = nsk_debuginfo__find, /* local files: never a server */
};

static void cached_clear(struct cached *c)
{
	if (c->dwfl)
		dwfl_end(c->dwfl);
	nsk_unwind_rules__free(c->rules);
	if (c->as)
		nsk_aspace__put(c->as);
	memset(c, 0, sizeof(*c));
}

/* Reports each file-backed module of c's address space where it is
 * mapped: the base is where file offset 0 would be, as perf does for its
 * libdw unwinder.  Made on first need only: most walks go by the rules,
 * and a process that lives a moment (a compiler's) would pay an ELF
 * handle per library for nothing.  NULL when it cannot be made. */
static Dwfl *dwfl_of(struct cached *c)
{
	struct nsk_aspace *as = c->as;
	int reported = 0;

	if (c->dwfl || c->dwfl_tried)
		return c->dwfl;
	c->dwfl_tried = 1;
	c->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!c->dwfl)
		return NULL;
	dwfl_report_begin(c->dwfl);
	for (size_t i = 0; i < as->n; i++) {
		const struct nsk_map *m = &as->maps[i];
		int fd = m->file ? nsk_module__fd(m->mod) : -1;

		if (fd < 0)
			continue;
		/* one module may have several executable mappings */
		if (dwfl_addrmodule(c->dwfl, m->start))
			continue;
		fd = dup(fd);
		if (fd < 0)
			continue;
		/* libdwfl consumes fd on success only */
		if (!dwfl_report_elf(c->dwfl, nsk_module__name(m->mod),
				     nsk_module__path(m->mod), fd,
				     m->start - m->pgoff, false))
			close(fd);
		else
			reported++;
	}
	dwfl_report_end(c->dwfl, NULL, NULL);
	if (!reported || !dwfl_attach_state(c->dwfl, NULL, (pid_t)as->pid,
					    &thread_callbacks, c)) {
		dwfl_end(c->dwfl);
		c->dwfl = NULL;
	}
	return c->dwfl;
}

/* A rule for pc of c's address space: from the module mapped there, or
 * from libdw when that module cannot say.  libdw knows only the files
 * dwfl_of reports, so a pc in no file (no mapping, the uprobes page, JIT
 * code) gets no rule without asking it: a Dwfl is an ELF handle and a
 * mapping of every file the process maps, and asking for those pcs built
 * one for most processes of a build (102 mappings of ELF files, unmapped
 * again, in a make -j2 of 11 files; 7 pcs asked, none in a file). */
static int module_rule(void *ctx, uint64_t pc, struct nsk_unwind_rule *out)
{
	struct cached *c = ctx;
	struct nsk_map *m = nsk_aspace__find(c->as, pc);

	if (m && m->file && m->mod &&
	    nsk_module__unwind_rule(m->mod,
				    nsk_module__vaddr(m->mod, pc - m->start + m->pgoff),
				    out))
		return 1;
	out->pc = pc;
	nsk_unwind_rules__learn(m && m->file ? dwfl_of(c) : NULL, out);
	return 1;
}

static int build(struct cached *c, struct nsk_aspace *as)
{
	if (nsk_unwind_rules__new(&c->rules))
		return -ENOMEM;
	nsk_unwind_rules__set_source(c->rules, module_rule, c);
	c->as = nsk_aspace__get(as);
	return 0;
}

/* The cached Dwfl of as, built (evicting the least recently used) if
 * needed; NULL with *err set when it cannot be built. */
static struct cached *lookup(struct nsk_unwinder *u, struct nsk_aspace *as,
			     int *err)
{
	struct cached *c = &u->cache[0];

	for (int i = 0; i < NSK_UNWIND_CACHE; i++) {
		if (u->cache[i].as == as) {
			c = &u->cache[i];
			goto found;
		}
		if (u->cache[i].used < c->used)
			c = &u->cache[i];
	}
	cached_clear(c);
	*err = build(c, as);
	if (*err) {
		cached_clear(c);
		return NULL;
	}
found:
	c->used = ++u->clock;
	return c;
}

struct collect {
	struct cached *c;
	uint64_t *ips;
	uint32_t *reach;
	uint32_t max;
	uint32_t n;
	uint64_t sp;  /* the last frame's */
	int stopped; /* at an address no code has, or a stack not growing */
};

static int collect_frame(Dwfl_Frame *frame, void *arg)
{
	struct collect *c = arg;
	Dwarf_Word sp;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || pc == 0)
		return DWARF_CB_ABORT;
	if (!nsk_unwind__user_addr(pc) ||
	    (c->n && (dwfl_frame_reg(frame, DW_X86_64_RSP, &sp) || sp <= c->sp))) {
		c->stopped = 1;
		return DWARF_CB_ABORT;
	}
	c->sp = c->n ? sp : c->c->regs->sp;
	/* libdwfl reports a frame before it unwinds the next one, so the
	 * reads so far are the ones this frame needed. */
	if (c->reach)
		c->reach[c->n] = (uint32_t)c->c->high;
	c->ips[c->n++] = pc;
	return c->n < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int nsk_unwinder__new(struct nsk_unwinder **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

int nsk_unwinder__unwind(struct nsk_unwinder *u, struct nsk_aspace *as,
			 const struct nsk_user_regs *regs, const void *stack,
			 size_t stack_len, uint64_t *ips, uint32_t *reach,
			 uint32_t max, uint32_t *n)
{
	uint32_t own_reach[NSK_UNWIND_MAX_FRAMES];
	struct collect col = { .ips = ips, .reach = reach ? reach : own_reach };
	struct cached *c;
	int err = 0, rc;

	*n = 0;
	if (max == 0 || !as)
		return -EINVAL;
	col.max = max = max > NSK_UNWIND_MAX_FRAMES ? NSK_UNWIND_MAX_FRAMES : max;
	c = lookup(u, as, &err);
	if (!c) {
		u->stats.failed++;
		return err;
	}
	if (!u->libdw_only) {
		rc = nsk_unwind_rules__unwind(c->rules, c->dwfl, regs, stack,
					      stack_len, ips, col.reach, max, n);
		if (rc >= 0) {
			u->stats.stacks++;
			u->stats.fast++;
			u->stats.frames += *n;
			u->stats.truncated += rc >= 1;
			return rc;
		}
	}
	if (!dwfl_of(c)) {
		u->stats.failed++;
		return -ENOENT;
	}
	c->regs = regs;
	c->stack = stack;
	c->len = stack_len;
	c->high = 0;
	c->out_of_copy = 0;
	col.c = c;
	rc = dwfl_getthread_frames(c->dwfl, (pid_t)as->pid, collect_frame, &col);
	c->regs = NULL;
	c->stack = NULL;
	*n = col.n;
	if (col.n == 0) {
		u->stats.failed++;
		return -ENOENT;
	}
	u->stats.stacks++;
	u->stats.frames += col.n;
	/* libdwfl ends an outermost frame with 0 or an error; only a read past
	 * our copy, the caller's limit or an impossible frame means frames are
	 * missing. */
	rc = col.stopped ? NSK_UNWIND_STOPPED :
	     c->out_of_copy || (rc == DWARF_CB_ABORT && col.n == max);
	u->stats.truncated += rc != 0;
	return rc;
}

int nsk_unwinder__unwind_fp(struct nsk_unwinder *u, struct nsk_aspace *as,
			    const struct nsk_user_regs *regs, const void *stack,
			    size_t stack_len, const struct nsk_fp_walk *fp,
			    uint64_t *ips, uint32_t *reach, uint32_t max,
			    uint32_t *n, uint32_t *from_fp)
{
	struct cached *c;
	int err = 0, rc;

	*n = 0;
	*from_fp = 0;
	if (max == 0 || !as)
		return -EINVAL;
	if (u->libdw_only)
		return -ENOENT;
	max = max > NSK_UNWIND_MAX_FRAMES ? NSK_UNWIND_MAX_FRAMES : max;
	c = lookup(u, as, &err);
	if (!c) {
		u->stats.failed++;
		return err;
	}
	rc = nsk_unwind_mixed__walk(c->rules, c->dwfl, as, regs, stack,
				    stack_len, fp, ips, reach, max, n, from_fp);
	if (rc >= 0) {
		u->stats.stacks++;
		u->stats.fast++;
		u->stats.frames += *n;
		u->stats.truncated += rc != NSK_UNWIND_DONE;
	}
	return rc;
}

int nsk_unwinder__fp_holds(struct nsk_unwinder *u, struct nsk_aspace *as,
			   uint64_t pc)
{
	const struct nsk_unwind_rule *ru;
	struct cached *c;
	int err = 0;

	if (!as || !(c = lookup(u, as, &err)))
		return 0;
	ru = nsk_unwind_rules__at(c->rules, c->dwfl, pc);
	return nsk_unwind_rule__fp(ru) ||
	       nsk_unwind__mapped_without_cfi(ru, as, pc);
}

void nsk_unwinder__libdw_only(struct nsk_unwinder *u, int on)
{
	u->libdw_only = on;
}

const struct nsk_unwind_stats *nsk_unwinder__stats(const struct nsk_unwinder *u)
{
	return &u->stats;
}

void nsk_unwinder__free(struct nsk_unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < NSK_UNWIND_CACHE; i++)
		cached_clear(&u->cache[i]);
	free(u);
}
