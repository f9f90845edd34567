// SPDX-License-Identifier: GPL-2.0
/* pprof export: samples merged by stack, encoded as profile.proto by hand, then gzipped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export_common.h"
#include "export_pprof.h"
#include "logsrc.h"
#include "pb.h"
#include "util.h"

/* Profile's fields (tests/views/profile.proto) */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRING_TABLE,
	P_DROP_FRAMES, P_KEEP_FRAMES, P_TIME_NANOS, P_DURATION_NANOS, P_PERIOD_TYPE, P_PERIOD,
	P_COMMENT, P_DEFAULT_SAMPLE_TYPE,
};

/* The key samples are merged by: who, then the locations leaf first. */
struct skey {
	uint32_t pid, tid;
	uint32_t comm;		/* string index */
	uint32_t nr;
	uint64_t locs[];	/* location ids */
};

struct pprof {
	struct jt_logsrc src;
	struct jt_xintern strings;	/* string_table */
	struct jt_xintern functions;	/* name '\0' file (a JIT frame's: its source file) */
	struct jt_xintern locations;	/* struct jt_frame, then 'c' for a caller with lines */
	struct jt_xintern samples;	/* struct skey */
	uint64_t *loc_addr;		/* by location index */
	uint32_t *loc_func;		/* function index by location index */
	uint32_t *loc_line;		/* source line by location index, 0 if none */
	uint32_t *func_start;		/* start_line by function index, 0 if not known */
	uint64_t *counts;		/* by sample index */
	size_t cap_locs, cap_lines, cap_funcs, cap_samples;
	struct skey *key;		/* scratch for one sample's key */
	uint64_t nr_samples;
	long s[8];			/* string indexes of fixed_strings() */
};

static long str_idx(struct pprof *p, const char *s)
{
	return jt_xintern__get(&p->strings, s, strlen(s), NULL);
}

/*
 * The location of a frame, with its function, created at first sight. Returns its index.
 * A JIT frame whose method has source lines gets its line (a caller's: that of its call,
 * so the same address as a leaf is another location) and a function named by its source
 * file, starting at the lowest line of the method there.
 */
static long location(struct pprof *p, const struct jt_frame *f, bool caller)
{
	char buf[JT_LOGSRC_NAME_CAP], *fkey;
	unsigned char lkey[sizeof(*f) + 1];
	uint64_t id = JT_FRAME_ID(f->ref);
	bool method = JT_FRAME_KIND(f->ref) == JT_FRAME_METHOD, added, has_line;
	const struct jt_lv_method *m;
	size_t nlen, flen, cap_func, klen = sizeof(*f);
	const char *name, *file;
	uint32_t src_file = 0, line = 0;
	enum jt_lv_kind kind;
	long loc, fn;

	memcpy(lkey, f, sizeof(*f));
	if (caller && method && jt_lv__method_has_lines(p->src.lv, id))
		lkey[klen++] = 'c';
	loc = jt_xintern__get(&p->locations, lkey, klen, &added);
	if (loc < 0 || !added)
		return loc;
	name = jt_logsrc__frame(&p->src, f, buf, &file, &kind);
	has_line = jt_lv__frame_line(p->src.lv, f, caller, &src_file, &line);
	if (has_line)
		file = jt_lv__file(p->src.lv, src_file);
	nlen = strlen(name);
	flen = strlen(file);
	fkey = malloc(nlen + 1 + flen);
	if (!fkey)
		return -ENOMEM;
	memcpy(fkey, name, nlen + 1);
	memcpy(fkey + nlen + 1, file, flen);
	fn = jt_xintern__get(&p->functions, fkey, nlen + 1 + flen, &added);
	free(fkey);
	if (fn < 0 || (added && (str_idx(p, name) < 0 || str_idx(p, file) < 0)))
		return -ENOMEM;
	if (added) {
		if (jt_array_grow(&p->func_start, &p->cap_funcs, fn + 1, sizeof(*p->func_start)))
			return -ENOMEM;
		p->func_start[fn] = has_line ? jt_lv__first_line(p->src.lv, id, src_file) : 0;
	}

	cap_func = p->cap_locs;
	if (jt_array_grow(&p->loc_addr, &p->cap_locs, loc + 1, sizeof(*p->loc_addr)) ||
	    jt_array_grow(&p->loc_func, &cap_func, loc + 1, sizeof(*p->loc_func)) ||
	    jt_array_grow(&p->loc_line, &p->cap_lines, loc + 1, sizeof(*p->loc_line)))
		return -ENOMEM;
	/* a JIT frame's address is where it ran; others keep the offset the log has */
	m = method ? jt_lv__method(p->src.lv, id) : NULL;
	p->loc_addr[loc] = m ? m->start + f->off : f->off;
	p->loc_func[loc] = fn;
	p->loc_line[loc] = has_line ? line : 0;
	return loc;
}

