/* nusku export --format pprof: a view's measure as pprof's profile.proto
 * (report/profile.proto), encoded by protobuf-c and gzipped by zlib, which
 * `go tool pprof`, Pyroscope, Parca and speedscope read.
 *
 * What readers insist on: ids of mappings, locations and functions are
 * 1, 2, ... in the order they are made, string_table[0] is "", and labels
 * are strings (Pyroscope drops numeric ones).  A location is one address
 * of a stack: the frames of one stack_frame level, so inline frames are
 * lines of one location with the inlined callee first.  The samples are
 * the measure's rows, each labelled with its pid, tid and thread name and
 * the measure's own labels (off-CPU reason and waker, the syscall).  The
 * comments carry the report's summary: losses, unresolved frames, the
 * file's problems.  Control bytes in names become \xNN, as in every
 * output of nusku.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report/export.h"
#include "profile.pb-c.h" /* generated in the build tree */

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* A growing array of T. */
#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_PUSH(vec, out)                                                  \
	(((vec).n == (vec).cap &&                                           \
	  grow((void **)&(vec).v, &(vec).cap, sizeof(*(vec).v))) ? -ENOMEM   \
	 : ((out) = &(vec).v[(vec).n++], memset((out), 0, sizeof(*(out))), 0))

static int grow(void **p, size_t *cap, size_t size)
{
	size_t c = *cap ? *cap * 2 : 256;
	void *q = realloc(*p, c * size);

	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

struct loc {
	uint64_t mapping_id, address;
	size_t first_line, nlines; /* in pp.lines */
};

struct pp {
	struct nsk_report *rep;
	struct nsk_xdata x;
	struct nsk_strtab strs;	  /* string_table[1..] */
	VEC(Function) funcs;
	struct nsk_idmap func_of;  /* func id -> pprof id */
	struct nsk_strtab pseudo;  /* frameless stacks' names */
	struct nsk_idmap pseudo_loc; /* pseudo id -> location id */
	VEC(struct loc) locs;
	VEC(Line) lines;
	struct nsk_idmap loc_of;   /* innermost frame id -> location id */
	VEC(Mapping) maps;
	struct nsk_idmap map_of;   /* mapping id -> pprof id */
	uint64_t *stack_locs;	  /* per stack in x: its location ids */
	size_t *stack_first, *stack_n;
	sqlite3_stmt *frame_st, *map_st;
};

/* The string's index; "" (and NULL) is 0.  Strings from the recording
 * are escaped as for a terminal (report/escape.c): readers print them to
 * one, and proto3 strings must be UTF-8. */
static int64_t str(struct pp *p, const char *s)
{
	uint32_t id;
	char *e;

	if (!s || !*s)
		return 0;
	if (!nsk_out__needs_escape(s)) {
		id = nsk_strtab__intern(&p->strs, s, strlen(s));
		return id ? (int64_t)id : -1;
	}
	e = nsk_out__escaped(s);
	id = e ? nsk_strtab__intern(&p->strs, e, strlen(e)) : 0;
	free(e);
	return id ? (int64_t)id : -1;
}

static int64_t mapping_of(struct pp *p, int64_t mapping_id)
{
	Mapping *m;
	uint64_t id;
	int64_t fname, bid;

	if (mapping_id <= 0)
		return 0;
	if (nsk_idmap__get(&p->map_of, (uint64_t)mapping_id, &id))
		return (int64_t)id;
	sqlite3_reset(p->map_st);
	sqlite3_bind_int64(p->map_st, 1, mapping_id);
	if (sqlite3_step(p->map_st) != SQLITE_ROW)
		return 0; /* a frame naming no mapping the file defined */
	fname = str(p, (const char *)sqlite3_column_text(p->map_st, 3));
	bid = str(p, (const char *)sqlite3_column_text(p->map_st, 4));
	if (fname < 0 || bid < 0 || VEC_PUSH(p->maps, m))
		return -1;
	perftools__profiles__mapping__init(m);
	m->id = p->maps.n;
	m->memory_start = (uint64_t)sqlite3_column_int64(p->map_st, 0);
	m->memory_limit = (uint64_t)sqlite3_column_int64(p->map_st, 1);
	m->file_offset = (uint64_t)sqlite3_column_int64(p->map_st, 2);
	m->filename = fname;
	m->build_id = bid;
	/* names come with the recording: nothing for pprof to look up */
	m->has_functions = m->has_filenames = m->has_line_numbers =
		m->has_inline_frames = 1;
	if (nsk_idmap__set(&p->map_of, (uint64_t)mapping_id, m->id))
		return -1;
	return (int64_t)m->id;
}

/* The pprof function of func id (its first frame gives the file). */
static int64_t function_of(struct pp *p, int64_t func_id, const char *file)
{
	const struct nsk_xfunc *xf = nsk_xdata__func(&p->x, func_id);
	Function *f;
	uint64_t id;
	int64_t name;

	if (nsk_idmap__get(&p->func_of, (uint64_t)func_id, &id))
		return (int64_t)id;
	name = str(p, xf ? xf->name : "?");
	if (name < 0 || VEC_PUSH(p->funcs, f))
		return -1;
	perftools__profiles__function__init(f);
	f->id = p->funcs.n;
	f->name = f->system_name = name;
	f->filename = str(p, file && *file ? file : xf ? xf->module : NULL);
	if (f->filename < 0 ||
	    nsk_idmap__set(&p->func_of, (uint64_t)func_id, f->id))
		return -1;
	return (int64_t)f->id;
}

/* The location of frames[0..n) (one level of a stack). */
static int64_t location_of(struct pp *p, const struct nsk_xframe *fr, size_t n)
{
	struct loc *l;
	uint64_t id;

	if (nsk_idmap__get(&p->loc_of, (uint64_t)fr[0].frame_id, &id))
		return (int64_t)id;
	if (VEC_PUSH(p->locs, l))
		return -1;
	l->first_line = p->lines.n;
	for (size_t i = 0; i < n; i++) {
		const char *file = NULL;
		int64_t line = 0, fid, mid = 0;
		Line *ln;

		sqlite3_reset(p->frame_st);
		sqlite3_bind_int64(p->frame_st, 1, fr[i].frame_id);
		if (sqlite3_step(p->frame_st) == SQLITE_ROW) {
			mid = sqlite3_column_int64(p->frame_st, 0);
			if (i == n - 1 || !l->address)
				l->address = (uint64_t)sqlite3_column_int64(p->frame_st, 1);
			file = (const char *)sqlite3_column_text(p->frame_st, 2);
			line = sqlite3_column_int64(p->frame_st, 3);
		}
		if (mid > 0 && !l->mapping_id) {
			int64_t m = mapping_of(p, mid);

			if (m < 0)
				return -1;
			l->mapping_id = (uint64_t)m;
		}
		fid = function_of(p, fr[i].func_id, file);
		/* l may move with the vector: index it again after */
		l = &p->locs.v[p->locs.n - 1];
		if (fid < 0 || VEC_PUSH(p->lines, ln))
			return -1;
		perftools__profiles__line__init(ln);
		ln->function_id = (uint64_t)fid;
		ln->line = line > 0 ? line : 0;
		l->nlines++;
	}
	if (nsk_idmap__set(&p->loc_of, (uint64_t)fr[0].frame_id, p->locs.n))
		return -1;
	return (int64_t)p->locs.n;
}

/* A stack without frames: one location of a function named for it. */
static int64_t pseudo_location(struct pp *p, int64_t stack_id)
{
	const char *name = nsk_xdata__frameless(&p->x, p->rep, stack_id);
	uint32_t key = nsk_strtab__intern(&p->pseudo, name, strlen(name));
	struct loc *l;
	Function *f;
	Line *ln;
	uint64_t id;

	if (!key)
		return -1;
	if (nsk_idmap__get(&p->pseudo_loc, key, &id))
		return (int64_t)id;
	if (VEC_PUSH(p->funcs, f))
		return -1;
	perftools__profiles__function__init(f);
	f->id = p->funcs.n;
	f->name = f->system_name = str(p, name);
	if (f->name < 0 || VEC_PUSH(p->locs, l))
		return -1;
	l->first_line = p->lines.n;
	l->nlines = 1;
	if (VEC_PUSH(p->lines, ln))
		return -1;
	perftools__profiles__line__init(ln);
	ln->function_id = p->funcs.n;
	if (nsk_idmap__set(&p->pseudo_loc, key, p->locs.n))
		return -1;
	return (int64_t)p->locs.n;
}

/* Every stack's location ids, leaf first. */
static int build_stacks(struct pp *p)
{
	size_t total = 0, at = 0;

	for (size_t s = 0; s < p->x.nstacks; s++)
		total += p->x.stacks[s].n ? p->x.stacks[s].n : 1;
	p->stack_locs = malloc((total ? total : 1) * sizeof(*p->stack_locs));
	p->stack_first = calloc(p->x.nstacks + 1, sizeof(*p->stack_first));
	p->stack_n = calloc(p->x.nstacks + 1, sizeof(*p->stack_n));
	if (!p->stack_locs || !p->stack_first || !p->stack_n)
		return -ENOMEM;
	for (size_t s = 0; s < p->x.nstacks; s++) {
		const struct nsk_xstack *xs = &p->x.stacks[s];
		const struct nsk_xframe *fr = &p->x.frames[xs->first];
		int64_t id;

		p->stack_first[s] = at;
		if (!xs->n) {
			id = pseudo_location(p, xs->id);
			if (id < 0)
				return -ENOMEM;
			p->stack_locs[at++] = (uint64_t)id;
		}
		for (size_t i = 0; i < xs->n;) {
			size_t j = i + 1;

			while (j < xs->n && fr[j].level == fr[i].level)
				j++;
			id = location_of(p, fr + i, j - i);
			if (id < 0)
				return -ENOMEM;
			p->stack_locs[at++] = (uint64_t)id;
			i = j;
		}
		p->stack_n[s] = at - p->stack_first[s];
	}
	return 0;
}

/* The recording's start on the wall clock, from its first clock anchor. */
static int64_t wall_start(struct nsk_report *rep)
{
	int64_t start = nsk_report__info(rep, "time_start_ns"), t = 0;
	sqlite3_stmt *st;

	st = nsk_report__prepare(rep, "SELECT %lld - monotonic_ns + realtime_ns "
				 "FROM clock ORDER BY monotonic_ns LIMIT 1",
				 (long long)start);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		t = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return t > 0 ? t : 0;
}

/* Packs the profile and writes it gzipped to f. */
static int write_gz(struct nsk_report *rep, const Profile *prof, FILE *f)
{
	size_t len = perftools__profiles__profile__get_packed_size(prof);
	uint8_t *buf = malloc(len ? len : 1), out[65536];
	z_stream z = { 0 };
	int err = 0, zr;

	if (!buf || deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(buf);
		snprintf(rep->err, sizeof(rep->err), "out of memory");
		return -ENOMEM;
	}
	perftools__profiles__profile__pack(prof, buf);
	z.next_in = buf;
	z.avail_in = (uInt)len; /* a profile past 4 GiB is not one to write */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EIO;
			snprintf(rep->err, sizeof(rep->err), "gzip failed");
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) !=
		    sizeof(out) - z.avail_out) {
			err = -EIO;
			snprintf(rep->err, sizeof(rep->err), "writing the "
				 "profile: %s", strerror(errno));
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	free(buf);
	return err;
}

