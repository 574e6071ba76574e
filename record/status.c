/* The one-line live status on stderr: elapsed time, samples, lost events
 * and file size, redrawn twice a second in place.  Only on a terminal;
 * scripts and pipes get nothing. */
#include <stdio.h>

#include "record/session_int.h"

#define STATUS_EVERY_NS 500000000ull

void nsk_status__update(struct nsk_session *s, uint64_t now, int final)
{
	double bytes;
	char size[32];

	if (!s->status_tty || (!final && now < s->status_next))
		return;
	s->status_next = now + STATUS_EVERY_NS;
	bytes = s->w ? (double)nsk_writer__bytes(s->w) : 0;
	if (bytes < 1e6)
		snprintf(size, sizeof(size), "%.0f kB", bytes / 1e3);
	else
		snprintf(size, sizeof(size), "%.1f MB", bytes / 1e6);
	fprintf(stderr, "\r\033[K[nusku] %.1fs  %llu samples  %llu lost  %s",
		(double)(now - s->start_ns) / 1e9,
		(unsigned long long)s->samples,
		(unsigned long long)s->lost_total, size);
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}
