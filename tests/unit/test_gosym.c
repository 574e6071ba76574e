/* Unit tests of the Go pc-line table reader (record/stacks/gosym.h).
 *
 * The answers come from elsewhere: tables built here by hand in each
 * layout (Go 1.2, 1.16, 1.18, 1.20) with functions, files and lines chosen
 * in advance; and real tables of Go binaries built by Debian's `go`
 * (stripped, position-independent, linked by gcc) and of Debian's own
 * gofmt and go, checked function by function against the Go toolchain's
 * debug/gosym (tests/tools/gosym_oracle.go).  Then the same tables cut
 * short and corrupted, read from buffers that end at an unmapped page: a
 * read past the end is a crash, not a silent pass.  Without `go` the real
 * tables are skipped (said on stderr), the rest still runs.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/stacks/gosym.h"

static char tmp[] = "/tmp/nusku-gosym.XXXXXX";
static int have_go;

/* ---- buffers whose next byte is unmapped ---------------------------- */

struct guarded {
	uint8_t *map;
	size_t maplen;
	uint8_t *data;
};

static uint8_t *guarded_copy(struct guarded *g, const void *src, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = (len + page - 1) / page + 1;

	g->maplen = (pages + 1) * page;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(g->map, MAP_FAILED);
	ck_assert_int_eq(mprotect(g->map + pages * page, page, PROT_NONE), 0);
	g->data = g->map + pages * page - len;
	memcpy(g->data, src, len);
	return g->data;
}

static void guarded_free(struct guarded *g)
{
	munmap(g->map, g->maplen);
}

/* ---- tables built by hand -------------------------------------------- */

struct buf {
	uint8_t b[4096];
	size_t n;
};

static size_t put(struct buf *b, uint64_t v, unsigned size)
{
	size_t at = b->n;

	ck_assert_uint_le(b->n + size, sizeof(b->b));
	for (unsigned i = 0; i < size; i++)
		b->b[b->n++] = (uint8_t)(v >> (8 * i));
	return at;
}

static void set(struct buf *b, size_t at, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		b->b[at + i] = (uint8_t)(v >> (8 * i));
}

static void putstr(struct buf *b, const char *s)
{
	size_t len = strlen(s) + 1;

	ck_assert_uint_le(b->n + len, sizeof(b->b));
	memcpy(b->b + b->n, s, len);
	b->n += len;
}

static void uvarint(struct buf *b, uint32_t v)
{
	while (v >= 0x80) {
		put(b, (v & 0x7f) | 0x80, 1);
		v >>= 7;
	}
	put(b, v, 1);
}

/* A pc table: (value, pcs it holds for) runs, from -1 at the entry */
static uint32_t pctable(struct buf *b, size_t base, const int32_t *vals,
			const uint32_t *lens, int n)
{
	uint32_t off = (uint32_t)(b->n - base);
	int32_t prev = -1;

	for (int i = 0; i < n; i++) {
		int32_t d = vals[i] - prev;

		uvarint(b, d < 0 ? ((uint32_t)~d << 1) | 1 : (uint32_t)d << 1);
		uvarint(b, lens[i]); /* quantum 1 */
		prev = vals[i];
	}
	put(b, 0, 1);
	return off;
}

#define TEXT 0x401000ull

/* Known answers: three functions, two files */
static const struct {
	const char *name;
	uint32_t off, size;
	int file;            /* index into files */
	int32_t lines[2];
	uint32_t lens[2];     /* pcs of each line */
	int nlines;
} fns[] = {
	{ "main.main", 0x0, 0x40, 0, { 20 }, { 0x40 }, 1 },
	{ "main.spin", 0x40, 0xc0, 0, { 10, 12 }, { 0x20, 0xa0 }, 2 },
	{ "net/http.(*conn).serve", 0x100, 0x20, 1, { 400 }, { 0x20 }, 1 },
};
static const char *files[] = { "/src/main.go", "/go/src/net/http/server.go" };
#define NFN 3

enum { L12, L116, L118, L120 };

/* Where the last build put things, for tests that damage them */
static size_t built_funcs[NFN], built_names, built_cutab, built_files, built_pc;

/* The functab, its function offsets left to fill; for Go 1.2 followed by
 * the offset of the file table (*filetab_at, to fill) */