static int add_sample(struct pprof *p, const struct jt_rec_sample *s)
{
	const struct jt_lv_proc *proc = jt_lv__proc(p->src.lv, s->pid);
	size_t klen = sizeof(*p->key) + s->nr_frames * sizeof(p->key->locs[0]);
	unsigned i, user = jt_lv__has_lines(p->src.lv) ? jt_lv__user_leaf(p->src.lv, s) : 0;
	long idx, comm;
	bool added;

	comm = str_idx(p, proc ? proc->comm : "");
	if (comm < 0)
		return -ENOMEM;
	p->key->pid = s->pid;
	p->key->tid = s->tid;
	p->key->comm = comm;
	p->key->nr = s->nr_frames;
	for (i = 0; i < s->nr_frames; i++) {
		/* frames past the first user frame are callers (without lines: no matter) */
		long loc = location(p, &s->frames[i], user < i);

		if (loc < 0)
			return -ENOMEM;
		p->key->locs[i] = loc + 1;
	}
	idx = jt_xintern__get(&p->samples, p->key, klen, &added);
	if (idx < 0 || jt_array_grow(&p->counts, &p->cap_samples, idx + 1, sizeof(*p->counts)))
		return -ENOMEM;
	if (added)
		p->counts[idx] = 0;
	p->counts[idx]++;
	p->nr_samples++;
	return 0;
}

static void value_type(struct jt_pb *b, unsigned field, long type, long unit)
{
	size_t m = jt_pb__begin(b, field);

	jt_pb__uint(b, 1, type);
	jt_pb__uint(b, 2, unit);
	jt_pb__end(b, m);
}

static void label(struct jt_pb *b, long key, long str, uint64_t num)
{
	size_t m = jt_pb__begin(b, 3);

	jt_pb__uint(b, 1, key);
	if (str)
		jt_pb__uint(b, 2, str);
	else
		jt_pb__uint(b, 3, num);
	jt_pb__end(b, m);
}

/* The strings the encoding itself names, interned first so they lead the table. */
enum { S_SAMPLES, S_COUNT, S_CPU, S_NS, S_PID, S_TID, S_COMM, S_HOST, NR_S };

static int fixed_strings(struct pprof *p)
{
	const struct jt_log_header *h = p->src.hdr;
	static const char *const fixed[] = {
		[S_SAMPLES] = "samples", [S_COUNT] = "count", [S_CPU] = "cpu",
		[S_NS] = "nanoseconds", [S_PID] = "pid", [S_TID] = "tid", [S_COMM] = "comm",
	};
	char host[sizeof(h->hostname) + 8];
	int i;

	/* index 0 of the string table is "" */
	if (jt_xintern__get(&p->strings, "", 0, NULL) < 0)
		return -ENOMEM;
	for (i = 0; i < S_HOST; i++)
		if ((p->s[i] = str_idx(p, fixed[i])) < 0)
			return -ENOMEM;
	snprintf(host, sizeof(host), "host=%.*s", (int)sizeof(h->hostname), h->hostname);
	p->s[S_HOST] = str_idx(p, host);
	return p->s[S_HOST] < 0 ? -ENOMEM : 0;
}

