/* Finding a module's debug file (see debuginfo.h).
 *
 * The places are gdb's and libdwfl's: /usr/lib/debug/.build-id/xx/rest.debug
 * for build-id xxrest; then the .gnu_debuglink name next to the file, in
 * its .debug/ folder, and under /usr/lib/debug/ at the file's own folder.
 * A debug file found by name must carry the module's build-id (a stale one
 * from an older package would name the wrong functions).  Last, the one
 * debuginfod fetched, if it was asked to.  Before all of them, the copy
 * of any of these that an earlier recording left decompressed in the
 * cache; one found compressed is noted for the cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "record/stacks/debug_cache.h"
#include "record/stacks/debuginfo.h"
#include "record/stacks/debuginfod.h"

#define DEBUG_ROOT "/usr/lib/debug"

int nsk_debuginfo__has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			return 1;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".gnu_debugdata"))
			return 1;
	}
	return 0;
}

/* The file at path, open, if it is an ELF file with build-id want (any
 * ELF file when want_len is 0); -1 if not. */
static int open_checked(const char *path, const uint8_t *want, size_t want_len)
{
	const void *bid;
	ssize_t len;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	len = elf ? dwelf_elf_gnu_build_id(elf, &bid) : -1;
	ok = elf && elf_kind(elf) == ELF_K_ELF &&
	     (!want_len ||
	      (len == (ssize_t)want_len && !memcmp(bid, want, want_len)));
	elf_end(elf);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

static int by_build_id(const uint8_t *id, size_t len, char *out, size_t outlen)
{
	size_t n;

	if (len < 2)
		return -1;
	n = (size_t)snprintf(out, outlen, DEBUG_ROOT "/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < len && n + 3 < outlen; i++)
		n += (size_t)snprintf(out + n, outlen - n, "%02x", id[i]);
	if (n + 7 >= outlen)
		return -1;
	memcpy(out + n, ".debug", 7);
	return open_checked(out, id, len);
}

static int by_debuglink(const char *file, const char *link, const uint8_t *id,
			size_t len, char *out, size_t outlen)
{
	const char *slash = strrchr(file, '/');
	int dirlen = slash ? (int)(slash - file) : 0, fd;

	if (!link || !*link || strchr(link, '/'))
		return -1;
	/* next to the file, except the file itself (a link to its own name) */
	snprintf(out, outlen, "%.*s/%s", dirlen, file, link);
	if (strcmp(out, file) && (fd = open_checked(out, id, len)) >= 0)
		return fd;
	snprintf(out, outlen, "%.*s/.debug/%s", dirlen, file, link);
	if ((fd = open_checked(out, id, len)) >= 0)
		return fd;
	snprintf(out, outlen, DEBUG_ROOT "%.*s/%s", dirlen, file, link);
	return open_checked(out, id, len);
}

/* A local debug file for the module, open, with its path in out. */
static int find_local(const char *file, const char *link, const uint8_t *id,
		      size_t len, char *out, size_t outlen)
{
	int fd = len ? by_build_id(id, len, out, outlen) : -1;

	if (fd < 0 && file && file[0] == '/')
		fd = by_debuglink(file, link, id, len, out, outlen);
	return fd;
}

int nsk_debuginfo__find(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name,
			const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	struct nsk_debuginfo *di = userdata ? *userdata : NULL;
	const char *file = di && di->path ? di->path : file_name;
	const unsigned char *bid = NULL;
	char path[PATH_MAX];
	GElf_Addr bid_vaddr;
	char *fetched;
	int len = dwfl_module_build_id(mod, &bid, &bid_vaddr), fd;

	if (len < 0)
		len = 0;
	fd = di ? nsk_debug_cache__find(di->cache, bid, (size_t)len, path,
					sizeof(path))
		: -1;
	if (fd >= 0)
		goto found;
	fd = find_local(file, debuglink_file, bid, (size_t)len, path, sizeof(path));
	if (fd < 0 && di && di->dbgd && len > 0 &&
	    (fetched = nsk_debuginfod__wait(di->dbgd, bid, (size_t)len))) {
		snprintf(path, sizeof(path), "%s", fetched);
		free(fetched);
		fd = open_checked(path, bid, (size_t)len);
	}
	if (fd < 0)
		return -1;
	if (di)
		nsk_debug_cache__note(di->cache, fd, bid, (size_t)len);
found:
	*debuginfo_file_name = strdup(path);
	if (di)
		di->found = 1;
	return fd;
}

void nsk_debuginfo__prefetch(const struct nsk_debuginfo *di, Elf *elf,
			     const uint8_t *build_id, size_t len)
{
	const char *link = NULL;
	char path[PATH_MAX];
	GElf_Word crc;
	int fd;

	if (!di->dbgd || !len)
		return;
	fd = nsk_debug_cache__find(di->cache, build_id, len, path, sizeof(path));
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (elf)
		link = dwelf_elf_gnu_debuglink(elf, &crc);
	fd = find_local(di->path, link, build_id, len, path, sizeof(path));
	if (fd >= 0) {
		close(fd);
		return;
	}
	nsk_debuginfod__request(di->dbgd, build_id, len);
}
