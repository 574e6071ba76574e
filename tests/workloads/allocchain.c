/* allocchain: allocations at the end of main -> outer -> inner -> leaf,
 * made three ways, with counts and sizes known by construction:
 *
 *   leaf       malloc(LEAF_BYTES) itself, once per round, freed
 *   copy_name  strdup of a NAME_LEN-character name, once per round, freed
 *   open_file  fopen of /proc/self/stat every tenth round, then fclose
 *   keep_name  strdup of the same name every hundredth round, never freed
 *
 * and, in the last round, read_pipe blocks 100 ms in read() on a pipe a
 * child process writes to: the blocking interval's stack must show
 * read_pipe, which a frame-pointer walk from inside libc's read skips.
 *
 * strdup and fopen allocate inside libc, whose Debian build keeps no frame
 * pointers, so a frame-pointer walk from their malloc skips copy_name,
 * open_file and keep_name and charges leaf.  Built twice (Makefile block
 * "tests: unwind"): with frame pointers and with -fomit-frame-pointer, where
 * the walk is lost in the program's own frames too.  Either way every
 * allocation must come out under main;outer;inner;leaf and, for the libc
 * ones, under the function that called libc.
 *
 * Usage: allocchain [ROUNDS] (default 2000).  Prints its own CPU time
 * (for bench/unwind_alloc.sh).  It pauses 1 ms every 100
 * rounds, as a program that does anything besides allocating would: a
 * burst of allocations from paths not seen before costs the recorder a
 * DWARF walk each (see docs/unwind.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define LEAF_BYTES 200
#define NAME_LEN 40

static volatile unsigned long sink;
static const char name[NAME_LEN + 1] = "0123456789012345678901234567890123456789";

/* Each does some work after the libc call, so it is not a tail call and
 * keeps its frame. */
__attribute__((noipa)) char *copy_name(void)
{
	char *p = strdup(name);

	sink++;
	return p;
}

__attribute__((noipa)) char *keep_name(void)
{
	char *p = strdup(name);

	sink++;
	return p;
}

__attribute__((noipa)) FILE *open_file(void)
{
	FILE *f = fopen("/proc/self/stat", "r");

	sink++;
	return f;
}

/* Blocks about 100 ms in read(), until the child writes. */
__attribute__((noipa)) void read_pipe(void)
{
	int fds[2];
	pid_t child;
	char c;

	if (pipe(fds))
		exit(1);
	child = fork();
	if (child < 0)
		exit(1);
	if (child == 0) {
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
		_exit(write(fds[1], "x", 1) == 1 ? 0 : 1);
	}
	if (read(fds[0], &c, 1) != 1)
		exit(1);
	sink++;
	waitpid(child, NULL, 0);
}

__attribute__((noipa)) void leaf(int round, int last)
{
	char *p = malloc(LEAF_BYTES), *q = copy_name();

	if (!p || !q)
		exit(1);
	p[0] = q[0];
	sink += (unsigned char)p[0];
	free(q);
	free(p);
	if (round % 10 == 0) {
		FILE *f = open_file();

		if (!f)
			exit(1);
		fclose(f);
	}
	if (round % 100 == 0)
		sink += (unsigned long)keep_name();
	if (last)
		read_pipe();
	sink++; /* not a tail call: leaf keeps its frame */
}

__attribute__((noipa)) void inner(int round, int last)
{
	leaf(round, last);
	sink++;
}

__attribute__((noipa)) void outer(int round, int last)
{
	inner(round, last);
	sink++;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	struct rusage ru;

	for (int i = 0; i < rounds; i++) {
		outer(i, i == rounds - 1);
		if (i % 100 == 99)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("allocchain: cpu_us %lld\n",
	       (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
		       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return 0;
}