/* pprof takes the first mapping for the program ("File: ..."): move the
 * executable the most locations are in to the front, renumbering. */
static void main_mapping_first(struct pp *p)
{
	size_t best = 0, best_n = 0;
	Mapping tmp;

	for (size_t m = 0; m < p->maps.n; m++) {
		const char *name = nsk_strtab__get(&p->strs,
						   (uint32_t)p->maps.v[m].filename);
		size_t n = 0;

		if (!name || strstr(name, ".so") || name[0] == '[')
			continue;
		for (size_t i = 0; i < p->locs.n; i++)
			n += p->locs.v[i].mapping_id == m + 1;
		if (n > best_n) {
			best = m;
			best_n = n;
		}
	}
	if (!best)
		return;
	tmp = p->maps.v[0];
	p->maps.v[0] = p->maps.v[best];
	p->maps.v[best] = tmp;
	p->maps.v[0].id = 1;
	p->maps.v[best].id = best + 1;
	for (size_t i = 0; i < p->locs.n; i++) {
		uint64_t *id = &p->locs.v[i].mapping_id;

		if (*id == 1)
			*id = best + 1;
		else if (*id == best + 1)
			*id = 1;
	}
}

static int assemble(struct pp *p, FILE *f)
{
	const struct nsk_measure *m = p->x.m;
	int nlabels = (m->labels[0] != NULL) + (m->labels[1] != NULL);
	int nl = 3 + nlabels;
	size_t nrows = p->x.nrows;
	ValueType vt[NSK_MEASURE_VALUES], *vtp[NSK_MEASURE_VALUES], period_vt;
	Sample *samples = calloc(nrows + 1, sizeof(*samples));
	Sample **sp = calloc(nrows + 1, sizeof(*sp));
	Label *labels = calloc(nrows * nl + 1, sizeof(*labels));
	Label **lp = calloc(nrows * nl + 1, sizeof(*lp));
	int64_t *values = calloc(nrows * m->nvalues + 1, sizeof(*values));
	Location *locs = calloc(p->locs.n + 1, sizeof(*locs));
	Location **locp = calloc(p->locs.n + 1, sizeof(*locp));
	Line **linep = calloc(p->lines.n + 1, sizeof(*linep));
	Function **fp = calloc(p->funcs.n + 1, sizeof(*fp));
	Mapping **mp = calloc(p->maps.n + 1, sizeof(*mp));
	char **strings = NULL, comm_lines[10][256], num[3][32];
	int64_t comments[12], key[5];
	int ncomments = 0, err = -ENOMEM;
	Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	sqlite3_stmt *comm = NULL;

	if (!samples || !sp || !labels || !lp || !values || !locs || !locp ||
	    !linep || !fp || !mp)
		goto cleanup;
	comm = nsk_report__prepare(p->rep, "SELECT name FROM comm WHERE id = ?");
	if (!comm) {
		err = -EIO;
		goto cleanup;
	}
	for (int i = 0; i < m->nvalues; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = str(p, m->values[i].type);
		vt[i].unit = str(p, m->values[i].unit);
		vtp[i] = &vt[i];
	}
	key[0] = str(p, "pid");
	key[1] = str(p, "tid");
	key[2] = str(p, "comm");
	for (int i = 0; i < nlabels; i++)
		key[3 + i] = str(p, m->labels[i]);
	for (size_t r = 0; r < nrows; r++) {
		const struct nsk_xrow *row = &p->x.rows[r];
		const struct nsk_xstack *xs = nsk_xdata__stack(&p->x, row->stack_id);
		size_t s = (size_t)(xs - p->x.stacks);
		Sample *smp = &samples[r];
		const char *cname = NULL;

		perftools__profiles__sample__init(smp);
		smp->n_location_id = p->stack_n[s];
		smp->location_id = p->stack_locs + p->stack_first[s];
		smp->n_value = (size_t)m->nvalues;
		smp->value = values + r * m->nvalues;
		memcpy(smp->value, row->v, m->nvalues * sizeof(*smp->value));
		sqlite3_reset(comm);
		sqlite3_bind_int64(comm, 1, row->comm_id);
		if (sqlite3_step(comm) == SQLITE_ROW)
			cname = (const char *)sqlite3_column_text(comm, 0);
		snprintf(num[0], sizeof(num[0]), "%lld", (long long)row->pid);
		snprintf(num[1], sizeof(num[1]), "%lld", (long long)row->tid);
		smp->n_label = 0;
		smp->label = lp + r * nl;
		for (int i = 0; i < nl; i++) {
			Label *lb = &labels[r * nl + i];
			const char *v = i < 2 ? num[i] : i == 2 ? cname :
				nsk_strtab__get(&p->x.str, row->label[i - 3]);
			int64_t sv = str(p, v);

			if (sv < 0)
				goto cleanup;
			if (!sv)
				continue; /* no value: no label */
			perftools__profiles__label__init(lb);
			lb->key = key[i];
			lb->str = sv;
			smp->label[smp->n_label++] = lb;
		}
		sp[r] = smp;
	}
	for (size_t i = 0; i < p->lines.n; i++)
		linep[i] = &p->lines.v[i];
	main_mapping_first(p);
	for (size_t i = 0; i < p->locs.n; i++) {
		perftools__profiles__location__init(&locs[i]);
		locs[i].id = i + 1;
		locs[i].mapping_id = p->locs.v[i].mapping_id;
		locs[i].address = p->locs.v[i].address;
		locs[i].n_line = p->locs.v[i].nlines;
		locs[i].line = linep + p->locs.v[i].first_line;
		locp[i] = &locs[i];
	}
	for (size_t i = 0; i < p->funcs.n; i++)
		fp[i] = &p->funcs.v[i];
	for (size_t i = 0; i < p->maps.n; i++)
		mp[i] = &p->maps.v[i];
	{
		int n = nsk_report__summary_lines(p->rep, comm_lines, 10);

		for (int i = 0; i < n && ncomments < 12; i++) {
			int64_t c = str(p, comm_lines[i]);

			if (c < 0)
				goto cleanup;
			comments[ncomments++] = c;
		}
	}
	if (m->period_type >= 0 && p->x.total[0] > 0) {
		perftools__profiles__value_type__init(&period_vt);
		period_vt = vt[m->period_type];
		prof.period_type = &period_vt;
		prof.period = p->x.total[m->period_type] / p->x.total[0];
	}
	prof.default_sample_type = vt[m->shown].type;
	/* the table last: every string is in it by now */
	strings = calloc(p->strs.n + 1, sizeof(*strings));
	if (!strings)
		goto cleanup;
	strings[0] = "";
	for (size_t i = 0; i < p->strs.n; i++)
		strings[i + 1] = p->strs.strs[i];
	prof.n_sample_type = (size_t)m->nvalues;
	prof.sample_type = vtp;
	prof.n_sample = nrows;
	prof.sample = sp;
	prof.n_mapping = p->maps.n;
	prof.mapping = mp;
	prof.n_location = p->locs.n;
	prof.location = locp;
	prof.n_function = p->funcs.n;
	prof.function = fp;
	prof.n_string_table = p->strs.n + 1;
	prof.string_table = strings;
	prof.time_nanos = wall_start(p->rep);
	{
		/* times are u64 in int64: subtract as unsigned (summary.c) */
		uint64_t start = (uint64_t)nsk_report__info(p->rep, "time_start_ns");
		uint64_t end = (uint64_t)nsk_report__info(p->rep, "time_end_ns");

		prof.duration_nanos = end <= start ? 0 : end - start > INT64_MAX ?
				      INT64_MAX : (int64_t)(end - start);
	}
	prof.n_comment = (size_t)ncomments;
	prof.comment = comments;
	err = write_gz(p->rep, &prof, f);
cleanup:
	if (err == -ENOMEM)
		snprintf(p->rep->err, sizeof(p->rep->err), "out of memory");
	sqlite3_finalize(comm);
	free(samples);
	free(sp);
	free(labels);
	free(lp);
	free(values);
	free(locs);
	free(locp);
	free(linep);
	free(fp);
	free(mp);
	free(strings);
	return err;
}

