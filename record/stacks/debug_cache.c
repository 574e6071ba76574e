/* Decompressed copies of debug files, by build-id (see debug_cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "record/stacks/cache_dir.h"
#include "record/stacks/debug_cache.h"

struct noted {
	int fd;
	uint8_t id[64];
	size_t len;
	uint64_t bytes; /* the copy's size, about */
};

struct nsk_debug_cache {
	int dir;
	char path[4096];
	long long max;
	struct noted *notes;
	size_t n;
};

struct nsk_debug_cache *nsk_debug_cache__open(void)
{
	struct nsk_debug_cache *c = calloc(1, sizeof(*c));
	const char *max = getenv("NUSKU_CACHE_MAX");
	char why[256];

	if (!c)
		return NULL;
	c->dir = nsk_cache_dir__open("debug", c->path, sizeof(c->path), why,
				     sizeof(why));
	if (c->dir < 0) {
		nsk_cache_dir__warn(c->dir, why);
		free(c);
		return NULL;
	}
	c->max = max && *max ? strtoll(max, NULL, 10) : NSK_DEBUG_CACHE_MAX;
	return c;
}

void nsk_debug_cache__free(struct nsk_debug_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		close(c->notes[i].fd);
	free(c->notes);
	close(c->dir);
	free(c);
}

static void name_of(const uint8_t *id, size_t len, char *out, size_t outlen)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 3 < outlen; i++)
		n += (size_t)snprintf(out + n, outlen - n, "%02x", id[i]);
	snprintf(out + n, outlen - n, ".debug");
}

/* 1 when the ELF file at fd carries build-id id */
static int has_build_id(int fd, const uint8_t *id, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bid;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bid) : -1;
	int ok = n == (ssize_t)len && !memcmp(bid, id, len);

	elf_end(elf);
	return ok;
}

int nsk_debug_cache__find(struct nsk_debug_cache *c, const uint8_t *build_id,
			  size_t len, char *path, size_t pathlen)
{
	char name[160];
	struct stat st;
	int fd;

	if (!c || len < 2 || len > 64)
		return -1;
	name_of(build_id, len, name, sizeof(name));
	fd = openat(c->dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* anything else there is not ours to read */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || !has_build_id(fd, build_id, len)) {
		close(fd);
		return -1;
	}
	futimens(fd, NULL); /* used: the last to go */
	snprintf(path, pathlen, "%s/%s", c->path, name);
	return fd;
}

/* The size a decompressed copy of elf would have; 0 when no section is
 * compressed, or when the file must not be copied. */
static uint64_t copy_size(Elf *elf, uint64_t file_size)
{
	uint64_t grow = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Chdr ch;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return 0;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".gnu_debugaltlink"))
			return 0;
		if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
			grow += ch.ch_size;
	}
	return grow ? file_size + grow : 0;
}

void nsk_debug_cache__note(struct nsk_debug_cache *c, int fd,
			   const uint8_t *build_id, size_t len)
{
	struct noted *notes;
	struct stat st;
	uint64_t bytes;
	Elf *elf;

	if (!c || len < 2 || len > 64 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->notes[i].len == len && !memcmp(c->notes[i].id, build_id, len))
			return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bytes = elf ? copy_size(elf, (uint64_t)st.st_size) : 0;
	elf_end(elf);
	if (!bytes)
		return;
	notes = realloc(c->notes, (c->n + 1) * sizeof(*notes));
	if (!notes)
		return;
	c->notes = notes;
	notes[c->n].fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (notes[c->n].fd < 0)
		return;
	memcpy(notes[c->n].id, build_id, len);
	notes[c->n].len = len;
	notes[c->n].bytes = bytes;
	c->n++;
}

