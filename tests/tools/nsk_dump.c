/* nsk_dump: a .nsk file as one line per record, for end-to-end tests to
 * check with awk.  It reads with the reader API only, so it also checks
 * that what the recorder wrote reads back.
 *
 *   meta KEY VALUE
 *   process PID PPID HOW COMM
 *   thread PID TID NAME
 *   exit PID TID CODE
 *   sample PID TID WEIGHT FLAGS FRAMES     (leaf first, ';'-separated; an
 *        inlined call is expanded into its own frames, marked "@inline";
 *        kernel frames start with "k:"; unresolved ones are module+0xaddr)
 *   loss SOURCE COUNT
 *   end RECORDS LOST
 *   problem MESSAGE                         (from the reader)
 *
 * Exits 1 when the file cannot be read or has no END record.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nusku/format.h>

struct frame {
	uint64_t function_id, module_id, addr, inline_parent;
	uint32_t flags;
};

static char **strings;
static size_t nstrings;
static struct frame *frames;
static size_t nframes;
static uint64_t **stacks; /* [0] = count */
static size_t nstacks;

static void *grow(void *v, size_t *n, size_t id, size_t elem)
{
	if (id < *n)
		return v;
	size_t nn = id * 2 + 16;
	v = realloc(v, nn * elem);
	if (!v) {
		perror("realloc");
		exit(1);
	}
	memset((char *)v + *n * elem, 0, (nn - *n) * elem);
	*n = nn;
	return v;
}

static const char *str(uint64_t id)
{
	return id < nstrings && strings[id] ? strings[id] : "?";
}

static void print_frame(uint64_t id)
{
	int first = 1;

	while (id && id < nframes) {
		struct frame *f = &frames[id];

		if (!first)
			putchar(';');
		first = 0;
		if (f->flags & NSK_FRAME_KERNEL)
			fputs("k:", stdout);
		if (f->function_id)
			fputs(str(f->function_id), stdout);
		else
			printf("%s+0x%" PRIx64, str(f->module_id), f->addr);
		if (f->flags & NSK_FRAME_INLINED)
			fputs("@inline", stdout);
		id = f->flags & NSK_FRAME_INLINED ? f->inline_parent : 0;
	}
}

static void problem(void *ctx, const char *msg)
{
	(void)ctx;
	printf("problem %s\n", msg);
}

static void bytes(struct nsk_bytes b)
{
	for (uint32_t i = 0; i < b.len; i++)
		putchar(b.data[i] > ' ' && b.data[i] < 127 ? b.data[i] : '_');
}

int main(int argc, char **argv)
{
	struct nsk_reader_opts ro = { .on_problem = problem };
	struct nsk_reader *r;
	struct nsk_record rec;
	int fd, err, ended = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: nsk_dump FILE\n");
		return 2;
	}
	fd = strcmp(argv[1], "-") ? open(argv[1], O_RDONLY) : 0;
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	err = nsk_reader__new(nsk_io__from_fd(fd, 1), &ro, &r);
	if (err) {
		fprintf(stderr, "nsk_dump: %s\n", strerror(-err));
		return 1;
	}
	while ((err = nsk_reader__next(r, &rec)) == 1) {
		switch (rec.type) {
		case NSK_REC_META:
			fputs("meta ", stdout);
			bytes(rec.meta.key);
			putchar(' ');
			bytes(rec.meta.value);
			putchar('\n');
			break;
		case NSK_REC_STRING:
			strings = grow(strings, &nstrings, rec.string.id, sizeof(*strings));
			strings[rec.string.id] = strndup((const char *)rec.string.str.data,
							 rec.string.str.len);
			break;
		case NSK_REC_FRAME:
			frames = grow(frames, &nframes, rec.frame.id, sizeof(*frames));
			frames[rec.frame.id] = (struct frame){
				rec.frame.function_id, rec.frame.module_id,
				rec.frame.addr, rec.frame.inline_parent,
				rec.frame.flags };
			break;
		case NSK_REC_STACK: {
			uint64_t *v = malloc((rec.stack.frames.n + 2) * sizeof(*v));

			stacks = grow(stacks, &nstacks, rec.stack.id, sizeof(*stacks));
			v[0] = rec.stack.frames.n;
			v[1] = rec.stack.flags;
			if (rec.stack.frames.n) /* an empty stack has no array */
				memcpy(v + 2, rec.stack.frames.v,
				       rec.stack.frames.n * sizeof(*v));
			stacks[rec.stack.id] = v;
			break;
		}
		case NSK_REC_PROCESS:
			printf("process %u %u %u ", rec.process.pid, rec.process.ppid,
			       rec.process.how);
			bytes(rec.process.comm);
			putchar('\n');
			break;
		case NSK_REC_THREAD:
			printf("thread %u %u ", rec.thread.pid, rec.thread.tid);
			bytes(rec.thread.name);
			putchar('\n');
			break;
		case NSK_REC_EXIT:
			printf("exit %u %u %d\n", rec.exit.pid, rec.exit.tid,
			       rec.exit.exit_code);
			break;
		case NSK_REC_SAMPLE: {
			uint64_t *v = rec.sample.stack_id < nstacks ?
				stacks[rec.sample.stack_id] : NULL;

			printf("sample %u %u %" PRIu64 " %" PRIu64 " ", rec.sample.pid,
			       rec.sample.tid, rec.sample.weight, v ? v[1] : 0);
			for (uint64_t i = 0; v && i < v[0]; i++) {
				if (i)
					putchar(';');
				print_frame(v[2 + i]);
			}
			if (!v)
				fputs("?", stdout);
			putchar('\n');
			break;
		}
		case NSK_REC_LOSS:
			printf("loss %s %" PRIu64 "\n", str(rec.loss.source_id),
			       rec.loss.count);
			break;
		case NSK_REC_END:
			printf("end %" PRIu64 " %" PRIu64 "\n", rec.end.records,
			       rec.end.lost);
			ended = 1;
			break;
		}
	}
	if (err < 0)
		printf("problem %s\n", nsk_reader__error(r));
	nsk_reader__free(r);
	for (size_t i = 0; i < nstrings; i++)
		free(strings[i]);
	for (size_t i = 0; i < nstacks; i++)
		free(stacks[i]);
	free(strings);
	free(frames);
	free(stacks);
	return err < 0 || !ended;
}
