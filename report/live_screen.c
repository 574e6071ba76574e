/* The full-screen live view (ncursesw): a tab bar, a status line, the
 * current view's table and a key line.  Keys come from /dev/tty, not stdin,
 * so `nusku record -o - | nusku live -` still takes keys.
 *
 * Keys: 1-5 or Tab/Shift-Tab switch views, s cycles the sort, space or p
 * pauses (the stream is still read; only the picture holds), w cycles the
 * last window (1, 5, 30 s), t and P ask for a thread or process id (empty:
 * all), c clears the filter, q quits.
 * Readable at 80x24; the name column takes any width beyond that. */
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "report/live.h"

struct nsk_live_screen {
	SCREEN *scr;
	FILE *tty;
	int view;
	int sort[NSK_LIVE_NVIEWS];
	int paused;
	uint32_t pid;
	uint32_t tid;
	uint64_t window_ns;
	struct nsk_live_table cache; /* the picture held while paused */
	int have_cache;
	int cache_view;
	int dirty;
};

static const char *const short_names[NSK_LIVE_NVIEWS] = {
	"CPU", "Memory", "Blocking", "Syscalls", "Network"
};

int nsk_live_screen__new(const struct nsk_live_opts *o,
			 struct nsk_live_screen **out)
{
	struct nsk_live_screen *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return -ENOMEM;
	/* ncursesw draws names in the user's encoding (UTF-8 symbols). */
	setlocale(LC_CTYPE, "");
	sc->tty = fopen("/dev/tty", "re");
	if (!sc->tty) {
		free(sc);
		return -ENOTTY;
	}
	sc->scr = newterm(NULL, stdout, sc->tty);
	if (!sc->scr) {
		fclose(sc->tty);
		free(sc);
		return -ENOTTY;
	}
	set_term(sc->scr);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	sc->window_ns = (uint64_t)(o->window_s * 1e9);
	if (o->view && nsk_live_view__by_name(o->view) >= 0)
		sc->view = nsk_live_view__by_name(o->view);
	sc->dirty = 1;
	*out = sc;
	return 0;
}

/* Reads a number on the last line; 0 for empty or Esc. */
static uint32_t prompt_number(const char *what)
{
	char buf[16] = "";
	size_t n = 0;
	int ch;

	nodelay(stdscr, FALSE);
	curs_set(1);
	for (;;) {
		move(LINES - 1, 0);
		clrtoeol();
		attron(A_BOLD);
		printw("%s id (empty: all): %s", what, buf);
		attroff(A_BOLD);
		refresh();
		ch = getch();
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
			break;
		if (ch == 27) {
			n = 0;
			break;
		}
		if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n)
			buf[--n] = '\0';
		else if (isdigit(ch) && n + 1 < sizeof(buf))
			buf[n++] = (char)ch, buf[n] = '\0';
	}
	curs_set(0);
	nodelay(stdscr, TRUE);
	buf[n] = '\0';
	return n ? (uint32_t)strtoul(buf, NULL, 10) : 0;
}

int nsk_live_screen__keys(struct nsk_live_screen *sc)
{
	int ch;

	while ((ch = getch()) != ERR) {
		sc->dirty = 1;
		switch (ch) {
		case 'q':
		case 'Q':
			return 1;
		case '\t':
			sc->view = (sc->view + 1) % NSK_LIVE_NVIEWS;
			break;
		case KEY_BTAB:
			sc->view = (sc->view + NSK_LIVE_NVIEWS - 1) %
				   NSK_LIVE_NVIEWS;
			break;
		case 's':
			sc->sort[sc->view] = (sc->sort[sc->view] + 1) %
					     nsk_live_view__nsorts(sc->view);
			break;
		case ' ':
		case 'p':
			sc->paused = !sc->paused;
			break;
		case 't':
			sc->tid = prompt_number("thread");
			break;
		case 'P':
			sc->pid = prompt_number("process");
			break;
		case 'c':
			sc->pid = sc->tid = 0;
			break;
		case 'w':
			/* The last window: 1 s, 5 s, 30 s, then round again. */
			sc->window_ns = sc->window_ns < 5000000000ull ? 5000000000ull
				      : sc->window_ns < 30000000000ull ? 30000000000ull
									: 1000000000ull;
			break;
		case KEY_RESIZE:
			break;
		default:
			if (ch >= '1' && ch < '1' + NSK_LIVE_NVIEWS)
				sc->view = ch - '1';
			else
				sc->dirty = 0;
			break;
		}
	}
	return 0;
}

int nsk_live_screen__fd(const struct nsk_live_screen *sc)
{
	return fileno(sc->tty);
}

int nsk_live_screen__paused(const struct nsk_live_screen *sc)
{
	return sc->paused;
}

