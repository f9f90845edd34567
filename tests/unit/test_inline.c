// SPDX-License-Identifier: GPL-2.0
/*
 * Inlined scopes (JT_REC_INLINE): the logview's chain for a leaf and for a return address,
 * crafted records refused, and the views that expand them: folded stacks (marked _[i]),
 * the report (self to the innermost method, its File:LINE) and speedscope.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "export/speedscope.h"
#include "jt_events.h"
#include "log/filter.h"
#include "log/log.h"
#include "log/view.h"
#include "views/flamegraph.h"
#include "views/report.h"
#include "base/util.h"
#include "viewlog.h"

#define T0 1000000000ULL
#define PID 700
#define OUTER 0x7f7000000000ULL	/* "Outer.run()", 0x100 bytes, with scopes */
#define MAIN 0x7f7000001000ULL	/* "Main.main()", 0x100 bytes, none */

union rbuf {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[1024];
};

/*
 * Outer.run()'s scopes: [0, 0x10) itself at Outer.java:5; [0x10, 0x40) Mix.mix(long) at
 * Mix.java:9 inlined at Outer.java:6; [0x40, 0x80) Add.add(int) at Mix.java:20 inlined
 * into that mix at Mix.java:9; nothing known from 0x80.
 */
static const char names[] = "Outer.run()\0Outer.java\0Mix.mix(long)\0Mix.java\0Add.add(int)";
#define N_OUTER 0
#define N_OUTER_JAVA 12
#define N_MIX 23
#define N_MIX_JAVA 37
#define N_ADD 46

static const struct jt_inline_scope scopes[] = {
	{ .name = N_OUTER, .file = N_OUTER_JAVA, .line = 5, .caller = JT_INLINE_NONE },
	{ .name = N_OUTER, .file = N_OUTER_JAVA, .line = 6, .caller = JT_INLINE_NONE },
	{ .name = N_MIX, .file = N_MIX_JAVA, .line = 9, .caller = 1 },
	{ .name = N_ADD, .file = N_MIX_JAVA, .line = 20, .caller = 2 },
};

static const struct jt_inline_range ranges[] = {
	{ .off = 0x10, .scope = 0 }, { .off = 0x40, .scope = 2 }, { .off = 0x80, .scope = 3 },
};

/* The record, with what it says changed by the caller before it is added. */
static struct jt_rec_inline *inline_rec(union rbuf *rb)
{
	size_t var = sizeof(ranges) + sizeof(scopes) + sizeof(names);
	struct jt_rec_inline *r = (void *)rb->b;
	char *p = (char *)(r + 1);

	memset(rb, 0, sizeof(*rb));
	r->h = (struct jt_rec_hdr){ .type = JT_REC_INLINE, .size = jt_round8(sizeof(*r) + var),
				    .ts = T0 + 10 };
	r->method = 1;
	r->pid = PID;
	r->head = (struct jt_inline_head){ .nr_ranges = JT_ARRAY_SIZE(ranges),
					   .nr_scopes = JT_ARRAY_SIZE(scopes),
					   .names_len = sizeof(names) };
	memcpy(p, ranges, sizeof(ranges));
	memcpy(p + sizeof(ranges), scopes, sizeof(scopes));
	memcpy(p + sizeof(ranges) + sizeof(scopes), names, sizeof(names));
	return r;
}

static void method_rec(union rbuf *rb, uint64_t id, uint64_t start, const char *name)
{
	struct jt_rec_method *m = (void *)rb->b;

	memset(rb, 0, sizeof(*rb));
	m->h = (struct jt_rec_hdr){ .type = JT_REC_METHOD,
				    .size = jt_round8(sizeof(*m) + strlen(name)), .ts = T0 + 10 };
	m->id = id;
	m->pid = PID;
	m->start = start;
	m->size = 0x100;
	m->src = JT_SRC_AGENT;
	m->name_len = strlen(name);
	memcpy(m->name, name, m->name_len);
}

/* A logview that has read Outer.run()'s definition and r. */
static struct jt_lv *lv_with(const struct jt_rec_inline *r)
{
	struct jt_lv *lv = jt_lv__new();
	union rbuf rb;

	assert_non_null(lv);
	method_rec(&rb, 1, OUTER, "Outer.run()");
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	assert_int_equal(jt_lv__add(lv, &r->h), 0);
	return lv;
}

