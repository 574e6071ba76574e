/* The session's side of the stack room: the sink over the writer, the
 * process table as the room's source of address spaces, and the calls of
 * record/session.h that signals make with their stacks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "record/own.h"
#include "record/procs/maps.h"
#include "record/session_int.h"
#include "record/stacks/kallsyms.h"
#include "record/stacks/stacks.h"
#include <nusku/events/ustack.h>

static int sink_emit(void *ctx, const struct nsk_record *rec)
{
	struct nsk_session *s = ctx;

	return nsk_session__emit(s, rec) ? (s->err ? s->err : -EIO) : 0;
}

static uint64_t sink_string(void *ctx, const char *str)
{
	return nsk_session__string(ctx, str);
}

static void sink_lost(void *ctx, const char *source, uint64_t count)
{
	nsk_session__lost(ctx, source, count);
}

static void as_sync(void *ctx)
{
	nsk_proc__sync(ctx);
}

static struct nsk_aspace *as_at(void *ctx, uint32_t pid, uint64_t time)
{
	return nsk_proc__aspace(ctx, pid, time);
}

static struct nsk_aspace *as_newest(void *ctx, uint32_t pid)
{
	struct nsk_proc *p = nsk_proc__get(ctx, pid, 0);

	return p ? p->as : NULL;
}

static struct nsk_aspace *as_reread(void *ctx, uint32_t pid, uint64_t time)
{
	return nsk_proc__reread(ctx, pid, time);
}

/* A kernel address outside the image: a BPF program's, by the scans of
 * record/own.c, looked at again for one loaded since (at most every
 * 100 ms).  Called from the session's thread, where own is scanned. */
static int bpf_name(void *ctx, uint64_t addr, const char **name,
		    const char **module)
{
	struct nsk_session *s = ctx;

	if (!nsk_own__name_at(s->own, addr, name)) {
		nsk_own__rescan(s->own);
		if (!nsk_own__name_at(s->own, addr, name))
			return 0;
	}
	*module = "bpf";
	return 1;
}

int nsk_session__stacks_init(struct nsk_session *s)
{
	struct nsk_aspaces as = { s, as_sync, as_at, as_newest, as_reread };
	struct nsk_stacks_opts opts = { s->opts.call_graph, s->opts.kernel_stacks,
					bpf_name, s };
	int err;

	s->sink = (struct nsk_sink){ s, sink_emit, sink_string, sink_lost };
	err = nsk_stacks__new(&s->sink, &as, &opts, &s->stk);
	if (err)
		return err;
	s->syms = nsk_stacks__symbols(s->stk);
	return 0;
}

uint64_t nsk_session__stack(struct nsk_session *s, uint32_t pid,
			    const uint64_t *kernel_ips, uint32_t nkernel,
			    const uint64_t *user_ips, uint32_t nuser,
			    uint32_t flags)
{
	return nsk_stacks__intern(s->stk, pid, UINT64_MAX, kernel_ips, nkernel,
				  user_ips, nuser, flags);
}

uint64_t nsk_session__stack_at(struct nsk_session *s, uint32_t pid,
			       uint64_t time, const uint64_t *kernel_ips,
			       uint32_t nkernel, const uint64_t *user_ips,
			       uint32_t nuser, uint32_t flags)
{
	return nsk_stacks__intern(s->stk, pid, time, kernel_ips, nkernel, user_ips,
				  nuser, flags);
}

uint64_t nsk_session__stack_learned(struct nsk_session *s, uint32_t pid,
				    uint64_t time, const uint64_t *kips,
				    uint32_t nk, const uint64_t *uips,
				    uint32_t nu, const struct nsk_ev_ustack *copy,
				    const void *copy_bytes, uint32_t flags,
				    uint32_t *copy_needed)
{
	return nsk_stacks__intern_copied(s->stk, pid, time, kips, nk, uips, nu,
					 copy, copy_bytes, flags, copy_needed);
}

