/* The functions and inlined calls at an address (see scopes.h).
 *
 * A unit's index is its code DIEs (subprograms and inlined calls with a
 * range) with the nearest such DIE above each one, and every range of them
 * sorted by start, the outer of two equal ranges first, each with the index
 * of the nearest earlier range that encloses it.  Ranges of nested DIEs
 * nest, so the innermost range holding pc is the last one starting at or
 * below pc or one of the ranges enclosing it: a bisection, then a climb
 * past ranges that end before pc.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <dwarf.h>

#include "record/stacks/grow.h"
#include "record/stacks/intern.h"
#include "record/stacks/scopes.h"

/* Deeper nesting than this (of lexical blocks, inlined calls and imported
 * units together) is not followed: a hostile file's loop of imports ends
 * here. */
#define MAX_DEPTH 64
/* DIEs looked at for one unit, at most: a hostile file's unit that imports
 * one partial unit many times over, at every level, would otherwise be
 * walked an exponential number of times.  Real units stay far below (a
 * large C++ unit has a few hundred thousand). */
#define MAX_DIES (1L << 22)

struct entry {
	Dwarf_Die die;
	int parent; /* the nearest code DIE above, -1 none */
	int subprogram;
};

struct range {
	uint64_t lo, hi;
	int entry, depth;
	int enclosing; /* index of the nearest earlier range around it, -1 none */
};

struct unit {
	long dies_left; /* of MAX_DIES */
	struct entry *e;
	size_t ne, cape;
	struct range *r;
	size_t nr, capr;
};

struct nsk_scopes {
	struct nsk_intern *index; /* unit DIE offset -> 1 + index in units */
	struct unit **units;
	size_t n, cap;
};

struct nsk_scopes *nsk_scopes__new(void)
{
	struct nsk_scopes *s = calloc(1, sizeof(*s));

	if (s && !(s->index = nsk_intern__new())) {
		free(s);
		return NULL;
	}
	return s;
}

static void unit_free(struct unit *u)
{
	if (!u)
		return;
	free(u->e);
	free(u->r);
	free(u);
}

void nsk_scopes__free(struct nsk_scopes *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		unit_free(s->units[i]);
	free(s->units);
	nsk_intern__free(s->index);
	free(s);
}

/* The DIE's ranges into u, for entry; how many, or -ENOMEM. */
static int add_ranges(struct unit *u, Dwarf_Die *die, int entry, int depth)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int n = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (nsk_grow((void **)&u->r, &u->capr, u->nr + 1, sizeof(*u->r)))
			return -ENOMEM;
		u->r[u->nr++] = (struct range){ lo, hi, entry, depth, -1 };
		n++;
	}
	return n;
}

/* parent's children into u: code DIEs with a range become entries under
 * pentry; lexical blocks (anything else with a range), namespaces and
 * imported units are walked through.  0 or -ENOMEM. */
static int walk(struct unit *u, Dwarf_Die *parent, int pentry, int depth)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > MAX_DEPTH || dwarf_child(parent, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child), entry = pentry, n;
		Dwarf_Attribute a;
		Dwarf_Die imported;

		if (--u->dies_left < 0)
			return 0; /* what was indexed so far answers */

		if (tag == DW_TAG_imported_unit) {
			if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &a),
					      &imported))
				err = walk(u, &imported, pentry, depth + 1);
			continue;
		}
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			n = add_ranges(u, &child, (int)u->ne, depth);
			if (n < 0)
				return n;
			if (n == 0) /* a declaration or an abstract instance: no code */
				continue;
			if (nsk_grow((void **)&u->e, &u->cape, u->ne + 1, sizeof(*u->e)))
				return -ENOMEM;
			entry = (int)u->ne++;
			u->e[entry] = (struct entry){ child, pentry,
						      tag == DW_TAG_subprogram };
		} else if (tag != DW_TAG_namespace && tag != DW_TAG_lexical_block &&
			   tag != DW_TAG_try_block && tag != DW_TAG_catch_block) {
			continue; /* types, variables, parameters: no code below */
		}
		err = walk(u, &child, entry, depth + 1);
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

/* Start ascending, then end descending (the outer of two ranges at one
 * start first); of two equal ranges the outer DIE first, and of siblings
 * (an assembler file's aliases of one function) the later one first: the
 * lookup takes the last, and libdw the innermost and then the first. */
static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth - y->depth;
	return y->entry - x->entry;
}

/* Each range's nearest enclosing earlier one, with a stack of the ranges
 * open at its start.  Ranges that overlap without nesting (not from a
 * compiler that follows DWARF) just do not enclose each other. */
static int link_ranges(struct unit *u)
{
	int *stack = malloc((u->nr + 1) * sizeof(*stack));
	size_t top = 0;

	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i < u->nr; i++) {
		struct range *r = &u->r[i];

		while (top && !(r->hi <= u->r[stack[top - 1]].hi))
			top--;
		r->enclosing = top ? stack[top - 1] : -1;
		stack[top++] = (int)i;
	}
	free(stack);
	return 0;
}

static struct unit *unit_build(Dwarf_Die *cu)
{
	struct unit *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->dies_left = MAX_DIES;
	if (walk(u, cu, -1, 0))
		goto fail;
	if (u->nr)
		qsort(u->r, u->nr, sizeof(*u->r), cmp_range);
	if (link_ranges(u))
		goto fail;
	return u;
fail:
	unit_free(u);
	return NULL;
}

static struct unit *unit_of(struct nsk_scopes *s, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu), v = nsk_intern__find(s->index, &key, 8);
	struct unit *u;

	if (v)
		return s->units[v - 1];
	if (nsk_grow((void **)&s->units, &s->cap, s->n + 1, sizeof(*s->units)))
		return NULL;
	u = unit_build(cu);
	if (!u)
		return NULL;
	if (nsk_intern__add(s->index, &key, 8, s->n + 1)) {
		unit_free(u);
		return NULL;
	}
	s->units[s->n++] = u;
	return u;
}

int nsk_scopes__at(struct nsk_scopes *s, Dwarf_Die *cu, Dwarf_Addr pc,
		   Dwarf_Die *out, int max)
{
	struct unit *u = unit_of(s, cu);
	size_t lo = 0, hi;
	int i, e, n = 0;

	if (!u)
		return -ENOMEM;
	/* the last range starting at or below pc */
	hi = u->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = (int)lo - 1;
	while (i >= 0 && u->r[i].hi <= pc)
		i = u->r[i].enclosing;
	if (i < 0)
		return 0;
	for (e = u->r[i].entry; e >= 0 && n < max; e = u->e[e].parent) {
		out[n++] = u->e[e].die;
		if (u->e[e].subprogram)
			break;
	}
	return n;
}
