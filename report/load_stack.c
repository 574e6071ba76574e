/* Loader handlers for code locations: frames and stacks.
 *
 * A frame becomes a row of frame pointing at a func (name + module, the
 * unit reports count).  A stack is expanded here, once: each recorded
 * address is the innermost frame of an inline chain, so the chain is
 * followed through inline_parent and every function of it gets its own row
 * in stack_frame.  The stack's distinct functions go to stack_func (leaf =
 * the function that was running) and its paths, root first and leaf first,
 * to the stack row, so that views never walk stacks per sample.
 *
 * Ids the file never defined become placeholders: "[unknown frame N]",
 * "[unknown stack N]", counted in the recording table. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/limits.h"
#include "report/load.h"

#define INLINE_DEPTH_MAX 64 /* a cycle guard for corrupt inline chains */
#define FRAME_UNKNOWN (1u << 31) /* frame flags: a placeholder */

static const char SQL_FUNC[] = "INSERT INTO func VALUES (?, ?, ?, ?, ?)";
static const char SQL_FRAME[] =
	"INSERT OR REPLACE INTO frame VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char SQL_STACK[] =
	"INSERT OR REPLACE INTO stack VALUES (?, ?, ?, ?, ?, ?, ?)";
static const char SQL_STACK_FRAME[] =
	"INSERT INTO stack_frame VALUES (?, ?, ?, ?, ?, ?)";
static const char SQL_STACK_FUNC[] = "INSERT INTO stack_func VALUES (?, ?, ?)";
static const char SQL_DEL_FRAMES[] = "DELETE FROM stack_frame WHERE stack_id = ?";
static const char SQL_DEL_FUNCS[] = "DELETE FROM stack_func WHERE stack_id = ?";

