/* Finding the allocator object of a process and attaching uprobes to it
 * (see alloc_attach.h for the rules).
 *
 * The probe goes on the first instruction the kernel emulates rather than
 * single-steps.  An x86 uprobe on `push` or a branch is emulated in the trap;
 * any other instruction is copied out of line and single-stepped, a second
 * trap that costs about 15 us on a virtual machine (measured here: free()
 * starting with `test %rdi,%rdi` went from 1 us to 18 us per call).  So
 * leading instructions that touch neither the argument registers nor the
 * stack (endbr64, test/mov between registers, a compare with a global) are
 * stepped over when an emulated one follows; the probe there sees the same
 * arguments and the same return address.
 *
 * Return probes are attached before entry probes: a uretprobe only arms
 * itself when the function is entered after it exists, so an entry probe can
 * never see a call whose return goes unseen, which would leave the thread's
 * nesting depth stuck and hide its later allocations.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <unistd.h>

#include "nusku/events/alloc.h"
#include "nusku/format.h"
#include "record/alloc_attach.h"

struct probe_fn {
	const char *name;
	uint32_t cookie;
};

/* The malloc family, probed in the allocator object. */
static const struct probe_fn alloc_fns[] = {
	{ "malloc", NSK_ALLOC_MALLOC },
	{ "calloc", NSK_ALLOC_CALLOC },
	{ "realloc", NSK_ALLOC_REALLOC },
	{ "reallocarray", NSK_ALLOC_REALLOCARRAY },
	{ "aligned_alloc", NSK_ALLOC_ALIGNED_ALLOC },
	{ "posix_memalign", NSK_ALLOC_POSIX_MEMALIGN },
	{ "memalign", NSK_ALLOC_MEMALIGN },
	{ "valloc", NSK_ALLOC_VALLOC },
	{ "pvalloc", NSK_ALLOC_PVALLOC },
};

/* C++ operator new in all its forms (Itanium mangling, 64-bit size_t). */
static const struct probe_fn new_fns[] = {
	{ "_Znwm", NSK_ALLOC_COOKIE_NEW },
	{ "_Znam", NSK_ALLOC_COOKIE_NEW },
	{ "_ZnwmRKSt9nothrow_t", NSK_ALLOC_COOKIE_NEW },
	{ "_ZnamRKSt9nothrow_t", NSK_ALLOC_COOKIE_NEW },
	{ "_ZnwmSt11align_val_t", NSK_ALLOC_COOKIE_NEW_ALIGNED },
	{ "_ZnamSt11align_val_t", NSK_ALLOC_COOKIE_NEW_ALIGNED },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", NSK_ALLOC_COOKIE_NEW_ALIGNED },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", NSK_ALLOC_COOKIE_NEW_ALIGNED },
};

#define N_ALLOC_FNS (sizeof(alloc_fns) / sizeof(alloc_fns[0]))
#define N_NEW_FNS (sizeof(new_fns) / sizeof(new_fns[0]))

struct object {
	uint32_t pid; /* the process the probes are confined to */
	dev_t dev;
	ino_t ino;
	unsigned int bits;    /* NSK_ASYM_* probed in it */
	unsigned int defines; /* NSK_ASYM_* its symbols define */
};

/* A perf-event uprobe (bpf_link) or a uprobe_multi link (fd). */
struct link {
	struct bpf_link *l;
	int fd;
	int ret; /* a return probe */
};

struct nsk_alloc_attach {
	struct nsk_alloc_progs progs;
	struct object *objs; /* files already probed (or found useless) */
	size_t nobjs, capobjs;
	struct link *links;
	size_t nlinks, caplinks;
	char allocator[PATH_MAX];
	unsigned int refused; /* probe points the kernel would not take */
};

int nsk_alloc_attach__new(const struct nsk_alloc_progs *progs,
			  struct nsk_alloc_attach **out)
{
	struct nsk_alloc_attach *a;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->progs = *progs;
	*out = a;
	return 0;
}

struct detach_job {
	struct link *links;
	size_t n;
};

static void *detach_thread(void *arg)
{
	struct detach_job *j = arg;

	for (size_t i = 0; i < j->n; i++) {
		bpf_link__destroy(j->links[i].l);
		if (j->links[i].fd >= 0)
			close(j->links[i].fd);
	}
	return NULL;
}

/* Destroys links concurrently: each removal waits for RCU grace periods
 * (0.1 to 0.3 s measured here); uprobe_multi links removed in parallel
 * share them.  (Perf-event uprobes serialize in the kernel anyway.) */
