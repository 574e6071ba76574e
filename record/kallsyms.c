/* /proc/kallsyms as a sorted array of text symbols, looked up by binary
 * search.  Names and module names point into one arena per table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/kallsyms.h"

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;
};

struct nsk_kallsyms {
	struct ksym *syms;
	size_t n, cap;
	char **blocks; /* name storage */
	size_t nblocks;
};

static const char *save(struct nsk_kallsyms *k, const char *s)
{
	char *c = strdup(s);
	char **b;

	if (!c)
		return NULL;
	b = realloc(k->blocks, (k->nblocks + 1) * sizeof(*b));
	if (!b) {
		free(c);
		return NULL;
	}
	k->blocks = b;
	k->blocks[k->nblocks++] = c;
	return c;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void nsk_kallsyms__free(struct nsk_kallsyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nblocks; i++)
		free(k->blocks[i]);
	free(k->blocks);
	free(k->syms);
	free(k);
}

int nsk_kallsyms__load(const char *path, struct nsk_kallsyms **out)
{
	struct nsk_kallsyms *k = calloc(1, sizeof(*k));
	char line[512], name[256], mod[128];
	const char *last_mod = "vmlinux";
	unsigned long long addr;
	FILE *f = NULL;
	char type;
	int err = 0;

	if (!k)
		return -ENOMEM;
	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		goto done; /* no kernel symbols: frames stay unresolved */
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type,
			       name, mod);

		if (n < 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (k->n == k->cap) {
			size_t cap = k->cap ? k->cap * 2 : 65536;
			struct ksym *s = realloc(k->syms, cap * sizeof(*s));

			if (!s) {
				err = -ENOMEM;
				goto done;
			}
			k->syms = s;
			k->cap = cap;
		}
		k->syms[k->n].addr = addr;
		k->syms[k->n].name = save(k, name);
		if (n == 4) {
			/* Module symbols come grouped: share the string. */
			if (strcmp(last_mod, mod))
				last_mod = save(k, mod);
		} else {
			last_mod = "vmlinux";
		}
		k->syms[k->n].module = last_mod;
		if (!k->syms[k->n].name || !last_mod) {
			err = -ENOMEM;
			goto done;
		}
		k->n++;
	}
	qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
done:
	if (f)
		fclose(f);
	if (err) {
		nsk_kallsyms__free(k);
		return err;
	}
	*out = k;
	return 0;
}

int nsk_kallsyms__find(const struct nsk_kallsyms *k, uint64_t addr,
		       const char **name, const char **module)
{
	size_t lo = 0, hi = k->n;

	/* the last symbol at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	*name = k->syms[lo - 1].name;
	*module = k->syms[lo - 1].module;
	return 1;
}
