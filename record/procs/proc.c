/* Process tracking: the process table, its address spaces, and the events
 * of bpf/proc.bpf.c (fork, exec, exit, rename) turned into PROCESS, THREAD
 * and EXIT records.
 *
 * Maps are read as early as the recorder can: at launch and attach, and on
 * each exec event (which wakes the loop), so a short-lived child's samples
 * still resolve after it is gone.  A forked child shares its parent's
 * address space: at fork they are the same, and the child re-reads its own
 * on the first address it cannot find.
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/stacks/intern.h"
#include "record/procs/maps.h"
#include "record/procs/proc_watch.h"
#include "record/session_int.h"
#include <nusku/events/proc.h>
#include "proc.skel.h"

/* How soon the maps of one process may be read again after a miss of a
 * stack with no time. */
#define REREAD_NS 20000000ull

struct nsk_proc *nsk_proc__get(struct nsk_session *s, uint32_t pid, int create)
{
	uint64_t idx = nsk_intern__find(s->proc_index, &pid, sizeof(pid));
	struct nsk_proc *p, **v;

	if (idx)
		return s->procs[idx - 1];
	if (!create)
		return NULL;
	p = calloc(1, sizeof(*p));
	v = s->procs;
	if (p && (s->nprocs & (s->nprocs - 1)) == 0) {
		/* grow at powers of two */
		v = realloc(s->procs, (s->nprocs ? s->nprocs * 2 : 16) * sizeof(*v));
		if (v)
			s->procs = v;
	}
	if (!p || !v || nsk_intern__add(s->proc_index, &pid, sizeof(pid), s->nprocs + 1)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	s->procs[s->nprocs++] = p;
	return p;
}

void nsk_proc__free_all(struct nsk_session *s)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		nsk_aspace__put(s->procs[i]->as);
		free(s->procs[i]);
	}
	free(s->procs);
	s->procs = NULL;
	s->nprocs = 0;
	nsk_intern__free(s->proc_index);
	s->proc_index = NULL;
}

static struct nsk_aspace *replace_program(struct nsk_proc *p,
					  struct nsk_aspace *as);

/* A new program in p, valid from since; its maps from a snapshot taken
 * at snap_at when there is one, else read now. */
static int new_program(struct nsk_session *s, struct nsk_proc *p, uint64_t since,
		       const char *snap, uint64_t snap_at)
{
	uint64_t t0 = nsk_session__now();
	struct nsk_aspace *as;
	int err;

	if (since && p->as && p->as->pid == p->pid && p->as->read_at >= since) {
		/* A miss already re-read this process's maps after the exec
		 * (its event came late); the process may be gone by now, so
		 * keep those. */
		p->as->since = since;
		return 0;
	}
	if (snap) {
		err = nsk_aspace__parse(p->pid, since, snap, s->syms, &as);
		t0 = snap_at;
	} else {
		err = nsk_aspace__read(p->pid, since, s->syms, &as);
	}
	if (err)
		return err;
	as->read_at = t0; /* everything mapped before t0 is in */
	as->older = p->as; /* the reference moves */
	p->as = as;
	return 0;
}

struct nsk_aspace *nsk_proc__aspace(struct nsk_session *s, uint32_t pid,
				    uint64_t time)
{
	struct nsk_proc *p = nsk_proc__get(s, pid, 1);
	struct nsk_aspace *as;

	if (!p)
		return NULL;
	if (!p->as && new_program(s, p, 0, NULL, 0))
		return NULL;
	for (as = p->as; as->older && time < as->since; as = as->older)
		;
	return as;
}

