/* The rows of a measure and the stacks they name, read into memory for
 * the exports: the measure's query runs once, then each distinct stack's
 * frames (stack_frame, leaf first) and each distinct function once, by
 * primary key. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/export.h"

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 256;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static uint32_t intern(struct nsk_xdata *x, const unsigned char *s)
{
	return s ? nsk_strtab__intern(&x->str, (const char *)s,
				      strlen((const char *)s)) : 0;
}

static int read_rows(struct nsk_xdata *x, struct nsk_report *rep)
{
	const struct nsk_measure *m = x->m;
	int nlabels = (m->labels[0] != NULL) + (m->labels[1] != NULL);
	size_t cap = 0;
	sqlite3_stmt *st;
	char *sql;
	int rc, err = 0;

	sql = m->sql(rep);
	if (!sql) {
		snprintf(rep->err, sizeof(rep->err), "out of memory");
		return -ENOMEM;
	}
	st = nsk_report__prepare(rep, "%s", sql);
	sqlite3_free(sql);
	if (!st)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct nsk_xrow *r;
		int c = 0, any = 0;

		if (grow((void **)&x->rows, &cap, x->nrows, sizeof(*r))) {
			err = -ENOMEM;
			break;
		}
		r = &x->rows[x->nrows];
		memset(r, 0, sizeof(*r));
		r->stack_id = sqlite3_column_int64(st, c++);
		r->pid = sqlite3_column_int64(st, c++);
		r->tid = sqlite3_column_int64(st, c++);
		r->comm_id = sqlite3_column_int64(st, c++);
		for (int i = 0; i < nlabels; i++) {
			const unsigned char *t = sqlite3_column_text(st, c++);

			r->label[i] = intern(x, t);
			if (t && !r->label[i])
				err = -ENOMEM;
		}
		for (int i = 0; i < m->nvalues; i++) {
			r->v[i] = sqlite3_column_int64(st, c++);
			x->total[i] = nsk_xadd(x->total[i], r->v[i]);
			any |= r->v[i] != 0;
		}
		if (err)
			break;
		if (any) /* nothing to say about a row of zeros */
			x->nrows++;
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	if (err == -EIO)
		snprintf(rep->err, sizeof(rep->err), "%s", sqlite3_errmsg(rep->db));
	else if (err)
		snprintf(rep->err, sizeof(rep->err), "out of memory");
	sqlite3_finalize(st);
	return err;
}

static int read_func(struct nsk_xdata *x, struct nsk_report *rep,
		     sqlite3_stmt *st, int64_t id, size_t *cap)
{
	struct nsk_xfunc *f;
	uint64_t i;

	if (nsk_idmap__get(&x->func_idx, (uint64_t)id, &i))
		return 0;
	if (grow((void **)&x->funcs, cap, x->nfuncs, sizeof(*f)))
		return -ENOMEM;
	f = &x->funcs[x->nfuncs];
	memset(f, 0, sizeof(*f));
	f->id = id;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t n = intern(x, sqlite3_column_text(st, 0));
		uint32_t mod = intern(x, sqlite3_column_text(st, 1));

		f->name = nsk_strtab__get(&x->str, n);
		f->module = nsk_strtab__get(&x->str, mod);
		f->kernel = sqlite3_column_int(st, 2);
	}
	if (!f->name) {
		char buf[64];

		snprintf(buf, sizeof(buf), "[unknown function %lld]", (long long)id);
		f->name = nsk_strtab__get(&x->str, intern(x, (const unsigned char *)buf));
		if (!f->name)
			return -ENOMEM;
	}
	if (!f->module)
		f->module = "";
	if (nsk_idmap__set(&x->func_idx, (uint64_t)id, x->nfuncs))
		return -ENOMEM;
	x->nfuncs++;
	return 0;
}

