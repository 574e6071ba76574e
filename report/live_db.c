/* The live database: the report loader, fed a budget of records at a time
 * so that the screen stays responsive while a stream pours in.
 *
 * Records go to the loader exactly as `nusku report` loads them; this file
 * only decides how many per turn, and keeps the few numbers the status line
 * shows (records, losses, time span, how the stream ended) as they pass. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "report/live.h"
#include "report/live_db.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int nsk_live_db__new(struct nsk_live_db **out)
{
	struct nsk_live_db *db = calloc(1, sizeof(*db));
	int err;

	if (!db)
		return -ENOMEM;
	err = nsk_live_db__open_loader(db);
	if (err < 0) {
		nsk_live_db__free(db);
		return err;
	}
	nsk_live_db__keep(db, 0);
	*out = db;
	return 0;
}

void nsk_live_db__on_problem(void *ctx, const char *msg)
{
	struct nsk_live_db *db = ctx;

	snprintf(db->message, sizeof(db->message), "%s", msg);
	nsk_live_db__loader_problem(db, msg);
}

/* The numbers the status line shows, taken as records pass. */
static void note(struct nsk_live_db *db, const struct nsk_record *rec)
{
	uint64_t t = 0;

	db->records++;
	switch (rec->type) {
	case NSK_REC_SAMPLE: t = rec->sample.time; break;
	case NSK_REC_ALLOC: t = rec->alloc.time; break;
	case NSK_REC_FREE: t = rec->free.time; break;
	case NSK_REC_OFFCPU: t = rec->offcpu.time + rec->offcpu.duration; break;
	case NSK_REC_SYSCALL_STAT: t = rec->syscall_stat.time; break;
	case NSK_REC_SYSCALL_SLOW:
		t = rec->syscall_slow.time + rec->syscall_slow.duration;
		break;
	case NSK_REC_RETRANSMIT: t = rec->retransmit.time; break;
	case NSK_REC_PROCESS: t = rec->process.time; break;
	case NSK_REC_LOSS:
		db->lost += rec->loss.count;
		t = rec->loss.time_end;
		break;
	case NSK_REC_END:
		db->clean_end = 1;
		t = rec->end.time;
		break;
	default:
		break;
	}
	if (t) {
		if (!db->first_time || t < db->first_time)
			db->first_time = t;
		if (t > db->last_time)
			db->last_time = t;
	}
}

int nsk_live_db__pump(struct nsk_live_db *db, struct nsk_reader *r,
		      uint64_t budget_ns)
{
	uint64_t start = now_ns();
	struct nsk_record rec;
	unsigned n = 0;
	int err, res;

	if (db->ended)
		return -EPIPE;
	err = nsk_live_db__loader_begin(db);
	if (err < 0)
		return err;
	for (;;) {
		res = nsk_reader__next(r, &rec);
		if (res == 1) {
			note(db, &rec);
			err = nsk_live_db__loader_add(db, &rec);
			if (err < 0) {
				/* past a limit (report/limits.h): the view stops
				 * where the file became too big to hold */
				db->failed = 1;
				snprintf(db->message, sizeof(db->message), "%s",
					 nsk_live_db__loader_error(db));
				res = err;
				break;
			}
			if (++n % 256 == 0 && now_ns() - start > budget_ns) {
				res = 1;
				break;
			}
			continue;
		}
		if (res == -EAGAIN) {
			/* After END nothing more matters (an index chunk). */
			res = db->clean_end ? -EPIPE : 0;
		} else if (res == 0) {
			res = -EPIPE;
		} else {
			snprintf(db->message, sizeof(db->message), "%s",
				 *nsk_reader__error(r) ? nsk_reader__error(r)
						       : strerror(-res));
		}
		break;
	}
	db->stats = *nsk_reader__stats(r);
	if (res == -EPIPE && db->clean_end && db->follow_segments) {
		err = nsk_live_db__loader_commit(db, 0);
		return err < 0 ? err : -ENODATA;
	}
	if (res == -EPIPE || (res < 0 && res != -EAGAIN))
		db->ended = 1;
	err = nsk_live_db__loader_commit(db, db->ended);
	if (err >= 0 && !db->failed && n)
		err = nsk_live_agg__prune(db, db->keep_ns); /* (idle turns: nothing new) */
	if (err < 0 && res >= 0)
		res = err;
	return res;
}

int nsk_live_db__has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT 1 FROM sqlite_master WHERE type IN "
			       "('table','view') AND name = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

void nsk_live_db__keep(struct nsk_live_db *db, uint64_t window_ns)
{
	db->keep_ns = window_ns + 1000000000ull;
}

/* Lost events by source, largest first, from the loader's loss table. */
static void losses(struct nsk_live_db *db, char *buf, size_t len)
{
	sqlite3_stmt *st;
	size_t n = 0;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(db->sql, "SELECT source, sum(count) AS c FROM loss "
			       "GROUP BY source ORDER BY c DESC", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW && n + 1 < len) {
		const unsigned char *src = sqlite3_column_text(st, 0);
		int w = snprintf(buf + n, len - n, "%s%s %lld", n ? ", " : "",
				 src ? (const char *)src : "?",
				 sqlite3_column_int64(st, 1));

		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
	sqlite3_finalize(st);
}

void nsk_live_db__status(struct nsk_live_db *db, struct nsk_live_status *st)
{
	st->records = db->records;
	st->lost = db->lost;
	st->dropped = db->stats.truncated_bytes;
	st->corrupt = db->stats.corrupt_chunks;
	st->span_s = db->last_time > db->first_time
		? (db->last_time - db->first_time) / 1e9 : 0;
	st->ended = db->ended;
	st->clean_end = db->clean_end;
	if (db->message[0])
		snprintf(st->message, sizeof(st->message), "%s", db->message);
	if (db->lost)
		losses(db, st->losses, sizeof(st->losses));
}

const char *nsk_live_db__failed(const struct nsk_live_db *db)
{
	return db->failed ? db->message : NULL;
}

int nsk_live_db__follow_segments(struct nsk_live_db *db)
{
	db->follow_segments = 1;
	return nsk_live_db__loader_new_run(db); /* the first run */
}

int nsk_live_db__next_segment(struct nsk_live_db *db, int new_run)
{
	db->clean_end = 0;
	return new_run ? nsk_live_db__loader_new_run(db) : 0;
}

int nsk_live_db__end(struct nsk_live_db *db)
{
	db->ended = 1;
	return nsk_live_db__loader_commit(db, 1);
}

int nsk_live_db__ended(const struct nsk_live_db *db)
{
	return db->ended;
}

uint64_t nsk_live_db__now(struct nsk_live_db *db)
{
	return db->last_time;
}

void nsk_live_db__free(struct nsk_live_db *db)
{
	if (!db)
		return;
	nsk_live_db__close_loader(db);
	free(db);
}
