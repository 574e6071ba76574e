/* Loader handlers of the CPU signal: one sample row per NSK_REC_SAMPLE.
 * This is the hot path of a load (a million samples is a normal
 * recording): one cached statement, no allocation. */
#include <errno.h>

#include "report/load.h"

int nsk_load_cpu__sample(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] =
		"INSERT INTO sample VALUES (?, ?, ?, ?, ?, ?, ?)";
	const struct nsk_rec_sample *s = &rec->sample;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	int64_t comm;
	int err;

	if (!st)
		return -EIO;
	err = nsk_load__stack_ref(ld, s->stack_id);
	if (err)
		return err;
	nsk_load__time(ld, s->time);
	comm = nsk_load__comm(ld, s->pid, s->tid);
	sqlite3_bind_int64(st, 1, (int64_t)s->time);
	sqlite3_bind_int64(st, 2, s->pid);
	sqlite3_bind_int64(st, 3, s->tid);
	sqlite3_bind_int64(st, 4, s->cpu);
	sqlite3_bind_int64(st, 5, (int64_t)s->stack_id);
	sqlite3_bind_int64(st, 6, (int64_t)s->weight);
	if (comm)
		sqlite3_bind_int64(st, 7, comm);
	else
		sqlite3_bind_null(st, 7);
	return nsk_load__step(ld, st);
}