static void destroy_links(struct link *links, size_t n)
{
	enum { NTHREADS = 8 };
	struct detach_job jobs[NTHREADS];
	pthread_t tids[NTHREADS];
	int started[NTHREADS] = { 0 };
	size_t per = (n + NTHREADS - 1) / NTHREADS;

	for (int t = 0; t < NTHREADS && per; t++) {
		size_t from = (size_t)t * per;

		jobs[t].links = links + from;
		jobs[t].n = from >= n ? 0 : (n - from < per ? n - from : per);
		if (!jobs[t].n)
			continue;
		started[t] = !pthread_create(&tids[t], NULL, detach_thread, &jobs[t]);
		if (!started[t])
			detach_thread(&jobs[t]);
	}
	for (int t = 0; t < NTHREADS; t++)
		if (started[t])
			pthread_join(tids[t], NULL);
}

void nsk_alloc_attach__free(struct nsk_alloc_attach *a)
{
	if (!a)
		return;
	/* All at once: a call whose return goes unseen now only leaves a
	 * nesting depth in task storage that dies with the BPF object. */
	destroy_links(a->links, a->nlinks);
	free(a->links);
	free(a->objs);
	free(a);
}

unsigned int nsk_alloc_attach__refused(const struct nsk_alloc_attach *a)
{
	return a ? a->refused : 0;
}

unsigned int nsk_alloc_attach__count(const struct nsk_alloc_attach *a)
{
	return a ? (unsigned int)a->nlinks : 0;
}

const char *nsk_alloc_attach__allocator(const struct nsk_alloc_attach *a)
{
	return a->allocator;
}

static int is_defined_func(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);
	int bind = GELF_ST_BIND(sym->st_info);

	return sym->st_shndx != SHN_UNDEF &&
	       (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       (bind == STB_GLOBAL || bind == STB_WEAK);
}

/* Bits of NSK_ASYM_* for the symbols of one symbol table. */
static unsigned int scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	unsigned int bits = 0;
	size_t n;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || !is_defined_func(&sym))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		if (!strcmp(name, "malloc"))
			bits |= NSK_ASYM_MALLOC;
		else if (!strcmp(name, "_Znwm"))
			bits |= NSK_ASYM_NEW;
	}
	return bits;
}

/* Reads the dynamic symbols, and the full symbol table of a file with no
 * dynamic ones (a static executable). */
static int elf_scan(const char *path, unsigned int *bits,
		    char ***needed, size_t *nneeded)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	int fd, err = 0, have_dynsym = 0;
	GElf_Shdr sh;

	*bits = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			have_dynsym = 1;
			*bits |= scan_symtab(elf, scn, &sh);
		} else if (sh.sh_type == SHT_DYNAMIC && needed) {
			Elf_Data *data = elf_getdata(scn, NULL);
			size_t n = data && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

			for (size_t i = 0; i < n; i++) {
				GElf_Dyn dyn;
				const char *lib;
				char **grown;

				if (!gelf_getdyn(data, (int)i, &dyn) ||
				    dyn.d_tag != DT_NEEDED)
					continue;
				lib = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
				grown = lib ? realloc(*needed, (*nneeded + 1) * sizeof(char *)) : NULL;
				if (!grown)
					continue;
				*needed = grown;
				grown[*nneeded] = strdup(lib);
				if (grown[*nneeded])
					(*nneeded)++;
			}
		}
	}
	if (!have_dynsym) {
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
				*bits |= scan_symtab(elf, scn, &sh);
	}
cleanup:
	elf_end(elf);
	close(fd);
	return err;
}

int nsk_alloc_attach__defines(const char *path)
{
	unsigned int bits;
	int err = elf_scan(path, &bits, NULL, NULL);

	return err ? err : (int)bits;
}

