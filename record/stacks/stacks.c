/* Stack interning: addresses to frames, frames to stacks, each given a
 * stable id and defined in the recording before its first use.
 *
 * User addresses mean nothing without their address space, so they are
 * first turned into (module, ELF address) through the process's maps; that
 * pair is the frame's identity, shared by every process mapping the file.
 * Each new pair is symbolized once and written as FRAME records, outermost
 * function first, inlined calls after it pointing at their parent.  A
 * stack is the list of innermost frame ids plus its flags.  Kernel frames
 * come from kallsyms and are keyed by address.
 */
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/stacks/intern.h"
#include "record/stacks/kallsyms.h"
#include "record/procs/maps.h"
#include "record/own.h"
#include "nusku/events/sampler.h"
#include "record/session_int.h"
#include "record/stacks/perfmap.h"
#include "record/stacks/symbols.h"
#include <nusku/events/common.h>

/* Frame keys: which kind of address, then what identifies it. */
enum { KEY_KERNEL = 1, KEY_MODULE, KEY_UNMAPPED, KEY_JIT };

struct frame_key {
	uint64_t kind;
	uint64_t who; /* module serial, or pid for unmapped addresses */
	uint64_t addr;
	uint64_t version; /* unmapped: when the maps that missed were read, so
			   * a later read that finds the address is not
			   * shadowed by this miss */
};

static uint64_t emit_frame(struct nsk_session *s, const struct nsk_rec_frame *f)
{
	struct nsk_record rec = { .type = NSK_REC_FRAME };

	rec.frame = *f;
	rec.frame.id = ++s->next_frame;
	if (nsk_session__emit(s, &rec))
		return 0;
	return rec.frame.id;
}

static uint64_t cache(struct nsk_session *s, const struct frame_key *k,
		      uint64_t id)
{
	if (id && nsk_intern__add(s->frames, k, sizeof(*k), id))
		return 0;
	return id;
}

static uint64_t kernel_frame(struct nsk_session *s, uint64_t addr)
{
	struct frame_key k = { KEY_KERNEL, 0, addr, 0 };
	struct nsk_rec_frame f = { .addr = addr, .flags = NSK_FRAME_KERNEL };
	const char *name, *module;
	char buf[160];
	uint64_t id = nsk_intern__find(s->frames, &k, sizeof(k));

	if (id)
		return id;
	/* Loading began at start, in a thread: a launched program does not
	 * wait for it, and by now it is usually done. */
	if (!s->ksyms_tried) {
		s->ksyms_tried = 1;
		s->ksyms = nsk_kallsyms__take(s->ksyms_loader);
		s->ksyms_loader = NULL;
	}
	if (s->ksyms && nsk_kallsyms__find(s->ksyms, addr, &name, &module)) {
		f.function_id = nsk_session__string(s, name);
		if (strcmp(module, "vmlinux"))
			snprintf(buf, sizeof(buf), "[%s]", module);
		else
			snprintf(buf, sizeof(buf), "[kernel]");
	} else {
		f.flags |= NSK_FRAME_UNRESOLVED;
		snprintf(buf, sizeof(buf), "[kernel]");
		nsk_session__lost(s, "symbols.unresolved", 1);
	}
	f.module_id = nsk_session__string(s, buf);
	return cache(s, &k, emit_frame(s, &f));
}

static int emit_mapping(struct nsk_session *s, struct nsk_aspace *as,
			struct nsk_map *m)
{
	struct nsk_record rec = { .type = NSK_REC_MAPPING };
	const uint8_t *bid;
	size_t bid_len;

	if (m->mapping_id)
		return 0;
	bid = nsk_module__build_id(m->mod, &bid_len);
	rec.mapping.id = ++s->next_mapping;
	rec.mapping.pid = as->pid;
	rec.mapping.start = m->start;
	rec.mapping.end = m->end;
	rec.mapping.pgoff = m->pgoff;
	rec.mapping.path_id = nsk_session__string(s, nsk_module__path(m->mod));
	rec.mapping.build_id.data = bid;
	rec.mapping.build_id.len = (uint32_t)bid_len;
	if (nsk_session__emit(s, &rec))
		return s->err;
	m->mapping_id = rec.mapping.id;
	return 0;
}

/* Frames for one user address of a module: outermost first, so each
 * inlined frame's parent is defined before it. */
