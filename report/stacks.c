/* Views over stacks, for any signal that weighs stacks: CPU samples now,
 * allocated bytes or blocked time later.  A view supplies its weights
 * query (stack_id, weight) and a unit; these functions turn it into
 *   by function: self and total weight per function (stack_func counts a
 *                function once per stack, so recursion counts once),
 *   by stack:    weight per call path,
 *   tree:        the caller tree, root first, children by weight,
 *   folded:      flamegraph.pl's input, "root;...;leaf weight". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/idmap.h"
#include "report/report.h"

static long limit_of(const struct nsk_report *rep)
{
	return rep->opts->limit >= 0 ? rep->opts->limit : -1;
}

/* Sums the view's weights per stack into the temporary table w(stack_id,
 * weight), or with by_pid per stack and process into wp(stack_id, pid,
 * weight) (a weights query's third column is the pid).  Done in C with a
 * hash map: SQLite's GROUP BY sorts, and sorting a million samples costs
 * twenty times a scan of them.  A stack's processes are a chain from its
 * first entry (most stacks have one). */
struct wsum {
	int64_t sid, pid, sum;
	size_t next; /* index + 1 of the stack's next process; 0: none */
};

static int weigh_into(struct nsk_report *rep, const struct nsk_view *v,
		      int by_pid)
{
	struct nsk_idmap idx = { 0 };
	struct wsum *e = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st = NULL, *ins = NULL;
	char *msg = NULL;
	int rc, err = 0;

	if (sqlite3_exec(rep->db, by_pid ?
			 "DROP TABLE IF EXISTS temp.wp; CREATE TEMP TABLE wp "
			 "(stack_id INTEGER, pid INTEGER, weight INTEGER)" :
			 "DROP TABLE IF EXISTS temp.w; CREATE TEMP "
			 "TABLE w (stack_id INTEGER PRIMARY KEY, weight INTEGER)",
			 NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(rep->err, sizeof(rep->err), "%s", msg);
		sqlite3_free(msg);
		return -EIO;
	}
	st = nsk_report__prepare(rep, "%s", v->weights);
	if (!st)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		int64_t pid = by_pid ? sqlite3_column_int64(st, 2) : 0;
		uint64_t head;
		size_t i = SIZE_MAX, last = SIZE_MAX;

		if (nsk_idmap__get(&idx, (uint64_t)id, &head))
			for (size_t k = head; k; k = e[k - 1].next) {
				last = k - 1;
				if (e[k - 1].pid == pid) {
					i = k - 1;
					break;
				}
			}
		if (i == SIZE_MAX) {
			if (n == cap) {
				size_t c = cap ? cap * 2 : 1024;
				struct wsum *a = realloc(e, c * sizeof(*a));

				if (!a) {
					err = -ENOMEM;
					goto cleanup;
				}
				e = a;
				cap = c;
			}
			i = n++;
			e[i] = (struct wsum){ .sid = id, .pid = pid };
			if (last != SIZE_MAX)
				e[last].next = i + 1;
			else if (nsk_idmap__set(&idx, (uint64_t)id, i + 1)) {
				err = -ENOMEM;
				goto cleanup;
			}
		}
		e[i].sum += sqlite3_column_int64(st, 1);
	}
	if (rc != SQLITE_DONE) {
		err = -EIO;
		goto cleanup;
	}
	ins = nsk_report__prepare(rep, by_pid ? "INSERT INTO temp.wp VALUES "
				  "(?, ?, ?)" : "INSERT INTO temp.w VALUES (?, ?)");
	if (!ins) {
		err = -EIO;
		goto cleanup;
	}
	for (size_t i = 0; i < n && !err; i++) {
		int c = 1;

		sqlite3_bind_int64(ins, c++, e[i].sid);
		if (by_pid)
			sqlite3_bind_int64(ins, c++, e[i].pid);
		sqlite3_bind_int64(ins, c, e[i].sum);
		if (sqlite3_step(ins) != SQLITE_DONE)
			err = -EIO;
		sqlite3_reset(ins);
	}
cleanup:
	if (err == -EIO)
		snprintf(rep->err, sizeof(rep->err), "%s", sqlite3_errmsg(rep->db));
	else if (err)
		snprintf(rep->err, sizeof(rep->err), "out of memory");
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	nsk_idmap__release(&idx);
	free(e);
	return err;
}

