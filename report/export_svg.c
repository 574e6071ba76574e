/* nusku export --format svg: an interactive flame graph in one file, in
 * the shape flamegraph.pl gave the world, so that its readers and scripts
 * read this one too: every frame a <g> holding a <title> ("name (count
 * unit, share%)"), a <rect> whose width is its share of the total, and a
 * <text> label.  The root ("all") is at the bottom, then the processes,
 * then their stacks, callers below callees; siblings sorted by name.
 *
 * The script is inline (no network, nothing external): click a frame to
 * zoom into it, "Reset zoom" to go back, "Search" for a regular
 * expression, whose matches turn magenta and whose share of the total
 * (overlaps counted once) is shown; hovering names the frame, its module,
 * count and share at the bottom.  Off-CPU time is coloured by the reason
 * that has the most of each frame's time.
 *
 * Every string from the recording is escaped twice: control bytes and
 * bytes that are not UTF-8 as \xNN (report/escape.c), then for XML.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/export.h"

#define WIDTH 1200.0
#define PAD 10.0
#define FRAME_H 16
#define FONT 12
#define MIN_WIDTH 0.1 /* px: narrower frames are left out, as flamegraph.pl */
#define TOP 60	      /* title, subtitle, buttons */
#define BOTTOM 34     /* the details line */
#define NCLASS 16     /* colouring classes (off-CPU reasons) */

struct node {
	uint64_t key;
	const char *name, *module;
	int kernel;
	int64_t total;
	uint32_t parent, child, next; /* indexes; 0: none (0 is the root) */
	uint32_t depth;
};

struct fg {
	struct node *n;
	size_t len, cap;
	struct nsk_strtab own_names;
	/* process names, frameless stacks' names; in a graph keyed by name
	 * (by_name), every frame's name, shared by the two graphs of a diff
	 * so that their keys compare */
	struct nsk_strtab *names;
	int by_name;
	/* a differential graph: this graph's node i is base's node
	 * base_idx[i] (UINT32_MAX: none), whose share is the colour */
	const struct fg *base;
	uint32_t *base_idx;
	double max_delta;
	int64_t *cls;		 /* coloured graphs: NCLASS weights per node */
	uint32_t cls_of[NCLASS]; /* class -> label string id in *labels */
	const struct nsk_strtab *labels; /* the measure's labels (x.str) */
	int ncls;
	uint32_t max_depth;
};

#define KEY_PROC (1ull << 62)
#define KEY_PSEUDO (2ull << 62)

static int child_of(struct fg *t, uint32_t parent, uint64_t key,
		    const char *name, uint32_t *out)
{
	uint32_t c;

	for (c = t->n[parent].child; c; c = t->n[c].next)
		if (t->n[c].key == key) {
			*out = c;
			return 0;
		}
	if (t->len == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct node *n = realloc(t->n, cap * sizeof(*n));
		int64_t *w;

		if (!n)
			return -ENOMEM;
		t->n = n;
		if (t->cls) {
			w = realloc(t->cls, cap * NCLASS * sizeof(*w));
			if (!w)
				return -ENOMEM;
			memset(w + t->cap * NCLASS, 0,
			       (cap - t->cap) * NCLASS * sizeof(*w));
			t->cls = w;
		}
		t->cap = cap;
	}
	c = (uint32_t)t->len++;
	memset(&t->n[c], 0, sizeof(t->n[c]));
	t->n[c].key = key;
	t->n[c].name = name;
	t->n[c].module = "";
	t->n[c].parent = parent;
	t->n[c].depth = t->n[parent].depth + 1;
	t->n[c].next = t->n[parent].child;
	t->n[parent].child = c;
	if (t->n[c].depth > t->max_depth)
		t->max_depth = t->n[c].depth;
	*out = c;
	return 0;
}

