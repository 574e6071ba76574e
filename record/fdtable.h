/* The recorder's table of file descriptors, sized once before its threads.
 *
 * The kernel grows a process's descriptor table by doubling it, and when
 * the table is shared by several threads it waits for an RCU grace period
 * before freeing the old one (expand_fdtable): 12 ms here, during which the
 * thread opening the descriptor stands still.  A recording opens hundreds
 * (BPF objects, a perf event per CPU, every module's file, the files it
 * holds for short-lived processes), so the table grew past 256 while a
 * build ran, and the thread that held a new program's file was the one
 * that waited: a program gone within those 12 ms, its binary deleted, was
 * never named (tests/e2e/short_lived.sh).  Grown once while the recorder
 * has one thread, it needs no grace period.
 */
#ifndef NUSKU_RECORD_FDTABLE_H
#define NUSKU_RECORD_FDTABLE_H

/* Before the first thread: room for up to 4096 descriptors, or the soft
 * RLIMIT_NOFILE when that is lower.  Nothing is kept open. */
void nsk_fdtable__reserve(void);

#endif
