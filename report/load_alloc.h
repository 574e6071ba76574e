/* Inside the allocation loader: the matching of frees to allocations
 * (load_alloc.c) and the three things it can feed.
 *
 *   rows   a row per allocation in alloc and per free in free (--sql,
 *          --db, filters, export, diff: every row there to select from)
 *   sums   one row per (stack, pid, tid, comm, fn) in alloc_sum with the
 *          counts and bytes the memory views show (load_alloc_sum.c): a
 *          report of millions of allocations without a row for each
 *   time   a second read of the file with each stack's site known: peak
 *          live bytes per site (alloc_peak) and what went in and out per
 *          site in each interval of --by memory-time (alloc_bucket)
 *          (load_alloc_time.c)
 *
 * The three see the same blocks end the same way: the second read gets
 * the first one's exits replayed at the same places in the stream
 * (struct nsk_alloc_exit), never from its own reading of the clock. */
#ifndef NUSKU_REPORT_LOAD_ALLOC_H
#define NUSKU_REPORT_LOAD_ALLOC_H

#include "report/alloc_owned.h"
#include "report/alloc_regions.h"
#include "report/load.h"

enum nsk_alloc_mode { NSK_ALLOC_ROWS, NSK_ALLOC_SUMS, NSK_ALLOC_TIME };

/* A live block or region, and what the sinks need of its allocation. */
struct nsk_alloc_slot {
	uint64_t addr;
	int64_t id;	 /* alloc row */
	uint64_t time;	 /* when allocated */
	uint64_t weight; /* bytes it stands for */
	uint64_t asize;	 /* the allocation's size (regions: their bytes) */
	uint32_t pid;
	uint32_t key;	 /* sums: index of its alloc_sum row; time: its site */
	uint16_t fn;	 /* enum nsk_alloc_fn */
	uint8_t used;	 /* 1 used */
	uint8_t sel;	 /* 1: in the load's filter (summed), 0: matched only */
	uint32_t pass;	 /* the owned lists' last compaction that saw it */
};

/* An exit the first read applied: before its event number pos (the
 * allocation and free records before it), pid's blocks allocated up to
 * time left with it. */
struct nsk_alloc_exit {
	uint64_t pos, time;
	uint32_t pid;
};

struct nsk_alloc_sums;
struct nsk_alloc_time;

struct pending_exit {
	uint64_t time;
	uint32_t pid;
};

struct nsk_load_alloc {
	enum nsk_alloc_mode mode;
	struct nsk_alloc_slot *slots; /* open addressing, linear probing */
	size_t cap, n;
	int64_t next_id;
	struct nsk_regions regions; /* live mmap/brk regions and reservations */
	struct pending_exit *exits; /* not applied yet, in stream order */
	size_t nexits, capexits;
	struct nsk_idmap pending;   /* pid -> exits of it in exits[] */
	struct nsk_owned owned;	    /* pid -> the addresses of its blocks */
	uint64_t events;	    /* allocation and free records so far */
	/* sums: the exits applied, for the second read; time: those to
	 * replay, the next at xnext */
	struct nsk_alloc_exit *xlog;
	size_t nxlog, capxlog, xnext;
	uint64_t rows_alloc, rows_free; /* what rows would have been */
	uint64_t sel_alloc, sel_free;	/* of them, those in the filter */
	/* Under a filter (ld->sel), a bit per allocation record, by its
	 * place among the allocation and free records (events): selected.
	 * The first read sets them, the second takes them over, so that both
	 * sum the same blocks (the second read knows no thread names). */
	uint8_t *selbits;
	size_t nselbits; /* bytes */
	int filtered;	 /* the second read: selbits say */
	struct nsk_alloc_sums *sums;
	struct nsk_alloc_time *tm;
};

/* The fn column's name of an enum nsk_alloc_fn. */
const char *nsk_load_alloc__fn_name(uint32_t fn);
/* Allocations one record stands for: weight / size (1 for size 0), as
 * view_alloc.c's COUNT_OF. */
static inline double nsk_alloc__count_of(uint64_t weight, uint64_t size)
{
	return size > 0 ? (double)(int64_t)weight * 1.0 / (double)(int64_t)size : 1;
}

/* sums (load_alloc_sum.c).  alloc: a new allocation (v->key set to its
 * row; failed calls too).  end: a block's end (fexit: its process
 * took it).  flush: the blocks still live, then the rows and counts into
 * alloc_sum and recording. */
int nsk_alloc_sums__alloc(struct nsk_load *ld, struct nsk_alloc_slot *v,
			  const struct nsk_rec_alloc *r);
void nsk_alloc_sums__end(struct nsk_load *ld, const struct nsk_alloc_slot *s,
			 int fexit);
int nsk_alloc_sums__flush(struct nsk_load *ld);
void nsk_alloc_sums__free(struct nsk_alloc_sums *s);

/* time (load_alloc_time.c): the same for the second read. */
int nsk_alloc_time__alloc(struct nsk_load *ld, struct nsk_alloc_slot *v,
			  const struct nsk_rec_alloc *r);
int nsk_alloc_time__end(struct nsk_load *ld, const struct nsk_alloc_slot *s,
			uint64_t time, int fexit);

void nsk_alloc_time__free(struct nsk_alloc_time *t);

/* What the second read needs of the first: its exits (taken over), how
 * many allocation and free records it saw, its span. */
struct nsk_alloc_pass {
	struct nsk_alloc_exit *log;
	size_t nlog;
	uint8_t *selbits; /* the first read's, taken over; NULL: no filter */
	size_t nselbits;
	int filtered;
	uint64_t events, t0, t1;
};
/* The second read of file into alloc_peak and alloc_bucket; builds
 * temp.asite first.  0 or a negative errno with a message in msg. */
int nsk_load_alloc__time_pass(sqlite3 *db, const char *file,
			      const struct nsk_alloc_pass *p, char *msg, size_t len);

/* The engine for the second read (load_alloc.c): exits replayed from
 * the first read's log, taken over (freed with the state). */
int nsk_load_alloc__replay(struct nsk_load *ld, struct nsk_alloc_exit *log,
			   size_t n);
/* Applies the logged exits due before the next event (or all: at_end). */
int nsk_load_alloc__replay_due(struct nsk_load *ld, int at_end);
/* Takes the first read's selection bits (NULL, 0: no filter). */
uint8_t *nsk_load_alloc__take_selbits(struct nsk_load *ld, size_t *n);
/* Takes the first read's exit log out of its state. */
struct nsk_alloc_exit *nsk_load_alloc__take_log(struct nsk_load *ld, size_t *n);

#endif
