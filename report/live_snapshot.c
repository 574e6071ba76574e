/* The text snapshot: what nusku live prints each interval when its output
 * is not a terminal (a pipe, a log, a test).  Compact on purpose: a status
 * line, then each view's top rows, in 80 columns unless $COLUMNS says more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/live.h"
#include "report/output.h"

static int out_width(void)
{
	const char *c = getenv("COLUMNS");
	int w = c ? atoi(c) : 0;

	return w >= 40 && w <= 1000 ? w : 80;
}

/* One line of a table into buf (size > width + 2), without trailing blanks. */
static void table_line(char *buf, const struct nsk_live_table *t,
		       const int *widths, int row)
{
	char cell[1024];
	size_t n = 0;

	buf[n++] = ' ';
	for (int c = 0; c < t->ncols; c++) {
		const char *s = row < 0 ? t->cols[c].name
					: nsk_live_table__cell(t, row, c);

		nsk_live__fit(cell, s, widths[c] < 1000 ? widths[c] : 999,
			      t->cols[c].align);
		n += sprintf(buf + n, " %s", cell);
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
}

static void print_table(FILE *f, const struct nsk_live_table *t, int width)
{
	int widths[16];
	char *line;
	size_t size = 16;

	if (!t->nrows) {
		fprintf(f, "  %s\n", t->note[0] ? t->note : "(empty)");
		return;
	}
	nsk_live_table__layout(t, width - 2, widths);
	for (int c = 0; c < t->ncols; c++)
		size += (widths[c] < 1000 ? widths[c] : 999) + 1;
	line = malloc(size);
	if (!line)
		return;
	for (int r = -1; r < t->nrows; r++) {
		table_line(line, t, widths, r);
		fprintf(f, "%s\n", line);
	}
	free(line);
}

void nsk_live__status_line(char *buf, size_t len,
			   const struct nsk_live_status *st, double elapsed_s)
{
	char recs[16], lost[16];
	const char *state;

	nsk_live__fmt_count(recs, sizeof(recs), (double)st->records);
	nsk_live__fmt_count(lost, sizeof(lost), (double)st->lost);
	if (st->ended)
		state = st->clean_end ? "ended" : "ended early";
	else if (st->paused)
		state = "paused";
	else
		state = "live";
	snprintf(buf, len, "%s  %.2fs recorded  %s records  lost %s%s  [%s]",
		 st->source ? st->source : "", st->span_s, recs, lost,
		 st->dropped ? "  dropped tail" : "", state);
	(void)elapsed_s;
}

int nsk_live_snapshot__print(FILE *f, struct nsk_live_db *db,
			     const struct nsk_live_status *st,
			     const struct nsk_live_opts *o, double elapsed_s)
{
	int width = out_width();
	int only = o->view ? nsk_live_view__by_name(o->view) : -1;
	char line[512];

	nsk_live__status_line(line, sizeof(line), st, elapsed_s);
	/* +T: seconds since live started, so a log shows the pace. */
	if (st->age_s >= 0)
		fprintf(f, "== nusku live +%.2fs age %.3fs: ", elapsed_s,
			st->age_s);
	else
		fprintf(f, "== nusku live +%.2fs: ", elapsed_s);
	/* names from the recording (loss sources) and the input's name:
	 * escaped like every cell (nsk_live_table__add) */
	nsk_out__put_escaped(f, line);
	fputc('\n', f);
	if (st->message[0]) {
		fputs("   ", f);
		nsk_out__put_escaped(f, st->message);
		fputc('\n', f);
	}
	if (st->losses[0]) {
		fputs("   lost: ", f);
		nsk_out__put_escaped(f, st->losses);
		fputc('\n', f);
	}
	for (int v = 0; v < NSK_LIVE_NVIEWS; v++) {
		struct nsk_live_query q = {
			.view = v,
			.window_ns = (uint64_t)(o->window_s * 1e9),
			.limit = o->top,
		};
		struct nsk_live_table t;

		if (only >= 0 && v != only)
			continue;
		if (nsk_live_view__query(db, &q, &t) < 0)
			continue;
		fprintf(f, "-- %d %s\n", v + 1, t.title);
		print_table(f, &t, width);
		nsk_live_table__release(&t);
	}
	fputc('\n', f);
	fflush(f);
	return ferror(f) ? -1 : 0;
}