static int class_of(struct fg *t, uint32_t label)
{
	for (int i = 0; i < t->ncls; i++)
		if (t->cls_of[i] == label)
			return i;
	if (t->ncls < NCLASS) {
		t->cls_of[t->ncls] = label;
		return t->ncls++;
	}
	return NCLASS - 1; /* past sixteen reasons: share the last colour */
}

/* Weight w of class cls on node i. */
static void add(struct fg *t, uint32_t i, int cls, int64_t w)
{
	t->n[i].total = nsk_xadd(t->n[i].total, w);
	if (t->cls)
		t->cls[i * NCLASS + cls] = nsk_xadd(t->cls[i * NCLASS + cls], w);
}

/* An interned copy and its id (0: out of memory). */
static uint32_t intern(struct fg *t, const char *s, const char **out)
{
	uint32_t id = nsk_strtab__intern(t->names, s, strlen(s));

	*out = id ? nsk_strtab__get(t->names, id) : NULL;
	return id;
}

/* Adds one row of the measure: the process, then its stack root first. */
static int add_row(struct fg *t, struct nsk_xdata *x, struct nsk_report *rep,
		   const struct nsk_xrow *row, uint32_t pid_key,
		   const char *pname)
{
	const struct nsk_measure *m = x->m;
	const struct nsk_xstack *s = nsk_xdata__stack(x, row->stack_id);
	int64_t w = row->v[m->graphed];
	int cls = m->colour_label >= 0 ?
		class_of(t, row->label[m->colour_label]) : 0;
	uint32_t cur = 0;
	int err;

	add(t, 0, cls, w);
	err = child_of(t, 0, KEY_PROC | pid_key, pname, &cur);
	if (err)
		return err;
	add(t, cur, cls, w);
	if (!s->n) {
		const char *name;
		uint32_t id = intern(t, nsk_xdata__frameless(x, rep, row->stack_id),
				     &name);

		if (!id || child_of(t, cur, KEY_PSEUDO | id, name, &cur))
			return -ENOMEM;
		add(t, cur, cls, w);
		return 0;
	}
	for (size_t i = s->n; i-- > 0;) {
		const struct nsk_xframe *f = &x->frames[s->first + i];
		const struct nsk_xfunc *fn = nsk_xdata__func(x, f->func_id);
		uint64_t key = (uint64_t)f->func_id;
		const char *name = fn->name;

		if (t->by_name) {
			/* builds differ in addresses and ids, not names */
			key = intern(t, fn->name, &name);
			if (!key)
				return -ENOMEM;
		}
		err = child_of(t, cur, key, name, &cur);
		if (err)
			return err;
		t->n[cur].module = fn->module;
		t->n[cur].kernel = fn->kernel;
		add(t, cur, cls, w);
	}
	return 0;
}

static int build(struct fg *t, struct nsk_xdata *x, struct nsk_report *rep)
{
	const struct nsk_measure *m = x->m;
	sqlite3_stmt *pn;
	int64_t last_pid = -1;
	const char *pname = NULL;
	uint32_t pkey = 0;
	int err = 0;

	t->cap = 1024;
	t->n = calloc(t->cap, sizeof(*t->n));
	if (!t->n)
		return -ENOMEM;
	if (m->colour_label >= 0) {
		t->cls = calloc(t->cap * NCLASS, sizeof(*t->cls));
		if (!t->cls)
			return -ENOMEM;
	}
	t->len = 1;
	t->n[0].name = "all";
	t->n[0].module = "";
	pn = nsk_report__prepare(rep, "SELECT " NSK_PROCESS_NAME("?1"));
	if (!pn)
		return -EIO;
	for (size_t r = 0; r < x->nrows && !err; r++) {
		const struct nsk_xrow *row = &x->rows[r];

		if (row->v[m->graphed] <= 0)
			continue;
		if (row->pid != last_pid) {
			sqlite3_reset(pn);
			sqlite3_bind_int64(pn, 1, row->pid);
			pkey = 0;
			if (sqlite3_step(pn) == SQLITE_ROW &&
			    sqlite3_column_text(pn, 0))
				pkey = intern(t, (const char *)
					      sqlite3_column_text(pn, 0), &pname);
			if (!pkey) {
				err = -ENOMEM;
				break;
			}
			last_pid = row->pid;
		}
		err = add_row(t, x, rep, row, pkey, pname);
	}
	sqlite3_finalize(pn);
	return err;
}

