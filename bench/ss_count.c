/* ss_count [-t] -- CMD ARGS: runs CMD with bench/ss_count.bpf.c counting its
 * context switches and wakeups (the bare floor of the off-CPU benchmark;
 * -t: also timing each thread's intervals off CPU, kept in task storage);
 * prints the counts on stderr and exits with CMD's status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ss_count.skel.h"

int main(int argc, char **argv)
{
	struct ss_count_bpf *skel = NULL;
	int go[2] = { -1, -1 }, status = 0, ncpu, err = 1, with_time = 0;
	unsigned long long total[3] = { 0, 0, 0 }, *v = NULL;
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
	v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v));
	skel = ss_count_bpf__open_and_load();
	if (!v || !skel || pipe(go)) {
		fprintf(stderr, "ss_count: cannot load: %s\n", strerror(errno));
		goto cleanup;
	}
	pid = fork();
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	skel->bss->target_tgid = pid;
	skel->bss->with_time = with_time;
	if (ss_count_bpf__attach(skel)) {
		fprintf(stderr, "ss_count: cannot attach\n");
		goto cleanup;
	}
	if (write(go[1], "x", 1) != 1)
		goto cleanup;
	waitpid(pid, &status, 0);
	for (unsigned k = 0; k < 3; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &k, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			total[k] += v[c];
	}
	fprintf(stderr, "ss_count: %llu switches, %llu wakeups, %llu ns off CPU\n",
		total[0], total[1], total[2]);
	err = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
cleanup:
	ss_count_bpf__destroy(skel);
	free(v);
	return err;
}
