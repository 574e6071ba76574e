/* sc_count [-t|-T|-C] -- CMD ARGS: runs CMD with bench/sc_count.bpf.c
 * counting its syscalls (the bare floor of the syscall benchmark; -t: also
 * reading the clock at entry and exit, the entry time kept per CPU; -T: the
 * same with the entry time kept per thread, in task storage, as a tracer
 * must when calls block and threads move; -C: per thread in an array, the
 * thread's index cached per CPU); prints the counts on stderr and exits
 * with CMD's status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "launch.h"
#include "sc_count.skel.h"

int main(int argc, char **argv)
{
	struct sc_count_bpf *skel = NULL;
	int go = -1, ncpu, err = 1, with_time = 0;
	unsigned long long total[2];
	pid_t pid;

	if (argc > 1 && (!strcmp(argv[1], "-t") || !strcmp(argv[1], "-T") ||
			 !strcmp(argv[1], "-C"))) {
		with_time = argv[1][1] == 't' ? 1 : argv[1][1] == 'T' ? 2 : 3;
		argv++;
		argc--;
	}
	if (argc < 3 || strcmp(argv[1], "--")) {
		fprintf(stderr, "usage: sc_count [-t|-T|-C] -- CMD [ARGS]\n");
		return 2;
	}
	ncpu = libbpf_num_possible_cpus();
	skel = sc_count_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "sc_count: cannot load: %s\n", strerror(errno));
		return 1;
	}
	pid = nsk_bench__spawn_held(argv + 2, &go);
	if (pid < 0) {
		fprintf(stderr, "sc_count: cannot start %s: %s\n", argv[2], strerror(errno));
		goto cleanup;
	}
	skel->bss->target_tgid = pid;
	skel->bss->with_time = with_time;
	if (sc_count_bpf__attach(skel)) {
		fprintf(stderr, "sc_count: cannot attach\n");
		close(go); /* the held child gives up */
		goto cleanup;
	}
	err = nsk_bench__release(pid, go);
	for (unsigned k = 0; k < 2; k++)
		total[k] = nsk_bench__percpu_sum(bpf_map__fd(skel->maps.counts), k, ncpu);
	fprintf(stderr, "sc_count: %llu enters, %llu exits\n", total[0], total[1]);
cleanup:
	sc_count_bpf__destroy(skel);
	return err;
}
