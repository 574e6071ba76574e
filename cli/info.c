/* nusku info: describes a .nsk file or stream.  It reads every record
 * through the reader API (nothing here knows bytes) and prints the header,
 * the META key/values, the CLOCK anchor, the time span, record counts per
 * type, losses by source (LOSS source ids resolved through STRING records),
 * whether the recording ended cleanly, and what the reader could not read:
 * a truncated tail (a note, exit 0) or corrupt chunks (exit 1, after
 * printing everything readable).  --chunks adds the chunk table, --format
 * json the same for machines. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/info_segments.h"
#include <nusku/segdir.h>
#include <nusku/format.h>
#include <nusku/infile.h>

#define MAX_PROBLEMS 100
/* What info keeps of a file, so that no file makes it hold much memory
 * (issue 17): the first META records, strings short enough to be loss
 * sources, the first loss sources; the rest is counted, not kept. */
#define MAX_META 256
#define MAX_META_BYTES 4096 /* of a key or value; longer ones are cut */
#define MAX_STRS (1u << 18)
#define MAX_STR_BYTES 256
#define MAX_LOSS_SRCS 1024

struct kv {
	char *key, *value;
	uint32_t klen, vlen;
};

struct str_slot {
	uint64_t id; /* 0: empty */
	char *s;
	uint32_t len;
};

struct loss_src {
	uint64_t id, count;
};

struct info {
	struct nsk_reader *rd;
	int want_chunks;

	/* chunks */
	struct nsk_chunk_info *chunks;
	size_t nchunks, chunks_cap;
	uint64_t n_record_chunks, n_index_chunks, stored, raw;
	uint64_t first, last;
	int have_time;

	/* records */
	uint64_t per_type[NSK_REC_TYPE_MAX];
	struct kv *meta;
	size_t nmeta, meta_cap, more_meta;
	struct nsk_rec_clock clock;
	int have_clock;
	struct nsk_rec_end end;
	uint64_t nrec, read_before_end;
	struct str_slot *strs; /* open addressing, power-of-two size */
	size_t nstrs, strs_cap;
	struct loss_src *loss;
	size_t nloss, loss_cap;
	uint64_t more_loss; /* events of sources past MAX_LOSS_SRCS */
	uint64_t loss_total;
	/* frames without a name, and mappings of files without symbols
	 * (format 1.2): not losses */
	uint64_t unresolved_frames, no_symbol_mappings;

	/* problems */
	char *problems[MAX_PROBLEMS];
	size_t nproblems, more_problems;
	char *first_corrupt;
	uint64_t seen_bad;
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 16;
	q = realloc(p, *cap * size);
	if (!q) {
		fprintf(stderr, "nusku: info: out of memory\n");
		exit(1);
	}
	return q;
}

/* A NUL-terminated copy of at most max bytes of b; *len its length. */
static char *dup_bytes(const struct nsk_bytes *b, uint32_t max, uint32_t *len)
{
	uint32_t n = b->len < max ? b->len : max;
	char *s = malloc((size_t)n + 1);

	if (!s) {
		fprintf(stderr, "nusku: info: out of memory\n");
		exit(1);
	}
	if (n)
		memcpy(s, b->data, n);
	s[n] = 0;
	*len = n;
	return s;
}

/* ---- collecting --------------------------------------------------------- */

static void on_problem(void *ctx, const char *msg)
{
	struct info *in = ctx;
	const struct nsk_reader_stats *st = in->rd ? nsk_reader__stats(in->rd) : NULL;
	uint64_t bad;

	/* The reader counts a problem in its stats before it reports it. */
	if (st) {
		bad = st->corrupt_chunks + st->seq_gaps;
		if (bad > in->seen_bad && !in->first_corrupt)
			in->first_corrupt = strdup(msg);
		in->seen_bad = bad;
	}
	if (in->nproblems < MAX_PROBLEMS)
		in->problems[in->nproblems++] = strdup(msg);
	else
		in->more_problems++;
}

