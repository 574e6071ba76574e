/* nusku export: where the output goes, then which writer makes it.
 *
 * -o FILE is made as every output file is (include/nusku/outfile.h): new,
 * 0600, under a temporary name renamed over FILE at the end, never through
 * a link.  An existing file is replaced only when it is empty or looks
 * like an export of the same format (a gzip stream, an XML file, an HTML
 * page, a trace's JSON, folded lines), so that a slip of -o cannot take someone's data; never the
 * recording being read.  No -o, or -o -: standard output, except pprof's
 * binary to a terminal. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nusku/outfile.h>

#include "report/export.h"

static const char *const fmt_names[] = { "pprof", "svg", "folded", "html",
					 "chrome" };

int nsk_export__format(const char *name, enum nsk_export_fmt *out)
{
	for (unsigned i = 0; i < sizeof(fmt_names) / sizeof(fmt_names[0]); i++)
		if (!strcmp(name, fmt_names[i])) {
			*out = (enum nsk_export_fmt)i;
			return 0;
		}
	return -EINVAL;
}

/* Does head (n bytes of an existing file) look like fmt's output? */
static int looks_like(enum nsk_export_fmt fmt, const uint8_t *head, size_t n)
{
	const uint8_t *nl;

	switch (fmt) {
	case NSK_EXPORT_PPROF:
		return n >= 2 && head[0] == 0x1f && head[1] == 0x8b;
	case NSK_EXPORT_SVG:
		return n >= 5 && !memcmp(head, "<?xml", 5);
	case NSK_EXPORT_HTML:
		return n >= 15 && !memcmp(head, "<!DOCTYPE html>", 15);
	case NSK_EXPORT_CHROME:
		return n >= 15 && !memcmp(head, "{\"traceEvents\":", 15);
	case NSK_EXPORT_FOLDED:
		/* the first line ends in " COUNT" */
		nl = memchr(head, '\n', n);
		if (!nl || nl == head || nl[-1] < '0' || nl[-1] > '9')
			return 0;
		while (nl > head && nl[-1] >= '0' && nl[-1] <= '9')
			nl--;
		return nl > head && nl[-1] == ' ' && !memchr(head, 0, n);
	}
	return 0;
}

int nsk_export__open(struct nsk_outfile *of, const char *path,
		     const char *input, enum nsk_export_fmt fmt, char *err,
		     size_t len)
{
	uint8_t head[512];
	size_t n = sizeof(head);
	struct stat st, in;
	int res;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	res = nsk_outfile__probe(path, &st, head, &n, err, len);
	if (res < 0)
		return res;
	if (res == 1 && input && strcmp(input, "-") && !stat(input, &in) &&
	    in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
		snprintf(err, len, "%s is the recording being read", path);
		return -EINVAL;
	}
	if (res == 1 && st.st_size > 0 && !looks_like(fmt, head, n)) {
		snprintf(err, len, "%s exists and is not a %s export; not "
			 "replacing it", path, fmt_names[fmt]);
		return -EEXIST;
	}
	return nsk_outfile__create(of, path, err, len);
}

int nsk_export__write(struct nsk_report *rep, enum nsk_export_fmt fmt,
		      const struct nsk_view *v, FILE *f)
{
	rep->out.f = f;
	/* the summary is in the file too; stderr says it at once */
	if (fmt != NSK_EXPORT_FOLDED)
		nsk_report__warn(rep);
	switch (fmt) {
	case NSK_EXPORT_PPROF:
		return nsk_export__pprof(rep, v->measure, f);
	case NSK_EXPORT_SVG:
	case NSK_EXPORT_HTML:
		return nsk_export__flamegraph(rep, NULL, v->measure,
					      fmt == NSK_EXPORT_HTML, f);
	case NSK_EXPORT_CHROME:
		return nsk_export__chrome(rep, f);
	case NSK_EXPORT_FOLDED:
		return nsk_stacks__folded(rep, v);
	}
	return -EINVAL;
}
