// SPDX-License-Identifier: GPL-2.0
/*
 * Segments: each a complete log on its own (definitions written again before their first
 * use, every kind of loss accounted for), together the same recording as one log, and a
 * directory kept within its age and size, oldest first; what a dead recorder left open kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"
#include "dirbytes.h"
#include "scratch.h"
#include "viewlog.h"

#include "log/log.h"
#include "views/report.h"
#include "log/segment.h"
#include "log/segment_defs.h"

#define FAR_NS (1ULL << 62)	/* a rotation that never comes by itself */

/* ---- the definitions, record by record ---- */

union rb {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[1024];
};

static struct jt_rec_hdr *mk(union rb *r, unsigned type, size_t fixed, size_t var, uint64_t ts)
{
	memset(r, 0, sizeof(*r));
	r->h.type = type;
	r->h.size = jt_round8(fixed + var);
	r->h.ts = ts;
	return &r->h;
}

static void feed(struct jt_segdefs *d, const struct jt_rec_hdr *h)
{
	assert_int_equal(jt_segdefs__record(d, h), 0);
}

static void proc(struct jt_segdefs *d, uint64_t ts, uint32_t pid)
{
	union rb r;
	struct jt_rec_proc *p = (void *)mk(&r, JT_REC_PROC, sizeof(*p), 4, ts);

	p->pid = pid;
	memcpy(p->comm, "app", 3);
	p->cmdline_len = 4;
	memcpy(p->cmdline, "app1", 4);
	feed(d, &r.h);
}

static void module(struct jt_segdefs *d, uint64_t ts, uint64_t id, uint32_t pid)
{
	union rb r;
	struct jt_rec_module *m = (void *)mk(&r, JT_REC_MODULE, sizeof(*m), 4, ts);

	m->id = id;
	m->pid = pid;
	m->path_len = 4;
	memcpy(m->path, "/lib", 4);
	feed(d, &r.h);
}

static void symbol(struct jt_segdefs *d, uint64_t ts, uint64_t id, uint64_t mod, uint32_t pid)
{
	union rb r;
	struct jt_rec_symbol *y = (void *)mk(&r, JT_REC_SYMBOL, sizeof(*y), 1, ts);

	y->id = id;
	y->module = mod;
	y->pid = pid;
	y->name_len = 1;
	y->name[0] = 's';
	feed(d, &r.h);
}

static void method(struct jt_segdefs *d, uint64_t ts, uint64_t id, uint32_t pid)
{
	union rb r;
	struct jt_rec_method *m = (void *)mk(&r, JT_REC_METHOD, sizeof(*m), 1, ts);

	m->id = id;
	m->pid = pid;
	m->name_len = 1;
	m->name[0] = 'm';
	feed(d, &r.h);
}

static void lines(struct jt_segdefs *d, uint64_t ts, uint64_t id, uint32_t pid)
{
	union rb r;
	struct jt_rec_lines *l = (void *)mk(&r, JT_REC_LINES, sizeof(*l),
					    sizeof(struct jt_line) + 2, ts);

	l->method = id;
	l->pid = pid;
	l->nr_lines = 1;
	l->names_len = 2;
	l->lines[0].line = 7;
	memcpy((char *)(l->lines + 1), "f", 2);
	feed(d, &r.h);
}

/* Inlined scopes of method id: one range in one scope named "f". */
static void scopes(struct jt_segdefs *d, uint64_t ts, uint64_t id, uint32_t pid, uint32_t line)
{
	union rb r;
	struct jt_rec_inline *in = (void *)mk(&r, JT_REC_INLINE, sizeof(*in),
					      sizeof(struct jt_inline_range) +
					      sizeof(struct jt_inline_scope) + 2, ts);
	struct jt_inline_range *rg = (void *)(in + 1);
	struct jt_inline_scope *sc = (void *)(rg + 1);

	in->method = id;
	in->pid = pid;
	in->head = (struct jt_inline_head){ .nr_ranges = 1, .nr_scopes = 1, .names_len = 2 };
	*rg = (struct jt_inline_range){ .off = 0x10 };
	*sc = (struct jt_inline_scope){ .file = JT_INLINE_NONE, .line = line,
					.caller = JT_INLINE_NONE };
	memcpy(sc + 1, "f", 2);
	feed(d, &r.h);
}