static uint64_t module_frame(struct nsk_session *s, struct nsk_aspace *as,
			     struct nsk_map *m, uint64_t vaddr)
{
	struct frame_key k = { KEY_MODULE, nsk_module__serial(m->mod), vaddr, 0 };
	struct nsk_symloc locs[NSK_SYMLOC_MAX];
	struct nsk_rec_frame f = { 0 };
	uint64_t id = nsk_intern__find(s->frames, &k, sizeof(k)), parent = 0;
	int n;

	if (id)
		return id;
	if (emit_mapping(s, as, m))
		return 0;
	n = nsk_module__symbolize(m->mod, vaddr, locs, NSK_SYMLOC_MAX);
	f.mapping_id = m->mapping_id;
	f.addr = vaddr;
	f.module_id = nsk_session__string(s, nsk_module__name(m->mod));
	if (!n) {
		f.flags = NSK_FRAME_UNRESOLVED;
		nsk_session__lost(s, "symbols.unresolved", 1);
		return cache(s, &k, emit_frame(s, &f));
	}
	for (int i = n - 1; i >= 0; i--) {
		f.function_id = locs[i].function ?
			nsk_session__string(s, locs[i].function) : 0;
		f.file_id = locs[i].file ? nsk_session__string(s, locs[i].file) : 0;
		f.line = locs[i].line;
		f.flags = locs[i].inlined ? NSK_FRAME_INLINED : 0;
		if (!locs[i].function)
			f.flags |= NSK_FRAME_UNRESOLVED;
		f.inline_parent = locs[i].inlined ? parent : 0;
		parent = emit_frame(s, &f);
		if (!parent)
			return 0;
	}
	return cache(s, &k, parent);
}

/* Code a JIT compiled into an anonymous mapping, named by the process's
 * perf map (record/stacks/perfmap.h); 0 when the map does not name it.
 * Its name is written into the recording like any other, so the recording
 * does not need the map file.  Keyed by pid: the address is the process's.
 * m is NULL for code mapped since the maps were last read (a JIT maps
 * more as it goes): the process's own map naming it is enough. */
static uint64_t jit_frame(struct nsk_session *s, struct nsk_aspace *as,
			  struct nsk_map *m, uint32_t pid, uint64_t addr)
{
	/* a new program in the pid (exec, or the pid reused) is new code */
	struct frame_key k = { KEY_JIT, pid, addr, as ? as->since : 0 };
	struct nsk_rec_frame f = { .addr = addr };
	uint64_t id = nsk_intern__find(s->frames, &k, sizeof(k)), start;
	const char *name;

	if (id)
		return id;
	if (!s->perfmaps && nsk_perfmaps__new(NULL, &s->perfmaps))
		return 0;
	name = nsk_perfmaps__find(s->perfmaps, pid, addr, &start);
	if (!name || (m && emit_mapping(s, as, m)))
		return 0;
	f.mapping_id = m ? m->mapping_id : 0;
	f.function_id = nsk_session__string(s, name);
	f.module_id = nsk_session__string(s, "[jit]");
	return cache(s, &k, emit_frame(s, &f));
}

void nsk_stacks__new_process(struct nsk_session *s, uint32_t pid)
{
	if (s->perfmaps || !nsk_perfmaps__new(NULL, &s->perfmaps))
		nsk_perfmaps__watch(s->perfmaps, pid);
}

static uint64_t unmapped_frame(struct nsk_session *s, uint32_t pid,
			       const struct nsk_aspace *as, uint64_t addr)
{
	struct frame_key k = { KEY_UNMAPPED, pid, addr, as ? as->read_at : 0 };
	struct nsk_rec_frame f = { .addr = addr, .flags = NSK_FRAME_UNRESOLVED };
	uint64_t id = nsk_intern__find(s->frames, &k, sizeof(k));

	if (id)
		return id;
	f.module_id = nsk_session__string(s, "[unknown]");
	nsk_session__lost(s, "symbols.unmapped", 1);
	return cache(s, &k, emit_frame(s, &f));
}

/* A return address that is the uretprobe trampoline (the first bytes of
 * the uprobes page): a pending uretprobe's, in a stack copy whose real
 * return address was not put back (record/cpu.c does it for CPU samples).
 * Named for what it is; the unwind cannot go past it. */
