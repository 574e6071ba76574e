/* Mapping and exec records from perf's side-band stream (mmap_events.h).
 *
 * One ring buffer per CPU: the first event opened on a CPU owns it and the
 * other threads' events on that CPU write into it (PERF_EVENT_IOC_SET_OUTPUT
 * allows sharing a per-CPU buffer between tasks).  Records that wrap the
 * end of the buffer are copied out whole before they are parsed.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/procs/mmap_events.h"

#define DATA_PAGES 32 /* 128 KiB per CPU: thousands of exec-time mappings */
/* Watching every task (record -a, or a process of many threads): the
 * records of the whole machine, where a build execs hundreds of programs
 * a second; 512 KiB per CPU, perf record's own default */
#define DATA_PAGES_EVERYONE 128
#define MAX_THREADS 1024 /* beyond this, watch the machine and filter */

struct cpu_buf {
	int fd; /* the event owning the buffer */
	struct perf_event_mmap_page *meta;
	size_t data_size;
};

struct nsk_mmap_events {
	int *fds; /* every event: the poll set is the buffer owners */
	size_t nfds;
	int *owners;
	struct cpu_buf *cpus;
	size_t ncpus;
	size_t page;
	int everyone;
	uint8_t rec[65536]; /* one record, unwrapped */
};

static int possible_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (int)n : 1;
}

static int open_one(pid_t pid, int cpu, int inherit)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.mmap = 1; /* executable mappings only (mmap_data stays 0) */
	a.mmap2 = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.inherit = pid != -1 && inherit;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.wakeup_events = 1; /* a short-lived process is read while it lives */
	return (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

void nsk_mmap_events__free(struct nsk_mmap_events *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->ncpus; i++)
		if (e->cpus[i].meta)
			munmap(e->cpus[i].meta, e->page + e->cpus[i].data_size);
	for (size_t i = 0; i < e->nfds; i++)
		close(e->fds[i]);
	free(e->fds);
	free(e->owners);
	free(e->cpus);
	free(e);
}

int nsk_mmap_events__open(const pid_t *pids, size_t n, int inherit,
			  struct nsk_mmap_events **out)
{
	static const pid_t everyone = -1;
	struct nsk_mmap_events *e = calloc(1, sizeof(*e));
	int ncpu = possible_cpus(), err = 0;

	if (n > MAX_THREADS)
		n = 0;
	if (!n) {
		pids = &everyone;
		n = 1;
	}
	if (!e)
		return -ENOMEM;
	e->everyone = pids == &everyone;
	e->page = (size_t)sysconf(_SC_PAGESIZE);
	e->ncpus = (size_t)ncpu;
	e->cpus = calloc(e->ncpus, sizeof(*e->cpus));
	e->fds = calloc(n * e->ncpus, sizeof(*e->fds));
	e->owners = calloc(e->ncpus, sizeof(*e->owners));
	if (!e->cpus || !e->fds || !e->owners) {
		err = -ENOMEM;
		goto fail;
	}
	for (int c = 0; c < ncpu; c++) {
		struct cpu_buf *cb = &e->cpus[c];

		cb->fd = -1;
		for (size_t i = 0; i < n; i++) {
			int fd = open_one(pids[i], c, inherit);

			if (fd < 0) {
				/* an offline CPU, or a thread that has
				 * exited meanwhile: not an error */
				if (errno == ENODEV || errno == ESRCH)
					continue;
				err = -errno;
				goto fail;
			}
			e->fds[e->nfds++] = fd;
			if (cb->fd < 0) {
				void *p;

				cb->data_size = (e->everyone ? DATA_PAGES_EVERYONE
							     : DATA_PAGES) * e->page;
				p = mmap(NULL, e->page + cb->data_size, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, 0);
				if (p == MAP_FAILED) {
					err = -errno;
					goto fail;
				}
				cb->meta = p;
				cb->fd = fd;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, cb->fd)) {
				err = -errno;
				goto fail;
			}
		}
	}
	{
		size_t k = 0;

		for (size_t c = 0; c < e->ncpus; c++)
			if (e->cpus[c].fd >= 0)
				e->owners[k++] = e->cpus[c].fd;
		if (!k) {
			err = -ESRCH;
			goto fail;
		}
	}
	*out = e;
	return 0;
