/* Names of JIT-compiled code from perf map files: /tmp/perf-PID.map, as
 * written by Node (--perf-basic-prof), Java's perf-map-agent and Python
 * 3.12 (-X perf), one "START SIZE name" line (hex) per function.
 *
 * The file is the traced process's, in its own mount namespace and named
 * with its pid in its own pid namespace; it grows while the program runs,
 * so a lookup that misses reads what was appended since.  The recorder
 * runs as root and the file is the traced program's to write: it is opened
 * without following links out of the process's root, must be a regular
 * file owned by the process's user, and is read only up to a bound.
 */
#ifndef NUSKU_RECORD_PERFMAP_H
#define NUSKU_RECORD_PERFMAP_H

#include <stdint.h>

struct nsk_perfmaps;

/* proc: where /proc is ("/proc"; another directory laid out like it, for
 * tests).  -ENOMEM. */
int nsk_perfmaps__new(const char *proc, struct nsk_perfmaps **out);
void nsk_perfmaps__free(struct nsk_perfmaps *pm); /* accepts NULL */

/* A new process (or a program it exec'd): its root is held from now on,
 * so its map can be opened after it exits, when its last samples are
 * symbolized.  Forgets what an earlier process of that pid had. */
void nsk_perfmaps__watch(struct nsk_perfmaps *pm, uint32_t pid);

/* The name of the JIT function at addr in process pid and its start, or
 * NULL when its perf map (if any) does not name it.  Valid until free. */
const char *nsk_perfmaps__find(struct nsk_perfmaps *pm, uint32_t pid,
			       uint64_t addr, uint64_t *start);

/* Bounds on what one process's file may cost. */
#define NSK_PERFMAP_MAX_BYTES (64u << 20)
#define NSK_PERFMAP_MAX_ENTRIES (1u << 21)
#define NSK_PERFMAP_MAX_NAME 1024

#endif
