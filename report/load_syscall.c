/* Loader handlers of the syscall signal: NSK_REC_SYSCALL_STAT becomes a
 * syscall_stat row with its histogram buckets (syscall_hist, non-zero
 * buckets only) and errnos (syscall_errno); NSK_REC_SYSCALL_SLOW becomes a
 * syscall_slow row with the file or socket it worked on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/load.h"

/* Kernel-internal codes of a call interrupted by a signal and restarted. */
static const char *restart_name(uint64_t e)
{
	switch (e) {
	case 512: return "ERESTARTSYS";
	case 513: return "ERESTARTNOINTR";
	case 514: return "ERESTARTNOHAND";
	case 515: return "ENOIOCTLCMD";
	case 516: return "ERESTART_RESTARTBLOCK";
	default: return NULL;
	}
}

static const char *errno_name(uint64_t e, char *buf, size_t len)
{
	const char *n = restart_name(e);

	if (!n && e < 4096)
		n = strerrorname_np((int)e);
	if (!n) {
		snprintf(buf, len, "E%llu", (unsigned long long)e);
		n = buf;
	}
	return n;
}

static int bind_comm(struct nsk_load *ld, sqlite3_stmt *st, int col,
		     uint32_t pid, uint32_t tid)
{
	int64_t comm = nsk_load__comm(ld, pid, tid);

	if (comm)
		return sqlite3_bind_int64(st, col, comm);
	return sqlite3_bind_null(st, col);
}

int nsk_load_syscall__stat(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql_stat[] =
		"INSERT INTO syscall_stat (time, pid, tid, comm_id, nr, "
		"stack_id, window_ns, count, errors, total_ns, max_ns) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	static const char sql_hist[] =
		"INSERT INTO syscall_hist VALUES (?, ?, ?)";
	static const char sql_errno[] =
		"INSERT INTO syscall_errno VALUES (?, ?, ?, ?)";
	const struct nsk_rec_syscall_stat *s = &rec->syscall_stat;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql_stat);
	int64_t id;
	char buf[32];
	uint32_t i;
	int err;

	if (!st)
		return -EIO;
	err = nsk_load__stack_ref(ld, s->stack_id);
	if (err)
		return err;
	nsk_load__time(ld, s->time);
	sqlite3_bind_int64(st, 1, (int64_t)s->time);
	sqlite3_bind_int64(st, 2, s->pid);
	sqlite3_bind_int64(st, 3, s->tid);
	bind_comm(ld, st, 4, s->pid, s->tid);
	sqlite3_bind_int64(st, 5, s->nr);
	sqlite3_bind_int64(st, 6, (int64_t)s->stack_id);
	sqlite3_bind_int64(st, 7, (int64_t)s->window_ns);
	sqlite3_bind_int64(st, 8, (int64_t)s->count);
	sqlite3_bind_int64(st, 9, (int64_t)s->errors);
	sqlite3_bind_int64(st, 10, (int64_t)s->total_ns);
	sqlite3_bind_int64(st, 11, (int64_t)s->max_ns);
	err = nsk_load__step(ld, st);
	if (err)
		return err;
	id = sqlite3_last_insert_rowid(ld->db);
	for (i = 0; i < s->hist.n && i < 64; i++) {
		if (!s->hist.v[i])
			continue;
		st = nsk_load__stmt(ld, sql_hist);
		if (!st)
			return -EIO;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, i);
		sqlite3_bind_int64(st, 3, (int64_t)s->hist.v[i]);
		err = nsk_load__step(ld, st);
		if (err)
			return err;
	}
	for (i = 0; i + 1 < s->errnos.n; i += 2) {
		st = nsk_load__stmt(ld, sql_errno);
		if (!st)
			return -EIO;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (int64_t)s->errnos.v[i]);
		sqlite3_bind_text(st, 3,
				  errno_name(s->errnos.v[i], buf, sizeof(buf)),
				  -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, (int64_t)s->errnos.v[i + 1]);
		err = nsk_load__step(ld, st);
		if (err)
			return err;
	}
	return 0;
}

int nsk_load_syscall__slow(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] =
		"INSERT INTO syscall_slow (time, pid, tid, comm_id, nr, "
		"duration, ret, errno, arg0, arg1, arg2, arg3, arg4, arg5, "
		"target, stack_id) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	const struct nsk_rec_syscall_slow *s = &rec->syscall_slow;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	char buf[256];
	const char *target;
	uint32_t i;
	int err;

	if (!st)
		return -EIO;
	err = nsk_load__stack_ref(ld, s->stack_id);
	if (err)
		return err;
	nsk_load__time(ld, s->time);
	nsk_load__time(ld, s->time + s->duration);
	sqlite3_bind_int64(st, 1, (int64_t)s->time);
	sqlite3_bind_int64(st, 2, s->pid);
	sqlite3_bind_int64(st, 3, s->tid);
	bind_comm(ld, st, 4, s->pid, s->tid);
	sqlite3_bind_int64(st, 5, s->nr);
	sqlite3_bind_int64(st, 6, (int64_t)s->duration);
	sqlite3_bind_int64(st, 7, s->ret);
	if (s->ret < 0 && s->ret >= -4095)
		sqlite3_bind_text(st, 8,
				  errno_name((uint64_t)-s->ret, buf, sizeof(buf)),
				  -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 8);
	for (i = 0; i < 6; i++) {
		if (i < s->args.n)
			sqlite3_bind_int64(st, 9 + i, (int64_t)s->args.v[i]);
		else
			sqlite3_bind_null(st, 9 + i);
	}
	target = nsk_load__string(ld, s->target_id, buf, sizeof(buf));
	if (target)
		sqlite3_bind_text(st, 15, target, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 15);
	sqlite3_bind_int64(st, 16, (int64_t)s->stack_id);
	return nsk_load__step(ld, st);
}
