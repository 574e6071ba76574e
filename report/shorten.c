/* Shortening long names to fit a column.  A call chain ("leaf <- caller
 * <- ...") keeps as many whole frames as fit, from the leaf, and says it
 * was cut (" ..."); a frame is never cut in its middle when a whole one
 * fits.  C++ and Rust names carry
 * parameter lists and template arguments that are seldom what a reader
 * needs in a table; the scope and the function's own name are.  So, in
 * order, until the name fits: "f(int, char const*)" -> "f(...)",
 * "vector<pair<int, int> >::push" -> "vector<...>::push", "f(...)" -> "f",
 * and finally the
 * middle gives way to "...", keeping the start (the scope) and the end
 * (the function's own name). */
#include <string.h>

#include "report/output.h"

/* Copies s to out (of size len) with the bracketed groups open..close at
 * nesting depth 1 collapsed into open "..." close. */
static void collapse(const char *s, char *out, size_t len, char open,
		     char close)
{
	size_t w = 0;
	int depth = 0;

	for (; *s && w + 5 < len; s++) {
		if (*s == open) {
			if (depth++ == 0) {
				memcpy(out + w, (char[]){ open, '.', '.', '.' }, 4);
				w += 4;
			}
			continue;
		}
		if (*s == close && depth > 0) {
			if (--depth == 0)
				out[w++] = close;
			continue;
		}
		if (depth == 0)
			out[w++] = *s;
	}
	out[w] = '\0';
}

void nsk_out__shorten(const char *in, size_t width, char *out)
{
	size_t lead = strspn(in, " "), len = strlen(in);
	char tmp[2048], tmp2[2048];
	size_t n, head, tail;

	if (len <= width) {
		memcpy(out, in, len + 1);
		return;
	}
	if (lead > width / 2) /* deep trees: keep some of the name visible */
		lead = width / 2;
	memset(out, ' ', lead);
	in += strspn(in, " ");
	width -= lead;
	out += lead;

	snprintf(tmp, sizeof(tmp), "%s", in);
	if (strlen(tmp) > width) {
		collapse(tmp, tmp2, sizeof(tmp2), '(', ')');
		memcpy(tmp, tmp2, strlen(tmp2) + 1);
	}
	if (strlen(tmp) > width) {
		collapse(tmp, tmp2, sizeof(tmp2), '<', '>');
		memcpy(tmp, tmp2, strlen(tmp2) + 1);
	}
	n = strlen(tmp);
	if (n > width && n >= 5 && !strcmp(tmp + n - 5, "(...)"))
		tmp[n -= 5] = '\0'; /* the name matters more than "(...)" */
	if (n <= width) {
		memcpy(out, tmp, n + 1);
		return;
	}
	if (width < 4) {
		memcpy(out, tmp, width);
		out[width] = '\0';
		return;
	}
	/* Keep more of the end: that is the function's own name. */
	head = (width - 3) / 3;
	tail = width - 3 - head;
	memcpy(out, tmp, head);
	memcpy(out + head, "...", 3);
	memcpy(out + head + 3, tmp + n - tail, tail);
	out[width] = '\0';
}

size_t nsk_out__first_frame(const char *s)
{
	const char *sep = strstr(s, " <- ");

	return sep ? (size_t)(sep - s) : strlen(s);
}

void nsk_out__fit_frames(const char *in, size_t width, char *out)
{
	size_t len = strlen(in), keep = 0;
	const char *p = in, *sep;

	if (len <= width) {
		memcpy(out, in, len + 1);
		return;
	}
	/* the whole frames that fit with " ..." after them */
	while ((sep = strstr(p, " <- ")) && (size_t)(sep - in) + 4 <= width) {
		keep = (size_t)(sep - in);
		p = sep + 4;
	}
	if (!keep) { /* not even the leaf: shorten it alone */
		char first[2048];
		size_t n = nsk_out__first_frame(in);

		if (n >= sizeof(first))
			n = sizeof(first) - 1;
		memcpy(first, in, n);
		first[n] = '\0';
		nsk_out__shorten(first, width, out);
		return;
	}
	memcpy(out, in, keep);
	memcpy(out + keep, " ...", 5);
}
