// SPDX-License-Identifier: GPL-2.0
/*
 * `jitrace export`: pprof (decoded here), speedscope and Chrome JSON against golden files,
 * from a log with every frame kind, two processes, nested calls and unbalanced ones; the
 * filters; call balancing; JSON escaping; UTF-8 names kept; samples without frames;
 * protobuf varints; source lines as pprof functions' files and locations' lines.
 * JT_UPDATE_GOLDEN=1 rewrites the golden files (then read the diff before committing).
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "scratch.h"

#include "cmd/cmds.h"
#include "export/chrome.h"
#include "export/common.h"
#include "export/pprof.h"
#include "export/speedscope.h"
#include "jt_events.h"
#include "log/log.h"
#include "export/pb.h"
#include "base/util.h"

#define FIXTURES "tests/fixtures/export/"
#define T0 5000000000ULL	/* the header's start_ns */
#define HZ 100			/* period 10 ms */

struct tmp {
	char dir[256];
	char log[512];
	char out[512];
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t || scratch_make(t->dir, sizeof(t->dir), "export")) {
		free(t);
		return -1;
	}
	snprintf(t->log, sizeof(t->log), "%s/t.jtl", t->dir);
	snprintf(t->out, sizeof(t->out), "%s/out", t->dir);
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	scratch_remove(t->dir);
	free(t);
	return 0;
}

/* Compare text with a golden file, or rewrite it under JT_UPDATE_GOLDEN. */
static void golden(const char *name, const char *text, size_t len)
{
	char path[256], *want;
	size_t wlen, i, line = 1;
	FILE *f;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	if (getenv("JT_UPDATE_GOLDEN")) {
		f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(text, 1, len, f), len);
		assert_int_equal(fclose(f), 0);
		return;
	}
	want = slurp(path, &wlen);
	for (i = 0; i < len && i < wlen && text[i] == want[i]; i++)
		line += text[i] == '\n';
	if (i != len || len != wlen)
		fail_msg("%s differs from the output at line %zu", path, line);
	free(want);
}

/* ---- the log ---- */

union recbuf {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[1024];
};

static void *rec(union recbuf *rb, unsigned type, size_t fixed, size_t var, uint64_t ts)
{
	size_t size = jt_round8(fixed + var);

	memset(rb->b, 0, size);
	rb->h.type = type;
	rb->h.size = size;
	rb->h.ts = T0 + ts;
	return rb;
}

static void add(struct jt_log_writer *w, const union recbuf *rb)
{
	assert_int_equal(jt_logw__append(w, &rb->h), 0);
}

static void add_proc(struct jt_log_writer *w, uint64_t ts, uint32_t pid, const char *comm)
{
	union recbuf rb;
	struct jt_rec_proc *p = rec(&rb, JT_REC_PROC, sizeof(*p), 0, ts);

	p->pid = pid;
	strncpy(p->comm, comm, sizeof(p->comm) - 1);
	add(w, &rb);
}

static void add_method(struct jt_log_writer *w, uint64_t ts, uint32_t pid, uint64_t id,
		       uint64_t start, const char *name, size_t name_len)
{
	union recbuf rb;
	struct jt_rec_method *m = rec(&rb, JT_REC_METHOD, sizeof(*m), name_len, ts);

	m->id = id;
	m->pid = pid;
	m->start = start;
	m->size = 0x100;
	m->load_ts = T0 + ts;
	m->src = JT_SRC_AGENT;
	m->name_len = name_len;
	memcpy(m->name, name, name_len);
	add(w, &rb);
}

static void add_module(struct jt_log_writer *w, uint64_t ts, uint32_t pid, uint64_t id,
		       const char *path)
{
	union recbuf rb;
	struct jt_rec_module *m = rec(&rb, JT_REC_MODULE, sizeof(*m), strlen(path), ts);

	m->id = id;
	m->pid = pid;
	m->start = 0x7f0000000000ULL;
	m->end = 0x7f0000100000ULL;
	m->path_len = strlen(path);
	memcpy(m->path, path, m->path_len);
	add(w, &rb);
}

static void add_symbol(struct jt_log_writer *w, uint64_t ts, uint32_t pid, uint64_t id,
		       uint64_t module, const char *name)
{
	union recbuf rb;
	struct jt_rec_symbol *s = rec(&rb, JT_REC_SYMBOL, sizeof(*s), strlen(name), ts);

	s->id = id;
	s->pid = pid;
	s->module = module;
	s->start = module ? 0x1000 : 0xffffffff81000000ULL;
	s->size = 0x80;
	s->name_len = strlen(name);
	memcpy(s->name, name, s->name_len);
	add(w, &rb);
}

static void add_call(struct jt_log_writer *w, unsigned type, uint64_t ts, uint32_t pid,
		     uint32_t tid, uint64_t id)
{
	union recbuf rb;
	struct jt_rec_call *c = rec(&rb, type, sizeof(*c), 0, ts);

	c->pid = pid;
	c->tid = tid;
	c->id = id;
	add(w, &rb);
}

static void add_sample(struct jt_log_writer *w, uint64_t ts, uint32_t pid, uint32_t tid,
		       const struct jt_frame *frames, unsigned nr)
{
	union recbuf rb;
	struct jt_rec_sample *s = rec(&rb, JT_REC_SAMPLE, sizeof(*s), nr * sizeof(*frames), ts);

	s->pid = pid;
	s->tid = tid;
	s->nr_frames = nr;
	if (nr)
		memcpy(s->frames, frames, nr * sizeof(*frames));
	add(w, &rb);
}

#define F(kind, id, off) { JT_FRAME_REF(JT_FRAME_##kind, id), off }

/*
 * Process 100 "alpha" (threads 100, 101) and 200 "beta" (thread 201). Every frame kind:
 * JIT methods, ELF and kernel symbols, file+offset, bare user and kernel addresses, and a
 * method name that is not clean text. Calls: nested, a leave whose enter came before
 * recording, a leave that skips an inner call's leave, a call open at the end.
 */
static void write_log(const char *path)
{
	static const char odd[] = "odd \"q\" \\ \x01\t<\xff\xc3\xa9";	/* é after a bad byte */
	const struct jt_frame deep[] = {	/* leaf first, as samples are */
		F(KERNEL, 0, 0xffffffff81a00b2cULL),
		F(SYMBOL, 2, 0x1c),
		F(METHOD, 2, 0x10),
		F(METHOD, 1, 0x20),
		F(SYMBOL, 1, 0x5),
		F(MODULE, 1, 0x1234),
		F(USER, 0, 0x401000),
	};
	const struct jt_frame shallow[] = { F(METHOD, 1, 0x30), F(MODULE, 1, 0x1234) };
	const struct jt_frame hot[] = { F(METHOD, 3, 0x8) };
	const struct jt_frame odd_stack[] = { F(METHOD, 4, 0x4), F(METHOD, 3, 0x8) };
	struct jt_log_header h = {
		.start_ns = T0, .realtime_offset_ns = 1700000000000000000LL, .ncpus = 2,
		.sample_hz = HZ, .flags = JT_LOG_F_CALLS | JT_LOG_F_KSTACK,
	};
	struct jt_log_writer *w;

	strcpy(h.hostname, "testhost");
	w = jt_logw__create(path, &h, false);
	assert_non_null(w);
	add_proc(w, 0, 100, "alpha");
	add_proc(w, 0, 200, "beta");
	add_module(w, 10, 100, 1, "/usr/lib/libfoo.so");
	add_symbol(w, 20, 100, 1, 1, "foo_native");
	add_symbol(w, 20, 0, 2, 0, "do_syscall_64");
	add_method(w, 30, 100, 1, 0x7f1000000000ULL, "outer", 5);
	add_method(w, 30, 100, 2, 0x7f1000001000ULL, "inner", 5);
	add_method(w, 40, 200, 3, 0x7f2000000000ULL, "Hot.spin(int)", 13);
	add_method(w, 40, 200, 4, 0x7f2000001000ULL, odd, sizeof(odd) - 1);

	add_call(w, JT_REC_LEAVE, 1000, 100, 100, 2);	/* entered before recording */
	add_call(w, JT_REC_ENTER, 2000, 100, 100, 1);
	add_call(w, JT_REC_ENTER, 3000, 100, 100, 2);
	add_sample(w, 3500, 100, 100, deep, JT_ARRAY_SIZE(deep));
	add_sample(w, 3600, 100, 100, deep, JT_ARRAY_SIZE(deep));
	add_call(w, JT_REC_LEAVE, 4000, 100, 100, 2);
	add_call(w, JT_REC_ENTER, 5000, 100, 100, 2);
	add_call(w, JT_REC_ENTER, 5500, 200, 201, 3);
	add_sample(w, 5600, 200, 201, hot, 1);
	add_sample(w, 5700, 100, 101, shallow, JT_ARRAY_SIZE(shallow));
	add_sample(w, 5800, 200, 201, hot, 1);
	add_call(w, JT_REC_ENTER, 5900, 200, 201, 4);
	add_sample(w, 5950, 200, 201, odd_stack, JT_ARRAY_SIZE(odd_stack));
	add_call(w, JT_REC_LEAVE, 6000, 200, 201, 4);
	add_sample(w, 6100, 200, 201, hot, 1);
	add_call(w, JT_REC_LEAVE, 6500, 200, 201, 3);
	add_call(w, JT_REC_LEAVE, 7000, 100, 100, 1);	/* inner (2) never left */
	add_call(w, JT_REC_ENTER, 8000, 100, 100, 1);	/* still open at the end */
	add_sample(w, 8500, 100, 100, deep, JT_ARRAY_SIZE(deep));
	assert_int_equal(jt_logw__close(w), 0);	/* the end record comes at the last time */
}

