/* sc_count [-t|-T] -- CMD ARGS: runs CMD with bench/sc_count.bpf.c counting
 * its syscalls (the bare floor of the syscall benchmark; -t: also reading
 * the clock at entry and exit, the entry time kept per CPU; -T: the same
 * with the entry time kept per thread, in task storage, as a tracer must
 * when calls block and threads move); prints the counts on stderr and exits
 * with CMD's status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sc_count.skel.h"

int main(int argc, char **argv)
{
	struct sc_count_bpf *skel = NULL;
	int go[2] = { -1, -1 }, status = 0, ncpu, err = 1;
	unsigned long long total[2] = { 0, 0 }, *v = NULL;
	int with_time = 0;
	pid_t pid;

	if (argc > 1 && (!strcmp(argv[1], "-t") || !strcmp(argv[1], "-T"))) {
		with_time = argv[1][1] == 't' ? 1 : 2;
		argv++;
		argc--;
	}
	if (argc < 3 || strcmp(argv[1], "--")) {
		fprintf(stderr, "usage: sc_count [-t|-T] -- CMD [ARGS]\n");
		return 2;
	}
	ncpu = libbpf_num_possible_cpus();
	v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v));
	skel = sc_count_bpf__open_and_load();
	if (!v || !skel || pipe(go)) {
		fprintf(stderr, "sc_count: cannot load: %s\n", strerror(errno));
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
	if (sc_count_bpf__attach(skel)) {
		fprintf(stderr, "sc_count: cannot attach\n");
		goto cleanup;
	}
	if (write(go[1], "x", 1) != 1)
		goto cleanup;
	waitpid(pid, &status, 0);
	for (unsigned k = 0; k < 2; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &k, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			total[k] += v[c];
	}
	fprintf(stderr, "sc_count: %llu enters, %llu exits\n", total[0], total[1]);
	err = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
cleanup:
	sc_count_bpf__destroy(skel);
	free(v);
	return err;
}
