/* The process-event watcher (see proc_watch.h).
 *
 * One lock guards the ring buffer, the mmap stream and the queue, so the
 * thread and the main thread may both drain them (the main thread does
 * before it resolves a stack).  The BPF ring buffer is drained before the
 * mmap stream: the kernel writes a program's exec and mapping records
 * before the exec event BPF sees, so whatever exec the first shows, the
 * second has its mappings.  What one drain took is sorted by time.
 * Without the stream, re-snapshots are due 5 and 50 ms after an exec; a
 * snapshot of a process that is gone is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/ringbuf.h"
#include "record/procs/exe_id.h"
#include "record/procs/followed.h"
#include "record/procs/maps.h"
#include "record/procs/proc_watch.h"
#include "record/session.h"

#define MAX_DUE 64
/* Execs checked after one drain, at most; past it the drain is urgent. */
#define MAX_EXECS 64

struct exec_told {
	uint32_t pid;
	uint32_t flags; /* exec_flags */
	uint64_t time;
};
/* Records of processes not known to be followed, held while one drain reads
 * the mmap stream (a child's fork may reach the ring buffer after the drain
 * read it); past this many, the rest are another process's, most likely,
 * and dropped. */
#define MAX_PENDING 4096

static const uint64_t resnap_ns[] = { 5000000ull, 50000000ull };

struct due {
	uint32_t pid;
	uint64_t at;
};

/* Files held once, by device and inode, for the recording: a build maps the
 * same cc1, as, libc and ld.so in every process, and each open of
 * /proc/PID/map_files/... is a path walk with a ptrace check that waits on
 * the process's mmap lock while it is mid-exec.  A mapping of a file held
 * here gets a duplicate of its descriptor: the same file (held open, its
 * inode cannot be another's), whatever became of its path.  A fork and
 * exec of /bin/true under the default signals: ~11 us less of ~850. */
#define HELD_FILES 256

struct held_file {
	uint64_t ino;
	uint32_t maj, min;
	int fd; /* 0: an empty slot (fd 0 is never one of ours) */
};

struct nsk_proc_watch {
	pthread_mutex_t lock;
	pthread_t thread;
	int running;
	int stop; /* atomic */
	struct nsk_ringbuf *rb; /* its data mapped once (record/ringbuf.h) */
	struct nsk_mmap_events *mev; /* NULL: snapshots instead */
	int ep;			     /* the ring buffer's and the stream's */
	int wake;		     /* eventfd: stop now, not at the next timeout */
	int urgent;		     /* eventfd: the main thread's (urgent_fd) */
	int prompt;		     /* atomic: every event is urgent */
	pthread_mutex_t check_lock;  /* the check, and a check running */
	nsk_session_exec_check_fn check;
	void *check_ctx;
	struct exec_told execs[MAX_EXECS]; /* told of since the last checks */
	int nexecs;		     /* MAX_EXECS + 1: more (all urgent) */
	int pushed;		     /* items pushed since the last look */
	struct nsk_proc_item *head, *tail;
	struct due due[MAX_DUE];
	int ndue;
	struct nsk_followed followed; /* whose records are kept */
	struct nsk_proc_item *pending; /* not known to be followed yet (drain) */
	size_t npending;
	struct held_file files[HELD_FILES]; /* open addressing by identity */
	size_t nfiles;
	int held_map_fd; /* bpf/proc.bpf.c's exe_held, or -1 */
};

static void push(struct nsk_proc_watch *w, struct nsk_proc_item *it)
{
	w->pushed = 1;
	if (w->tail)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
}

static struct nsk_proc_item *snapshot(uint32_t pid)
{
	struct nsk_proc_item *it = calloc(1, sizeof(*it));
	size_t len;

	if (!it)
		return NULL;
	it->map_fd = -1;
	it->maps_at = nsk_session__now();
	it->maps = nsk_maps__snapshot(pid, &len);
	it->ev.pid = pid;
	return it;
}

