/* Loader handlers for the records every recording has: meta, clock,
 * strings, processes, threads, exits, mappings, losses and the end
 * marker.  Frames and stacks are in load_stack.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/limits.h"
#include "report/load.h"

int nsk_load__meta(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] = "INSERT INTO meta VALUES (?, ?)";
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);

	if (!st)
		return -EIO;
	return nsk_load__bind_bytes(ld, st, 1, rec->meta.key) ?:
	       nsk_load__bind_bytes(ld, st, 2, rec->meta.value) ?:
	       nsk_load__step(ld, st);
}

int nsk_load__clock(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] = "INSERT INTO clock VALUES (?, ?)";
	int err = nsk_load__run_clock(ld, &rec->clock);
	sqlite3_stmt *st;

	if (err)
		return err;
	st = nsk_load__stmt(ld, sql);
	if (!st)
		return -EIO;
	nsk_load__time(ld, rec->clock.monotonic_ns);
	sqlite3_bind_int64(st, 1, (int64_t)rec->clock.monotonic_ns);
	sqlite3_bind_int64(st, 2, (int64_t)rec->clock.realtime_ns);
	return nsk_load__step(ld, st);
}

/* Strings stay in C: the loader writes names, not string ids. */
int nsk_load__string_rec(struct nsk_load *ld, const struct nsk_record *rec)
{
	const char *s = (const char *)rec->string.str.data;
	size_t len = s ? strnlen(s, rec->string.str.len) : 0;
	char cut[NSK_LIMIT_NAME_BYTES + 1];
	uint32_t sid;
	int err;

	if (len > NSK_LIMIT_NAME_BYTES) {
		/* Kept recognizable: its first bytes and a mark. */
		len = nsk_load__cut(ld, "name", len, NSK_LIMIT_NAME_BYTES);
		memcpy(cut, s, len - 3);
		memcpy(cut + len - 3, "...", 3);
		s = cut;
	}
	err = nsk_load__charge(ld, 1, len);
	if (err)
		return err;
	sid = nsk_strtab__intern(&ld->strtab, s, len);
	if (!sid)
		return -ENOMEM;
	return nsk_idmap__set(&ld->strings, rec->string.id, sid);
}

static const char *how_name(uint32_t how)
{
	switch (how) {
	case NSK_PROC_ATTACHED: return "attached";
	case NSK_PROC_LAUNCHED: return "launched";
	case NSK_PROC_FORKED: return "forked";
	case NSK_PROC_EXECED: return "execed";
	default: return "unknown";
	}
}

int nsk_load__process(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] = "INSERT INTO process VALUES (?, ?, ?, ?, ?, ?)";
	const struct nsk_rec_process *p = &rec->process;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	char cmdline[4096];
	size_t len;
	int err;

	if (!st)
		return -EIO;
	/* argv is NUL-separated; show it space-separated. */
	len = p->cmdline.len < sizeof(cmdline) - 1 ? p->cmdline.len
						    : sizeof(cmdline) - 1;
	for (size_t i = 0; i < len; i++)
		cmdline[i] = p->cmdline.data[i] ? (char)p->cmdline.data[i] : ' ';
	while (len && cmdline[len - 1] == ' ')
		len--;
	cmdline[len] = '\0';
	nsk_load__time(ld, p->time);
	sqlite3_bind_int64(st, 1, (int64_t)p->time);
	sqlite3_bind_int64(st, 2, p->pid);
	sqlite3_bind_int64(st, 3, p->ppid);
	sqlite3_bind_text(st, 4, how_name(p->how), -1, SQLITE_STATIC);
	err = nsk_load__bind_bytes(ld, st, 5, p->comm) ?:
	      nsk_load__charge(ld, 0, len);
	if (err)
		return err;
	if (len)
		sqlite3_bind_text(st, 6, cmdline, (int)len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 6);
	err = nsk_load__step(ld, st);
	/* an exec ends the image: its blocks are live at its exit */
	if (!err && p->how == NSK_PROC_EXECED)
		err = nsk_load_alloc__exit(ld, p->pid, p->time);
	return err ?: nsk_load__set_comm(ld, p->pid, 0, p->comm);
}

