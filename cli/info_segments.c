/* nusku info DIR (or DIR@FROM..TO): the segments of a continuous
 * recording, from their names alone (include/nusku/segdir.h): each one's
 * time range, size and whether it is closed (END written) or open (being
 * written, or left by a recorder that was killed).  `nusku info` of one
 * segment file shows its contents. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <nusku/segdir.h>

#include "cli/info_segments.h"

static void fmt_utc(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000ull);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
		 (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100,
		 tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
		 tm.tm_sec % 100, (unsigned)(ns / 1000000 % 1000));
}

int nsk_info__segments(FILE *f, const char *dir, const char *from,
		       const char *until, int json)
{
	struct nsk_seg *v = NULL;
	uint64_t bytes = 0;
	char a[40], b[40], err[512];
	size_t n = 0;
	int dirfd, ret;

	ret = nsk_segdir__select(dir, from, until, &dirfd, &v, &n, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "nusku: info: %s\n", err);
		return 1;
	}
	close(dirfd);
	for (size_t i = 0; i < n; i++)
		bytes += v[i].bytes;
	if (json) {
		fprintf(f, "{\"directory\": \"");
		for (const char *p = dir; *p; p++)
			fprintf(f, *p == '"' || *p == '\\' ? "\\%c" :
				(unsigned char)*p < 0x20 ? "?" : "%c", *p);
		fprintf(f, "\", \"bytes\": %" PRIu64 ", \"segments\": [", bytes);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s\n  {\"name\": \"%s\", \"start_ns\": %" PRIu64
				", \"end_ns\": %" PRIu64 ", \"bytes\": %" PRIu64
				", \"open\": %s}", i ? "," : "", v[i].name,
				v[i].start_ns, v[i].end_ns, v[i].bytes,
				v[i].open ? "true" : "false");
		fprintf(f, "\n]}\n");
	} else {
		fmt_utc(a, sizeof(a), v[0].start_ns);
		fmt_utc(b, sizeof(b), v[n - 1].end_ns);
		fprintf(f, "directory:  %s\nsegments:   %zu, %.1f kB, %s to %s\n",
			dir, n, (double)bytes / 1e3, a, b);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "  %s %7.3fs %7.0fkB %s\n", v[i].name,
				(double)(v[i].end_ns - v[i].start_ns) / 1e9,
				(double)v[i].bytes / 1e3,
				v[i].open ? "open" : "closed");
	}
	free(v);
	return ferror(f) ? 1 : 0;
}
