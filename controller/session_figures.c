/* A recording's figures from the file itself, for a session whose
 * recorder died: what its state last said may be a second old, the file
 * is the truth.  Read through the format reader (nothing here knows
 * bytes), which keeps every complete chunk and says how many bytes of an
 * unfinished one it dropped, as `nusku info` reports them. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nusku/format.h>
#include <nusku/infile.h>

#include "controller/sessions.h"

struct fig_ctx {
	uint64_t first, last;
	int have_time;
};

static void on_chunk(void *ctx, const struct nsk_chunk_info *c)
{
	struct fig_ctx *fc = ctx;

	if (c->type != 1 || (!c->first_time && !c->last_time))
		return;
	if (!fc->have_time || c->first_time < fc->first)
		fc->first = c->first_time;
	if (!fc->have_time || c->last_time > fc->last)
		fc->last = c->last_time;
	fc->have_time = 1;
}

static void on_problem(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg; /* counted in the reader's stats */
}

static int key_is(const struct nsk_bytes *b, const char *k)
{
	return b->len == strlen(k) && !memcmp(b->data, k, b->len);
}

static uint64_t num(const struct nsk_bytes *b)
{
	char tmp[32];
	uint32_t n = b->len < sizeof(tmp) - 1 ? b->len : (uint32_t)sizeof(tmp) - 1;

	memcpy(tmp, b->data, n);
	tmp[n] = '\0';
	return strtoull(tmp, NULL, 10);
}

int nsk_sessions__file_figures(const char *path, struct nsk_file_figures *fig)
{
	struct fig_ctx fc = { 0 };
	struct nsk_reader_opts ro = { .on_problem = on_problem, .ctx = &fc,
				      .on_chunk = on_chunk };
	struct nsk_reader *rd = NULL;
	const struct nsk_reader_stats *rs;
	struct nsk_record rec;
	struct nsk_io *io;
	char msg[256];
	int fd, err;

	memset(fig, 0, sizeof(*fig));
	fd = nsk_infile__open(path, 0, NULL, msg, sizeof(msg));
	if (fd < 0)
		return fd;
	io = nsk_io__from_fd(fd, 1);
	if (!io) {
		close(fd);
		return -ENOMEM;
	}
	err = nsk_reader__new(io, &ro, &rd);
	if (err < 0)
		return err; /* the reader freed io */
	while ((err = nsk_reader__next(rd, &rec)) == 1) {
		if (rec.type == NSK_REC_LOSS) {
			fig->lost += rec.loss.count;
		} else if (rec.type == NSK_REC_END) {
			fig->ended = 1;
		} else if (rec.type == NSK_REC_META) {
			if (key_is(&rec.meta.key, "cost.bpf_run_ns")) {
				fig->have_cost = 1;
				fig->bpf_run_ns = num(&rec.meta.value);
			} else if (key_is(&rec.meta.key, "cost.bpf_runs")) {
				fig->bpf_runs = num(&rec.meta.value);
			}
		}
	}
	rs = nsk_reader__stats(rd);
	fig->records = rs->records;
	fig->dropped = rs->truncated_bytes;
	if (fc.have_time && fc.last > fc.first)
		fig->elapsed_ns = fc.last - fc.first;
	nsk_reader__free(rd);
	return err < 0 ? err : 0;
}