uint64_t nsk_session__stack_copied(struct nsk_session *s, uint32_t pid,
				   uint64_t time, const uint64_t *kips,
				   uint32_t nk, const uint64_t *uips,
				   uint32_t nu, const struct nsk_ev_ustack *copy,
				   const void *copy_bytes, uint32_t flags)
{
	return nsk_stacks__intern_copied(s->stk, pid, time, kips, nk, uips, nu,
					 copy, copy_bytes, flags, NULL);
}

void nsk_session__sync_procs(struct nsk_session *s)
{
	nsk_proc__sync(s);
}

uint32_t nsk_session__ustack_bytes(const struct nsk_session *s)
{
	uint32_t n = s->opts.stack_bytes ? s->opts.stack_bytes : NSK_USTACK_DEFAULT;

	if (s->opts.call_graph == NSK_CALL_GRAPH_FP)
		return 0;
	return n > NSK_USTACK_MAX ? NSK_USTACK_MAX : n;
}

const char *nsk_session__module_of(struct nsk_session *s, uint32_t pid,
				   uint64_t time, uint64_t addr)
{
	return nsk_stacks__module_path(s->stk, pid, time, addr);
}

int nsk_session__warm_module(struct nsk_session *s, const char *path)
{
	return nsk_stacks__warm_module(s->stk, path);
}

struct nsk_kallsyms *nsk_session__kallsyms(struct nsk_session *s)
{
	return nsk_stacks__kallsyms(s->stk);
}

static int read_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

int nsk_session__check_kallsyms(struct nsk_session *s)
{
	struct nsk_record rec = { .type = NSK_REC_META };
	static const char key[] = "kernel_stacks.error";
	int err, restrict_;
	char why[160];

	if (!s->opts.kernel_stacks)
		return 0;
	err = nsk_kallsyms__err(nsk_stacks__kallsyms(s->stk));
	if (!err)
		return 0;
	/* kallsyms_show_value(): kptr_restrict 2 hides the addresses from
	 * everyone, below that CAP_SYSLOG shows them (kptr_restrict 0 also
	 * perf_event_paranoid <= 1) */
	restrict_ = read_sysctl("/proc/sys/kernel/kptr_restrict");
	if (err == -EPERM && restrict_ >= 2)
		snprintf(why, sizeof(why), "/proc/kallsyms hides its addresses "
			 "from everyone (kernel.kptr_restrict=%d)", restrict_);
	else if (err == -EPERM)
		snprintf(why, sizeof(why), "/proc/kallsyms shows this user no "
			 "addresses (kernel.kptr_restrict=%d: needs CAP_SYSLOG)",
			 restrict_);
	else
		snprintf(why, sizeof(why), "no symbols in /proc/kallsyms (%s)",
			 strerror(-err));
	fprintf(stderr, "nusku: record: warning: kernel frames will be unnamed: "
		"%s\n", why);
	rec.meta.key.data = (const uint8_t *)key;
	rec.meta.key.len = (uint32_t)strlen(key);
	rec.meta.value.data = (const uint8_t *)why;
	rec.meta.value.len = (uint32_t)strlen(why);
	return nsk_session__emit(s, &rec);
}

int nsk_session__launcher_sample(struct nsk_session *s, uint32_t pid, uint64_t time)
{
	if (!s->launched || pid != (uint32_t)s->root)
		return 0;
	/* the exec may be waiting among the process events: once */
	if (!s->root_exec_ns)
		nsk_proc__sync(s);
	return !s->root_exec_ns || time < s->root_exec_ns;
}

int nsk_session__own_sample(struct nsk_session *s, const uint64_t *kips,
			    uint32_t nk, uint64_t user_leaf, uint64_t xol)
{
	struct nsk_kallsyms *ksyms = s->stk ? nsk_stacks__kallsyms(s->stk) : NULL;
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
		if (!ksyms || !nsk_kallsyms__find(ksyms, addr, &name, &module))
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