static void draw_tabs(struct nsk_live_screen *sc)
{
	move(0, 0);
	clrtoeol();
	attron(A_BOLD);
	addstr("nusku live ");
	attroff(A_BOLD);
	for (int v = 0; v < NSK_LIVE_NVIEWS; v++) {
		char tab[32];

		snprintf(tab, sizeof(tab), " %d %s ", v + 1, short_names[v]);
		if (v == sc->view)
			attron(A_REVERSE | A_BOLD);
		addnstr(tab, COLS - getcurx(stdscr) > 0
				     ? COLS - getcurx(stdscr) : 0);
		if (v == sc->view)
			attroff(A_REVERSE | A_BOLD);
	}
}

static void draw_table(const struct nsk_live_table *t, int top, int bottom)
{
	int widths[16];
	char cell[1024];
	int y = top;

	move(y, 0);
	clrtoeol();
	attron(A_BOLD);
	addnstr(t->title, COLS);
	attroff(A_BOLD);
	y++;
	if (!t->nrows) {
		move(y + 1, 2);
		addnstr(t->note[0] ? t->note : "(empty)", COLS - 2);
		return;
	}
	nsk_live_table__layout(t, COLS - 1, widths);
	for (int r = -1; r < t->nrows && y < bottom; r++, y++) {
		int x = 0;

		move(y, 0);
		if (r < 0)
			attron(A_REVERSE);
		for (int c = 0; c < t->ncols && c < 16; c++) {
			const char *s = r < 0 ? t->cols[c].name
					      : nsk_live_table__cell(t, r, c);
			int w = widths[c] < 1000 ? widths[c] : 999;

			nsk_live__fit(cell, s, w, t->cols[c].align);
			if (x + 1 >= COLS)
				break;
			mvaddnstr(y, x, " ", 1);
			mvaddnstr(y, x + 1, cell, COLS - x - 1);
			x += w + 1;
		}
		if (r < 0) {
			for (; x < COLS; x++)
				mvaddch(y, x, ' ');
			attroff(A_REVERSE);
		}
	}
}

void nsk_live_screen__draw(struct nsk_live_screen *sc, struct nsk_live_db *db,
			   const struct nsk_live_status *st)
{
	nsk_live_db__keep(db, sc->window_ns);
	struct nsk_live_status s = *st;
	char line[512], filt[64] = "";
	int rows = LINES - 6;

	s.paused = sc->paused;
	erase();
	draw_tabs(sc);

	nsk_live__status_line(line, sizeof(line), &s, 0);
	mvaddnstr(1, 0, line, COLS);
	if (sc->pid || sc->tid)
		snprintf(filt, sizeof(filt), "  filter: %s %u",
			 sc->tid ? "thread" : "process",
			 sc->tid ? sc->tid : sc->pid);
	snprintf(line, sizeof(line), "sort: %s  window: %.1fs%s",
		 nsk_live_view__sort_name(sc->view, sc->sort[sc->view]),
		 sc->window_ns / 1e9, filt);
	mvaddnstr(2, 0, line, COLS);
	if (st->message[0]) {
		attron(A_BOLD);
		mvaddnstr(3, 0, st->message, COLS);
		attroff(A_BOLD);
	} else if (st->losses[0]) {
		snprintf(line, sizeof(line), "lost: %s", st->losses);
		mvaddnstr(3, 0, line, COLS);
	}

	if (!sc->paused || !sc->have_cache || sc->cache_view != sc->view ||
	    sc->dirty) {
		struct nsk_live_query q = {
			.view = sc->view,
			.sort = sc->sort[sc->view],
			.pid = sc->pid,
			.tid = sc->tid,
			.window_ns = sc->window_ns,
			.limit = rows > 1 ? rows : 1,
		};

		if (sc->have_cache)
			nsk_live_table__release(&sc->cache);
		sc->have_cache = 0;
		if (nsk_live_view__query(db, &q, &sc->cache) == 0) {
			sc->have_cache = 1;
			sc->cache_view = sc->view;
		}
	}
	if (sc->have_cache)
		draw_table(&sc->cache, 4, LINES - 1);

	attron(A_REVERSE);
	move(LINES - 1, 0);
	clrtoeol();
	addnstr(COLS >= 80
			? " 1-5/Tab view  s sort  w window  space pause  t/P thread/process filter  q quit"
			: " 1-5 view s sort w window spc pause t/P filter q",
		COLS);
	for (int x = getcurx(stdscr); x < COLS && x > 0; x++)
		addch(' ');
	attroff(A_REVERSE);
	refresh();
	sc->dirty = 0;
}

void nsk_live_screen__free(struct nsk_live_screen *sc)
{
	if (!sc)
		return;
	if (sc->have_cache)
		nsk_live_table__release(&sc->cache);
	if (sc->scr) {
		endwin();
		delscreen(sc->scr);
	}
	if (sc->tty)
		fclose(sc->tty);
	free(sc);
}