/* stderr into t->dir/stderr.txt until stderr_end, which returns what was said there */
static int stderr_begin(struct tmp *t)
{
	char path[600];
	int saved, fd;

	snprintf(path, sizeof(path), "%s/stderr.txt", t->dir);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	return saved;
}

static char *stderr_end(struct tmp *t, int saved)
{
	char path[600];
	size_t len;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	snprintf(path, sizeof(path), "%s/stderr.txt", t->dir);
	return slurp(path, &len);
}

typedef int (*export_fn)(FILE *out, const char *path, const struct jt_filter *filter);

/* Run an export into t->out; returns the export's result and the file's bytes. */
static char *run_export(struct tmp *t, export_fn fn, const struct jt_filter *opts,
			int *ret, size_t *len)
{
	FILE *f = fopen(t->out, "w");

	assert_non_null(f);
	*ret = fn(f, t->log, opts);
	assert_int_equal(fclose(f), 0);
	return slurp(t->out, len);
}

/* ---- a small protobuf decoder that prints the way protoc --decode does ---- */

struct pfield {
	unsigned num;
	const char *name;
	const struct pmsg *msg;		/* embedded message, or NULL for a scalar */
	bool packed;
	bool string;
};

struct pmsg {
	const struct pfield *fields;
	size_t n;
};

#define S(n, nm) { .num = n, .name = nm }
#define M(n, nm, m) { .num = n, .name = nm, .msg = m }
#define P(n, nm) { .num = n, .name = nm, .packed = true }
#define STR(n, nm) { .num = n, .name = nm, .string = true }

static const struct pfield vt_f[] = { S(1, "type"), S(2, "unit") };
static const struct pmsg vt_m = { vt_f, 2 };
static const struct pfield label_f[] = { S(1, "key"), S(2, "str"), S(3, "num"),
					 S(4, "num_unit") };
static const struct pmsg label_m = { label_f, 4 };
static const struct pfield sample_f[] = { P(1, "location_id"), P(2, "value"),
					  M(3, "label", &label_m) };
static const struct pmsg sample_m = { sample_f, 3 };
static const struct pfield line_f[] = { S(1, "function_id"), S(2, "line") };
static const struct pmsg line_m = { line_f, 2 };
static const struct pfield loc_f[] = { S(1, "id"), S(2, "mapping_id"), S(3, "address"),
				       M(4, "line", &line_m), S(5, "is_folded") };
static const struct pmsg loc_m = { loc_f, 5 };
static const struct pfield fn_f[] = { S(1, "id"), S(2, "name"), S(3, "system_name"),
				      S(4, "filename"), S(5, "start_line") };
static const struct pmsg fn_m = { fn_f, 5 };
static const struct pfield map_f[] = { S(1, "id"), S(2, "memory_start"),
				       S(3, "memory_limit"), S(4, "file_offset"),
				       S(5, "filename"), S(6, "build_id"), S(7, "has_functions"),
				       S(8, "has_filenames"), S(9, "has_line_numbers"),
				       S(10, "has_inline_frames") };
static const struct pmsg map_m = { map_f, JT_ARRAY_SIZE(map_f) };
static const struct pfield profile_f[] = {
	M(1, "sample_type", &vt_m), M(2, "sample", &sample_m), M(3, "mapping", &map_m),
	M(4, "location", &loc_m), M(5, "function", &fn_m), STR(6, "string_table"),
	S(9, "time_nanos"), S(10, "duration_nanos"), M(11, "period_type", &vt_m),
	S(12, "period"), P(13, "comment"), S(14, "default_sample_type"),
};
static const struct pmsg profile_m = { profile_f, JT_ARRAY_SIZE(profile_f) };

static uint64_t varint(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;
	int shift = 0;

	for (;;) {
		assert_true(*p < end && shift < 64);
		v |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
		if (!(*(*p)++ & 0x80))
			return v;
	}
}

static void decode(FILE *out, const struct pmsg *m, const unsigned char *p,
		   const unsigned char *end, int depth)
{
	while (p < end) {
		uint64_t key = varint(&p, end), len;
		const struct pfield *f = NULL;
		const unsigned char *sub;
		size_t i;

		for (i = 0; i < m->n; i++)
			if (m->fields[i].num == key >> 3)
				f = &m->fields[i];
		if (!f)
			fail_msg("unknown field %llu", (unsigned long long)(key >> 3));
		if ((key & 7) == 0) {
			fprintf(out, "%*s%s: %llu\n", 2 * depth, "", f->name,
				(unsigned long long)varint(&p, end));
			continue;
		}
		assert_int_equal(key & 7, 2);
		len = varint(&p, end);
		assert_true(len <= (uint64_t)(end - p));
		sub = p;
		p += len;
		if (f->msg) {
			fprintf(out, "%*s%s {\n", 2 * depth, "", f->name);
			decode(out, f->msg, sub, p, depth + 1);
			fprintf(out, "%*s}\n", 2 * depth, "");
		} else if (f->packed) {
			while (sub < p)
				fprintf(out, "%*s%s: %llu\n", 2 * depth, "", f->name,
					(unsigned long long)varint(&sub, p));
		} else {
			assert_true(f->string);
			fprintf(out, "%*s%s: \"", 2 * depth, "", f->name);
			for (; sub < p; sub++)
				fprintf(out, *sub >= 0x20 && *sub < 0x7f && *sub != '"' &&
					*sub != '\\' ? "%c" : "\\%03o", *sub);
			fprintf(out, "\"\n");
		}
	}
}