int nsk_load__thread(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] = "INSERT INTO thread VALUES (?, ?, ?, ?)";
	const struct nsk_rec_thread *t = &rec->thread;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	int err;

	if (!st)
		return -EIO;
	nsk_load__time(ld, t->time);
	sqlite3_bind_int64(st, 1, (int64_t)t->time);
	sqlite3_bind_int64(st, 2, t->pid);
	sqlite3_bind_int64(st, 3, t->tid);
	err = nsk_load__bind_bytes(ld, st, 4, t->name) ?:
	      nsk_load__step(ld, st);
	return err ?: nsk_load__set_comm(ld, t->pid, t->tid ? t->tid : t->pid,
					 t->name);
}

int nsk_load__exit(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] = "INSERT INTO exit VALUES (?, ?, ?, ?)";
	const struct nsk_rec_exit *e = &rec->exit;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);

	if (!st)
		return -EIO;
	nsk_load__time(ld, e->time);
	sqlite3_bind_int64(st, 1, (int64_t)e->time);
	sqlite3_bind_int64(st, 2, e->pid);
	sqlite3_bind_int64(st, 3, e->tid);
	sqlite3_bind_int64(st, 4, e->exit_code);
	/* tid = pid: the whole process, and its memory with it */
	return nsk_load__step(ld, st) ?:
	       (e->tid == e->pid ? nsk_load_alloc__exit(ld, e->pid, e->time) : 0);
}

int nsk_load__mapping(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] =
		"INSERT OR REPLACE INTO mapping VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
	const struct nsk_rec_mapping *m = &rec->mapping;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	char buf[64], hex[2 * 64 + 1];
	uint32_t n = m->build_id.len < 64 ? m->build_id.len : 64;
	int err;

	if (!st)
		return -EIO;
	err = nsk_load__charge(ld, 1, 0);
	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id.data[i]);
	hex[2 * n] = '\0';
	sqlite3_bind_int64(st, 1, (int64_t)m->id);
	sqlite3_bind_int64(st, 2, m->pid);
	sqlite3_bind_int64(st, 3, (int64_t)m->start);
	sqlite3_bind_int64(st, 4, (int64_t)m->end);
	sqlite3_bind_int64(st, 5, (int64_t)m->pgoff);
	sqlite3_bind_text(st, 6, nsk_load__string(ld, m->path_id, buf, sizeof(buf)),
			  -1, SQLITE_TRANSIENT);
	if (n)
		sqlite3_bind_text(st, 7, hex, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 7);
	sqlite3_bind_int(st, 8, !!(m->flags & NSK_MAPPING_NO_SYMBOLS));
	return nsk_load__step(ld, st);
}

int nsk_load__loss(struct nsk_load *ld, const struct nsk_record *rec)
{
	static const char sql[] = "INSERT INTO loss VALUES (?, ?, ?, ?)";
	const struct nsk_rec_loss *l = &rec->loss;
	sqlite3_stmt *st = nsk_load__stmt(ld, sql);
	char buf[64];
	const char *src;

	if (!st)
		return -EIO;
	src = nsk_load__string(ld, l->source_id, buf, sizeof(buf));
	nsk_load__time(ld, l->time_start);
	nsk_load__time(ld, l->time_end);
	sqlite3_bind_int64(st, 1, (int64_t)l->time_start);
	sqlite3_bind_int64(st, 2, (int64_t)l->time_end);
	sqlite3_bind_text(st, 3, src ? src : "unknown", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 4, (int64_t)l->count);
	return nsk_load__step(ld, st);
}

int nsk_load__end(struct nsk_load *ld, const struct nsk_record *rec)
{
	nsk_load__time(ld, rec->end.time);
	ld->n.ended = 1;
	return 0;
}
