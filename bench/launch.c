/* See launch.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "launch.h"

pid_t nsk_bench__spawn_held(char **argv, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127); /* the bench gave up before releasing it */
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		int e = errno;

		close(p[1]);
		errno = e;
		return -1;
	}
	*go = p[1];
	return pid;
}

int nsk_bench__release(pid_t pid, int go)
{
	int status = 0;
	ssize_t n = write(go, "x", 1);

	close(go);
	if (n != 1)
		return 1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

unsigned long long nsk_bench__percpu_sum(int map_fd, unsigned key, int ncpu)
{
	unsigned long long *v = calloc(ncpu > 0 ? (size_t)ncpu : 1, sizeof(*v)), sum = 0;

	if (v && !bpf_map_lookup_elem(map_fd, &key, v))
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
	free(v);
	return sum;
}
