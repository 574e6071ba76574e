/* Per-process address lists of the allocation loader (alloc_owned.h). */
#include <errno.h>
#include <stdlib.h>

#include "report/alloc_owned.h"

void nsk_owned__keep(struct nsk_owned *o, struct nsk_owned_list *l,
		     uint32_t pid, nsk_owned_holds_fn holds, void *ctx)
{
	uint32_t n = 0;

	if (!++o->pass) {
		holds(ctx, 0, 0, 0); /* wrapped: marks forgotten */
		o->pass = 1;
	}
	for (uint32_t i = 0; i < l->n; i++)
		if (holds(ctx, pid, l->addr[i], o->pass))
			l->addr[n++] = l->addr[i];
	l->n = n;
	if (!n) {
		free(l->addr);
		l->addr = NULL;
		l->cap = 0;
	}
}

struct nsk_owned_list *nsk_owned__of(struct nsk_owned *o, uint32_t pid)
{
	uint64_t i;

	if (!nsk_idmap__get(&o->index, pid, &i) || !i)
		return NULL;
	return &o->l[i - 1];
}

int nsk_owned__add(struct nsk_owned *o, uint32_t pid, uint64_t addr,
		   nsk_owned_holds_fn holds, void *ctx)
{
	struct nsk_owned_list *l = nsk_owned__of(o, pid);

	if (!l) {
		if (o->n == o->cap) {
			size_t cap = o->cap ? o->cap * 2 : 64;
			struct nsk_owned_list *ls = realloc(o->l, cap * sizeof(*ls));

			if (!ls)
				return -ENOMEM;
			o->l = ls;
			o->cap = cap;
		}
		if (nsk_idmap__set(&o->index, pid, o->n + 1))
			return -ENOMEM;
		l = &o->l[o->n++];
		*l = (struct nsk_owned_list){ 0 };
	}
	if (l->n == l->cap) {
		if (l->n)
			nsk_owned__keep(o, l, pid, holds, ctx);
		if (l->n >= l->cap / 2) {
			uint32_t cap = l->cap ? l->cap * 2 : 8;
			uint64_t *a;

			if (cap < l->cap)
				return -ENOMEM;
			a = realloc(l->addr, (size_t)cap * sizeof(*a));
			if (!a)
				return -ENOMEM;
			l->addr = a;
			l->cap = cap;
		}
	}
	l->addr[l->n++] = addr;
	return 0;
}

void nsk_owned__release(struct nsk_owned *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->l[i].addr);
	free(o->l);
	nsk_idmap__release(&o->index);
	*o = (struct nsk_owned){ 0 };
}