struct nsk_aspace *nsk_proc__reread(struct nsk_session *s, uint32_t pid,
				    uint64_t time)
{
	struct nsk_proc *p = nsk_proc__get(s, pid, 0);
	uint64_t now = nsk_session__now();
	struct nsk_aspace *old, *as;

	if (!p || !p->as || p->exited)
		return NULL;
	/* Maps read after the stack was taken held everything it could
	 * point to: reading them again would not help. */
	if (time != UINT64_MAX && p->as->read_at >= time)
		return NULL;
	if (time == UINT64_MAX && now - p->as->read_at < REREAD_NS)
		return NULL;
	old = p->as;
	if (nsk_aspace__read(pid, old->since, s->syms, &as))
		return NULL;
	if (!as->n) {
		/* The process is gone (its events are drained after its exit
		 * was seen by the kernel but before we heard of it): the maps
		 * we have are the best there will be. */
		old->read_at = now;
		nsk_aspace__put(as);
		return NULL;
	}
	as->read_at = now;
	return replace_program(p, as);
}

/* A newer snapshot of pid's current program (from the watcher). */
static void later_snapshot(struct nsk_session *s, const struct nsk_proc_item *it)
{
	struct nsk_proc *p = nsk_proc__get(s, it->ev.pid, 0);
	struct nsk_aspace *as;

	if (!p || !p->as || p->as->pid != p->pid || p->as->read_at >= it->maps_at ||
	    p->as->since > it->maps_at)
		return;
	if (nsk_aspace__parse(p->pid, p->as->since, it->maps, s->syms, &as))
		return;
	if (!as->n) {
		/* taken as the process exited: the maps we have are better */
		nsk_aspace__put(as);
		return;
	}
	as->read_at = it->maps_at;
	replace_program(p, as);
}

static struct nsk_aspace *replace_program(struct nsk_proc *p, struct nsk_aspace *as)
{
	struct nsk_aspace *old = p->as;

	nsk_aspace__inherit_ids(as, old);
	as->older = nsk_aspace__get(old->older);
	p->as = as;
	nsk_aspace__put(old);
	return as;
}

static void comm_of(uint32_t pid, uint32_t tid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	n = nsk_read_file(path, buf, size);
	if (n <= 0)
		buf[0] = 0;
	else if (buf[n - 1] == '\n')
		buf[n - 1] = 0;
}

static int emit_thread(struct nsk_session *s, uint32_t pid, uint32_t tid,
		       const char *name, uint64_t time)
{
	struct nsk_record rec = { .type = NSK_REC_THREAD };

	rec.thread.time = time;
	rec.thread.pid = pid;
	rec.thread.tid = tid;
	rec.thread.name.data = (const uint8_t *)name;
	rec.thread.name.len = (uint32_t)strnlen(name, NSK_COMM_LEN);
	return nsk_session__emit(s, &rec);
}

static void notify_signals(struct nsk_session *s, uint32_t pid)
{
	for (int i = 0; i < s->nsigs; i++) {
		const struct nsk_signal *sig = s->sigs[i].sig;
		int err;

		if (!sig->on_process)
			continue;
		err = sig->on_process(s, s->sigs[i].state, pid);
		if (err && !s->err)
			nsk_session__lost(s, "proc.on_process", 1);
	}
}

