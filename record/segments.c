/* A continuous recording's directory of segments (segments.h): making the
 * files safely, rotating them, and retention. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <nusku/segdir.h>

#include "record/segment_defs.h"
#include "record/segments.h"

/* Nearly full: less free space than this, or than 1% of the disk. */
#define DISK_LOW_BYTES (64ull << 20)

struct nsk_segments {
	struct nsk_segments_opts o;
	int dirfd;
	struct nsk_defs *defs;
	struct nsk_writer *w;
	uint64_t id[2];		/* one recording id for every segment */
	uint64_t start_mono, start_real;
	char name[NSK_SEG_NAME_MAX];	 /* the current one's -open name */
	char tmp[NSK_SEG_NAME_MAX + 1];	 /* its hidden name until committed */
	int committed;
	int made_dir, rotated;
	uint64_t records, lost; /* in the current segment */
	uint64_t bytes_done;	/* of the segments closed */
};

static uint64_t realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int put(void *ctx, const struct nsk_record *rec)
{
	struct nsk_segments *sg = ctx;
	int err = nsk_writer__append(sg->w, rec);

	if (err)
		return err;
	sg->records++;
	if (rec->type == NSK_REC_LOSS)
		sg->lost += rec->loss.count;
	return 0;
}

/* The directory: made 0700, or one that is the caller's and that nobody
 * else can write (a file there could be swapped under us otherwise). */
static int open_dir(struct nsk_segments *sg, char *err, size_t errlen)
{
	const char *dir = sg->o.dir;
	int made = !mkdir(dir, 0700);
	struct stat sb;

	if (!made && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
		return -errno;
	}
	sg->dirfd = nsk_segdir__open(dir, err, errlen);
	if (sg->dirfd < 0)
		return sg->dirfd;
	if (fstat(sg->dirfd, &sb)) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (sb.st_uid != geteuid() || (sb.st_mode & 022)) {
		snprintf(err, errlen, "%s: not a directory of yours that only you "
			 "can write (owner %u, mode %03o)", dir, (unsigned)sb.st_uid,
			 (unsigned)(sb.st_mode & 0777));
		return -EPERM;
	}
	sg->made_dir = made;
	if (made && fchmod(sg->dirfd, 0700)) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	return 0;
}

/* A new segment file, under its hidden name, and its writer. */
static int begin(struct nsk_segments *sg, uint64_t mono, char *err,
		 size_t errlen)
{
	struct nsk_writer_opts wo = { .recording_id = { sg->id[0], sg->id[1] } };
	struct nsk_io *io;
	int fd, ret;

	sg->start_mono = mono;
	sg->start_real = realtime_now();
	sg->records = sg->lost = 0;
	sg->committed = 0;
	nsk_seg__name(sg->name, sizeof(sg->name), sg->start_real, 0);
	snprintf(sg->tmp, sizeof(sg->tmp), ".%s", sg->name);
	fd = openat(sg->dirfd, sg->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s/%s: %s", sg->o.dir,
			 sg->tmp, strerror(errno));
		return ret;
	}
	io = nsk_io__from_fd(fd, 1);
	if (!io) {
		unlinkat(sg->dirfd, sg->tmp, 0);
		close(fd);
		return -ENOMEM;
	}
	ret = nsk_writer__new(io, &wo, &sg->w);
	if (ret) {
		unlinkat(sg->dirfd, sg->tmp, 0);
		snprintf(err, errlen, "cannot write %s/%s: %s", sg->o.dir, sg->tmp,
			 strerror(-ret));
	}
	return ret;
}

int nsk_segments__commit(struct nsk_segments *sg, char *err, size_t errlen)
{
	int ret = nsk_writer__flush(sg->w);

	if (!ret && renameat(sg->dirfd, sg->tmp, sg->dirfd, sg->name))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "writing %s/%s: %s", sg->o.dir, sg->name,
			 strerror(-ret));
		return ret;
	}
	sg->committed = 1;
	return 0;
}

static int disk_low(int dirfd)
{
	struct statvfs v;
	uint64_t avail, total;

	if (fstatvfs(dirfd, &v))
		return 0;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	total = (uint64_t)v.f_blocks * v.f_frsize;
	return avail < DISK_LOW_BYTES || avail < total / 100;
}

/* Deletes the oldest segments past --keep (time: a segment that began
 * more than KEEP before now; size: all of them past KEEP bytes) and while
 * the disk is nearly full.  The newest segment and the one being
 * written stay. */
static void prune(struct nsk_segments *sg, const char *current)
{
	uint64_t now = realtime_now(), total = 0;
	struct nsk_seg *v = NULL;
	size_t n = 0;

	if (nsk_segdir__list(sg->dirfd, &v, &n) || !n)
		goto cleanup;
	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	for (size_t i = 0; i + 1 < n; i++) {
		int old = sg->o.keep_ns && now > v[i].start_ns &&
			  now - v[i].start_ns > sg->o.keep_ns;
		int big = sg->o.keep_bytes && total > sg->o.keep_bytes;

		if (current && !strcmp(v[i].name, current))
			continue;
		if (!old && !big && !disk_low(sg->dirfd))
			break;
		if (!unlinkat(sg->dirfd, v[i].name, 0))
			total -= v[i].bytes;
	}
cleanup:
	free(v);
}

