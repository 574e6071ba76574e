/* Process tracking: the process table, its address spaces, and the events
 * of bpf/proc.bpf.c (fork, exec, exit, rename) turned into PROCESS, THREAD
 * and EXIT records.
 *
 * Address spaces come from the kernel's mapping records (mmap_events.h):
 * an exec record starts a new, empty one, and each executable mapping is
 * added as it is made.  /proc/PID/maps is read only for what was there
 * before: the attached process, and the launched child before its exec.
 * A forked child shares its parent's address space until one of them maps
 * something (then it gets its own copy).
 *
 * A kernel that refuses the mapping records gets the older way: maps read
 * at launch, attach and each exec (the watcher snapshots them), and again
 * on the first address that cannot be found.
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/stacks/intern.h"
#include "record/procs/maps.h"
#include "record/procs/exe_id.h"
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
		free(s->procs[i]->cmdline);
		free(s->procs[i]);
	}
	free(s->procs);
	s->procs = NULL;
	free(s->exited);
	s->exited = NULL;
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
	/* The kernel tells of every mapping: /proc would know no more. */
	if (s->kernel_maps && !s->kernel_maps_lost)
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

/* The kernel's exec record: pid runs a new program from it->map.time on,
 * with none of the old mappings. */
static void kernel_exec(struct nsk_session *s, const struct nsk_proc_item *it)
{
	/* The watcher keeps the targets' records; -a: every process but ours
	 * is followed, heard of yet or not */
	int follow = !s->opts.all || it->map.pid != nsk_session__all_but(s);
	struct nsk_proc *p = nsk_proc__get(s, it->map.pid, follow);
	struct nsk_aspace *as;

	/* Not a process we follow (the records cover only what we follow,
	 * unless they are the whole machine's: then a process we have not
	 * heard of is not ours); or its exec was already handled the older
	 * way (from /proc, after a lost record) */
	if (!p || (p->as && p->as->since >= it->map.time))
		return;
	as = calloc(1, sizeof(*as));
	if (!as) {
		s->sink.lost(s->sink.ctx, "proc.maps", 1);
		return;
	}
	as->pid = p->pid;
	as->since = it->map.time;
	as->read_at = it->map.time;
	as->refs = 1;
	as->exec_unclaimed = 1;
	as->older = p->as; /* the reference moves */
	p->as = as;
}