/* "NAME@FILE:LINE<..." for the chain at off (a return address if caller). */
static char *chain(const struct jt_lv *lv, uint64_t off, bool caller)
{
	static char buf[512];
	struct jt_frame f = { .ref = JT_FRAME_REF(JT_FRAME_METHOD, 1), .off = off };
	struct jt_lv_scope sc[JT_LV_DEPTH_MAX];
	unsigned int n = jt_lv__frame_scopes(lv, &f, caller, sc, JT_LV_DEPTH_MAX), i;
	size_t len = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s@%s:%u", i ? "<" : "",
				sc[i].name, jt_lv__file(lv, sc[i].file), sc[i].line);
	return buf;
}

/* Each code byte's chain is the first entry's after it; a return address, its call's. */
static void test_scopes_of_a_leaf_and_of_a_return_address(void **state)
{
	union rbuf rb;
	struct jt_lv *lv = lv_with(inline_rec(&rb));
	struct jt_frame f = { .ref = JT_FRAME_REF(JT_FRAME_METHOD, 1), .off = 0x20 };
	uint32_t file, line;

	(void)state;
	assert_string_equal(chain(lv, 0x0, false), "Outer.run()@Outer.java:5");
	assert_string_equal(chain(lv, 0xf, false), "Outer.run()@Outer.java:5");
	assert_string_equal(chain(lv, 0x10, false), "Mix.mix(long)@Mix.java:9<Outer.run()@Outer.java:6");
	assert_string_equal(chain(lv, 0x40, false),
			    "Add.add(int)@Mix.java:20<Mix.mix(long)@Mix.java:9<Outer.run()@Outer.java:6");
	/* a call that ends at 0x40 is the instruction before: mix's */
	assert_string_equal(chain(lv, 0x40, true), "Mix.mix(long)@Mix.java:9<Outer.run()@Outer.java:6");
	assert_string_equal(chain(lv, 0x80, false), "");	/* past the last entry */
	assert_string_equal(chain(lv, 0x100, false), "");	/* past the method */
	/* a frame's line is its innermost scope's */
	assert_true(jt_lv__frame_line(lv, &f, false, &file, &line));
	assert_string_equal(jt_lv__file(lv, file), "Mix.java");
	assert_int_equal(line, 9);
	assert_true(jt_lv__has_lines(lv));
	assert_true(jt_lv__method_has_lines(lv, 1));
	jt_lv__free(lv);
}

/* A record that breaks a promise is not taken in: the method keeps no scopes. */
static void test_crafted_scopes_are_refused(void **state)
{
	union rbuf rb;
	struct jt_rec_inline *r;
	struct jt_inline_scope *sc;
	struct jt_inline_range *rg;
	struct jt_lv *lv;
	int k;

	(void)state;
	for (k = 0; k < 6; k++) {
		r = inline_rec(&rb);
		rg = (void *)(r + 1);
		sc = (void *)(rg + JT_ARRAY_SIZE(ranges));
		switch (k) {
		case 0:
			sc[1].caller = 1;		/* its own caller: a loop */
			break;
		case 1:
			sc[2].caller = 3;		/* a caller after it */
			break;
		case 2:
			rg[1].scope = 4;		/* no such scope */
			break;
		case 3:
			sc[3].name = sizeof(names);	/* past the names */
			break;
		case 4:
			r->head.names_len = 4096;	/* past the record */
			break;
		case 5:
			r->pid = PID + 1;		/* another process's method */
			break;
		}
		lv = lv_with(r);
		assert_string_equal(chain(lv, 0x20, false), "");
		jt_lv__free(lv);
	}
	/* a new definition of the method forgets its scopes */
	lv = lv_with(inline_rec(&rb));
	method_rec(&rb, 1, OUTER, "Outer.run()");
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	assert_string_equal(chain(lv, 0x20, false), "");
	jt_lv__free(lv);
}

/* ---- views, over a log ---- */

static void sample(struct jt_log_writer *w, uint64_t ts, const struct jt_frame *fr, unsigned n)
{
	union rbuf rb;
	struct jt_rec_sample *s = (void *)rb.b;

	memset(&rb, 0, sizeof(rb));
	s->h = (struct jt_rec_hdr){ .type = JT_REC_SAMPLE,
				    .size = sizeof(*s) + n * sizeof(*fr), .ts = T0 + ts };
	s->pid = PID;
	s->tid = PID;
	s->nr_frames = n;
	memcpy(s->frames, fr, n * sizeof(*fr));
	assert_int_equal(jt_logw__append(w, &rb.h), 0);
}

#define FM(id, o) { .ref = JT_FRAME_REF(JT_FRAME_METHOD, id), .off = (o) }

