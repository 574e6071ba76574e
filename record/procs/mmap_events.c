/* Mapping and exec records from perf's side-band stream (mmap_events.h).
 *
 * One event and one ring buffer per CPU, for every task of the machine.
 * Records that wrap the end of the buffer are copied out whole before they
 * are parsed.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/procs/mmap_events.h"

/* The records of the whole machine, where a build execs hundreds of
 * programs a second: 512 KiB per CPU, perf record's own default. */
#define DATA_PAGES 128

struct cpu_buf {
	int fd; /* -1: an offline CPU */
	struct perf_event_mmap_page *meta;
	size_t data_size;
};

struct nsk_mmap_events {
	int *fds; /* the poll set: the events of the CPUs online */
	size_t nfds;
	struct cpu_buf *cpus;
	size_t ncpus;
	size_t page;
	uint8_t rec[65536]; /* one record, unwrapped */
};

static int possible_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (int)n : 1;
}

static int open_one(int cpu)
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
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	/* no wakeups of its own: side-band records wake a reader only at the
	 * buffer's watermark (half of it); the watcher is woken by the
	 * targets' exec events (bpf/proc.bpf.c) and reads these after them */
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

void nsk_mmap_events__free(struct nsk_mmap_events *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->ncpus; i++) {
		if (e->cpus[i].meta)
			munmap(e->cpus[i].meta, e->page + e->cpus[i].data_size);
		if (e->cpus[i].fd >= 0)
			close(e->cpus[i].fd);
	}
	free(e->fds);
	free(e->cpus);
	free(e);
}

int nsk_mmap_events__open(struct nsk_mmap_events **out)
{
	struct nsk_mmap_events *e = calloc(1, sizeof(*e));
	int ncpu = possible_cpus(), err = 0;

	if (!e)
		return -ENOMEM;
	e->page = (size_t)sysconf(_SC_PAGESIZE);
	e->ncpus = (size_t)ncpu;
	e->cpus = calloc(e->ncpus, sizeof(*e->cpus));
	e->fds = calloc(e->ncpus, sizeof(*e->fds));
	if (!e->cpus || !e->fds) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t c = 0; c < e->ncpus; c++)
		e->cpus[c].fd = -1;
	for (int c = 0; c < ncpu; c++) {
		struct cpu_buf *cb = &e->cpus[c];
		void *p;

		cb->fd = open_one(c);
		if (cb->fd < 0) {
			if (errno == ENODEV) /* an offline CPU: not an error */
				continue;
			err = -errno;
			goto fail;
		}
		cb->data_size = DATA_PAGES * e->page;
		p = mmap(NULL, e->page + cb->data_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 cb->fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			goto fail;
		}
		cb->meta = p;
		e->fds[e->nfds++] = cb->fd;
	}
	if (!e->nfds) {
		err = -ENODEV;
		goto fail;
	}
	*out = e;
	return 0;
fail:
	nsk_mmap_events__free(e);
	return err;
}

size_t nsk_mmap_events__fds(const struct nsk_mmap_events *e, const int **fds)
{
	*fds = e->fds;
	return e->nfds;
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