/* The func id of name in module, inserting the func the first time. */
static int func_id(struct nsk_load *ld, const char *name, const char *module,
		   int kernel, int unresolved, uint32_t *out)
{
	size_t before = ld->funcs.n;
	/* name and module, each at most NSK_LIMIT_NAME_BYTES: a shorter key
	 * would merge names that share their first bytes */
	char key[2 * NSK_LIMIT_NAME_BYTES + 64];
	sqlite3_stmt *st;
	uint32_t id;
	int len, err;

	len = snprintf(key, sizeof(key), "%s\x1f%s", name, module ? module : "");
	if (len < 0)
		return -EINVAL;
	id = nsk_strtab__intern(&ld->funcs, key,
				(size_t)len < sizeof(key) ? (size_t)len
							  : sizeof(key) - 1);
	if (!id)
		return -ENOMEM;
	*out = id;
	if (ld->funcs.n == before)
		return 0;
	err = nsk_load__charge(ld, 1, (size_t)len);
	if (err)
		return err;
	if (id >= ld->func_seen_cap) {
		size_t cap = ld->func_seen_cap ? ld->func_seen_cap * 2 : 1024;
		uint32_t *seen;

		while (cap <= id)
			cap *= 2;
		seen = realloc(ld->func_seen, cap * sizeof(*seen));
		if (!seen)
			return -ENOMEM;
		memset(seen + ld->func_seen_cap, 0,
		       (cap - ld->func_seen_cap) * sizeof(*seen));
		ld->func_seen = seen;
		ld->func_seen_cap = cap;
	}
	st = nsk_load__stmt(ld, SQL_FUNC);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	if (module)
		sqlite3_bind_text(st, 3, module, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_int(st, 4, kernel);
	sqlite3_bind_int(st, 5, unresolved);
	return nsk_load__step(ld, st);
}

/* The name part of a func key. */
static const char *func_name(const struct nsk_load *ld, uint32_t id, size_t *len)
{
	const char *key = nsk_strtab__get(&ld->funcs, id);

	*len = strcspn(key, "\x1f");
	return key;
}

static int add_frame(struct nsk_load *ld, uint64_t id, uint32_t func,
		     uint32_t flags, uint64_t inline_parent, size_t *index)
{
	uint64_t i;

	if (!nsk_idmap__get(&ld->frames, id, &i)) {
		if (ld->nframe == ld->frame_cap) {
			size_t cap = ld->frame_cap ? ld->frame_cap * 2 : 1024;
			struct nsk_load_frame *f =
				realloc(ld->frame, cap * sizeof(*f));

			if (!f)
				return -ENOMEM;
			ld->frame = f;
			ld->frame_cap = cap;
		}
		i = ld->nframe++;
		if (nsk_idmap__set(&ld->frames, id, i))
			return -ENOMEM;
	}
	ld->frame[i].func_id = func;
	ld->frame[i].flags = flags;
	ld->frame[i].inline_parent = inline_parent;
	if (index)
		*index = (size_t)i;
	return 0;
}

int nsk_load__frame(struct nsk_load *ld, const struct nsk_record *rec)
{
	const struct nsk_rec_frame *f = &rec->frame;
	char nbuf[64], mbuf[64], fbuf[64], unres[256];
	const char *name = NULL, *module, *file;
	int kernel = !!(f->flags & NSK_FRAME_KERNEL), unresolved = 0;
	sqlite3_stmt *st;
	uint32_t func;
	int err;

	module = nsk_load__string(ld, f->module_id, mbuf, sizeof(mbuf));
	if (!module)
		module = kernel ? "[kernel]" : "[unknown]";
	if (f->function_id && !(f->flags & NSK_FRAME_UNRESOLVED)) {
		uint64_t before = ld->n.unknown_strings;

		name = nsk_load__string(ld, f->function_id, nbuf, sizeof(nbuf));
		unresolved = ld->n.unknown_strings != before;
	}
	if (!name) {
		/* No symbol: module+offset, as perf and addr2line show it. */
		snprintf(unres, sizeof(unres), "%s+0x%" PRIx64, module, f->addr);
		name = unres;
		unresolved = 1;
	}
	if (unresolved)
		ld->n.unresolved_frames++;
	err = nsk_load__charge(ld, 1, 0);
	err = err ?: func_id(ld, name, module, kernel, unresolved, &func);
	if (err)
		return err;
	err = add_frame(ld, f->id, func, f->flags, f->inline_parent, NULL);
	if (err)
		return err;
	file = nsk_load__string(ld, f->file_id, fbuf, sizeof(fbuf));
	st = nsk_load__stmt(ld, SQL_FRAME);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, (int64_t)f->id);
	sqlite3_bind_int64(st, 2, func);
	sqlite3_bind_int64(st, 3, (int64_t)f->mapping_id);
	sqlite3_bind_int64(st, 4, (int64_t)f->addr);
	if (file)
		sqlite3_bind_text(st, 5, file, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 5);
	sqlite3_bind_int64(st, 6, f->line);
	sqlite3_bind_int64(st, 7, f->flags);
	sqlite3_bind_int64(st, 8, (int64_t)f->inline_parent);
	sqlite3_bind_int(st, 9, 1);
	return nsk_load__step(ld, st);
}

/* The index of a frame id in ld->frame, making a placeholder for an id
 * the file never defined. */
static int frame_index(struct nsk_load *ld, uint64_t id, size_t *index)
{
	char name[64];
	sqlite3_stmt *st;
	uint64_t i;
	uint32_t func;
	int err;

	if (nsk_idmap__get(&ld->frames, id, &i)) {
		*index = (size_t)i;
		return 0;
	}
	ld->n.unknown_frames++;
	snprintf(name, sizeof(name), "[unknown frame %" PRIu64 "]", id);
	err = func_id(ld, name, NULL, 0, 1, &func);
	err = err ?: add_frame(ld, id, func, FRAME_UNKNOWN, 0, index);
	if (err)
		return err;
	st = nsk_load__stmt(ld, SQL_FRAME);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, (int64_t)id);
	sqlite3_bind_int64(st, 2, func);
	for (int c = 3; c <= 8; c++)
		sqlite3_bind_null(st, c);
	sqlite3_bind_int(st, 9, 0);
	return nsk_load__step(ld, st);
}

/* A growing string for paths, cut at NSK_LIMIT_PATH_BYTES: past it, the
 * path ends in "..." and takes no more. */
struct buf {
	char *p;
	size_t len, cap;
	int full;
};

