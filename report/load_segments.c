/* Loading a time range of a continuous recording's segments as one
 * recording (include/nusku/segdir.h): each segment that overlaps the
 * range, oldest first, through one loader.  The segments of one run share
 * their ids (the recorder's), so a definition written again in a later
 * segment is the same one; a segment of another run (the recorder started
 * again into the same directory: another recording id) begins a run of its
 * own ids (report/load_runs.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nusku/segdir.h>

#include "report/load.h"

struct seg_problems {
	struct nsk_load *ld;
	const char *name;
};

static void on_problem(void *ctx, const char *msg)
{
	struct seg_problems *p = ctx;
	char line[512];

	snprintf(line, sizeof(line), "%s: %s", p->name, msg);
	nsk_load__problem(p->ld, line);
}

static void add_stats(struct nsk_reader_stats *sum,
		      const struct nsk_reader_stats *s, int first)
{
	sum->chunks += s->chunks;
	sum->records += s->records;
	sum->skipped_records += s->skipped_records;
	sum->skipped_chunks += s->skipped_chunks;
	sum->corrupt_chunks += s->corrupt_chunks;
	sum->seq_gaps += s->seq_gaps;
	sum->truncated_bytes += s->truncated_bytes;
	sum->bytes += s->bytes;
	/* ended: the newest segment's END (older ones always have one
	 * unless their recorder was killed) */
	sum->ended = first ? s->ended : s->ended && sum->ended;
}

/* One segment into ld; *info is the first segment's. */
static int load_one(struct nsk_load *ld, int dirfd, const struct nsk_seg *seg,
		    const char *dir, size_t index, struct nsk_file_info *info,
		    uint64_t run_id[2], struct nsk_reader_stats *sum, char *msg,
		    size_t len)
{
	struct seg_problems probs = { ld, seg->name };
	struct nsk_reader_opts ropts = { .on_problem = on_problem, .ctx = &probs };
	const struct nsk_file_info *fi;
	struct nsk_reader *r = NULL;
	struct nsk_io *io;
	int fd, err;

	fd = openat(dirfd, seg->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(msg, len, "%s/%s: %s", dir, seg->name, strerror(errno));
		return err;
	}
	/* regular files only (nsk_segdir__list): no FIFO can block the read */
	fcntl(fd, F_SETFL, 0);
	io = nsk_io__from_fd(fd, 1);
	if (!io) {
		close(fd);
		return -ENOMEM;
	}
	err = nsk_reader__new(io, &ropts, &r);
	if (err) {
		/* an open segment not yet flushed, or garbage named like one */
		snprintf(msg, len, "%s/%s: %s", dir, seg->name, err == -EPROTO ?
			 "not a .nsk recording" : strerror(-err));
		return err;
	}
	fi = nsk_reader__info(r);
	if (!index)
		*info = *fi;
	if (!index || memcmp(fi->recording_id, run_id, sizeof(fi->recording_id))) {
		/* the recorder (re)started here: a run of its own ids */
		memcpy(run_id, fi->recording_id, sizeof(fi->recording_id));
		err = nsk_load__new_run(ld);
		if (err) {
			snprintf(msg, len, "%s/%s: %s", dir, seg->name,
				 err == -ENOMEM ? strerror(ENOMEM) : nsk_load__error(ld));
			nsk_reader__free(r);
			return err;
		}
	}
	err = nsk_load__stream(ld, r);
	add_stats(sum, nsk_reader__stats(r), !index);
	if (err)
		snprintf(msg, len, "%s/%s: %s", dir, seg->name, nsk_load__error(ld));
	nsk_reader__free(r);
	return err;
}

int nsk_load__segments(sqlite3 *db, const char *dir, const char *from,
		       const char *until, uint64_t skip, char *msg, size_t len)
{
	struct nsk_reader_stats sum = { 0 };
	struct nsk_file_info info = { 0 };
	uint64_t run_id[2] = { 0, 0 };
	struct nsk_load *ld = NULL;
	struct nsk_seg *segs = NULL;
	size_t n = 0;
	int dirfd = -1, err;

	err = nsk_segdir__select(dir, from, until, &dirfd, &segs, &n, msg, len);
	if (err)
		return err;
	err = nsk_load__new(db, &ld);
	if (err) {
		snprintf(msg, len, "database: %s", sqlite3_errmsg(db));
		goto cleanup;
	}
	ld->skip = skip & NSK_LOAD_SKIPPABLE;
	for (size_t i = 0; i < n && !err; i++)
		err = load_one(ld, dirfd, &segs[i], dir, i, &info, run_id, &sum,
			       msg, len);
	if (err)
		goto cleanup;
	err = nsk_load__finish(ld, dir, &info, &sum);
	if (err)
		snprintf(msg, len, "%s: %s", dir, nsk_load__error(ld));
cleanup:
	nsk_load__free(ld);
	free(segs);
	close(dirfd);
	return err;
}
