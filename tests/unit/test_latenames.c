// SPDX-License-Identifier: GPL-2.0
/* Unit tests for late names read ahead and applied to samples (user/log/latenames.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jt_events.h"
#include "jt_log_format.h"
#include "log/latenames.h"

#define PID 77
#define CODE 0x7f0000010000ULL

union rec {
	struct jt_rec_hdr h;
	struct jt_rec_method m;
	struct jt_rec_lines l;
	struct jt_rec_late late;
	struct jt_rec_sample s;
	char bytes[512];
};

static void method(union rec *r, uint64_t id, uint16_t src, const char *name)
{
	size_t n = strlen(name);

	memset(r, 0, sizeof(*r));
	r->m = (struct jt_rec_method){
		.h = { .type = JT_REC_METHOD, .size = (sizeof(r->m) + n + 7) & ~7U, .ts = 10 },
		.id = id, .start = CODE, .size = 0x100, .pid = PID, .src = src, .name_len = n,
	};
	memcpy(r->m.name, name, n);
}

static void lines(union rec *r, uint64_t id)
{
	memset(r, 0, sizeof(*r));
	r->l = (struct jt_rec_lines){
		.h = { .type = JT_REC_LINES, .size = sizeof(r->l) + sizeof(struct jt_line) + 8,
		       .ts = 10 },
		.method = id, .pid = PID, .nr_lines = 1, .names_len = 2,
	};
	r->l.lines[0] = (struct jt_line){ .off = 0, .line = 7, .file = 0 };
	memcpy((char *)&r->l.lines[1], "f", 2);
}

static void late(union rec *r, uint64_t id, uint64_t from, uint64_t ts)
{
	memset(r, 0, sizeof(*r));
	r->late = (struct jt_rec_late){
		.h = { .type = JT_REC_LATE, .size = sizeof(r->late), .ts = ts },
		.method = id, .start = CODE, .size = 0x100, .from_ts = from, .pid = PID,
	};
}

/* A sample of pid at ts: a kernel frame, then user frames at ips. */
static void sample(union rec *r, uint32_t pid, uint64_t ts, const uint64_t *ips, unsigned n)
{
	unsigned i;

	memset(r, 0, sizeof(*r));
	r->s = (struct jt_rec_sample){
		.h = { .type = JT_REC_SAMPLE, .size = sizeof(r->s) + (n + 1) * sizeof(struct jt_frame),
		       .ts = ts },
		.pid = pid, .tid = pid, .nr_frames = n + 1,
	};
	r->s.frames[0] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_KERNEL, 0), 0xffffffff81000000 };
	for (i = 0; i < n; i++)
		r->s.frames[i + 1] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 0), ips[i] };
}

static struct jt_latenames *read_ahead(void)
{
	struct jt_latenames *ln = jt_latenames__new();
	union rec r;

	assert_non_null(ln);
	method(&r, 1, JT_SRC_AGENT, "agent_fn");	/* never named late: not kept */
	assert_int_equal(jt_latenames__take(ln, &r.h), 0);
	method(&r, 2, JT_SRC_PERFMAP, "late_fn");
	assert_int_equal(jt_latenames__take(ln, &r.h), 0);
	lines(&r, 2);
	assert_int_equal(jt_latenames__take(ln, &r.h), 0);
	method(&r, 3, JT_SRC_PERFMAP, "on_time_fn");	/* no late name: not kept */
	assert_int_equal(jt_latenames__take(ln, &r.h), 0);
	late(&r, 2, 100, 200);
	assert_int_equal(jt_latenames__take(ln, &r.h), 0);
	assert_int_equal(jt_latenames__ready(ln), 0);
	return ln;
}