/* The record of a file, added on first sight; NULL when out of memory. */
static struct object *object_get(struct nsk_alloc_attach *a, uint32_t pid,
				 const struct stat *st)
{
	struct object *grown;

	for (size_t i = 0; i < a->nobjs; i++)
		if (a->objs[i].pid == pid && a->objs[i].dev == st->st_dev &&
		    a->objs[i].ino == st->st_ino)
			return &a->objs[i];
	if (a->nobjs == a->capobjs) {
		size_t cap = a->capobjs ? 2 * a->capobjs : 16;

		grown = realloc(a->objs, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		a->objs = grown;
		a->capobjs = cap;
	}
	grown = &a->objs[a->nobjs++];
	grown->pid = pid;
	grown->dev = st->st_dev;
	grown->ino = st->st_ino;
	grown->bits = 0;
	grown->defines = ~0u; /* not read yet */
	return grown;
}

static int add_link(struct nsk_alloc_attach *a, struct bpf_link *l, int fd,
		    int ret)
{
	if (a->nlinks == a->caplinks) {
		size_t cap = a->caplinks ? 2 * a->caplinks : 32;
		struct link *grown = realloc(a->links, cap * sizeof(*grown));

		if (!grown) {
			bpf_link__destroy(l);
			if (fd >= 0)
				close(fd);
			return -ENOMEM;
		}
		a->links = grown;
		a->caplinks = cap;
	}
	a->links[a->nlinks].l = l;
	a->links[a->nlinks].fd = fd;
	a->links[a->nlinks++].ret = ret;
	return 0;
}

/* Length of an instruction at p that leaves argument registers and the
 * stack alone, 0 if it is not one we know. */
static size_t harmless_len(const uint8_t *p)
{
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		return 4; /* endbr64 */
	if ((p[0] == 0x48 || p[0] == 0x4c || p[0] == 0x49 || p[0] == 0x4d) &&
	    p[1] == 0x85 && (p[2] & 0xc0) == 0xc0)
		return 3; /* test r64, r64 */
	if (p[0] == 0x85 && (p[1] & 0xc0) == 0xc0)
		return 2; /* test r32, r32 */
	if (p[0] == 0x80 && p[1] == 0x3d)
		return 7; /* cmpb $imm8, disp32(%rip) */
	if (p[0] == 0x83 && p[1] == 0x3d)
		return 7; /* cmpl $imm8, disp32(%rip) */
	return 0;
}

/* Whether the kernel emulates a uprobe on the instruction at p (x86). */
static int emulated(const uint8_t *p)
{
	if (p[0] >= 0x50 && p[0] <= 0x57)
		return 1; /* push */
	if (p[0] == 0x41 && p[1] >= 0x50 && p[1] <= 0x57)
		return 1; /* push r8-r15 */
	if ((p[0] >= 0x70 && p[0] <= 0x7f) || p[0] == 0xe8 || p[0] == 0xe9 ||
	    p[0] == 0xeb || p[0] == 0x90)
		return 1; /* jcc, call, jmp, nop */
	if (p[0] == 0x0f && p[1] >= 0x80 && p[1] <= 0x8f)
		return 1; /* jcc rel32 */
	return 0;
}

/* Bytes to step over at the start of a function whose first bytes are
 * code, so the probe is emulated (see the top of this file); 0 when in
 * doubt. */
static size_t entry_skip(const uint8_t *code, size_t len)
{
#if defined(__x86_64__)
	size_t skip = 0;

	for (int k = 0; k < 3 && !emulated(code + skip); k++) {
		size_t l = harmless_len(code + skip);

		if (!l || skip + l + 8 > len)
			return 0;
		skip += l;
	}
	return emulated(code + skip) ? skip : 0;
#else
	(void)code;
	(void)len;
	return 0;
#endif
}

/* File offsets of the probe points of fns[0..n) in path (0: not defined):
 * the symbol's address turned into a file offset through the loadable
 * segment that holds it, plus the entry skip. */
static int resolve(const char *path, const struct probe_fn *fns, size_t n,
		   uint64_t *offs)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t nphdr = 0;
	int fd, err = 0;

	memset(offs, 0, n * sizeof(*offs));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nphdr)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t nsym;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		nsym = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < nsym; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(data, (int)i, &sym) || !is_defined_func(&sym))
				continue;
			nm = elf_strptr(elf, sh.sh_link, sym.st_name);
			for (size_t k = 0; nm && k < n; k++) {
				uint8_t code[32];

				if (offs[k] || strcmp(nm, fns[k].name))
					continue;
				for (size_t p = 0; p < nphdr; p++) {
					GElf_Phdr ph;

					if (!gelf_getphdr(elf, (int)p, &ph) || ph.p_type != PT_LOAD ||
					    sym.st_value < ph.p_vaddr ||
					    sym.st_value >= ph.p_vaddr + ph.p_filesz)
						continue;
					offs[k] = sym.st_value - ph.p_vaddr + ph.p_offset;
					break;
				}
				if (offs[k] && pread(fd, code, sizeof(code), (off_t)offs[k]) ==
				    (ssize_t)sizeof(code))
					offs[k] += entry_skip(code, sizeof(code));
			}
		}
	}
