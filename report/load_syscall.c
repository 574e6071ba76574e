/* Loader handlers of the syscall signal: NSK_REC_SYSCALL_STAT becomes a
 * syscall_stat row with its histogram buckets (syscall_hist, non-zero
 * buckets only) and errnos (syscall_errno); NSK_REC_SYSCALL_PATH a
 * syscall_path row (and so does the code path of a stat record from
 * before format 1.1, so views read paths from one table);
 * NSK_REC_SYSCALL_SLOW a syscall_slow row with the file or socket it
 * worked on; NSK_REC_SYSCALL_NAME a row of the recorded kernel's names,
 * which replace the build's. */
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

static int insert_path(struct nsk_load *ld, uint64_t time, uint64_t window_ns,
		       uint32_t pid, uint32_t tid, uint32_t nr,
		       uint64_t stack_id, uint64_t count, uint64_t total_ns)
{
	static const char sql[] =
		"INSERT INTO syscall_path (time, pid, tid, comm_id, nr, "
		"stack_id, window_ns, count, total_ns) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, (int64_t)time);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, tid);
	bind_comm(ld, st, 4, pid, tid);
	sqlite3_bind_int64(st, 5, nr);
	sqlite3_bind_int64(st, 6, (int64_t)stack_id);
	sqlite3_bind_int64(st, 7, (int64_t)window_ns);
	sqlite3_bind_int64(st, 8, (int64_t)count);
	sqlite3_bind_int64(st, 9, (int64_t)total_ns);
	return nsk_load__step(ld, st);
}

int nsk_load_syscall__path(struct nsk_load *ld, const struct nsk_record *rec)
{
	const struct nsk_rec_syscall_path *p = &rec->syscall_path;
	int err = nsk_load__stack_ref(ld, p->stack_id);

	if (err)
		return err;
	nsk_load__time(ld, p->time);
	return insert_path(ld, p->time, p->window_ns, p->pid, p->tid, p->nr,
			   p->stack_id, p->calls, p->total_ns);
}

int nsk_load_syscall__name(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] = "INSERT OR REPLACE INTO syscall_name "
				  "(nr, name, kernel) VALUES (?, ?, 1)";
	const struct nsk_rec_syscall_name *n = &rec->syscall_name;
	sqlite3_stmt *st;

	/* The first of the kernel's names: the build's table goes. */
	if (!ld->kernel_syscall_names) {
		if (sqlite3_exec(ld->db, "DELETE FROM syscall_name", NULL, NULL,
				 NULL) != SQLITE_OK) {
			snprintf(ld->err, sizeof(ld->err), "syscall names: %s",
				 sqlite3_errmsg(ld->db));
			return -EIO;
		}
		ld->kernel_syscall_names = 1;
	}
	st = nsk_load__stmt(ld, sql);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, n->nr);
	sqlite3_bind_text(st, 2, (const char *)n->name.data, (int)n->name.len,
			  SQLITE_TRANSIENT);
	return nsk_load__step(ld, st);
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
	if (s->stack_id) { /* before format 1.1: the calls' code path */
		err = nsk_load__stack_ref(ld, s->stack_id);
		if (err)
			return err;
		err = insert_path(ld, s->time, s->window_ns, s->pid, s->tid,
				  s->nr, s->stack_id, s->count, s->total_ns);
		if (err)
			return err;
		st = nsk_load__stmt(ld, sql_stat);
		if (!st)
			return -EIO;
	}
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
