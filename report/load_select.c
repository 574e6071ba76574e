/* A filter applied while loading (load.h: struct nsk_load_select): the
 * same selection report/filter.c writes in SQL for the f_ views, asked of
 * one event at a time, so that a load that sums allocations (the memory
 * views) can sum only the selected ones instead of making a row of each.
 * Each test is the SQL one to the bit: pids and tids compared as integers,
 * comm by the name the loader holds for the thread (its comm table row),
 * and times as the signed 64-bit values SQLite stores. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/load.h"

struct nsk_load_sel {
	uint32_t *pids, *tids;
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
	int by_pid, by_tid, by_comm; /* the lists given (even empty) */
	int has_lo, has_hi;
	int64_t lo, hi;
	uint8_t *comm_ok; /* per comm id: 0 not asked yet, 1 selected, 2 not */
	size_t ncomm_ok;
};

/* "1,22,3" -> numbers; one past UINT32_MAX can match no event and is
 * left out (the option was checked to be digits and commas). */
static int parse_ids(const char *list, uint32_t **out, size_t *n)
{
	size_t cap = 1;

	for (const char *p = list; *p; p++)
		cap += *p == ',';
	*out = calloc(cap, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*n = 0;
	for (const char *p = list; *p;) {
		char *end;
		unsigned long long v = strtoull(p, &end, 10);

		if (end != p && v <= UINT32_MAX)
			(*out)[(*n)++] = (uint32_t)v;
		p = end + strcspn(end, ",");
		if (*p == ',')
			p++;
	}
	return 0;
}

/* "a,b" -> names, as filter.c's quoted_list splits them. */
static int parse_names(const char *list, char ***out, size_t *n)
{
	size_t cap = 1;

	for (const char *p = list; *p; p++)
		cap += *p == ',';
	*out = calloc(cap, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*n = 0;
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");

		if (!((*out)[(*n)++] = strndup(p, len)))
			return -ENOMEM;
		p += len;
		if (!*p)
			break;
		p++;
	}
	return 0;
}

int64_t nsk_load__after_start(int64_t start, double seconds)
{
	int64_t ns = (int64_t)(seconds * 1e9);

	return start > INT64_MAX - ns ? INT64_MAX : start + ns;
}

void nsk_load_sel__free(struct nsk_load_sel *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncomms; i++)
		free(s->comms[i]);
	free(s->comms);
	free(s->pids);
	free(s->tids);
	free(s->comm_ok);
	free(s);
}

int nsk_load__select(struct nsk_load *ld, const struct nsk_load_select *want,
		     uint64_t start)
{
	struct nsk_load_sel *s = calloc(1, sizeof(*s));
	int err = 0;

	if (!s)
		return -ENOMEM;
	if (want->pids)
		err = parse_ids(want->pids, &s->pids, &s->npids);
	if (!err && want->tids)
		err = parse_ids(want->tids, &s->tids, &s->ntids);
	if (!err && want->comms)
		err = parse_names(want->comms, &s->comms, &s->ncomms);
	if (err) {
		nsk_load_sel__free(s);
		return err;
	}
	s->has_lo = want->since >= 0;
	s->has_hi = want->until >= 0;
	if (s->has_lo)
		s->lo = nsk_load__after_start((int64_t)start, want->since);
	if (s->has_hi)
		s->hi = nsk_load__after_start((int64_t)start, want->until);
	s->by_pid = !!want->pids;
	s->by_tid = !!want->tids;
	s->by_comm = !!want->comms;
	nsk_load_sel__free(ld->sel);
	ld->sel = s;
	return 0;
}

static int has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/* Whether the thread's comm (the comm_id its row gets) is one named. */
static int comm_selected(struct nsk_load *ld, uint32_t pid, uint32_t tid)
{
	struct nsk_load_sel *s = ld->sel;
	int64_t id = nsk_load__comm(ld, pid, tid);
	const char *name;

	if (id <= 0) /* comm_id NULL: IN selects nothing */
		return 0;
	if ((size_t)id >= s->ncomm_ok) {
		size_t cap = (size_t)id * 2 + 16;
		uint8_t *ok = realloc(s->comm_ok, cap);

		if (!ok)
			return -ENOMEM;
		memset(ok + s->ncomm_ok, 0, cap - s->ncomm_ok);
		s->comm_ok = ok;
		s->ncomm_ok = cap;
	}
	if (!s->comm_ok[id]) {
		name = nsk_strtab__get(&ld->comms, (uint32_t)id);
		s->comm_ok[id] = 2;
		for (size_t i = 0; name && i < s->ncomms; i++)
			if (!strcmp(s->comms[i], name))
				s->comm_ok[id] = 1;
	}
	return s->comm_ok[id] == 1;
}

int nsk_load__selected(struct nsk_load *ld, uint32_t pid, uint32_t tid,
		       uint64_t time)
{
	struct nsk_load_sel *s = ld->sel;

	if (!s)
		return 1;
	if (s->by_pid && !has_id(s->pids, s->npids, pid))
		return 0;
	if (s->by_tid && !has_id(s->tids, s->ntids, tid))
		return 0;
	if (s->has_lo && (int64_t)time < s->lo)
		return 0;
	if (s->has_hi && (int64_t)time > s->hi)
		return 0;
	return s->by_comm ? comm_selected(ld, pid, tid) : 1;
}