static int weigh(struct nsk_report *rep, const struct nsk_view *v)
{
	return weigh_into(rep, v, 0);
}

int nsk_stacks__by_function(struct nsk_report *rep, const struct nsk_view *v)
{
	const struct nsk_col_hint hints[] = {
		{ "self_samples", "self", 0 },
		{ "self_pct", "self%", NSK_COL_PCT },
		{ "total_samples", "total", 0 },
		{ "total_pct", "total%", NSK_COL_PCT },
		{ "function", NULL, NSK_COL_FLEX },
		{ "module", NULL, NSK_COL_NARROW },
		{ NULL, NULL, 0 }
	};
	struct nsk_col_hint h[sizeof(hints) / sizeof(hints[0])];
	char self_col[64], total_col[64];
	sqlite3_stmt *st;

	/* Column names follow the unit: self_samples, self_bytes, ... */
	snprintf(self_col, sizeof(self_col), "self_%s", v->unit);
	snprintf(total_col, sizeof(total_col), "total_%s", v->unit);
	memcpy(h, hints, sizeof(h));
	h[0].name = self_col;
	h[2].name = total_col;
	if (weigh(rep, v))
		return -EIO;
	/* Summed per function id first, names joined after: a GROUP BY that
	 * carried the names would sort one copy of a name per stack that
	 * holds it (2,000 deep stacks of 4 KiB names: 8 GB). */
	st = nsk_report__prepare(rep,
		"WITH w AS (SELECT * FROM temp.w), t AS (SELECT total(weight) AS total FROM w), "
		"a AS (SELECT sf.func_id AS fid, "
		"sum(CASE WHEN sf.leaf THEN w.weight ELSE 0 END) AS self, "
		"sum(w.weight) AS total FROM w JOIN stack_func sf "
		"ON sf.stack_id = w.stack_id GROUP BY sf.func_id) "
		"SELECT a.self AS %s, round(100.0 * a.self / t.total, 2) AS self_pct, "
		"a.total AS %s, round(100.0 * a.total / t.total, 2) AS total_pct, "
		"f.name AS function, f.module AS module "
		"FROM a JOIN func f ON f.id = a.fid, t "
		"ORDER BY 1 DESC, 3 DESC, f.name LIMIT %ld",
		self_col, total_col, limit_of(rep));
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

int nsk_stacks__by_stack(struct nsk_report *rep, const struct nsk_view *v)
{
	struct nsk_col_hint h[] = {
		{ v->unit, NULL, 0 },
		{ "pct", "pct", NSK_COL_PCT },
		{ "chain", "call chain (leaf first)",
		  NSK_COL_FLEX | NSK_COL_CUT_END },
		{ "function", NULL, NSK_COL_DATA_ONLY },
		{ "module", NULL, NSK_COL_DATA_ONLY },
		{ "path", NULL, NSK_COL_DATA_ONLY },
		{ NULL, NULL, 0 }
	};
	sqlite3_stmt *st;

	if (weigh(rep, v))
		return -EIO;
	/* Stacks that differ only in addresses share a path: merge them. */
	st = nsk_report__prepare(rep,
		"WITH w AS (SELECT * FROM temp.w), t AS (SELECT total(weight) AS total FROM w) "
		"SELECT sum(w.weight) AS %s, "
		"round(100.0 * sum(w.weight) / t.total, 2) AS pct, "
		"st.chain AS chain, f.name AS function, f.module AS module, "
		"st.path AS path "
		"FROM w JOIN stack st ON st.id = w.stack_id "
		"LEFT JOIN func f ON f.id = st.leaf_func_id, t "
		"GROUP BY st.path ORDER BY 1 DESC, st.path LIMIT %ld",
		v->unit, limit_of(rep));
	if (!st)
		return -EIO;
	return nsk_report__emit(rep, v->name, st, h);
}

int nsk_stacks__folded(struct nsk_report *rep, const struct nsk_view *v)
{
	sqlite3_stmt *st;
	char *msg = NULL;
	int rc;

	if (weigh_into(rep, v, 1))
		return -EIO;
	/* The process is the root frame, so that programs a build runs (cc1,
	 * as, ld) do not merge under _start.  Names in a table of their own:
	 * as a CTE, SQLite would look each up again for every row it joins. */
	if (sqlite3_exec(rep->db, "DROP TABLE IF EXISTS temp.pn; CREATE TEMP "
			 "TABLE pn (pid INTEGER PRIMARY KEY, name TEXT); INSERT "
			 "INTO temp.pn SELECT pid, " NSK_PROCESS_NAME("p.pid")
			 " FROM (SELECT DISTINCT pid FROM temp.wp) p",
			 NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(rep->err, sizeof(rep->err), "%s", msg);
		sqlite3_free(msg);
		return -EIO;
	}
	st = nsk_report__prepare(rep,
		"SELECT pn.name || ';' || CASE WHEN st.path = '' THEN "
		"'[empty stack]' ELSE st.path END AS p, sum(w.weight) "
		"FROM temp.wp w JOIN stack st ON st.id = w.stack_id "
		"JOIN temp.pn pn ON pn.pid = w.pid GROUP BY p ORDER BY p");
	if (!st)
		return -EIO;
	nsk_report__warn(rep);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nsk_out__put_escaped(rep->out.f,
				     (const char *)sqlite3_column_text(st, 0));
		fprintf(rep->out.f, " %lld\n",
			(long long)sqlite3_column_int64(st, 1));
	}
	if (rc != SQLITE_DONE)
		snprintf(rep->err, sizeof(rep->err), "%s",
			 sqlite3_errmsg(rep->db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* ---- the tree, built in C from the stacks' frames (few), then handed to
 * SQL as a temporary table so that it prints like any other view ---- */

struct node {
	int64_t func_id;
	int64_t total, self;
	uint32_t parent, child, next; /* indexes; 0: none (0 is the root) */
};

struct tree {
	struct node *n;
	size_t len, cap;
};

static int child_of(struct tree *t, uint32_t parent, int64_t func, uint32_t *out)
{
	uint32_t c;

	for (c = t->n[parent].child; c; c = t->n[c].next)
		if (t->n[c].func_id == func) {
			*out = c;
			return 0;
		}
	if (t->len == t->cap) {
		size_t cap = t->cap * 2;
		struct node *n = realloc(t->n, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->n = n;
		t->cap = cap;
	}
	c = (uint32_t)t->len++;
	memset(&t->n[c], 0, sizeof(t->n[c]));
	t->n[c].func_id = func;
	t->n[c].parent = parent;
	t->n[c].next = t->n[parent].child;
	t->n[parent].child = c;
	*out = c;
	return 0;
}

static int cmp_total(const void *a, const void *b, void *arg)
{
	const struct tree *t = arg;
	const struct node *x = &t->n[*(const uint32_t *)a];
	const struct node *y = &t->n[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->func_id < y->func_id ? -1 : x->func_id > y->func_id;
}

/* Depth-first, children by weight, nodes under min_total left out. */
static int emit_tree(struct tree *t, sqlite3_stmt *ins, int64_t min_total)
{
	uint32_t *stack = NULL, *kids = NULL;
	uint32_t *depth = NULL;
	size_t sp = 0;
	int64_t ord = 0;
	int err = 0;

	stack = malloc(t->len * sizeof(*stack));
	kids = malloc(t->len * sizeof(*kids));
	depth = calloc(t->len, sizeof(*depth));
	if (!stack || !kids || !depth) {
		err = -ENOMEM;
		goto cleanup;
	}
	stack[sp++] = 0;
	while (sp && !err) {
		uint32_t i = stack[--sp], nk = 0;

		if (i) {
			sqlite3_bind_int64(ins, 1, ord++);
			sqlite3_bind_int64(ins, 2, i);
			sqlite3_bind_int64(ins, 3, t->n[i].parent);
			sqlite3_bind_int64(ins, 4, depth[i]);
			sqlite3_bind_int64(ins, 5, t->n[i].func_id);
			sqlite3_bind_int64(ins, 6, t->n[i].total);
			sqlite3_bind_int64(ins, 7, t->n[i].self);
			if (sqlite3_step(ins) != SQLITE_DONE)
				err = -EIO;
			sqlite3_reset(ins);
		}
		for (uint32_t c = t->n[i].child; c; c = t->n[c].next)
			if (t->n[c].total >= min_total && t->n[c].total > 0)
				kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), cmp_total, t);
		/* Push heaviest last so it is visited first. */
		while (nk) {
			uint32_t c = kids[--nk];

			depth[c] = i ? depth[i] + 1 : 0;
			stack[sp++] = c;
		}
	}
cleanup:
	free(stack);
	free(kids);
	free(depth);
	return err;
}

int nsk_stacks__tree(struct nsk_report *rep, const struct nsk_view *v)
{
	struct tree t = { 0 };
	struct nsk_col_hint h[] = {
		{ "total", "total", 0 },
		{ "total_pct", "total%", NSK_COL_PCT },
		{ "self", "self", 0 },
		{ "self_pct", "self%", NSK_COL_PCT },
		{ "depth", NULL, NSK_COL_DATA_ONLY },
		{ "function", NULL, NSK_COL_FLEX | NSK_COL_INDENT },
		{ "module", NULL, NSK_COL_NARROW },
		{ "id", NULL, NSK_COL_DATA_ONLY },
		{ "parent", NULL, NSK_COL_DATA_ONLY },
		{ NULL, NULL, 0 }
	};
	char total_col[64], self_col[64];
	sqlite3_stmt *st = NULL, *ins = NULL;
	int64_t last_stack = INT64_MIN, weight = 0, grand = 0;
	uint32_t cur = 0;
	char *msg = NULL;
	int rc, err = 0;

	snprintf(total_col, sizeof(total_col), "total_%s", v->unit);
	snprintf(self_col, sizeof(self_col), "self_%s", v->unit);
	h[0].name = total_col;
	h[2].name = self_col;
	t.cap = 1024;
	t.n = calloc(t.cap, sizeof(*t.n));
	if (!t.n) {
		err = -ENOMEM;
		goto cleanup;
	}
	t.len = 1; /* the root */
	if (weigh(rep, v)) {
		err = -EIO;
		goto cleanup;
	}
	st = nsk_report__prepare(rep,
		"WITH w AS (SELECT * FROM temp.w) SELECT w.stack_id, w.weight, sf.func_id "
		"FROM w JOIN stack_frame sf ON sf.stack_id = w.stack_id "
		"ORDER BY w.stack_id, sf.pos DESC");
	if (!st) {
		err = -EIO;
		goto cleanup;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !err) {
		int64_t sid = sqlite3_column_int64(st, 0);

		if (sid != last_stack) {
			/* the previous stack's leaf ran: its self weight */
			if (cur)
				t.n[cur].self += weight;
			last_stack = sid;
			weight = sqlite3_column_int64(st, 1);
			grand += weight;
			cur = 0;
		}
		err = child_of(&t, cur, sqlite3_column_int64(st, 2), &cur);
		if (!err)
			t.n[cur].total += weight;
	}
	if (cur)
		t.n[cur].self += weight;
	if (!err && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		snprintf(rep->err, sizeof(rep->err), "%s", sqlite3_errmsg(rep->db));
		err = -EIO;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (err)
		goto cleanup;
	if (sqlite3_exec(rep->db, "DROP TABLE IF EXISTS temp.tree; "
			 "CREATE TEMP TABLE tree (ord INTEGER PRIMARY "
			 "KEY, id INTEGER, parent INTEGER, depth INTEGER, "
			 "func_id INTEGER, total INTEGER, self INTEGER)",
			 NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(rep->err, sizeof(rep->err), "%s", msg);
		sqlite3_free(msg);
		err = -EIO;
		goto cleanup;
	}
	ins = nsk_report__prepare(rep, "INSERT INTO tree VALUES "
				  "(?, ?, ?, ?, ?, ?, ?)");
	if (!ins) {
		err = -EIO;
		goto cleanup;
	}
	err = emit_tree(&t, ins, (int64_t)((double)grand * rep->opts->min_pct / 100.0));
	if (err) {
		snprintf(rep->err, sizeof(rep->err), "%s", sqlite3_errmsg(rep->db));
		goto cleanup;
	}
	st = nsk_report__prepare(rep,
		"SELECT t.total AS %s, round(100.0 * t.total / %lld, 2) "
		"AS total_pct, t.self AS %s, round(100.0 * t.self / %lld, 2) "
		"AS self_pct, t.depth AS depth, f.name AS function, "
		"f.module AS module, t.id AS id, nullif(t.parent, 0) AS parent "
		"FROM temp.tree t JOIN func f ON f.id = t.func_id "
		"ORDER BY t.ord LIMIT %ld", total_col, (long long)grand,
		self_col, (long long)grand, limit_of(rep));
	if (!st) {
		err = -EIO;
		goto cleanup;
	}
	err = nsk_report__emit(rep, "tree", st, h);
	st = NULL;
cleanup:
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	free(t.n);
	return err;
}
