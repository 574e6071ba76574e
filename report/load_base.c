/* The helpers every part of the loader shares (load.h): the statement
 * cache, the limits on what a file may define, string ids, thread names
 * and problems.  They call nothing of the loader's own: the driver
 * (load.c) and the record handlers sit above them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/limits.h"
#include "report/load.h"

static void set_error(struct nsk_load *ld, const char *what)
{
	snprintf(ld->err, sizeof(ld->err), "%s: %s", what,
		 sqlite3_errmsg(ld->db));
}

int nsk_load__sql_error(struct nsk_load *ld)
{
	set_error(ld, "database");
	return -EIO;
}

sqlite3_stmt *nsk_load__stmt(struct nsk_load *ld, const char *sql)
{
	sqlite3_stmt *st = NULL;

	for (unsigned i = 0; i < ld->nstmts; i++)
		if (ld->stmts[i].sql == sql)
			return ld->stmts[i].st;
	if (ld->nstmts == sizeof(ld->stmts) / sizeof(ld->stmts[0])) {
		snprintf(ld->err, sizeof(ld->err), "statement cache full");
		return NULL;
	}
	if (sqlite3_prepare_v3(ld->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st,
			       NULL) != SQLITE_OK) {
		set_error(ld, "prepare");
		return NULL;
	}
	ld->stmts[ld->nstmts].sql = sql;
	ld->stmts[ld->nstmts++].st = st;
	return st;
}

int nsk_load__step(struct nsk_load *ld, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		set_error(ld, "insert");
		return -EIO;
	}
	return 0;
}

size_t nsk_load__cut(struct nsk_load *ld, const char *kind, size_t len,
		     size_t limit)
{
	uint64_t *n = !strcmp(kind, "name") ? &ld->n.long_names
		    : !strcmp(kind, "stack") ? &ld->n.long_stacks
					     : &ld->n.long_paths;
	char msg[200];

	if (len <= limit)
		return len;
	/* One warning per kind: a hostile file may hold millions. */
	if (!(*n)++) {
		if (!strcmp(kind, "path"))
			snprintf(msg, sizeof(msg), "a call path is past the limit "
				 "of %zu bytes: it ends in \"...\" (and so does "
				 "any other)", limit);
		else
			snprintf(msg, sizeof(msg), "a %s of %zu %s is past the "
				 "limit of %zu: kept its %s %zu (and so for any "
				 "other)", kind, len, strcmp(kind, "stack") ?
				 "bytes" : "frames", limit, strcmp(kind, "stack")
				 ? "first" : "leaf-most", limit);
		nsk_load__problem(ld, msg);
	}
	return limit;
}

int nsk_load__charge(struct nsk_load *ld, int def, size_t bytes)
{
	ld->n.defs += (uint64_t)def;
	ld->n.text_bytes += bytes;
	if (ld->n.defs > NSK_LIMIT_DEFS) {
		snprintf(ld->err, sizeof(ld->err), "more than %u definitions "
			 "(strings, frames, stacks, ...): past nusku's limit",
			 NSK_LIMIT_DEFS);
		return -E2BIG;
	}
	if (ld->n.text_bytes > NSK_LIMIT_TEXT_BYTES) {
		snprintf(ld->err, sizeof(ld->err), "more than %llu MiB of names "
			 "and text: past nusku's limit",
			 NSK_LIMIT_TEXT_BYTES >> 20);
		return -E2BIG;
	}
	return 0;
}

int nsk_load__bind_bytes(struct nsk_load *ld, sqlite3_stmt *st, int col,
			 struct nsk_bytes b)
{
	size_t len = b.data ? strnlen((const char *)b.data, b.len) : 0;

	len = nsk_load__cut(ld, "name", len, NSK_LIMIT_NAME_BYTES);
	if (!len)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_text(st, col, (const char *)b.data, (int)len,
				  SQLITE_TRANSIENT);
	return nsk_load__charge(ld, 0, len);
}

const char *nsk_load__string(struct nsk_load *ld, uint64_t id, char *buf,
			     size_t len)
{
	uint64_t sid;

	if (!id)
		return NULL;
	if (nsk_idmap__get(&ld->strings, id, &sid))
		return nsk_strtab__get(&ld->strtab, (uint32_t)sid);
	ld->n.unknown_strings++;
	snprintf(buf, len, "[unknown string %" PRIu64 "]", id);
	return buf;
}

static const char SQL_COMM[] = "INSERT INTO comm VALUES (?, ?)";

int nsk_load__set_comm(struct nsk_load *ld, uint32_t pid, uint32_t tid,
		       struct nsk_bytes name)
{
	size_t before = ld->comms.n;
	uint32_t id;
	sqlite3_stmt *st;
	int err;

	if (!name.data || !name.len)
		return 0;
	id = nsk_strtab__intern(&ld->comms, (const char *)name.data,
				name.len < NSK_LIMIT_NAME_BYTES ? name.len
								: NSK_LIMIT_NAME_BYTES);
	if (!id)
		return -ENOMEM;
	if (ld->comms.n != before) {
		err = nsk_load__charge(ld, 1, strlen(nsk_strtab__get(&ld->comms, id)));
		if (err)
			return err;
		st = nsk_load__stmt(ld, SQL_COMM);
		if (!st)
			return -EIO;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, nsk_strtab__get(&ld->comms, id), -1,
				  SQLITE_STATIC);
		err = nsk_load__step(ld, st);
		if (err)
			return err;
	}
	if (!tid)
		return nsk_idmap__set(&ld->pid_comm, pid, id) ?:
		       nsk_idmap__set(&ld->tid_comm, pid, id);
	return nsk_idmap__set(&ld->tid_comm, tid, id);
}

int64_t nsk_load__comm(struct nsk_load *ld, uint32_t pid, uint32_t tid)
{
	uint64_t id;

	if (nsk_idmap__get(&ld->tid_comm, tid, &id) ||
	    nsk_idmap__get(&ld->pid_comm, pid, &id))
		return (int64_t)id;
	return 0;
}

static const char SQL_PROBLEM[] = "INSERT INTO problem (message) VALUES (?)";

void nsk_load__problem(struct nsk_load *ld, const char *msg)
{
	sqlite3_stmt *st = nsk_load__stmt(ld, SQL_PROBLEM);

	ld->n.problems++;
	if (!st)
		return;
	sqlite3_bind_text(st, 1, msg, -1, SQLITE_TRANSIENT);
	/* A problem that cannot be stored is still counted. */
	(void)nsk_load__step(ld, st);
}