cleanup:
	elf_end(elf);
	close(fd);
	return err;
}

/* BPF_LINK_CREATE for a uprobe_multi link, spelled out: the system's
 * linux/bpf.h and libbpf 1.1 predate it (kernel 6.6). */
#define NSK_BPF_TRACE_UPROBE_MULTI 48
#define NSK_BPF_F_UPROBE_MULTI_RETURN 1
struct nsk_link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t pad;
	uint8_t rest[64]; /* the rest of union bpf_attr, zero */
};

static int multi_link(struct bpf_program *prog, const char *path, uint32_t pid,
		      const uint64_t *offs, const uint64_t *cookies,
		      uint32_t cnt, int ret)
{
	struct nsk_link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (uint32_t)bpf_program__fd(prog);
	attr.attach_type = NSK_BPF_TRACE_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offs;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = cnt;
	attr.multi_flags = ret ? NSK_BPF_F_UPROBE_MULTI_RETURN : 0;
	attr.pid = pid;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int nsk_alloc_attach__multi_syms(struct bpf_program *prog, const char *path,
				 const char *const *names, const uint64_t *cookies,
				 uint32_t n)
{
	struct probe_fn fns[8];
	uint64_t offs[8];
	int err;

	if (n > 8)
		return -EINVAL;
	memset(fns, 0, sizeof(fns));
	for (uint32_t i = 0; i < n; i++)
		fns[i].name = names[i];
	err = resolve(path, fns, n, offs);
	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++)
		if (!offs[i])
			return -ENOENT;
	return multi_link(prog, path, 0, offs, cookies, n, 0);
}

/* The kernel has uprobe_multi links if its BTF names their struct.  A
 * search of the raw BTF for the name: parsing all of it (btf__load_vmlinux_
 * btf) costs tens of milliseconds more at every start. */
int nsk_alloc_attach__multi_supported(void)
{
	static const char name[] = "\0bpf_uprobe_multi_link\0";
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t r;
	int fd, ok = 0;

	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (;;) {
		if (len == cap) {
			char *grown = realloc(buf, cap ? 2 * cap : 8 << 20);

			if (!grown)
				goto cleanup;
			buf = grown;
			cap = cap ? 2 * cap : 8 << 20;
		}
		r = read(fd, buf + len, cap - len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	ok = memmem(buf, len, name, sizeof(name) - 1) != NULL;
cleanup:
	free(buf);
	close(fd);
	return ok;
}

static int attach_one(struct nsk_alloc_attach *a, struct bpf_program *prog,
		      const char *path, uint32_t pid, const struct probe_fn *fn,
		      uint64_t off, int ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ret, .bpf_cookie = fn->cookie);
	struct bpf_link *l;

	l = bpf_program__attach_uprobe_opts(prog, (pid_t)pid, path, off, &o);
	if (!l)
		return -errno;
	return add_link(a, l, -1, ret);
}

/* Probes on the functions of table fns that path defines: with one
 * uprobe_multi link per kind when the kernel has them (one link is one
 * detach, and a detach costs a grace period), else one perf-event uprobe
 * per function.  Returns how many functions, -ENOENT if none. */
static int attach_set(struct nsk_alloc_attach *a, const char *path, uint32_t pid,
		      const struct probe_fn *fns, size_t n, int with_free)
{
	static const struct probe_fn free_fn = { "free", NSK_ALLOC_FREE };
	uint64_t offs[32], cookies[32], free_off;
	uint32_t cnt = 0;
	int err, fd;

	err = resolve(path, fns, n, offs);
	if (err)
		return err;
	/* Keep the defined ones; two names at one address (aligned_alloc
	 * is memalign in glibc) get one probe. */
	for (size_t i = 0; i < n; i++) {
		int dup = 0;

		for (uint32_t k = 0; k < cnt; k++)
			dup |= offs[k] == offs[i];
		if (!offs[i] || dup)
			continue;
		offs[cnt] = offs[i];
		cookies[cnt++] = fns[i].cookie;
	}
	if (!cnt)
		return -ENOENT;
	if (with_free) {
		err = resolve(path, &free_fn, 1, &free_off);
		if (!err && !free_off)
			err = -ENOENT;
		if (err)
			return err;
	}
	if (a->progs.multi) {
		/* Probe points the kernel refuses in one link (EINVAL: seen
		 * while another tool's uprobes sat on the same functions) are
		 * dropped one by one, so the others still go in. */
		fd = multi_link(a->progs.exit, path, pid, offs, cookies, cnt, 1);
		if (fd == -EINVAL && cnt > 1) {
			uint32_t kept = 0;

			for (uint32_t i = 0; i < cnt; i++) {
				int one = multi_link(a->progs.exit, path, pid, &offs[i],
						     &cookies[i], 1, 1);

				if (one < 0) {
					a->refused++;
					continue;
				}
				close(one);
				offs[kept] = offs[i];
				cookies[kept++] = cookies[i];
			}
			cnt = kept;
			if (!cnt)
				return -EINVAL;
			fd = multi_link(a->progs.exit, path, pid, offs, cookies, cnt, 1);
		}
		/* Returns first: see the top of this file. */
		err = fd < 0 ? fd : add_link(a, NULL, fd, 1);
		if (!err) {
			fd = multi_link(a->progs.enter, path, pid, offs, cookies, cnt, 0);
			err = fd < 0 ? fd : add_link(a, NULL, fd, 0);
		}
		if (!err && with_free) {
			uint64_t c = free_fn.cookie;

			fd = multi_link(a->progs.free, path, pid, &free_off, &c, 1, 0);
			if (fd == -EINVAL) {
				a->refused++;
				fd = 0;
			} else {
				err = fd < 0 ? fd : add_link(a, NULL, fd, 0);
			}
		}
		return err ? err : (int)cnt;
	}
	for (uint32_t i = 0; i < cnt && !err; i++) {
		struct probe_fn f = { NULL, (uint32_t)cookies[i] };

		err = attach_one(a, a->progs.exit, path, pid, &f, offs[i], 1);
	}
	for (uint32_t i = 0; i < cnt && !err; i++) {
		struct probe_fn f = { NULL, (uint32_t)cookies[i] };

		err = attach_one(a, a->progs.enter, path, pid, &f, offs[i], 0);
	}
	if (!err && with_free)
		err = attach_one(a, a->progs.free, path, pid, &free_fn, free_off, 0);
	return err ? err : (int)cnt;
}

/* One candidate object of a process. */
struct cand {
	char path[PATH_MAX];
	struct stat st;
	unsigned int bits;
	int is_exe;
};

static int is_libc(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5);
}