/* ---- writing ---- */

/* s for XML text or an attribute: escaped for a terminal first (control
 * bytes, bytes that are not UTF-8), then &, <, >, " and '. */
static void xml_put(FILE *f, const char *s)
{
	char *e = nsk_out__escaped(s ? s : "");

	for (const char *p = e ? e : "?"; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* U+FFFE and U+FFFF are UTF-8 but not XML */
			if ((unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbf &&
			    ((unsigned char)p[2] == 0xbe || (unsigned char)p[2] == 0xbf)) {
				fprintf(f, "\\xef\\xbf\\x%02x", (unsigned char)p[2]);
				p += 2;
			} else {
				fputc(*p, f);
			}
		}
	}
	free(e);
}

static int clamp(int c)
{
	return c < 0 ? 0 : c > 255 ? 255 : c;
}

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* A differential graph: node i's share of this graph's total and of the
 * base's (0 where base has no such path), and their difference. */
static double share_of(const struct fg *t, uint32_t i)
{
	return t->n[0].total ? (double)t->n[i].total / (double)t->n[0].total : 0;
}

static double base_share(const struct fg *t, uint32_t i)
{
	return t->base_idx[i] == UINT32_MAX ? 0 : share_of(t->base, t->base_idx[i]);
}

static double delta_of(const struct fg *t, uint32_t i)
{
	return share_of(t, i) - base_share(t, i);
}

/* Colours: flamegraph.pl's palettes, varied by a hash of the name so that
 * a function keeps its colour from one graph to the next. */
static void colour(const struct fg *t, const struct nsk_measure *m,
		   const struct node *n, uint32_t idx, char *buf, size_t len)
{
	/* off-CPU reasons (docs/blocking.md), then any other label */
	static const struct { const char *name; int r, g, b; } reasons[] = {
		{ "lock", 220, 60, 60 },     { "disk", 170, 110, 40 },
		{ "process", 80, 170, 80 },  { "network", 60, 120, 220 },
		{ "sleep", 150, 150, 150 },  { "poll", 40, 170, 170 },
		{ "runqueue", 150, 90, 200 }, { "page-fault", 240, 150, 40 },
		{ "other", 200, 200, 110 },
	};
	uint32_t h = hash(n->name);
	double v = (double)(h % 1000) / 1000.0;

	if (t->base) {
		/* red: a larger share of the new total than of the base's,
		 * blue: smaller; light grey at no change, full at the largest
		 * change (or 5 points of share, if that is larger) */
		double d = delta_of(t, idx), k = fabs(d) / t->max_delta;
		int c = (int)(235 - 200 * (k > 1 ? 1 : k));

		if (d > 0)
			snprintf(buf, len, "rgb(255,%d,%d)", c, c);
		else if (d < 0)
			snprintf(buf, len, "rgb(%d,%d,255)", c, c);
		else
			snprintf(buf, len, "rgb(235,235,235)");
		return;
	}
	if (m->colour_label >= 0 && idx) {
		const char *reason;
		int best = 0;

		const int64_t *cw = t->cls + (size_t)idx * NCLASS;

		for (int i = 1; i < t->ncls; i++)
			if (cw[i] > cw[best])
				best = i;
		reason = nsk_strtab__get(t->labels, t->cls_of[best]);
		for (size_t i = 0; reason && i < sizeof(reasons) / sizeof(reasons[0]); i++)
			if (!strcmp(reason, reasons[i].name)) {
				/* a little variation by name, the hue by reason */
				int d = (int)(v * 30) - 15;

				snprintf(buf, len, "rgb(%d,%d,%d)",
					 clamp(reasons[i].r + d), clamp(reasons[i].g + d),
					 clamp(reasons[i].b + d));
				return;
			}
		snprintf(buf, len, "rgb(%d,%d,%d)", 120 + (int)(v * 60),
			 120 + (int)(v * 60), 120 + (int)(v * 60));
		return;
	}
	if (!idx)
		snprintf(buf, len, "rgb(200,200,200)");
	else if (n->key & KEY_PROC)
		snprintf(buf, len, "rgb(%d,%d,%d)", 180, 180, 200 + (int)(v * 40));
	else if (!strcmp(m->name, "alloc") || !strcmp(m->name, "live"))
		/* flamegraph.pl's "mem" */
		snprintf(buf, len, "rgb(%d,%d,%d)", 0, 190 + (int)(v * 50),
			 (int)(v * 190));
	else if (!strcmp(m->name, "syscall"))
		snprintf(buf, len, "rgb(%d,%d,%d)", 80 + (int)(v * 60),
			 120 + (int)(v * 60), 190 + (int)(v * 55));
	else if (n->kernel)
		/* kernel code a shade of orange, as flamegraph.pl's --color=java */
		snprintf(buf, len, "rgb(%d,%d,%d)", 230 + (int)(v * 25),
			 130 + (int)(v * 50), 30);
	else
		/* "hot" */
		snprintf(buf, len, "rgb(%d,%d,%d)", 205 + (int)(v * 50),
			 (int)(230 * v), (int)(55 * v));
}