/* The kernel's record of an executable mapping. */
static void kernel_map(struct nsk_session *s, const struct nsk_proc_item *it)
{
	const struct nsk_mmap_ev *ev = &it->map;
	struct nsk_proc *p = nsk_proc__get(s, ev->pid, 0);
	struct nsk_map m = { 0 };
	const char *path;

	if (!p || !p->as || p->as->since > ev->time)
		return; /* not followed; or made by a program since replaced
			 * (or before the exec record of a process we heard of
			 * first from it: the old program's) */
	if (p->as->refs > 1 || p->as->pid != p->pid) {
		/* shared since a fork: the change is this process's alone */
		struct nsk_aspace *own = nsk_aspace__clone(p->as, p->pid);

		if (!own) {
			s->sink.lost(s->sink.ctx, "proc.maps", 1);
			return;
		}
		nsk_aspace__put(p->as);
		p->as = own;
	}
	m.start = ev->start;
	m.end = ev->start + ev->len;
	m.pgoff = ev->pgoff;
	m.ino = ev->ino;
	/* perf names anonymous memory "//anon"; /proc/PID/maps gives "" */
	path = !strcmp(ev->path, "//anon") ? "" : ev->path;
	m.file = path[0] == '/';
	m.mod = nsk_maps__module(s->syms, p->pid, path, ev->ino, m.start, m.end,
				 it->map_fd);
	if (!m.mod || nsk_aspace__map(p->as, &m))
		s->sink.lost(s->sink.ctx, "proc.maps", 1);
	if (p->as->read_at < ev->time)
		p->as->read_at = ev->time;
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
	return s->sink.emit(s->sink.ctx, &rec);
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
	if (how == NSK_PROC_FORKED && p->as && p->as->since < time) {
		/* a reused pid: forget the old process */
		nsk_aspace__put(p->as);
		p->as = NULL;
	}
	if (ppid || how != NSK_PROC_EXECED)
		p->ppid = ppid;
	p->exited = 0;
	p->exec_told = how == NSK_PROC_EXECED && it && it->ev.hdr.type == NSK_EV_PROC_EXEC;
	p->exec_flags = p->exec_told ? it->exec_flags : 0;

	if (how == NSK_PROC_LAUNCHED) {
		const char *slash = strrchr(s->opts.argv[0], '/');
		size_t off = 0;

		snprintf(name, sizeof(name), "%.15s", slash ? slash + 1 : s->opts.argv[0]);
		for (int i = 0; s->opts.argv[i] && off < sizeof(cmdline) - 1; i++)
			off += snprintf(cmdline + off, sizeof(cmdline) - off, "%s",
					s->opts.argv[i]) + 1;
		n = off > sizeof(cmdline) ? (ssize_t)sizeof(cmdline) : (ssize_t)off;
	} else {
		const struct nsk_proc *from =
			how == NSK_PROC_FORKED ? nsk_proc__get(s, ppid, 0) : NULL;
		const char *src = NULL;

		if (comm)
			snprintf(name, sizeof(name), "%.15s", comm);
		else
			comm_of(pid, pid, name, sizeof(name));
		/* An exec's arguments came with it (read by the kernel side);
		 * a fork's child runs its parent's program, arguments and all
		 * (by now it may be another program, or gone); else /proc. */
		if (how == NSK_PROC_EXECED && it && it->args) {
			src = it->args;
			n = it->args_len;
		} else if (from && from->cmdline) {
			src = from->cmdline;
			n = from->cmdline_len;
		}
		if (src) {
			n = n < (ssize_t)sizeof(cmdline) ? n : (ssize_t)sizeof(cmdline);
			memcpy(cmdline, src, (size_t)n);
		} else {
			snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
			n = nsk_read_file(path, cmdline, sizeof(cmdline));
			if (n < 0)
				n = 0;
		}
	}
	free(p->cmdline);
	p->cmdline = n > 0 ? malloc((size_t)n) : NULL;
	p->cmdline_len = p->cmdline ? (uint32_t)n : 0;
	if (p->cmdline)
		memcpy(p->cmdline, cmdline, (size_t)n);
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
	err = s->sink.emit(s->sink.ctx, &rec);
	if (err)
		return err;

	/* Address space: a fork starts with its parent's; better, with its
	 * own maps snapshotted at the fork, which are newer than ours. */
	parent = how == NSK_PROC_FORKED ? nsk_proc__get(s, ppid, 0) : NULL;
	if (how == NSK_PROC_EXECED && p->as && p->as->exec_unclaimed &&
	    p->as->since <= time) {
		p->as->exec_unclaimed = 0; /* the kernel's records made it */
		p->as->exec_done = time;
	} else if (how == NSK_PROC_FORKED && p->as) {
		/* the child exec'd before we heard of its fork (its records
		 * came first): before the exec it ran its parent's program */
		struct nsk_aspace *first = p->as;

		while (first->older)
			first = first->older;
		if (parent && parent->as)
			first->older = nsk_aspace__get(parent->as);
	} else if (how == NSK_PROC_FORKED && it && it->maps)
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
	if (s->on_new_process)
		s->on_new_process(s, pid, how, time);
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

/* -a: a machine runs processes without end (a build starts thousands a
 * minute), so what the recorder keeps of one that exited must go: its
 * address space (maps, and through them modules' references), once every
 * record taken before its exit has surely been resolved.  Records wait in
 * the spill at most a few seconds behind the process events, which are
 * handled first; one that comes later still is resolved as a process
 * whose maps are gone (unresolved frames, counted).  What stays is the
 * pid's slot in the table, reused by the next process with that pid.
 * A targeted recording keeps them: its processes are few. */
#define EXITED_GRACE_NS 10000000000ull

static void remember_exit(struct nsk_session *s, uint32_t pid, uint64_t at)
{
	if (!s->opts.all)
		return;
	if (s->exited_head && s->exited_head >= s->exited_n / 2) {
		memmove(s->exited, s->exited + s->exited_head,
			(s->exited_n - s->exited_head) * sizeof(*s->exited));
		s->exited_n -= s->exited_head;
		s->exited_head = 0;
	}
	if (s->exited_n == s->exited_cap) {
		size_t cap = s->exited_cap ? s->exited_cap * 2 : 256;
		struct nsk_exited *v = realloc(s->exited, cap * sizeof(*v));

		if (!v)
			return; /* kept, then: only memory */
		s->exited = v;
		s->exited_cap = cap;
	}
	s->exited[s->exited_n++] = (struct nsk_exited){ pid, at };
}

static void release_exited(struct nsk_session *s, uint64_t now)
{
	while (s->exited_head < s->exited_n &&
	       s->exited[s->exited_head].at + EXITED_GRACE_NS < now) {
		struct nsk_exited *x = &s->exited[s->exited_head++];
		struct nsk_proc *p = nsk_proc__get(s, x->pid, 0);

		/* the pid may be a new process's by now: only this exit's */
		if (p && p->exited && p->exit_at == x->at) {
			nsk_aspace__put(p->as);
			p->as = NULL;
			free(p->cmdline);
			p->cmdline = NULL;
			p->cmdline_len = 0;
		}
	}
}

static void handle(struct nsk_session *s, const struct nsk_proc_item *it)
{
	const struct nsk_ev_proc *e = &it->ev;
	struct nsk_record rec = { 0 };
	char comm[NSK_COMM_LEN + 1];
	struct nsk_proc *p;

	switch (it->kind) {
	case NSK_PROC_ITEM_EXEC:
		kernel_exec(s, it);
		return;
	case NSK_PROC_ITEM_MAP:
		kernel_map(s, it);
		return;
	case NSK_PROC_ITEM_MAP_LOST:
		s->kernel_maps_lost += it->map.lost;
		s->sink.lost(s->sink.ctx, "proc.maps", it->map.lost);
		return;
	}
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
		if (s->launched && e->pid == (uint32_t)s->root && !s->root_exec_ns)
			s->root_exec_ns = e->time;
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
		s->sink.emit(s->sink.ctx, &rec);
		if (e->flags & NSK_EV_PROC_GROUP_DEAD) {
			if (e->tid != e->pid) {
				rec.exit.tid = e->pid;
				s->sink.emit(s->sink.ctx, &rec);
			}
			p = nsk_proc__get(s, e->pid, 0);
			if (p) {
				p->exited = 1;
				p->exit_at = e->time;
				remember_exit(s, e->pid, e->time);
			}
		}
		break;
	}
}