static size_t functab(struct buf *b, int l, unsigned field, size_t *filetab_at)
{
	size_t ft;

	while (b->n % field)
		put(b, 0, 1);
	ft = b->n;
	for (int i = 0; i < NFN; i++) {
		put(b, l >= L118 ? fns[i].off : TEXT + fns[i].off, field);
		put(b, 0, field);
	}
	put(b, l >= L118 ? 0x120 : TEXT + 0x120, field);
	if (l == L12)
		*filetab_at = put(b, 0, 4);
	return ft;
}

/* A table of layout l with pointers of ptrsize bytes */
static void build(struct buf *b, int l, unsigned ptrsize)
{
	static const uint32_t magic[] = { 0xfffffffb, 0xfffffffa, 0xfffffff0,
					  0xfffffff1 };
	unsigned words = l == L12 ? 1 : l == L116 ? 7 : 8;
	unsigned field = l >= L118 ? 4 : ptrsize;
	size_t names[NFN], fileoff[2], cu = 0, ft, funcs[NFN], w0 = 8;
	size_t names_at, cu_at, files_at, pc_at, pcfile[NFN], pcln[NFN];
	size_t base = 0; /* what the offsets of each part count from */
	size_t filetab_at = 0;

	memset(b, 0, sizeof(*b));
	put(b, magic[l], 4);
	put(b, 0, 2);
	put(b, 1, 1);
	put(b, ptrsize, 1);
	for (unsigned i = 0; i < words; i++)
		put(b, 0, ptrsize);
	set(b, w0, NFN, ptrsize);
	if (l != L12)
		set(b, w0 + ptrsize, 2, ptrsize);
	if (l >= L118)
		set(b, w0 + 2 * ptrsize, TEXT, ptrsize);

	if (l == L12) /* the functab right after the header */
		ft = functab(b, l, field, &filetab_at);
	names_at = b->n;
	for (int i = 0; i < NFN; i++) {
		names[i] = b->n - (l == L12 ? 0 : names_at);
		putstr(b, fns[i].name);
	}
	cu_at = b->n;
	if (l != L12) { /* one unit with both files */
		cu = 0;
		put(b, 0, 4);
		put(b, strlen(files[0]) + 1, 4);
	}
	files_at = b->n;
	for (int i = 0; i < 2; i++) {
		fileoff[i] = b->n - (l == L12 ? 0 : files_at);
		putstr(b, files[i]);
	}
	if (l == L12) { /* the file table: entries 0 (none) and the files */
		set(b, filetab_at, b->n, 4);
		put(b, 3, 4);
		put(b, fileoff[0], 4);
		put(b, fileoff[1], 4);
	}
	pc_at = b->n;
	base = l == L12 ? 0 : pc_at;
	put(b, 0, 1); /* offset 0 is "no table" */
	for (int i = 0; i < NFN; i++) {
		int32_t fno = l == L12 ? fns[i].file + 1 : fns[i].file;
		uint32_t size = fns[i].size;

		pcfile[i] = pctable(b, base, &fno, &size, 1);
		pcln[i] = pctable(b, base, fns[i].lines, fns[i].lens,
				  fns[i].nlines);
	}
	if (l != L12)
		ft = functab(b, l, field, &filetab_at);
	base = l == L12 ? 0 : ft;
	for (int i = 0; i < NFN; i++) {
		while (b->n % 8)
			put(b, 0, 1);
		funcs[i] = b->n;
		set(b, ft + (2 * i + 1) * field, funcs[i] - base, field);
		put(b, l >= L118 ? fns[i].off : TEXT + fns[i].off,
		    l >= L118 ? 4 : ptrsize);
		put(b, names[i], 4);
		put(b, 0, 4); /* args */
		put(b, 0, 4); /* deferreturn */
		put(b, 0, 4); /* pcsp */
		put(b, pcfile[i], 4);
		put(b, pcln[i], 4);
		put(b, 0, 4); /* npcdata */
		put(b, cu, 4);
		put(b, 0, 4);
	}
	memcpy(built_funcs, funcs, sizeof(funcs));
	built_names = names_at;
	built_cutab = cu_at;
	built_files = files_at;
	built_pc = pc_at;
	if (l != L12) {
		size_t o[] = { names_at, cu_at, files_at, pc_at, ft };
		unsigned first = l == L116 ? 2 : 3;

		for (unsigned i = 0; i < 5; i++)
			set(b, w0 + (first + i) * ptrsize, o[i], ptrsize);
	}
}