/* Under the lock. */
static int on_event(void *ctx, void *data, size_t size)
{
	const struct nsk_ev_proc *e = data;
	struct nsk_proc_watch *w = ctx;
	struct nsk_proc_item *it;

	if (size < sizeof(*e))
		return 0;
	nsk_followed__event(&w->followed, e);
	/* A new program, or a new process: its maps now, while it lives
	 * (the mmap stream, when there is one, has told already). */
	if (!w->mev && (e->hdr.type == NSK_EV_PROC_EXEC ||
			(e->hdr.type == NSK_EV_PROC_FORK && e->pid != e->ppid)))
		it = snapshot(e->pid);
	else
		it = calloc(1, sizeof(*it));
	if (!it)
		return 0; /* the event is lost; so would be the recording */
	it->ev = *e;
	it->map_fd = -1;
	if (e->hdr.type == NSK_EV_PROC_EXEC &&
	    size >= sizeof(struct nsk_ev_proc_exec) - NSK_PROC_ARGS_MAX) {
		const struct nsk_ev_proc_exec *x = data;
		size_t n = x->args_len;

		it->exec_flags = x->exec_flags;
		if (w->nexecs < MAX_EXECS)
			w->execs[w->nexecs++] = (struct exec_told){ e->pid, x->exec_flags, e->time };
		else
			w->nexecs = MAX_EXECS + 1;

		if (n > size - (sizeof(*x) - NSK_PROC_ARGS_MAX))
			n = size - (sizeof(*x) - NSK_PROC_ARGS_MAX);
		if (n && (it->args = malloc(n))) {
			memcpy(it->args, x->args, n);
			it->args_len = (uint32_t)n;
		}
	}
	push(w, it);
	if (e->hdr.type == NSK_EV_PROC_EXEC && !w->mev) {
		for (size_t i = 0; i < sizeof(resnap_ns) / sizeof(resnap_ns[0]); i++) {
			if (w->ndue == MAX_DUE)
				break;
			w->due[w->ndue++] = (struct due){ e->pid, it->maps_at + resnap_ns[i] };
		}
	}
	return 0;
}

/* Files held for mappings not handled yet, at most MAX_HELD: a storm of
 * short processes (each a handful of mappings) while the main thread is
 * busy must not take every descriptor the recorder may have. */
#define MAX_HELD 512
static int held; /* atomic */

/* The file of a mapping, opened through the mapping itself while the
 * process lives: a regular file with the inode the kernel reported. */
static int hold_file(const struct nsk_mmap_ev *ev)
{
	char path[96];
	struct stat st;
	int fd;

	if (ev->path[0] != '/' || __atomic_load_n(&held, __ATOMIC_RELAXED) >= MAX_HELD)
		return -1;
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", ev->pid,
		 (unsigned long long)ev->start,
		 (unsigned long long)(ev->start + ev->len));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		/* Gone already (it lived shorter than this thread took to
		 * wake): its file by name, while nothing has removed it yet;
		 * the same file only if its device and inode are the mapped
		 * one's. */
		int at = open(ev->path, O_PATH | O_CLOEXEC | O_NOFOLLOW);

		/* looked at before it is opened: nothing but the mapped
		 * regular file is ever opened for reading */
		if (at >= 0 && !fstat(at, &st) && S_ISREG(st.st_mode) &&
		    st.st_ino == ev->ino && st.st_dev == makedev(ev->maj, ev->min)) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", at);
			fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		}
		if (at >= 0)
			close(at);
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != ev->ino) {
		close(fd);
		return -1;
	}
	__atomic_add_fetch(&held, 1, __ATOMIC_RELAXED);
	return fd;
}

static struct nsk_proc_item *item_of(const struct nsk_mmap_ev *ev)
{
	static const uint32_t kind[] = {
		[NSK_MMAP_EV_MAP] = NSK_PROC_ITEM_MAP,
		[NSK_MMAP_EV_EXEC] = NSK_PROC_ITEM_EXEC,
		[NSK_MMAP_EV_LOST] = NSK_PROC_ITEM_MAP_LOST,
	};
	struct nsk_proc_item *it;

	if (ev->kind >= sizeof(kind) / sizeof(kind[0]) || !kind[ev->kind] ||
	    (ev->kind == NSK_MMAP_EV_MAP && !ev->path))
		return NULL;
	it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	it->kind = kind[ev->kind];
	it->map = *ev;
	it->map.path = ev->path ? strdup(ev->path) : NULL;
	it->map_fd = -1;
	if (ev->path && !it->map.path) {
		free(it);
		return NULL;
	}
	return it;
}

/* The slot of a file's identity in w->files: its own, or the empty one
 * where it would go; NULL when the table is full and it is not there. */
static struct held_file *held_slot(struct nsk_proc_watch *w, const struct nsk_mmap_ev *ev)
{
	uint64_t h = (ev->ino ^ ((uint64_t)ev->maj << 40) ^ ((uint64_t)ev->min << 20)) *
		     0x9e3779b97f4a7c15ULL;

