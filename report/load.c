/* The loader's driver: the record loop, the transaction and the final
 * bookkeeping (the recording table).  It calls the handlers (load_core.c,
 * load_stack.c and one file per signal, through load_table.c); they and it
 * share the helpers of load_base.c, below both, so no file of the loader
 * calls back into the one that called it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/limits.h"
#include "report/load.h"
#include "report/schema.h"

int nsk_load__new(sqlite3 *db, struct nsk_load **out)
{
	struct nsk_load *ld;
	char *msg = NULL;
	int err;

	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return -ENOMEM;
	ld->db = db;
	ld->n.time_min = UINT64_MAX;
	err = nsk_schema__create(db, &msg);
	if (!err && sqlite3_exec(db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK)
		err = -EIO;
	sqlite3_free(msg);
	if (err)
		goto cleanup;
	*out = ld;
	return 0;
cleanup:
	/* The caller reads the message from sqlite3_errmsg(db). */
	nsk_load__free(ld);
	return err;
}

/* A record of a type not loaded: counted, and its times kept for the span. */
static int skip_record(struct nsk_load *ld, const struct nsk_record *rec)
{
	ld->skipped[rec->type]++;
	switch (rec->type) {
	case NSK_REC_ALLOC:
		nsk_load__time(ld, rec->alloc.time);
		break;
	case NSK_REC_FREE:
		nsk_load__time(ld, rec->free.time);
		break;
	case NSK_REC_OFFCPU:
		nsk_load__time(ld, rec->offcpu.time);
		nsk_load__time(ld, rec->offcpu.time + rec->offcpu.duration);
		break;
	}
	return 0;
}

int nsk_load__record(struct nsk_load *ld, const struct nsk_record *rec)
{
	ld->n.records++;
	if (rec->type >= NSK_REC_TYPE_MAX || !nsk_load__table[rec->type]) {
		ld->n.ignored++;
		return 0;
	}
	if (ld->runs) {
		struct nsk_record moved;
		int err = nsk_load__run_ids(ld, rec, &moved);

		if (err)
			return err;
		if (ld->skip & (1ull << rec->type))
			return skip_record(ld, &moved);
		return nsk_load__table[rec->type](ld, &moved);
	}
	if (ld->skip & (1ull << rec->type))
		return skip_record(ld, rec);
	return nsk_load__table[rec->type](ld, rec);
}

int nsk_load__commit(struct nsk_load *ld)
{
	/* Cached statements are reset after each step: none holds the
	 * transaction open. */
	if (sqlite3_exec(ld->db, "COMMIT; BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return nsk_load__sql_error(ld);
	return 0;
}

static const char SQL_INFO[] = "INSERT OR REPLACE INTO recording VALUES (?, ?)";

static int put_int(struct nsk_load *ld, const char *key, int64_t v)
{
	sqlite3_stmt *st = nsk_load__stmt(ld, SQL_INFO);

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, v);
	return nsk_load__step(ld, st);
}

static int put_text(struct nsk_load *ld, const char *key, const char *v)
{
	sqlite3_stmt *st = nsk_load__stmt(ld, SQL_INFO);

	if (!st)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, v, -1, SQLITE_STATIC);
	return nsk_load__step(ld, st);
}

