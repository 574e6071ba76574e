/* nusku ps: one row per process with what a profiler needs to know about
 * it.  proc_scan.c reads /proc, elf_probe.c the main binaries,
 * ps_inspect.c puts them together (runtime, permission), ps_out.c prints
 * the rows as an 80-column table or JSON; cmd_ps.c is the command. */
#ifndef NUSKU_CONTROLLER_PS_H
#define NUSKU_CONTROLLER_PS_H

#include <stdio.h>

#include "controller/proc_scan.h"

struct nsk_ps_row {
	struct nsk_proc p;
	char user[33];
	const char *runtime;	 /* native go rust java node python kernel */
	int frame_pointers;	 /* 1, 0, -1: cannot tell (binary unreadable) */
	int debug_info;		 /* 1, 0, -1 */
	int can_profile;
	char missing[192];	 /* what this user lacks, "; "-separated */
	char sessions[256];	 /* running sessions recording it, ','-separated */
};

enum nsk_ps_sort { NSK_PS_SORT_CPU, NSK_PS_SORT_RSS, NSK_PS_SORT_PID, NSK_PS_SORT_NAME };

struct nsk_ps_opts {
	int json;
	int sort;		 /* enum nsk_ps_sort */
	const char *filter;	 /* pid, or a substring of comm/cmdline/user/cgroup */
	int width;		 /* text: columns (80 unless a wider terminal) */
	int interval_ms;	 /* between the two CPU samples (200) */
	const char *proc_root;	 /* "/proc" */
	const char *debug_root;	 /* NULL: /usr/lib/debug */
	const char *ssh_host;	 /* --ssh [user@]host: the rows of that host */
	char **ssh_opts;	 /* --ssh-opt words, in order */
	int nssh_opts;
	const char *remote_nusku; /* --remote-nusku PATH ("nusku") */
};

/* Scans, waits interval_ms, scans again and inspects every process.
 * *rows: malloc'd array of *n rows (free with nsk_ps__free_rows). */
int nsk_ps__collect(const struct nsk_ps_opts *o, struct nsk_ps_row **rows, int *n);
void nsk_ps__free_rows(struct nsk_ps_row *rows, int n);

/* Fills the rows' runtime, frame pointers, debug info and permission.
 * ELF checks are cached per (device, inode) of the main binary. */
void nsk_ps__inspect(const struct nsk_ps_opts *o, struct nsk_ps_row *rows, int n);

/* Fills each row's sessions from this user's session directory
 * (controller/sessions.h); none when there is none. */
void nsk_ps__sessions(struct nsk_ps_row *rows, int n);

/* 1 when the row matches the filter (NULL matches everything). */
int nsk_ps__match(const struct nsk_ps_row *r, const char *filter);
void nsk_ps__sort(struct nsk_ps_row *rows, int n, int sort);

/* v bytes in at most 5 columns: 980K, 1.2M, 45M, 3.0G. */
void nsk_ps__fmt_bytes(char *buf, size_t len, unsigned long long v);

/* The rows that match, sorted, as text or JSON. */
int nsk_ps__print(FILE *f, const struct nsk_ps_opts *o, struct nsk_ps_row *rows, int n);

/* The rows of o->ssh_host: `ssh HOST nusku ps --format json`, parsed
 * (ps_remote.c).  On failure msg holds one line (ssh's or the remote's
 * error) and the return is negative. */
int nsk_ps__remote(const struct nsk_ps_opts *o, struct nsk_ps_row **rows, int *n,
		   char *msg, size_t msglen);
/* Rows from the JSON nusku ps writes; -EBADMSG for anything else. */
int nsk_ps__parse_json(const char *text, size_t len, struct nsk_ps_row **rows, int *n);

#endif
