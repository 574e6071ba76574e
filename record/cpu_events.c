/* The cpu signal's perf events: per CPU or per target thread
 * (cpu_events.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/cpu_events.h"
#include "record/pidset.h"

/* The links only: destroying a perf event's link closes its event (libbpf's
 * bpf_link_perf_detach), so its fd is not ours to close again. */
struct nsk_cpu_events {
	int n, cap;
	int per_cpu;
	struct bpf_link **links;
};

/* A process of many threads takes two descriptors a thread (the event and
 * its link): the soft limit goes up to the hard one, as perf's does.  Only
 * the recorder's: a launched program was forked before (record/procs/
 * target.c) and keeps the limit it was given. */
static int more_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return -EMFILE;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

/* Opens one event (pid -1: every task of cpu; cpu -1: pid wherever it
 * runs) with prog attached. */
static int add(struct nsk_cpu_events *ev, const struct perf_event_attr *attr,
	       pid_t pid, int cpu, struct bpf_program *prog)
{
	int fd;

	if (ev->n == ev->cap) {
		int cap = ev->cap ? ev->cap * 2 : 8;
		struct bpf_link **links = realloc(ev->links, cap * sizeof(*links));

		if (!links)
			return -ENOMEM;
		ev->links = links;
		ev->cap = cap;
	}
	fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EMFILE && !more_files())
		fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1,
				  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ev->links[ev->n] = bpf_program__attach_perf_event(prog, fd);
	if (!ev->links[ev->n] && errno == EMFILE && !more_files())
		ev->links[ev->n] = bpf_program__attach_perf_event(prog, fd);
	if (!ev->links[ev->n]) {
		int err = -errno;

		close(fd);
		return err;
	}
	ev->n++;
	return 0;
}

/* Online CPUs from sysfs ("0-3,5"); possible CPUs when it is unreadable. */
static void online_cpus(int ncpu, char *online)
{
	char buf[1024], *p = buf;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		memset(online, 1, ncpu);
		return;
	}
	fclose(f);
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break;
		p = end;
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (long i = a; i <= b && i < ncpu; i++)
			if (i >= 0)
				online[i] = 1;
		if (*p == ',')
			p++;
	}
}

static int open_cpus(struct nsk_cpu_events *ev, const struct perf_event_attr *attr,
		     struct bpf_program *prog)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	char *online;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	online = calloc(ncpu, 1);
	if (!online)
		return -ENOMEM;
	online_cpus(ncpu, online);
	for (int i = 0; i < ncpu && !err; i++) {
		if (!online[i])
			continue;
		err = add(ev, attr, -1, i, prog);
		if (err == -ENODEV)
			err = 0; /* went offline */
	}
	free(online);
	if (!err && !ev->n)
		err = -ENODEV;
	return err;
}

/* One pass over /proc/pid/task: an event on each thread not in done.
 * *added counts the new ones.  A thread that ended meanwhile is skipped. */
static int open_threads_once(struct nsk_cpu_events *ev,
			     const struct perf_event_attr *attr, pid_t pid,
			     struct bpf_program *prog, struct nsk_pidset *done,
			     int *added)
{
	char path[64];
	struct dirent *de;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid || tid > INT32_MAX || nsk_pidset__has(done, tid))
			continue;
		err = add(ev, attr, (pid_t)tid, -1, prog);
		if (err == -ESRCH) {
			err = 0; /* ended */
			continue;
		}
		if (!err)
			err = nsk_pidset__add(done, tid);
		if (!err)
			(*added)++;
	}
	closedir(d);
	return err;
}

/* The threads of a running process.  A thread started after its parent
 * thread's event was open inherits the event; one started before that and
 * after the listing is found by the next pass. */
static int open_threads(struct nsk_cpu_events *ev, const struct perf_event_attr *attr,
			pid_t pid, struct bpf_program *prog)
{
	struct nsk_pidset done = { 0 };
	int err = 0, added = 1;

	for (int pass = 0; !err && added && pass < 64; pass++) {
		added = 0;
		err = open_threads_once(ev, attr, pid, prog, &done, &added);
	}
	nsk_pidset__free(&done);
	if (!err && !ev->n)
		err = -ESRCH;
	return err;
}

static void undo(struct nsk_cpu_events *ev)
{
	for (int i = 0; i < ev->n; i++)
		bpf_link__destroy(ev->links[i]);
	ev->n = 0;
}

int nsk_cpu_events__open(const struct nsk_cpu_where *where,
			 const struct perf_event_attr *attr,
			 struct bpf_program *prog, struct nsk_cpu_events **out)
{
	struct nsk_cpu_events *ev = calloc(1, sizeof(*ev));
	struct perf_event_attr a = *attr;
	int err;

	*out = NULL;
	if (!ev)
		return -ENOMEM;
	if (where->all) {
		err = open_cpus(ev, &a, prog);
	} else {
		a.inherit = 1;
		err = where->launched ? add(ev, &a, where->pid, -1, prog)
				      : open_threads(ev, &a, where->pid, prog);
		if (err == -EMFILE) {
			/* more threads than descriptors: per CPU after all,
			 * the target filter in BPF keeps the samples right */
			undo(ev);
			a.inherit = 0;
			ev->per_cpu = 1;
			err = open_cpus(ev, &a, prog);
		}
	}
	ev->per_cpu |= where->all;
	if (!err) {
		*out = ev;
		ev = NULL;
	}
	nsk_cpu_events__close(ev);
	return err;
}

int nsk_cpu_events__per_cpu(const struct nsk_cpu_events *ev)
{
	return ev->per_cpu;
}

void nsk_cpu_events__close(struct nsk_cpu_events *ev)
{
	if (!ev)
		return;
	undo(ev);
	free(ev->links);
	free(ev);
}
