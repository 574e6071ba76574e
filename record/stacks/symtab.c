/* A module's symbols, sorted once (see symtab.h).
 *
 * Entries are the symbols libdwfl would consider (named, defined, not a
 * section, file or TLS symbol), sorted by address.  Each also holds the
 * highest end (address + size) of any entry up to it, so a look back from
 * the address stops as soon as no earlier symbol can reach it, and the
 * same figure is libdwfl's lower bound for a sizeless symbol: one that a
 * sized symbol's range passes is only a label inside that symbol.
 */
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "record/stacks/symtab.h"

/* How far back a look goes among symbols that all reach past the address
 * (a huge object symbol below code would otherwise make it linear). */
#define LOOK_BACK 256

struct ent {
	uint64_t value, size;
	uint64_t end_max;	     /* max value + size of entries [0, this] */
	uint64_t sec_start, sec_end; /* a sizeless one's section; 0, 0 none */
	const char *name;
	int bind;  /* higher is better: global 3, weak 2, local 1 */
	int index; /* in libdwfl's table: the first of equals wins */
};

/* libdwfl looks at the global and weak symbols first and at the local
 * ones only when none of those fits: two classes, each sorted. */
struct class {
	struct ent *e;
	size_t n;
};

struct nsk_symtab {
	struct class global, local;
};

static int bind_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	default:
		return 1;
	}
}

/* By address; at one address the preferred symbol last, where a look
 * back from above meets it first: a sized one after sizeless ones, the
 * better bound after the worse, the first in the table after the later. */
static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if ((x->size != 0) != (y->size != 0))
		return x->size ? 1 : -1;
	if (x->bind != y->bind)
		return x->bind - y->bind;
	return y->index - x->index;
}

/* The section of a sizeless symbol, in the Dwfl's addresses. */
static void section_of(struct ent *e, Elf *elf, GElf_Word shndx, Dwarf_Addr bias)
{
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC))
		return;
	e->sec_start = shdr.sh_addr + bias;
	e->sec_end = e->sec_start + shdr.sh_size;
}

static void class_sort(struct class *c)
{
	uint64_t end_max = 0;
	struct ent *fit;

	/* both classes were sized for every symbol: keep what each holds */
	if (!c->n) {
		free(c->e);
		c->e = NULL;
		return;
	}
	fit = realloc(c->e, c->n * sizeof(*c->e));
	if (fit)
		c->e = fit;

	qsort(c->e, c->n, sizeof(*c->e), cmp_ent);
	for (size_t i = 0; i < c->n; i++) {
		uint64_t end = c->e[i].value + c->e[i].size;

		if (end > end_max)
			end_max = end;
		c->e[i].end_max = end_max;
	}
}

struct nsk_symtab *nsk_symtab__new(Dwfl_Module *mod)
{
	int nsyms = mod ? dwfl_module_getsymtab(mod) : -1;
	struct nsk_symtab *t = NULL;

	if (nsyms <= 1)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->global.e = calloc((size_t)nsyms, sizeof(struct ent))) ||
	    !(t->local.e = calloc((size_t)nsyms, sizeof(struct ent))))
		goto fail;
	for (int i = 1; i < nsyms; i++) { /* 0 is the null symbol */
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		Elf *elf = NULL;
		Dwarf_Addr bias = 0;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx,
							   &elf, &bias);
		int type = GELF_ST_TYPE(sym.st_info), bind;
		struct class *c;
		struct ent *e;

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		bind = bind_rank(&sym);
		c = bind > 1 ? &t->global : &t->local;
		e = &c->e[c->n++];
		e->value = value;
		e->size = sym.st_size;
		e->name = name;
		e->bind = bind;
		e->index = i;
		if (!e->size && shndx != SHN_UNDEF && shndx < SHN_LORESERVE)
			section_of(e, elf, shndx, bias);
	}
	if (!t->global.n && !t->local.n)
		goto fail;
	class_sort(&t->global);
	class_sort(&t->local);
	return t;
fail:
	nsk_symtab__free(t);
	return NULL;
}

void nsk_symtab__free(struct nsk_symtab *t)
{
	if (!t)
		return;
	free(t->global.e);
	free(t->local.e);
	free(t);
}

/* How many entries start at or below addr. */
static size_t upper(const struct class *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->e[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* In one class: the closest sized symbol whose range holds addr (returned),
 * else the closest sizeless one in addr's section (*sizeless), and the
 * highest end of any symbol below (*min_label). */
static const struct ent *class_find(const struct class *c, uint64_t addr,
				    const struct ent **sizeless, uint64_t *min_label)
{
	size_t hi = upper(c, addr), i;

	*sizeless = NULL;
	if (!hi)
		return NULL;
	if (c->e[hi - 1].end_max > *min_label)
		*min_label = c->e[hi - 1].end_max;
	for (i = hi; i-- > 0 && hi - i <= LOOK_BACK;) {
		const struct ent *e = &c->e[i];

		if (e->size && addr - e->value < e->size)
			return e;
		if (e->end_max <= addr)
			break; /* nothing before reaches addr */
	}
	for (i = hi; i-- > 0 && hi - i <= LOOK_BACK;) {
		const struct ent *e = &c->e[i];

		if (e->size)
			continue;
		/* in no section (SHN_ABS: a version name) it is no place */
		if (addr >= e->sec_start && addr < e->sec_end)
			*sizeless = e;
		break;
	}
	return NULL;
}

const char *nsk_symtab__find(const struct nsk_symtab *t, uint64_t addr,
			     uint64_t *off, uint64_t *size)
{
	const struct ent *hit = NULL, *gs = NULL, *ls = NULL;
	uint64_t min_label = 0;

	if (!t)
		return NULL;
	hit = class_find(&t->global, addr, &gs, &min_label);
	/* the locals, unless a global fits, sized or sizeless and exact */
	if (!hit && !(gs && gs->value == addr))
		hit = class_find(&t->local, addr, &ls, &min_label);
	if (!hit) {
		/* the closer sizeless one; the global at a tie */
		hit = ls && (!gs || ls->value > gs->value) ? ls : gs;
		if (hit && hit->value < min_label)
			hit = NULL; /* a label inside a sized symbol below */
	}
	if (!hit)
		return NULL;
	*off = addr - hit->value;
	*size = hit->size;
	return hit->name;
}
