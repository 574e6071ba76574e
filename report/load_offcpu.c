/* Loader handler of the offcpu signal: one offcpu row per NSK_REC_OFFCPU.
 * The reason is stored by name and the detail string resolved, so views
 * and --sql users never need the file's ids. */
#include <errno.h>

#include "report/load.h"

int nsk_load_offcpu__interval(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] =
		"INSERT INTO offcpu VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
		"?, ?, ?)";
	const struct nsk_rec_offcpu *o = &rec->offcpu;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	const char *detail;
	char buf[64];
	int64_t comm;
	int err;

	if (!st)
		return -EIO;
	err = nsk_load__stack_ref(ld, o->stack_id);
	if (!err && o->waker_stack_id)
		err = nsk_load__stack_ref(ld, o->waker_stack_id);
	if (err)
		return err;
	nsk_load__time(ld, o->time);
	nsk_load__time(ld, o->time + o->duration);
	comm = nsk_load__comm(ld, o->pid, o->tid);
	detail = nsk_load__string(ld, o->detail_id, buf, sizeof(buf));
	sqlite3_bind_int64(st, 1, (int64_t)o->time);
	sqlite3_bind_int64(st, 2, o->pid);
	sqlite3_bind_int64(st, 3, o->tid);
	if (comm)
		sqlite3_bind_int64(st, 4, comm);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_int64(st, 5, (int64_t)o->duration);
	sqlite3_bind_int64(st, 6, o->state);
	sqlite3_bind_text(st, 7, nsk_offcpu_reason__name(o->reason), -1,
			  SQLITE_STATIC);
	if (detail)
		sqlite3_bind_text(st, 8, detail, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 8);
	sqlite3_bind_int64(st, 9, o->syscall);
	sqlite3_bind_int64(st, 10, (int64_t)o->wait_addr);
	sqlite3_bind_int64(st, 11, (int64_t)o->stack_id);
	sqlite3_bind_int64(st, 12, o->waker_pid);
	sqlite3_bind_int64(st, 13, o->waker_tid);
	sqlite3_bind_int64(st, 15, (int64_t)o->waker_stack_id);
	return nsk_load__bind_bytes(ld, st, 14, o->waker_comm) ?:
	       nsk_load__step(ld, st);
}
