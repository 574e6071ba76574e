/* What the bench's bare counters (bench/sc_count.c, bench/ss_count.c)
 * share: a command started held, so that its probes are attached before
 * its exec, then released and waited for; and a per-CPU counter summed. */
#ifndef NUSKU_BENCH_LAUNCH_H
#define NUSKU_BENCH_LAUNCH_H

#include <sys/types.h>

/* Forks argv[0] waiting to exec; its pid, or -1 (errno).  *go is the fd
 * nsk_bench__release writes to. */
pid_t nsk_bench__spawn_held(char **argv, int *go);
/* Lets it exec and waits for it: its exit status (1 if it did not exit). */
int nsk_bench__release(pid_t pid, int go);
/* The sum over ncpu CPUs of slot key of a per-CPU array of u64. */
unsigned long long nsk_bench__percpu_sum(int map_fd, unsigned key, int ncpu);

#endif