static uint64_t trampoline_frame(struct nsk_session *s, uint32_t pid,
				 const struct nsk_aspace *as, uint64_t addr)
{
	struct frame_key k = { KEY_UNMAPPED, pid, addr, as->read_at };
	struct nsk_rec_frame f = { .addr = addr };
	uint64_t id = nsk_intern__find(s->frames, &k, sizeof(k));

	if (id)
		return id;
	f.function_id = nsk_session__string(s, "[uretprobe trampoline]");
	f.module_id = nsk_session__string(s, "[uprobes]");
	return cache(s, &k, emit_frame(s, &f));
}

static int is_trampoline(struct nsk_aspace *as, uint64_t addr)
{
	/* addr is a return address - 1: the page starts right after it */
	struct nsk_map *m = nsk_aspace__find(as, addr + 1);

	return m && m->start == addr + 1 && !m->file &&
	       !strcmp(nsk_module__name(m->mod), "[uprobes]");
}

/* The mapping of addr in pid at time, and the address space it is in. */
static struct nsk_map *map_of(struct nsk_session *s, uint32_t pid, uint64_t time,
			      uint64_t addr, struct nsk_aspace **asp)
{
	struct nsk_aspace *as = nsk_proc__aspace(s, pid, time);
	struct nsk_map *m = as ? nsk_aspace__find(as, addr) : NULL;
	struct nsk_proc *p = nsk_proc__get(s, pid, 0);

	if (!m && as && p && p->as == as) {
		/* maybe mapped since we last read (ld.so, dlopen), or the
		 * exec event is still on its way */
		struct nsk_aspace *again = nsk_proc__reread(s, pid, time);

		if (again) {
			as = again;
			m = nsk_aspace__find(as, addr);
		}
	}
	if (!m && as && as->pid != pid) {
		/* maps shared with the parent at the fork: the parent's newer
		 * ones may know the address (the child may be gone) */
		struct nsk_proc *owner = nsk_proc__get(s, as->pid, 0);

		if (owner && owner->as && owner->as != as && owner->as->since <= time &&
		    (m = nsk_aspace__find(owner->as, addr)))
			as = owner->as;
	}
	if (!m && as && time == UINT64_MAX) {
		/* a stack without a time (an aggregate): it may be from the
		 * program before an exec */
		for (struct nsk_aspace *o = as->older; o && !m; o = o->older)
			if ((m = nsk_aspace__find(o, addr)))
				as = o;
	}
	*asp = as;
	return m;
}

const char *nsk_stacks__module_path(struct nsk_session *s, uint32_t pid,
				    uint64_t time, uint64_t addr)
{
	struct nsk_aspace *as;
	struct nsk_map *m = map_of(s, pid, time, addr, &as);

	return m && m->file ? nsk_module__path(m->mod) : "";
}

/* Whose code a user frame is in, for the profiler's own cost. */
enum frame_owner {
	FRAME_PROGRAM,
	FRAME_SAMPLER, /* Nusku's allocation sampler: left out of the stack */
	FRAME_UPROBES, /* the kernel's uprobes page: kept, named */
};

static uint64_t user_frame(struct nsk_session *s, uint32_t pid, uint64_t time,
			   uint64_t addr, enum frame_owner *owner)
{
	struct nsk_aspace *as;
	struct nsk_map *m = map_of(s, pid, time, addr, &as);
	const char *name = m ? nsk_module__name(m->mod) : "";

	*owner = !m ? FRAME_PROGRAM :
		 m->file ? (!strcmp(name, NSK_SAMPLER_LIB) ? FRAME_SAMPLER : FRAME_PROGRAM) :
		 !strcmp(name, "[uprobes]") ? FRAME_UPROBES : FRAME_PROGRAM;

	if (!m && as && is_trampoline(as, addr))
		return trampoline_frame(s, pid, as, addr);
	/* the process's own map file: a forked child writes its own */
	if (!m || (!m->file && !strcmp(name, "[anon]"))) {
		uint64_t id = jit_frame(s, as, m, pid, addr);

		if (id)
			return id;
	}
	if (!m)
		return unmapped_frame(s, pid, as, addr);
	return module_frame(s, as, m,
			    nsk_module__vaddr(m->mod, addr - m->start + m->pgoff));
}

