/* Strings from a recording made safe for a terminal or a CSV cell.  A
 * recording names what the profiled program chose (its comm, its argv,
 * its symbols, its files), so a name may hold an escape sequence that
 * would set the reader's terminal title or clear the screen.  Control
 * bytes (C0, DEL), the C1 controls in their UTF-8 form (U+0080..U+009F,
 * which some terminals obey like ESC [) and bytes that are not UTF-8
 * are written as \xNN; every other byte is kept as it is. */
#include <stdlib.h>
#include <string.h>

#include "report/output.h"

/* Bytes at p that are kept as they are (a valid UTF-8 sequence that is
 * not a C1 control, or a printable ASCII byte); 0: escape *p. */
static int keep_len(const unsigned char *p)
{
	int n;

	if (*p >= 0x20 && *p < 0x7f)
		return 1;
	n = *p >= 0xf0 && *p <= 0xf4 ? 4 : *p >= 0xe0 && *p <= 0xef ? 3
	  : *p >= 0xc2 && *p < 0xe0 ? 2 : 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0; /* U+0080..U+009F */
	return n;
}

int nsk_out__needs_escape(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	for (; *p; p += n)
		if (!(n = keep_len(p)))
			return 1;
	return 0;
}

char *nsk_out__escaped(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;

	if (!nsk_out__needs_escape(s))
		return strdup(s);
	out = malloc(4 * strlen(s) + 1);
	if (!out)
		return NULL;
	for (o = out; *p;) {
		int n = keep_len(p);

		if (n) {
			memcpy(o, p, (size_t)n);
			o += n;
			p += n;
			continue;
		}
		*o++ = '\\';
		*o++ = 'x';
		*o++ = hex[*p >> 4];
		*o++ = hex[*p & 15];
		p++;
	}
	*o = '\0';
	return out;
}

void nsk_out__put_escaped(FILE *f, const char *s)
{
	char *e;

	if (!s)
		return;
	if (!nsk_out__needs_escape(s)) {
		fputs(s, f);
		return;
	}
	e = nsk_out__escaped(s);
	/* no memory for the copy: leave the string out rather than raw */
	fputs(e ? e : "?", f);
	free(e);
}