/* gunzip a whole buffer (checks the gzip header and trailer). */
static unsigned char *gunzip(const char *gz, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20;
	unsigned char *raw = malloc(cap);
	z_stream zs = { 0 };

	assert_non_null(raw);
	assert_true(len > 18 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
	assert_int_equal(inflateInit2(&zs, 31), Z_OK);
	zs.next_in = (unsigned char *)gz;
	zs.avail_in = len;
	zs.next_out = raw;
	zs.avail_out = cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return raw;
}

static char *pprof_text(struct tmp *t, const struct jt_filter *opts, size_t *len)
{
	size_t gzlen, rawlen;
	char *gz, *text;
	unsigned char *raw;
	int ret;
	FILE *f;

	gz = run_export(t, jt_export_pprof, opts, &ret, &gzlen);
	assert_int_equal(ret, 0);
	raw = gunzip(gz, gzlen, &rawlen);
	f = open_memstream(&text, len);
	assert_non_null(f);
	decode(f, &profile_m, raw, raw + rawlen, 0);
	assert_int_equal(fclose(f), 0);
	free(raw);
	free(gz);
	return text;
}

/* ---- tests ---- */

static void test_pprof_golden(void **state)
{
	struct tmp *t = *state;
	size_t len;
	char *text;

	write_log(t->log);
	text = pprof_text(t, NULL, &len);
	golden("pprof.txt", text, len);
	/* what the golden file shows, said plainly: deep merged (3 samples) on thread 100, */
	assert_non_null(strstr(text, "  value: 3\n  value: 30000000\n"));
	/* the period in ns at 100 Hz, and the leaf of the deep stack is the kernel address */
	assert_non_null(strstr(text, "period: 10000000\n"));
	assert_non_null(strstr(text, "string_table: \"[k] 0xffffffff81a00b2c\"\n"));
	free(text);
}

static void test_pprof_filter_by_pid(void **state)
{
	struct jt_filter o;
	struct tmp *t = *state;
	size_t len;
	char *text;

	jt_filter__init(&o);
	assert_int_equal(jt_filter__parse(&o, "--pid", "200"), 0);
	write_log(t->log);
	text = pprof_text(t, &o, &len);
	assert_non_null(strstr(text, "\"Hot.spin(int)\""));
	assert_null(strstr(text, "\"outer\""));
	assert_null(strstr(text, "num: 100\n"));
	free(text);
}

static void test_speedscope_golden(void **state)
{
	struct tmp *t = *state;
	size_t len;
	char *json;
	int ret;

	write_log(t->log);
	json = run_export(t, jt_export_speedscope, NULL, &ret, &len);
	assert_int_equal(ret, 0);
	golden("speedscope.json", json, len);
	/* the odd name: quote, backslash, control bytes and '<' escaped, a bad byte as U+FFFD */
	assert_non_null(strstr(json, "\"odd \\\"q\\\" \\\\ \\u0001\\t\\u003c\\ufffd\xc3\xa9\""));
	free(json);
}

static void test_speedscope_filter_by_comm(void **state)
{
	struct jt_filter o;
	struct tmp *t = *state;
	size_t len;
	char *json;
	int ret;

	jt_filter__init(&o);
	assert_int_equal(jt_filter__parse(&o, "--comm", "alpha"), 0);
	write_log(t->log);
	json = run_export(t, jt_export_speedscope, &o, &ret, &len);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(json, "\"alpha 100/100\""));
	assert_non_null(strstr(json, "\"alpha 100/101\""));
	assert_null(strstr(json, "beta"));
	assert_null(strstr(json, "Hot.spin"));
	free(json);
}

static void test_chrome_golden(void **state)
{
	struct tmp *t = *state;
	size_t len;
	char *json;
	int ret;

	write_log(t->log);
	json = run_export(t, jt_export_chrome, NULL, &ret, &len);
	assert_int_equal(ret, 0);
	golden("chrome.json", json, len);
	free(json);
}

/* Every B has its E on the same thread, in order, and times never go back. */
static void test_chrome_balanced(void **state)
{
	struct tmp *t = *state;
	char *json, *line, *save = NULL, ph[2];
	char names[8][64];
	unsigned pid, tid, depth[2] = { 0 }, bs = 0;
	double ts, last[2] = { 0 };
	size_t len;
	int ret, n;

	write_log(t->log);
	json = run_export(t, jt_export_chrome, NULL, &ret, &len);
	assert_int_equal(ret, 0);
	for (line = strtok_r(json, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		int th;

		n = sscanf(line, "{\"ph\":\"%1[BE]\",\"pid\":%u,\"tid\":%u,\"ts\":%lf,"
			   "\"cat\":\"jit\",\"name\":\"%63[^\"]\"", ph, &pid, &tid, &ts, name);
		if (n != 5)
			continue;
		assert_true(tid == 100 || tid == 201);
		th = tid == 201;
		assert_true(ts >= last[th]);
		last[th] = ts;
		if (ph[0] == 'B') {
			assert_true(depth[th] < 4);
			strcpy(names[th * 4 + depth[th]++], name);
			bs++;
		} else {
			assert_true(depth[th] > 0);
			assert_string_equal(names[th * 4 + --depth[th]], name);
		}
	}
	assert_int_equal(depth[0], 0);
	assert_int_equal(depth[1], 0);
	assert_int_equal(bs, 6);	/* outer, inner, inner, outer; Hot.spin, odd */
	free(json);
}

static int count(void *ctx, bool open, uint32_t pid, uint32_t tid, uint64_t id, uint64_t ts)
{
	char *log = ctx;

	sprintf(log + strlen(log), "%c%u/%u:%llu@%llu ", open ? 'O' : 'C', pid, tid,
		(unsigned long long)id, (unsigned long long)ts);
	return 0;
}

static void call(struct jt_xcalls *c, unsigned type, uint32_t tid, uint64_t id, uint64_t ts,
		 char *log)
{
	struct jt_rec_call r = { .h = { .type = type, .size = sizeof(r), .ts = ts },
				 .id = id, .pid = 1, .tid = tid };

	assert_int_equal(jt_xcalls__feed(c, &r, count, log), 0);
}

static void test_calls_balanced(void **state)
{
	struct jt_xcalls c = { 0 };
	char log[1024] = "";

	(void)state;
	call(&c, JT_REC_LEAVE, 1, 9, 1, log);		/* orphan: dropped */
	call(&c, JT_REC_ENTER, 1, 1, 2, log);
	call(&c, JT_REC_ENTER, 1, 2, 3, log);
	call(&c, JT_REC_ENTER, 2, 1, 3, log);		/* another thread */
	call(&c, JT_REC_ENTER, 1, 1, 4, log);		/* recursion */
	call(&c, JT_REC_LEAVE, 1, 1, 5, log);		/* the inner 1 */
	call(&c, JT_REC_LEAVE, 1, 1, 6, log);		/* the outer 1: closes 2 first */
	call(&c, JT_REC_ENTER, 1, 3, 7, log);
	assert_int_equal(jt_xcalls__finish(&c, 8, count, log), 0);
	assert_string_equal(log, "O1/1:1@2 O1/1:2@3 O1/2:1@3 O1/1:1@4 C1/1:1@5 C1/1:2@6 "
				 "C1/1:1@6 O1/1:3@7 C1/1:3@8 C1/2:1@8 ");
	assert_int_equal(c.orphan_leaves, 1);
	assert_int_equal(c.implied_leaves, 1);
	assert_int_equal(c.open_at_end, 2);
	jt_xcalls__fini(&c);
}

/*
 * A callsum or span record has the call records' head but is neither an enter nor a leave:
 * read as a leave it would close the open call of its method (and those above it) early.
 * It is counted for the closing message and changes nothing else.
 */
static void test_calls_summed_and_spans_are_not_leaves(void **state)
{
	struct jt_xcalls c = { 0 };
	struct jt_rec_callsum sum = { .h = { .type = JT_REC_CALLSUM, .size = sizeof(sum),
					     .ts = 4 }, .id = 1, .pid = 1, .tid = 1,
				      .calls = 500 };
	struct jt_rec_span span = { .h = { .type = JT_REC_SPAN, .size = sizeof(span), .ts = 5 },
				    .id = 2, .pid = 1, .tid = 1, .enter_ts = 2 };
	char log[256] = "";

	(void)state;
	call(&c, JT_REC_ENTER, 1, 1, 1, log);
	call(&c, JT_REC_ENTER, 1, 2, 3, log);
	assert_int_equal(jt_xcalls__feed(&c, (const void *)&sum, count, log), 0);
	assert_int_equal(jt_xcalls__feed(&c, (const void *)&span, count, log), 0);
	call(&c, JT_REC_LEAVE, 1, 2, 6, log);
	call(&c, JT_REC_LEAVE, 1, 1, 7, log);
	assert_int_equal(jt_xcalls__finish(&c, 8, count, log), 0);
	assert_string_equal(log, "O1/1:1@1 O1/1:2@3 C1/1:2@6 C1/1:1@7 ");
	assert_int_equal(c.orphan_leaves + c.implied_leaves + c.open_at_end, 0);
	assert_int_equal(c.summed, 500);
	assert_int_equal(c.spans, 1);
	jt_xcalls__fini(&c);
}

static void test_json_escape(void **state)
{
	static const char in[] = "a\"b\\c\n\x1f<>\xe2\x82\xac\xed\xa0\x80\xc0\xaf\xf0\x9f\x98";
	struct jt_xout o;
	size_t len;
	char *buf;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_xout__init(&o, f), 0);
	jt_xout__json_str(&o, in, sizeof(in) - 1);
	assert_int_equal(jt_xout__fini(&o), 0);
	assert_int_equal(fclose(f), 0);
	/* euro sign kept; a surrogate, an overlong '/' and a cut 4-byte sequence: U+FFFD each */
	assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\u001f\\u003c>\xe2\x82\xac"
				 "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	free(buf);
}