	for (size_t i = 0, at = (h >> 32) % HELD_FILES; i < HELD_FILES;
	     i++, at = (at + 1) % HELD_FILES) {
		struct held_file *f = &w->files[at];

		if (!f->fd || (f->ino == ev->ino && f->maj == ev->maj && f->min == ev->min))
			return f;
	}
	return NULL;
}

/* A file kept for the recording, told to the kernel side: an exec of it
 * need not wake this thread (bpf/proc.bpf.c exe_held).  Kept means held
 * open to the end, so its inode stays its own. */
static void tell_held(struct nsk_proc_watch *w, int fd)
{
	struct nsk_exe_id id;
	struct stat st;
	uint32_t one = 1;

	if (w->held_map_fd < 0 || fstat(fd, &st))
		return;
	nsk_exe_id__of(&st, &id);
	/* full: its execs keep waking this thread */
	bpf_map_update_elem(w->held_map_fd, &id, &one, BPF_ANY);
}

/* The file of a mapping, held: a duplicate of the descriptor kept for its
 * identity, else opened through the mapping (and kept, while there is
 * room; a quarter is left free so a look stays short). */
static int hold(struct nsk_proc_watch *w, const struct nsk_mmap_ev *ev)
{
	struct held_file *f = ev->path[0] == '/' ? held_slot(w, ev) : NULL;
	int fd;

	if (f && f->fd) {
		if (__atomic_load_n(&held, __ATOMIC_RELAXED) >= MAX_HELD)
			return -1;
		fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
		if (fd >= 0)
			__atomic_add_fetch(&held, 1, __ATOMIC_RELAXED);
		return fd;
	}
	fd = hold_file(ev);
	if (fd >= 0 && f && w->nfiles < HELD_FILES / 4 * 3) {
		int keep = fcntl(fd, F_DUPFD_CLOEXEC, 1);

		if (keep > 0) {
			*f = (struct held_file){ ev->ino, ev->maj, ev->min, keep };
			w->nfiles++;
			tell_held(w, keep);
		}
	}
	return fd;
}

/* A record taken: its file held while the process may still live. */
static void take(struct nsk_proc_watch *w, struct nsk_proc_item *it)
{
	if (it->kind == NSK_PROC_ITEM_MAP)
		it->map_fd = hold(w, &it->map);
	push(w, it);
}

/* Under the lock: one record of the mmap stream. */
static void on_mapping(void *ctx, const struct nsk_mmap_ev *ev)
{
	struct nsk_proc_watch *w = ctx;
	struct nsk_proc_item *it;

	if (ev->kind != NSK_MMAP_EV_LOST && !nsk_followed__has(&w->followed, ev->pid)) {
		if (w->npending == MAX_PENDING || !(it = item_of(ev)))
			return;
		it->next = w->pending;
		w->pending = it;
		w->npending++;
		return;
	}
	it = item_of(ev);
	if (it)
		take(w, it);
}

/* Under the lock, the ring buffer read again since the stream: the
 * records held back are kept when their process is now known to be
 * followed.  The others are not a target's: a target's child enters the
 * ring buffer at its fork, before it can map anything. */
static void settle_pending(struct nsk_proc_watch *w)
{
	struct nsk_proc_item *it = w->pending, *next;

	w->pending = NULL;
	w->npending = 0;
	for (; it; it = next) {
		next = it->next;
		it->next = NULL;
		if (nsk_followed__has(&w->followed, it->map.pid))
			take(w, it);
		else
			nsk_proc_item__free(it);
	}
}

uint64_t nsk_proc_item__time(const struct nsk_proc_item *it)
{
	if (it->kind != NSK_PROC_ITEM_EVENT)
		return it->map.time;
	return it->ev.hdr.type ? it->ev.time : it->maps_at;
}

/* Stable merge sort of a list by time: the records of one drain come from
 * several buffers (BPF's, one per CPU of the stream). */
static struct nsk_proc_item *sort_by_time(struct nsk_proc_item *list, size_t n)
{
	struct nsk_proc_item *a, *b, **tail, *rest = list, *out;
	size_t half = n / 2;

