/* The running kernel's syscall names, by number.
 *
 * The build host's <asm/unistd.h> may be older than the kernel a recording
 * runs on (Debian 12's headers stop before uretprobe, 335 on x86-64), so
 * the recorder asks the kernel: /proc/kallsyms (the recording's one copy,
 * record/stacks/kallsyms.h) gives the handlers' addresses (__x64_sys_NAME)
 * and the bounds of read-only data, and
 * bpf/sctable.bpf.c, run once with BPF_PROG_TEST_RUN, finds sys_call_table
 * there and copies its words (see that file for why the table is searched
 * for: kallsyms lists no data symbols unless CONFIG_KALLSYMS_ALL).  Each
 * word is named by the handler it points to.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/sctable.h"
#include "record/stacks/kallsyms.h"
#include "sctable.skel.h"
#include <nusku/events/sctable.h>

#if defined(__x86_64__)
#define SYS_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define SYS_PREFIX "__arm64_sys_"
#else
#define SYS_PREFIX NULL
#endif

struct nsk_sctable {
	uint32_t n;
	char **names;
};

struct handler {
	uint64_t addr;
	char *name; /* without the prefix; NULL for ni_syscall */
};

struct handlers {
	struct handler *v;
	size_t n, cap;
	uint64_t rodata, rodata_end;
};

static int cmp_handler(const void *a, const void *b)
{
	const struct handler *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void handlers_free(struct handlers *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->v[i].name);
	free(h->v);
}

/* The handlers and the bounds of read-only data, from the recording's
 * kallsyms (record/stacks/kallsyms.h). */
static int read_handlers(const struct nsk_kallsyms *k, struct handlers *h,
			 char *why, size_t len)
{
	size_t plen = strlen(SYS_PREFIX), n = nsk_kallsyms__count(k);

	for (size_t i = 0; i < n; i++) {
		const char *name, *module;
		struct handler *v;
		uint64_t addr;

		nsk_kallsyms__at(k, i, &addr, &name, &module);
		/* modules have no syscalls */
		if (strcmp(module, "vmlinux") || strncmp(name, SYS_PREFIX, plen))
			continue;
		if (h->n == h->cap) {
			size_t cap = h->cap ? 2 * h->cap : 1024;

			v = realloc(h->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			h->v = v;
			h->cap = cap;
		}
		v = &h->v[h->n];
		v->addr = addr;
		v->name = strcmp(name + plen, "ni_syscall") ? strdup(name + plen) : NULL;
		if (v->name || !strcmp(name + plen, "ni_syscall"))
			h->n++;
	}
	if (!h->n || !nsk_kallsyms__rodata(k, &h->rodata, &h->rodata_end)) {
		snprintf(why, len, "no syscall handlers or read-only data bounds in "
			 "/proc/kallsyms (addresses hidden?)");
		return -ENOENT;
	}
	qsort(h->v, h->n, sizeof(*h->v), cmp_handler);
	return 0;
}

static const struct handler *by_addr(const struct handlers *h, uint64_t addr)
{
	struct handler key = { .addr = addr };

	return bsearch(&key, h->v, h->n, sizeof(*h->v), cmp_handler);
}

static uint64_t addr_of(const struct handlers *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].name && !strcmp(h->v[i].name, name))
			return h->v[i].addr;
	return 0;
}

/* Finds and copies the table with bpf/sctable.bpf.c. */
static int copy_table(const struct handlers *h, uint64_t *words,
		      char *why, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct sctable_bpf *skel = sctable_bpf__open_and_load();
	int err = 0;

	if (!skel) {
		err = -errno;
		snprintf(why, len, "cannot load the table reader: %s", strerror(errno));
		return err;
	}
	skel->bss->scan_start = h->rodata & ~7ULL;
	skel->bss->scan_end = h->rodata_end;
	skel->bss->want_first = addr_of(h, "read");
	skel->bss->want_second = addr_of(h, "write");
	skel->bss->first_nr = SYS_read;
	skel->bss->gap_words = SYS_write - SYS_read;
	if (!skel->bss->want_first || !skel->bss->want_second) {
		snprintf(why, len, "no read/write handlers in /proc/kallsyms");
		err = -ENOENT;
		goto cleanup;
	}
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.nsk_sctable), &run)) {
		err = -errno;
		snprintf(why, len, "cannot run the table reader: %s", strerror(errno));
		goto cleanup;
	}
	if (!skel->bss->table_addr) {
		snprintf(why, len, "sys_call_table not found in read-only data");
		err = -ENOENT;
		goto cleanup;
	}
	memcpy(words, skel->bss->words, sizeof(skel->bss->words));
cleanup:
	sctable_bpf__destroy(skel);
	return err;
}

void nsk_sctable__free(struct nsk_sctable *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	free(t);
}

int nsk_sctable__read(const struct nsk_kallsyms *k, struct nsk_sctable **out,
		      char *why, size_t len)
{
	static uint64_t words[NSK_SCT_MAX];
	struct handlers h = { 0 };
	struct nsk_sctable *t = NULL;
	uint32_t n = 0;
	int err;

	*out = NULL;
	if (!SYS_PREFIX) {
		snprintf(why, len, "no syscall table reader for this architecture");
		return -ENOTSUP;
	}
	if (!k) {
		snprintf(why, len, "no kernel symbols (/proc/kallsyms unreadable or hidden)");
		return -ENOENT;
	}
	err = read_handlers(k, &h, why, len);
	if (err)
		goto cleanup;
	err = copy_table(&h, words, why, len);
	if (err)
		goto cleanup;
	/* The table ends at the first word that is not a handler. */
	while (n < NSK_SCT_MAX && by_addr(&h, words[n]))
		n++;
	if (n <= (uint32_t)SYS_write) {
		snprintf(why, len, "the syscall table found is too short (%u)", n);
		err = -ENOENT;
		goto cleanup;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->names = calloc(n, sizeof(*t->names)))) {
		err = -ENOMEM;
		goto cleanup;
	}
	t->n = n;
	for (uint32_t i = 0; i < n; i++) {
		const struct handler *x = by_addr(&h, words[i]);

		if (x->name && !(t->names[i] = strdup(x->name))) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	*out = t;
	t = NULL;
cleanup:
	if (err == -ENOMEM)
		snprintf(why, len, "out of memory");
	nsk_sctable__free(t);
	handlers_free(&h);
	return err;
}

uint32_t nsk_sctable__count(const struct nsk_sctable *t)
{
	return t ? t->n : 0;
}

const char *nsk_sctable__name(const struct nsk_sctable *t, uint32_t nr)
{
	return t && nr < t->n ? t->names[nr] : NULL;
}

int nsk_sctable__find(const struct nsk_sctable *t, const char *name)
{
	for (uint32_t i = 0; t && i < t->n; i++)
		if (t->names[i] && !strcmp(t->names[i], name))
			return (int)i;
	return -ENOENT;
}
