/* The generic output module: a prepared statement's rows as a text table
 * that fits the terminal (80 columns when not a terminal), as JSON or as
 * CSV.  JSON and CSV stream row by row; the text table buffers its first
 * rows (BUFFER_ROWS, BUFFER_BYTES) to measure its columns, then streams. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "report/output.h"

/* Length of the valid UTF-8 sequence at p, 0 if it is not one. */
static int utf8_len(const unsigned char *p)
{
	int n = *p >= 0xf0 && *p <= 0xf4 ? 4 : *p >= 0xe0 ? 3
	      : *p >= 0xc2 && *p < 0xe0 ? 2 : 0;

	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void nsk_out__json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int n;

		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(f, "\\u%04x", *p);
			} else if (*p < 0x80) {
				fputc(*p, f);
			} else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0) {
				/* a C1 control, which a terminal may obey */
				fprintf(f, "\\u%04x", p[1]);
				p++;
			} else if ((n = utf8_len(p))) {
				fwrite(p, 1, (size_t)n, f);
				p += n - 1;
			} else {
				/* Symbol names are bytes: keep JSON valid. */
				fputs("\\ufffd", f);
			}
		}
	}
	fputc('"', f);
}

static const struct nsk_col_hint *hint_of(const struct nsk_col_hint *hints,
					  const char *name)
{
	for (; hints && hints->name; hints++)
		if (!strcmp(hints->name, name))
			return hints;
	return NULL;
}

static void json_value(FILE *f, sqlite3_stmt *st, int c)
{
	double d;

	switch (sqlite3_column_type(st, c)) {
	case SQLITE_NULL:
		fputs("null", f);
		break;
	case SQLITE_INTEGER:
		fprintf(f, "%lld", (long long)sqlite3_column_int64(st, c));
		break;
	case SQLITE_FLOAT:
		d = sqlite3_column_double(st, c);
		if (isfinite(d))
			fprintf(f, "%.15g", d);
		else
			fputs("null", f);
		break;
	case SQLITE_BLOB: {
		const unsigned char *b = sqlite3_column_blob(st, c);
		int n = sqlite3_column_bytes(st, c);

		fputc('"', f);
		for (int i = 0; i < n; i++)
			fprintf(f, "%02x", b[i]);
		fputc('"', f);
		break;
	}
	default:
		nsk_out__json_str(f, (const char *)sqlite3_column_text(st, c));
	}
}