/* An off-CPU wait of 2 ms that left from frames (leaf first). */
static void wait_in(struct jt_log_writer *w, uint64_t ts, const struct jt_frame *fr, unsigned n)
{
	union rbuf rb;
	struct jt_rec_offcpu *o = (void *)rb.b;

	memset(&rb, 0, sizeof(rb));
	o->h = (struct jt_rec_hdr){ .type = JT_REC_OFFCPU,
				    .size = sizeof(*o) + n * sizeof(*fr), .ts = T0 + ts };
	o->off_ns = 2000000;
	o->count = 1;
	o->state = JT_OFF_SLEEP;
	o->smp.h = (struct jt_rec_hdr){ .type = JT_REC_SAMPLE,
					.size = sizeof(o->smp) + n * sizeof(*fr), .ts = T0 + ts - 2 };
	o->smp.pid = PID;
	o->smp.tid = PID;
	o->smp.nr_frames = n;
	memcpy(o->smp.frames, fr, n * sizeof(*fr));
	assert_int_equal(jt_logw__append(w, &rb.h), 0);
}

/*
 * Main.main() calls Outer.run(): 3 samples in mix inlined there (+0x20), 2 in add inlined
 * into that mix (+0x50), 1 in run itself (+0x5); and one where run, at the call that ends
 * at +0x40 (mix's), called main (leaf, +0x4). Off the CPU: 2 ms left from add (+0x50).
 */
static void write_log(const char *path)
{
	const struct jt_frame in_mix[] = { FM(1, 0x20), FM(2, 0x8) };
	const struct jt_frame in_add[] = { FM(1, 0x50), FM(2, 0x8) };
	const struct jt_frame in_run[] = { FM(1, 0x5), FM(2, 0x8) };
	const struct jt_frame calling[] = { FM(2, 0x4), FM(1, 0x40) };
	struct jt_log_header h = { .start_ns = T0, .sample_hz = 99, .flags = JT_LOG_F_OFFCPU };
	struct jt_log_writer *w = jt_logw__create(path, &h, false);
	union rbuf rb;
	struct jt_rec_proc *p = (void *)rb.b;
	int i;

	assert_non_null(w);
	memset(&rb, 0, sizeof(rb));
	p->h = (struct jt_rec_hdr){ .type = JT_REC_PROC, .size = sizeof(*p), .ts = T0 };
	p->pid = PID;
	memcpy(p->comm, "java", 4);
	assert_int_equal(jt_logw__append(w, &rb.h), 0);
	method_rec(&rb, 1, OUTER, "Outer.run()");
	assert_int_equal(jt_logw__append(w, &rb.h), 0);
	assert_int_equal(jt_logw__append(w, &inline_rec(&rb)->h), 0);
	method_rec(&rb, 2, MAIN, "Main.main()");
	assert_int_equal(jt_logw__append(w, &rb.h), 0);
	for (i = 0; i < 3; i++)
		sample(w, 20 + i, in_mix, 2);
	for (i = 0; i < 2; i++)
		sample(w, 30 + i, in_add, 2);
	sample(w, 40, in_run, 2);
	sample(w, 50, calling, 2);
	wait_in(w, 60, in_add, 2);
	assert_int_equal(jt_logw__close(w), 0);
}

/*
 * What a view printed into memory for the log t holds, NUL-terminated (free it). Not
 * inlined: gcc 12 then takes the memstream's buffer for this frame's own variable.
 */
