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
#include <inttypes.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/procs/maps.h"
#include "record/stacks/intern.h"
#include "record/stacks/kallsyms.h"
#include "record/stacks/stacks_int.h"
#include "record/stacks/perfmap.h"
#include "record/stacks/symbols.h"
#include "record/stacks/unwind.h"
#include <nusku/events/common.h>
#include <nusku/events/sampler.h>

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

static uint64_t emit_frame(struct nsk_stacks *st, const struct nsk_rec_frame *f)
{
	struct nsk_record rec = { .type = NSK_REC_FRAME };

	rec.frame = *f;
	rec.frame.id = ++st->next_frame;
	if (nsk_stacks__emit(st, &rec))
		return 0;
	return rec.frame.id;
}

static uint64_t cache(struct nsk_stacks *st, const struct frame_key *k,
		      uint64_t id)
{
	if (id && nsk_intern__add(st->frames, k, sizeof(*k), id))
		return 0;
	return id;
}

static uint64_t kernel_frame(struct nsk_stacks *st, uint64_t addr)
{
	struct frame_key k = { KEY_KERNEL, 0, addr, 0 };
	struct nsk_rec_frame f = { .addr = addr, .flags = NSK_FRAME_KERNEL };
	const char *name, *module;
	char buf[160];
	uint64_t id = nsk_intern__find(st->frames, &k, sizeof(k));

	if (id)
		return id;
	/* Loading began at start, in a thread: a launched program does not
	 * wait for it, and by now it is usually done. */
	if (nsk_stacks__kallsyms(st) &&
	    nsk_kallsyms__find(st->ksyms, addr, &name, &module)) {
		f.function_id = nsk_stacks__string(st, name);
		if (strcmp(module, "vmlinux"))
			snprintf(buf, sizeof(buf), "[%s]", module);
		else
			snprintf(buf, sizeof(buf), "[kernel]");
	} else {
		f.flags |= NSK_FRAME_UNRESOLVED;
		snprintf(buf, sizeof(buf), "[kernel]");
		st->unresolved_frames++;
	}
	f.module_id = nsk_stacks__string(st, buf);
	return cache(st, &k, emit_frame(st, &f));
}

static int emit_mapping(struct nsk_stacks *st, struct nsk_aspace *as,
			struct nsk_map *m)
{
	struct nsk_record rec = { .type = NSK_REC_MAPPING };
	const uint8_t *bid;
	size_t bid_len;
	int err;

	if (m->mapping_id)
		return 0;
	bid = nsk_module__build_id(m->mod, &bid_len);
	rec.mapping.id = ++st->next_mapping;
	rec.mapping.pid = as->pid;
	rec.mapping.start = m->start;
	rec.mapping.end = m->end;
	rec.mapping.pgoff = m->pgoff;
	rec.mapping.path_id = nsk_stacks__string(st, nsk_module__path(m->mod));
	rec.mapping.build_id.data = bid;
	rec.mapping.build_id.len = (uint32_t)bid_len;
	if (nsk_module__lacks_symbols(m->mod))
		rec.mapping.flags |= NSK_MAPPING_NO_SYMBOLS;
	err = nsk_stacks__emit(st, &rec);
	if (err)
		return err;
	m->mapping_id = rec.mapping.id;
	return 0;
}

/* Frames for one user address of a module: outermost first, so each
 * inlined frame's parent is defined before it. */
static uint64_t module_frame(struct nsk_stacks *st, struct nsk_aspace *as,
			     struct nsk_map *m, uint64_t vaddr)
{
	struct frame_key k = { KEY_MODULE, nsk_module__serial(m->mod), vaddr, 0 };
	struct nsk_symloc locs[NSK_SYMLOC_MAX];
	struct nsk_rec_frame f = { 0 };
	uint64_t id = nsk_intern__find(st->frames, &k, sizeof(k)), parent = 0;
	int n;

	if (id)
		return id;
	if (emit_mapping(st, as, m))
		return 0;
	n = nsk_module__symbolize(m->mod, vaddr, locs, NSK_SYMLOC_MAX);
	f.mapping_id = m->mapping_id;
	f.addr = vaddr;
	f.module_id = nsk_stacks__string(st, nsk_module__name(m->mod));
	if (!n) {
		f.flags = NSK_FRAME_UNRESOLVED;
		st->unresolved_frames++;
		return cache(st, &k, emit_frame(st, &f));
	}
	for (int i = n - 1; i >= 0; i--) {
		f.function_id = locs[i].function ?
			nsk_stacks__string(st, locs[i].function) : 0;
		f.file_id = locs[i].file ? nsk_stacks__string(st, locs[i].file) : 0;
		f.line = locs[i].line;
		f.flags = locs[i].inlined ? NSK_FRAME_INLINED : 0;
		if (!locs[i].function)
			f.flags |= NSK_FRAME_UNRESOLVED;
		f.inline_parent = locs[i].inlined ? parent : 0;
		parent = emit_frame(st, &f);
		if (!parent)
			return 0;
	}
	return cache(st, &k, parent);
}