int nsk_debug_cache__decompress(int fd, int out)
{
	Elf *in = elf_begin(fd, ELF_C_READ_MMAP, NULL), *o = NULL;
	size_t phnum, shnum, shstrndx;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	uint64_t off;
	int err = -EINVAL, any = 0;

	if (!in || elf_kind(in) != ELF_K_ELF || !gelf_getehdr(in, &eh) ||
	    elf_getphdrnum(in, &phnum) || elf_getshdrnum(in, &shnum) ||
	    elf_getshdrstrndx(in, &shstrndx) || shstrndx >= SHN_LORESERVE ||
	    shnum >= SHN_LORESERVE)
		goto out;
	o = elf_begin(out, ELF_C_WRITE, NULL);
	if (!o || !gelf_newehdr(o, gelf_getclass(in)) ||
	    (phnum && !gelf_newphdr(o, phnum)))
		goto out;
	elf_flagelf(o, ELF_C_SET, ELF_F_LAYOUT);
	off = eh.e_ehsize;
	if (phnum) {
		eh.e_phoff = off;
		off += (uint64_t)phnum * eh.e_phentsize;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(o, (int)i, &ph))
			goto out;
	}
	/* sections in index order, laid out one after another; the
	 * segments of a debug file describe no bytes anyone reads */
	while ((scn = elf_nextscn(in, scn))) {
		Elf_Scn *os = elf_newscn(o);
		Elf_Data *d, *od;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh))
				goto out;
			any = 1;
		}
		if (!os)
			goto out;
		if (sh.sh_type != SHT_NOBITS) {
			uint64_t a = sh.sh_addralign > 1 ? sh.sh_addralign : 1;

			off = (off + a - 1) / a * a;
		}
		sh.sh_offset = off;
		if (sh.sh_type != SHT_NOBITS)
			off += sh.sh_size;
		d = NULL;
		while ((d = elf_getdata(scn, d))) {
			od = elf_newdata(os);
			if (!od)
				goto out;
			*od = *d;
		}
		if (!gelf_update_shdr(os, &sh))
			goto out;
	}
	if (!any) {
		err = -ENODATA;
		goto out;
	}
	eh.e_shoff = (off + 7) / 8 * 8;
	if (!gelf_update_ehdr(o, &eh) || elf_update(o, ELF_C_WRITE) < 0)
		goto out;
	err = 0;
out:
	elf_end(o);
	elf_end(in);
	return err;
}

struct entry {
	time_t used;
	uint64_t size;
	char name[160];
};

static int by_use(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->used > y->used) - (x->used < y->used);
}

/* Makes room for need bytes: removes stale temporary copies, then the
 * least recently used copies while the total would pass the limit. */
static int make_room(struct nsk_debug_cache *c, uint64_t need)
{
	struct entry *e = NULL, *grown;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	int dfd = fcntl(c->dir, F_DUPFD_CLOEXEC, 3), ok = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	time_t now = time(NULL);

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat st;
		size_t l = strlen(de->d_name);

		if (l >= sizeof(e->name) ||
		    fstatat(c->dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (!strncmp(de->d_name, ".tmp-", 5)) {
			if (now - st.st_mtime > NSK_DEBUG_CACHE_STALE_S)
				unlinkat(c->dir, de->d_name, 0);
			continue;
		}
		if (l < 7 || strcmp(de->d_name + l - 6, ".debug"))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(e, cap * sizeof(*e));
			if (!grown)
				goto out;
			e = grown;
		}
		e[n].used = st.st_mtime;
		e[n].size = (uint64_t)st.st_blocks * 512;
		memcpy(e[n].name, de->d_name, l + 1);
		total += e[n].size;
		n++;
	}
	if (n)
		qsort(e, n, sizeof(*e), by_use);
	for (size_t i = 0; i < n && total + need > (uint64_t)c->max; i++)
		if (!unlinkat(c->dir, e[i].name, 0))
			total -= e[i].size;
	ok = total + need <= (uint64_t)c->max;
out:
	free(e);
	closedir(d);
	return ok;
}

static void store_one(struct nsk_debug_cache *c, const struct noted *nt)
{
	char name[160], tmp[200];
	int out, err;

	if (nt->bytes > (uint64_t)c->max || !make_room(c, nt->bytes))
		return;
	name_of(nt->id, nt->len, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".tmp-%d-%s", (int)getpid(), name);
	out = openat(c->dir, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (out < 0)
		return;
	err = nsk_debug_cache__decompress(nt->fd, out);
	if (!err && !has_build_id(out, nt->id, nt->len))
		err = -EINVAL;
	close(out);
	if (err || renameat(c->dir, tmp, c->dir, name))
		unlinkat(c->dir, tmp, 0);
}

void nsk_debug_cache__store(struct nsk_debug_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		store_one(c, &c->notes[i]);
		close(c->notes[i].fd);
	}
	c->n = 0;
}