int nsk_load__finish(struct nsk_load *ld, const char *file,
		     const struct nsk_file_info *info,
		     const struct nsk_reader_stats *stats)
{
	const struct nsk_load_counts *n = &ld->n;
	uint64_t start = n->time_min == UINT64_MAX ? 0 : n->time_min;
	uint64_t end = n->time_min == UINT64_MAX ? 0 : n->time_max;
	char *msg = NULL;
	int err = 0;

	err = err ?: nsk_load_alloc__flush(ld);
	err = err ?: put_text(ld, "file", file ? file : "");
	if (ld->skip & (1ull << NSK_REC_ALLOC))
		err = err ?: put_int(ld, "not_loaded.alloc", (int64_t)ld->skipped[NSK_REC_ALLOC]);
	if (ld->skip & (1ull << NSK_REC_FREE))
		err = err ?: put_int(ld, "not_loaded.free", (int64_t)ld->skipped[NSK_REC_FREE]);
	if (ld->skip & (1ull << NSK_REC_OFFCPU))
		err = err ?: put_int(ld, "not_loaded.offcpu", (int64_t)ld->skipped[NSK_REC_OFFCPU]);
	if (info) {
		err = err ?: put_int(ld, "format_major", info->major);
		err = err ?: put_int(ld, "format_minor", info->minor);
	}
	if (ld->runs)
		err = err ?: put_int(ld, "recorder_runs", ld->runs);
	err = err ?: put_int(ld, "time_start_ns", (int64_t)start);
	err = err ?: put_int(ld, "time_end_ns", (int64_t)end);
	err = err ?: put_int(ld, "records", (int64_t)n->records);
	err = err ?: put_int(ld, "ignored_records", (int64_t)n->ignored);
	err = err ?: put_int(ld, "unresolved_frames", (int64_t)n->unresolved_frames);
	err = err ?: put_int(ld, "unknown_frames", (int64_t)n->unknown_frames);
	err = err ?: put_int(ld, "unknown_stacks", (int64_t)n->unknown_stacks);
	err = err ?: put_int(ld, "unknown_strings", (int64_t)n->unknown_strings);
	err = err ?: put_int(ld, "no_stack_events", (int64_t)n->no_stack);
	err = err ?: put_int(ld, "truncated_stack_events", (int64_t)n->truncated_stacks);
	err = err ?: put_int(ld, "no_user_stack_events", (int64_t)n->no_user_stack);
	err = err ?: put_int(ld, "problems", (int64_t)n->problems);
	err = err ?: put_int(ld, "read_error", (int64_t)n->read_error);
	err = err ?: put_int(ld, "ended", (int64_t)n->ended);
	err = err ?: put_int(ld, "long_names", (int64_t)n->long_names);
	err = err ?: put_int(ld, "long_stacks", (int64_t)n->long_stacks);
	err = err ?: put_int(ld, "long_paths", (int64_t)n->long_paths);
	if (stats) {
		err = err ?: put_int(ld, "chunks", (int64_t)stats->chunks);
		err = err ?: put_int(ld, "corrupt_chunks", (int64_t)stats->corrupt_chunks);
		err = err ?: put_int(ld, "skipped_chunks", (int64_t)stats->skipped_chunks);
		err = err ?: put_int(ld, "skipped_records", (int64_t)stats->skipped_records);
		err = err ?: put_int(ld, "seq_gaps", (int64_t)stats->seq_gaps);
		err = err ?: put_int(ld, "truncated_bytes", (int64_t)stats->truncated_bytes);
		err = err ?: put_int(ld, "bytes", (int64_t)stats->bytes);
	}
	if (err)
		return err;
	/* The cached statements are done; finalize them before COMMIT. */
	for (unsigned i = 0; i < ld->nstmts; i++)
		sqlite3_finalize(ld->stmts[i].st);
	ld->nstmts = 0;
	if (sqlite3_exec(ld->db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK ||
	    nsk_schema__index(ld->db, &msg)) {
		snprintf(ld->err, sizeof(ld->err), "database: %s",
			 msg ? msg : sqlite3_errmsg(ld->db));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

const struct nsk_load_counts *nsk_load__counts(const struct nsk_load *ld)
{
	return &ld->n;
}

const char *nsk_load__error(const struct nsk_load *ld)
{
	return ld->err;
}

void nsk_load__free(struct nsk_load *ld)
{
	if (!ld)
		return;
	for (unsigned i = 0; i < ld->nstmts; i++)
		sqlite3_finalize(ld->stmts[i].st);
	nsk_load_alloc__release(ld);
	nsk_load_sel__free(ld->sel);
	nsk_idmap__release(&ld->strings);
	nsk_strtab__release(&ld->strtab);
	nsk_idmap__release(&ld->frames);
	free(ld->frame);
	nsk_strtab__release(&ld->funcs);
	free(ld->func_seen);
	nsk_idmap__release(&ld->stacks);
	nsk_strtab__release(&ld->comms);
	nsk_idmap__release(&ld->tid_comm);
	nsk_idmap__release(&ld->pid_comm);
	free(ld->run_frames);
	free(ld);
}
