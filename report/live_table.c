/* The tables nusku live draws: rows of strings with column hints, so the
 * full screen and the text snapshot lay out the same data the same way.
 * Layout fits any width: number columns keep their width, name columns
 * take what is left and are cut with '~' when they must be. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/live.h"
#include "report/output.h"

void nsk_live_table__init(struct nsk_live_table *t, const char *title,
			  const struct nsk_live_col *cols, int ncols)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->title, sizeof(t->title), "%s", title);
	t->cols = cols;
	t->ncols = ncols;
}

int nsk_live_table__add(struct nsk_live_table *t, const char *const *cells)
{
	char **nc;

	if (t->nrows + 1 > t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;

		nc = realloc(t->cells, (size_t)cap * t->ncols * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		t->cells = nc;
		t->cap = cap;
	}
	for (int c = 0; c < t->ncols; c++) {
		/* names come from the recording: no control byte reaches
		 * the snapshot or the screen (report/escape.c) */
		char *s = nsk_out__escaped(cells[c] ? cells[c] : "");

		if (!s) {
			while (c--)
				free(t->cells[t->nrows * t->ncols + c]);
			return -ENOMEM;
		}
		t->cells[t->nrows * t->ncols + c] = s;
	}
	t->nrows++;
	return 0;
}

const char *nsk_live_table__cell(const struct nsk_live_table *t, int row,
				 int col)
{
	if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
		return "";
	return t->cells[row * t->ncols + col];
}

void nsk_live_table__layout(const struct nsk_live_table *t, int width,
			    int *widths)
{
	int total = 0, nflex = 0;

	for (int c = 0; c < t->ncols; c++) {
		int w = (int)strlen(t->cols[c].name);

		if (w < t->cols[c].min_width)
			w = t->cols[c].min_width;
		for (int r = 0; r < t->nrows; r++) {
			int l = (int)strlen(nsk_live_table__cell(t, r, c));

			if (l > w)
				w = l;
		}
		widths[c] = w;
		total += w + (c ? 1 : 0);
		if (t->cols[c].flex)
			nflex++;
	}
	/* Too wide: the flex (name) columns give up the excess, each
	 * keeping at least 8 columns; numbers never shrink. */
	while (total > width && nflex) {
		int excess = total - width, shrunk = 0;

		for (int c = 0; c < t->ncols && excess > 0; c++) {
			int give;

			if (!t->cols[c].flex || widths[c] <= 8)
				continue;
			give = (excess + nflex - 1) / nflex;
			if (widths[c] - give < 8)
				give = widths[c] - 8;
			widths[c] -= give;
			total -= give;
			excess -= give;
			shrunk += give;
		}
		if (!shrunk)
			break;
	}
}

void nsk_live__fit(char *buf, const char *s, int w, int align)
{
	int l = (int)strlen(s);

	if (w <= 0) {
		buf[0] = '\0';
		return;
	}
	if (l > w) {
		/* Keep the end of a name (the function, not the namespace);
		 * keep the start of anything right-aligned. */
		if (align == NSK_LIVE_RIGHT) {
			memcpy(buf, s, w - 1);
			buf[w - 1] = '~';
		} else {
			buf[0] = '~';
			memcpy(buf + 1, s + l - (w - 1), w - 1);
		}
		buf[w] = '\0';
		return;
	}
	if (align == NSK_LIVE_RIGHT)
		snprintf(buf, w + 1, "%*s", w, s);
	else
		snprintf(buf, w + 1, "%-*s", w, s);
}

void nsk_live_table__release(struct nsk_live_table *t)
{
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

void nsk_live__fmt_count(char *buf, size_t len, double v)
{
	if (v < 10000)
		snprintf(buf, len, "%.0f", v);
	else if (v < 1e6)
		snprintf(buf, len, "%.1fK", v / 1e3);
	else if (v < 1e9)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else
		snprintf(buf, len, "%.1fG", v / 1e9);
}

void nsk_live__fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

void nsk_live__fmt_bytes(char *buf, size_t len, double b)
{
	const char *neg = b < 0 ? "-" : "";

	if (b < 0)
		b = -b;
	if (b < 1024)
		snprintf(buf, len, "%s%.0fB", neg, b);
	else if (b < 1024.0 * 1024)
		snprintf(buf, len, "%s%.1fK", neg, b / 1024);
	else if (b < 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%s%.1fM", neg, b / (1024.0 * 1024));
	else
		snprintf(buf, len, "%s%.2fG", neg, b / (1024.0 * 1024 * 1024));
}
