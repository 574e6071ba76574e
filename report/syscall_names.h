/* Syscall names of the build architecture, by number.
 *
 * The table (report/syscall_names.c) is generated at build time from the
 * kernel headers (<asm/unistd.h>), never typed by hand.  Recordings carry
 * numbers plus a "syscall.arch" META record; a report of a recording made on
 * another architecture shows numbers ("syscall_N") instead of wrong names.
 */
#ifndef NUSKU_REPORT_SYSCALL_NAMES_H
#define NUSKU_REPORT_SYSCALL_NAMES_H

extern const char nsk_syscall_arch[];		  /* e.g. "x86_64" */
extern const char *const nsk_syscall_names[]; /* NULL where unused */
extern const unsigned int nsk_syscall_count;
/* One INSERT of every (nr, name) into the syscall_name table. */
extern const char nsk_syscall_names_sql[];

#endif