/* The label that fits w px, as the script makes it: whole characters,
 * ".." where it is cut, nothing under three characters. */
static void put_label(FILE *f, const char *name, double w)
{
	long fit = (long)((w - 6) / (FONT * 0.59));
	char *e = nsk_out__escaped(name);
	long chars = 0;
	size_t cut = 0;

	if (!e || fit < 3) {
		free(e);
		return;
	}
	for (const unsigned char *p = (const unsigned char *)e; *p; p++)
		chars += (*p & 0xc0) != 0x80;
	if (chars > fit) {
		long k = 0;

		/* the byte where character fit - 2 starts */
		for (cut = 0; e[cut]; cut++)
			if (((unsigned char)e[cut] & 0xc0) != 0x80 && k++ == fit - 2)
				break;
		e[cut] = '\0';
	}
	xml_put(f, e);
	if (chars > fit)
		fputs("..", f);
	free(e);
}

/* What the flame graph's counts are: "samples", "bytes", "ns". */
static const char *unit_of(const struct nsk_measure *m)
{
	const char *u = m->values[m->graphed].unit;

	if (!strcmp(u, "count"))
		return m->values[m->graphed].type;
	if (!strcmp(u, "nanoseconds"))
		return "ns";
	return u;
}

static const char script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var W, PAD, frames, details, matched, searching = null;\n"
"function init() {\n"
"  var s = document.getElementById('fg') || document.documentElement;\n"
"  W = +s.getAttribute('data-w'); PAD = +s.getAttribute('data-pad');\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  details = document.getElementById('details');\n"
"  matched = document.getElementById('matched');\n"
"  frames.forEach(function (g) {\n"
"    var r = g.querySelector('rect');\n"
"    g.ox = +r.getAttribute('x'); g.ow = +r.getAttribute('width');\n"
"    g.oy = +r.getAttribute('y'); g.of = r.getAttribute('fill');\n"
"    var t = g.querySelector('title').textContent;\n"
"    g.name = t.substring(0, t.lastIndexOf(' ('));\n"
"    g.addEventListener('click', function () { zoom(g); });\n"
"    g.addEventListener('mouseover', function () {\n"
"      var m = g.getAttribute('data-m');\n"
"      details.textContent = t + (m ? ' in ' + m : '');\n"
"    });\n"
"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"  });\n"
"  document.getElementById('reset').addEventListener('click', reset);\n"
"  document.getElementById('search').addEventListener('click', search);\n"
"  frames.forEach(label);\n"
"}\n"
"function place(g, x, w) {\n"
"  var r = g.querySelector('rect');\n"
"  r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));\n"
"  g.querySelector('text').setAttribute('x', (x + 3).toFixed(2));\n"
"  g.style.display = ''; label(g);\n"
"}\n"
"function label(g) {\n"
"  var w = +g.querySelector('rect').getAttribute('width');\n"
"  var n = Math.floor((w - 6) / (%d * 0.59)), t = g.querySelector('text');\n"
"  t.textContent = n < 3 ? '' : g.name.length <= n ? g.name : g.name.substring(0, n - 2) + '..';\n"
"}\n"
"function zoom(z) {\n"
"  var k = W / z.ow;\n"
"  frames.forEach(function (g) {\n"
"    if (g.oy > z.oy && g.ox <= z.ox + 1e-6 && g.ox + g.ow >= z.ox + z.ow - 1e-6) {\n"
"      place(g, PAD, W); g.style.opacity = '0.5';\n" /* the callers below */
"    } else if (g.oy <= z.oy && g.ox >= z.ox - 1e-6 && g.ox + g.ow <= z.ox + z.ow + 1e-6) {\n"
"      place(g, PAD + (g.ox - z.ox) * k, g.ow * k); g.style.opacity = '';\n"
"    } else {\n"
"      g.style.display = 'none';\n"
"    }\n"
"  });\n"
"  document.getElementById('reset').style.opacity = '1';\n"
"}\n"
"function reset() {\n"
"  frames.forEach(function (g) { place(g, g.ox, g.ow); g.style.opacity = ''; });\n"
"  document.getElementById('reset').style.opacity = '0.3';\n"
"}\n"
"function search() {\n"
"  var term = searching === null ? prompt('Search for (a regular expression)', '') : null;\n"
"  var re, spans = [], sum = 0, end = -1;\n"
"  searching = null;\n"
"  frames.forEach(function (g) { g.querySelector('rect').setAttribute('fill', g.of); });\n"
"  matched.textContent = ' ';\n"
"  if (!term) return;\n"
"  try { re = new RegExp(term); } catch (e) { matched.textContent = 'bad expression'; return; }\n"
"  searching = term;\n"
"  frames.forEach(function (g) {\n"
"    if (!re.test(g.name)) return;\n"
"    g.querySelector('rect').setAttribute('fill', 'rgb(230,0,230)');\n"
"    spans.push([g.ox, g.ox + g.ow]);\n"
"  });\n"
"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
"  spans.forEach(function (s) {\n" /* overlaps (a frame and its callees) once */
"    if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }\n"
"    else if (s[1] > end) { sum += s[1] - end; end = s[1]; }\n"
"  });\n"
"  matched.textContent = 'Matched: ' + (100 * sum / W).toFixed(2) + '%%';\n"
"}\n"
"init();\n"
"]]></script>\n";

