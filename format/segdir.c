/* A continuous recording's directory of segments (include/nusku/segdir.h):
 * the names, the listing and the selection of a time range.  Nothing
 * here opens a segment: the name says its range, so a reader of the last
 * ten minutes of a day of segments reads only those. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nusku/segdir.h>

#define PREFIX "nusku-"
#define NS 1000000000ull

static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / NS);
	struct tm tm;

	gmtime_r(&sec, &tm);
	if (tm.tm_year < 0 || tm.tm_year > 8000)
		tm.tm_year = 0;
	snprintf(buf, len, "%04d%02d%02dT%02d%02d%02d.%03uZ", tm.tm_year + 1900,
		 (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100,
		 tm.tm_min % 100, tm.tm_sec % 100,
		 (unsigned)(ns % NS / 1000000) % 1000);
}

/* "YYYYmmddTHHMMSS.mmmZ" at s: 20 characters.  0 or -EINVAL. */
static int parse_time(const char *s, uint64_t *ns)
{
	struct tm tm = { 0 };
	unsigned ms;
	int n = 0;

	if (sscanf(s, "%4d%2d%2dT%2d%2d%2d.%3uZ%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) != 7 ||
	    n != 20)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*ns = (uint64_t)timegm(&tm) * NS + (uint64_t)ms * 1000000ull;
	return 0;
}

int nsk_seg__name(char *buf, size_t len, uint64_t start_ns, uint64_t end_ns)
{
	char a[32], b[32] = "open";
	int n;

	fmt_time(a, sizeof(a), start_ns);
	if (end_ns)
		fmt_time(b, sizeof(b), end_ns);
	n = snprintf(buf, len, PREFIX "%s-%s.nsk", a, b);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int nsk_seg__parse(const char *name, struct nsk_seg *seg)
{
	const char *p = name + strlen(PREFIX);
	size_t len = strlen(name);

	if (len >= NSK_SEG_NAME_MAX || strncmp(name, PREFIX, strlen(PREFIX)) ||
	    len < 4 || strcmp(name + len - 4, ".nsk"))
		return -EINVAL;
	memset(seg, 0, sizeof(*seg));
	if (parse_time(p, &seg->start_ns) || p[20] != '-')
		return -EINVAL;
	p += 21;
	if (!strcmp(p, "open.nsk"))
		seg->open = 1;
	else if (parse_time(p, &seg->end_ns) || strcmp(p + 20, ".nsk"))
		return -EINVAL;
	memcpy(seg->name, name, len + 1);
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct nsk_seg *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

int nsk_segdir__list(int dirfd, struct nsk_seg **out, size_t *n)
{
	struct nsk_seg *v = NULL, seg;
	size_t cap = 0, len = 0;
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int fd, err = 0;

	*out = NULL;
	*n = 0;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (nsk_seg__parse(de->d_name, &seg))
			continue;
		/* only regular files: nothing else is ours to read or delete */
		if (fstatat(dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(sb.st_mode))
			continue;
		seg.bytes = (uint64_t)sb.st_size;
		if (seg.open)
			seg.end_ns = (uint64_t)sb.st_mtim.tv_sec * NS +
				     (uint64_t)sb.st_mtim.tv_nsec;
		if (seg.end_ns < seg.start_ns)
			seg.end_ns = seg.start_ns;
		if (len == cap) {
			struct nsk_seg *nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[len++] = seg;
	}
	closedir(d);
	if (err) {
		free(v);
		return err;
	}
	if (len)
		qsort(v, len, sizeof(*v), by_start);
	*out = v;
	*n = len;
	return 0;
}

/* "10m", "1.5h", "90s", "500ms", "600" (seconds): ns, or -EINVAL. */
static int parse_span(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = { { "", 1e9 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 },
		      { "min", 60e9 }, { "h", 3600e9 }, { "d", 86400e9 } };
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0 || *s == '+')
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		v *= units[i].ns;
		if (v >= 1.8e19)
			return -EINVAL;
		*ns = (uint64_t)(v + 0.5);
		return 0;
	}
	return -EINVAL;
}

/* "2026-12-01T21:49:00[.5][Z]" (UTC): realtime ns, or -EINVAL. */
static int parse_absolute(const char *s, uint64_t *ns)
{
	struct tm tm = { 0 };
	double frac = 0;
	char *end;
	int n = 0;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    !n)
		return -EINVAL;
	s += n;
	if (*s == '.') {
		frac = strtod(s, &end);
		s = end;
	}
	if (*s == 'Z')
		s++;
	if (*s || tm.tm_mon < 1 || tm.tm_mon > 12)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*ns = (uint64_t)timegm(&tm) * NS + (uint64_t)(frac * 1e9);
	return 0;
}

int nsk_seg__parse_time(const char *spec, uint64_t newest_end_ns, uint64_t *out)
{
	struct timespec ts;
	uint64_t span;

	if (!spec || !*spec)
		return -EINVAL;
	if (!strcmp(spec, "now")) {
		clock_gettime(CLOCK_REALTIME, &ts);
		*out = (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
		return 0;
	}
	if (!parse_absolute(spec, out))
		return 0;
	if (parse_span(spec[0] == '-' ? spec + 1 : spec, &span))
		return -EINVAL;
	*out = span > newest_end_ns ? 0 : newest_end_ns - span;
	return 0;
}

int nsk_segdir__open(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	fd = -errno;
	if (fd == -ENOTDIR || fd == -ELOOP)
		snprintf(err, errlen, "%s: not a directory", path);
	else
		snprintf(err, errlen, "%s: %s", path, strerror(-fd));
	return fd == -ELOOP ? -ENOTDIR : fd;
}

int nsk_segdir__select(const char *path, const char *from, const char *until,
		       int *dirfd, struct nsk_seg **out, size_t *n, char *err,
		       size_t errlen)
{
	uint64_t lo = 0, hi = UINT64_MAX, newest = 0;
	struct nsk_seg *v = NULL;
	size_t len = 0, k = 0;
	int fd, ret;

	*out = NULL;
	*n = 0;
	fd = nsk_segdir__open(path, err, errlen);
	if (fd < 0)
		return fd;
	ret = nsk_segdir__list(fd, &v, &len);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	if (!len) {
		snprintf(err, errlen, "%s: no segments (nusku-*.nsk) in this "
			 "directory", path);
		ret = -ENOENT;
		goto fail;
	}
	for (size_t i = 0; i < len; i++)
		if (v[i].end_ns > newest)
			newest = v[i].end_ns;
	if ((from && nsk_seg__parse_time(from, newest, &lo)) ||
	    (until && nsk_seg__parse_time(until, newest, &hi))) {
		snprintf(err, errlen, "%s: bad time '%s' (10m: ten minutes before "
			 "the newest segment's end; or 2026-12-01T21:49:00Z)",
			 path, from && nsk_seg__parse_time(from, newest, &lo)
				       ? from : until);
		ret = -EINVAL;
		goto fail;
	}
	/* whole segments: each that overlaps [lo, hi] */
	for (size_t i = 0; i < len; i++)
		if (v[i].end_ns > lo && v[i].start_ns < hi)
			v[k++] = v[i];
	if (!k) {
		snprintf(err, errlen, "%s: no segment in the range asked for", path);
		ret = -ENOENT;
		goto fail;
	}
	*dirfd = fd;
	*out = v;
	*n = k;
	return 0;
fail:
	free(v);
	close(fd);
	return ret;
}

int nsk_segdir__split(const char *spec, char **dir, char **from, char **until)
{
	const char *at = strrchr(spec, '@'), *dots;
	struct stat sb;

	*dir = *from = *until = NULL;
	if (!at || !stat(spec, &sb))
		return 1;
	dots = strstr(at + 1, "..");
	*dir = strndup(spec, (size_t)(at - spec));
	if (!*dir)
		return -ENOMEM;
	if (!dots)
		dots = at + 1 + strlen(at + 1);
	if (dots > at + 1)
		*from = strndup(at + 1, (size_t)(dots - at - 1));
	if (*dots && dots[2])
		*until = strdup(dots + 2);
	return 0;
}

int nsk_segdir__is_dir(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISDIR(sb.st_mode);
}