/* Code a JIT compiled into an anonymous mapping, named by the process's
 * perf map (record/stacks/perfmap.h); 0 when the map does not name it.
 * Its name is written into the recording like any other, so the recording
 * does not need the map file.  Keyed by pid: the address is the process's.
 * m is NULL for code mapped since the maps were last read (a JIT maps
 * more as it goes): the process's own map naming it is enough. */
static uint64_t jit_frame(struct nsk_stacks *st, struct nsk_aspace *as,
			  struct nsk_map *m, uint32_t pid, uint64_t addr)
{
	/* a new program in the pid (exec, or the pid reused) is new code */
	struct frame_key k = { KEY_JIT, pid, addr, as ? as->since : 0 };
	struct nsk_rec_frame f = { .addr = addr };
	uint64_t id = nsk_intern__find(st->frames, &k, sizeof(k)), start;
	const char *name;

	if (id)
		return id;
	if (!st->perfmaps && nsk_perfmaps__new(NULL, &st->perfmaps))
		return 0;
	name = nsk_perfmaps__find(st->perfmaps, pid, addr, &start);
	if (!name || (m && emit_mapping(st, as, m)))
		return 0;
	f.mapping_id = m ? m->mapping_id : 0;
	f.function_id = nsk_stacks__string(st, name);
	f.module_id = nsk_stacks__string(st, "[jit]");
	return cache(st, &k, emit_frame(st, &f));
}

void nsk_stacks__new_process(struct nsk_stacks *st, uint32_t pid)
{
	if (st->perfmaps || !nsk_perfmaps__new(NULL, &st->perfmaps))
		nsk_perfmaps__watch(st->perfmaps, pid);
}

static uint64_t unmapped_frame(struct nsk_stacks *st, uint32_t pid,
			       const struct nsk_aspace *as, uint64_t addr)
{
	struct frame_key k = { KEY_UNMAPPED, pid, addr, as ? as->read_at : 0 };
	struct nsk_rec_frame f = { .addr = addr, .flags = NSK_FRAME_UNRESOLVED };
	uint64_t id = nsk_intern__find(st->frames, &k, sizeof(k));

	if (id)
		return id;
	f.module_id = nsk_stacks__string(st, "[unknown]");
	st->unmapped_frames++;
	return cache(st, &k, emit_frame(st, &f));
}

/* A return address that is the uretprobe trampoline (the first bytes of
 * the uprobes page): a pending uretprobe's, in a stack copy whose real
 * return address was not put back (record/cpu.c does it for CPU samples).
 * Named for what it is; the unwind cannot go past it. */
static uint64_t trampoline_frame(struct nsk_stacks *st, uint32_t pid,
				 const struct nsk_aspace *as, uint64_t addr)
{
	struct frame_key k = { KEY_UNMAPPED, pid, addr, as->read_at };
	struct nsk_rec_frame f = { .addr = addr };
	uint64_t id = nsk_intern__find(st->frames, &k, sizeof(k));

	if (id)
		return id;
	f.function_id = nsk_stacks__string(st, "[uretprobe trampoline]");
	f.module_id = nsk_stacks__string(st, "[uprobes]");
	return cache(st, &k, emit_frame(st, &f));
}

static int is_trampoline(struct nsk_aspace *as, uint64_t addr)
{
	/* addr is a return address - 1: the page starts right after it */
	struct nsk_map *m = nsk_aspace__find(as, addr + 1);

	return m && m->start == addr + 1 && !m->file &&
	       !strcmp(nsk_module__name(m->mod), "[uprobes]");
}