static void check_known(const uint8_t *data, size_t len, const char *what)
{
	struct nsk_gosym *g;
	const char *name, *file;
	uint64_t start;
	int line;

	ck_assert_msg(nsk_gosym__open(data, len, 0, &g) == 0, "%s: open", what);
	for (int i = 0; i < NFN; i++) {
		uint64_t e = TEXT + fns[i].off, pc = e;

		for (int k = 0; k < fns[i].nlines; k++) {
			/* first and last pc of each line's run */
			uint64_t at[2] = { pc, pc + fns[i].lens[k] - 1 };

			for (int j = 0; j < 2; j++) {
				ck_assert_msg(!nsk_gosym__find(g, at[j], &name, &start),
					      "%s: %s not found at %#llx", what, fns[i].name,
					      (unsigned long long)at[j]);
				ck_assert_str_eq(name, fns[i].name);
				ck_assert_uint_eq(start, e);
				file = NULL;
				line = 0;
				ck_assert_int_eq(nsk_gosym__line(g, at[j], &file, &line), 0);
				ck_assert_msg(file && !strcmp(file, files[fns[i].file]),
					      "%s: file of %s", what, fns[i].name);
				ck_assert_int_eq(line, fns[i].lines[k]);
			}
			pc += fns[i].lens[k];
		}
	}
	ck_assert_int_eq(nsk_gosym__find(g, TEXT - 1, &name, NULL), -ENOENT);
	ck_assert_int_eq(nsk_gosym__find(g, TEXT + 0x120, &name, NULL), -ENOENT);
	ck_assert_int_eq(nsk_gosym__find(g, 0, &name, NULL), -ENOENT);
	ck_assert_int_eq(nsk_gosym__line(g, UINT64_MAX, &file, &line), -ENOENT);
	nsk_gosym__free(g);
}

START_TEST(each_layout_by_hand)
{
	static const char *what[] = { "go1.2/32", "go1.16/32", "go1.18/32", "go1.20/32", "go1.2", "go1.16", "go1.18", "go1.20" };
	struct guarded gd;
	struct buf b;

	for (int l = L12; l <= L120; l++) {
		for (unsigned ptr = 4; ptr <= 8; ptr += 4) {
			build(&b, l, ptr);
			check_known(guarded_copy(&gd, b.b, b.n), b.n, ptr == 4 ? what[l] : what[l + 4]);
			guarded_free(&gd);
		}
	}
}
END_TEST

START_TEST(not_a_table)
{
	static const uint8_t be[16] = { 0xff, 0xff, 0xff, 0xf0, 0, 0, 1, 8 };
	struct nsk_gosym *g = (void *)1;
	struct buf b;

	ck_assert_int_eq(nsk_gosym__open(NULL, 0, 0, &g), -EINVAL);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(nsk_gosym__open(be, sizeof(be), 0, &g), -EINVAL);
	build(&b, L118, 8);
	b.b[6] = 3; /* no such quantum */
	ck_assert_int_eq(nsk_gosym__open(b.b, b.n, 0, &g), -EINVAL);
	build(&b, L118, 8);
	b.b[7] = 2; /* no such pointer size */
	ck_assert_int_eq(nsk_gosym__open(b.b, b.n, 0, &g), -EINVAL);
	build(&b, L118, 8);
	set(&b, 8, UINT64_MAX / 2, 8); /* more functions than bytes */
	ck_assert_int_eq(nsk_gosym__open(b.b, b.n, 0, &g), -EINVAL);
	ck_assert_int_eq(nsk_gosym__find(NULL, TEXT, &(const char *){ 0 }, NULL),
			 -ENOENT);
	nsk_gosym__free(NULL);
}
END_TEST

/* A name, a file name and a line table that run into the table's end: the
 * function is then unnamed and without a line, and nothing is read past. */
