// SPDX-License-Identifier: GPL-2.0
/*
 * Logs read as one recording: a directory of segments in time order, their repeated
 * definitions passed over and their ids kept; independent logs merged by time with ids that
 * never meet; --last opening only the segments it needs; a directory without logs, or with
 * something else in it, said.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "log/log.h"
#include "log/set.h"
#include "log/source.h"
#include "log/segment.h"
#include "base/util.h"

#define SEC 1000000000ULL
#define T0 (100 * SEC)

union rb {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[512];
};

static struct jt_rec_hdr *mk(union rb *r, unsigned type, size_t fixed, size_t var, uint64_t ts)
{
	memset(r, 0, sizeof(*r));
	r->h.type = type;
	r->h.size = jt_round8(fixed + var);
	r->h.ts = ts;
	return &r->h;
}

static void put(const struct jt_sink *s, const struct jt_rec_hdr *h)
{
	assert_int_equal(jt_sink__emit(s, h), 0);
}

static void proc(const struct jt_sink *s, uint64_t ts, uint32_t pid, const char *comm)
{
	union rb r;
	struct jt_rec_proc *p = (void *)mk(&r, JT_REC_PROC, sizeof(*p), 0, ts);

	p->pid = pid;
	strncpy(p->comm, comm, sizeof(p->comm) - 1);
	put(s, &r.h);
}

static void method(const struct jt_sink *s, uint64_t ts, uint64_t id, uint32_t pid,
		   const char *name)
{
	union rb r;
	struct jt_rec_method *m = (void *)mk(&r, JT_REC_METHOD, sizeof(*m), strlen(name), ts);

	m->id = id;
	m->pid = pid;
	m->size = 0x100;
	m->name_len = strlen(name);
	memcpy(m->name, name, m->name_len);
	put(s, &r.h);
}

static void sample(const struct jt_sink *s, uint64_t ts, uint32_t pid, uint64_t id)
{
	union rb r;
	struct jt_rec_sample *smp = (void *)mk(&r, JT_REC_SAMPLE, sizeof(*smp),
					       sizeof(struct jt_frame), ts);

	smp->pid = pid;
	smp->tid = pid;
	smp->nr_frames = 1;
	smp->frames[0] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_METHOD, id), 0x10 };
	put(s, &r.h);
}

static void call(const struct jt_sink *s, unsigned type, uint64_t ts, uint32_t pid, uint64_t id)
{
	union rb r;
	struct jt_rec_call *c = (void *)mk(&r, type, sizeof(*c), 0, ts);

	c->pid = pid;
	c->tid = pid;
	c->id = id;
	put(s, &r.h);
}

struct tmp {
	char dir[256];
	char path[512];
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t || scratch_make(t->dir, sizeof(t->dir), "logset")) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;
	char sub[300];

	snprintf(sub, sizeof(sub), "%s/segs", t->dir);
	scratch_remove(sub);
	scratch_remove(t->dir);
	free(t);
	return 0;
}

static const char *tpath(struct tmp *t, const char *name)
{
	snprintf(t->path, sizeof(t->path), "%s/%s", t->dir, name);
	return t->path;
}

static struct jt_log_header header(uint64_t start, int64_t offset)
{
	return (struct jt_log_header){ .start_ns = start, .realtime_offset_ns = offset,
				       .sample_hz = 1000, .hostname = "h",
				       .flags = JT_LOG_F_CALLS | JT_LOG_F_OFFCPU };
}

/* A log of pid whose method 1 is name, sampled n times from start, 1 ms apart. */
static void write_log(const char *path, uint64_t start, uint32_t pid, const char *name, int n)
{
	struct jt_log_header h = header(start, 7);
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	struct jt_sink s = jt_logw__sink(w);
	int i;

	assert_non_null(w);
	proc(&s, start, pid, name);
	method(&s, start, 1, pid, name);
	for (i = 0; i < n; i++)
		sample(&s, start + i * 1000000ULL, pid, 1);
	assert_int_equal(jt_logw__close(w), 0);
}