/* Each node's left edge, in units of the measure: callers' edges plus the
 * totals of the siblings sorted before it. */
static int cmp_name(const void *a, const void *b, void *arg)
{
	const struct fg *t = arg;

	return strcmp(t->n[*(const uint32_t *)a].name,
		      t->n[*(const uint32_t *)b].name);
}

static int write_frames(struct fg *t, const struct nsk_measure *m, FILE *f,
			double height)
{
	uint32_t *stack = malloc(t->len * sizeof(*stack));
	uint32_t *kids = malloc(t->len * sizeof(*kids));
	int64_t *left = calloc(t->len, sizeof(*left));
	double scale = t->n[0].total ? WIDTH / (double)t->n[0].total : 0;
	const char *unit = unit_of(m);
	size_t sp = 0;
	char fill[64];

	if (!stack || !kids || !left) {
		free(stack);
		free(kids);
		free(left);
		return -ENOMEM;
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp], nk = 0;
		const struct node *n = &t->n[i];
		double w = (double)n->total * scale, x = PAD + (double)left[i] * scale;
		double y = height - BOTTOM - FRAME_H * (n->depth + 1);
		int64_t off = left[i];

		if (w < MIN_WIDTH)
			continue; /* and so are its callees */
		colour(t, m, n, i, fill, sizeof(fill));
		fputs("<g class=\"f\"", f);
		if (*n->module) {
			fputs(" data-m=\"", f);
			xml_put(f, n->module);
			fputc('"', f);
		}
		fputs("><title>", f);
		xml_put(f, n->name);
		fprintf(f, " (%" PRId64 " %s, %.2f%%", n->total, unit,
			100.0 * (double)n->total / (double)t->n[0].total);
		if (t->base)
			fprintf(f, "; base %.2f%%, delta %+.2f%%", 100 * base_share(t, i),
				100 * delta_of(t, i));
		fprintf(f, ")</title><rect x=\"%.2f\" "
			"y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
			"rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
			x, y, w, FRAME_H - 1, fill, x + 3, y + FRAME_H - 4.5);
		put_label(f, n->name, w);
		fputs("</text></g>\n", f);
		for (uint32_t c = n->child; c; c = t->n[c].next)
			kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), cmp_name, t);
		for (uint32_t k = 0; k < nk; k++) {
			left[kids[k]] = off;
			off = nsk_xadd(off, t->n[kids[k]].total);
		}
		/* pushed in reverse: drawn left to right */
		while (nk)
			stack[sp++] = kids[--nk];
	}
	free(stack);
	free(kids);
	free(left);
	return 0;
}