/* DEL and C1 controls (U+0080..U+009F, e.g. CSI) escaped too: JSON may go to a terminal. */
static void test_json_escape_del_and_c1(void **state)
{
	static const char in[] = "a\x7f" "b\xc2\x9b" "2Jc\xc2\xa0\xc3\x9f";
	struct jt_xout o;
	size_t len;
	char *buf;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_xout__init(&o, f), 0);
	jt_xout__json_str(&o, in, sizeof(in) - 1);
	assert_int_equal(jt_xout__fini(&o), 0);
	assert_int_equal(fclose(f), 0);
	/* no-break space and sharp s are printable: kept */
	assert_string_equal(buf, "\"a\\u007fb\\u009b2Jc\xc2\xa0\xc3\x9f\"");
	free(buf);
}

static void test_pb_lengths(void **state)
{
	struct jt_pb b = { 0 };
	unsigned char big[300];
	size_t m;

	(void)state;
	memset(big, 'x', sizeof(big));
	jt_pb__uint(&b, 1, 300);			/* 08 ac 02 */
	m = jt_pb__begin(&b, 2);			/* a 300-byte message: 2-byte length */
	jt_pb__bytes(&b, 1, big, 297);			/* 0a a9 02 + 297 bytes = 300 */
	jt_pb__end(&b, m);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.len, 3 + 1 + 2 + 300);
	assert_memory_equal(b.buf, "\x08\xac\x02\x12\xac\x02\x0a\xa9\x02x", 10);
	jt_pb__fini(&b);
}

static void test_missing_log_is_an_error(void **state)
{
	struct tmp *t = *state;
	FILE *f = fopen(t->out, "w");

	assert_non_null(f);
	assert_int_equal(jt_export_chrome(f, "/nonexistent/x.jtl", NULL), 1);
	fclose(f);
}

/* ---- crafted logs ---- */

#define UTF8_NAME "Straße.größe(int)"

/* Process 300 "utf" calls and samples a method with a UTF-8 name; its thread 301's first
 * two samples have no frames at all. */
static void write_utf8_log(const char *path)
{
	const struct jt_frame f[] = { F(METHOD, 1, 0x4) };
	struct jt_log_header h = { .start_ns = T0, .sample_hz = HZ, .flags = JT_LOG_F_CALLS };
	struct jt_log_writer *w = jt_logw__create(path, &h, false);

	assert_non_null(w);
	add_proc(w, 0, 300, "utf");
	add_method(w, 10, 300, 1, 0x7f3000000000ULL, UTF8_NAME, strlen(UTF8_NAME));
	add_sample(w, 100, 300, 301, NULL, 0);
	add_sample(w, 200, 300, 301, NULL, 0);
	add_call(w, JT_REC_ENTER, 300, 300, 301, 1);
	add_sample(w, 400, 300, 301, f, 1);
	add_call(w, JT_REC_LEAVE, 500, 300, 301, 1);
	assert_int_equal(jt_logw__close(w), 0);
}

/* A UTF-8 method name comes out of both JSON exports as it went in. */
static void test_exports_keep_utf8_names(void **state)
{
	struct tmp *t = *state;
	size_t len;
	char *json;
	int ret;

	write_utf8_log(t->log);
	json = run_export(t, jt_export_speedscope, NULL, &ret, &len);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(json, "{\"name\":\"" UTF8_NAME "\",\"file\":\"[jit]\"}"));
	free(json);
	json = run_export(t, jt_export_chrome, NULL, &ret, &len);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(json, "\"name\":\"" UTF8_NAME "\"}"));
	free(json);
}

/* Samples with no frames (the thread's first, then the same again) are empty stacks. */
static void test_speedscope_sample_without_frames(void **state)
{
	struct tmp *t = *state;
	size_t len;
	char *json;
	int ret;

	write_utf8_log(t->log);
	json = run_export(t, jt_export_speedscope, NULL, &ret, &len);
	assert_int_equal(ret, 0);
	/* the two empty samples merged into one twice as long, then the method's */
	assert_non_null(strstr(json, "\"samples\":[[],[0]],\n\"weights\":[20000000,10000000]"));
	free(json);
}

/*
 * A log without samples or calls: speedscope opens the profile activeProfileIndex names, so
 * an empty list is refused, saying why, and nothing is written (the list was never sorted:
 * qsort of NULL was undefined).
 */
static void test_speedscope_refuses_a_log_with_nothing_to_show(void **state)
{
	struct jt_log_header h = { .start_ns = T0, .sample_hz = HZ };
	struct tmp *t = *state;
	struct jt_log_writer *w;
	char *json, *said;
	size_t len;
	int ret, saved;

	w = jt_logw__create(t->log, &h, false);
	assert_non_null(w);
	add_proc(w, 0, 300, "idle");
	add_method(w, 10, 300, 1, 0x7f3000000000ULL, "never.ran", 9);
	assert_int_equal(jt_logw__close(w), 0);

	saved = stderr_begin(t);
	json = run_export(t, jt_export_speedscope, NULL, &ret, &len);
	said = stderr_end(t, saved);
	assert_int_equal(ret, 1);
	assert_string_equal(json, "");
	assert_non_null(strstr(said, "t.jtl: no samples or calls to export"));
	free(said);
	free(json);
}

/* ---- `jitrace export` as run ---- */

/* A log like write_utf8_log()'s, samples only: recorded without --calls. */
static void write_samples_only_log(const char *path)
{
	const struct jt_frame f[] = { F(METHOD, 1, 0x4) };
	struct jt_log_header h = { .start_ns = T0, .sample_hz = HZ };
	struct jt_log_writer *w = jt_logw__create(path, &h, false);

	assert_non_null(w);
	add_proc(w, 0, 300, "utf");
	add_method(w, 10, 300, 1, 0x7f3000000000ULL, UTF8_NAME, strlen(UTF8_NAME));
	add_sample(w, 400, 300, 301, f, 1);
	assert_int_equal(jt_logw__close(w), 0);
}

/* jt_cmd_export() on args (NULL-terminated, "jitrace export" first); stderr in *err. */
static int cmd_export(struct tmp *t, char **err, ...)
{
	char *argv[16];
	int argc = 0, ret, saved;
	va_list ap;

	argv[argc++] = "jitrace export";
	va_start(ap, err);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	saved = stderr_begin(t);
	ret = jt_cmd_export(argc, argv);
	*err = stderr_end(t, saved);
	return ret;
}

/*
 * Chrome trace of a log with neither calls nor off-CPU waits: said why, no trace written,
 * not a success.
 */
static void test_chrome_without_calls_is_an_error(void **state)
{
	struct tmp *t = *state;
	char out[600], *err, *json;
	struct stat st;
	size_t len;
	int ret;

	write_samples_only_log(t->log);
	json = run_export(t, jt_export_chrome, NULL, &ret, &len);
	assert_int_equal(ret, 1);
	assert_int_equal(len, 0);		/* not even the start of a trace */
	free(json);

	snprintf(out, sizeof(out), "%s/calls.trace.json", t->dir);
	assert_int_equal(cmd_export(t, &err, "--format", "chrome", t->log, "-o", out, NULL), 1);
	assert_non_null(strstr(err, "t.jtl: no enter/leave or off-CPU records: record with "
				    "--calls or --off-cpu\n"));
	assert_int_equal(stat(out, &st), -1);	/* the file it started is gone */
	free(err);
}