/* The leaf's name of every sample through a log source of path (+ more), in order. */
static int leaves(const char *path, struct jt_filter *f, char names[][32], uint64_t *ts,
		  int max)
{
	const struct jt_rec_hdr *rec;
	struct jt_logsrc src;
	uint64_t last = 0;
	bool kept;
	int n = 0;

	assert_int_equal(jt_logsrc__open(&src, path, f), 0);
	while ((rec = jt_logsrc__next(&src, &kept))) {
		const struct jt_rec_sample *s = (const void *)rec;
		char buf[JT_LOGSRC_NAME_CAP];
		const char *file;
		enum jt_lv_kind kind;

		assert_true(rec->ts >= last);	/* in time order */
		last = rec->ts;
		if (rec->type != JT_REC_SAMPLE || !kept)
			continue;
		assert_true(n < max);
		snprintf(names[n], 32, "%s", jt_logsrc__frame(&src, &s->frames[0], buf, &file,
							     &kind));
		ts[n++] = rec->ts;
	}
	assert_int_equal(jt_logsrc__finish(&src, "read"), 0);
	jt_logsrc__close(&src);
	return n;
}

/* Two recordings at once, each with its own method 1: merged by time, each named its own. */
static void independent_logs_merge_by_time_with_their_own_names(void **state)
{
	struct tmp *t = *state;
	char a[512], b[512], names[64][32], *more[1] = { b };
	uint64_t ts[64];
	struct jt_filter f;
	int n, i, na = 0, nb = 0;

	snprintf(a, sizeof(a), "%s", tpath(t, "a.jtl"));
	snprintf(b, sizeof(b), "%s", tpath(t, "b.jtl"));
	write_log(a, T0, 1, "a_fn", 10);
	write_log(b, T0 + 500000, 2, "b_fn", 10);	/* half a sample after a's */
	jt_filter__init(&f);
	f.more = more;
	f.nr_more = 1;
	n = leaves(a, &f, names, ts, 64);
	assert_int_equal(n, 20);
	for (i = 0; i < n; i++) {
		/* interleaved a, b, a, b, ... each with its own name */
		assert_string_equal(names[i], i % 2 ? "b_fn" : "a_fn");
		na += !strcmp(names[i], "a_fn");
		nb += !strcmp(names[i], "b_fn");
	}
	assert_int_equal(na, 10);
	assert_int_equal(nb, 10);
}

/* A log of pid whose off-CPU records hold a user address in its anonymous module 1, named
 * anon, over its method 1, named name. */
static void write_offcpu_log(const char *path, uint64_t start, uint32_t pid, const char *anon,
			     const char *name)
{
	struct jt_log_header h = header(start, 7);
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	struct jt_sink s = jt_logw__sink(w);
	struct jt_rec_module *m;
	struct jt_rec_offcpu *o;
	union rb r;

	assert_non_null(w);
	proc(&s, start, pid, name);
	m = (void *)mk(&r, JT_REC_MODULE, sizeof(*m), strlen(anon), start);
	m->id = 1;
	m->pid = pid;
	m->path_len = strlen(anon);
	memcpy(m->path, anon, m->path_len);
	put(&s, &r.h);
	method(&s, start, 1, pid, name);
	o = (void *)mk(&r, JT_REC_OFFCPU, sizeof(*o), 2 * sizeof(struct jt_frame), start + 1000);
	o->off_ns = 1000;
	o->count = 1;
	o->state = JT_OFF_SLEEP;
	o->smp.h = (struct jt_rec_hdr){ .type = JT_REC_SAMPLE,
					.size = o->h.size - offsetof(struct jt_rec_offcpu, smp),
					.ts = start };
	o->smp.pid = pid;
	o->smp.tid = pid;
	o->smp.nr_frames = 2;
	o->smp.frames[0] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 1), 0x7f0000001000 };
	o->smp.frames[1] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_METHOD, 1), 0x10 };
	put(&s, &r.h);
	assert_int_equal(jt_logw__close(w), 0);
}

