/* A track's events for the Trace Event Format export (export_track.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/export_track.h"

FILE *nsk_track__begin(struct nsk_track *t, int64_t ts, uint32_t depth)
{
	if (!t->text) {
		t->text = open_memstream(&t->buf, &t->size);
		if (!t->text)
			return NULL;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct nsk_track_ev *e = realloc(t->ev, cap * sizeof(*e));

		if (!e)
			return NULL;
		t->ev = e;
		t->cap = cap;
	}
	t->cur = &t->ev[t->n];
	t->cur->ts = ts;
	t->cur->depth = depth;
	t->cur->off = (size_t)ftell(t->text);
	return t->text;
}

int nsk_track__end(struct nsk_track *t)
{
	long end = ftell(t->text);

	if (end < 0 || ferror(t->text))
		return -ENOMEM;
	t->cur->len = (size_t)end - t->cur->off;
	t->n++;
	t->cur = NULL;
	return 0;
}

static int cmp_ev(const void *a, const void *b)
{
	const struct nsk_track_ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	/* the order they were made in: stable */
	return x->off < y->off ? -1 : x->off > y->off;
}

int nsk_track__flush(struct nsk_track *t, FILE *f, int *first)
{
	if (!t->n)
		return 0;
	if (fflush(t->text))
		return -ENOMEM;
	qsort(t->ev, t->n, sizeof(*t->ev), cmp_ev);
	for (size_t i = 0; i < t->n; i++) {
		fputs(*first ? "\n" : ",\n", f);
		*first = 0;
		fwrite(t->buf + t->ev[i].off, 1, t->ev[i].len, f);
	}
	t->n = 0;
	rewind(t->text); /* the buffer is kept for the next thread */
	return 0;
}

void nsk_track__release(struct nsk_track *t)
{
	if (t->text)
		fclose(t->text);
	free(t->buf);
	free(t->ev);
	memset(t, 0, sizeof(*t));
}

int64_t nsk_track__ticks(int64_t ns)
{
	/* the magnitude as unsigned: -INT64_MIN does not fit */
	uint64_t m = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	/* m * 1024 / 1000 = m * 128 / 125, without overflowing m * 128 */
	uint64_t q = m / 125, r = m % 125, t;

	t = q > (uint64_t)INT64_MAX / 128 ? (uint64_t)INT64_MAX :
		q * 128 + (r * 128 + 62) / 125;
	if (t > (uint64_t)INT64_MAX)
		t = (uint64_t)INT64_MAX;
	return ns < 0 ? -(int64_t)t : (int64_t)t;
}

void nsk_track__us(FILE *f, int64_t ticks)
{
	uint64_t m = ticks < 0 ? -(uint64_t)ticks : (uint64_t)ticks;
	/* 1/1024 = 0.0009765625: ten decimals, exact */
	char frac[16];
	int n = snprintf(frac, sizeof(frac), "%010llu",
			 (unsigned long long)((m & 1023) * 9765625));

	while (n > 3 && frac[n - 1] == '0') /* at least 3, as ns were */
		frac[--n] = 0;
	fprintf(f, "%s%llu.%s", ticks < 0 ? "-" : "",
		(unsigned long long)(m >> 10), frac);
}