/* -o over an existing file is refused without -f, like flamegraph's and record's. */
static void test_output_is_replaced_only_with_force(void **state)
{
	struct tmp *t = *state;
	char out[600], *err, *got;
	size_t len;
	FILE *f;

	write_utf8_log(t->log);
	snprintf(out, sizeof(out), "%s/old.trace.json", t->dir);
	f = fopen(out, "w");
	assert_non_null(f);
	assert_int_equal(fputs("keep me\n", f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(cmd_export(t, &err, t->log, "-o", out, NULL), 1);
	assert_non_null(strstr(err, "old.trace.json: already exists (-f, --force replaces it)"));
	free(err);
	got = slurp(out, &len);
	assert_string_equal(got, "keep me\n");
	free(got);

	assert_int_equal(cmd_export(t, &err, t->log, "-o", out, "-f", NULL), 0);
	free(err);
	got = slurp(out, &len);
	assert_non_null(strstr(got, "\"traceEvents\""));
	free(got);
}

/* An -o whose name tells no format says so. */
static void test_unknown_extension_is_explained(void **state)
{
	struct tmp *t = *state;
	char out[600], *err;

	write_utf8_log(t->log);
	snprintf(out, sizeof(out), "%s/z.bin", t->dir);
	assert_int_equal(cmd_export(t, &err, t->log, "-o", out, NULL), 2);
	assert_non_null(strstr(err, "cannot tell the format from "));
	assert_non_null(strstr(err, "z.bin's extension (.pb.gz, "));
	assert_non_null(strstr(err, "give --format"));
	free(err);
}

/* ---- source lines in pprof ---- */

/* What a decoded profile's locations and functions say, read back from pprof_text(). */
struct ploc {
	uint64_t addr, func, line;	/* its last line's: the location's own function */
	uint64_t lfunc[4], lline[4];	/* every line's, innermost (inlined) first */
	unsigned int nr_lines;
};

struct pfunc {
	uint64_t id, name, file, start;
};

struct pview {
	char *strings[64];
	struct ploc locs[64];
	struct pfunc funcs[64];
	size_t nr_strings, nr_locs, nr_funcs;
};

static void pview_parse(char *text, struct pview *v)
{
	char *line, *save = NULL;
	enum { NONE, LOC, FUNC } in = NONE;
	unsigned long long x;

	memset(v, 0, sizeof(*v));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct ploc *l = v->nr_locs ? &v->locs[v->nr_locs - 1] : NULL;
		struct pfunc *f = v->nr_funcs ? &v->funcs[v->nr_funcs - 1] : NULL;

		if (!strcmp(line, "location {")) {
			assert_true(v->nr_locs < 64);
			v->nr_locs++;
			in = LOC;
		} else if (!strcmp(line, "function {")) {
			assert_true(v->nr_funcs < 64);
			v->nr_funcs++;
			in = FUNC;
		} else if (!strncmp(line, "string_table: \"", 15)) {
			assert_true(v->nr_strings < 64);
			line[strlen(line) - 1] = '\0';	/* the closing quote */
			v->strings[v->nr_strings++] = line + 15;
		} else if (line[0] != ' ') {
			in = NONE;
		} else if (in == LOC && sscanf(line, "  address: %llu", &x) == 1) {
			l->addr = x;
		} else if (in == LOC && !strcmp(line, "  line {")) {
			assert_true(l->nr_lines < 4);
			l->nr_lines++;
		} else if (in == LOC && sscanf(line, "    function_id: %llu", &x) == 1) {
			l->func = l->lfunc[l->nr_lines - 1] = x;
		} else if (in == LOC && sscanf(line, "    line: %llu", &x) == 1) {
			l->line = l->lline[l->nr_lines - 1] = x;
		} else if (in == FUNC && sscanf(line, "  id: %llu", &x) == 1) {
			f->id = x;
		} else if (in == FUNC && sscanf(line, "  name: %llu", &x) == 1) {
			f->name = x;
		} else if (in == FUNC && sscanf(line, "  filename: %llu", &x) == 1) {
			f->file = x;
		} else if (in == FUNC && sscanf(line, "  start_line: %llu", &x) == 1) {
			f->start = x;
		}
	}
}

/*
 * The k-th location at addr as "name file start_line line" (0 for what it lacks), or NULL
 * if there are not that many.
 */
static const char *ploc_at(const struct pview *v, uint64_t addr, int k)
{
	static char buf[256];
	size_t i, j;

	for (i = 0; i < v->nr_locs; i++) {
		if (v->locs[i].addr != addr || k--)
			continue;
		for (j = 0; j < v->nr_funcs && v->funcs[j].id != v->locs[i].func; j++)
			;
		assert_true(j < v->nr_funcs);
		assert_true(v->funcs[j].name < v->nr_strings && v->funcs[j].file < v->nr_strings);
		snprintf(buf, sizeof(buf), "%s %s %llu %llu", v->strings[v->funcs[j].name],
			 v->strings[v->funcs[j].file], (unsigned long long)v->funcs[j].start,
			 (unsigned long long)v->locs[i].line);
		return buf;
	}
	return NULL;
}

#define HOT 0x7f4000000000ULL
#define MAIN 0x7f4000001000ULL
#define PLAIN 0x7f4000002000ULL

/*
 * pid 400: hot (lines in hot.toy from 20, then lib.toy:7) called by main (main.toy 3, 4),
 * main alone, hot under a kernel frame called by plain (no lines), hot in lib.toy.
 */
static void write_lines_log(const char *path)
{
	static const char hot_names[] = "hot.toy\0lib.toy";
	const struct jt_line hot_lines[] = {
		{ .off = 0x0, .line = 20, .file = 0 }, { .off = 0x10, .line = 21, .file = 0 },
		{ .off = 0x20, .line = 7, .file = 1 },
	};
	const struct jt_line main_lines[] = { { .off = 0x0, .line = 3 },
					      { .off = 0x8, .line = 4 } };
	const struct jt_frame called[] = { F(METHOD, 1, 0x14), F(METHOD, 2, 0x8) };
	const struct jt_frame alone[] = { F(METHOD, 2, 0x8) };
	const struct jt_frame in_kernel[] = { F(SYMBOL, 1, 0x10), F(METHOD, 1, 0x10),
					      F(METHOD, 3, 0x4) };
	const struct jt_frame in_lib[] = { F(METHOD, 1, 0x24) };
	struct jt_log_header h = { .start_ns = T0, .sample_hz = HZ, .flags = JT_LOG_F_KSTACK };
	struct jt_log_writer *w = jt_logw__create(path, &h, false);
	struct jt_rec_lines *l;
	union recbuf rb;

	assert_non_null(w);
	add_proc(w, 0, 400, "src");
	add_symbol(w, 5, 0, 1, 0, "do_syscall_64");
	add_method(w, 10, 400, 1, HOT, "hot", 3);
	l = rec(&rb, JT_REC_LINES, sizeof(*l), sizeof(hot_lines) + sizeof(hot_names), 10);
	l->method = 1;
	l->pid = 400;
	l->nr_lines = JT_ARRAY_SIZE(hot_lines);
	l->names_len = sizeof(hot_names);
	memcpy(l->lines, hot_lines, sizeof(hot_lines));
	memcpy((char *)(l->lines + l->nr_lines), hot_names, sizeof(hot_names));
	add(w, &rb);
	add_method(w, 10, 400, 2, MAIN, "main", 4);
	l = rec(&rb, JT_REC_LINES, sizeof(*l), sizeof(main_lines) + 9, 10);
	l->method = 2;
	l->pid = 400;
	l->nr_lines = JT_ARRAY_SIZE(main_lines);
	l->names_len = 9;
	memcpy(l->lines, main_lines, sizeof(main_lines));
	memcpy((char *)(l->lines + l->nr_lines), "main.toy", 9);
	add(w, &rb);
	add_method(w, 10, 400, 3, PLAIN, "plain", 5);
	add_sample(w, 100, 400, 400, called, 2);
	add_sample(w, 200, 400, 400, called, 2);
	add_sample(w, 300, 400, 400, alone, 1);
	add_sample(w, 400, 400, 400, in_kernel, 3);
	add_sample(w, 500, 400, 400, in_lib, 1);
	assert_int_equal(jt_logw__close(w), 0);
}

/*
 * A JIT frame with lines: its function is named by its source file and starts at the
 * method's lowest line there; its location has the line. A caller's line is its call's
 * (the byte before the return address), so main at +0x8 is line 3 as a caller and line 4
 * as the leaf: two locations. After kernel frames the first user frame is the leaf.
 */
static void test_pprof_source_lines(void **state)
{
	struct tmp *t = *state;
	struct pview v;
	size_t len;
	char *text;

	write_lines_log(t->log);
	text = pprof_text(t, NULL, &len);
	pview_parse(text, &v);
	assert_string_equal(ploc_at(&v, HOT + 0x14, 0), "hot hot.toy 20 21");
	assert_null(ploc_at(&v, HOT + 0x14, 1));
	assert_string_equal(ploc_at(&v, MAIN + 0x8, 0), "main main.toy 3 3");	/* caller */
	assert_string_equal(ploc_at(&v, MAIN + 0x8, 1), "main main.toy 3 4");	/* leaf */
	assert_null(ploc_at(&v, MAIN + 0x8, 2));
	assert_string_equal(ploc_at(&v, HOT + 0x10, 0), "hot hot.toy 20 21");	/* not 20 */
	assert_string_equal(ploc_at(&v, HOT + 0x24, 0), "hot lib.toy 7 7");
	assert_string_equal(ploc_at(&v, PLAIN + 0x4, 0), "plain [jit] 0 0");
	free(text);
}

/* The j-th line of the k-th location at addr as "name file line", or NULL. */
static const char *pline_at(const struct pview *v, uint64_t addr, int k, unsigned j)
{
	static char buf[256];
	size_t i, f;

	for (i = 0; i < v->nr_locs; i++) {
		if (v->locs[i].addr != addr || k--)
			continue;
		if (j >= v->locs[i].nr_lines)
			return NULL;
		for (f = 0; f < v->nr_funcs && v->funcs[f].id != v->locs[i].lfunc[j]; f++)
			;
		assert_true(f < v->nr_funcs);
		snprintf(buf, sizeof(buf), "%s %s %llu", v->strings[v->funcs[f].name],
			 v->strings[v->funcs[f].file], (unsigned long long)v->locs[i].lline[j]);
		return buf;
	}
	return NULL;
}

/*
 * pid 400: run (scopes: [0, 0x10) itself at Run.java:5, [0x10, 0x40) mix at Mix.java:9
 * inlined at Run.java:6) called by main (no lines): a sample in mix (+0x20), one in run
 * itself (+0x4), and one where run's call ending at +0x40 (mix's) called main.
 */
static void write_inline_log(const char *path)
{
	static const char names[] = "Run.run()\0Run.java\0Mix.mix(long)\0Mix.java";
	const struct jt_inline_range ranges[] = { { 0x10, 0 }, { 0x40, 2 } };
	const struct jt_inline_scope scopes[] = {
		{ .name = 0, .file = 10, .line = 5, .caller = JT_INLINE_NONE },
		{ .name = 0, .file = 10, .line = 6, .caller = JT_INLINE_NONE },
		{ .name = 19, .file = 33, .line = 9, .caller = 1 },
	};
	const struct jt_frame in_mix[] = { F(METHOD, 1, 0x20), F(METHOD, 2, 0x8) };
	const struct jt_frame in_run[] = { F(METHOD, 1, 0x4), F(METHOD, 2, 0x8) };
	const struct jt_frame calling[] = { F(METHOD, 2, 0x8), F(METHOD, 1, 0x40) };
	struct jt_log_header h = { .start_ns = T0, .sample_hz = HZ };
	struct jt_log_writer *w = jt_logw__create(path, &h, false);
	struct jt_rec_inline *r;
	union recbuf rb;
	char *p;

	assert_non_null(w);
	add_proc(w, 0, 400, "inl");
	add_method(w, 10, 400, 1, HOT, "Run.run()", 9);
	r = rec(&rb, JT_REC_INLINE, sizeof(*r), sizeof(ranges) + sizeof(scopes) + sizeof(names),
		10);
	r->method = 1;
	r->pid = 400;
	r->head = (struct jt_inline_head){ .nr_ranges = 2, .nr_scopes = 3,
					   .names_len = sizeof(names) };
	p = (char *)(r + 1);
	memcpy(p, ranges, sizeof(ranges));
	memcpy(p + sizeof(ranges), scopes, sizeof(scopes));
	memcpy(p + sizeof(ranges) + sizeof(scopes), names, sizeof(names));
	add(w, &rb);
	add_method(w, 10, 400, 2, MAIN, "Main.main()", 11);
	add_sample(w, 100, 400, 400, in_mix, 2);
	add_sample(w, 200, 400, 400, in_run, 2);
	add_sample(w, 300, 400, 400, calling, 2);
	assert_int_equal(jt_logw__close(w), 0);
}

/*
 * Inlined methods are lines of one location, innermost first, each its own function in
 * its file; the method's own line, its call's, last. A return address looks up its call.
 */
static void test_pprof_inlined_lines(void **state)
{
	struct tmp *t = *state;
	struct pview v;
	size_t len;
	char *text;

	write_inline_log(t->log);
	text = pprof_text(t, NULL, &len);
	pview_parse(text, &v);
	assert_string_equal(pline_at(&v, HOT + 0x20, 0, 0), "Mix.mix(long) Mix.java 9");
	assert_string_equal(pline_at(&v, HOT + 0x20, 0, 1), "Run.run() Run.java 6");
	assert_null(pline_at(&v, HOT + 0x20, 0, 2));
	assert_string_equal(pline_at(&v, HOT + 0x4, 0, 0), "Run.run() Run.java 5");
	assert_null(pline_at(&v, HOT + 0x4, 0, 1));
	assert_string_equal(pline_at(&v, HOT + 0x40, 0, 0), "Mix.mix(long) Mix.java 9");
	assert_string_equal(pline_at(&v, HOT + 0x40, 0, 1), "Run.run() Run.java 6");
	free(text);
}

/* ---- mappings, addresses and values in pprof ---- */

#define LIBM_START 0x7f5000001000ULL	/* libm's executable mapping, file offset 0x1000 */
#define LIBM_PGOFF 0x1000ULL
#define APP_START 0x560000002000ULL	/* the program's, file offset 0x2000; no symbols */
#define APP_PGOFF 0x2000ULL
#define KSYM 0xffffffff81000000ULL
#define JIT_A 0x7f6000000000ULL

/*
 * pid 500 "app": a JIT method called from libm's symbol (at file offset 0x1800) called
 * from the program (file+offset, no symbol anywhere in it), a kernel symbol on top, and a
 * bare user address; recorded at 999 Hz, 999 samples of the stack and 1 of the address.
 */
static void write_mapped_log(const char *path)
{
	const struct jt_frame stack[] = { F(SYMBOL, 1, 0x30), F(METHOD, 1, 0x10),
					  F(SYMBOL, 2, 0x10), F(MODULE, 2, 0x2345) };
	const struct jt_frame bare[] = { F(USER, 0, 0x1234567) };
	struct jt_log_header h = { .start_ns = T0, .sample_hz = 999, .flags = JT_LOG_F_KSTACK };
	struct jt_log_writer *w = jt_logw__create(path, &h, false);
	struct jt_rec_module *m;
	struct jt_rec_symbol *y;
	union recbuf rb;
	int i;

	assert_non_null(w);
	add_proc(w, 0, 500, "app");
	m = rec(&rb, JT_REC_MODULE, sizeof(*m), strlen("/usr/lib/libm.so.6"), 1);
	*m = (struct jt_rec_module){ .h = m->h, .id = 1, .pid = 500, .start = LIBM_START,
				     .end = LIBM_START + 0x10000, .pgoff = LIBM_PGOFF,
				     .path_len = strlen("/usr/lib/libm.so.6") };
	memcpy(m->path, "/usr/lib/libm.so.6", m->path_len);
	add(w, &rb);
	m = rec(&rb, JT_REC_MODULE, sizeof(*m), strlen("/opt/app/bin/app"), 1);
	*m = (struct jt_rec_module){ .h = m->h, .id = 2, .pid = 500, .start = APP_START,
				     .end = APP_START + 0x4000, .pgoff = APP_PGOFF,
				     .path_len = strlen("/opt/app/bin/app") };
	memcpy(m->path, "/opt/app/bin/app", m->path_len);
	add(w, &rb);
	add_symbol(w, 2, 0, 1, 0, "do_syscall_64");	/* at KSYM */
	y = rec(&rb, JT_REC_SYMBOL, sizeof(*y), 5, 2);
	*y = (struct jt_rec_symbol){ .h = y->h, .id = 2, .pid = 500, .module = 1, .start = 0x1800,
				     .size = 0x40, .name_len = 5 };
	memcpy(y->name, "sqrtf", 5);
	add(w, &rb);
	add_method(w, 3, 500, 1, JIT_A, "Jit.a()", 7);
	for (i = 0; i < 999; i++)
		add_sample(w, 10 + i, 500, 500, stack, JT_ARRAY_SIZE(stack));
	add_sample(w, 2000, 500, 500, bare, 1);
	assert_int_equal(jt_logw__close(w), 0);
}

struct pmapping {
	uint64_t id, start, limit, offset, file, has_functions;
};

/* The mappings of a decoded profile (pprof_text()), and each location's mapping and address. */
static size_t pmappings(const char *text, struct pmapping *v, size_t cap)
{
	const char *p = text;
	unsigned long long x;
	size_t n = 0;

	while ((p = strstr(p, "\nmapping {\n"))) {
		struct pmapping *m = &v[n];

		assert_true(n < cap);
		memset(m, 0, sizeof(*m));
		for (p = strchr(p + 1, '\n') + 1; strncmp(p, "}\n", 2); p = strchr(p, '\n') + 1) {
			if (sscanf(p, "  id: %llu", &x) == 1)
				m->id = x;
			else if (sscanf(p, "  memory_start: %llu", &x) == 1)
				m->start = x;
			else if (sscanf(p, "  memory_limit: %llu", &x) == 1)
				m->limit = x;
			else if (sscanf(p, "  file_offset: %llu", &x) == 1)
				m->offset = x;
			else if (sscanf(p, "  filename: %llu", &x) == 1)
				m->file = x;
			else if (sscanf(p, "  has_functions: %llu", &x) == 1)
				m->has_functions = x;
		}
		n++;
	}
	return n;
}

/* The mapping's file name, from the string table of text (strings: parsed by pview_parse). */
static const struct pmapping *pmapping_named(const struct pmapping *v, size_t n,
					     const struct pview *pv, const char *file)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].file && v[i].file < pv->nr_strings &&
		    !strcmp(pv->strings[v[i].file], file))
			return &v[i];
	fail_msg("no mapping named %s", file);
	return NULL;
}