static int buf_add(struct buf *b, const char *s, size_t len, int semi_to_colon)
{
	if (b->full)
		return 0;
	if (b->len + len > NSK_LIMIT_PATH_BYTES - 3) {
		len = NSK_LIMIT_PATH_BYTES - 3 - b->len;
		b->full = 1;
	}
	if (b->len + len + 4 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (b->len + len + 4 > cap)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, len);
	/* ';' separates frames in the folded form: keep it out of names. */
	if (semi_to_colon)
		for (size_t i = 0; i < len; i++)
			if (b->p[b->len + i] == ';')
				b->p[b->len + i] = ':';
	b->len += len;
	if (b->full) {
		memcpy(b->p + b->len, "...", 3);
		b->len += 3;
	}
	b->p[b->len] = '\0';
	return 0;
}

struct pos {
	uint64_t frame_id;
	uint32_t func_id;
	uint32_t level;
	int inlined;
};

static int insert_rows(struct nsk_load *ld, uint64_t stack_id, uint32_t flags,
		       const struct pos *pos, size_t n, int known)
{
	struct buf path = { 0 }, chain = { 0 };
	sqlite3_stmt *st;
	int err = 0;

	if (++ld->stack_gen == 0) { /* wrapped: forget every mark */
		memset(ld->func_seen, 0, ld->func_seen_cap * sizeof(uint32_t));
		ld->stack_gen = 1;
	}
	for (size_t i = 0; i < n && !err; i++) {
		size_t len;
		const char *name = func_name(ld, pos[n - 1 - i].func_id, &len);

		err = (i ? buf_add(&path, ";", 1, 0) : 0) ?:
		      buf_add(&path, name, len, 1);
		name = func_name(ld, pos[i].func_id, &len);
		err = err ?: (i ? buf_add(&chain, " <- ", 4, 0) : 0) ?:
		      buf_add(&chain, name, len, 0);

		st = nsk_load__stmt(ld, SQL_STACK_FRAME);
		if (!st) {
			err = -EIO;
			break;
		}
		sqlite3_bind_int64(st, 1, (int64_t)stack_id);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_bind_int64(st, 3, pos[i].level);
		if (pos[i].frame_id)
			sqlite3_bind_int64(st, 4, (int64_t)pos[i].frame_id);
		else
			sqlite3_bind_null(st, 4);
		sqlite3_bind_int64(st, 5, pos[i].func_id);
		sqlite3_bind_int(st, 6, pos[i].inlined);
		err = err ?: nsk_load__step(ld, st);
		if (err || ld->func_seen[pos[i].func_id] == ld->stack_gen)
			continue;
		/* Each function once per stack: recursion counts once. */
		ld->func_seen[pos[i].func_id] = ld->stack_gen;
		st = nsk_load__stmt(ld, SQL_STACK_FUNC);
		if (!st) {
			err = -EIO;
			break;
		}
		sqlite3_bind_int64(st, 1, (int64_t)stack_id);
		sqlite3_bind_int64(st, 2, pos[i].func_id);
		sqlite3_bind_int(st, 3, i == 0);
		err = nsk_load__step(ld, st);
	}
	if (path.full || chain.full)
		nsk_load__cut(ld, "path", NSK_LIMIT_PATH_BYTES + 1,
			      NSK_LIMIT_PATH_BYTES);
	if (err)
		goto cleanup;
	st = nsk_load__stmt(ld, SQL_STACK);
	if (!st) {
		err = -EIO;
		goto cleanup;
	}
	sqlite3_bind_int64(st, 1, (int64_t)stack_id);
	sqlite3_bind_int64(st, 2, flags);
	sqlite3_bind_int64(st, 3, (int64_t)n);
	if (n)
		sqlite3_bind_int64(st, 4, pos[0].func_id);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_text(st, 5, path.p ? path.p : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, chain.p ? chain.p : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 7, known);
	err = nsk_load__step(ld, st);
	if (!err)
		err = nsk_idmap__set(&ld->stacks, stack_id,
				     known ? (uint64_t)flags << 2 | 1 : 2);
cleanup:
	free(path.p);
	free(chain.p);
	return err;
}