/* The page around the frames: an HTML document (html) holds the same SVG
 * inline, without the XML declaration; its script finds the graph by id. */
static void write_svg(struct fg *t, struct nsk_report *rep,
		      struct nsk_report *base_rep, const struct nsk_measure *m,
		      int html, FILE *f)
{
	double height = TOP + BOTTOM + FRAME_H * (t->max_depth + 1.0);
	char lines[8][256], title[256];
	int n = nsk_report__summary_lines(rep, lines, 8);

	snprintf(title, sizeof(title), "%s%s", base_rep ? "Differential flame "
		 "graph: " : "", m->title);
	if (html) {
		fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<title>", f);
		xml_put(f, title);
		fputs("</title><style>body { margin: 0; background: rgb(250,250,240); }"
		      "</style></head>\n<body>\n", f);
	} else {
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", f);
	}
	fprintf(f, "<svg id=\"fg\" version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"data-w=\"%.0f\" data-pad=\"%.0f\">\n", WIDTH + 2 * PAD, height,
		WIDTH + 2 * PAD, height, WIDTH, PAD);
	fputs("<style>text { font-family: Verdana, sans-serif; font-size: "
	      "12px; fill: rgb(0,0,0); } g.f text { pointer-events: none; } "
	      "g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; } "
	      "#title { font-size: 17px; } .button { cursor: pointer; fill: "
	      "rgb(0,0,160); }</style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
		"fill=\"rgb(250,250,240)\"/>\n"
		"<text id=\"title\" x=\"%.0f\" y=\"22\" text-anchor=\"middle\">",
		(WIDTH + 2 * PAD) / 2);
	xml_put(f, title);
	if (base_rep)
		fputs(" (the new recording's shape; red: a larger share than in "
		      "the base, blue: smaller)", f);
	fputs("</text>\n<text id=\"subtitle\" x=\"", f);
	fprintf(f, "%.0f\" y=\"40\" text-anchor=\"middle\">", (WIDTH + 2 * PAD) / 2);
	for (int i = 0; i < n; i++) {
		fputs(i ? " \xc2\xb7 " : base_rep ? "new: " : "", f);
		xml_put(f, lines[i]);
	}
	/* the base's file and span, and what it lost */
	n = base_rep ? nsk_report__summary_lines(base_rep, lines, 8) : 0;
	for (int i = 0; i < n && i < 2; i++) {
		fputs(i ? " \xc2\xb7 " : " \xc2\xb7 base: ", f);
		xml_put(f, lines[i]);
	}
	fprintf(f, "</text>\n<text id=\"reset\" class=\"button\" x=\"%.0f\" "
		"y=\"56\" style=\"opacity: 0.3\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"56\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> "
		"</text>\n<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n",
		PAD, WIDTH + PAD, WIDTH + PAD, height - 10, PAD, height - 10);
}