/* The mapping_id of the location at addr, or 0; fails if none is there. */
static uint64_t pmapping_of(const char *text, uint64_t addr)
{
	char want[64];
	const char *p, *loc;
	unsigned long long x;

	snprintf(want, sizeof(want), "  address: %llu\n", (unsigned long long)addr);
	p = strstr(text, want);
	if (!p)
		fail_msg("no location at 0x%llx", (unsigned long long)addr);
	for (loc = p; loc > text && strncmp(loc, "location {\n", 11); loc--)
		;
	p = strstr(loc, "  mapping_id: ");
	if (!p || p > strstr(loc, "\n}\n"))
		return 0;
	assert_int_equal(sscanf(p, "  mapping_id: %llu", &x), 1);
	return x;
}

/*
 * go tool pprof needs a file name on its mappings (the first one's names the profile;
 * without, "Main binary filename not available" and the web UI's "unknown cpu"): one
 * mapping per module, with its start, limit, file offset and file, has_functions where
 * symbols named frames in it (else pprof may symbolize it from the file), and [jit],
 * [kernel] and [unknown] for the rest. Every location has a mapping, and its address is
 * the one the frame had in the process: for native code the module's start plus the
 * frame's file offset less the mapping's. The busiest program's mapping comes first.
 */
static void test_pprof_mappings_name_files(void **state)
{
	struct tmp *t = *state;
	struct pmapping maps[16];
	const struct pmapping *libm, *app, *jit, *kernel, *unknown;
	struct pview pv;
	size_t len, n;
	char *text, *copy;

	write_mapped_log(t->log);
	text = pprof_text(t, NULL, &len);
	n = pmappings(text, maps, JT_ARRAY_SIZE(maps));
	copy = strdup(text);
	assert_non_null(copy);
	pview_parse(copy, &pv);
	assert_int_equal(n, 5);
	libm = pmapping_named(maps, n, &pv, "/usr/lib/libm.so.6");
	app = pmapping_named(maps, n, &pv, "/opt/app/bin/app");
	jit = pmapping_named(maps, n, &pv, "[jit]");
	kernel = pmapping_named(maps, n, &pv, "[kernel]");
	unknown = pmapping_named(maps, n, &pv, "[unknown]");
	assert_int_equal(app->id, 1);	/* the main binary: in every sample of its process */
	assert_int_equal(libm->start, LIBM_START);
	assert_int_equal(libm->limit, LIBM_START + 0x10000);
	assert_int_equal(libm->offset, LIBM_PGOFF);
	assert_int_equal(libm->has_functions, 1);
	assert_int_equal(app->start, APP_START);
	assert_int_equal(app->offset, APP_PGOFF);
	assert_int_equal(app->has_functions, 0);	/* no symbol named anything there */
	assert_int_equal(jit->has_functions, 1);
	assert_int_equal(kernel->has_functions, 1);
	/* sqrtf+0x10 at file offset 0x1810; app+0x2345; the JIT and kernel frames' own */
	assert_int_equal(pmapping_of(text, LIBM_START + 0x1810 - LIBM_PGOFF), libm->id);
	assert_int_equal(pmapping_of(text, APP_START + 0x2345 - APP_PGOFF), app->id);
	assert_int_equal(pmapping_of(text, JIT_A + 0x10), jit->id);
	assert_int_equal(pmapping_of(text, KSYM + 0x30), kernel->id);
	assert_int_equal(pmapping_of(text, 0x1234567), unknown->id);
	assert_true(jit->start <= JIT_A + 0x10 && jit->limit > JIT_A + 0x10);
	assert_true(kernel->start <= KSYM + 0x30 && kernel->limit > KSYM + 0x30);
	free(copy);
	free(text);
}