uint64_t nsk_stacks__intern(struct nsk_session *s, uint32_t pid,
			    uint64_t time, const uint64_t *kips, uint32_t nk,
			    const uint64_t *uips, uint32_t nu, uint32_t flags)
{
	uint64_t stack_buf[1 + 2 * NSK_MAX_STACK_DEPTH], *key = stack_buf, id;
	struct nsk_record rec = { .type = NSK_REC_STACK };
	uint32_t n = 0;
	int err = 0;

	/* Fork and exec events first: they say whose addresses these are. */
	nsk_proc__sync(s);
	if (nk + nu > 2 * NSK_MAX_STACK_DEPTH) {
		key = malloc((1 + nk + nu) * sizeof(*key));
		if (!key)
			return 0;
	}
	if (nu && !(flags & NSK_STACK_UNWIND_DWARF))
		flags |= NSK_STACK_UNWIND_FP;
	key[n++] = flags;
	/* Return addresses point after the call: look up addr - 1 so the
	 * line (and the inline chain) is the call's, not the next one's. */
	for (uint32_t i = 0; i < nk && !err; i++) {
		uint64_t fid = kernel_frame(s, kips[i] - (i > 0));

		if (!fid)
			err = -1;
		key[n++] = fid;
	}
	for (uint32_t i = 0; i < nu && !err; i++) {
		enum frame_owner owner;
		uint64_t fid = user_frame(s, pid, time, uips[i] - (i > 0), &owner);

		if (!fid)
			err = -1;
		/* A sample whose leaf is in the sampler or in the uprobes page
		 * (its trampoline, a slot stepped out of line; also when the
		 * sample came as the page was being set up, before the kernel
		 * told BPF where it is) is the profiler's cost.  The
		 * sampler's interposed malloc between the program and its
		 * allocator is left out, so CPU stacks read as they would
		 * without it. */
		if (i == 0 && owner != FRAME_PROGRAM)
			flags |= NSK_STACK_OWN;
		if (owner == FRAME_SAMPLER)
			continue;
		key[n++] = fid;
	}
	key[0] = flags;
	if (err) {
		id = 0;
		goto out;
	}
	id = nsk_intern__find(s->stacks, key, n * sizeof(*key));
	if (id)
		goto out;
	rec.stack.id = ++s->next_stack;
	rec.stack.flags = flags;
	rec.stack.frames.v = key + 1;
	rec.stack.frames.n = n - 1;
	if (nsk_session__emit(s, &rec) ||
	    nsk_intern__add(s->stacks, key, n * sizeof(*key), rec.stack.id)) {
		id = 0;
		goto out;
	}
	id = rec.stack.id;
out:
	if (key != stack_buf)
		free(key);
	return id;
}

const char *nsk_session__module_of(struct nsk_session *s, uint32_t pid,
				   uint64_t time, uint64_t addr)
{
	return nsk_stacks__module_path(s, pid, time, addr);
}

int nsk_session__own_sample(struct nsk_session *s, const uint64_t *kips,
			    uint32_t nk, uint64_t user_leaf, uint64_t xol)
{
	const char *name, *module;

	/* the uprobes page is one page: the return trampoline and the slots
	 * instructions are single-stepped in */
	if (xol && user_leaf - xol < 4096)
		return 1;
	for (uint32_t i = 0; i < nk; i++) {
		uint64_t addr = kips[i] - (i > 0);
		int prog = nsk_own__prog_at(s->own, addr);

		if (prog > 0)
			return 1;
		if (prog < 0) /* a cgroup, socket or XDP program */
			continue;
		if (!s->ksyms || !nsk_kallsyms__find(s->ksyms, addr, &name, &module))
			continue;
		if (nsk_own__machinery(name, i + 1 == nk))
			return 1;
		/* BPF code no scan saw: a program loaded since (kallsyms, read
		 * at the start, may give an older program's name), or one
		 * already gone, most likely a short-lived tracer's probe */
		if (strcmp(module, "bpf"))
			continue;
		nsk_own__rescan(s->own);
		if (nsk_own__prog_at(s->own, addr) >= 0)
			return 1;
	}
	return 0;
}

int nsk_session__warm_module(struct nsk_session *s, const char *path)
{
	char real[4096];
	struct nsk_module *m;
	struct stat st;

	/* the module's key as /proc/PID/maps will name it */
	if (!realpath(path, real) || stat(real, &st))
		return -errno;
	m = nsk_symbols__module(s->syms, real, real, st.st_ino);
	if (!m)
		return -ENOMEM;
	nsk_module__warm(m);
	return 0;
}
