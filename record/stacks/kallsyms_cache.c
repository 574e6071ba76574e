/* The kernel image's symbols, kept between recordings (kallsyms.h).
 *
 * Reading /proc/kallsyms costs some 50 ms of the kernel's CPU (it formats
 * 120,000 lines) and more to parse, in every recording, and for a launched
 * program it runs beside the program.  The image's symbols do not change
 * while the machine is up (KASLR places the image once per boot), so they
 * are kept in the cache directory's kernel/kallsyms, keyed by the boot's
 * id.  Modules, BPF programs and trampolines come and go, and live outside
 * the image's addresses [core_lo, core_hi): a table read from here answers
 * only inside, and reads /proc/kallsyms whole on the first question about
 * an address outside (kallsyms.c), so every answer is the one the whole
 * table would give.  A table whose other symbols fall among the image's
 * addresses is not kept.
 *
 * The file: a header (struct head), n symbols of struct ksym, then the
 * arena of names, NUL-terminated, starting with the module name
 * "vmlinux" at offset 0.  Native byte order: it never leaves the machine.
 * Read only when it is a regular file of this user that nobody else may
 * write, and checked whole before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/stacks/cache_dir.h"
#include "record/stacks/kallsyms.h"
#include "record/stacks/kallsyms_int.h"

#define MAGIC "NSKKSYM1"
#define FILE_NAME "kallsyms"
#define MAX_BYTES (64 << 20)

struct head {
	char magic[8];
	char boot_id[40]; /* as /proc/sys/kernel/random/boot_id has it */
	uint64_t n, arena_len;
	uint64_t rodata, rodata_end;
	uint64_t core_lo, core_hi;
};

static int boot_id(char out[40])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	memset(out, 0, 40);
	if (fd < 0)
		return -errno;
	r = read(fd, out, 39);
	close(fd);
	if (r < 36)
		return -EINVAL;
	out[36] = 0; /* the newline */
	return 0;
}

/* The table in buf (len bytes), checked; NULL when it does not hold. */
static struct nsk_kallsyms *parse(const char *buf, size_t len, const char *id)
{
	const struct head *h = (const void *)buf;
	struct nsk_kallsyms *k;
	const struct ksym *syms = (const void *)(buf + sizeof(*h));
	const char *arena;

	if (len < sizeof(*h) || memcmp(h->magic, MAGIC, 8) ||
	    memcmp(h->boot_id, id, 40) || !h->n ||
	    h->n > (len - sizeof(*h)) / sizeof(struct ksym) ||
	    h->arena_len != len - sizeof(*h) - h->n * sizeof(struct ksym) ||
	    h->arena_len < 8 || h->arena_len >= NO_OFFSET ||
	    h->core_lo >= h->core_hi)
		return NULL;
	arena = (const char *)(syms + h->n);
	if (memcmp(arena, "vmlinux", 8) || arena[h->arena_len - 1])
		return NULL;
	for (uint64_t i = 0; i < h->n; i++)
		if (syms[i].name >= h->arena_len || syms[i].module ||
		    syms[i].addr < h->core_lo || syms[i].addr >= h->core_hi ||
		    (i && syms[i].addr < syms[i - 1].addr))
			return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->syms = malloc(h->n * sizeof(*k->syms));
	k->arena = malloc(h->arena_len);
	k->whole = calloc(1, sizeof(*k->whole));
	if (!k->syms || !k->arena || !k->whole) {
		free(k->whole);
		k->whole = NULL;
		nsk_kallsyms__free(k);
		return NULL;
	}
	pthread_mutex_init(&k->whole->lock, NULL);
	memcpy(k->syms, syms, h->n * sizeof(*k->syms));
	memcpy(k->arena, arena, h->arena_len);
	k->n = k->cap = h->n;
	k->used = k->size = h->arena_len;
	k->rodata = h->rodata;
	k->rodata_end = h->rodata_end;
	k->core_lo = h->core_lo;
	k->core_hi = h->core_hi;
	return k;
}

int nsk_kallsyms_cache__read(int dir, struct nsk_kallsyms **out)
{
	struct nsk_kallsyms *k = NULL;
	char id[40], *buf = NULL;
	struct stat st;
	int fd, err;

	err = boot_id(id);
	if (err)
		return err;
	fd = openat(dir, FILE_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = -EINVAL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < (off_t)sizeof(struct head) ||
	    st.st_size > MAX_BYTES)
		goto out;
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (nsk_cache_dir__read_all(fd, buf, (size_t)st.st_size))
		goto out;
	k = parse(buf, (size_t)st.st_size, id);
	if (!k)
		goto out;
	*out = k;
	err = 0;
out:
	free(buf);
	close(fd);
	return err;
}

void nsk_kallsyms_cache__write(int dir, const struct nsk_kallsyms *k)
{
	struct head h = { .magic = MAGIC };
	struct ksym *syms = NULL;
	char *arena = NULL, tmp[64];
	size_t n = 0, used = 8;
	int fd = -1, ok = 0;

	if (!k->n || k->core_hi || boot_id(h.boot_id))
		return;
	h.core_lo = UINT64_MAX;
	for (size_t i = 0; i < k->n; i++) {
		const char *name = k->arena + k->syms[i].name;
		uint64_t a = k->syms[i].addr;

		if (strcmp(k->arena + k->syms[i].module, "vmlinux"))
			continue;
		if (a < h.core_lo)
			h.core_lo = a;
		/* past the last symbol is outside: the whole table decides
		 * where its function ends */
		if (a + 1 > h.core_hi)
			h.core_hi = a + 1;
		n++;
		used += strlen(name) + 1;
	}
	if (!n || used >= NO_OFFSET)
		return;
	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->arena + k->syms[i].module, "vmlinux") &&
		    k->syms[i].addr >= h.core_lo && k->syms[i].addr < h.core_hi)
			return; /* a module's symbol among the image's */
	syms = malloc(n * sizeof(*syms));
	arena = malloc(used);
	if (!syms || !arena)
		goto out;
	memcpy(arena, "vmlinux", 8);
	used = 8;
	n = 0;
	for (size_t i = 0; i < k->n; i++) {
		const char *name = k->arena + k->syms[i].name;
		size_t l = strlen(name) + 1;

		if (strcmp(k->arena + k->syms[i].module, "vmlinux"))
			continue;
		syms[n].addr = k->syms[i].addr;
		syms[n].name = (uint32_t)used;
		syms[n].module = 0;
		memcpy(arena + used, name, l);
		used += l;
		n++;
	}
	h.n = n;
	h.arena_len = used;
	h.rodata = k->rodata;
	h.rodata_end = k->rodata_end;
	snprintf(tmp, sizeof(tmp), ".tmp-" FILE_NAME "-%d", (int)getpid());
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		goto out;
	ok = !nsk_cache_dir__write_all(fd, &h, sizeof(h)) &&
	     !nsk_cache_dir__write_all(fd, syms, n * sizeof(*syms)) &&
	     !nsk_cache_dir__write_all(fd, arena, used);
	ok = !close(fd) && ok;
	if (!ok || renameat(dir, tmp, dir, FILE_NAME))
		unlinkat(dir, tmp, 0);
out:
	free(syms);
	free(arena);
}