/*
 * 999 samples at 999 Hz are 1 s of CPU, exactly: cpu nanoseconds are the count times
 * 1e9 / Hz, not the count times the period cut to whole nanoseconds (999,999,999). The
 * default sample type is the count, which `go tool pprof` prints as it is (at 999 Hz a
 * duration per sample is 1.001001 ms: "2749.75ms" for 2747 samples).
 */
static void test_pprof_cpu_time_exact_and_count_by_default(void **state)
{
	struct tmp *t = *state;
	const char *p;
	size_t len;
	char *text;

	write_mapped_log(t->log);
	text = pprof_text(t, NULL, &len);
	assert_non_null(strstr(text, "  value: 999\n  value: 1000000000\n"));
	assert_non_null(strstr(text, "  value: 1\n  value: 1001001\n"));
	assert_non_null(strstr(text, "period: 1001001\n"));
	/* string 1 is "samples", the first sample type's; the default names it */
	p = strstr(text, "string_table: \"\"\nstring_table: \"samples\"\n");
	assert_non_null(p);
	assert_non_null(strstr(text, "default_sample_type: 1\n"));
	free(text);
}

/* ---- thread names ---- */

static void add_thread(struct jt_log_writer *w, uint64_t ts, uint32_t pid, uint32_t tid,
		       const char *comm)
{
	union recbuf rb;
	struct jt_rec_thread *r = rec(&rb, JT_REC_THREAD, sizeof(*r), 0, ts);

	r->pid = pid;
	r->tid = tid;
	strncpy(r->comm, comm, sizeof(r->comm));
	add(w, &rb);
}

