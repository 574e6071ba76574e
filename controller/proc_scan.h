/* Reading /proc for `nusku ps`: one pass over every process, each file
 * read with a bounded number of bytes.  Strings are kept as the process
 * chose them (a comm or an argv may hold control bytes): the printer
 * escapes them. */
#ifndef NUSKU_CONTROLLER_PROC_SCAN_H
#define NUSKU_CONTROLLER_PROC_SCAN_H

#include <stddef.h>
#include <stdint.h>

#define NSK_PS_CMDLINE_MAX 4096 /* bytes of /proc/PID/cmdline read */

struct nsk_proc {
	int pid;
	int ppid;
	unsigned uid;		  /* effective */
	char comm[64];
	char *cmdline;		  /* argv joined by spaces; "" for kernel threads */
	unsigned long long ticks; /* utime + stime, clock ticks */
	unsigned long long start; /* starttime: tells a reused pid apart */
	uint64_t rss_bytes;
	int threads;
	int kernel;		  /* a kernel thread (PF_KTHREAD) */
	char *cgroup;		  /* the cgroup v2 path ("0::" line); NULL: none */
	char container[72];	  /* container id ("" when none) */
	char engine[16];	  /* docker, podman, containerd, crio */
	char unit[128];		  /* the systemd unit (.scope/.service) */
	double cpu_pct;		  /* over the interval, 100 = one core */
};

struct nsk_proc_list {
	struct nsk_proc *v;
	int n;
	int cap;
};

/* Every process under proc_root ("/proc").  full: also command line and
 * cgroup (the CPU pre-pass reads only stat).  Processes that vanish while
 * read are skipped.  0 or -errno (proc_root unreadable, no memory). */
int nsk_proc_scan__list(const char *proc_root, int full, struct nsk_proc_list *out);
/* Sets cpu_pct in cur from the ticks in prev, elapsed_s apart (prev is
 * sorted by pid on the way). */
void nsk_proc_scan__cpu(struct nsk_proc_list *prev, struct nsk_proc_list *cur,
			double elapsed_s);
void nsk_proc_scan__release(struct nsk_proc_list *l);

/* Parses the text of /proc/PID/stat into p (comm, ticks, start, rss pages
 * times page_size, threads, kernel).  0 or -EINVAL. */
int nsk_proc_scan__parse_stat(const char *buf, long page_size, struct nsk_proc *p);
/* The container id, engine and systemd unit a cgroup v2 path names:
 * .../docker-ID.scope, /docker/ID, libpod-ID.scope, cri-containerd-ID.scope,
 * crio-ID.scope, /kubepods/.../ID (ID: 64 hex digits); unit: the last
 * component ending in .scope or .service. */
void nsk_proc_scan__parse_cgroup(const char *path, struct nsk_proc *p);

#endif