int nsk_segments__open(const struct nsk_segments_opts *o,
		       struct nsk_segments **out, char *err, size_t errlen)
{
	struct nsk_segments *sg = calloc(1, sizeof(*sg));
	int ret;

	if (!sg)
		return -ENOMEM;
	sg->o = *o;
	sg->dirfd = -1;
	ret = open_dir(sg, err, errlen);
	if (ret)
		goto fail;
	ret = nsk_defs__new(&sg->defs);
	if (ret)
		goto fail;
	if (getrandom(sg->id, sizeof(sg->id), GRND_NONBLOCK) != sizeof(sg->id)) {
		sg->id[0] = realtime_now();
		sg->id[1] = (uint64_t)getpid() << 32 ^ mono_now();
	}
	prune(sg, NULL);
	ret = begin(sg, mono_now(), err, errlen);
	if (ret)
		goto fail;
	*out = sg;
	return 0;
fail:
	nsk_segments__free(sg);
	return ret;
}

struct nsk_writer *nsk_segments__writer(const struct nsk_segments *sg)
{
	return sg->w;
}

int nsk_segments__append(struct nsk_segments *sg, const struct nsk_record *rec)
{
	struct nsk_record end;

	if (rec->type == NSK_REC_END) {
		end = *rec;
		end.end.records = sg->records;
		end.end.lost = sg->lost;
		rec = &end;
	}
	return nsk_defs__write(sg->defs, rec, put, sg);
}

int nsk_segments__due(const struct nsk_segments *sg, uint64_t now)
{
	return now - sg->start_mono >= sg->o.segment_ns;
}

/* Writes END, closes the writer and gives the segment its final name. */
static int end(struct nsk_segments *sg, uint64_t now, int write_end, char *err,
	       size_t errlen)
{
	struct nsk_record rec = { .type = NSK_REC_END };
	char final[NSK_SEG_NAME_MAX];
	int ret = 0;

	if (write_end) {
		rec.end.time = now;
		rec.end.records = sg->records;
		rec.end.lost = sg->lost;
		ret = nsk_writer__append(sg->w, &rec);
	}
	sg->bytes_done += nsk_writer__bytes(sg->w);
	ret = nsk_writer__close(sg->w) ?: ret;
	sg->w = NULL;
	nsk_seg__name(final, sizeof(final), sg->start_real, realtime_now());
	if (!ret && sg->committed &&
	    renameat(sg->dirfd, sg->name, sg->dirfd, final))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "writing %s/%s: %s", sg->o.dir, sg->name,
			 strerror(-ret));
		return ret;
	}
	prune(sg, NULL);
	return 0;
}

int nsk_segments__rotate(struct nsk_segments *sg, uint64_t now, char *err,
			 size_t errlen)
{
	struct nsk_record clock = { .type = NSK_REC_CLOCK };
	int ret = end(sg, now, 1, err, errlen);

	sg->rotated = 1;
	ret = ret ?: begin(sg, mono_now(), err, errlen);
	if (ret)
		return ret;
	clock.clock.monotonic_ns = sg->start_mono;
	clock.clock.realtime_ns = sg->start_real;
	ret = put(sg, &clock);
	ret = ret ?: nsk_defs__new_segment(sg->defs, sg->start_mono, put, sg);
	if (ret) {
		snprintf(err, errlen, "writing %s/%s: %s", sg->o.dir, sg->tmp,
			 strerror(-ret));
		return ret;
	}
	return nsk_segments__commit(sg, err, errlen);
}

int nsk_segments__close(struct nsk_segments *sg, char *err, size_t errlen)
{
	return end(sg, 0, 0, err, errlen);
}

uint64_t nsk_segments__bytes(const struct nsk_segments *sg)
{
	return sg->bytes_done + (sg->w ? nsk_writer__bytes(sg->w) : 0);
}

void nsk_segments__discard(struct nsk_segments *sg)
{
	if (!sg || sg->rotated || !sg->w)
		return;
	unlinkat(sg->dirfd, sg->committed ? sg->name : sg->tmp, 0);
	sg->committed = 1; /* nothing left for free to remove */
	if (sg->made_dir)
		rmdir(sg->o.dir); /* only when empty */
}

void nsk_segments__free(struct nsk_segments *sg)
{
	if (!sg)
		return;
	if (sg->w) {
		nsk_writer__free(sg->w);
		if (!sg->committed)
			unlinkat(sg->dirfd, sg->tmp, 0);
	}
	nsk_defs__free(sg->defs);
	if (sg->dirfd >= 0)
		close(sg->dirfd);
	free(sg);
}
