/* Where the preloaded allocation sampler can be used (alloc_sampler.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nusku/events/sampler.h"
#include "nusku/events/proc.h"
#include "record/alloc_sampler.h"
#include "record/session_int.h"

#ifndef NSK_PKGLIBDIR
#define NSK_PKGLIBDIR "/usr/local/lib/nusku"
#endif

static int safe_lib(const char *path, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int err = 0;

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s is not a regular file", path);
		err = -EPERM;
	} else if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		snprintf(why, whylen, "%s is writable by others or not owned by root", path);
		err = -EPERM;
	}
	close(fd);
	return err;
}

int nsk_alloc_sampler__find(char *out, size_t outlen, char *why, size_t whylen)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int err = -ENOENT;

	*why = '\0';
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, outlen, "%s/preload/%s", exe, NSK_SAMPLER_LIB);
			err = safe_lib(out, why, whylen);
		}
	}
	if (err == -ENOENT) {
		snprintf(out, outlen, "%s/%s", NSK_PKGLIBDIR, NSK_SAMPLER_LIB);
		err = safe_lib(out, why, whylen);
	}
	if (err == -ENOENT)
		snprintf(why, whylen, "%s not found", NSK_SAMPLER_LIB);
	return err;
}

/* The interpreter of a #! file into out, "" when it is none. */
static int shebang(int fd, char *out, size_t outlen)
{
	char line[256];
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
	size_t s, l;

	*out = '\0';
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = '\0';
	s = 2 + strspn(line + 2, " \t");
	l = strcspn(line + s, " \t\n");
	if (!l)
		return -ENOEXEC;
	snprintf(out, outlen, "%.*s", (int)l, line + s);
	return 0;
}

static int needs_sanitizer(const char *name)
{
	static const char *const rt[] = { "libasan", "libtsan", "libmsan",
					  "libhwasan", "liblsan" };

	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++)
		if (!strncmp(name, rt[i], strlen(rt[i])))
			return 1;
	return 0;
}

/* Reads the dynamic section and symbols of an ELF file: 1 fine, 0 not
 * (why).  Mapped, not read: ELF_C_READ copies the whole file (33 MB for
 * each cc1 of a build) where only the headers, .dynamic and .dynsym are
 * wanted. */
static int elf_ok(int fd, char *why, size_t whylen)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t nph = 0;
	int interp = 0, ok = 1;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(why, whylen, "not an ELF file");
		ok = 0;
		goto cleanup;
	}
	if (elf_getphdrnum(elf, &nph))
		nph = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			interp = 1;
	}
	if (!interp) {
		snprintf(why, whylen, "statically linked");
		ok = 0;
		goto cleanup;
	}
	while (ok && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNAMIC && sh.sh_type != SHT_DYNSYM) ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		if (sh.sh_type == SHT_DYNAMIC) {
			for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Dyn dyn;
				const char *name;

				if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
					continue;
				name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
				if (name && needs_sanitizer(name)) {
					snprintf(why, whylen, "built with a sanitizer (%s)", name);
					ok = 0;
				}
			}
		} else if (sh.sh_type == SHT_DYNSYM) {
			/* An executable that exports malloc comes before any
			 * preloaded library in symbol lookup (a static
			 * sanitizer runtime, a linked-in allocator). */
			for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (name && !strcmp(name, "malloc")) {
					snprintf(why, whylen, "defines its own malloc");
					ok = 0;
					break;
				}
			}
		}
	}
cleanup:
	elf_end(elf);
	return ok;
}

/* The verdict on the executable open at fd (st its status). */
static int judge(int fd, const struct stat *st, char *why, size_t whylen)
{
	if (st->st_mode & (S_ISUID | S_ISGID)) {
		snprintf(why, whylen, "set-user-ID or set-group-ID");
		return 0;
	}
	return elf_ok(fd, why, whylen);
}

int nsk_alloc_sampler__resolve(const char *path, char *out, size_t outlen)
{
	char next[PATH_MAX];

	snprintf(out, outlen, "%s", path);
	/* #! lines, as the kernel follows them (it allows 4 levels) */
	for (int depth = 0; depth < 5; depth++) {
		int fd = open(out, O_RDONLY | O_CLOEXEC), err;

		if (fd < 0)
			return -errno;
		err = shebang(fd, next, sizeof(next));
		close(fd);
		if (err || !*next)
			return err;
		snprintf(out, outlen, "%s", next);
	}
	return -ELOOP;
}

void nsk_alloc_sampler__forget(struct nsk_alloc_sampler_memo *memo)
{
	free(memo->buf);
	memset(memo, 0, sizeof(*memo));
}

static int same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static struct nsk_sampler_judged *judged_before(struct nsk_alloc_sampler_memo *memo,
						const struct stat *st)
{
	for (unsigned i = 0; memo && i < memo->njudged; i++) {
		struct nsk_sampler_judged *j = &memo->judged[i];

		if (j->dev == st->st_dev && j->ino == st->st_ino && j->size == st->st_size &&
		    same_time(&j->mtime, &st->st_mtim) && same_time(&j->ctime, &st->st_ctim))
			return j;
	}
	return NULL;
}

static void judged_now(struct nsk_alloc_sampler_memo *memo, const struct stat *st,
		       int ok, const char *why)
{
	struct nsk_sampler_judged *j;

	if (!memo || ok < 0)
		return;
	j = &memo->judged[memo->next];
	memo->next = (memo->next + 1) % NSK_SAMPLER_JUDGED;
	if (memo->njudged < NSK_SAMPLER_JUDGED)
		memo->njudged++;
	j->dev = st->st_dev;
	j->ino = st->st_ino;
	j->size = st->st_size;
	j->mtime = st->st_mtim;
	j->ctime = st->st_ctim;
	j->ok = ok;
	snprintf(j->why, sizeof(j->why), "%s", why);
}