/* Builds the graph of m in rep's recording into t (its names in names). */
static int load_graph(struct fg *t, struct nsk_xdata *x, struct nsk_report *rep,
		      const struct nsk_measure *m, struct nsk_strtab *names,
		      int by_name)
{
	int err;

	t->names = names;
	t->by_name = by_name;
	err = nsk_xdata__load(x, rep, m);
	if (err)
		return err;
	t->labels = &x->str;
	err = build(t, x, rep);
	if (err == -ENOMEM)
		snprintf(rep->err, sizeof(rep->err), "out of memory");
	return err;
}

/* Each node of t's path in base (by key, parents before children: a
 * child's index is always past its parent's), and the largest change. */
static int match_base(struct fg *t, const struct fg *base)
{
	t->base = base;
	t->base_idx = malloc(t->len * sizeof(*t->base_idx));
	if (!t->base_idx)
		return -ENOMEM;
	t->base_idx[0] = 0;
	t->max_delta = 0.05; /* 5 points of share: noise stays pale */
	for (uint32_t i = 1; i < t->len; i++) {
		uint32_t bp = t->base_idx[t->n[i].parent], c = 0;

		if (bp != UINT32_MAX)
			for (c = base->n[bp].child; c; c = base->n[c].next)
				if (base->n[c].key == t->n[i].key)
					break;
		t->base_idx[i] = c ? c : UINT32_MAX;
		if (fabs(delta_of(t, i)) > t->max_delta)
			t->max_delta = fabs(delta_of(t, i));
	}
	return 0;
}

static void release_graph(struct fg *t)
{
	free(t->n);
	free(t->cls);
	free(t->base_idx);
	nsk_strtab__release(&t->own_names);
}

int nsk_export__flamegraph(struct nsk_report *rep, struct nsk_report *base_rep,
			   const struct nsk_measure *m, int html, FILE *f)
{
	struct nsk_xdata x = { 0 }, bx = { 0 };
	struct fg t = { 0 }, b = { 0 };
	int err;

	err = load_graph(&t, &x, rep, m, &t.own_names, base_rep != NULL);
	if (!err && base_rep) {
		err = load_graph(&b, &bx, base_rep, m, &t.own_names, 1);
		if (err)
			snprintf(rep->err, sizeof(rep->err), "%s", base_rep->err);
		else if (match_base(&t, &b))
			err = -ENOMEM;
	}
	if (err) {
		if (err == -ENOMEM)
			snprintf(rep->err, sizeof(rep->err), "out of memory");
		goto cleanup;
	}
	write_svg(&t, rep, base_rep, m, html, f);
	if (t.n[0].total)
		err = write_frames(&t, m, f, TOP + BOTTOM + FRAME_H * (t.max_depth + 1.0));
	else
		fprintf(f, "<text x=\"%.0f\" y=\"%d\">no events selected</text>\n",
			PAD, TOP + FRAME_H);
	if (err) {
		snprintf(rep->err, sizeof(rep->err), "out of memory");
		goto cleanup;
	}
	fprintf(f, script, FONT);
	fputs(html ? "</svg>\n</body></html>\n" : "</svg>\n", f);
cleanup:
	nsk_xdata__release(&x);
	nsk_xdata__release(&bx);
	release_graph(&t);
	release_graph(&b);
	return err;
}

int nsk_export__svg(struct nsk_report *rep, const struct nsk_measure *m,
		    FILE *f)
{
	return nsk_export__flamegraph(rep, NULL, m, 0, f);
}
