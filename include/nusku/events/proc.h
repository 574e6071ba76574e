/* Process life, from bpf/proc.bpf.c to record/procs/proc.c.
 *
 * One record type for fork, exec, exit and rename (the tag in the header
 * says which), so the user half keeps one switch.  A fork of a new process
 * has pid != ppid; a new thread has pid == ppid.
 */
#ifndef NUSKU_EVENTS_PROC_H
#define NUSKU_EVENTS_PROC_H

#include <nusku/events/common.h>

/* flags */
#define NSK_EV_PROC_GROUP_DEAD 1u /* exit: the last thread of the process */

struct nsk_ev_proc {
	struct nsk_ev_header hdr; /* NSK_EV_PROC_{FORK,EXEC,EXIT,COMM} */
	__u64 time;
	__u32 pid;  /* tgid of the process the event is about */
	__u32 tid;
	__u32 ppid; /* fork: parent's tgid; exec: the tid before exec */
	__u32 ptid; /* fork: parent's tid */
	__s32 exit_code; /* exit: the kernel's wait status (code << 8 | signal) */
	__u32 flags;
	char comm[NSK_COMM_LEN];
};

_Static_assert(sizeof(struct nsk_ev_proc) == 56, "nsk_ev_proc size");

/* Bytes of a new program's arguments an exec event carries at most: what
 * /proc/PID/cmdline would say, read by the kernel side at the exec, so a
 * program gone a millisecond later keeps its command line. */
#define NSK_PROC_ARGS_MAX 4096

/* exec_flags: what the kernel side saw of the exec, so user space need
 * not ask /proc (a walk with a ptrace check each) while the loader runs */
#define NSK_EV_EXEC_SECURE 1u	 /* secure mode (set-user-ID, file caps) */
#define NSK_EV_EXEC_SAME_ROOT 2u /* the recorder's mount namespace and root */
/* The exec check passed in the kernel: its file passed it before
 * (exe_passed), and its environment preloads the path the check gave
 * (preload_path), in the same root, not secure. */
#define NSK_EV_EXEC_PASSED 4u

/* An exec (hdr.type NSK_EV_PROC_EXEC): the event, then args_len bytes of
 * arguments, NUL after each; hdr.size counts only the bytes sent. */
struct nsk_ev_proc_exec {
	struct nsk_ev_proc proc;
	__u32 args_len;
	__u32 exec_flags; /* NSK_EV_EXEC_* */
	char args[NSK_PROC_ARGS_MAX];
};

_Static_assert(sizeof(struct nsk_ev_proc_exec) == 56 + 8 + NSK_PROC_ARGS_MAX,
	       "nsk_ev_proc_exec size");

/* A file's identity as the kernel numbers it (dev: major << 20 | minor),
 * with its status change time, which any write or chmod moves: the key of
 * the exec program's maps of files the recorder holds open (exe_held) and
 * of programs that passed the exec check (exe_passed). */
struct nsk_exe_id {
	__u64 ino;
	__s64 ctime_sec;
	__u32 ctime_nsec;
	__u32 dev;
};

/* The path an exec's environment is searched for (in LD_PRELOAD), NUL
 * included, and the bytes of environment searched. */
#define NSK_PRELOAD_PATH_MAX 256
#define NSK_EXEC_ENV_MAX 8192

#endif