/* The kernel's mapping records, the whole machine's (the watcher keeps
 * the targets'); NULL when the kernel refuses (then /proc is read
 * instead). */
static int open_kernel_maps(struct nsk_mmap_events **mev)
{
	*mev = NULL;
	if (getenv("NUSKU_NO_KERNEL_MAPS")) /* tests of the older way */
		return -ECANCELED;
	return nsk_mmap_events__open(mev);
}

/* META proc.maps: where the address spaces came from. */
static void note_maps_source(struct nsk_session *s, int err)
{
	static const char key[] = "proc.maps";
	struct nsk_record rec = { .type = NSK_REC_META };
	char value[160];

	if (!err)
		snprintf(value, sizeof(value), "kernel");
	else
		snprintf(value, sizeof(value), "proc: %s",
			 err == -ECANCELED ? "NUSKU_NO_KERNEL_MAPS" : strerror(-err));
	/* the older way loses programs that live shorter than a read of
	 * /proc: worth a line */
	if (err && err != -ECANCELED && !s->opts.quiet)
		fprintf(stderr, "nusku: record: note: the kernel gave no mapping "
			"records (%s); maps are read from /proc, so short-lived "
			"programs may stay unnamed\n", strerror(-err));
	rec.meta.key.data = (const uint8_t *)key;
	rec.meta.key.len = (uint32_t)strlen(key);
	rec.meta.value.data = (const uint8_t *)value;
	rec.meta.value.len = (uint32_t)strlen(value);
	s->sink.emit(s->sink.ctx, &rec);
}

