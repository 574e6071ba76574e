/* The process picker of `nusku live` with no target: nusku ps's rows full
 * screen, htop's keys (arrows, PgUp/PgDn, Home/End, / to filter, F6 or s
 * to sort, Enter to pick, q to leave), r to start saving the process to a
 * file (a background session, `nusku record --background`) and x to stop
 * it (`nusku stop`), on the host the list comes from (--ssh: over ssh).  The rows come again every two seconds; the cursor
 * stays on its process.  Names and command lines are escaped before they
 * reach the screen, as everywhere else.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/picker.h"
#include "controller/remote.h"
#include "report/output.h"

#define REFRESH_MS 2000

struct picker {
	const struct nsk_ps_opts *o;
	struct nsk_ps_row *rows; /* all of them */
	int n;
	int *shown; /* indexes of the rows that match, in order */
	int nshown;
	int sort;
	char filter[64];
	int cursor, top; /* within shown */
	int cursor_pid;	 /* kept across refreshes */
	char msg[256];	 /* bottom line: an error, or what a row lacks */
};

static const char *const sort_names[] = { "cpu", "rss", "pid", "name" };

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The rows that match, sorted, and the cursor on the process it was on. */
static int arrange(struct picker *p)
{
	int *v = realloc(p->shown, (size_t)(p->n ? p->n : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	p->shown = v;
	nsk_ps__sort(p->rows, p->n, p->sort);
	p->nshown = 0;
	for (int i = 0; i < p->n; i++)
		if (!p->rows[i].p.kernel && nsk_ps__match(&p->rows[i], *p->filter ? p->filter : NULL))
			p->shown[p->nshown++] = i;
	p->cursor = 0;
	for (int i = 0; i < p->nshown; i++)
		if (p->rows[p->shown[i]].p.pid == p->cursor_pid)
			p->cursor = i;
	return 0;
}

static int collect(struct picker *p)
{
	struct nsk_ps_row *rows = NULL;
	int n = 0, err;

	if (p->o->ssh_host)
		err = nsk_ps__remote(p->o, &rows, &n, p->msg, sizeof(p->msg));
	else
		err = nsk_ps__collect(p->o, &rows, &n);
	if (err < 0) {
		if (!p->o->ssh_host)
			snprintf(p->msg, sizeof(p->msg), "cannot list processes: %s", strerror(-err));
		return err;
	}
	if (!p->o->ssh_host)
		nsk_ps__sessions(rows, n); /* the remote's come in its rows */
	nsk_ps__free_rows(p->rows, p->n);
	p->rows = rows;
	p->n = n;
	return arrange(p);
}

/* At most w columns of s, escaped. */
static void put(int y, int x, const char *s, int w)
{
	char *e = nsk_out__escaped(s ? s : "");

	if (w > 0)
		mvaddnstr(y, x, e ? e : "?", w);
	free(e);
}

static void draw(struct picker *p)
{
	int body = LINES - 4;
	char buf[256];

	erase();
	snprintf(buf, sizeof(buf), "nusku live: pick a process%s%s   (Enter view, / filter, "
		 "F6/s sort, r/x save/stop, q quit)", p->o->ssh_host ? " on " : "",
		 p->o->ssh_host ? p->o->ssh_host : "");
	attron(A_BOLD);
	put(0, 0, buf, COLS);
	attroff(A_BOLD);
	snprintf(buf, sizeof(buf), "sort: %s   filter: %s   %d of %d processes", sort_names[p->sort],
		 *p->filter ? p->filter : "(none)", p->nshown, p->n);
	put(1, 0, buf, COLS);
	attron(A_REVERSE);
	snprintf(buf, sizeof(buf), "%-*s", COLS, "    PID USER       CPU%   RSS THR RUNTIME FP COMMAND");
	put(2, 0, buf, COLS);
	attroff(A_REVERSE);
	if (p->cursor < p->top)
		p->top = p->cursor;
	if (body > 0 && p->cursor >= p->top + body)
		p->top = p->cursor - body + 1;
	for (int i = 0; i < body && p->top + i < p->nshown; i++) {
		const struct nsk_ps_row *r = &p->rows[p->shown[p->top + i]];
		char rss[16];
		int at = p->top + i == p->cursor;

		nsk_ps__fmt_bytes(rss, sizeof(rss), r->p.rss_bytes);
		snprintf(buf, sizeof(buf), "%7d %-9.9s %5.1f %5s %3d %-7.7s %-2s ", r->p.pid, r->user,
			 r->p.cpu_pct, rss, r->p.threads, r->runtime ? r->runtime : "?",
			 r->frame_pointers > 0 ? "y" : r->frame_pointers == 0 ? "n" : "?");
		if (at)
			attron(A_REVERSE);
		else if (!r->can_profile)
			attron(A_DIM);
		if (*r->sessions) { /* recorded now: its sessions first, as ps */
			size_t l = strlen(buf);

			snprintf(buf + l, sizeof(buf) - l, "[%.100s] ", r->sessions);
		}
		mvhline(3 + i, 0, ' ', COLS);
		put(3 + i, 0, buf, COLS);
		put(3 + i, (int)strlen(buf), *r->p.cmdline ? r->p.cmdline : r->p.comm,
		    COLS - (int)strlen(buf));
		attroff(A_REVERSE | A_DIM);
	}
	if (!*p->msg && p->nshown) {
		const struct nsk_ps_row *r = &p->rows[p->shown[p->cursor]];

		if (!r->can_profile)
			snprintf(p->msg, sizeof(p->msg), "pid %d cannot be profiled: %s", r->p.pid,
				 r->missing);
	}
	put(LINES - 1, 0, p->msg, COLS);
	refresh();
}

/* Runs `nusku ARGS...` with its output (both streams) into out, the first
 * line kept; its exit status, or -errno. */
static int run_nusku(char *const *argv, char *out, size_t outlen)
{
	int fds[2], st = 0;
	size_t n = 0;
	ssize_t r;
	pid_t child;

	*out = '\0';
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(fds[1]);
	if (child < 0) {
		close(fds[0]);
		return -errno;
	}
	while (n + 1 < outlen && (r = read(fds[0], out + n, outlen - 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	close(fds[0]);
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/* nusku WORDS... here (argv[0] "nusku"), or over ssh on the host the rows
 * come from, with the --ssh-opt words and --remote-nusku of the list:
 * the exit status, and in out (NUL-terminated) what it said, its error
 * line when it failed. */
static int nusku_there(const struct picker *p, char *const *argv, char *out, size_t outlen)
{
	struct nsk_remote r = { p->o->ssh_host, p->o->ssh_opts, p->o->nssh_opts,
				p->o->remote_nusku };
	char *buf = NULL;
	size_t len = 0;
	int st;

	if (!p->o->ssh_host)
		return run_nusku(argv, out, outlen);
	*out = '\0';
	st = nsk_remote__run(&r, (const char *const *)argv + 1, &buf, &len, out, outlen);
	if (st == 0) {
		if (len >= outlen)
			len = outlen - 1;
		memcpy(out, buf ? buf : "", len);
		out[len] = '\0';
	}
	free(buf);
	return st;
}

/* r: the process under the cursor recorded to a file in the background,
 * on the host it runs on. */
static void start_saving(struct picker *p, const struct nsk_ps_row *r)
{
	char spid[16], out[512];
	char *argv[] = { "nusku", "record", "--background", "-q", "-p", spid, NULL };
	int st;

	snprintf(spid, sizeof(spid), "%d", r->p.pid);
	st = nusku_there(p, argv, out, sizeof(out));
	if (st == 0) {
		char *tab = strchr(out, '\t'), *nl;

		if (tab)
			*tab++ = '\0';
		if (tab && (nl = strchr(tab, '\n')))
			*nl = '\0';
		snprintf(p->msg, sizeof(p->msg), "saving pid %d as session %.64s to %.120s (x stops it)",
			 r->p.pid, out, tab ? tab : "?");
	} else {
		snprintf(p->msg, sizeof(p->msg), "r: %.200s", *out ? out : "the recording did not start");
	}
}

/* x: the first session recording the process under the cursor ended. */
static void stop_saving(struct picker *p, const struct nsk_ps_row *r)
{
	char name[256], out[512];
	char *argv[] = { "nusku", "stop", name, NULL };

	if (!*r->sessions) {
		snprintf(p->msg, sizeof(p->msg), "x: no session records pid %d", r->p.pid);
		return;
	}
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(r->sessions, ","), r->sessions);
	if (nusku_there(p, argv, out, sizeof(out)) == 0)
		snprintf(p->msg, sizeof(p->msg), "session %.100s stopped; its file is whole", name);
	else
		snprintf(p->msg, sizeof(p->msg), "x: %.200s", *out ? out : "stop failed");
}

/* Reads a filter on the last line: Enter keeps it, Esc leaves the old. */
static void ask_filter(struct picker *p)
{
	char buf[sizeof(p->filter)] = "";
	size_t n = 0;

	timeout(-1);
	for (;;) {
		int c;

		mvhline(LINES - 1, 0, ' ', COLS);
		mvaddstr(LINES - 1, 0, "filter (pid, name, user, cgroup): ");
		put(LINES - 1, 34, buf, COLS - 34);
		refresh();
		c = getch();
		if (c == '\n' || c == KEY_ENTER) {
			snprintf(p->filter, sizeof(p->filter), "%s", buf);
			break;
		}
		if (c == 27)
			break;
		if ((c == KEY_BACKSPACE || c == 127 || c == 8) && n)
			buf[--n] = '\0';
		else if (c >= 32 && c < 127 && n + 1 < sizeof(buf)) {
			buf[n++] = (char)c;
			buf[n] = '\0';
		}
	}
	timeout(200);
}

int nsk_picker__run(const struct nsk_ps_opts *o, int *sort, char *filter, size_t filterlen,
		    int *pid)
{
	struct picker p = { .o = o, .sort = *sort, .cursor_pid = *pid };
	long long next = 0;
	int rc = 0, err;

	*pid = 0;
	snprintf(p.filter, sizeof(p.filter), "%s", filter);
	setlocale(LC_ALL, "");
	if (!initscr()) {
		fprintf(stderr, "nusku live: cannot use the terminal\n");
		return -ENOTTY;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(200);
	for (;;) {
		int c;

		if (now_ms() >= next) {
			/* the bottom line stays until a key: it may say what r or x did */
			err = collect(&p);
			if (err < 0 && !p.n) {
				rc = err;
				break;
			}
			next = now_ms() + REFRESH_MS;
		}
		draw(&p);
		c = getch();
		if (c == ERR)
			continue;
		*p.msg = '\0';
		if (c == 'q' || c == 27)
			break;
		if ((c == KEY_DOWN || c == 'j') && p.cursor + 1 < p.nshown)
			p.cursor++;
		else if ((c == KEY_UP || c == 'k') && p.cursor > 0)
			p.cursor--;
		else if (c == KEY_NPAGE)
			p.cursor = p.cursor + LINES - 4 < p.nshown ? p.cursor + LINES - 4 : p.nshown - 1;
		else if (c == KEY_PPAGE)
			p.cursor = p.cursor > LINES - 4 ? p.cursor - (LINES - 4) : 0;
		else if (c == KEY_HOME)
			p.cursor = 0;
		else if (c == KEY_END)
			p.cursor = p.nshown ? p.nshown - 1 : 0;
		else if (c == '/') {
			ask_filter(&p);
			err = arrange(&p);
			if (err < 0) {
				rc = err;
				break;
			}
			continue;
		} else if (c == 's' || c == KEY_F(6)) {
			p.sort = (p.sort + 1) % 4;
			err = arrange(&p);
			if (err < 0) {
				rc = err;
				break;
			}
			continue;
		} else if ((c == 'r' || c == 'x') && p.nshown) {
			const struct nsk_ps_row *r = &p.rows[p.shown[p.cursor]];

			if (c == 'r')
				start_saving(&p, r);
			else
				stop_saving(&p, r);
			next = 0; /* the sessions column changed */
			draw(&p);
			continue;
		} else if ((c == '\n' || c == KEY_ENTER) && p.nshown) {
			const struct nsk_ps_row *r = &p.rows[p.shown[p.cursor]];

			if (!r->can_profile) {
				snprintf(p.msg, sizeof(p.msg), "pid %d cannot be profiled: %s",
					 r->p.pid, r->missing);
				continue;
			}
			*pid = r->p.pid;
			rc = 1;
			break;
		}
		if (p.nshown)
			p.cursor_pid = p.rows[p.shown[p.cursor]].p.pid;
	}
	endwin();
	*sort = p.sort;
	snprintf(filter, filterlen, "%s", p.filter);
	nsk_ps__free_rows(p.rows, p.n);
	free(p.shown);
	return rc;
}
