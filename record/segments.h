/* The output of a continuous recording (nusku record --continuous DIR):
 * a directory of segments, one .nsk file per --segment interval, named by
 * their time range (include/nusku/segdir.h), each readable alone
 * (segment_defs.h), the oldest deleted past --keep or when the disk is
 * nearly full.
 *
 * The directory is made 0700 (an existing one must be the caller's and
 * writable by nobody else) and every file in it is made there with
 * O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600, under a hidden name until its
 * first chunk is written, then renamed to its -open name; a closed
 * segment (END written) is renamed to its final name.  A recorder killed
 * leaves every closed segment whole and the open one readable up to its
 * last complete chunk.  Only names of segments are ever deleted.
 */
#ifndef NUSKU_RECORD_SEGMENTS_H
#define NUSKU_RECORD_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include <nusku/format.h>

struct nsk_segments;

struct nsk_segments_opts {
	const char *dir;
	uint64_t segment_ns; /* a new segment this often */
	uint64_t keep_ns;    /* delete segments older than this (0: no limit) */
	uint64_t keep_bytes; /* ... and the oldest past this many bytes */
};

/* Makes or checks the directory and creates the first segment (not yet
 * under its name: nsk_segments__commit).  0 or a negative errno with a
 * one-line message in err. */
int nsk_segments__open(const struct nsk_segments_opts *o,
		       struct nsk_segments **out, char *err, size_t errlen);

/* The current segment's writer (changes at each rotation). */
struct nsk_writer *nsk_segments__writer(const struct nsk_segments *sg);

/* Appends rec to the current segment, with the definitions it needs; an
 * END gets the segment's own counts. */
int nsk_segments__append(struct nsk_segments *sg, const struct nsk_record *rec);

/* Flushes the first segment's header chunk and gives it its name. */
int nsk_segments__commit(struct nsk_segments *sg, char *err, size_t errlen);

/* Whether the current segment has lasted its interval at now
 * (CLOCK_MONOTONIC ns). */
int nsk_segments__due(const struct nsk_segments *sg, uint64_t now);

/* Ends the current segment at now (END, close, final name), deletes what
 * retention says, and begins the next (CLOCK, the definitions every
 * segment starts with). */
int nsk_segments__rotate(struct nsk_segments *sg, uint64_t now, char *err,
			 size_t errlen);

/* The recording ends (its END appended): closes the segment, names it
 * and applies retention. */
int nsk_segments__close(struct nsk_segments *sg, char *err, size_t errlen);

/* Bytes written to every segment so far; the current segment's index
 * (from 0). */
uint64_t nsk_segments__bytes(const struct nsk_segments *sg);

/* Nothing was recorded (the recording failed to start): the first
 * segment is removed, and the directory if this made it and it is empty
 * now.  NULL is fine. */
void nsk_segments__discard(struct nsk_segments *sg);

/* Frees; a segment never committed is removed.  NULL is fine. */
void nsk_segments__free(struct nsk_segments *sg);

#endif