	if (n < 2)
		return list;
	for (size_t i = 1; i < half; i++)
		rest = rest->next;
	b = rest->next;
	rest->next = NULL;
	a = sort_by_time(list, half);
	b = sort_by_time(b, n - half);
	tail = &out;
	while (a && b) {
		struct nsk_proc_item **pick =
			nsk_proc_item__time(b) < nsk_proc_item__time(a) ? &b : &a;

		*tail = *pick;
		tail = &(*pick)->next;
		*pick = (*pick)->next;
	}
	*tail = a ? a : b;
	return out;
}

/* Under the lock: everything the kernel has written so far.  The ring
 * buffer first (the kernel writes a program's exec and mapping records
 * before the exec event BPF sees), and again after the stream, for the
 * forks of the children whose records the stream held; the processes that
 * ended before the stream was read are then forgotten (their records are
 * all read: written before their exit), the others at the next drain. */
static void drain(struct nsk_proc_watch *w)
{
	size_t ended;

	nsk_ringbuf__consume(w->rb);
	if (!w->mev)
		return;
	ended = nsk_followed__ended(&w->followed);
	nsk_mmap_events__read(w->mev, on_mapping, w);
	nsk_ringbuf__consume(w->rb);
	settle_pending(w);
	nsk_followed__forget(&w->followed, ended);
}

/* Under the lock: the re-snapshots that are due. */
static void resnap(struct nsk_proc_watch *w, uint64_t now)
{
	for (int i = 0; i < w->ndue;) {
		struct nsk_proc_item *it;

		if (w->due[i].at > now) {
			i++;
			continue;
		}
		it = snapshot(w->due[i].pid);
		/* an exited process (a zombie) has empty maps: nothing new */
		if (it && it->maps && *it->maps)
			push(w, it);
		else
			nsk_proc_item__free(it);
		w->due[i] = w->due[--w->ndue];
	}
}

/* How much more this thread weighs than the others: a process gone a
 * millisecond after its exec must be held before it ends, on a machine
 * whose CPUs are all busy (nice -10, the weight of about nine others;
 * never a real-time class, which a bug could turn into a CPU lost). */
#define WATCHER_NICE (-10)

static void *run(void *arg)
{
	struct nsk_proc_watch *w = arg;
	int ep = w->ep;

	/* per thread on Linux; without the privilege it stays as it was */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), WATCHER_NICE)) {
		/* not fatal: only later to hold a short-lived process's files */
	}

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		const uint64_t one = 1;
		struct exec_told execs[MAX_EXECS];
		int look, nexecs, urgent;
		struct epoll_event ev;
		uint64_t now = nsk_session__now(), next = now + 50000000ull;
		int timeout, n;

		pthread_mutex_lock(&w->lock);
		for (int i = 0; i < w->ndue; i++)
			if (w->due[i].at < next)
				next = w->due[i].at;
		pthread_mutex_unlock(&w->lock);
		timeout = next > now ? (int)((next - now) / 1000000) + 1 : 0;
		n = epoll_wait(ep, &ev, 1, timeout);
		pthread_mutex_lock(&w->lock);
		drain(w);
		resnap(w, nsk_session__now());
		look = w->pushed;
		w->pushed = 0;
		nexecs = w->nexecs;
		w->nexecs = 0;
		memcpy(execs, w->execs, sizeof(execs));
		pthread_mutex_unlock(&w->lock);
		urgent = look && __atomic_load_n(&w->prompt, __ATOMIC_ACQUIRE);
		/* the checks without the lock: the main thread may take what
		 * is there meanwhile (and judge it itself) */
		pthread_mutex_lock(&w->check_lock);
		if (nexecs > MAX_EXECS && w->check)
			urgent = 1;
		for (int i = 0; i < nexecs && i < MAX_EXECS && w->check && !urgent; i++)
			urgent = w->check(w->check_ctx, execs[i].pid, execs[i].time,
					  execs[i].flags) > 0;
		pthread_mutex_unlock(&w->check_lock);
		if (urgent && write(w->urgent, &one, sizeof(one)) < 0) {
			/* full: the main thread has not read it yet, and will */
		}
		/* A perf event that hangs up (its CPU gone) stays readable
		 * for ever: drained above, it is taken out of the set, or
		 * this thread would spin until the end of the recording. */
		if (n == 1 && (ev.events & (EPOLLHUP | EPOLLERR)) && ev.data.fd >= 0)
			epoll_ctl(ep, EPOLL_CTL_DEL, ev.data.fd, NULL);
	}
	return NULL;
}

