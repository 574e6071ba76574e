/* ss_count [-t] -- CMD ARGS: runs CMD with bench/ss_count.bpf.c counting its
 * context switches and wakeups (the bare floor of the off-CPU benchmark;
 * -t: also timing each thread's intervals off CPU, kept in task storage);
 * prints the counts on stderr and exits with CMD's status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "launch.h"
#include "ss_count.skel.h"

int main(int argc, char **argv)
{
	struct ss_count_bpf *skel = NULL;
	int go = -1, ncpu, err = 1, with_time = 0;
	unsigned long long total[3];
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "-t")) {
		with_time = 1;
		argv++;
		argc--;
	}
	if (argc < 3 || strcmp(argv[1], "--")) {
		fprintf(stderr, "usage: ss_count [-t] -- CMD [ARGS]\n");
		return 2;
	}
	ncpu = libbpf_num_possible_cpus();
	skel = ss_count_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "ss_count: cannot load: %s\n", strerror(errno));
		return 1;
	}
	pid = nsk_bench__spawn_held(argv + 2, &go);
	if (pid < 0) {
		fprintf(stderr, "ss_count: cannot start %s: %s\n", argv[2], strerror(errno));
		goto cleanup;
	}
	skel->bss->target_tgid = pid;
	skel->bss->with_time = with_time;
	if (ss_count_bpf__attach(skel)) {
		fprintf(stderr, "ss_count: cannot attach\n");
		close(go); /* the held child gives up */
		goto cleanup;
	}
	err = nsk_bench__release(pid, go);
	for (unsigned k = 0; k < 3; k++)
		total[k] = nsk_bench__percpu_sum(bpf_map__fd(skel->maps.counts), k, ncpu);
	fprintf(stderr, "ss_count: %llu switches, %llu wakeups, %llu ns off CPU\n",
		total[0], total[1], total[2]);
cleanup:
	ss_count_bpf__destroy(skel);
	return err;
}