/* Off-CPU records of two logs read as one: their frames, anonymous memory's too, their own. */
static void offcpu_frames_of_merged_logs_keep_their_names(void **state)
{
	struct tmp *t = *state;
	char a[512], b[512], got[4][64], buf[JT_LOGSRC_NAME_CAP], *more[1] = { b };
	const struct jt_rec_hdr *rec;
	struct jt_logsrc src;
	struct jt_filter f;
	enum jt_lv_kind kind;
	const char *file;
	int n = 0;

	snprintf(a, sizeof(a), "%s", tpath(t, "oa.jtl"));
	snprintf(b, sizeof(b), "%s", tpath(t, "ob.jtl"));
	write_offcpu_log(a, T0, 1, "[java jit]", "a_fn");
	write_offcpu_log(b, T0 + 500, 2, "[node jit]", "b_fn");
	jt_filter__init(&f);
	f.more = more;
	f.nr_more = 1;
	assert_int_equal(jt_logsrc__open(&src, a, &f), 0);
	while ((rec = jt_logsrc__next(&src, NULL))) {
		const struct jt_rec_offcpu *o = (const void *)rec;

		if (rec->type != JT_REC_OFFCPU)
			continue;
		assert_true(n < 4);
		snprintf(got[n++], 64, "%s", jt_logsrc__frame(&src, &o->smp.frames[0], buf, &file,
							      &kind));
		snprintf(got[n++], 64, "%s", jt_logsrc__frame(&src, &o->smp.frames[1], buf, &file,
							      &kind));
	}
	assert_int_equal(jt_logsrc__finish(&src, "read"), 0);
	jt_logsrc__close(&src);
	assert_int_equal(n, 4);
	assert_string_equal(got[0], "[java jit]");
	assert_string_equal(got[1], "a_fn");
	assert_string_equal(got[2], "[node jit]");
	assert_string_equal(got[3], "b_fn");
}

/* Segments through the segment writer: samples every 10 ms, a segment every nr_per. */
static void write_segments(const char *dir, int nr, int per, int nr_per)
{
	struct jt_log_header h = header(T0, 7);
	struct jt_segment_opts o = { .dir = dir, .rotate_ns = 1ULL << 62, .hdr = &h };
	struct jt_segment *sg = jt_segment__open(&o);
	struct jt_sink s;
	uint64_t ts = T0;
	int i, k;

	assert_non_null(sg);
	s = jt_segment__sink(sg);
	proc(&s, ts, 5, "app");
	method(&s, ts, 1, 5, "hot");
	method(&s, ts, 2, 5, "cold");
	for (i = 0; i < nr; i++) {
		for (k = 0; k < per; k++) {
			ts += 10000000ULL;
			sample(&s, ts, 5, k % 2 ? 2 : 1);
			/* a call open across the segment's end */
			if (k == per - 1)
				call(&s, JT_REC_ENTER, ts, 5, 1);
			if (k == 0 && i)
				call(&s, JT_REC_LEAVE, ts, 5, 1);
		}
		if (i + 1 < nr && (i + 1) % nr_per == 0)
			assert_int_equal(jt_segment__tick(sg, jt_now_ns(), true), 0);
	}
	assert_int_equal(jt_segment__close(sg), 0);
	jt_segment__free(sg);
}

/* A directory of segments: one recording, its ids as the recorder gave them, once each. */
static void segments_read_as_one_recording(void **state)
{
	struct tmp *t = *state;
	char dir[512], names[512][32];
	const struct jt_rec_hdr *rec;
	struct jt_logsrc src;
	uint64_t ts[512];
	int n, methods = 0, enters = 0, leaves_ = 0;

	snprintf(dir, sizeof(dir), "%s", tpath(t, "segs"));
	write_segments(dir, 3, 100, 1);		/* 3 segments of 1 s */
	n = leaves(dir, NULL, names, ts, 512);
	assert_int_equal(n, 300);
	assert_int_equal(jt_logsrc__open(&src, dir, NULL), 0);
	while ((rec = jt_logsrc__next(&src, NULL))) {
		const struct jt_rec_method *m = (const void *)rec;
		const struct jt_rec_call *c = (const void *)rec;

		if (rec->type == JT_REC_METHOD) {
			methods++;
			assert_true(m->id == 1 || m->id == 2);	/* the recorder's ids */
		}
		if (rec->type == JT_REC_ENTER || rec->type == JT_REC_LEAVE) {
			assert_int_equal(c->id, 1);	/* one method across segments */
			enters += rec->type == JT_REC_ENTER;
			leaves_ += rec->type == JT_REC_LEAVE;
		}
	}
	assert_int_equal(jt_logsrc__finish(&src, "read"), 0);
	assert_int_equal(methods, 2);	/* each segment defined them again: passed over */
	assert_int_equal(enters, 3);
	assert_int_equal(leaves_, 2);
	assert_int_equal(jt_logset__logs(src.r), 3);
	assert_int_equal(jt_logset__read(src.r), 3);
	jt_logsrc__close(&src);
}