static void call(struct jt_segdefs *d, unsigned type, uint64_t ts, uint64_t id, uint32_t pid)
{
	union rb r;
	struct jt_rec_call *c = (void *)mk(&r, type, sizeof(*c), 0, ts);

	c->id = id;
	c->pid = pid;
	c->tid = pid;
	feed(d, &r.h);
}

static void pid_rec(struct jt_segdefs *d, unsigned type, uint64_t ts, uint32_t pid)
{
	union rb r;

	if (type == JT_REC_EXIT) {
		struct jt_rec_exit *e = (void *)mk(&r, type, sizeof(*e), 0, ts);

		e->pid = pid;
	} else {
		struct jt_rec_exec *e = (void *)mk(&r, type, sizeof(*e), 2, ts);

		e->pid = pid;
		e->path_len = 2;
		memcpy(e->path, "/x", 2);
	}
	feed(d, &r.h);
}

/* A sample of pid: a JIT frame of method, a symbol frame of sym, a bare kernel address. */
static void sample(struct jt_segdefs *d, uint64_t ts, uint32_t pid, uint64_t meth, uint64_t sym)
{
	union rb r;
	struct jt_rec_sample *s = (void *)mk(&r, JT_REC_SAMPLE, sizeof(*s),
					     3 * sizeof(struct jt_frame), ts);

	s->pid = pid;
	s->tid = pid;
	s->nr_frames = 3;
	s->frames[0] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_KERNEL, 0), 0xffffffff81000000 };
	s->frames[1] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_METHOD, meth), 4 };
	s->frames[2] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_SYMBOL, sym), 8 };
	feed(d, &r.h);
}

/* An off-CPU record of pid: a JIT frame of method, a user address in anonymous module anon. */
static void offcpu(struct jt_segdefs *d, uint64_t ts, uint32_t pid, uint64_t meth,
		   uint64_t anon)
{
	union rb r;
	struct jt_rec_offcpu *o = (void *)mk(&r, JT_REC_OFFCPU, sizeof(*o),
					     2 * sizeof(struct jt_frame), ts);

	o->off_ns = 1000;
	o->count = 1;
	o->state = JT_OFF_SLEEP;
	o->smp.h = (struct jt_rec_hdr){ .type = JT_REC_SAMPLE,
					.size = o->h.size - offsetof(struct jt_rec_offcpu, smp),
					.ts = o->h.ts - 1000 };
	o->smp.pid = pid;
	o->smp.tid = pid;
	o->smp.nr_frames = 2;
	o->smp.frames[0] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, anon), 0x7f0000001000 };
	o->smp.frames[1] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_METHOD, meth), 4 };
	feed(d, &r.h);
}

static void capture_free(struct capture *c)
{
	while (c->n)
		free(c->recs[--c->n]);
	free(c->recs);
	memset(c, 0, sizeof(*c));
}

/* The types of what was captured, as a string: "PmsMLS" ... */
static const char *types(const struct capture *c, char *buf)
{
	static const char letter[JT_REC_MAX] = {
		[JT_REC_METHOD] = 'M', [JT_REC_UNLOAD] = 'U', [JT_REC_ENTER] = 'E',
		[JT_REC_LEAVE] = 'X', [JT_REC_SAMPLE] = 'S', [JT_REC_EXEC] = 'x',
		[JT_REC_EXIT] = 'q', [JT_REC_DROP] = 'd', [JT_REC_PROC] = 'P',
		[JT_REC_MODULE] = 'm', [JT_REC_SYMBOL] = 's', [JT_REC_LINES] = 'L',
		[JT_REC_OFFCPU] = 'O', [JT_REC_INLINE] = 'I',
	};
	size_t i;

	for (i = 0; i < c->n; i++)
		buf[i] = letter[c->recs[i]->type];
	buf[i] = 0;
	return buf;
}