static void on_chunk(void *ctx, const struct nsk_chunk_info *c)
{
	struct info *in = ctx;

	if (c->type == 1) {
		in->n_record_chunks++;
		if (c->first_time || c->last_time) {
			if (!in->have_time || c->first_time < in->first)
				in->first = c->first_time;
			if (!in->have_time || c->last_time > in->last)
				in->last = c->last_time;
			in->have_time = 1;
		}
	} else {
		in->n_index_chunks++;
	}
	in->stored += c->stored_len;
	in->raw += c->raw_len;
	if (in->want_chunks) {
		in->chunks = grow(in->chunks, &in->chunks_cap, in->nchunks, sizeof(*c));
		in->chunks[in->nchunks++] = *c;
	}
}

static const struct str_slot *str_get(const struct info *in, uint64_t id);

static void str_put(struct info *in, uint64_t id, const struct nsk_bytes *b)
{
	size_t i;

	if (!id || b->len > MAX_STR_BYTES)
		return; /* not a loss source's name: shown as string#N if used */
	if (in->nstrs >= MAX_STRS && !str_get(in, id))
		return;
	if (2 * (in->nstrs + 1) > in->strs_cap) {
		struct str_slot *old = in->strs;
		size_t oldcap = in->strs_cap;

		in->strs_cap = oldcap ? oldcap * 2 : 1024;
		in->strs = calloc(in->strs_cap, sizeof(*in->strs));
		if (!in->strs) {
			fprintf(stderr, "nusku: info: out of memory\n");
			exit(1);
		}
		in->nstrs = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i].id) {
				size_t j = (old[i].id * 0x9E3779B97F4A7C15ull) & (in->strs_cap - 1);

				while (in->strs[j].id)
					j = (j + 1) & (in->strs_cap - 1);
				in->strs[j] = old[i];
				in->nstrs++;
			}
		free(old);
	}
	i = (id * 0x9E3779B97F4A7C15ull) & (in->strs_cap - 1);
	while (in->strs[i].id && in->strs[i].id != id)
		i = (i + 1) & (in->strs_cap - 1);
	if (in->strs[i].id) {
		free(in->strs[i].s); /* redefined: the latest applies */
	} else {
		in->nstrs++;
	}
	in->strs[i].id = id;
	in->strs[i].s = dup_bytes(b, MAX_STR_BYTES, &in->strs[i].len);
}

static const struct str_slot *str_get(const struct info *in, uint64_t id)
{
	size_t i;

	if (!in->strs_cap || !id)
		return NULL;
	i = (id * 0x9E3779B97F4A7C15ull) & (in->strs_cap - 1);
	while (in->strs[i].id) {
		if (in->strs[i].id == id)
			return &in->strs[i];
		i = (i + 1) & (in->strs_cap - 1);
	}
	return NULL;
}

static void add_record(struct info *in, const struct nsk_record *r)
{
	size_t i;

	if (r->type < NSK_REC_TYPE_MAX)
		in->per_type[r->type]++;
	switch (r->type) {
	case NSK_REC_META:
		if (in->nmeta == MAX_META) {
			in->more_meta++;
			break;
		}
		in->meta = grow(in->meta, &in->meta_cap, in->nmeta, sizeof(*in->meta));
		in->meta[in->nmeta].key = dup_bytes(&r->meta.key, MAX_META_BYTES,
						    &in->meta[in->nmeta].klen);
		in->meta[in->nmeta].value = dup_bytes(&r->meta.value, MAX_META_BYTES,
						      &in->meta[in->nmeta].vlen);
		in->nmeta++;
		break;
	case NSK_REC_CLOCK:
		if (!in->have_clock)
			in->clock = r->clock;
		in->have_clock = 1;
		break;
	case NSK_REC_STRING:
		str_put(in, r->string.id, &r->string.str);
		break;
	case NSK_REC_LOSS:
		in->loss_total += r->loss.count;
		for (i = 0; i < in->nloss; i++)
			if (in->loss[i].id == r->loss.source_id)
				break;
		if (i == in->nloss && in->nloss == MAX_LOSS_SRCS) {
			in->more_loss += r->loss.count;
			break;
		}
		if (i == in->nloss) {
			in->loss = grow(in->loss, &in->loss_cap, in->nloss, sizeof(*in->loss));
			in->loss[in->nloss++] = (struct loss_src){ r->loss.source_id, 0 };
		}
		in->loss[i].count += r->loss.count;
		break;
	case NSK_REC_FRAME:
		in->unresolved_frames += !!(r->frame.flags & NSK_FRAME_UNRESOLVED);
		break;
	case NSK_REC_MAPPING:
		in->no_symbol_mappings += !!(r->mapping.flags & NSK_MAPPING_NO_SYMBOLS);
		break;
	case NSK_REC_END:
		in->end = r->end;
		in->read_before_end = in->nrec;
		break;
	}
	in->nrec++;
}