/* The recorder's mount namespace and root, for the exec events' "same
 * root" (bpf/proc.bpf.c); left 0 (never the same) when not readable. */
static void own_root(struct proc_bpf *skel)
{
	struct stat ns, root;

	if (stat("/proc/self/ns/mnt", &ns) || stat("/", &root))
		return;
	skel->rodata->own_mntns = (uint32_t)ns.st_ino;
	skel->rodata->own_root_ino = (uint64_t)root.st_ino;
	skel->rodata->own_root_dev = nsk_exe_id__kdev(root.st_dev);
}

int nsk_proc__start(struct nsk_session *s)
{
	struct nsk_mmap_events *mev;
	struct proc_bpf *skel;
	int err;

	skel = proc_bpf__open();
	if (!skel)
		return nsk_session__fail(s, -errno, "cannot open the proc BPF object: %s",
					 strerror(errno));
	s->proc_skel = (struct proc_bpf *)skel;
	skel->rodata->inherit = s->opts.inherit ? 1 : 0;
	own_root(skel);
	skel->rodata->nsk_all_but = nsk_session__all_but(s);
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
	note_maps_source(s, open_kernel_maps(&mev));
	s->kernel_maps = mev != NULL;
	if (!mev) /* maps from /proc: read while the process lives */
		nsk_proc__prompt(s);
	err = nsk_proc_watch__start(bpf_map__fd(skel->maps.proc_events),
				    bpf_map__fd(skel->maps.exe_held), mev,
				    s->opts.all ? -1 : s->targets_fd, &s->proc_watch);
	if (err)
		return nsk_session__fail(s, err, "cannot watch processes: %s",
					 strerror(-err));
	return 0;
}

void nsk_proc__prompt(struct nsk_session *s)
{
	if (s->proc_skel && s->proc_skel->bss)
		__atomic_store_n(&s->proc_skel->bss->prompt, 1, __ATOMIC_RELEASE);
	if (s->proc_watch)
		nsk_proc_watch__set_prompt(s->proc_watch);
}

void nsk_proc__set_exec_check(struct nsk_session *s, nsk_session_exec_check_fn fn,
			      void *ctx, const char *preload)
{
	struct proc_bpf__bss *bss = s->proc_skel ? s->proc_skel->bss : NULL;

	/* the check first, so an exec the kernel lets pass unwoken finds it
	 * when the watcher comes round */
	if (s->proc_watch)
		nsk_proc_watch__set_check(s->proc_watch, fn, ctx);
	if (!bss)
		return;
	__atomic_store_n(&bss->exec_check_on, 0, __ATOMIC_RELEASE);
	memset(bss->preload_path, 0, sizeof(bss->preload_path));
	/* a path too long for the kernel's copy: no exec passes there */
	if (fn && preload && strlen(preload) < sizeof(bss->preload_path))
		memcpy(bss->preload_path, preload, strlen(preload));
	if (fn)
		__atomic_store_n(&bss->exec_check_on, 1, __ATOMIC_RELEASE);
}

void nsk_proc__exec_passes(struct nsk_session *s, const struct stat *st)
{
	struct nsk_exe_id id;
	uint32_t one = 1;

	if (!s->proc_skel)
		return;
	nsk_exe_id__of(st, &id);
	/* full: its execs keep going to the check */
	bpf_map_update_elem(bpf_map__fd(s->proc_skel->maps.exe_passed), &id, &one, BPF_ANY);
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
	release_exited(s, nsk_session__now());
	v = calloc((size_t)ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(s->proc_lost_fd, &zero, v))
		for (int i = 0; i < ncpu; i++)
			total += v[i];
	free(v);
	if (total > s->proc_lost_seen) {
		s->sink.lost(s->sink.ctx, "proc.ringbuf", total - s->proc_lost_seen);
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