/* A method's inlined scopes come again with it, its latest ones, after its lines. */
static void inlined_scopes_come_again_with_their_method(void **state)
{
	struct jt_segdefs *d = jt_segdefs__new();
	struct capture one = { 0 }, two = { 0 };
	struct jt_sink s1 = { capture_record, &one }, s2 = { capture_record, &two };
	const struct jt_rec_inline *in;
	char buf[64];

	(void)state;
	assert_non_null(d);
	jt_segdefs__begin(d, &s1);
	proc(d, 10, 42);
	method(d, 11, 1, 42);
	lines(d, 11, 1, 42);
	scopes(d, 11, 1, 42, 7);
	scopes(d, 12, 1, 42, 8);	/* replaces the first */
	sample(d, 13, 42, 1, 1);
	assert_string_equal(types(&one, buf), "PMLIIS");
	jt_segdefs__begin(d, &s2);
	sample(d, 20, 42, 1, 1);
	assert_string_equal(types(&two, buf), "PMLIS");
	in = (const void *)two.recs[3];
	assert_int_equal(in->method, 1);
	assert_int_equal(((const struct jt_inline_scope *)((const char *)(in + 1) +
							   sizeof(struct jt_inline_range)))->line, 8);
	assert_int_equal(in->h.ts, 20);
	capture_free(&one);
	capture_free(&two);
	jt_segdefs__free(d);
}

static void definitions_come_again_before_their_first_use(void **state)
{
	struct jt_segdefs *d = jt_segdefs__new();
	struct capture one = { 0 }, two = { 0 };
	struct jt_sink s1 = { capture_record, &one }, s2 = { capture_record, &two };
	struct jt_segdefs_stats st;
	char buf[256];
	size_t i;

	(void)state;
	assert_non_null(d);
	jt_segdefs__begin(d, &s1);
	proc(d, 10, 42);
	module(d, 10, 1, 42);
	symbol(d, 10, 1, 1, 42);
	symbol(d, 10, 2, 0, 0);		/* a kernel symbol: nobody's */
	method(d, 11, 1, 42);
	lines(d, 11, 1, 42);
	method(d, 11, 2, 42);
	sample(d, 12, 42, 1, 1);
	call(d, JT_REC_ENTER, 13, 2, 42);
	assert_string_equal(types(&one, buf), "PmssMLMSE");

	/* a new segment: nothing written again until something needs it, then just that */
	jt_segdefs__begin(d, &s2);
	call(d, JT_REC_LEAVE, 20, 2, 42);
	assert_string_equal(types(&two, buf), "PMX");
	for (i = 0; i < two.n; i++)	/* at the time of the record that needed them */
		assert_int_equal(two.recs[i]->ts, 20);
	sample(d, 21, 42, 1, 1);	/* method 1 with its lines, symbol 1 after its module */
	assert_string_equal(types(&two, buf), "PMXMLmsS");
	sample(d, 22, 42, 1, 1);	/* nothing more */
	assert_string_equal(types(&two, buf), "PMXMLmsSS");
	assert_int_equal(((struct jt_rec_lines *)two.recs[4])->method, 1);
	assert_int_equal(((struct jt_rec_symbol *)two.recs[6])->module, 1);
	jt_segdefs__stats(d, &st);
	assert_int_equal(st.rewritten, 6);
	assert_int_equal(st.missing, 0);

	/*
	 * An unload keeps the method for calls that name it late (the collector's
	 * JT_UNLOADED_KEPT), in a later segment too; an exit forgets the process and all it
	 * defined.
	 */
	capture_free(&two);
	jt_segdefs__begin(d, &s2);
	call(d, JT_REC_UNLOAD, 30, 2, 42);
	capture_free(&two);
	jt_segdefs__begin(d, &s2);
	call(d, JT_REC_LEAVE, 30, 2, 42);
	assert_string_equal(types(&two, buf), "PMX");
	pid_rec(d, JT_REC_EXIT, 31, 42);
	jt_segdefs__stats(d, &st);
	assert_int_equal(st.held, 1);	/* the kernel's symbol */
	capture_free(&two);
	jt_segdefs__begin(d, &s2);
	call(d, JT_REC_ENTER, 40, 2, 42);	/* the collector never does this: passed on */
	assert_string_equal(types(&two, buf), "E");
	jt_segdefs__stats(d, &st);
	assert_int_equal(st.missing, 1);
	jt_segdefs__free(d);
	capture_free(&one);
	capture_free(&two);
}