fail:
	nsk_mmap_events__free(e);
	return err;
}

int nsk_mmap_events__everyone(const struct nsk_mmap_events *e)
{
	return e->everyone;
}

size_t nsk_mmap_events__fds(const struct nsk_mmap_events *e, const int **fds)
{
	size_t k = 0;

	for (size_t c = 0; c < e->ncpus; c++)
		k += e->cpus[c].fd >= 0;
	*fds = e->owners;
	return k;
}

/* The sample_id at the end of every record: pid, tid, time. */
static void sample_id(const uint8_t *rec, size_t size, struct nsk_mmap_ev *ev)
{
	const uint8_t *id = rec + size - 16;

	memcpy(&ev->pid, id, 4);
	memcpy(&ev->tid, id + 4, 4);
	memcpy(&ev->time, id + 8, 8);
}

/* A string field between from and the sample_id, NUL-terminated inside
 * the record (the kernel pads with zeros); NULL if it is not. */
static const char *field_str(const uint8_t *rec, size_t size, size_t from)
{
	if (size < from + 16 || !memchr(rec + from, 0, size - 16 - from))
		return NULL;
	return (const char *)rec + from;
}

static int parse(const uint8_t *rec, size_t size, struct nsk_mmap_ev *ev)
{
	const struct perf_event_header *h = (const void *)rec;

	memset(ev, 0, sizeof(*ev));
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		/* header, pid tid, addr len pgoff, maj min ino ino_gen,
		 * prot flags, filename, sample_id */
		if (size < 8 + 8 + 24 + 24 + 8 + 16)
			return 0;
		ev->path = field_str(rec, size, 72);
		if (!ev->path)
			return 0;
		ev->kind = NSK_MMAP_EV_MAP;
		memcpy(&ev->start, rec + 16, 8);
		memcpy(&ev->len, rec + 24, 8);
		memcpy(&ev->pgoff, rec + 32, 8);
		memcpy(&ev->maj, rec + 40, 4);
		memcpy(&ev->min, rec + 44, 4);
		memcpy(&ev->ino, rec + 48, 8);
		memcpy(&ev->prot, rec + 64, 4);
		memcpy(&ev->flags, rec + 68, 4);
		break;
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		ev->kind = NSK_MMAP_EV_EXEC;
		if (size < 8 + 8 + 16)
			return 0;
		break;
	case PERF_RECORD_LOST:
		if (size < 8 + 16 + 16)
			return 0;
		ev->kind = NSK_MMAP_EV_LOST;
		memcpy(&ev->lost, rec + 16, 8);
		break;
	default:
		return 0;
	}
	sample_id(rec, size, ev);
	return 1;
}

static int read_cpu(struct nsk_mmap_events *e, struct cpu_buf *cb,
		    void (*fn)(void *ctx, const struct nsk_mmap_ev *ev), void *ctx)
{
	const uint8_t *data = (const uint8_t *)cb->meta + e->page;
	uint64_t head = __atomic_load_n(&cb->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = cb->meta->data_tail;
	int nread = 0;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail % cb->data_size), first;
		struct nsk_mmap_ev ev;

		first = cb->data_size - off;
		if (first >= sizeof(h)) {
			memcpy(&h, data + off, sizeof(h));
		} else {
			memcpy(&h, data + off, first);
			memcpy((uint8_t *)&h + first, data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			break; /* cannot be: stop rather than misread */
		if (first >= h.size) {
			memcpy(e->rec, data + off, h.size);
		} else {
			memcpy(e->rec, data + off, first);
			memcpy(e->rec + first, data, h.size - first);
		}
		if (parse(e->rec, h.size, &ev))
			fn(ctx, &ev);
		tail += h.size;
		nread++;
	}
	__atomic_store_n(&cb->meta->data_tail, tail, __ATOMIC_RELEASE);
	return nread;
}

int nsk_mmap_events__read(struct nsk_mmap_events *e,
			  void (*fn)(void *ctx, const struct nsk_mmap_ev *ev),
			  void *ctx)
{
	int n = 0;

	for (size_t c = 0; c < e->ncpus; c++)
		if (e->cpus[c].meta)
			n += read_cpu(e, &e->cpus[c], fn, ctx);
	return n;
}