static int encode(struct pprof *p, struct jt_pb *b)
{
	const struct jt_log_header *h = p->src.hdr;
	uint64_t period = h->sample_hz ? 1000000000ULL / h->sample_hz : 0;
	long s_samples = p->s[S_SAMPLES], s_count = p->s[S_COUNT], s_cpu = p->s[S_CPU];
	long s_ns = p->s[S_NS], s_pid = p->s[S_PID], s_tid = p->s[S_TID];
	long s_comm = p->s[S_COMM], s_host = p->s[S_HOST];
	size_t i, j, m, mm, len;

	value_type(b, P_SAMPLE_TYPE, s_samples, s_count);
	value_type(b, P_SAMPLE_TYPE, s_cpu, s_ns);
	for (i = 0; i < p->samples.n; i++) {
		const struct skey *k = jt_xintern__key(&p->samples, i, &len);

		m = jt_pb__begin(b, P_SAMPLE);
		mm = jt_pb__begin(b, 1);		/* location_id, packed */
		for (j = 0; j < k->nr; j++)
			jt_pb__varint(b, k->locs[j]);
		jt_pb__end(b, mm);
		mm = jt_pb__begin(b, 2);		/* value, packed */
		jt_pb__varint(b, p->counts[i]);
		jt_pb__varint(b, p->counts[i] * period);
		jt_pb__end(b, mm);
		label(b, s_pid, 0, k->pid);
		label(b, s_tid, 0, k->tid);
		if (k->comm)
			label(b, s_comm, k->comm, 0);
		jt_pb__end(b, m);
	}
	for (i = 0; i < p->locations.n; i++) {
		m = jt_pb__begin(b, P_LOCATION);
		jt_pb__uint(b, 1, i + 1);
		if (p->loc_addr[i])
			jt_pb__uint(b, 3, p->loc_addr[i]);
		mm = jt_pb__begin(b, 4);		/* line */
		jt_pb__uint(b, 1, p->loc_func[i] + 1);
		if (p->loc_line[i])
			jt_pb__uint(b, 2, p->loc_line[i]);
		jt_pb__end(b, mm);
		jt_pb__end(b, m);
	}
	for (i = 0; i < p->functions.n; i++) {
		const char *key = jt_xintern__key(&p->functions, i, &len);
		size_t nlen = strlen(key);
		long name = jt_xintern__get(&p->strings, key, nlen, NULL);
		long file = jt_xintern__get(&p->strings, key + nlen + 1, len - nlen - 1, NULL);

		m = jt_pb__begin(b, P_FUNCTION);
		jt_pb__uint(b, 1, i + 1);
		jt_pb__uint(b, 2, name);
		jt_pb__uint(b, 3, name);
		jt_pb__uint(b, 4, file);
		if (p->func_start[i])
			jt_pb__uint(b, 5, p->func_start[i]);
		jt_pb__end(b, m);
	}
	for (i = 0; i < p->strings.n; i++) {
		const char *s = jt_xintern__key(&p->strings, i, &len);

		jt_pb__bytes(b, P_STRING_TABLE, s, len);
	}
	jt_pb__uint(b, P_TIME_NANOS, h->start_ns + h->realtime_offset_ns);
	jt_pb__uint(b, P_DURATION_NANOS, jt_logsrc__rel(&p->src, p->src.last_ts));
	value_type(b, P_PERIOD_TYPE, s_cpu, s_ns);
	jt_pb__uint(b, P_PERIOD, period);
	m = jt_pb__begin(b, P_COMMENT);
	jt_pb__varint(b, s_host);
	jt_pb__end(b, m);
	jt_pb__uint(b, P_DEFAULT_SAMPLE_TYPE, s_cpu);
	return b->err;
}

/* gzip (windowBits 31: a gzip header and trailer) straight into out. */
static int gzip_to(FILE *out, const struct jt_pb *b, const char *what)
{
	unsigned char chunk[64 * 1024];
	z_stream zs = { 0 };
	int zerr, ret = 0;
	size_t n;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY)) {
		jt_err("%s: zlib: cannot start compressing", what);
		return -1;
	}
	zs.next_in = b->buf;
	zs.avail_in = b->len;	/* a profile is far below 4 GiB */
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zerr = deflate(&zs, Z_FINISH);
		n = sizeof(chunk) - zs.avail_out;
		if (n && fwrite(chunk, 1, n, out) != n) {
			jt_err("%s: writing the profile: %s", what, strerror(errno ? errno : EIO));
			ret = -1;
			break;
		}
	} while (zerr == Z_OK);
	if (!ret && zerr != Z_STREAM_END) {
		jt_err("%s: zlib: %s", what, zs.msg ? zs.msg : "compression failed");
		ret = -1;
	}
	deflateEnd(&zs);
	if (!ret && fflush(out)) {
		jt_err("%s: writing the profile: %s", what, strerror(errno));
		ret = -1;
	}
	return ret;
}

int jt_export_pprof(FILE *out, const char *path, const struct jt_filter *filter)
{
	struct pprof p = { 0 };
	const struct jt_rec_hdr *rec;
	struct jt_pb b = { 0 };
	int ret = 1;
	bool kept;

	if (jt_logsrc__open(&p.src, path, filter))
		return 1;
	p.key = malloc(sizeof(*p.key) + UINT16_MAX * sizeof(p.key->locs[0]));
	if (!p.key || fixed_strings(&p))
		goto nomem;
	while ((rec = jt_logsrc__next(&p.src, &kept))) {
		if (kept && rec->type == JT_REC_SAMPLE && add_sample(&p, (const void *)rec))
			goto nomem;
	}
	if (jt_logsrc__finish(&p.src, "exported"))
		goto cleanup;
	if (encode(&p, &b))
		goto nomem;
	if (!p.nr_samples)
		jt_err("%s: no samples to export%s", path,
		       p.src.filtered ? " (the filter left none)" : "");
	ret = gzip_to(out, &b, path) ? 1 : 0;
	goto cleanup;
nomem:
	jt_err("%s: out of memory", path);
cleanup:
	jt_pb__fini(&b);
	free(p.key);
	free(p.loc_addr);
	free(p.loc_func);
	free(p.loc_line);
	free(p.func_start);
	free(p.counts);
	jt_xintern__fini(&p.strings);
	jt_xintern__fini(&p.functions);
	jt_xintern__fini(&p.locations);
	jt_xintern__fini(&p.samples);
	jt_logsrc__close(&p.src);
	return ret;
}
