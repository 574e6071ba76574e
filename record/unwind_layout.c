/* Remembered DWARF walks, replayed by checking return-address slots (see
 * unwind_layout.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/unwind_layout.h"

/* Paths kept per leaf ip; the oldest is replaced. */
#define NSK_LAYOUT_PATHS 4
/* Leaf ips kept per address space; past this the table starts over. */
#define NSK_LAYOUT_IPS 4096

struct layout {
	uint32_t n;	/* frames, leaf first */
	int rc;		/* 0: the walk was complete; 1: it stopped early */
	uint32_t len;	/* rc 1: the copy it ran out of */
	uint64_t *ips;	/* n return addresses (ips[0] is the leaf ip) */
	uint32_t *reach; /* n: bytes of copy frame i needed; slot at reach-8 */
};

struct leaf {
	uint64_t ip; /* 0: empty */
	uint32_t next; /* path to replace next */
	struct layout paths[NSK_LAYOUT_PATHS];
};

struct nsk_unwind_layouts {
	struct leaf *leaves; /* open addressing, 2 * NSK_LAYOUT_IPS */
	uint32_t used;
};

#define NSK_LAYOUT_SLOTS (2 * NSK_LAYOUT_IPS)

static void layout_clear(struct layout *p)
{
	free(p->ips);
	free(p->reach);
	memset(p, 0, sizeof(*p));
}

static void leaves_clear(struct nsk_unwind_layouts *l)
{
	for (uint32_t i = 0; i < NSK_LAYOUT_SLOTS; i++)
		for (int j = 0; j < NSK_LAYOUT_PATHS; j++)
			layout_clear(&l->leaves[i].paths[j]);
	memset(l->leaves, 0, NSK_LAYOUT_SLOTS * sizeof(*l->leaves));
	l->used = 0;
}

int nsk_unwind_layouts__new(struct nsk_unwind_layouts **out)
{
	struct nsk_unwind_layouts *l = calloc(1, sizeof(*l));

	if (l)
		l->leaves = calloc(NSK_LAYOUT_SLOTS, sizeof(*l->leaves));
	if (!l || !l->leaves) {
		free(l);
		*out = NULL;
		return -ENOMEM;
	}
	*out = l;
	return 0;
}

void nsk_unwind_layouts__free(struct nsk_unwind_layouts *l)
{
	if (!l)
		return;
	leaves_clear(l);
	free(l->leaves);
	free(l);
}

/* The slot of ip: its leaf, or the empty slot it would take. */
static struct leaf *slot_of(struct nsk_unwind_layouts *l, uint64_t ip)
{
	uint32_t i = (uint32_t)((ip * 0x9e3779b97f4a7c15ULL) >> 40) % NSK_LAYOUT_SLOTS;

	while (l->leaves[i].ip && l->leaves[i].ip != ip)
		i = (i + 1) % NSK_LAYOUT_SLOTS;
	return &l->leaves[i];
}

/* Whether every return address of p sits at its slot in this copy. */
static int fits(const struct layout *p, const uint8_t *stack, size_t len)
{
	if (p->rc == 1 && len > p->len)
		return 0; /* more copy than that walk had: it may go further */
	for (uint32_t i = 1; i < p->n; i++) {
		uint64_t w;

		if (p->reach[i] > len)
			return 0;
		memcpy(&w, stack + p->reach[i] - 8, sizeof(w));
		if (w != p->ips[i])
			return 0;
	}
	return 1;
}

int nsk_unwind_layouts__replay(struct nsk_unwind_layouts *l, uint64_t ip,
			       const uint8_t *stack, size_t len, uint64_t *ips,
			       uint32_t *reach, uint32_t max, uint32_t *n)
{
	struct leaf *f = slot_of(l, ip);

	if (!f->ip)
		return -ENOENT;
	for (int j = 0; j < NSK_LAYOUT_PATHS; j++) {
		const struct layout *p = &f->paths[j];

		if (!p->n || p->n > max || !fits(p, stack, len))
			continue;
		memcpy(ips, p->ips, p->n * sizeof(*ips));
		if (reach)
			memcpy(reach, p->reach, p->n * sizeof(*reach));
		*n = p->n;
		return p->rc;
	}
	return -ENOENT;
}

void nsk_unwind_layouts__remember(struct nsk_unwind_layouts *l, uint64_t ip,
				  const uint8_t *stack, size_t len,
				  const uint64_t *ips, const uint32_t *reach,
				  uint32_t n, int rc)
{
	struct layout p = { .n = n, .rc = rc, .len = (uint32_t)len };
	struct leaf *f;

	if (!n || ips[0] != ip || rc < 0)
		return;
	/* Only a walk whose every return address was the last word its frame
	 * read can be checked by a replay. */
	p.ips = (uint64_t *)ips;
	p.reach = (uint32_t *)reach;
	for (uint32_t i = 1; i < n; i++)
		if (reach[i] < 8 || reach[i] <= reach[i - 1])
			return;
	if (!fits(&p, stack, len))
		return;
	f = slot_of(l, ip);
	if (!f->ip) {
		if (l->used >= NSK_LAYOUT_IPS) {
			leaves_clear(l);
			f = slot_of(l, ip);
		}
		f->ip = ip;
		l->used++;
	}
	p.ips = malloc(n * sizeof(*p.ips));
	p.reach = malloc(n * sizeof(*p.reach));
	if (!p.ips || !p.reach) {
		free(p.ips);
		free(p.reach);
		return;
	}
	memcpy(p.ips, ips, n * sizeof(*p.ips));
	memcpy(p.reach, reach, n * sizeof(*p.reach));
	layout_clear(&f->paths[f->next]);
	f->paths[f->next] = p;
	f->next = (f->next + 1) % NSK_LAYOUT_PATHS;
}