/* An off-CPU record's stack needs what a sample's does, the anonymous memory's module too. */
static void offcpu_stacks_bring_their_definitions(void **state)
{
	struct jt_segdefs *d = jt_segdefs__new();
	struct capture one = { 0 }, two = { 0 };
	struct jt_sink s1 = { capture_record, &one }, s2 = { capture_record, &two };
	char buf[256];

	(void)state;
	assert_non_null(d);
	jt_segdefs__begin(d, &s1);
	proc(d, 10, 42);
	module(d, 10, 1, 42);	/* the anonymous memory */
	method(d, 11, 1, 42);
	offcpu(d, 12, 42, 1, 1);
	assert_string_equal(types(&one, buf), "PmMO");
	jt_segdefs__begin(d, &s2);
	offcpu(d, 20, 42, 1, 1);
	assert_string_equal(types(&two, buf), "PmMO");
	jt_segdefs__free(d);
	capture_free(&one);
	capture_free(&two);
}

static void an_exec_makes_the_process_say_who_it_is_again(void **state)
{
	struct jt_segdefs *d = jt_segdefs__new();
	struct capture c = { 0 };
	struct jt_sink s = { capture_record, &c };
	char buf[64];

	(void)state;
	jt_segdefs__begin(d, &s);
	proc(d, 1, 7);
	method(d, 1, 1, 7);
	pid_rec(d, JT_REC_EXEC, 2, 7);	/* its old image and name are gone */
	proc(d, 3, 7);
	method(d, 3, 2, 7);
	capture_free(&c);
	jt_segdefs__begin(d, &s);
	sample(d, 4, 7, 2, 0);		/* symbol 0 was never defined: passed on as it is */
	assert_string_equal(types(&c, buf), "PMS");
	assert_int_equal(((struct jt_rec_method *)c.recs[1])->id, 2);
	jt_segdefs__free(d);
	capture_free(&c);
}

static void a_segment_ends_with_every_kind_of_loss(void **state)
{
	struct jt_segdefs *d = jt_segdefs__new();
	struct capture c = { 0 };
	struct jt_sink s = { capture_record, &c };
	bool seen[JT_DROP_MAX] = { 0 };
	union rb r;
	struct jt_rec_drop *drop = (void *)mk(&r, JT_REC_DROP, sizeof(*drop), 0, 5);
	size_t i;

	(void)state;
	jt_segdefs__begin(d, &s);
	drop->what = JT_DROP_REORDER;
	drop->count = 9;
	feed(d, &r.h);
	assert_int_equal(jt_segdefs__end(d, 6), 0);
	assert_int_equal(c.n, JT_DROP_MAX);
	for (i = 0; i < c.n; i++) {
		const struct jt_rec_drop *x = (const void *)c.recs[i];

		assert_int_equal(x->h.type, JT_REC_DROP);
		assert_false(seen[x->what]);
		seen[x->what] = true;
		assert_int_equal(x->count, x->what == JT_DROP_REORDER ? 9 : 0);
	}
	jt_segdefs__free(d);
	capture_free(&c);
}

/* ---- the directory ---- */

