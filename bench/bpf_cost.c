/* bpf_cost -- CMD ARGS: runs CMD with the kernel's BPF run-time statistics
 * on (BPF_ENABLE_STATS, held for the run only) and prints, once CMD has
 * exited, the run count and run time of every BPF program that was loaded
 * while it ran (by CMD or its children: a tracer under test), one line per
 * program name on stderr:
 *
 *   bpf_cost: prog NAME runs N ns T
 *
 * The programs go away with the tracer, so their statistics are read every
 * 20 ms and the last reading of each is kept; what ran in the last 20 ms of
 * a tracer's life is missed (a share of a run this long: callers compare
 * programs by ns per run, or against one program's run count read at the
 * same moment).  Only the programs that CMD's process tree holds an fd of
 * count (not another session's, loaded meanwhile).  Exits with CMD's
 * status. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define MAX_PROGS 4096

struct prog {
	__u32 id;
	int old;  /* loaded before the start */
	int ours; /* held by CMD's process tree */
	char name[BPF_OBJ_NAME_LEN];
	unsigned long long runs, ns;
};

static struct prog progs[MAX_PROGS];
static int nprogs;

static struct prog *find(__u32 id)
{
	for (int i = 0; i < nprogs; i++)
		if (progs[i].id == id)
			return &progs[i];
	if (nprogs == MAX_PROGS)
		return NULL;
	progs[nprogs].id = id;
	return &progs[nprogs++];
}

#define MAX_TREE 256

static pid_t tree[MAX_TREE];
static int ntree;

static pid_t ppid_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %d", &ppid);
	fclose(f);
	return ppid;
}

/* root and its descendants, into tree[] */
static void find_tree(pid_t root)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int grew = 1;

	ntree = 0;
	tree[ntree++] = root;
	while (d && grew) {
		grew = 0;
		rewinddir(d);
		while ((e = readdir(d)) && ntree < MAX_TREE) {
			pid_t pid = atoi(e->d_name), pp;
			int known = 0;

			if (pid <= 0)
				continue;
			for (int i = 0; i < ntree; i++)
				known |= tree[i] == pid;
			if (known || (pp = ppid_of(pid)) < 0)
				continue;
			for (int i = 0; i < ntree; i++)
				if (tree[i] == pp) {
					tree[ntree++] = pid;
					grew = 1;
					break;
				}
		}
	}
	if (d)
		closedir(d);
}

/* Marks the programs the tree holds fds of as ours. */
static void mark_ours(void)
{
	for (int t = 0; t < ntree; t++) {
		char path[64], line[128];
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)tree[t]);
		d = opendir(path);
		if (!d)
			continue;
		while ((e = readdir(d))) {
			char fpath[320];
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(fpath, sizeof(fpath), "%s/%s", path, e->d_name);
			f = fopen(fpath, "r");
			if (!f)
				continue;
			while (fgets(line, sizeof(line), f)) {
				unsigned id;
				struct prog *p;

				if (sscanf(line, "prog_id: %u", &id) == 1 &&
				    (p = find(id)))
					p->ours = 1;
			}
			fclose(f);
		}
		closedir(d);
	}
}

/* Reads every program's statistics; first: mark them all old. */
static void scan(int first)
{
	__u32 id = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		struct prog *p = find(id);
		int fd;

		if (!p)
			break;
		if (first)
			p->old = 1;
		if (p->old)
			continue;
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue; /* gone meanwhile */
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			memcpy(p->name, info.name, sizeof(p->name));
			p->runs = info.run_cnt;
			p->ns = info.run_time_ns;
		}
		close(fd);
	}
}

int main(int argc, char **argv)
{
	int stats, status = 0;
	pid_t pid;

	if (argc < 3 || strcmp(argv[1], "--")) {
		fprintf(stderr, "usage: bpf_cost -- CMD [ARGS]\n");
		return 2;
	}
	stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats < 0) {
		fprintf(stderr, "bpf_cost: cannot enable BPF statistics: %s\n", strerror(errno));
		return 1;
	}
	scan(1);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bpf_cost: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(stats);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bpf_cost: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		find_tree(pid);
		mark_ours();
		scan(0);
		usleep(20000);
	}
	close(stats);
	/* one line per name: a tracer may load the same program twice */
	for (int i = 0; i < nprogs; i++) {
		unsigned long long runs = 0, ns = 0;

		if (progs[i].old || !progs[i].ours || !progs[i].name[0])
			continue;
		for (int j = i; j < nprogs; j++) {
			if (progs[j].old || !progs[j].ours ||
			    strcmp(progs[j].name, progs[i].name))
				continue;
			runs += progs[j].runs;
			ns += progs[j].ns;
			if (j > i)
				progs[j].name[0] = 0;
		}
		fprintf(stderr, "bpf_cost: prog %s runs %llu ns %llu\n", progs[i].name, runs, ns);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
