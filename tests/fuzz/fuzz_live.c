/* libFuzzer target for `nusku live`: any bytes read in follow mode, in
 * short reads, by live's incremental loader a turn at a time, with every
 * view (and each sort order) queried between turns and a snapshot
 * printed at the end, as live --snapshot does.  The last byte picks the
 * read size. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/live.h"
#include "tests/fuzz/fuzz_mem.h"

struct src {
	const uint8_t *p;
	size_t len, pos, max;
};

static ssize_t src_read(void *ctx, void *buf, size_t len)
{
	struct src *s = ctx;

	if (len > s->max)
		len = s->max;
	if (len > s->len - s->pos)
		len = s->len - s->pos;
	memcpy(buf, s->p + s->pos, len);
	s->pos += len;
	/* follow mode: the end of what is there so far is "nothing now" */
	return len ? (ssize_t)len : -EAGAIN;
}

static void query_all(struct nsk_live_db *db)
{
	for (int v = 0; v < NSK_LIVE_NVIEWS; v++)
		for (int s = 0; s < nsk_live_view__nsorts(v); s++) {
			struct nsk_live_query q = { .view = v, .sort = s,
						    .window_ns = 1000000000ull,
						    .limit = 10 };
			struct nsk_live_table t = { 0 };

			(void)nsk_live_view__query(db, &q, &t);
			nsk_live_table__release(&t);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = size ? data[size - 1] : 0;
	struct src s = { data, size, 0, 64 + 512 * (size_t)(mode & 15) };
	struct nsk_live_opts o = { .input = "fuzz", .interval_s = 1,
				   .window_s = 1, .top = 5 };
	struct nsk_live_db *db = NULL;
	struct nsk_reader *r = NULL;
	struct nsk_reader_opts ro = { .follow = 1 };
	struct nsk_live_status st;
	struct nsk_io *io;
	int idle = 0;

	if (nsk_live_db__new(&db))
		return 0;
	io = calloc(1, sizeof(*io));
	if (!io)
		goto cleanup;
	io->read = src_read;
	io->ctx = &s;
	ro.on_problem = nsk_live_db__on_problem;
	ro.ctx = db;
	if (nsk_reader__new(io, &ro, &r))
		goto cleanup;
	/* Turns until the stream ends, or stays idle once all was read. */
	for (int turn = 0; turn < 10000 && idle < 2; turn++) {
		int rc = nsk_live_db__pump(db, r, 1000000ull);

		if (rc < 0)
			break;
		idle = rc == 0 && s.pos == s.len ? idle + 1 : 0;
		if (turn % 8 == 0)
			query_all(db);
	}
	query_all(db);
	/* as cmd_live.c's status_of fills it */
	memset(&st, 0, sizeof(st));
	st.source = "fuzz";
	nsk_live_db__status(db, &st);
	st.age_s = -1;
	(void)nsk_live_snapshot__print(fuzz_mem__null(), db, &st, &o, 1.0);
cleanup:
	nsk_reader__free(r);
	nsk_live_db__free(db);
	return 0;
}
