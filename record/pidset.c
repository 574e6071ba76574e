/* A set of process ids (see pidset.h).  A removed slot keeps a tombstone
 * so lookups go on past it; adds reuse tombstones, and a rebuild at 3/4
 * of the slots (live and tombstones) drops them, at the same size unless
 * the live ones take half: a set that follows processes as they come and
 * go (a build's thousands) stays the size of the ones alive at once. */
#include <errno.h>
#include <stdlib.h>

#include "record/pidset.h"

#define GONE UINT32_MAX

static size_t home(uint32_t pid, size_t n)
{
	return (size_t)((pid * 0x9e3779b97f4a7c15ULL) >> 32) & (n - 1);
}

static int rebuild(struct nsk_pidset *s, size_t n)
{
	uint32_t *slot = calloc(n, sizeof(*slot));
	size_t used = 0;

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t j;

		if (!s->slot[i] || s->slot[i] == GONE)
			continue;
		for (j = home(s->slot[i] - 1, n); slot[j]; j = (j + 1) & (n - 1))
			;
		slot[j] = s->slot[i];
		used++;
	}
	free(s->slot);
	s->slot = slot;
	s->n = n;
	s->used = used;
	return 0;
}

int nsk_pidset__add(struct nsk_pidset *s, uint32_t pid)
{
	size_t i, tomb = SIZE_MAX;

	if (!pid || pid >= GONE - 1) /* pid + 1 would be the tombstone */
		return 0;
	if (nsk_pidset__has(s, pid))
		return 0;
	if ((s->used + 1) * 4 > s->n * 3) {
		size_t live = 0, n = s->n ? s->n : 64;

		for (size_t j = 0; j < s->n; j++)
			live += s->slot[j] && s->slot[j] != GONE;
		if ((live + 1) * 2 > n)
			n *= 2;
		if (rebuild(s, n))
			return -ENOMEM;
	}
	for (i = home(pid, s->n); s->slot[i]; i = (i + 1) & (s->n - 1))
		if (s->slot[i] == GONE && tomb == SIZE_MAX)
			tomb = i;
	if (tomb != SIZE_MAX) {
		s->slot[tomb] = pid + 1;
		return 0;
	}
	s->slot[i] = pid + 1;
	s->used++;
	return 0;
}

static size_t find(const struct nsk_pidset *s, uint32_t pid)
{
	if (!s->n)
		return SIZE_MAX;
	for (size_t i = home(pid, s->n); s->slot[i]; i = (i + 1) & (s->n - 1))
		if (s->slot[i] == pid + 1)
			return i;
	return SIZE_MAX;
}

void nsk_pidset__remove(struct nsk_pidset *s, uint32_t pid)
{
	size_t i = find(s, pid);

	if (i != SIZE_MAX)
		s->slot[i] = GONE;
}

int nsk_pidset__has(const struct nsk_pidset *s, uint32_t pid)
{
	return pid && pid < GONE - 1 && find(s, pid) != SIZE_MAX;
}

void nsk_pidset__free(struct nsk_pidset *s)
{
	free(s->slot);
	s->slot = NULL;
	s->n = s->used = 0;
}