START_TEST(strings_that_run_off_the_end)
{
	static const uint8_t tail[] = { 'x', 'y', 'z', 0x80, 0x80 };
	const char *name, *file = NULL;
	struct nsk_gosym *g;
	struct guarded gd;
	size_t end, fn;
	struct buf b;
	int line = 0;

	for (int l = L116; l <= L120; l++) {
		build(&b, l, 8);
		end = b.n;
		for (size_t i = 0; i < sizeof(tail); i++)
			put(&b, tail[i], 1);
		fn = built_funcs[2] + (l >= L118 ? 4 : 8);
		set(&b, fn, end - built_names, 4);       /* name */
		set(&b, fn + 20, end + 3 - built_pc, 4); /* pcln */
		set(&b, built_cutab + 4, end - built_files, 4); /* its file */
		ck_assert_int_eq(nsk_gosym__open(guarded_copy(&gd, b.b, b.n), b.n,
						 0, &g), 0);
		ck_assert_int_eq(nsk_gosym__find(g, TEXT + 0x100, &name, NULL), -ENOENT);
		ck_assert_int_eq(nsk_gosym__line(g, TEXT + 0x100, &file, &line), -ENOENT);
		/* the others are whole */
		ck_assert_int_eq(nsk_gosym__find(g, TEXT + 0x40, &name, NULL), 0);
		ck_assert_str_eq(name, "main.spin");
		nsk_gosym__free(g);
		guarded_free(&gd);
	}
}
END_TEST

/* ---- hostile input: any answer, never a read out of the table --------- */

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Opens and asks; whatever a name is, it lies inside the table */
static void ask(const uint8_t *data, size_t len, uint64_t lo, uint64_t hi)
{
	struct nsk_gosym *g;
	const char *name, *file;
	uint64_t start;
	int line;

	if (nsk_gosym__open(data, len, TEXT, &g))
		return;
	for (int i = 0; i < 48; i++) {
		uint64_t pc = i < 40 && hi > lo ? lo + rnd() % (hi - lo) : rnd();

		if (!nsk_gosym__find(g, pc, &name, &start)) {
			ck_assert((const uint8_t *)name >= data &&
				  (const uint8_t *)name + strlen(name) < data + len);
			ck_assert_uint_le(start, pc);
		}
		file = NULL;
		if (!nsk_gosym__line(g, pc, &file, &line) && file)
			ck_assert((const uint8_t *)file >= data &&
				  (const uint8_t *)file + strlen(file) < data + len);
	}
	nsk_gosym__free(g);
}

static void hostile(const uint8_t *table, size_t len, uint64_t lo,
		    uint64_t hi)
{
	struct guarded gd;
	uint8_t *d;

	/* cut short: every length of the head, then anywhere */
	for (size_t n = 0; n <= len && n < 1024; n++) {
		ask(guarded_copy(&gd, table, n), n, lo, hi);
		guarded_free(&gd);
	}
	for (int i = 0; i < 64; i++) {
		size_t n = (size_t)(rnd() % (len + 1));

		ask(guarded_copy(&gd, table, n), n, lo, hi);
		guarded_free(&gd);
	}
	/* corrupted: a few bytes (often in the header and the functab) or
	 * words set to extremes, then put back */
	d = guarded_copy(&gd, table, len);
	for (int round = 0; round < 3000; round++) {
		size_t at[8];
		uint8_t was[8];
		int k = 1 + (int)(rnd() % 8);

		for (int j = 0; j < k; j++) {
			at[j] = round % 2 ? (size_t)(rnd() % (len < 256 ? len : 256)) :
					    (size_t)(rnd() % len);
			was[j] = d[at[j]];
			d[at[j]] = rnd() % 3 ? (uint8_t)rnd() :
				   (rnd() % 2 ? 0xff : 0);
		}
		ask(d, len, lo, hi);
		for (int j = k - 1; j >= 0; j--)
			d[at[j]] = was[j];
	}
	ck_assert_int_eq(memcmp(d, table, len), 0);
	guarded_free(&gd);
	/* random bytes behind a real header */
	d = guarded_copy(&gd, table, len);
	for (int round = 0; round < 200; round++) {
		size_t keep = 8 + (size_t)(rnd() % 64);

		for (size_t j = keep < len ? keep : len; j < len; j++)
			d[j] = (uint8_t)rnd();
		ask(d, len, lo, hi);
	}
	guarded_free(&gd);
}

START_TEST(hostile_tables_by_hand)
{
	struct buf b;

	for (int l = L12; l <= L120; l++) {
		build(&b, l, 8);
		hostile(b.b, b.n, TEXT, TEXT + 0x120);
	}
}
END_TEST

/* ---- real tables of real Go binaries ---------------------------------- */

struct elf_file {
	int fd;
	Elf *elf;
};

static struct nsk_gosym *open_binary(const char *path, struct elf_file *f)
{
	struct nsk_gosym *g = NULL;