/* What a view must know before the samples: the method, then its lines; nothing else. */
static void definitions_come_with_their_lines(void **state)
{
	struct jt_latenames *ln = read_ahead();
	const struct jt_rec_hdr *d;

	(void)state;
	d = jt_latenames__def(ln, 0);
	assert_non_null(d);
	assert_int_equal(d->type, JT_REC_METHOD);
	assert_int_equal(((const struct jt_rec_method *)d)->id, 2);
	d = jt_latenames__def(ln, 1);
	assert_non_null(d);
	assert_int_equal(d->type, JT_REC_LINES);
	assert_int_equal(((const struct jt_rec_lines *)d)->method, 2);
	assert_null(jt_latenames__def(ln, 2));
	jt_latenames__free(ln);
}

/* Bare frames in the range and time are the method's; others stay as they are. */
static void bare_frames_in_range_and_time_are_named(void **state)
{
	struct jt_latenames *ln = read_ahead();
	const struct jt_rec_sample *out;
	uint64_t ips[3] = { CODE + 0x10, CODE + 0x100, CODE + 0x20 };
	union rec r;

	(void)state;
	sample(&r, PID, 150, ips, 3);
	out = jt_latenames__apply(ln, &r.s, 1);
	assert_ptr_not_equal(out, &r.s);
	assert_int_equal(JT_FRAME_KIND(out->frames[0].ref), JT_FRAME_KERNEL);
	assert_int_equal(out->frames[1].ref, JT_FRAME_REF(JT_FRAME_METHOD, 2));
	assert_int_equal(out->frames[1].off, 0x10);
	/* a caller's return address just past the method: its call is in it */
	assert_int_equal(out->frames[2].ref, JT_FRAME_REF(JT_FRAME_METHOD, 2));
	assert_int_equal(out->frames[2].off, 0x100);
	assert_int_equal(out->frames[3].ref, JT_FRAME_REF(JT_FRAME_METHOD, 2));
	assert_int_equal(jt_latenames__named(ln), 1);

	/* the leaf just past the end is not in it */
	ips[0] = CODE + 0x100;
	sample(&r, PID, 150, ips, 1);
	assert_ptr_equal(jt_latenames__apply(ln, &r.s, 1), &r.s);
	/* at the line's very time: written before the line was read, so bare, and its */
	ips[0] = CODE + 0x10;
	sample(&r, PID, 200, ips, 1);
	out = jt_latenames__apply(ln, &r.s, 1);
	assert_int_equal(out->frames[1].ref, JT_FRAME_REF(JT_FRAME_METHOD, 2));
	/* before from_ts, after the line's time, or another process: as it was */
	sample(&r, PID, 99, ips, 1);
	assert_ptr_equal(jt_latenames__apply(ln, &r.s, 1), &r.s);
	sample(&r, PID, 201, ips, 1);
	assert_ptr_equal(jt_latenames__apply(ln, &r.s, 1), &r.s);
	sample(&r, PID + 1, 150, ips, 1);
	assert_ptr_equal(jt_latenames__apply(ln, &r.s, 1), &r.s);
	assert_int_equal(jt_latenames__named(ln), 2);
	jt_latenames__free(ln);
}

/* A late name of a method the log never defined, and a free before ready(), leak nothing. */
static void half_read_tables_are_freed(void **state)
{
	struct jt_latenames *ln = jt_latenames__new();
	union rec r;

	(void)state;
	assert_non_null(ln);
	method(&r, 2, JT_SRC_JITDUMP, "x");
	assert_int_equal(jt_latenames__take(ln, &r.h), 0);
	lines(&r, 2);
	assert_int_equal(jt_latenames__take(ln, &r.h), 0);
	jt_latenames__free(ln);

	ln = jt_latenames__new();
	assert_non_null(ln);
	late(&r, 9, 0, 10);
	assert_int_equal(jt_latenames__take(ln, &r.h), 0);
	assert_int_equal(jt_latenames__ready(ln), 0);
	assert_null(jt_latenames__def(ln, 0));
	jt_latenames__free(ln);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(definitions_come_with_their_lines),
		cmocka_unit_test(bare_frames_in_range_and_time_are_named),
		cmocka_unit_test(half_read_tables_are_freed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