/* Probe the candidates: the malloc family in the chosen allocator (the
 * executable, else the first non-libc object defining malloc, else libc),
 * operator new wherever it is defined. */
static int attach_cands(struct nsk_alloc_attach *a, uint32_t pid, struct cand *c,
			size_t n)
{
	struct cand *alloc = NULL;
	int err, attached = 0;

	for (size_t i = 0; i < n; i++) {
		if (!(c[i].bits & NSK_ASYM_MALLOC))
			continue;
		if (c[i].is_exe) {
			alloc = &c[i];
			break;
		}
		if (!alloc || (is_libc(alloc->path) && !is_libc(c[i].path)))
			alloc = &c[i];
	}
	for (size_t i = 0; i < n; i++) {
		struct object *o = object_get(a, pid, &c[i].st);

		if (!o)
			return -ENOMEM;
		if (&c[i] == alloc && !(o->bits & NSK_ASYM_MALLOC)) {
			o->bits |= NSK_ASYM_MALLOC;
			err = attach_set(a, c[i].path, pid, alloc_fns, N_ALLOC_FNS, 1);
			if (err < 0)
				return err;
			snprintf(a->allocator, sizeof(a->allocator), "%s", c[i].path);
			attached++;
		}
		if ((c[i].bits & NSK_ASYM_NEW) && !(o->bits & NSK_ASYM_NEW)) {
			o->bits |= NSK_ASYM_NEW;
			err = attach_set(a, c[i].path, pid, new_fns, N_NEW_FNS, 0);
			if (err < 0 && err != -ENOENT)
				return err;
			attached++;
		}
	}
	return attached;
}

/* Adds path to the candidates if it defines a symbol we probe.  What a
 * file defines is read once per file (a fork maps the same files again). */