static __attribute__((noinline)) char *
printed(struct vl_tmp *t, int (*view)(FILE *out, const char *path, void *opts), void *opts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	unlink(t->log);		/* a test may print twice */
	write_log(t->log);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(view(f, t->log, opts), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static int folded(FILE *out, const char *path, void *opts)
{
	struct jt_flame_opts o = { .path = path, .folded = true };

	(void)opts;
	jt_filter__init(&o.filter);
	return jt_flamegraph(out, &o);
}

static int folded_annotated(FILE *out, const char *path, void *opts)
{
	struct jt_flame_opts o = { .path = path, .folded = true, .annotate = true };

	(void)opts;
	jt_filter__init(&o.filter);
	return jt_flamegraph(out, &o);
}

static int svg(FILE *out, const char *path, void *opts)
{
	struct jt_flame_opts o = { .path = path };

	(void)opts;
	jt_filter__init(&o.filter);
	return jt_flamegraph(out, &o);
}

static int report(FILE *out, const char *path, void *opts)
{
	struct jt_report_opts o = { .path = path, .top = 20, .procs = 10 };

	(void)opts;
	jt_filter__init(&o.filter);
	return jt_report(out, &o);
}

static int speedscope(FILE *out, const char *path, void *opts)
{
	(void)opts;
	return jt_export_speedscope(out, path, NULL);
}

/* The fill of the first frame whose text is text (">NAME<"), as r, g, b; -1 if none. */
static int fill_of(const char *svg_text, const char *text, int *r, int *g, int *b)
{
	const char *t = strstr(svg_text, text), *f;

	if (!t)
		return -1;
	for (f = t; f > svg_text && strncmp(f, "fill=\"rgb(", 10); f--)
		;
	return sscanf(f, "fill=\"rgb(%d,%d,%d)", r, g, b) == 3 ? 0 : -1;
}

/* Folded stacks and the SVG: a frame per inlined method, marked _[i] (and cyan). */
static void test_folded_stacks_expand_inlined_frames(void **state)
{
	char *buf = printed(*state, folded, NULL);
	int r, g, b;

	assert_non_null(strstr(buf, "Main.main();Outer.run();Mix.mix(long)_[i] 3\n"));
	assert_non_null(strstr(buf, "Main.main();Outer.run();Mix.mix(long)_[i];Add.add(int)_[i] 2\n"));
	assert_non_null(strstr(buf, "Main.main();Outer.run() 1\n"));
	assert_non_null(strstr(buf, "Outer.run();Mix.mix(long)_[i];Main.main() 1\n"));
	free(buf);
	/* in the SVG an inlined frame is cyan (green and blue high), its method green */
	buf = printed(*state, svg, NULL);
	assert_int_equal(fill_of(buf, ">Mix.mix(long)_[i]<", &r, &g, &b), 0);
	assert_true(r < 110 && g >= 190 && b >= 190);
	assert_int_equal(fill_of(buf, ">Outer.run()<", &r, &g, &b), 0);
	assert_true(g >= 170 && b < 120);
	free(buf);
	/* annotated, the methods compiled are _[j], those inlined into them _[i] alone */
	buf = printed(*state, folded_annotated, NULL);
	assert_non_null(strstr(buf, "Main.main()_[j];Outer.run()_[j];Mix.mix(long)_[i];"
				    "Add.add(int)_[i] 2\n"));
	free(buf);
}

/*
 * The report charges self samples to the innermost method and shows its line; an off-CPU
 * wait goes to every method inlined on its stack, where it blocked to the innermost.
 */
static void test_report_charges_the_innermost_method_with_its_line(void **state)
{
	char *buf = printed(*state, report, NULL);
	/* self 3 of 7 samples; total 6: add's 2 under it, and the call to main from it */
	const char *row = strstr(buf, "        3  42.9%         6  85.7%  jit     Mix.mix(long)_[i]");

	assert_non_null(row);
	assert_non_null(strstr(row, "Mix.java:9"));
	assert_non_null(strstr(buf, "        2  28.6%         2  28.6%  jit     Add.add(int)_[i]"));
	assert_non_null(strstr(buf, "Mix.java:20"));
	assert_non_null(strstr(buf, "Outer.java:5"));	/* run's own sample */
	/* off the CPU: the wait left from add, inlined into mix, inlined into run */
	assert_non_null(strstr(buf, "      2.000 100.0%       2.000       1     20.202  jit     "
				    "Add.add(int)_[i]\n"));
	assert_non_null(strstr(buf, "      2.000 100.0%       0.000       1     60.606  jit     "
				    "Mix.mix(long)_[i]\n"));
	assert_non_null(strstr(buf, "      2.000 100.0%       0.000       1     70.707  jit     "
				    "Outer.run()\n"));
	free(buf);
}

static void test_speedscope_has_inlined_frames_in_their_files(void **state)
{
	char *buf = printed(*state, speedscope, NULL);

	assert_non_null(strstr(buf, "{\"name\":\"Mix.mix(long)_[i]\",\"file\":\"Mix.java\"}"));
	assert_non_null(strstr(buf, "{\"name\":\"Add.add(int)_[i]\",\"file\":\"Mix.java\"}"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scopes_of_a_leaf_and_of_a_return_address),
		cmocka_unit_test(test_crafted_scopes_are_refused),
		cmocka_unit_test_setup_teardown(test_folded_stacks_expand_inlined_frames,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_charges_the_innermost_method_with_its_line,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_has_inlined_frames_in_their_files,
						vl_setup, vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
