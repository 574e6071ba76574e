/* Go programs, told by their executable: the Go linker writes a
 * .go.buildinfo section into every executable it links (Go 1.13 on,
 * kept by `-ldflags=-s -w`, which drop only symbols and DWARF), and
 * nothing else does.  Only section headers are read, once per new image,
 * through /proc/PID/exe, so another mount namespace's file is found too;
 * a launched program is also looked at before it runs, from its file, as
 * a process that ends before the recorder hears of it has no exe left.
 * A Go library loaded into another program (-buildmode=c-shared) is not
 * looked for. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "record/alloc_go.h"

static int has_buildinfo(int fd)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int found = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx)) {
		elf_end(elf);
		return 0;
	}
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		found = name && !strcmp(name, ".go.buildinfo");
	}
	elf_end(elf);
	return found;
}

int nsk_alloc_go__file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = has_buildinfo(fd);
	close(fd);
	return rc;
}

/* The verdict on the file st describes, or -1 when it was not judged. */
static int memo_find(const struct nsk_alloc_go_memo *memo, const struct stat *st)
{
	for (unsigned int i = 0; memo && i < memo->n; i++)
		if (memo->file[i].dev == st->st_dev && memo->file[i].ino == st->st_ino &&
		    memo->file[i].size == (uint64_t)st->st_size &&
		    memo->file[i].mtime_ns == (uint64_t)st->st_mtim.tv_sec * 1000000000ull +
						     (uint64_t)st->st_mtim.tv_nsec)
			return memo->file[i].go;
	return -1;
}

static void memo_add(struct nsk_alloc_go_memo *memo, const struct stat *st, int go)
{
	unsigned int i;

	if (!memo)
		return;
	i = memo->next;
	memo->next = (memo->next + 1) % NSK_ALLOC_GO_MEMO;
	if (memo->n < NSK_ALLOC_GO_MEMO)
		memo->n++;
	memo->file[i].dev = st->st_dev;
	memo->file[i].ino = st->st_ino;
	memo->file[i].size = (uint64_t)st->st_size;
	memo->file[i].mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull +
				 (uint64_t)st->st_mtim.tv_nsec;
	memo->file[i].go = go;
}

int nsk_alloc_go__process(uint32_t pid, struct nsk_alloc_go_memo *memo, char *path,
			  size_t len)
{
	struct stat st;
	char link[64];
	ssize_t n;
	int fd, rc;

	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	fd = open(link, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = fstat(fd, &st) ? -1 : memo_find(memo, &st);
	if (rc < 0) {
		rc = has_buildinfo(fd);
		if (rc >= 0 && !fstat(fd, &st))
			memo_add(memo, &st, rc);
	}
	close(fd);
	if (rc > 0 && len) {
		n = readlink(link, path, len - 1);
		path[n > 0 ? n : 0] = '\0';
	}
	return rc;
}