static int add_cand(struct nsk_alloc_attach *a, uint32_t pid, struct cand **c,
		    size_t *n, const char *path, int is_exe)
{
	struct cand *grown, *x;
	struct object *o;
	struct stat st;
	unsigned int bits;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	for (size_t i = 0; i < *n; i++)
		if ((*c)[i].st.st_dev == st.st_dev && (*c)[i].st.st_ino == st.st_ino)
			return 0;
	o = object_get(a, pid, &st);
	if (!o)
		return -ENOMEM;
	/* another process's record of the same file knows it already */
	for (size_t i = 0; i < a->nobjs && o->defines == ~0u; i++)
		if (a->objs[i].dev == st.st_dev && a->objs[i].ino == st.st_ino)
			o->defines = a->objs[i].defines;
	if (o->defines == ~0u && elf_scan(path, &o->defines, NULL, NULL))
		o->defines = 0;
	bits = o->defines;
	/* Nothing to do for a file whose every role is taken. */
	if (!bits || (bits & ~o->bits) == 0)
		return 0;
	grown = realloc(*c, (*n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	*c = grown;
	x = &grown[(*n)++];
	snprintf(x->path, sizeof(x->path), "%s", path);
	x->st = st;
	x->bits = bits;
	x->is_exe = is_exe;
	return 0;
}

int nsk_alloc_attach__process(struct nsk_alloc_attach *a, uint32_t pid)
{
	char mpath[64], line[PATH_MAX + 256], exe[PATH_MAX];
	struct cand *c = NULL;
	size_t n = 0;
	ssize_t len;
	FILE *f;
	int err = 0;

	snprintf(mpath, sizeof(mpath), "/proc/%u/exe", pid);
	len = readlink(mpath, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	snprintf(mpath, sizeof(mpath), "/proc/%u/maps", pid);
	f = fopen(mpath, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char perms[8], *path;
		unsigned long long lo, hi;
		int off = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &lo, &hi, perms, &off) < 3 ||
		    !off || perms[2] != 'x')
			continue;
		path = line + off;
		path[strcspn(path, "\n")] = '\0';
		if (path[0] != '/' || strstr(path, " (deleted)"))
			continue;
		/* Through /proc/PID/root, so a process in another mount
		 * namespace is probed in its own file. */
		{
			char full[PATH_MAX + 64];

			snprintf(full, sizeof(full), "/proc/%u/root%s", pid, path);
			err = add_cand(a, pid, &c, &n, full, !strcmp(path, exe));
		}
		if (err)
			goto cleanup;
	}
	err = attach_cands(a, pid, c, n);
cleanup:
	fclose(f);
	free(c);
	return err;
}

/* The file a DT_NEEDED name resolves to, in the usual places. */
static int find_lib(const char *name, const char *runpath, char *out, size_t outlen)
{
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
	};
	const char *env = getenv("LD_LIBRARY_PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/')) {
		snprintf(out, outlen, "%s", name);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		const char *list = pass == 0 ? env : runpath;

		while (list && *list) {
			size_t l = strcspn(list, ":");

			snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, list, name);
			if (!access(buf, R_OK)) {
				snprintf(out, outlen, "%s", buf);
				return 0;
			}
			list += l + (list[l] == ':');
		}
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(buf, sizeof(buf), "%s/%s", dirs[i], name);
		if (!access(buf, R_OK)) {
			snprintf(out, outlen, "%s", buf);
			return 0;
		}
	}
	return -ENOENT;
}

int nsk_alloc_attach__program(struct nsk_alloc_attach *a, const char *path,
			      uint32_t pid)
{
	char **needed = NULL, lib[PATH_MAX];
	const char *preload = getenv("LD_PRELOAD");
	struct cand *c = NULL;
	size_t nneeded = 0, n = 0;
	unsigned int bits;
	int err;

	err = elf_scan(path, &bits, &needed, &nneeded);
	if (err)
		goto cleanup;
	err = add_cand(a, pid, &c, &n, path, 1);
	/* LD_PRELOAD objects come before the executable's libraries. */
	while (!err && preload && *preload) {
		size_t l = strcspn(preload, ": ");
		char name[PATH_MAX];

		snprintf(name, sizeof(name), "%.*s", (int)l, preload);
		if (l && !find_lib(name, NULL, lib, sizeof(lib)))
			err = add_cand(a, pid, &c, &n, lib, 0);
		preload += l + (preload[l] != '\0');
	}
	for (size_t i = 0; !err && i < nneeded; i++)
		if (!find_lib(needed[i], NULL, lib, sizeof(lib)))
			err = add_cand(a, pid, &c, &n, lib, 0);
	if (!err)
		err = attach_cands(a, pid, c, n);
cleanup:
	for (size_t i = 0; i < nneeded; i++)
		free(needed[i]);
	free(needed);
	free(c);
	return err;
}