static int read_stacks(struct nsk_xdata *x, struct nsk_report *rep)
{
	size_t scap = 0, fcap = 0, ucap = 0;
	sqlite3_stmt *st = NULL, *fn = NULL;
	int err = 0;

	st = nsk_report__prepare(rep, "SELECT level, frame_id, func_id FROM "
				 "stack_frame WHERE stack_id = ? ORDER BY pos");
	fn = st ? nsk_report__prepare(rep, "SELECT name, module, kernel FROM "
				      "func WHERE id = ?") : NULL;
	if (!st || !fn) {
		err = -EIO;
		goto cleanup;
	}
	for (size_t r = 0; r < x->nrows && !err; r++) {
		int64_t sid = x->rows[r].stack_id;
		struct nsk_xstack *s;
		uint64_t i;
		int rc;

		if (nsk_idmap__get(&x->stack_idx, (uint64_t)sid, &i))
			continue;
		if (grow((void **)&x->stacks, &scap, x->nstacks, sizeof(*s))) {
			err = -ENOMEM;
			break;
		}
		s = &x->stacks[x->nstacks];
		s->id = sid;
		s->first = x->nframes;
		s->n = 0;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, sid);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct nsk_xframe *f;

			if (grow((void **)&x->frames, &fcap, x->nframes,
				 sizeof(*f))) {
				err = -ENOMEM;
				break;
			}
			f = &x->frames[x->nframes++];
			f->level = sqlite3_column_int64(st, 0);
			f->frame_id = sqlite3_column_int64(st, 1);
			f->func_id = sqlite3_column_int64(st, 2);
			s->n++;
			err = read_func(x, rep, fn, f->func_id, &ucap);
			if (err)
				break;
		}
		if (!err && rc != SQLITE_DONE)
			err = -EIO;
		if (!err && nsk_idmap__set(&x->stack_idx, (uint64_t)sid,
					   x->nstacks))
			err = -ENOMEM;
		if (!err)
			x->nstacks++;
	}
cleanup:
	if (err == -ENOMEM)
		snprintf(rep->err, sizeof(rep->err), "out of memory");
	else if (err && !st)
		; /* the message is in rep->err already */
	else if (err)
		snprintf(rep->err, sizeof(rep->err), "%s", sqlite3_errmsg(rep->db));
	sqlite3_finalize(st);
	sqlite3_finalize(fn);
	return err;
}

int nsk_xdata__load(struct nsk_xdata *x, struct nsk_report *rep,
		    const struct nsk_measure *m)
{
	int err;

	memset(x, 0, sizeof(*x));
	x->m = m;
	err = read_rows(x, rep);
	if (!err)
		err = read_stacks(x, rep);
	return err;
}

void nsk_xdata__release(struct nsk_xdata *x)
{
	if (!x)
		return;
	free(x->rows);
	free(x->stacks);
	free(x->frames);
	free(x->funcs);
	nsk_idmap__release(&x->stack_idx);
	nsk_idmap__release(&x->func_idx);
	nsk_strtab__release(&x->str);
	memset(x, 0, sizeof(*x));
}

const struct nsk_xstack *nsk_xdata__stack(const struct nsk_xdata *x,
					  int64_t stack_id)
{
	uint64_t i;

	return nsk_idmap__get(&x->stack_idx, (uint64_t)stack_id, &i)
		       ? &x->stacks[i] : NULL;
}

const struct nsk_xfunc *nsk_xdata__func(const struct nsk_xdata *x,
					int64_t func_id)
{
	uint64_t i;

	return nsk_idmap__get(&x->func_idx, (uint64_t)func_id, &i)
		       ? &x->funcs[i] : NULL;
}

const char *nsk_xdata__frameless(struct nsk_xdata *x, struct nsk_report *rep,
				 int64_t stack_id)
{
	const char *name = "[no stack]";
	sqlite3_stmt *st;
	uint32_t id = 0;

	st = nsk_report__prepare(rep, "SELECT path FROM stack WHERE id = %lld "
				 "AND path != ''", (long long)stack_id);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		id = intern(x, sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (id)
		name = nsk_strtab__get(&x->str, id);
	return name;
}