struct tmp {
	char dir[256];
	char segs[300];
	char log[300];
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t || scratch_make(t->dir, sizeof(t->dir), "segment")) {
		free(t);
		return -1;
	}
	snprintf(t->segs, sizeof(t->segs), "%s/segs", t->dir);
	snprintf(t->log, sizeof(t->log), "%s/v.jtl", t->dir);
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	scratch_remove(t->segs);
	scratch_remove(t->dir);
	free(t);
	return 0;
}

static int list(const char *dir, const char *suffix, char names[][80], int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), x = strlen(suffix);

		if (len > x && !strcmp(de->d_name + len - x, suffix) && n < max)
			snprintf(names[n++], 80, "%.79s", de->d_name);
	}
	closedir(d);
	qsort(names, n, 80, (int (*)(const void *, const void *))strcmp);
	return n;
}

static struct jt_segment *open_segs(const char *dir, const struct jt_log_header *h,
				    uint64_t max_age, uint64_t max_bytes)
{
	struct jt_segment_opts o = { .dir = dir, .rotate_ns = FAR_NS, .max_age_ns = max_age,
				     .max_bytes = max_bytes, .hdr = h };

	return jt_segment__open(&o);
}

/* Every record of the log at path but its end through s, a new segment after every k. */
static void split_log(const char *path, struct jt_segment *s, int k)
{
	struct jt_log_reader *r = jt_logr__open(path);
	struct jt_sink sink = jt_segment__sink(s);
	const struct jt_rec_hdr *rec;
	int i = 0;

	assert_non_null(r);
	while ((rec = jt_logr__next(r))) {
		if (rec->type == JT_REC_END)
			break;
		assert_int_equal(jt_sink__emit(&sink, rec), 0);
		if (++i % k == 0)
			assert_int_equal(jt_segment__tick(s, jt_now_ns(), true), 0);
	}
	jt_logr__close(r);
	assert_int_equal(jt_segment__close(s), 0);
	jt_segment__free(s);
}

static char *report_of(const char *path, bool json)
{
	struct jt_report_opts o = { .path = path, .json = json };
	char *buf = NULL, *body;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	jt_filter__init(&o.filter);
	assert_int_equal(jt_report(f, &o), 0);
	fclose(f);
	body = strdup(strchr(buf, '\n') + 1);	/* past the line that names the log */
	free(buf);
	return body;
}

/*
 * The report's golden log cut into segments, one record each or seven: each segment reads
 * strictly on its own, and the directory reports exactly as the log did.
 */
static void segments_read_alone_and_together_as_the_log(void **state)
{
	struct tmp *t = *state;
	struct jt_log_reader *r;
	char names[64][80], path[512], *want, *got;
	int k, n, i;

	vl_write(t->log);
	r = jt_logr__open(t->log);
	assert_non_null(r);
	want = report_of(t->log, false);
	for (k = 1; k <= 7; k += 6) {
		struct jt_log_header h = *jt_logr__header(r);

		scratch_remove(t->segs);
		split_log(t->log, open_segs(t->segs, &h, 0, 0), k);
		n = list(t->segs, ".jtl", names, 64);
		assert_true(n > 3);
		assert_int_equal(list(t->segs, ".part", names + n, 64 - n), 0);
		for (i = 0; i < n; i++) {
			struct jt_log_reader *s;

			snprintf(path, sizeof(path), "%s/%.79s", t->segs, names[i]);
			s = jt_logr__open(path);
			assert_non_null(s);
			while (jt_logr__next(s))
				;
			if (jt_logr__state(s) != JT_LOGR_END)
				fail_msg("%s: %s", path, jt_logr__why(s));
			jt_logr__close(s);
		}
		got = report_of(t->segs, false);
		if (strcmp(got, want)) {
			fprintf(stderr, "segments of %d records report\n%s\nthe log\n%s", k, got,
				want);
			fail_msg("segments of %d records report otherwise than the log", k);
		}
		free(got);
	}
	free(want);
	jt_logr__close(r);
}