	elf_version(EV_CURRENT);
	f->fd = open(path, O_RDONLY);
	ck_assert_msg(f->fd >= 0, "%s: %s", path, strerror(errno));
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	ck_assert_ptr_nonnull(f->elf);
	ck_assert_msg(nsk_gosym__open_elf(f->elf, &g) == 0, "%s: no table", path);
	return g;
}

static void close_binary(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

static int sh(const char *cmd)
{
	char full[4096];

	snprintf(full, sizeof(full),
		 "cd %s && env HOME=%s GOCACHE=%s/cache GOPATH=%s/gopath "
		 "GO111MODULE=off GOTOOLCHAIN=local GOPROXY=off GOFLAGS= %s",
		 tmp, tmp, tmp, tmp, cmd);
	return system(full);
}

/* Every function the toolchain reads from the binary, read the same here:
 * name and entry at its first and last byte, line and file at its entry.
 * Returns the number of functions. */
static size_t agrees_with_toolchain(const char *path)
{
	struct elf_file f;
	struct nsk_gosym *g = open_binary(path, &f);
	char cmd[4096], line[8192];
	size_t n = 0, bad = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "cd %s && ./oracle %s", tmp, path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long entry, end;
		const char *name, *file;
		char *t[5], *s = line;
		uint64_t start;
		int ln, want_ln;

		line[strcspn(line, "\n")] = 0;
		for (int i = 0; i < 5; i++)
			t[i] = strsep(&s, "\t");
		ck_assert_ptr_nonnull(t[4]);
		entry = strtoull(t[0], NULL, 16);
		end = strtoull(t[1], NULL, 16);
		want_ln = atoi(t[2]);
		n++;
		if (nsk_gosym__find(g, entry, &name, &start) || strcmp(name, t[4]) ||
		    start != entry ||
		    nsk_gosym__find(g, end - 1, &name, &start) || strcmp(name, t[4])) {
			if (bad++ < 5)
				fprintf(stderr, "%s: %s at %llx: not found or misnamed\n",
					path, t[4], entry);
			continue;
		}
		file = NULL;
		ln = 0;
		if (want_ln > 0 && (nsk_gosym__line(g, entry, &file, &ln) ||
				    ln != want_ln || !file || strcmp(file, t[3]))) {
			if (bad++ < 5)
				fprintf(stderr, "%s: %s: %s:%d, want %s:%d\n", path,
					t[4], file ? file : "?", ln, t[3], want_ln);
		}
	}
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(bad == 0, "%s: %zu of %zu functions differ", path, bad, n);
	nsk_gosym__free(g);
	close_binary(&f);
	return n;
}

START_TEST(built_programs_agree_with_the_toolchain)
{
	static const char *progs[] = { "prog", "prog_pie", "prog_ext" };
	char path[4096];

	if (!have_go) {
		fprintf(stderr, "test_gosym: no go, real tables skipped\n");
		return;
	}
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, progs[i]);
		if (access(path, X_OK)) {
			fprintf(stderr, "test_gosym: %s not built, skipped\n", progs[i]);
			continue;
		}
		ck_assert_uint_gt(agrees_with_toolchain(path), 1000);
	}
}
END_TEST

START_TEST(debian_go_binaries_agree_with_the_toolchain)
{
	static const char *bins[] = { "/usr/lib/go/bin/gofmt", "/usr/lib/go/bin/go" };

	if (!have_go) {
		fprintf(stderr, "test_gosym: no go, real tables skipped\n");
		return;
	}
	for (int i = 0; i < 2; i++)
		if (!access(bins[i], R_OK))
			ck_assert_uint_gt(agrees_with_toolchain(bins[i]), 1000);
}
END_TEST

