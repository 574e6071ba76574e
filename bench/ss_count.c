/* ss_count [-t|-c|-n] -- CMD ARGS: runs CMD with bench/ss_count.bpf.c
 * counting its context switches and wakeups (the bare floor of the off-CPU
 * benchmark; -t: also timing each thread's intervals off CPU, kept in task
 * storage; -c: and timing them by the scheduler's clock as well, to see how
 * far it is from bpf_ktime_get_ns();
 * -n: its and its children's socket sends and receives instead, the floor
 * of the network benchmark); prints the counts on stderr and exits with
 * CMD's status. */
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
	int go = -1, ncpu, err = 1, with_time = 0, net = 0;
	unsigned long long total[6];
	pid_t pid;

	if (argc > 1 && (!strcmp(argv[1], "-t") || !strcmp(argv[1], "-c") ||
			 !strcmp(argv[1], "-n"))) {
		with_time = argv[1][1] == 't' ? 1 : argv[1][1] == 'c' ? 2 : 0;
		net = argv[1][1] == 'n';
		argv++;
		argc--;
	}
	if (argc < 3 || strcmp(argv[1], "--")) {
		fprintf(stderr, "usage: ss_count [-t|-c|-n] -- CMD [ARGS]\n");
		return 2;
	}
	ncpu = libbpf_num_possible_cpus();
	skel = ss_count_bpf__open();
	if (skel) {
		bpf_program__set_autoload(skel->progs.ss_switch, !net);
		bpf_program__set_autoload(skel->progs.ss_waking, !net);
		bpf_program__set_autoload(skel->progs.ss_send, net);
		bpf_program__set_autoload(skel->progs.ss_recv, net);
		if (ss_count_bpf__load(skel)) {
			ss_count_bpf__destroy(skel);
			skel = NULL;
		}
	}
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
	for (unsigned k = 0; k < 6; k++)
		total[k] = nsk_bench__percpu_sum(bpf_map__fd(skel->maps.counts), k, ncpu);
	if (net)
		fprintf(stderr, "ss_count: %llu sends, %llu receives\n", total[0], total[1]);
	else
		fprintf(stderr, "ss_count: %llu switches, %llu wakeups, %llu ns off CPU\n",
			total[0], total[1], total[2]);
	if (with_time == 2)
		fprintf(stderr, "ss_count: by the scheduler's clock %llu ns off CPU, "
			"%llu ns of differences, %llu intervals more than 5 us apart\n",
			total[3], total[4], total[5]);
cleanup:
	ss_count_bpf__destroy(skel);
	return err;
}