static void info_release(struct info *in)
{
	for (size_t i = 0; i < in->nmeta; i++) {
		free(in->meta[i].key);
		free(in->meta[i].value);
	}
	for (size_t i = 0; i < in->strs_cap; i++)
		free(in->strs[i].s);
	for (size_t i = 0; i < in->nproblems; i++)
		free(in->problems[i]);
	free(in->first_corrupt);
	free(in->meta);
	free(in->strs);
	free(in->loss);
	free(in->chunks);
}

/* ---- printing helpers ---------------------------------------------------- */

/* Text: NULs (argv separators) become spaces, other control bytes '?'. */
static void put_text(FILE *f, const char *s, size_t n)
{
	while (n && s[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		fputc(c == 0 ? ' ' : c < 0x20 || c == 0x7f ? '?' : c, f);
	}
}

/* Length of the valid UTF-8 sequence at s (0 if invalid). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 :
		     s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

static void put_json_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (c >= 0x80) {
			size_t len = utf8_len((const unsigned char *)s + i, n - i);

			if (!len) {
				fputs("\\ufffd", f);
				i++;
				continue;
			}
			fwrite(s + i, 1, len, f);
			i += len;
			continue;
		} else {
			fputc(c, f);
		}
		i++;
	}
	fputc('"', f);
}

static void json_cstr(FILE *f, const char *s)
{
	put_json_str(f, s, strlen(s));
}

/* "2026-11-29 16:29:37.123456789 UTC" for a CLOCK_REALTIME ns value. */
static void fmt_wall(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char day[32];

	if (!gmtime_r(&sec, &tm) || !strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%s.%09llu UTC", day, (unsigned long long)(ns % 1000000000ull));
}

static int wall_of(const struct info *in, uint64_t mono, uint64_t *out)
{
	if (!in->have_clock)
		return 0;
	*out = in->clock.realtime_ns + (mono - in->clock.monotonic_ns);
	return 1;
}

static const char *loss_name(const struct info *in, uint64_t id, size_t *len)
{
	const struct str_slot *s = str_get(in, id);

	if (!s)
		return NULL;
	*len = s->len;
	return s->s;
}

static const char *chunk_type(uint32_t t)
{
	return t == 1 ? "records" : t == 2 ? "index" : "?";
}

static const char *codec_name(uint32_t c)
{
	return c == 0 ? "none" : c == 1 ? "zstd" : "?";
}

/* ---- text ------------------------------------------------------------------ */

/* The last value of a META key (NUL-terminated by dup_bytes); NULL when
 * absent. */
static const char *meta_value(const struct info *in, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = in->nmeta; i-- > 0;)
		if (in->meta[i].klen == klen && !memcmp(in->meta[i].key, key, klen))
			return in->meta[i].value;
	return NULL;
}

/* The integer value of a META key; 0 when absent (*found says which). */
static uint64_t meta_u64(const struct info *in, const char *key, int *found)
{
	const char *v = meta_value(in, key);

	*found = v != NULL;
	return v ? strtoull(v, NULL, 10) : 0;
}

/* What the recorder's own BPF programs ran for (docs/format.md, cost.*). */
static void print_cost(FILE *f, const struct info *in)
{
	int have_ns = 0, have_runs = 0;
	uint64_t ns = meta_u64(in, "cost.bpf_run_ns", &have_ns);
	uint64_t runs = meta_u64(in, "cost.bpf_runs", &have_runs);

	/* "ON TOTAL" (1.3): the statistics were on for ON of TOTAL ns */
	const char *window = meta_value(in, "cost.window_ns");
	char share[64] = "";

	if (window) {
		char *end;
		uint64_t on = strtoull(window, &end, 10), total = strtoull(end, NULL, 10);

		if (on && total > on)
			snprintf(share, sizeof(share), "; estimated from %.1f%% of the time",
				 100.0 * (double)on / (double)total);
	}
	if (have_ns && have_runs)
		fprintf(f, "recording cost: %.3f ms of BPF program time over %" PRIu64
			" runs (%" PRIu64 " ns/run%s)\n", (double)ns / 1e6, runs,
			runs ? ns / runs : 0, share);
}

static void print_text(FILE *f, const struct info *in, const char *name)
{
	const struct nsk_file_info *fi = nsk_reader__info(in->rd);
	const struct nsk_reader_stats *st = nsk_reader__stats(in->rd);
	char wall[64];
	uint64_t w;

	fprintf(f, "file:       %s\n", name);
	fprintf(f, "format:     %u.%u (compat flags 0x%" PRIx64 ", incompat flags 0x%" PRIx64 ")\n",
		fi->major, fi->minor, fi->compat_flags, fi->incompat_flags);
	fprintf(f, "recording:  %016" PRIx64 "%016" PRIx64 "\n", fi->recording_id[0],
		fi->recording_id[1]);
	for (size_t i = 0; i < in->nmeta; i++) {
		fprintf(f, "%-11s ", i ? "" : "meta:");
		put_text(f, in->meta[i].key, in->meta[i].klen);
		fprintf(f, "%*s", in->meta[i].klen < 10 ? 10 - (int)in->meta[i].klen : 1, "");
		put_text(f, in->meta[i].value, in->meta[i].vlen);
		fputc('\n', f);
	}
	if (in->more_meta)
		fprintf(f, "%-11s (%zu more META records not shown)\n",
			in->nmeta ? "" : "meta:", in->more_meta);
	print_cost(f, in);
	if (in->have_clock) {
		fmt_wall(wall, sizeof(wall), in->clock.realtime_ns);
		fprintf(f, "clock:      monotonic %" PRIu64 ".%09" PRIu64 " s = %s\n",
			(uint64_t)(in->clock.monotonic_ns / 1000000000u),
			(uint64_t)(in->clock.monotonic_ns % 1000000000u), wall);
	} else {
		fprintf(f, "clock:      none (no CLOCK record: times are monotonic only)\n");
	}
	if (in->have_time) {
		fprintf(f, "span:       %.3f s", (double)(in->last - in->first) / 1e9);
		if (wall_of(in, in->first, &w)) {
			fmt_wall(wall, sizeof(wall), w);
			fprintf(f, " from %s", wall);
		}
		fputc('\n', f);
	}
	fprintf(f, "records:    %" PRIu64 "\n", st->records);
	for (uint32_t t = 1; t < NSK_REC_TYPE_MAX; t++)
		if (in->per_type[t])
			fprintf(f, "  %-14s %12" PRIu64 "\n", nsk_rec_type__name(t), in->per_type[t]);
	if (st->skipped_records)
		fprintf(f, "  %-14s %12" PRIu64 "\n", "(skipped)", st->skipped_records);
	fprintf(f, "unresolved: %" PRIu64 " frames without a name (not lost "
		"events); %" PRIu64 " mappings of files without symbols\n",
		in->unresolved_frames, in->no_symbol_mappings);
	fprintf(f, "loss:       %" PRIu64 " events%s\n", in->loss_total,
		in->nloss ? "" : " (no LOSS records)");
	for (size_t i = 0; i < in->nloss; i++) {
		size_t len;
		const char *s = loss_name(in, in->loss[i].id, &len);

		fputs("  ", f);
		if (s) {
			put_text(f, s, len);
			fprintf(f, "%*s", len < 14 ? 14 - (int)len : 1, "");
		} else {
			fprintf(f, "string#%-7" PRIu64, in->loss[i].id);
		}
		fprintf(f, " %12" PRIu64 "\n", in->loss[i].count);
	}
	if (in->more_loss)
		fprintf(f, "  %-14s %12" PRIu64 "\n", "(more sources)", in->more_loss);
	fprintf(f, "chunks:     %" PRIu64 " records + %" PRIu64 " index, %" PRIu64
		   " bytes stored, %" PRIu64 " raw\n",
		in->n_record_chunks, in->n_index_chunks, in->stored, in->raw);
	if (in->want_chunks && in->nchunks) {
		fprintf(f, "  %5s %12s %-7s %-5s %9s %9s %8s %s\n", "seq", "offset", "type",
			"codec", "stored", "raw", "records", "time (s from start)");
		for (size_t i = 0; i < in->nchunks; i++) {
			const struct nsk_chunk_info *c = &in->chunks[i];

			fprintf(f, "  %5" PRIu64 " %12" PRIu64 " %-7s %-5s %9u %9u %8u", c->seq,
				c->offset, chunk_type(c->type), codec_name(c->codec),
				c->stored_len, c->raw_len, c->records);
			if (c->type == 1 && in->have_time && (c->first_time || c->last_time))
				fprintf(f, " %.3f..%.3f", (double)(c->first_time - in->first) / 1e9,
					(double)(c->last_time - in->first) / 1e9);
			fputc('\n', f);
		}
	}
	if (st->ended) {
		fprintf(f, "ended:      cleanly (END after %" PRIu64 " records, %" PRIu64 " lost)\n",
			in->end.records, in->end.lost);
		if (in->end.records > in->read_before_end)
			fprintf(f, "missing:    %" PRIu64 " of the records written before END were not read\n",
				in->end.records - in->read_before_end);
	}
	else
		fprintf(f, "ended:      no END record: the recording was cut short\n");
	if (st->truncated_bytes)
		fprintf(f, "truncated:  last %" PRIu64 " bytes at offset %" PRIu64
			   " do not form a whole chunk; dropped\n",
			st->truncated_bytes, st->bytes - st->truncated_bytes);
	/* The truncation has its line above; list the other problems. */
	if (in->nproblems > (st->truncated_bytes ? 1u : 0u)) {
		fprintf(f, "problems:   %zu\n", in->nproblems + in->more_problems -
						   (st->truncated_bytes ? 1 : 0));
		for (size_t i = 0; i < in->nproblems; i++)
			if (strncmp(in->problems[i], "truncated:", 10))
				fprintf(f, "  %s\n", in->problems[i]);
		if (in->more_problems)
			fprintf(f, "  ... and %zu more\n", in->more_problems);
	}
}

/* ---- json ------------------------------------------------------------------ */

static void print_json(FILE *f, const struct info *in, const char *name)
{
	const struct nsk_file_info *fi = nsk_reader__info(in->rd);
	const struct nsk_reader_stats *st = nsk_reader__stats(in->rd);
	char wall[64], id[40];
	uint64_t w;
	int first = 1;

	fputs("{\"file\":", f);
	json_cstr(f, name);
	fprintf(f, ",\"format\":{\"major\":%u,\"minor\":%u,\"compat_flags\":%" PRIu64
		   ",\"incompat_flags\":%" PRIu64 "}",
		fi->major, fi->minor, fi->compat_flags, fi->incompat_flags);
	snprintf(id, sizeof(id), "%016" PRIx64 "%016" PRIx64, fi->recording_id[0],
		 fi->recording_id[1]);
	fprintf(f, ",\"recording_id\":\"%s\",\"meta\":[", id);
	for (size_t i = 0; i < in->nmeta; i++) {
		fputs(i ? ",{\"key\":" : "{\"key\":", f);
		put_json_str(f, in->meta[i].key, in->meta[i].klen);
		fputs(",\"value\":", f);
		put_json_str(f, in->meta[i].value, in->meta[i].vlen);
		fputc('}', f);
	}
	fputs("],\"clock\":", f);
	if (in->have_clock) {
		fmt_wall(wall, sizeof(wall), in->clock.realtime_ns);
		fprintf(f, "{\"monotonic_ns\":%" PRIu64 ",\"realtime_ns\":%" PRIu64 ",\"wall\":\"%s\"}",
			in->clock.monotonic_ns, in->clock.realtime_ns, wall);
	} else {
		fputs("null", f);
	}
	fputs(",\"time\":", f);
	if (in->have_time) {
		fprintf(f, "{\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64,
			in->first, in->last, in->last - in->first);
		if (wall_of(in, in->first, &w)) {
			fmt_wall(wall, sizeof(wall), w);
			fprintf(f, ",\"first_wall\":\"%s\"", wall);
		}
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\"records\":{\"total\":%" PRIu64 ",\"skipped\":%" PRIu64 ",\"by_type\":{",
		st->records, st->skipped_records);
	for (uint32_t t = 1; t < NSK_REC_TYPE_MAX; t++) {
		if (!in->per_type[t])
			continue;
		fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", nsk_rec_type__name(t),
			in->per_type[t]);
		first = 0;
	}
	fprintf(f, "}},\"unresolved_frames\":%" PRIu64 ",\"no_symbol_mappings\":%"
		PRIu64, in->unresolved_frames, in->no_symbol_mappings);
	fprintf(f, ",\"loss\":{\"total\":%" PRIu64 ",\"by_source\":[", in->loss_total);
	for (size_t i = 0; i < in->nloss; i++) {
		size_t len;
		const char *s = loss_name(in, in->loss[i].id, &len);

		fprintf(f, "%s{\"source_id\":%" PRIu64 ",\"source\":", i ? "," : "",
			in->loss[i].id);
		if (s)
			put_json_str(f, s, len);
		else
			fputs("null", f);
		fprintf(f, ",\"count\":%" PRIu64 "}", in->loss[i].count);
	}
	fprintf(f, "]},\"ended\":%s", st->ended ? "true" : "false");
	if (st->ended)
		fprintf(f, ",\"end\":{\"records\":%" PRIu64 ",\"lost\":%" PRIu64
			   ",\"records_read\":%" PRIu64 "}",
			in->end.records, in->end.lost, in->read_before_end);
	fprintf(f, ",\"chunks\":{\"records\":%" PRIu64 ",\"index\":%" PRIu64
		   ",\"stored_bytes\":%" PRIu64 ",\"raw_bytes\":%" PRIu64 ",\"corrupt\":%" PRIu64
		   ",\"skipped\":%" PRIu64 ",\"seq_gaps\":%" PRIu64,
		in->n_record_chunks, in->n_index_chunks, in->stored, in->raw,
		st->corrupt_chunks, st->skipped_chunks, st->seq_gaps);
	if (in->want_chunks) {
		fputs(",\"list\":[", f);
		for (size_t i = 0; i < in->nchunks; i++) {
			const struct nsk_chunk_info *c = &in->chunks[i];

			fprintf(f, "%s{\"seq\":%" PRIu64 ",\"offset\":%" PRIu64
				   ",\"type\":\"%s\",\"codec\":\"%s\",\"stored\":%u,\"raw\":%u"
				   ",\"records\":%u,\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 "}",
				i ? "," : "", c->seq, c->offset, chunk_type(c->type),
				codec_name(c->codec), c->stored_len, c->raw_len, c->records,
				c->first_time, c->last_time);
		}
		fputc(']', f);
	}
	fputs("},\"truncated\":", f);
	if (st->truncated_bytes)
		fprintf(f, "{\"bytes\":%" PRIu64 ",\"offset\":%" PRIu64 "}", st->truncated_bytes,
			st->bytes - st->truncated_bytes);
	else
		fputs("null", f);
	fputs(",\"problems\":[", f);
	for (size_t i = 0; i < in->nproblems; i++) {
		if (i)
			fputc(',', f);
		json_cstr(f, in->problems[i]);
	}
	fprintf(f, "],\"bytes\":%" PRIu64 "}\n", st->bytes);
}