static void write_segments(const char *dir, int n, uint64_t max_age, uint64_t max_bytes)
{
	struct jt_log_header h = { .start_ns = 1000, .hostname = "h" };
	struct jt_segment *s = open_segs(dir, &h, max_age, max_bytes);
	struct jt_sink sink;
	union rb r;
	int i, j;

	assert_non_null(s);
	sink = jt_segment__sink(s);
	for (i = 0; i < n; i++) {
		for (j = 0; j < 200; j++) {	/* about 10 kB a segment, compressed */
			struct jt_rec_drop *d = (void *)mk(&r, JT_REC_DROP, sizeof(*d), 0,
							   2000 + i * 1000 + j);

			d->what = JT_DROP_DECODE;
			d->count = (uint64_t)rand() << 32 | rand();
			assert_int_equal(jt_sink__emit(&sink, &r.h), 0);
		}
		if (i + 1 < n)
			assert_int_equal(jt_segment__tick(s, jt_now_ns(), true), 0);
	}
	assert_int_equal(jt_segment__close(s), 0);
	jt_segment__free(s);
}

static void oldest_segments_go_first_to_keep_the_size(void **state)
{
	struct tmp *t = *state;
	char names[64][80], before[64][80], marker[512];
	struct stat st, dst;
	int n, m;

	write_segments(t->segs, 6, 0, 0);
	n = list(t->segs, ".jtl", before, 64);
	assert_int_equal(n, 6);
	/* a pusher's marker goes with its segment; one whose segment is gone, too */
	snprintf(marker, sizeof(marker), "%s/%.79s.pushed", t->segs, before[0]);
	close(open(marker, O_CREAT | O_WRONLY, 0600));
	snprintf(marker, sizeof(marker), "%s/jitrace-20000101-000000-000099.jtl.pushed",
		 t->segs);
	close(open(marker, O_CREAT | O_WRONLY, 0600));
	/*
	 * room for four and a half, the directory's own bytes and the slack (a sixteenth of so
	 * small a bound) beside them: the next recorder deletes the oldest whole ones
	 */
	snprintf(marker, sizeof(marker), "%s/%.79s", t->segs, before[1]);
	assert_int_equal(stat(marker, &st), 0);
	assert_int_equal(stat(t->segs, &dst), 0);
	write_segments(t->segs, 3, 0, (dst.st_size + st.st_size * 9 / 2) * 16 / 15);
	n = list(t->segs, ".jtl", names, 64);
	print_message("%d segments of %lld bytes kept of 9\n", n, (long long)st.st_size);
	assert_int_equal(n, 4);
	assert_string_equal(names[n - 1] + strlen(names[n - 1]) - 10, "000009.jtl");
	assert_true(strcmp(names[0], before[0]) > 0);	/* the oldest went */
	m = list(t->segs, ".pushed", names, 64);
	assert_int_equal(m, 0);
}

/*
 * Records poured in with no tick between them (one poll may bring megabytes): the
 * directory, the open segment included, is within the bound after every record, while
 * segments close at a quarter of it and the oldest go.
 */
static void the_open_segment_counts_at_every_record(void **state)
{
	struct tmp *t = *state;
	struct jt_log_header h = { .start_ns = 1000, .hostname = "h" };
	const uint64_t bound = 400000;
	struct jt_segment *s = open_segs(t->segs, &h, 0, bound);
	struct jt_segment_stats st;
	struct jt_sink sink;
	uint64_t peak = 0, b;
	union rb r;
	int i;

	assert_non_null(s);
	sink = jt_segment__sink(s);
	for (i = 0; i < 200000; i++) {	/* about 3 MB compressed: random counts */
		struct jt_rec_drop *d = (void *)mk(&r, JT_REC_DROP, sizeof(*d), 0, 2000 + i);

		d->what = JT_DROP_DECODE;
		d->count = (uint64_t)rand() << 32 | rand();
		assert_int_equal(jt_sink__emit(&sink, &r.h), 0);
		if (i % 50)
			continue;
		b = test_dir_bytes(t->segs);
		peak = b > peak ? b : peak;
		if (b > bound)
			fail_msg("after %d records the directory holds %llu bytes, over %llu", i,
				 (unsigned long long)b, (unsigned long long)bound);
	}
	assert_int_equal(jt_segment__close(s), 0);
	b = test_dir_bytes(t->segs);
	jt_segment__stats(s, &st);
	jt_segment__free(s);
	print_message("peak %llu bytes of %llu; %llu closed, %llu deleted, %llu at the end\n",
		      (unsigned long long)peak, (unsigned long long)bound,
		      (unsigned long long)st.closed, (unsigned long long)st.deleted,
		      (unsigned long long)b);
	assert_true(b <= bound);
	assert_true(st.deleted > 3);
}

