/* Feeding a reader's records to the loader, from a file or stdin.  Kept
 * apart from load.c so that code loading records from elsewhere (unit
 * tests) does not need the reader. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nusku/infile.h>
#include <nusku/segdir.h>

#include <sys/stat.h>

#include "report/load_alloc.h"

int nsk_load__stream(struct nsk_load *ld, struct nsk_reader *r)
{
	struct nsk_record rec;
	char msg[512];
	int ret, err;

	while ((ret = nsk_reader__next(r, &rec)) == 1) {
		err = nsk_load__record(ld, &rec);
		if (err)
			return err;
	}
	if (ret < 0) {
		/* Keep what was read; say that the rest could not be. */
		ld->n.read_error = 1;
		snprintf(msg, sizeof(msg), "read error: %s",
			 *nsk_reader__error(r) ? nsk_reader__error(r)
					       : strerror(-ret));
		nsk_load__problem(ld, msg);
	}
	return 0;
}

struct problems {
	struct nsk_load *ld;
	char last[256]; /* for the one-line error when the file is refused */
};

static void on_problem(void *ctx, const char *msg)
{
	struct problems *p = ctx;

	snprintf(p->last, sizeof(p->last), "%s", msg);
	nsk_load__problem(p->ld, msg);
}

int nsk_load__file(sqlite3 *db, const char *file, char *msg, size_t len)
{
	return nsk_load__file_skip(db, file, 0, msg, len);
}

struct select_at {
	const struct nsk_load_select *sel; /* NULL: every event */
	uint64_t start;			   /* the recording's start */
};

static int load_file(sqlite3 *db, const char *file, uint64_t skip,
		     unsigned how, const struct select_at *at, char *msg,
		     size_t len);

int nsk_load__file_skip(sqlite3 *db, const char *file, uint64_t skip, char *msg,
			size_t len)
{
	return load_file(db, file, skip, 0, NULL, msg, len);
}

/* The recording's start (time_start_ns): the earliest time of any record,
 * known only once all were read.  A read without the allocation and
 * off-CPU events (their times counted, as a skipping load does) into a
 * database of its own. */
static int find_start(const char *file, uint64_t *start, char *msg, size_t len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int err;

	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		snprintf(msg, len, "cannot open an in-memory database");
		err = -ENOMEM;
		goto cleanup;
	}
	err = load_file(db, file, NSK_LOAD_SKIPPABLE, 0, NULL, msg, len);
	if (err)
		goto cleanup;
	err = -EIO;
	if (sqlite3_prepare_v2(db, "SELECT value FROM recording WHERE key = "
			       "'time_start_ns'", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		snprintf(msg, len, "%s: %s", file, sqlite3_errmsg(db));
		goto cleanup;
	}
	*start = (uint64_t)sqlite3_column_int64(st, 0);
	err = 0;
cleanup:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return err;
}

int nsk_load__file_alloc(sqlite3 *db, const char *file, uint64_t skip,
			 unsigned how, const struct nsk_load_select *sel,
			 char *msg, size_t len)
{
	struct select_at at = { .sel = sel };
	struct stat sb;
	int err;

	/* a second read needs a file that is there again */
	if (!strcmp(file, "-") || stat(file, &sb) || !S_ISREG(sb.st_mode) ||
	    nsk_segdir__is_dir(file))
		how = 0;
	/* without sums the filter is SQL's (report/filter.c) */
	if (!how || !sel)
		return load_file(db, file, skip, how, NULL, msg, len);
	if (sel->since >= 0 || sel->until >= 0) {
		err = find_start(file, &at.start, msg, len);
		if (err)
			return err;
	}
	return load_file(db, file, skip, how, &at, msg, len);
}

static int load_file(sqlite3 *db, const char *file, uint64_t skip,
		     unsigned how, const struct select_at *at, char *msg,
		     size_t len)
{
	struct nsk_alloc_pass pass = { 0 };
	struct nsk_reader_opts ropts = { .on_problem = on_problem };
	struct problems probs = { 0 };
	struct nsk_reader *r = NULL;
	struct nsk_load *ld = NULL;
	struct nsk_io *io;
	char *dir, *from, *until;
	int fd, err;

	/* a continuous recording: DIR, or DIR@FROM..TO */
	err = strcmp(file, "-") ? nsk_segdir__split(file, &dir, &from, &until) : 1;
	if (err <= 0) {
		if (!err)
			err = nsk_load__segments(db, dir, from, until, skip, msg, len);
		else
			snprintf(msg, len, "%s: out of memory", file);
		free(dir);
		free(from);
		free(until);
		return err;
	}
	if (nsk_segdir__is_dir(file))
		return nsk_load__segments(db, file, NULL, NULL, skip, msg, len);
	fd = strcmp(file, "-") ? nsk_infile__open(file, NSK_INFILE_FIFO_WAIT_MS,
						  NULL, msg, len)
			       : STDIN_FILENO;
	if (fd < 0)
		return fd;
	io = nsk_io__from_fd(fd, fd != STDIN_FILENO);
	if (!io) {
		if (fd != STDIN_FILENO)
			close(fd);
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	err = nsk_load__new(db, &ld);
	if (err) {
		nsk_io__free(io);
		snprintf(msg, len, "database: %s", sqlite3_errmsg(db));
		return err;
	}
	ld->skip = skip & NSK_LOAD_SKIPPABLE;
	if (how & (NSK_LOAD_SUMS | NSK_LOAD_SUMS_TIME))
		ld->alloc_mode = NSK_ALLOC_SUMS;
	if (at && at->sel) {
		err = nsk_load__select(ld, at->sel, at->start);
		if (err) {
			nsk_io__free(io);
			snprintf(msg, len, "out of memory");
			goto cleanup;
		}
	}
	probs.ld = ld;
	ropts.ctx = &probs;
	err = nsk_reader__new(io, &ropts, &r); /* frees io on failure */
	if (err) {
		if (err == -ENOTSUP)
			snprintf(msg, len, "%s: %s: upgrade nusku to read it", file,
				 probs.last[0] ? probs.last
					       : "written by a newer nusku");
		else if (probs.last[0])
			snprintf(msg, len, "%s: %s", file, probs.last);
		else if (err == -EPROTO)
			snprintf(msg, len, "%s: not a .nsk recording", file);
		else
			snprintf(msg, len, "%s: %s", file, strerror(-err));
		goto cleanup;
	}
	err = nsk_load__stream(ld, r);
	err = err ?: nsk_load__finish(ld, strcmp(file, "-") ? file : "(stdin)",
				      nsk_reader__info(r), nsk_reader__stats(r));
	if (err) {
		snprintf(msg, len, "%s: %s", file, nsk_load__error(ld));
		goto cleanup;
	}
	if ((how & NSK_LOAD_SUMS_TIME) && ld->alloc) {
		pass.log = nsk_load_alloc__take_log(ld, &pass.nlog);
		pass.selbits = nsk_load_alloc__take_selbits(ld, &pass.nselbits);
		pass.filtered = !!ld->sel;
		pass.events = ld->alloc->events;
		pass.t0 = ld->n.time_min == UINT64_MAX ? 0 : ld->n.time_min;
		pass.t1 = ld->n.time_min == UINT64_MAX ? 0 : ld->n.time_max;
		nsk_reader__free(r);
		r = NULL;
		nsk_load__free(ld);
		ld = NULL;
		if (msg && len)
			*msg = 0;
		err = nsk_load_alloc__time_pass(db, file, &pass, msg, len);
	}
cleanup:
	nsk_reader__free(r);
	nsk_load__free(ld);
	return err;
}