/* --last 0.5 of 3 segments of 1 s: only the last one opened, and half of it kept. */
static void last_opens_only_the_segments_it_needs(void **state)
{
	struct tmp *t = *state;
	char dir[512], names[512][32];
	struct jt_logsrc src;
	struct jt_filter f;
	uint64_t ts[512], end = T0 + 300 * 10000000ULL;
	int n, i;

	snprintf(dir, sizeof(dir), "%s", tpath(t, "segs"));
	write_segments(dir, 3, 100, 1);
	jt_filter__init(&f);
	assert_int_equal(jt_filter__parse(&f, "--last", "0.5"), 0);
	n = leaves(dir, &f, names, ts, 512);
	assert_int_equal(n, 51);		/* 2.5 s to 3.0 s, both ends in */
	for (i = 0; i < n; i++)
		assert_true(ts[i] >= end - SEC / 2);
	assert_int_equal(jt_logsrc__open(&src, dir, &f), 0);
	while (jt_logsrc__next(&src, NULL))
		;
	assert_int_equal(jt_logset__read(src.r), 1);
	assert_int_equal(src.filter.from_ns, end - SEC / 2);
	jt_logsrc__close(&src);
	/* --last 1.5: the last two, the first not opened */
	jt_filter__init(&f);
	assert_int_equal(jt_filter__parse(&f, "--last", "1.5"), 0);
	assert_int_equal(jt_logsrc__open(&src, dir, &f), 0);
	while (jt_logsrc__next(&src, NULL))
		;
	assert_int_equal(jt_logset__read(src.r), 2);
	jt_logsrc__close(&src);
}

/* stderr into a file while fn runs; what it said, NUL-terminated. */
static char *said(struct tmp *t, int (*fn)(struct tmp *t), int *ret)
{
	char path[600];
	size_t len;
	int fd, saved;

	snprintf(path, sizeof(path), "%s/stderr", t->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	*ret = fn(t);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	return slurp(path, &len);
}

static int open_dir_of_t(struct tmp *t)
{
	struct jt_logsrc src;
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/segs", t->dir);
	if (jt_logsrc__open(&src, dir, NULL))
		return -1;
	jt_logsrc__close(&src);
	return 0;
}

static void a_directory_without_logs_or_with_another_file_is_said(void **state)
{
	struct tmp *t = *state;
	char dir[512], junk[600];
	char *text;
	int fd, ret;

	snprintf(dir, sizeof(dir), "%s/segs", t->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	text = said(t, open_dir_of_t, &ret);
	assert_int_equal(ret, -1);
	assert_non_null(strstr(text, "/segs: no logs (*.jtl) in it\n"));
	free(text);
	rmdir(dir);
	write_segments(dir, 2, 10, 1);
	snprintf(junk, sizeof(junk), "%s/notes.jtl", dir);
	fd = open(junk, O_WRONLY | O_CREAT, 0600);
	assert_int_equal(write(fd, "hello", 5), 5);
	close(fd);
	text = said(t, open_dir_of_t, &ret);
	assert_int_equal(ret, -1);
	assert_non_null(strstr(text, "notes.jtl"));
	free(text);
}

static void last_is_a_filter_like_the_others(void **state)
{
	struct jt_filter f;
	char buf[128];

	(void)state;
	jt_filter__init(&f);
	assert_true(f.last < 0);
	assert_int_equal(jt_filter__parse(&f, "--last", "-3"), -EINVAL);
	assert_int_equal(jt_filter__parse(&f, "--last", "300"), 0);
	assert_int_equal(jt_filter__parse(&f, "--from", "1"), 0);
	assert_true(jt_filter__describe(&f, buf, sizeof(buf)));
	assert_string_equal(buf, "from 1 s, last 300 s");
	/* the later of --from and the end less --last */
	f.end_ns = T0 + 400 * SEC;
	jt_filter__start(&f, T0);
	assert_int_equal(f.from_ns, T0 + 100 * SEC);
	f.end_ns = T0 + 100 * SEC;
	jt_filter__start(&f, T0);
	assert_int_equal(f.from_ns, T0 + SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(independent_logs_merge_by_time_with_their_own_names,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(offcpu_frames_of_merged_logs_keep_their_names,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(segments_read_as_one_recording, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(last_opens_only_the_segments_it_needs, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(
			a_directory_without_logs_or_with_another_file_is_said, tmp_setup,
			tmp_teardown),
		cmocka_unit_test(last_is_a_filter_like_the_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