START_TEST(names_main_spin_in_a_stripped_build)
{
	struct elf_file f;
	struct nsk_gosym *g;
	const char *name, *file;
	char cmd[4096], line[256];
	unsigned long long entry = 0, end = 0;
	uint64_t start;
	int ln = 0;
	FILE *p;

	if (!have_go)
		return;
	/* the stripped build has no symbols of its own */
	snprintf(cmd, sizeof(cmd), "readelf -S %s/prog | grep -c ' \\.symtab\\| \\.debug_info'",
		 tmp);
	p = popen(cmd, "r");
	ck_assert(fgets(line, sizeof(line), p));
	pclose(p);
	ck_assert_str_eq(line, "0\n");
	snprintf(cmd, sizeof(cmd), "cd %s && ./oracle prog | grep 'main\\.spin$'", tmp);
	p = popen(cmd, "r");
	ck_assert(fscanf(p, "%llx %llx", &entry, &end) == 2);
	pclose(p);
	g = open_binary(strcat(strcpy(cmd, tmp), "/prog"), &f);
	ck_assert_int_eq(nsk_gosym__find(g, (entry + end) / 2, &name, &start), 0);
	ck_assert_str_eq(name, "main.spin");
	ck_assert_uint_eq(start, entry);
	ck_assert_int_eq(nsk_gosym__line(g, (entry + end) / 2, &file, &ln), 0);
	ck_assert_ptr_nonnull(strstr(file, "go_spin.go"));
	ck_assert_int_gt(ln, 10);
	nsk_gosym__free(g);
	close_binary(&f);
}
END_TEST

START_TEST(hostile_real_tables)
{
	const char *bins[] = { "prog", "/usr/lib/go/bin/gofmt" };
	char path[4096];

	for (int i = 0; i < 2; i++) {
		struct elf_file f;
		struct nsk_gosym *g;
		Elf_Scn *scn = NULL;
		Elf_Data *d = NULL;
		size_t shstrndx;
		uint64_t lo = 0, hi = 0;

		if (i == 0 && !have_go)
			continue;
		snprintf(path, sizeof(path), "%s%s%s", i == 0 ? tmp : "",
			 i == 0 ? "/" : "", bins[i]);
		if (access(path, R_OK))
			continue;
		g = open_binary(path, &f);
		nsk_gosym__free(g);
		ck_assert_int_eq(elf_getshdrstrndx(f.elf, &shstrndx), 0);
		while ((scn = elf_nextscn(f.elf, scn))) {
			GElf_Shdr s;
			const char *name;

			gelf_getshdr(scn, &s);
			name = elf_strptr(f.elf, shstrndx, s.sh_name);
			if (!strcmp(name, ".text")) {
				lo = s.sh_addr;
				hi = s.sh_addr + s.sh_size;
			}
			if (strstr(name, "gopclntab"))
				d = elf_getdata(scn, NULL);
		}
		ck_assert_ptr_nonnull(d);
		hostile(d->d_buf, d->d_size, lo, hi);
		close_binary(&f);
	}
}
END_TEST

/* Builds the test programs with the go found on PATH; 0 when there is none */
static int build_go(void)
{
	if (system("command -v go >/dev/null 2>&1"))
		return 0;
	if (!mkdtemp(tmp)) {
		perror("test_gosym: mkdtemp");
		exit(1);
	}
	if (sh("CGO_ENABLED=0 go build -o oracle " NSK_SRCDIR "/tests/tools/gosym_oracle.go") ||
	    sh("CGO_ENABLED=0 go build -ldflags='-s -w' -o prog "
	       NSK_SRCDIR "/tests/workloads/go_spin.go") ||
	    sh("CGO_ENABLED=0 go build -buildmode=pie -ldflags='-s -w' -o prog_pie "
	       NSK_SRCDIR "/tests/workloads/go_spin.go")) {
		fprintf(stderr, "test_gosym: go build failed\n");
		exit(1);
	}
	/* the C linker puts its own code before Go's: needs gcc, optional */
	if (sh("CGO_ENABLED=1 go build -ldflags='-s -w -linkmode=external' -o prog_ext "
	       NSK_SRCDIR "/tests/workloads/go_spin.go 2>/dev/null"))
		fprintf(stderr, "test_gosym: no external linking here\n");
	return 1;
}

int main(void)
{
	Suite *s = suite_create("gosym");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	char rm[256];
	int failed;

	have_go = build_go();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, each_layout_by_hand);
	tcase_add_test(tc, not_a_table);
	tcase_add_test(tc, strings_that_run_off_the_end);
	tcase_add_test(tc, hostile_tables_by_hand);
	tcase_add_test(tc, built_programs_agree_with_the_toolchain);
	tcase_add_test(tc, debian_go_binaries_agree_with_the_toolchain);
	tcase_add_test(tc, names_main_spin_in_a_stripped_build);
	tcase_add_test(tc, hostile_real_tables);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (have_go) {
		snprintf(rm, sizeof(rm), "chmod -R u+w %s; rm -rf %s", tmp, tmp);
		if (system(rm))
			failed++;
	}
	return failed ? 1 : 0;
}
