/* What each process is and whether this user may profile it.
 *
 * Runtime: a kernel thread is "kernel" (no ELF checks); a process that maps
 * libjvm.so is "java", libnode.so or a node binary "node", libpython or a
 * python binary "python" (interpreters are named before their main binary,
 * which is plain C); otherwise what elf_probe.c finds in the main binary
 * (go, rust, native).  The main binary is /proc/PID/exe, which needs the
 * same ptrace access as profiling; its (device, inode) keys a cache so a
 * binary run by a hundred processes is read once.
 *
 * Permission: BPF needs CAP_BPF and CAP_PERFMON (root has them;
 * CAP_SYS_ADMIN implies both), and the recorder reads the target's
 * /proc/PID/maps (ptrace read access) for its stacks and symbols: the
 * same open is tried here, for root too (a sandbox or an LSM can refuse
 * root). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "controller/elf_probe.h"
#include "controller/ps.h"

#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39
#define CAP_SYS_ADMIN_BIT 21
#define MAPS_MAX (1u << 20) /* bytes of /proc/PID/maps looked at */
#define ELF_CACHE_MAX 4096

struct elf_cache_ent {
	dev_t dev;
	ino_t ino;
	int err;
	struct nsk_elf_info info;
};

struct uid_name {
	unsigned uid;
	char name[33];
};

struct inspect {
	const struct nsk_ps_opts *o;
	struct elf_cache_ent *cache;
	int ncache;
	struct uid_name *users;
	int nusers;
	int root;
	int has_bpf, has_perfmon;
};

static unsigned long long cap_eff(void)
{
	char buf[4096], *c;
	unsigned long long v = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if ((c = strstr(buf, "CapEff:")) == buf) {
			v = strtoull(buf + 7, NULL, 16);
			break;
		}
	fclose(f);
	return v;
}

static const char *user_name(struct inspect *in, unsigned uid)
{
	struct uid_name *nv;
	struct passwd *pw;

	for (int i = 0; i < in->nusers; i++)
		if (in->users[i].uid == uid)
			return in->users[i].name;
	nv = realloc(in->users, (size_t)(in->nusers + 1) * sizeof(*nv));
	if (!nv)
		return "?";
	in->users = nv;
	nv = &in->users[in->nusers++];
	nv->uid = uid;
	pw = getpwuid(uid);
	if (pw && strlen(pw->pw_name) < sizeof(nv->name))
		snprintf(nv->name, sizeof(nv->name), "%s", pw->pw_name);
	else
		snprintf(nv->name, sizeof(nv->name), "%u", uid);
	return nv->name;
}

/* Which interpreter or VM the mappings show; NULL: none.  -EACCES in *err
 * when the maps cannot be read (no ptrace access). */
static const char *maps_runtime(const char *proc, int pid, int *err)
{
	char path[64], *buf = NULL;
	const char *rt = NULL;
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/maps", proc, pid);
	*err = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	buf = malloc(MAPS_MAX + 1);
	if (!buf)
		goto cleanup;
	while (got < (ssize_t)MAPS_MAX && (n = read(fd, buf + got, MAPS_MAX - (size_t)got)) > 0)
		got += n;
	if (got == 0 && n < 0) {
		*err = -errno;
		goto cleanup;
	}
	buf[got] = '\0';
	if (strstr(buf, "/libjvm.so"))
		rt = "java";
	else if (strstr(buf, "/libnode.so"))
		rt = "node";
	else if (strstr(buf, "/libpython"))
		rt = "python";
cleanup:
	free(buf);
	close(fd);
	return rt;
}

static const char *exe_runtime(const char *proc, int pid)
{
	char path[64], target[4096], *base;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/exe", proc, pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!strcmp(base, "node") || !strcmp(base, "nodejs"))
		return "node";
	if (!strncmp(base, "python", 6))
		return "python";
	if (!strcmp(base, "java"))
		return "java";
	return NULL;
}

static const struct elf_cache_ent *probe_exe(struct inspect *in, int pid)
{
	char path[64];
	struct elf_cache_ent *e, *nv;
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/exe", in->o->proc_root, pid);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	for (int i = 0; i < in->ncache; i++)
		if (in->cache[i].dev == st.st_dev && in->cache[i].ino == st.st_ino)
			return &in->cache[i];
	if (in->ncache >= ELF_CACHE_MAX)
		return NULL;
	nv = realloc(in->cache, (size_t)(in->ncache + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	in->cache = nv;
	e = &in->cache[in->ncache++];
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->err = nsk_elf_probe__path(path, in->o->debug_root, &e->info);
	return e;
}

static void add_missing(struct nsk_ps_row *r, const char *what)
{
	size_t n = strlen(r->missing);

	snprintf(r->missing + n, sizeof(r->missing) - n, "%s%s", n ? "; " : "", what);
}

static void inspect_one(struct inspect *in, struct nsk_ps_row *r)
{
	const struct elf_cache_ent *e = NULL;
	const char *rt;
	int maps_err = 0;

	snprintf(r->user, sizeof(r->user), "%s", user_name(in, r->p.uid));
	r->frame_pointers = r->debug_info = -1;
	r->missing[0] = '\0';
	if (r->p.kernel) {
		r->runtime = "kernel";
	} else {
		rt = maps_runtime(in->o->proc_root, r->p.pid, &maps_err);
		if (!rt)
			rt = exe_runtime(in->o->proc_root, r->p.pid);
		e = probe_exe(in, r->p.pid);
		if (e && !e->err) {
			r->frame_pointers = e->info.frame_pointers;
			r->debug_info = e->info.debug_info;
		}
		r->runtime = rt ? rt : e && !e->err ? nsk_elf_probe__lang_name(e->info.lang)
						    : "unknown";
	}
	/* root has the capabilities; its ptrace access can still be denied
	 * (a sandbox's init, Yama, an LSM), so that is checked for all */
	if (!in->root && !in->has_bpf)
		add_missing(r, "CAP_BPF");
	if (!in->root && !in->has_perfmon)
		add_missing(r, "CAP_PERFMON");
	if (!r->p.kernel && maps_err) {
		char what[64];

		snprintf(what, sizeof(what), "ptrace access to /proc/%d/maps", r->p.pid);
		add_missing(r, what);
	}
	r->can_profile = !r->missing[0];
}

void nsk_ps__inspect(const struct nsk_ps_opts *o, struct nsk_ps_row *rows, int n)
{
	unsigned long long caps = cap_eff();
	struct inspect in = { .o = o };

	in.root = geteuid() == 0;
	in.has_bpf = !!(caps & (1ull << CAP_BPF_BIT)) || !!(caps & (1ull << CAP_SYS_ADMIN_BIT));
	in.has_perfmon = !!(caps & (1ull << CAP_PERFMON_BIT)) ||
			 !!(caps & (1ull << CAP_SYS_ADMIN_BIT));
	for (int i = 0; i < n; i++)
		inspect_one(&in, &rows[i]);
	free(in.cache);
	free(in.users);
}