static int rows_json(const struct nsk_out *o, sqlite3_stmt *st,
		     const struct nsk_col_hint *hints)
{
	int ncol = sqlite3_column_count(st), rc, row = 0;

	fputc('[', o->f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int first = 1;

		fputs(row++ ? ",\n  {" : "\n  {", o->f);
		for (int c = 0; c < ncol; c++) {
			const char *name = sqlite3_column_name(st, c);
			const struct nsk_col_hint *h = hint_of(hints, name);

			if (h && (h->flags & NSK_COL_TEXT_ONLY))
				continue;
			if (!first)
				fputs(", ", o->f);
			first = 0;
			nsk_out__json_str(o->f, name);
			fputs(": ", o->f);
			json_value(o->f, st, c);
		}
		fputc('}', o->f);
	}
	fputs(row ? "\n]" : "]", o->f);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static void csv_field(FILE *f, const char *s)
{
	char *e = NULL;

	/* control bytes escaped: a cell is read on a terminal too */
	if (nsk_out__needs_escape(s)) {
		e = nsk_out__escaped(s);
		s = e ? e : "?";
	}
	if (!strpbrk(s, ",\"")) {
		fputs(s, f);
		free(e);
		return;
	}
	fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
	free(e);
}

static int rows_csv(const struct nsk_out *o, sqlite3_stmt *st,
		    const struct nsk_col_hint *hints)
{
	int ncol = sqlite3_column_count(st), rc, first = 1;

	for (int c = 0; c < ncol; c++) {
		const char *name = sqlite3_column_name(st, c);
		const struct nsk_col_hint *h = hint_of(hints, name);

		if (h && (h->flags & NSK_COL_TEXT_ONLY))
			continue;
		if (!first)
			fputc(',', o->f);
		first = 0;
		csv_field(o->f, name);
	}
	fputc('\n', o->f);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		first = 1;
		for (int c = 0; c < ncol; c++) {
			const struct nsk_col_hint *h =
				hint_of(hints, sqlite3_column_name(st, c));
			const char *v;

			if (h && (h->flags & NSK_COL_TEXT_ONLY))
				continue;
			if (!first)
				fputc(',', o->f);
			first = 0;
			if (sqlite3_column_type(st, c) == SQLITE_FLOAT) {
				fprintf(o->f, "%.15g", sqlite3_column_double(st, c));
				continue;
			}
			v = (const char *)sqlite3_column_text(st, c);
			csv_field(o->f, v ? v : "");
		}
		fputc('\n', o->f);
	}
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* ---- text ---- */

struct tcol {
	const char *label;
	unsigned flags;
	int numeric; /* right-aligned */
	int visible;
	size_t width;
	size_t frame; /* the longest first frame of its cells (a name) */
	int chain;    /* some cell is a call chain: room for " ..." after it */
};

struct table {
	struct tcol *col;
	int ncol;
	char **cell; /* row-major, buffered rows only */
	int *depth;  /* per buffered row: the tree depth (indentation) */
	size_t nrow, cap, bytes;
	int nocut; /* --width 0: every cell whole */
};

/* The text table measures its columns on the first rows only, then
 * streams: a report of a million rows, or of rows of long call chains,
 * holds at most this much (rows past it are cut to the widths found). */
#define BUFFER_ROWS 2000
#define BUFFER_BYTES (4u << 20)

/* A cell's text, escaped; indentation is not stored but added when
 * printed (a deep tree's rows would otherwise hold depth^2 blanks). */
static char *cell_text(sqlite3_stmt *st, int c, const struct tcol *col)
{
	char buf[64];
	const char *v;

	if (!col->visible)
		return strdup(""); /* data-only columns: never printed */
	switch (sqlite3_column_type(st, c)) {
	case SQLITE_NULL:
		return strdup("");
	case SQLITE_INTEGER:
		snprintf(buf, sizeof(buf), "%lld",
			 (long long)sqlite3_column_int64(st, c));
		return strdup(buf);
	case SQLITE_FLOAT:
		snprintf(buf, sizeof(buf),
			 (col->flags & NSK_COL_PCT) ? "%.2f%%" : "%.6g",
			 sqlite3_column_double(st, c));
		return strdup(buf);
	default:
		v = (const char *)sqlite3_column_text(st, c);
		return nsk_out__escaped(v ? v : "");
	}
}

static size_t indent_of(const struct tcol *col, int depth)
{
	return (col->flags & NSK_COL_INDENT) && depth > 0 ? 2 * (size_t)depth : 0;
}

/* Narrows the widest column of flags, one byte at a time, down to
 * floor_w (and, with whole, to its longest first frame, at most
 * WHOLE_MAX, with room for the " ..." of a chain cut after it: a name cut in its middle reads worse than a narrower
 * neighbour; a WHOLE column always, at most ANSWER_MAX: the row's answer,
 * "flush_the_write_ahead_journal_to_stable_storage", whole; longer, a C++
 * name is shortened to its scope and name).  room: what it could take. */
#define WHOLE_MAX 24
#define ANSWER_MAX 64
static size_t floor_of(const struct tcol *col, size_t floor_w, int whole)
{
	size_t max = (col->flags & NSK_COL_WHOLE) ? ANSWER_MAX : WHOLE_MAX;

	/* a chain cut after its first frame says so: " ..." (4 bytes) */
	size_t frame = (col->frame < max ? col->frame : max) + (col->chain ? 4 : 0);

	if ((whole || (col->flags & NSK_COL_WHOLE)) && frame > floor_w)
		return frame;
	return floor_w;
}

static size_t room(const struct table *t, unsigned flags, size_t floor_w)
{
	size_t r = 0;

	for (int c = 0; c < t->ncol; c++) {
		const struct tcol *col = &t->col[c];
		size_t fl = floor_of(col, floor_w, 0);

		if (col->visible && (col->flags & flags) && col->width > fl)
			r += col->width - fl;
	}
	return r;
}

static void shrink(struct table *t, unsigned flags, size_t floor_w,
		   int whole, size_t *excess)
{
	while (*excess) {
		struct tcol *widest = NULL;

		for (int c = 0; c < t->ncol; c++) {
			struct tcol *col = &t->col[c];
			size_t fl = floor_of(col, floor_w, whole);

			if (col->visible && (col->flags & flags) &&
			    col->width > fl &&
			    (!widest || col->width > widest->width))
				widest = col;
		}
		if (!widest)
			return;
		widest->width--;
		(*excess)--;
	}
}

static void fit(struct table *t, int width)
{
	size_t total = 0, excess;
	int nvis = 0, any_flex = 0;

	for (int c = 0; c < t->ncol; c++) {
		if (!t->col[c].visible)
			continue;
		total += t->col[c].width;
		nvis++;
		any_flex |= !!(t->col[c].flags & NSK_COL_FLEX);
	}
	total += nvis ? 2 * (size_t)(nvis - 1) : 0;
	if (width <= 0 || total <= (size_t)width)
		return;
	if (!any_flex) /* no hints (--sql): any text column may give way */
		for (int c = 0; c < t->ncol; c++)
			if (!t->col[c].numeric)
				t->col[c].flags |= NSK_COL_FLEX;
	excess = total - (size_t)width;
	shrink(t, NSK_COL_FLEX, 24, 0, &excess);
	shrink(t, NSK_COL_NARROW, 10, 0, &excess);
	shrink(t, NSK_COL_FLEX, 8, 1, &excess);
	/* Past whole names, a column gives way only when that makes the
	 * table fit: the flexible ones first (as before), then the narrow
	 * ones (comm, module, errnos), and a WHOLE one (the top caller)
	 * never; otherwise the table is printed wider than asked, whole.
	 * The columns that cannot give way (numbers, syscall names) take 78
	 * of 80 columns in --by syscall, which cut "slow_pipe_read" to
	 * "s...read" and "sc-writer" to "s...iter" for a row still past 80:
	 * the row lost its answer. */
	if (room(t, NSK_COL_NARROW | NSK_COL_FLEX, 8) >= excess) {
		shrink(t, NSK_COL_FLEX, 8, 0, &excess);
		shrink(t, NSK_COL_NARROW, 8, 0, &excess);
	}
}

static void print_cell(FILE *f, const char *s, size_t indent,
		       const struct tcol *col, int last, int nocut, int header)
{
	char shortened[4096], *full = NULL;
	size_t len = strlen(s) + indent;
	const char *sp;
	int pad;

	if (indent) {
		/* one row's indentation, made for the print and let go */
		full = malloc(len + 1);
		if (!full)
			return;
		memset(full, ' ', indent);
		strcpy(full + indent, s);
		s = full;
	}
	if (nocut) {
		; /* --width 0: whole, the columns after it pushed right */
	} else if (len > col->width && header && !indent &&
		   (sp = memrchr(s, ' ', col->width + 1)) && sp > s) {
		/* a header: whole words ("top caller", not "t...ler") */
		snprintf(shortened, sizeof(shortened), "%.*s", (int)(sp - s), s);
		s = shortened;
		len = strlen(s);
	} else if (len > col->width && !indent && strstr(s, " <- ")) {
		/* a call chain: whole frames from the leaf, as many as fit */
		nsk_out__fit_frames(s, col->width < sizeof(shortened) - 1
					       ? col->width : sizeof(shortened) - 1,
				    shortened);
		s = shortened;
		len = strlen(s);
	} else if (len > col->width && (col->flags & NSK_COL_CUT_END)) {
		size_t keep = col->width < sizeof(shortened) - 1 ?
			      col->width : sizeof(shortened) - 1;

		/* what comes first matters most */
		keep = keep > 3 ? keep - 3 : 0;
		memcpy(shortened, s, keep);
		memcpy(shortened + keep, "...", 4);
		shortened[col->width < 3 ? col->width : keep + 3] = '\0';
		s = shortened;
		len = strlen(s);
	} else if (len > col->width) {
		nsk_out__shorten(s, col->width < sizeof(shortened) - 1
					    ? col->width : sizeof(shortened) - 1,
				 shortened);
		s = shortened;
		len = strlen(s);
	}
	pad = len < col->width ? (int)(col->width - len) : 0;
	if (col->numeric)
		fprintf(f, "%*s%s", pad, "", s);
	else if (last)
		fputs(s, f);
	else
		fprintf(f, "%s%*s", s, pad, "");
	free(full);
}

static void print_line(FILE *f, const struct table *t, char **cells, int depth,
		       int header)
{
	int last = -1, first = 1;

	/* No trailing blanks: the line ends at its last non-empty cell. */
	for (int c = 0; c < t->ncol; c++)
		if (t->col[c].visible && cells[c][0])
			last = c;
	for (int c = 0; c <= last; c++) {
		if (!t->col[c].visible)
			continue;
		if (!first)
			fputs("  ", f);
		first = 0;
		print_cell(f, cells[c], indent_of(&t->col[c], depth),
			   &t->col[c], c == last, t->nocut, header);
	}
	fputc('\n', f);
}

/* Reads the current row of st into row (ncol cells); the widths grow to
 * fit it when measure is set.  0 or -ENOMEM (row freeable either way). */
static int read_row(struct table *t, sqlite3_stmt *st, char **row, int depth,
		    int measure)
{
	for (int c = 0; c < t->ncol; c++)
		row[c] = NULL;
	for (int c = 0; c < t->ncol; c++) {
		int type = sqlite3_column_type(st, c);
		size_t len;

		if (t->col[c].numeric < 0 && type != SQLITE_NULL)
			t->col[c].numeric = type == SQLITE_INTEGER ||
					    type == SQLITE_FLOAT;
		row[c] = cell_text(st, c, &t->col[c]);
		if (!row[c])
			return -ENOMEM;
		len = strlen(row[c]);
		t->bytes += len;
		if (measure && !t->col[c].numeric &&
		    nsk_out__first_frame(row[c]) > t->col[c].frame)
			t->col[c].frame = nsk_out__first_frame(row[c]);
		if (measure && !t->col[c].numeric && strstr(row[c], " <- "))
			t->col[c].chain = 1;
		len += indent_of(&t->col[c], depth);
		if (measure && len > t->col[c].width)
			t->col[c].width = len;
	}
	return 0;
}

static void free_row(const struct table *t, char **row)
{
	for (int c = 0; c < t->ncol; c++) {
		free(row[c]);
		row[c] = NULL;
	}
}

static int rows_text(const struct nsk_out *o, sqlite3_stmt *st,
		     const struct nsk_col_hint *hints)
{
	struct table t = { 0 };
	char **labels = NULL, **row = NULL;
	int rc = SQLITE_DONE, depth_col = -1, err = 0, done = 0;

	t.ncol = sqlite3_column_count(st);
	t.col = calloc((size_t)t.ncol, sizeof(*t.col));
	labels = calloc((size_t)t.ncol, sizeof(*labels));
	row = calloc((size_t)t.ncol, sizeof(*row));
	if (!t.col || !labels || !row) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int c = 0; c < t.ncol; c++) {
		const char *name = sqlite3_column_name(st, c);
		const struct nsk_col_hint *h = hint_of(hints, name);

		t.col[c].label = h && h->label ? h->label : name;
		t.col[c].flags = h ? h->flags : 0;
		t.col[c].visible = !(t.col[c].flags & NSK_COL_DATA_ONLY);
		t.col[c].width = strlen(t.col[c].label);
		t.col[c].numeric = -1; /* decided by the first value */
		labels[c] = (char *)t.col[c].label;
		if (!strcmp(name, "depth"))
			depth_col = c;
	}
	/* The first rows, to measure the columns. */
	while (t.nrow < BUFFER_ROWS && t.bytes < BUFFER_BYTES &&
	       (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int depth = depth_col >= 0 ? sqlite3_column_int(st, depth_col) : 0;

		if (t.nrow == t.cap) {
			size_t cap = t.cap ? t.cap * 2 : 64;
			char **cell = realloc(t.cell, cap * (size_t)t.ncol *
							      sizeof(*cell));
			int *dp = cell ? realloc(t.depth, cap * sizeof(*dp)) : NULL;

			if (cell)
				t.cell = cell;
			if (dp)
				t.depth = dp;
			if (!cell || !dp) {
				err = -ENOMEM;
				goto cleanup;
			}
			t.cap = cap;
		}
		t.depth[t.nrow] = depth;
		err = read_row(&t, st, &t.cell[t.nrow++ * (size_t)t.ncol], depth, 1);
		if (err)
			goto cleanup;
	}
	if (t.nrow < BUFFER_ROWS && t.bytes < BUFFER_BYTES) {
		if (rc != SQLITE_DONE) {
			err = -EIO;
			goto cleanup;
		}
		done = 1;
	}
	for (int c = 0; c < t.ncol; c++)
		if (t.col[c].numeric < 0)
			t.col[c].numeric = 0;
	t.nocut = o->width <= 0;
	fit(&t, o->width);
	print_line(o->f, &t, labels, 0, 1);
	for (size_t r = 0; r < t.nrow; r++)
		print_line(o->f, &t, &t.cell[r * (size_t)t.ncol], t.depth[r], 0);
	/* The rest, one row at a time, in the widths found. */
	while (!done && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int depth = depth_col >= 0 ? sqlite3_column_int(st, depth_col) : 0;

		err = read_row(&t, st, row, depth, 0);
		if (!err)
			print_line(o->f, &t, row, depth, 0);
		free_row(&t, row);
		if (err)
			goto cleanup;
	}
	if (!done && rc != SQLITE_DONE)
		err = -EIO;
cleanup:
	for (size_t i = 0; i < t.nrow * (size_t)t.ncol; i++)
		free(t.cell[i]);
	free(t.cell);
	free(t.depth);
	free(t.col);
	free(labels);
	free(row);
	return err;
}

int nsk_out__rows(const struct nsk_out *o, sqlite3_stmt *st,
		  const struct nsk_col_hint *hints)
{
	switch (o->fmt) {
	case NSK_FMT_JSON:
		return rows_json(o, st, hints);
	case NSK_FMT_CSV:
		return rows_csv(o, st, hints);
	default:
		return rows_text(o, st, hints);
	}
}

int nsk_out__term_width(void)
{
	struct winsize ws;

	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) &&
	    ws.ws_col)
		return ws.ws_col;
	return 80;
}