/* A stack defined twice (or after a placeholder): the last one wins. */
static int forget_stack(struct nsk_load *ld, uint64_t stack_id)
{
	const char *const sqls[] = { SQL_DEL_FRAMES, SQL_DEL_FUNCS };
	uint64_t v;
	int err;

	if (!nsk_idmap__get(&ld->stacks, stack_id, &v))
		return 0;
	if ((v & 3) == 2)
		ld->n.unknown_stacks--; /* it was defined after all */
	for (int i = 0; i < 2; i++) {
		sqlite3_stmt *st = nsk_load__stmt(ld, sqls[i]);

		if (!st)
			return -EIO;
		sqlite3_bind_int64(st, 1, (int64_t)stack_id);
		err = nsk_load__step(ld, st);
		if (err)
			return err;
	}
	return 0;
}

int nsk_load__stack(struct nsk_load *ld, const struct nsk_record *rec)
{
	const struct nsk_rec_stack *s = &rec->stack;
	uint32_t flags = s->flags, nframes = s->frames.n;
	struct pos *pos = NULL;
	size_t n = 0, cap = 0;
	int err;

	if (nframes > NSK_LIMIT_STACK_FRAMES) {
		/* The leaf end is what ran: keep it, say the walk was cut. */
		nframes = (uint32_t)nsk_load__cut(ld, "stack", nframes,
						  NSK_LIMIT_STACK_FRAMES);
		flags |= NSK_STACK_TRUNCATED;
	}
	err = nsk_load__charge(ld, 1, 0);
	err = err ?: forget_stack(ld, s->id);
	if (!err && (s->flags & NSK_STACK_OWN)) {
		/* The recorder found it inside its own probes: not the
		 * program's code, one pseudo-frame for all of it. */
		struct pos own = { 0 };

		err = func_id(ld, NSK_OWN_FRAME, NULL, 0, 0, &own.func_id);
		return err ?: insert_rows(ld, s->id, flags, &own, 1, 1);
	}
	for (uint32_t level = 0; level < nframes && !err; level++) {
		size_t idx;
		uint64_t fid = s->frames.v[level];

		err = frame_index(ld, fid, &idx);
		for (int hops = 0; !err && hops < INLINE_DEPTH_MAX; hops++) {
			const struct nsk_load_frame *f;

			if (n == NSK_LIMIT_STACK_ROWS) {
				/* inline chains past the limit: cut there */
				nsk_load__cut(ld, "stack", n + 1, n);
				flags |= NSK_STACK_TRUNCATED;
				level = nframes;
				break;
			}

			if (n == cap) {
				struct pos *p;

				cap = cap ? cap * 2 : 64;
				p = realloc(pos, cap * sizeof(*p));
				if (!p) {
					err = -ENOMEM;
					break;
				}
				pos = p;
			}
			f = &ld->frame[idx];
			pos[n].frame_id = fid;
			pos[n].func_id = f->func_id;
			pos[n].level = level;
			pos[n].inlined = !!(f->flags & NSK_FRAME_INLINED);
			n++;
			if (!f->inline_parent || f->inline_parent == fid)
				break;
			fid = f->inline_parent;
			err = frame_index(ld, fid, &idx);
		}
	}
	err = err ?: insert_rows(ld, s->id, flags, pos, n, 1);
	free(pos);
	return err;
}

int nsk_load__stack_ref(struct nsk_load *ld, uint64_t stack_id)
{
	struct pos pos = { 0 };
	char name[64];
	uint64_t v;
	int err;

	if (!stack_id)
		ld->n.no_stack++;
	if (nsk_idmap__get(&ld->stacks, stack_id, &v)) {
		/* Loss is data: count events whose stacks are incomplete. */
		if ((v >> 2) & NSK_STACK_TRUNCATED)
			ld->n.truncated_stacks++;
		if ((v >> 2) & NSK_STACK_USER_ERROR)
			ld->n.no_user_stack++;
		return 0;
	}
	if (stack_id) {
		ld->n.unknown_stacks++;
		snprintf(name, sizeof(name), "[unknown stack %" PRIu64 "]",
			 stack_id);
	} else {
		snprintf(name, sizeof(name), "[no stack]");
	}
	err = func_id(ld, name, NULL, 0, 1, &pos.func_id);
	return err ?: insert_rows(ld, stack_id, 0, &pos, 1, 0);
}