/* ---- the command ------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: nusku info [--chunks] [--format text|json] FILE|-\n\n"
		   "Describes a .nsk recording: header, META, clock, time span, records\n"
		   "per type, losses by source, whether it ended cleanly, and what could\n"
		   "not be read.  '-' reads standard input.\n\n"
		   "  --chunks            list every chunk\n"
		   "  --format text|json  output format (default text)\n"
		   "  -h, --help          this help\n\n"
		   "Exit status: 0 readable (a truncated tail is noted, not an error);\n"
		   "1 corrupt chunks (after printing what was readable), or the file\n"
		   "cannot be read at all; 2 usage error.\n");
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "chunks", no_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct info in = { 0 };
	struct nsk_reader_opts ro = { .on_problem = on_problem, .ctx = &in,
				      .on_chunk = on_chunk };
	const struct nsk_reader_stats *st;
	struct nsk_record rec;
	struct nsk_io *io;
	const char *name;
	int json = 0, opt, fd, rc, status = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			in.want_chunks = 1;
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				json = 1;
			else if (strcmp(optarg, "text")) {
				fprintf(stderr, "nusku: info: --format %s: use text or json\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	name = argv[optind];
	if (strcmp(name, "-")) {
		/* a continuous recording: DIR or DIR@FROM..TO */
		char *dir, *from, *until;
		int r = nsk_segdir__split(name, &dir, &from, &until);

		if (!r || nsk_segdir__is_dir(name)) {
			rc = nsk_info__segments(stdout, r ? name : dir, from,
						until, json);
			free(dir);
			free(from);
			free(until);
			return rc;
		}
	}
	if (!strcmp(name, "-")) {
		fd = STDIN_FILENO;
	} else {
		char err[512];

		fd = nsk_infile__open(name, NSK_INFILE_FIFO_WAIT_MS, NULL, err,
				      sizeof(err));
		if (fd < 0) {
			fprintf(stderr, "nusku: info: %s\n", err);
			return 1;
		}
	}
	io = nsk_io__from_fd(fd, fd != STDIN_FILENO);
	if (!io) {
		fprintf(stderr, "nusku: info: out of memory\n");
		if (fd != STDIN_FILENO)
			close(fd);
		return 1;
	}
	/* A failure here is fatal; the reader reports its one-line reason
	 * through on_problem before it returns. */
	rc = nsk_reader__new(io, &ro, &in.rd);
	if (rc) {
		fprintf(stderr, "nusku: info: %s: %s\n", name,
			in.nproblems ? in.problems[in.nproblems - 1] : strerror(-rc));
		info_release(&in);
		return 1;
	}
	while ((rc = nsk_reader__next(in.rd, &rec)) == 1)
		add_record(&in, &rec);
	st = nsk_reader__stats(in.rd);
	if (rc < 0) {
		/* A read error: print what was read, then say why it stopped. */
		status = 1;
	}
	if (json)
		print_json(stdout, &in, name);
	else
		print_text(stdout, &in, name);
	fflush(stdout);
	if (rc < 0)
		fprintf(stderr, "nusku: info: %s: %s\n", name, nsk_reader__error(in.rd));
	else if (st->corrupt_chunks || st->seq_gaps) {
		fprintf(stderr, "nusku: info: %s: %s", name,
			in.first_corrupt ? in.first_corrupt : "corrupt");
		if (st->corrupt_chunks + st->seq_gaps > 1)
			fprintf(stderr, " (%" PRIu64 " corrupt chunks, %" PRIu64 " missing in all)",
				st->corrupt_chunks, st->seq_gaps);
		fputc('\n', stderr);
		status = 1;
	}
	nsk_reader__free(in.rd);
	info_release(&in);
	return status;
}