static void segments_older_than_max_age_go(void **state)
{
	struct tmp *t = *state;
	char names[64][80], path[512];
	struct timespec old[2] = { { .tv_sec = time(NULL) - 100 }, { .tv_sec = time(NULL) - 100 } };
	int n, i;

	write_segments(t->segs, 4, 0, 0);
	n = list(t->segs, ".jtl", names, 64);
	assert_int_equal(n, 4);
	for (i = 0; i < 3; i++) {	/* three of them ended 100 s ago */
		snprintf(path, sizeof(path), "%s/%.79s", t->segs, names[i]);
		assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	}
	write_segments(t->segs, 1, 50 * 1000000000ULL, 0);
	n = list(t->segs, ".jtl", names, 64);
	assert_int_equal(n, 2);	/* the fourth and the new one */
	assert_string_equal(names[0] + strlen(names[0]) - 10, "000004.jtl");
}

static void a_segment_left_open_is_kept_and_numbers_go_on(void **state)
{
	struct tmp *t = *state;
	char names[64][80], path[512], part[520];
	int n;

	write_segments(t->segs, 2, 0, 0);
	n = list(t->segs, ".jtl", names, 64);
	assert_int_equal(n, 2);
	/* as if the recorder of the second had died before closing it */
	snprintf(path, sizeof(path), "%s/%.79s", t->segs, names[1]);
	snprintf(part, sizeof(part), "%s.part", path);
	assert_int_equal(rename(path, part), 0);
	write_segments(t->segs, 1, 0, 0);
	n = list(t->segs, ".jtl", names, 64);
	assert_int_equal(n, 3);
	assert_int_equal(list(t->segs, ".part", names + 3, 61), 0);
	assert_string_equal(names[2] + strlen(names[2]) - 10, "000003.jtl");
}

static void one_recorder_a_directory_and_only_a_private_one(void **state)
{
	struct tmp *t = *state;
	struct jt_log_header h = { .start_ns = 1 };
	struct jt_segment *a, *b;

	a = open_segs(t->segs, &h, 0, 0);
	assert_non_null(a);
	b = open_segs(t->segs, &h, 0, 0);	/* "another jitrace records into it" */
	assert_null(b);
	assert_int_equal(jt_segment__close(a), 0);
	jt_segment__free(a);
	assert_int_equal(chmod(t->segs, 0777), 0);	/* others could swap what we read */
	assert_null(open_segs(t->segs, &h, 0, 0));
	assert_int_equal(chmod(t->segs, 0700), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(definitions_come_again_before_their_first_use),
		cmocka_unit_test(inlined_scopes_come_again_with_their_method),
		cmocka_unit_test(offcpu_stacks_bring_their_definitions),
		cmocka_unit_test(an_exec_makes_the_process_say_who_it_is_again),
		cmocka_unit_test(a_segment_ends_with_every_kind_of_loss),
		cmocka_unit_test_setup_teardown(segments_read_alone_and_together_as_the_log,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(oldest_segments_go_first_to_keep_the_size,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(the_open_segment_counts_at_every_record, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(segments_older_than_max_age_go, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(a_segment_left_open_is_kept_and_numbers_go_on,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(one_recorder_a_directory_and_only_a_private_one,
						tmp_setup, tmp_teardown),
	};

	(void)slurp;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