/* The verdict on the ELF executable at elf, from memo when its file was
 * judged before (memo may be NULL); its status in *out (may be NULL) when
 * it could be had. */
static int elf_file_ok(const char *elf, struct nsk_alloc_sampler_memo *memo, char *why,
		       size_t whylen, struct stat *out)
{
	const struct nsk_sampler_judged *j;
	struct stat st;
	int fd, ok;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	fd = open(elf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ok = -errno;
	} else if ((j = judged_before(memo, &st))) {
		ok = j->ok;
		snprintf(why, whylen, "%s", j->why);
	} else {
		ok = judge(fd, &st, why, whylen);
		judged_now(memo, &st, ok, why);
	}
	if (out && ok >= 0)
		*out = st;
	close(fd);
	return ok;
}

int nsk_alloc_sampler__program_ok(const char *path, struct nsk_alloc_sampler_memo *memo,
				  char *why, size_t whylen)
{
	char elf[PATH_MAX];
	int ok;

	*why = '\0';
	ok = nsk_alloc_sampler__resolve(path, elf, sizeof(elf));
	return ok ? ok : elf_file_ok(elf, memo, why, whylen, NULL);
}

/* Whether the NUL-separated environment env (len bytes) preloads lib. */
static int env_preloads(const char *env, size_t len, const char *lib)
{
	for (const char *p = env; p < env + len; p += strlen(p) + 1)
		if (!strncmp(p, "LD_PRELOAD=", 11) && strstr(p + 11, lib))
			return 1;
	return 0;
}

/* AT_SECURE of pid's auxiliary vector: 1 secure, 0 not, -errno. */
static int secure_mode(uint32_t pid)
{
	char path[64];
	uint64_t av[2 * 64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/auxv", pid);
	n = nsk_read_file(path, (char *)av, sizeof(av));
	if (n < 0)
		return (int)n;
	for (size_t i = 0; i + 1 < (size_t)n / sizeof(uint64_t); i += 2)
		if (av[i] == 23 /* AT_SECURE */)
			return av[i + 1] != 0;
	return 0;
}

/* Whether pid sees lib, by its path under its own root, as the same file
 * we see (a container's loader would not find it, or find another). */
static int same_file_inside(uint32_t pid, const char *lib)
{
	char path[PATH_MAX + 64];
	struct stat ours, theirs;

	snprintf(path, sizeof(path), "/proc/%u/root%s", pid, lib);
	return !stat(lib, &ours) && !stat(path, &theirs) && ours.st_dev == theirs.st_dev &&
	       ours.st_ino == theirs.st_ino;
}

int nsk_alloc_sampler__process_ok(uint32_t pid, const char *lib, int told,
				  uint32_t exec_flags, struct nsk_alloc_sampler_memo *memo,
				  char *why, size_t whylen, struct stat *exe)
{
	struct stat judged = { 0 };
	char path[64], *buf;
	ssize_t n;
	int ok, sec;

	*why = '\0';
	if (exe)
		exe->st_ino = 0;
	if (told && (exec_flags & NSK_EV_EXEC_PASSED))
		return 1;
	/* made once: a fresh MiB for each process was page faults, then an
	 * munmap whose TLB flush interrupted the other CPUs */
	if (!memo->buf && !(memo->buf = malloc(1 << 20)))
		return -ENOMEM;
	buf = memo->buf;
	/* The environment first: told of at its exec, before the loader
	 * has mapped anything, the process's maps cannot hold the library
	 * yet, and reading them takes the lock the loader's mappings wait
	 * for.  A process that has exited reads empty (cleanup below). */
	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	n = nsk_read_file(path, buf, 1 << 20);
	if (n < 0) {
		ok = (int)n;
		goto cleanup;
	}
	if (!env_preloads(buf, (size_t)n, lib)) {
		snprintf(why, whylen, "its environment does not preload the sampler");
		ok = 0;
		goto cleanup;
	}
	/* in our mount namespace and root, the path is the file we see */
	if (!(told && (exec_flags & NSK_EV_EXEC_SAME_ROOT)) && !same_file_inside(pid, lib)) {
		snprintf(why, whylen, "the sampler is not in its mount namespace");
		ok = 0;
		goto cleanup;
	}
	sec = told ? !!(exec_flags & NSK_EV_EXEC_SECURE) : secure_mode(pid);
	if (sec) {
		if (sec > 0)
			snprintf(why, whylen, "runs in secure mode (set-user-ID)");
		ok = sec > 0 ? 0 : sec;
		goto cleanup;
	}
	/* never a #! file (the kernel ran its interpreter): nothing to
	 * follow, and one open of it (each is a walk of /proc with a ptrace
	 * check) */
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	ok = elf_file_ok(path, memo, why, whylen, &judged);
	if (ok == 1 && exe)
		*exe = judged;
cleanup:
	/* A process that exits while it is looked at fails every check
	 * after its exit (its root, its environment read empty): gone, not
	 * refused, when its mappings have gone too. */
	if (ok == 0) {
		snprintf(path, sizeof(path), "/proc/%u/maps", pid);
		if (nsk_read_file(path, buf, 4096) <= 0)
			ok = -ESRCH;
	}
	return ok;
}