static int announce(struct nsk_session *s, uint32_t pid, uint32_t ppid,
		    uint32_t how, uint64_t time, const char *comm,
		    const struct nsk_proc_item *it)
{
	struct nsk_record rec = { .type = NSK_REC_PROCESS };
	char path[64], cmdline[4096], name[64];
	struct nsk_proc *p, *parent;
	ssize_t n;
	int err = 0;

	p = nsk_proc__get(s, pid, 1);
	if (!p)
		return -ENOMEM;
	if (how == NSK_PROC_FORKED && p->as) {
		/* a reused pid: forget the old process */
		nsk_aspace__put(p->as);
		p->as = NULL;
	}
	if (ppid || how != NSK_PROC_EXECED)
		p->ppid = ppid;
	p->exited = 0;

	if (how == NSK_PROC_LAUNCHED) {
		const char *slash = strrchr(s->opts.argv[0], '/');
		size_t off = 0;

		snprintf(name, sizeof(name), "%.15s", slash ? slash + 1 : s->opts.argv[0]);
		for (int i = 0; s->opts.argv[i] && off < sizeof(cmdline) - 1; i++)
			off += snprintf(cmdline + off, sizeof(cmdline) - off, "%s",
					s->opts.argv[i]) + 1;
		n = off > sizeof(cmdline) ? (ssize_t)sizeof(cmdline) : (ssize_t)off;
	} else {
		if (comm)
			snprintf(name, sizeof(name), "%.15s", comm);
		else
			comm_of(pid, pid, name, sizeof(name));
		snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
		n = nsk_read_file(path, cmdline, sizeof(cmdline));
		if (n < 0)
			n = 0;
	}
	if (how == NSK_PROC_ATTACHED && !ppid) {
		char stat[512], *rp;

		snprintf(path, sizeof(path), "/proc/%u/stat", pid);
		if (nsk_read_file(path, stat, sizeof(stat)) > 0 &&
		    (rp = strrchr(stat, ')')))
			sscanf(rp + 1, " %*c %u", &p->ppid);
	}
	rec.process.time = time;
	rec.process.pid = pid;
	rec.process.ppid = p->ppid;
	rec.process.how = how;
	rec.process.comm.data = (const uint8_t *)name;
	rec.process.comm.len = (uint32_t)strlen(name);
	rec.process.cmdline.data = (const uint8_t *)cmdline;
	rec.process.cmdline.len = (uint32_t)n;
	err = nsk_session__emit(s, &rec);
	if (err)
		return err;
	nsk_stacks__new_process(s, pid);

	/* Address space: a fork starts with its parent's; better, with its
	 * own maps snapshotted at the fork, which are newer than ours. */
	parent = how == NSK_PROC_FORKED ? nsk_proc__get(s, ppid, 0) : NULL;
	if (how == NSK_PROC_FORKED && it && it->maps)
		err = new_program(s, p, 0, it->maps, it->maps_at);
	else if (parent && parent->as && !parent->exited)
		p->as = nsk_aspace__get(parent->as);
	else if (how == NSK_PROC_EXECED)
		err = new_program(s, p, time, it ? it->maps : NULL,
				  it ? it->maps_at : 0);
	else if (!p->as)
		err = new_program(s, p, 0, NULL, 0);
	if (err)
		return err;

	if (how == NSK_PROC_ATTACHED) {
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof(path), "/proc/%u/task", pid);
		d = opendir(path);
		while (d && (de = readdir(d))) {
			uint32_t tid = (uint32_t)strtoul(de->d_name, NULL, 10);

			if (!tid)
				continue;
			comm_of(pid, tid, name, sizeof(name));
			emit_thread(s, pid, tid, name, time);
		}
		if (d)
			closedir(d);
	} else {
		emit_thread(s, pid, pid, name, time);
	}
	notify_signals(s, pid);
	return s->err;
}

int nsk_proc__announce(struct nsk_session *s, uint32_t pid, uint32_t ppid,
		       uint32_t how, uint64_t time)
{
	return announce(s, pid, ppid, how, time, NULL, NULL);
}

/* The kernel's wait status as a shell would show it: the exit code, or
 * 128 + the signal that killed it. */
static int32_t exit_code(int32_t st)
{
	if (st & 0x7f)
		return 128 + (st & 0x7f);
	return (st >> 8) & 0xff;
}