int nsk_export__pprof(struct nsk_report *rep, const struct nsk_measure *m,
		      FILE *f)
{
	struct pp p = { .rep = rep };
	int err;

	err = nsk_xdata__load(&p.x, rep, m);
	if (err)
		goto cleanup;
	p.frame_st = nsk_report__prepare(rep, "SELECT mapping_id, addr, file, "
					 "line FROM frame WHERE id = ?");
	p.map_st = p.frame_st ? nsk_report__prepare(rep, "SELECT start, end, "
		"pgoff, path, build_id FROM mapping WHERE id = ?") : NULL;
	if (!p.map_st) {
		err = -EIO;
		goto cleanup;
	}
	err = build_stacks(&p);
	if (err) {
		snprintf(rep->err, sizeof(rep->err), "out of memory");
		goto cleanup;
	}
	err = assemble(&p, f);
cleanup:
	sqlite3_finalize(p.frame_st);
	sqlite3_finalize(p.map_st);
	nsk_xdata__release(&p.x);
	nsk_strtab__release(&p.strs);
	nsk_strtab__release(&p.pseudo);
	nsk_idmap__release(&p.func_of);
	nsk_idmap__release(&p.pseudo_loc);
	nsk_idmap__release(&p.loc_of);
	nsk_idmap__release(&p.map_of);
	free(p.funcs.v);
	free(p.locs.v);
	free(p.lines.v);
	free(p.maps.v);
	free(p.stack_locs);
	free(p.stack_first);
	free(p.stack_n);
	return err;
}
