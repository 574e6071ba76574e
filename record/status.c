/* The one-line live status on stderr: elapsed time, samples, lost events
 * and file size, redrawn twice a second in place.  Only on a terminal;
 * scripts and pipes get nothing.  The same figures, once a second, for
 * opts.on_progress (a background session's state file). */
#include <stdio.h>
#include <string.h>

#include "record/own.h"
#include "record/session_int.h"

#define STATUS_EVERY_NS 500000000ull
#define PROGRESS_EVERY_NS 1000000000ull

void nsk_status__progress(struct nsk_session *s, uint64_t now, int started,
			  int final)
{
	struct nsk_record_progress p = { .started = started, .final = final };
	struct nsk_own_cost c;
	char signals[256] = "";

	if (!s->opts.on_progress || (!started && !final && now < s->progress_next))
		return;
	s->progress_next = now + PROGRESS_EVERY_NS;
	for (int i = 0; i < s->nsigs; i++) {
		size_t len = strlen(signals);

		snprintf(signals + len, sizeof(signals) - len, "%s%s",
			 i ? "," : "", s->sigs[i].sig->name);
	}
	p.signals = signals;
	p.target_pid = (int)s->root;
	p.elapsed_ns = now - s->start_ns;
	p.records = s->records;
	p.samples = s->samples;
	p.lost = s->lost_total;
	p.bytes = s->w ? nsk_writer__bytes(s->w) : 0;
	/* the estimate the END's META cost.* will hold, so far */
	if (s->own && !nsk_own__stats_error(s->own) &&
	    !nsk_own__cost_so_far(s->own, &c)) {
		p.have_cost = 1;
		p.bpf_run_ns = c.run_ns;
		p.bpf_runs = c.runs;
	}
	s->opts.on_progress(s->opts.progress_ctx, &p);
}

void nsk_status__update(struct nsk_session *s, uint64_t now, int final)
{
	double bytes;
	char size[32];

	if (!final)
		nsk_status__progress(s, now, 0, 0);
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
