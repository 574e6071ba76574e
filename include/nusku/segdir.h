/* A continuous recording's directory: one .nsk segment per interval.
 *
 * `nusku record --continuous DIR` writes a segment file per --segment
 * interval; report, diff, live and info read a time range of them as one
 * recording.  Each segment is a whole .nsk file (its own header, its own
 * definitions, END when closed); what this header knows is only the
 * names: a segment's name carries its wall-clock time range (UTC, ms), so
 * a reader selects segments without opening them, and the names sort by
 * time:
 *
 *     nusku-20261201T214900.123Z-20261201T215000.125Z.nsk   closed
 *     nusku-20261201T215000.125Z-open.nsk                   being written
 *
 * An open segment left by a recorder that was killed keeps its -open
 * name; its end is taken from the file's modification time (the writer
 * flushes a chunk at least every 250 ms).
 */
#ifndef NUSKU_SEGDIR_H
#define NUSKU_SEGDIR_H

#include <stddef.h>
#include <stdint.h>

#define NSK_SEG_NAME_MAX 64

struct nsk_seg {
	char name[NSK_SEG_NAME_MAX];
	uint64_t start_ns, end_ns; /* CLOCK_REALTIME ns */
	uint64_t bytes;
	int open;		   /* named -open: being written (or crashed) */
};

/* The name of a segment that started at start_ns (realtime), closed at
 * end_ns, or open when end_ns is 0.  -ENAMETOOLONG when len is short. */
int nsk_seg__name(char *buf, size_t len, uint64_t start_ns, uint64_t end_ns);

/* 0 and *seg's name, times and open flag set when name is a segment's
 * name; -EINVAL otherwise. */
int nsk_seg__parse(const char *name, struct nsk_seg *seg);

/* The segments in the directory dirfd, sorted by start (oldest first),
 * with their sizes; an open one ends at its modification time.  *out is
 * malloc'd (NULL when there are none).  0 or a negative errno. */
int nsk_segdir__list(int dirfd, struct nsk_seg **out, size_t *n);

/* A time for a range over a directory, into *out (realtime ns): a
 * duration back from newest_end_ns ("10m", "-10m", "90s", "1.5h", "600":
 * seconds), "now" (the wall clock), or an absolute UTC time
 * "2026-12-01T21:49:00Z" ("Z" optional, fractions of a second allowed).
 * -EINVAL otherwise. */
int nsk_seg__parse_time(const char *spec, uint64_t newest_end_ns,
			uint64_t *out);

/* Opens path as a segment directory: O_DIRECTORY, following no symbolic
 * link at the last component.  The fd, or a negative errno with a
 * one-line message in err (-ENOTDIR not a directory). */
int nsk_segdir__open(const char *path, char *err, size_t errlen);

/* The segments of path that overlap the range [from, until] (each a spec
 * as nsk_seg__parse_time takes, or NULL: open-ended), oldest first, with
 * the directory's fd in *dirfd.  Errors (one line in err): not a
 * directory, no segment in it, no segment in the range, a bad time. */
int nsk_segdir__select(const char *path, const char *from, const char *until,
		       int *dirfd, struct nsk_seg **out, size_t *n, char *err,
		       size_t errlen);

/* Splits "DIR@FROM..TO" (either end may be empty; "DIR@FROM" is
 * "DIR@FROM..") into *dir (malloc'd), *from and *until (malloc'd or
 * NULL).  0 when spec names a range; 1 when it has no '@' range part or
 * the whole spec names an existing file (then nothing is set); -EINVAL
 * on a range without "..", -ENOMEM. */
int nsk_segdir__split(const char *spec, char **dir, char **from,
		      char **until);

/* Whether path is a directory (following links: a reader's path). */
int nsk_segdir__is_dir(const char *path);

#endif