/*
 * Process 500 "app": thread 501 named "app", sampled once, then renamed "worker-a" and
 * sampled three times; 502 "worker-b" sampled twice; 503 never named, sampled once. Each
 * thread calls its method once.
 */
static void write_threads_log(const char *path)
{
	const struct jt_frame fa[] = { F(METHOD, 1, 0x4) }, fb[] = { F(METHOD, 2, 0x4) };
	struct jt_log_header h = { .start_ns = T0, .sample_hz = HZ, .flags = JT_LOG_F_CALLS };
	struct jt_log_writer *w = jt_logw__create(path, &h, false);
	uint32_t tid;

	assert_non_null(w);
	add_proc(w, 0, 500, "app");
	add_method(w, 10, 500, 1, 0x7f3000000000ULL, "work_a", 6);
	add_method(w, 10, 500, 2, 0x7f3000001000ULL, "work_b", 6);
	add_thread(w, 20, 500, 501, "app");
	add_thread(w, 20, 500, 502, "worker-b");
	for (tid = 501; tid <= 503; tid++)
		add_call(w, JT_REC_ENTER, 30, 500, tid, tid == 501 ? 1 : 2);
	add_sample(w, 100, 500, 503, fb, 1);
	add_sample(w, 200, 500, 501, fa, 1);
	add_thread(w, 300, 500, 501, "worker-a");
	add_sample(w, 400, 500, 501, fa, 1);
	add_sample(w, 500, 500, 501, fa, 1);
	add_sample(w, 600, 500, 501, fa, 1);
	add_sample(w, 700, 500, 502, fb, 1);
	add_sample(w, 800, 500, 502, fb, 1);
	for (tid = 501; tid <= 503; tid++)
		add_call(w, JT_REC_LEAVE, 900, 500, tid, tid == 501 ? 1 : 2);
	assert_int_equal(jt_logw__close(w), 0);
}

/* Profiles named with the thread's latest name, the busiest first; the unnamed by tid. */
static void test_speedscope_threads_named_busiest_first(void **state)
{
	struct tmp *t = *state;
	const char *a, *b, *u;
	size_t len;
	char *json;
	int ret;

	write_threads_log(t->log);
	json = run_export(t, jt_export_speedscope, NULL, &ret, &len);
	assert_int_equal(ret, 0);
	a = strstr(json, "{\"type\":\"sampled\",\"name\":\"app 500/501 worker-a\"");
	b = strstr(json, "{\"type\":\"sampled\",\"name\":\"app 500/502 worker-b\"");
	u = strstr(json, "{\"type\":\"sampled\",\"name\":\"app 500/503\"");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(u);
	assert_true(a < b && b < u);
	assert_non_null(strstr(json, "\"profiles\":[\n{\"type\":\"sampled\",\"name\":\"app "
				     "500/501 worker-a\""));
	assert_non_null(strstr(json, "\"name\":\"app 500/501 worker-a calls\""));
	free(json);
}

/* The string table index of s in a decoded profile, or -1. */
static long pstring(const char *text, const char *s)
{
	char want[128];
	const char *p;
	long i = 0;

	snprintf(want, sizeof(want), "string_table: \"%s\"\n", s);
	for (p = strstr(text, "string_table: "); p; p = strstr(p + 1, "string_table: "), i++)
		if (!strncmp(p, want, strlen(want)))
			return i;
	return -1;
}

/*
 * comm and thread labels are other processes' bytes, and `pprof -top`, `-traces` print them
 * to a terminal: a control (C0, DEL, C1) or a byte that is not UTF-8 is '?' in them, as in
 * function names.
 */
static void test_pprof_labels_carry_no_control_bytes(void **state)
{
	const struct jt_frame f[] = { F(METHOD, 1, 0x4) };
	struct jt_log_header h = { .start_ns = T0, .sample_hz = HZ };
	struct tmp *t = *state;
	struct jt_log_writer *w;
	size_t len;
	char *text;

	w = jt_logw__create(t->log, &h, false);
	assert_non_null(w);
	add_proc(w, 0, 600, "ev\x1b[31mil\x7f");
	add_method(w, 10, 600, 1, 0x7f3000000000ULL, "work", 4);
	add_thread(w, 20, 600, 601, "th\xc2\x9b\x07\xffr\xc3\xa9");
	add_sample(w, 100, 600, 601, f, 1);
	assert_int_equal(jt_logw__close(w), 0);

	/* the decoder prints a string's bytes outside printable ASCII as octal escapes */
	text = pprof_text(t, NULL, &len);
	assert_null(strstr(text, "\\033"));
	assert_null(strstr(text, "\\007"));
	assert_null(strstr(text, "\\177"));
	assert_null(strstr(text, "\\377"));
	assert_null(strstr(text, "\\302\\233"));
	assert_true(pstring(text, "ev?[31mil?") > 0);
	assert_true(pstring(text, "th???r\\303\\251") > 0);	/* é is text (printed as protoc does) */
	free(text);
}

/* A "thread" label with the name the thread had at each sample, pid and tid kept. */
static void test_pprof_thread_label(void **state)
{
	struct tmp *t = *state;
	long key, a, b, app;
	char want[128];
	size_t len;
	char *text;
	int n = 0;
	const char *p;

	write_threads_log(t->log);
	text = pprof_text(t, NULL, &len);
	key = pstring(text, "thread");
	a = pstring(text, "worker-a");
	b = pstring(text, "worker-b");
	app = pstring(text, "app");
	assert_true(key > 0 && a > 0 && b > 0 && app > 0);
	snprintf(want, sizeof(want), "  label {\n    key: %ld\n    str: %ld\n  }\n", key, a);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "  label {\n    key: %ld\n    str: %ld\n  }\n", key, b);
	assert_non_null(strstr(text, want));
	/* the sample before the rename: "app" */
	snprintf(want, sizeof(want), "  label {\n    key: %ld\n    str: %ld\n  }\n", key, app);
	assert_non_null(strstr(text, want));
	/* three stacks of named threads carry it, thread 503's does not */
	snprintf(want, sizeof(want), "    key: %ld\n", key);
	for (p = strstr(text, want); p; p = strstr(p + 1, want))
		n++;
	assert_int_equal(n, 3);
	assert_non_null(strstr(text, "    num: 503\n"));
	free(text);
}

/* thread_name metadata: the thread's name, or "comm tid" for one the log never named. */
static void test_chrome_thread_names(void **state)
{
	struct tmp *t = *state;
	size_t len;
	char *json;
	int ret;

	write_threads_log(t->log);
	json = run_export(t, jt_export_chrome, NULL, &ret, &len);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(json, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":500,"
				     "\"tid\":500,\"args\":{\"name\":\"app 500\"}}"));
	assert_non_null(strstr(json, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":500,"
				     "\"tid\":501,\"args\":{\"name\":\"worker-a\"}}"));
	assert_non_null(strstr(json, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":500,"
				     "\"tid\":502,\"args\":{\"name\":\"worker-b\"}}"));
	assert_non_null(strstr(json, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":500,"
				     "\"tid\":503,\"args\":{\"name\":\"app 503\"}}"));
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pprof_golden, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_filter_by_pid, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_golden, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_filter_by_comm, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_golden, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_balanced, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_threads_named_busiest_first,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_thread_label, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_labels_carry_no_control_bytes, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_thread_names, tmp_setup, tmp_teardown),
		cmocka_unit_test(test_calls_balanced),
		cmocka_unit_test(test_calls_summed_and_spans_are_not_leaves),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_json_escape_del_and_c1),
		cmocka_unit_test(test_pb_lengths),
		cmocka_unit_test_setup_teardown(test_missing_log_is_an_error, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_exports_keep_utf8_names, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_refuses_a_log_with_nothing_to_show,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_sample_without_frames, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_source_lines, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_inlined_lines, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_without_calls_is_an_error, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_output_is_replaced_only_with_force, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_unknown_extension_is_explained, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_mappings_name_files, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_cpu_time_exact_and_count_by_default,
						tmp_setup, tmp_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
