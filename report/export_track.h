/* One track of a Trace Event Format export (export_chrome.c): the events
 * of one (pid, tid), each rendered to JSON text as it is made, written out
 * sorted by start time, the outer slice of a nest before the inner one
 * (depth), so that a reader that takes slices in file order when their
 * starts are equal (Perfetto's sorter is stable) nests them as they were
 * made.  Slices are closed leaf first, so the order they are made in is
 * not the order they must be written in. */
#ifndef NUSKU_REPORT_EXPORT_TRACK_H
#define NUSKU_REPORT_EXPORT_TRACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct nsk_track_ev {
	int64_t ts;
	uint32_t depth;
	size_t off, len; /* in the track's text */
};

struct nsk_track {
	struct nsk_track_ev *ev;
	size_t n, cap;
	FILE *text; /* open_memstream of buf */
	char *buf;
	size_t size;
	struct nsk_track_ev *cur; /* between __begin and __end */
};

/* Starts an event at ts, depth: returns the stream to write its JSON
 * object into (NULL: out of memory), to be ended by __end. */
FILE *nsk_track__begin(struct nsk_track *t, int64_t ts, uint32_t depth);
/* 0 or -ENOMEM. */
int nsk_track__end(struct nsk_track *t);
/* Writes the events sorted to f, each after ",\n" (*first: no comma
 * before the very first of the file; cleared), and empties the track.
 * 0 or -ENOMEM. */
int nsk_track__flush(struct nsk_track *t, FILE *f, int *first);
void nsk_track__release(struct nsk_track *t);

/* Time on a binary grid: ns as a count of 1/1024 us, to the nearest
 * (saturated).  The grid is finer than 1 ns, so distinct ns stay distinct
 * and in order, and a reader that parses ts and dur as doubles
 * holds them exactly (below 2^53 ticks: 101 days from the start), so the
 * ts + dur it computes for a slice is the ts of the one that starts where
 * it ends.  Three decimals of ns are not doubles (0.380 has none), and
 * speedscope's ts + dur came out past the next slice's start, which it
 * then took for a child and mis-nested. */
int64_t nsk_track__ticks(int64_t ns);
/* ticks as microseconds, an exact decimal of at least 3 places
 * ("12.3798828125", "-1.500", "7.000"). */
void nsk_track__us(FILE *f, int64_t ticks);

#endif