/* The mapping of addr in pid at time, and the address space it is in. */
static struct nsk_map *map_of(struct nsk_stacks *st, uint32_t pid, uint64_t time,
			      uint64_t addr, struct nsk_aspace **asp)
{
	struct nsk_aspace *as = st->as.at(st->as.ctx, pid, time);
	struct nsk_map *m = as ? nsk_aspace__find(as, addr) : NULL;

	if (!m && as && st->as.newest(st->as.ctx, pid) == as) {
		/* maybe mapped since we last read (ld.so, dlopen), or the
		 * exec event is still on its way */
		struct nsk_aspace *again = st->as.reread(st->as.ctx, pid, time);

		if (again) {
			as = again;
			m = nsk_aspace__find(as, addr);
		}
	}
	if (!m && as && as->pid != pid) {
		/* maps shared with the parent at the fork: the parent's newer
		 * ones may know the address (the child may be gone) */
		struct nsk_aspace *owner = st->as.newest(st->as.ctx, as->pid);

		if (owner && owner != as && owner->since <= time &&
		    (m = nsk_aspace__find(owner, addr)))
			as = owner;
	}
	if (!m && as && as->older && (as->exec_unclaimed || time < as->exec_done) &&
	    (m = nsk_aspace__find(as->older, addr))) {
		/* taken during the exec: the kernel had begun the new program
		 * but the thread's user registers were still the old one's */
		as = as->older;
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

void nsk_stacks__write_counts(struct nsk_stacks *st)
{
	static const char *const keys[] = { "symbols.unresolved",
					    "symbols.unmapped" };
	const uint64_t counts[] = { st->unresolved_frames, st->unmapped_frames };
	struct nsk_record rec = { .type = NSK_REC_META };
	char value[24];

	for (int i = 0; i < 2; i++) {
		snprintf(value, sizeof(value), "%" PRIu64, counts[i]);
		rec.meta.key.data = (const uint8_t *)keys[i];
		rec.meta.key.len = (uint32_t)strlen(keys[i]);
		rec.meta.value.data = (const uint8_t *)value;
		rec.meta.value.len = (uint32_t)strlen(value);
		if (nsk_stacks__emit(st, &rec))
			return;
	}
}

const char *nsk_stacks__module_path(struct nsk_stacks *st, uint32_t pid,
				    uint64_t time, uint64_t addr)
{
	struct nsk_aspace *as;
	struct nsk_map *m = map_of(st, pid, time, addr, &as);

	return m && m->file ? nsk_module__path(m->mod) : "";
}

/* Whose code a user frame is in, for the profiler's own cost. */
enum frame_owner {
	FRAME_PROGRAM,
	FRAME_SAMPLER, /* Nusku's allocation sampler: left out of the stack */
	FRAME_UPROBES, /* the kernel's uprobes page: kept, named */
};

/* The frame of a user address; *mapped: it lies in a mapping.  A caller
 * (not the leaf) in no mapping while the leaf's maps are known (cut) is
 * no code at all, a word the walk took for a return address: 0 and *cut
 * set, and the stack ends before it. */
static uint64_t user_frame(struct nsk_stacks *st, uint32_t pid, uint64_t time,
			   uint64_t addr, enum frame_owner *owner, int *mapped,
			   int *cut)
{
	struct nsk_aspace *as;
	struct nsk_map *m = map_of(st, pid, time, addr, &as);
	const char *name = m ? nsk_module__name(m->mod) : "";

	*mapped = m != NULL;

	*owner = !m ? FRAME_PROGRAM :
		 m->file ? (!strcmp(name, NSK_SAMPLER_LIB) ? FRAME_SAMPLER : FRAME_PROGRAM) :
		 !strcmp(name, "[uprobes]") ? FRAME_UPROBES : FRAME_PROGRAM;

	if (!m && as && is_trampoline(as, addr))
		return trampoline_frame(st, pid, as, addr);
	/* the process's own map file: a forked child writes its own */
	if (!m || (!m->file && !strcmp(name, "[anon]"))) {
		uint64_t id = jit_frame(st, as, m, pid, addr);

		if (id)
			return id;
	}
	if (!m && *cut)
		return 0;
	*cut = 0;
	if (!m)
		return unmapped_frame(st, pid, as, addr);
	return module_frame(st, as, m,
			    nsk_module__vaddr(m->mod, addr - m->start + m->pgoff));
}

uint64_t nsk_stacks__intern(struct nsk_stacks *st, uint32_t pid,
			    uint64_t time, const uint64_t *kips, uint32_t nk,
			    const uint64_t *uips, uint32_t nu, uint32_t flags)
{
	/* Fork and exec events first: they say whose addresses these are. */
	st->as.sync(st->as.ctx);
	return nsk_stacks__intern_synced(st, pid, time, kips, nk, uips, nu, flags);
}

uint64_t nsk_stacks__intern_synced(struct nsk_stacks *st, uint32_t pid,
				   uint64_t time, const uint64_t *kips,
				   uint32_t nk, const uint64_t *uips,
				   uint32_t nu, uint32_t flags)
{
	uint64_t stack_buf[1 + 2 * NSK_MAX_STACK_DEPTH], *key = stack_buf, id;
	struct nsk_record rec = { .type = NSK_REC_STACK };
	uint32_t n = 0;
	int err = 0;

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
		uint64_t fid = kernel_frame(st, kips[i] - (i > 0));

		if (!fid)
			err = -1;
		key[n++] = fid;
	}
	for (uint32_t i = 0, leaf_mapped = 0; i < nu && !err; i++) {
		enum frame_owner owner;
		int mapped, cut = i > 0 && leaf_mapped;
		uint64_t fid;

		/* No code can be there (zero, the kernel's half, a word of data
		 * in no mapping): the walk went astray, the stack ends before */
		if (i > 0 && !nsk_unwind__user_addr(uips[i])) {
			flags |= NSK_STACK_TRUNCATED;
			break;
		}
		fid = user_frame(st, pid, time, uips[i] - (i > 0), &owner, &mapped, &cut);
		if (cut) {
			flags |= NSK_STACK_TRUNCATED;
			break;
		}
		if (i == 0)
			leaf_mapped = (uint32_t)mapped;
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
	id = nsk_intern__find(st->stacks, key, n * sizeof(*key));
	if (id)
		goto out;
	rec.stack.id = ++st->next_stack;
	rec.stack.flags = flags;
	rec.stack.frames.v = key + 1;
	rec.stack.frames.n = n - 1;
	if (nsk_stacks__emit(st, &rec) ||
	    nsk_intern__add(st->stacks, key, n * sizeof(*key), rec.stack.id)) {
		id = 0;
		goto out;
	}
	id = rec.stack.id;
out:
	if (key != stack_buf)
		free(key);
	return id;
}


struct nsk_kallsyms *nsk_stacks__kallsyms(struct nsk_stacks *st)
{
	/* a signal's load may ask from its own thread (record/session.h) */
	if (!__atomic_load_n(&st->ksyms_tried, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&st->ksyms_lock);
		if (!st->ksyms_tried) {
			st->ksyms = nsk_kallsyms__take(st->ksyms_loader);
			st->ksyms_loader = NULL;
			nsk_kallsyms__set_outside(st->ksyms, st->opts.kernel_outside,
						  st->opts.kernel_outside_ctx);
			__atomic_store_n(&st->ksyms_tried, 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&st->ksyms_lock);
	}
	return st->ksyms;
}

void nsk_stacks__store_cache(struct nsk_stacks *st)
{
	if (st)
		nsk_symbols__store_cache(st->syms);
}

struct nsk_symbols *nsk_stacks__symbols(struct nsk_stacks *st)
{
	return st->syms;
}

int nsk_stacks__new(const struct nsk_sink *sink, const struct nsk_aspaces *as,
		    const struct nsk_stacks_opts *opts, struct nsk_stacks **out)
{
	struct nsk_stacks *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	pthread_mutex_init(&st->ksyms_lock, NULL);
	st->sink = *sink;
	st->as = *as;
	st->opts = *opts;
	st->frames = nsk_intern__new();
	st->stacks = nsk_intern__new();
	if (!st->frames || !st->stacks || nsk_symbols__new(&st->syms)) {
		nsk_stacks__free(st);
		return -ENOMEM;
	}
	/* in a thread: a launched program does not wait for it */
	if (opts->kernel_stacks && nsk_kallsyms__load_async(&st->ksyms_loader))
		st->ksyms_loader = NULL; /* kernel frames unresolved */
	*out = st;
	return 0;
}

void nsk_stacks__free(struct nsk_stacks *st)
{
	if (!st)
		return;
	nsk_intern__free(st->frames);
	nsk_intern__free(st->stacks);
	nsk_unwinder__free(st->unwinder);
	nsk_perfmaps__free(st->perfmaps);
	nsk_symbols__free(st->syms);
	nsk_kallsyms__free(st->ksyms);
	nsk_kallsyms_loader__free(st->ksyms_loader);
	pthread_mutex_destroy(&st->ksyms_lock);
	free(st);
}

int nsk_stacks__warm_module(struct nsk_stacks *st, const char *path)
{
	char real[4096];
	struct nsk_module *m;
	struct stat sb;

	/* the module's key as /proc/PID/maps will name it */
	if (!realpath(path, real) || stat(real, &sb))
		return -errno;
	m = nsk_symbols__module(st->syms, real, real, sb.st_ino);
	if (!m)
		return -ENOMEM;
	nsk_module__warm(m);
	return 0;
}