int nsk_proc_watch__start(int ringbuf_map_fd, int held_map_fd, struct nsk_mmap_events *mev,
			  int targets_fd, struct nsk_proc_watch **out)
{
	struct nsk_proc_watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = { .events = EPOLLIN };
	const int *fds;
	size_t nfds;
	int err;

	if (!w) {
		nsk_mmap_events__free(mev);
		return -ENOMEM;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->check_lock, NULL);
	w->mev = mev;
	w->held_map_fd = held_map_fd;
	nsk_followed__init(&w->followed, targets_fd);
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w->urgent = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* maps from /proc: read while the process lives */
	w->prompt = !mev;
	err = nsk_ringbuf__new(ringbuf_map_fd, on_event, w, &w->rb);
	if (!err && (w->ep < 0 || w->wake < 0 || w->urgent < 0))
		err = -errno;
	if (err) {
		nsk_proc_watch__free(w);
		return err;
	}
	/* data.fd names the fd (-1: the ring buffer, never taken out) */
	ev.data.fd = -1;
	epoll_ctl(w->ep, EPOLL_CTL_ADD, nsk_ringbuf__fd(w->rb), &ev);
	/* -2: the wake-up, written once, when the thread is to stop */
	ev.data.fd = -2;
	epoll_ctl(w->ep, EPOLL_CTL_ADD, w->wake, &ev);
	nfds = mev ? nsk_mmap_events__fds(mev, &fds) : 0;
	for (size_t i = 0; i < nfds; i++) {
		ev.data.fd = fds[i];
		epoll_ctl(w->ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	err = -pthread_create(&w->thread, NULL, run, w);
	if (err) {
		nsk_proc_watch__free(w);
		return err;
	}
	w->running = 1;
	*out = w;
	return 0;
}

int nsk_proc_watch__urgent_fd(const struct nsk_proc_watch *w)
{
	return w->urgent;
}

void nsk_proc_watch__set_prompt(struct nsk_proc_watch *w)
{
	__atomic_store_n(&w->prompt, 1, __ATOMIC_RELEASE);
}

void nsk_proc_watch__set_check(struct nsk_proc_watch *w, nsk_session_exec_check_fn fn,
			       void *ctx)
{
	/* waits for a check running with the one before */
	pthread_mutex_lock(&w->check_lock);
	w->check = fn;
	w->check_ctx = ctx;
	pthread_mutex_unlock(&w->check_lock);
}

struct nsk_proc_item *nsk_proc_watch__take(struct nsk_proc_watch *w)
{
	struct nsk_proc_item *list;
	uint64_t v;
	size_t n = 0;

	/* read before the drain: an urgent exec after it wakes the loop again */
	if (read(w->urgent, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was urgent */
	}
	pthread_mutex_lock(&w->lock);
	drain(w);
	list = w->head;
	w->head = w->tail = NULL;
	pthread_mutex_unlock(&w->lock);
	for (struct nsk_proc_item *it = list; it; it = it->next)
		n++;
	return sort_by_time(list, n);
}

void nsk_proc_item__free(struct nsk_proc_item *it)
{
	if (!it)
		return;
	free(it->maps);
	free(it->args);
	free((char *)it->map.path);
	if (it->map_fd >= 0) {
		close(it->map_fd);
		__atomic_sub_fetch(&held, 1, __ATOMIC_RELAXED);
	}
	free(it);
}

void nsk_proc_watch__free(struct nsk_proc_watch *w)
{
	if (!w)
		return;
	if (w->running) {
		const uint64_t one = 1;

		__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
		/* without it the join waits out the thread's epoll timeout,
		 * up to 50 ms of every recording's end */
		if (write(w->wake, &one, sizeof(one)) < 0) {
			/* cannot be full: written once */
		}
		pthread_join(w->thread, NULL);
	}
	while (w->head) {
		struct nsk_proc_item *next = w->head->next;

		nsk_proc_item__free(w->head);
		w->head = next;
	}
	while (w->pending) {
		struct nsk_proc_item *next = w->pending->next;

		nsk_proc_item__free(w->pending);
		w->pending = next;
	}
	for (size_t i = 0; i < HELD_FILES; i++)
		if (w->files[i].fd > 0)
			close(w->files[i].fd);
	nsk_followed__free(&w->followed);
	nsk_ringbuf__free(w->rb);
	nsk_mmap_events__free(w->mev);
	if (w->ep >= 0)
		close(w->ep);
	if (w->wake >= 0)
		close(w->wake);
	if (w->urgent >= 0)
		close(w->urgent);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->check_lock);
	free(w);
}