static void handle(struct nsk_session *s, const struct nsk_proc_item *it)
{
	const struct nsk_ev_proc *e = &it->ev;
	struct nsk_record rec = { 0 };
	char comm[NSK_COMM_LEN + 1];
	struct nsk_proc *p;

	memcpy(comm, e->comm, NSK_COMM_LEN);
	comm[NSK_COMM_LEN] = 0;
	switch (e->hdr.type) {
	case 0:
		later_snapshot(s, it);
		break;
	case NSK_EV_PROC_FORK:
		if (e->pid != e->ppid)
			announce(s, e->pid, e->ppid, NSK_PROC_FORKED, e->time, comm, it);
		else
			emit_thread(s, e->pid, e->tid, comm, e->time);
		break;
	case NSK_EV_PROC_EXEC:
		announce(s, e->pid, 0, NSK_PROC_EXECED, e->time, comm, it);
		break;
	case NSK_EV_PROC_COMM:
		emit_thread(s, e->pid, e->tid, comm, e->time);
		break;
	case NSK_EV_PROC_EXIT:
		/* The leader leaving before its threads is not the end of
		 * the process (tid == pid means the whole process). */
		if (e->tid == e->pid && !(e->flags & NSK_EV_PROC_GROUP_DEAD))
			break;
		rec.type = NSK_REC_EXIT;
		rec.exit.time = e->time;
		rec.exit.pid = e->pid;
		rec.exit.tid = e->tid;
		rec.exit.exit_code = exit_code(e->exit_code);
		nsk_session__emit(s, &rec);
		if (e->flags & NSK_EV_PROC_GROUP_DEAD) {
			if (e->tid != e->pid) {
				rec.exit.tid = e->pid;
				nsk_session__emit(s, &rec);
			}
			p = nsk_proc__get(s, e->pid, 0);
			if (p)
				p->exited = 1;
		}
		break;
	}
}

int nsk_proc__start(struct nsk_session *s)
{
	struct proc_bpf *skel;
	int err;

	skel = proc_bpf__open();
	if (!skel)
		return nsk_session__fail(s, -errno, "cannot open the proc BPF object: %s",
					 strerror(errno));
	s->proc_skel = (struct proc_bpf *)skel;
	skel->rodata->inherit = s->opts.inherit ? 1 : 0;
	err = bpf_map__reuse_fd(skel->maps.nsk_targets, s->targets_fd);
	if (!err)
		err = proc_bpf__load(skel);
	if (!err)
		err = proc_bpf__attach(skel);
	if (err) {
		const char *why = strerror(-err);

		if (err == -EPERM || err == -EACCES)
			why = "permission denied (needs root, or CAP_BPF + CAP_PERFMON)";
		return nsk_session__fail(s, err, "cannot start process tracking: %s", why);
	}
	s->proc_lost_fd = bpf_map__fd(skel->maps.proc_lost);
	err = nsk_proc_watch__start(bpf_map__fd(skel->maps.proc_events),
				    &s->proc_watch);
	if (err)
		return nsk_session__fail(s, err, "cannot watch processes: %s",
					 strerror(-err));
	return 0;
}

void nsk_proc__sync(struct nsk_session *s)
{
	struct nsk_proc_item *it;

	/* handle() may resolve nothing, but a signal's on_process() might */
	if (!s->proc_watch || s->in_proc_sync)
		return;
	s->in_proc_sync = 1;
	it = nsk_proc_watch__take(s->proc_watch);
	while (it) {
		struct nsk_proc_item *next = it->next;

		handle(s, it);
		nsk_proc_item__free(it);
		it = next;
	}
	s->in_proc_sync = 0;
}

void nsk_proc__poll(struct nsk_session *s, int final)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, total = 0;
	__u32 zero = 0;

	if (!s->proc_skel || ncpu <= 0)
		return;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(s->proc_lost_fd, &zero, v))
		for (int i = 0; i < ncpu; i++)
			total += v[i];
	free(v);
	if (total > s->proc_lost_seen) {
		nsk_session__lost(s, "proc.ringbuf", total - s->proc_lost_seen);
		s->proc_lost_seen = total;
	}
}

void nsk_proc__stop(struct nsk_session *s)
{
	nsk_proc_watch__free(s->proc_watch);
	s->proc_watch = NULL;
	proc_bpf__destroy(s->proc_skel);
	s->proc_skel = NULL;
}
