// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the collector flow, raw records in, joined records out (user/join/pipeline.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <fcntl.h>
#include <x86intrin.h>

#include "jt_events.h"
#include "jt_log_format.h"
#include "base/event.h"
#include "join/pipeline.h"
#include "join/reorder.h"
#include "host/elfsyms.h"
#include "base/sink.h"
#include "base/util.h"
#include "unit/capture.h"

#define PROC_ROOT "tests/fixtures/proc"
#define PID 4242
#define JIT 0x7f3a40000000ULL	/* the fixture's anonymous rwxp mapping */
#define WINDOW 1000000ULL	/* 1 ms */
#define T0 1000000000000ULL	/* a monotonic clock some time after boot */


struct fx {
	struct capture cap;
	struct jt_sink sink;
	struct jt_pipeline *pl;
};

static struct fx *fx_new_opts(size_t max_pending, size_t max_bytes, bool perfmaps)
{
	struct jt_pipeline_opts o = {
		.window_ns = WINDOW, .max_pending = max_pending, .max_pending_bytes = max_bytes,
		.proc_root = PROC_ROOT, .follow_perfmaps = perfmaps,
	};
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->sink = (struct jt_sink){ capture_record, &f->cap };
	f->pl = jt_pipeline__new(&o, &f->sink);
	assert_non_null(f->pl);
	return f;
}

static struct fx *fx_new(size_t max_pending)
{
	return fx_new_opts(max_pending, 0, false);
}

static int fx_setup(void **state)
{
	*state = fx_new(1 << 20);
	return 0;
}

static void fx_free(struct fx *f)
{
	size_t i;

	jt_pipeline__free(f->pl);
	for (i = 0; i < f->cap.n; i++)
		free(f->cap.recs[i]);
	free(f->cap.recs);
	free(f);
}

static int fx_teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* ---- raw ring-buffer records, as bytes in a buffer of their own ---- */

static void *hdr(void *buf, uint16_t type, uint32_t size, uint64_t ts)
{
	struct jt_ev_hdr *h = buf;

	h->type = type;
	h->size = size;
	h->ts = ts;
	h->pid = PID;
	h->tid = PID + 1;
	return buf;
}

/* Hand a record to the pipeline from a buffer freed right after: it must keep a copy. */
static void feed(struct fx *f, void *buf, size_t len)
{
	assert_int_equal(jt_pipeline__raw(f->pl, buf, len), 0);
	memset(buf, 0x5a, len);
	free(buf);
}

/* The first len bytes of a record built in a struct, in a buffer of exactly len bytes. */
static void feed_copy(struct fx *f, const void *rec, size_t len)
{
	void *buf = malloc(len);

	assert_non_null(buf);
	memcpy(buf, rec, len);
	feed(f, buf, len);
}

static void raw_load(struct fx *f, uint64_t ts, uint64_t id, uint64_t start, uint64_t size,
		     const char *name)
{
	size_t len = jt_round8(JT_EV_CODE_FIXED + strlen(name));
	struct jt_ev_code c = {
		.id = id, .start = start, .size = size, .src = JT_SRC_AGENT,
		.name_len = strlen(name),
	};

	hdr(&c, JT_EV_CODE_LOAD, len, ts);
	memcpy(c.name, name, strlen(name));
	feed_copy(f, &c, len);
}

static void raw_call(struct fx *f, uint16_t type, uint64_t ts, uint64_t id)
{
	struct jt_ev_call c = { .id = id };

	hdr(&c, type, sizeof(c), ts);
	feed_copy(f, &c, sizeof(c));
}

/* An enter or leave of the agent's stubs' uprobes, timed by the caller's TSC */
static void raw_call_tsc(struct fx *f, uint16_t type, uint64_t tsc, uint64_t id)
{
	struct jt_ev_call c = { .id = id };

	hdr(&c, type, sizeof(c), tsc);
	c.h.flags = JT_CALL_TSC;
	feed_copy(f, &c, sizeof(c));
}

static void raw_sample(struct fx *f, uint64_t ts, uint64_t ip)
{
	struct jt_ev_sample s = { .cpu = 0, .nr_user = 1, .ips = { ip } };

	hdr(&s, JT_EV_SAMPLE, JT_EV_SAMPLE_FIXED + 8, ts);
	feed_copy(f, &s, JT_EV_SAMPLE_FIXED + 8);
}

/* ---- reading what came out ---- */

static size_t count_type(const struct fx *f, unsigned int type)
{
	size_t i, n = 0;

	for (i = 0; i < f->cap.n; i++)
		n += f->cap.recs[i]->type == type;
	return n;
}

static const struct jt_rec_drop *drop_of(const struct fx *f, unsigned int what, size_t from)
{
	size_t i;

	for (i = from; i < f->cap.n; i++) {
		const struct jt_rec_drop *d = (const void *)f->cap.recs[i];

		if (d->h.type == JT_REC_DROP && d->what == what)
			return d;
	}
	return NULL;
}

static void assert_ts_nondecreasing(const struct fx *f)
{
	size_t i;

	for (i = 1; i < f->cap.n; i++)
		if (f->cap.recs[i]->ts < f->cap.recs[i - 1]->ts)
			fail_msg("record %zu (type %u) ts %llu after %llu", i,
				 f->cap.recs[i]->type, (unsigned long long)f->cap.recs[i]->ts,
				 (unsigned long long)f->cap.recs[i - 1]->ts);
}

static const struct jt_rec_method *method_def(const struct fx *f, uint64_t id)
{
	size_t i;

	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_method *m = (const void *)f->cap.recs[i];

		if (m->h.type == JT_REC_METHOD && m->id == id)
			return m;
	}
	return NULL;
}

static void assert_sample_names(const struct fx *f, size_t i, const char *name)
{
	const struct jt_rec_sample *s = (const void *)f->cap.recs[i];
	const struct jt_rec_method *m;

	assert_int_equal(s->h.type, JT_REC_SAMPLE);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_METHOD);
	m = method_def(f, JT_FRAME_ID(s->frames[0].ref));
	assert_non_null(m);
	assert_int_equal(m->name_len, strlen(name));
	assert_memory_equal(m->name, name, m->name_len);
}

/* ---- tests ---- */

static void out_of_order_records_come_out_in_order_and_joined(void **state)
{
	struct fx *f = *state;
	struct jt_pipeline_stats st;

	/* the sample arrives before the load it needs, the enter before the earlier sample */
	raw_sample(f, T0 + 3000, JIT + 0x30);
	raw_call(f, JT_EV_ENTER, T0 + 2500, 1);
	raw_load(f, T0 + 1000, 1, JIT, 0x100, "Hot.loop");
	raw_sample(f, T0 + 2000, JIT + 0x20);
	raw_call(f, JT_EV_CODE_UNLOAD, T0 + 3500, 1);
	assert_int_equal(f->cap.n, 0);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.received, 5);
	assert_int_equal(st.pending, 5);

	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 2600 + WINDOW), 0);
	/* out: load (writes nothing yet), sample 2000, enter 2500 */
	assert_int_equal(f->cap.n, 4);
	assert_int_equal(f->cap.recs[0]->type, JT_REC_PROC);
	assert_int_equal(f->cap.recs[1]->type, JT_REC_METHOD);
	assert_int_equal(f->cap.recs[2]->type, JT_REC_SAMPLE);
	assert_int_equal(f->cap.recs[2]->ts, T0 + 2000);
	assert_sample_names(f, 2, "Hot.loop");
	assert_int_equal(f->cap.recs[3]->type, JT_REC_ENTER);
	assert_int_equal(f->cap.recs[3]->ts, T0 + 2500);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.pending, 2);
	assert_int_equal(st.col.samples, 1);

	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 10000 + WINDOW), 0);
	assert_int_equal(f->cap.n, 6);
	assert_int_equal(f->cap.recs[4]->ts, T0 + 3000);
	assert_sample_names(f, 4, "Hot.loop");
	assert_int_equal(f->cap.recs[5]->type, JT_REC_UNLOAD);
	assert_int_equal(count_type(f, JT_REC_METHOD), 1);
	assert_ts_nondecreasing(f);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.lost[JT_DROP_REORDER], 0);
	assert_int_equal(st.lost[JT_DROP_DECODE], 0);
}

static void tick_lets_out_records_at_or_before_now_minus_window(void **state)
{
	struct fx *f = *state;

	raw_sample(f, T0 + 5000, 0x10000);
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 4999 + WINDOW), 0);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 0);
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 5000 + WINDOW), 0);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 1);
}

/* Code re-compiled at one address: the order of arrival must not decide the name. */
static void address_reuse_is_joined_by_time_not_arrival(void **state)
{
	struct fx *f = *state;

	raw_sample(f, T0 + 400, JIT + 8);	/* B's time */
	raw_load(f, T0 + 300, 2, JIT, 0x80, "B");
	raw_call(f, JT_EV_CODE_UNLOAD, T0 + 200, 1);
	raw_sample(f, T0 + 150, JIT + 8);	/* A's time */
	raw_load(f, T0 + 100, 1, JIT, 0x80, "A");
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 2);
	assert_sample_names(f, 2, "A");	/* proc, method A, sample */
	assert_int_equal(f->cap.recs[3]->type, JT_REC_UNLOAD);
	assert_int_equal(f->cap.recs[4]->type, JT_REC_METHOD);
	assert_sample_names(f, 5, "B");
	assert_ts_nondecreasing(f);
}

static void malformed_records_are_counted_as_decode_drops(void **state)
{
	struct fx *f = *state;
	struct jt_pipeline_stats st;
	unsigned char junk[64] = { 1, 2, 3 };
	struct jt_ev_call *c;
	struct jt_ev_code *code;
	const struct jt_rec_drop *d;

	assert_int_equal(jt_pipeline__raw(f->pl, junk, 3), 0);	/* shorter than a header */
	c = hdr(calloc(1, 64), 0x77, sizeof(*c), T0 + 10);	/* unknown type */
	feed(f, c, sizeof(*c));
	c = hdr(calloc(1, 64), JT_EV_ENTER, 64, T0 + 11);	/* size past the buffer */
	feed(f, c, sizeof(*c));
	code = hdr(calloc(1, sizeof(*code)), JT_EV_CODE_LOAD, sizeof(*code), T0 + 12);
	code->src = JT_SRC_AGENT;
	code->name_len = 4000;	/* past the record */
	feed(f, code, sizeof(*code));
	raw_sample(f, T0 + 13, 0x10000);	/* and one good one */
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.received, 5);
	assert_int_equal(st.lost[JT_DROP_DECODE], 4);
	assert_int_equal(st.pending, 1);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 1);
	assert_int_equal(count_type(f, JT_REC_ENTER), 0);
	d = drop_of(f, JT_DROP_DECODE, 0);
	assert_non_null(d);
	assert_int_equal(d->count, 4);
	assert_ts_nondecreasing(f);
}

static void record_older_than_what_was_let_out_is_counted_not_emitted(void **state)
{
	struct fx *f = *state;
	struct jt_pipeline_stats st;
	const struct jt_rec_drop *d;
	size_t i;

	raw_sample(f, T0 + 5000, 0x10000);
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 5000 + WINDOW), 0);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 1);
	raw_sample(f, T0 + 4000, 0x10000);	/* too late: 5000 is out already */
	raw_sample(f, T0 + 5000, 0x10000);	/* not older than it: still fine */
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.lost[JT_DROP_REORDER], 1);
	assert_int_equal(st.pending, 1);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 2);
	for (i = 0; i < f->cap.n; i++)
		assert_int_not_equal(f->cap.recs[i]->ts, T0 + 4000);
	d = drop_of(f, JT_DROP_REORDER, 0);
	assert_non_null(d);
	assert_int_equal(d->count, 1);
	assert_ts_nondecreasing(f);
}

/* More than max_pending held: the oldest go early, and what then arrives late is lost. */
/* A calls region's drain, in a run: enters (leaves with leave) of thread PID + 2. */
static void run_of_calls(struct fx *f, const uint64_t *ts, size_t n, bool leave)
{
	uint64_t run[8 * JT_EVENT_CALL_LEN / sizeof(uint64_t)];
	struct jt_event ev = { .len = JT_EVENT_CALL_LEN, .pid = PID, .tid = PID + 2, .id = 7 };
	size_t i;

	assert_true(n <= 8);
	ev.type = leave ? JT_EV_LEAVE : JT_EV_ENTER;
	for (i = 0; i < n; i++) {
		ev.ts = ts[i];
		memcpy((char *)run + i * JT_EVENT_CALL_LEN, &ev, JT_EVENT_CALL_LEN);
	}
	assert_int_equal(jt_pipeline__calls(f->pl, run, n), 0);
}

/* The enters and leaves logged, as (ts, tid) in log order, n at most. */
static size_t logged_calls(const struct fx *f, uint64_t *ts, uint32_t *tid, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < f->cap.n && n < max; i++) {
		const struct jt_rec_call *c = (const void *)f->cap.recs[i];

		if (c->h.type != JT_REC_ENTER && c->h.type != JT_REC_LEAVE)
			continue;
		ts[n] = c->h.ts;
		tid[n++] = c->tid;
	}
	return n;
}

/*
 * Calls the stubs' uprobes timed by the caller's TSC (JT_CALL_TSC) come out on
 * CLOCK_MONOTONIC by the pipeline's own calibration. One later than the TSC when it is read
 * is forged (the process chose it): it comes out as then, never later, and the next call's
 * time is still right.
 */
static void ring_calls_timed_by_the_tsc_come_out_on_the_monotonic_clock(void **state)
{
	const uint64_t slack = 50000;	/* the calibration's error and a pair's width, at most */
	struct fx *f = *state;
	uint64_t before, after, ts[4];
	uint32_t tid[4];

	before = jt_now_ns();
	raw_call_tsc(f, JT_EV_ENTER, __rdtsc(), 7);
	raw_call_tsc(f, JT_EV_LEAVE, __rdtsc() + (1ULL << 50), 7);	/* years ahead */
	raw_call_tsc(f, JT_EV_ENTER, __rdtsc(), 7);
	after = jt_now_ns();
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(logged_calls(f, ts, tid, 4), 3);
	assert_true(ts[0] + slack >= before);
	assert_true(ts[0] <= ts[1] && ts[1] <= ts[2]);
	assert_true(ts[1] <= after);
	assert_true(ts[2] + slack >= before && ts[2] <= after + slack);
	assert_int_equal(drop_of(f, JT_DROP_DECODE, 0)->count, 0);
}

/*
 * A run of a region's calls and the ring's records go out in time order, and at equal times
 * in the order they came: ring records before the run, the run, ring records after it.
 */
static void a_run_of_calls_keeps_time_order_with_ring_records(void **state)
{
	static const uint64_t run[] = { T0 + 5, T0 + 20, T0 + 20, T0 + 30 };
	static const uint64_t want_ts[] = {
		T0 + 5, T0 + 10, T0 + 20, T0 + 20, T0 + 20, T0 + 20, T0 + 25, T0 + 30,
	};
	static const uint32_t want_tid[] = {
		PID + 2, PID + 1, PID + 1, PID + 2, PID + 2, PID + 1, PID + 1, PID + 2,
	};
	struct fx *f = *state;
	uint64_t ts[16];
	uint32_t tid[16];
	size_t i;

	raw_call(f, JT_EV_ENTER, T0 + 10, 7);
	raw_call(f, JT_EV_LEAVE, T0 + 20, 7);
	run_of_calls(f, run, 4, false);
	raw_call(f, JT_EV_ENTER, T0 + 20, 7);
	raw_call(f, JT_EV_LEAVE, T0 + 25, 7);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(logged_calls(f, ts, tid, 16), 8);
	for (i = 0; i < 8; i++) {
		assert_int_equal(ts[i], want_ts[i]);
		assert_int_equal(tid[i], want_tid[i]);
	}
}

/*
 * A run's call older than what was let out is counted lost, as an event would be, and the
 * rest of the run is logged; the bound holds at each run.
 */
static void a_run_of_calls_older_than_let_out_is_counted_and_bounded(void **state)
{
	static const uint64_t run[] = { T0 + 100, T0 + 300, T0 + 400 };
	struct fx *f = fx_new(2);
	struct jt_pipeline_stats st;
	uint64_t ts[8];
	uint32_t tid[8];

	(void)state;
	raw_call(f, JT_EV_ENTER, T0 + 200, 7);
	raw_call(f, JT_EV_ENTER, T0 + 250, 7);
	raw_call(f, JT_EV_ENTER, T0 + 260, 7);	/* over the bound of 2: 200 goes out */
	run_of_calls(f, run, 3, true);		/* 100 is too late; 250 and 260 go out */
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.lost[JT_DROP_REORDER], 1);
	assert_true(st.pending <= 2);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(logged_calls(f, ts, tid, 8), 5);
	assert_int_equal(ts[0], T0 + 200);
	assert_int_equal(ts[3], T0 + 300);
	assert_int_equal(tid[3], PID + 2);
	assert_int_equal(ts[4], T0 + 400);
	assert_ts_nondecreasing(f);
	fx_free(f);
}

static void max_pending_lets_the_oldest_out_early(void **state)
{
	struct fx *f = fx_new(2);
	struct jt_pipeline_stats st;

	(void)state;
	raw_sample(f, T0 + 100, 0x10000);
	raw_sample(f, T0 + 200, 0x10000);
	raw_sample(f, T0 + 300, 0x10000);
	raw_sample(f, T0 + 400, 0x10000);
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + WINDOW), 0);	/* none is old enough */
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 2);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.pending, 2);
	raw_sample(f, T0 + 150, 0x10000);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.lost[JT_DROP_REORDER], 1);
	fx_free(f);
}

/* The bound holds as records arrive, not only at the next tick: a collector starved of CPU
 * drains the whole ring buffer between two ticks. */
static void max_pending_holds_at_every_record_not_only_at_tick(void **state)
{
	struct fx *f = fx_new(2);
	struct jt_pipeline_stats st;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {
		raw_sample(f, T0 + 100 * (i + 1), 0x10000);
		jt_pipeline__stats(f->pl, &st);
		assert_true(st.pending <= 2);
	}
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 8);
	assert_ts_nondecreasing(f);
	fx_free(f);
}

/* What the reorder stage counts for holding a one-frame sample: the event and its slot. */
#define SAMPLE_COST (jt_event__size(8) + JT_REORDER_SLOT)

static void max_pending_bytes_lets_the_oldest_out_early(void **state)
{
	struct fx *f = fx_new_opts(1 << 20, 3 * SAMPLE_COST, false);
	struct jt_pipeline_stats st;
	int i;

	(void)state;
	for (i = 0; i < 5; i++)
		raw_sample(f, T0 + 100 * (i + 1), 0x10000);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.pending, 3);
	assert_int_equal(st.pending_bytes, 3 * SAMPLE_COST);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 2);
	raw_sample(f, T0 + 150, 0x10000);	/* older than what went out early */
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.lost[JT_DROP_REORDER], 1);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 5);
	assert_ts_nondecreasing(f);
	fx_free(f);
}

/* This test process's own perf map, with two lines; returns its pid. */
static uint32_t write_own_map(char *path, size_t size)
{
	FILE *m;

	snprintf(path, size, "/tmp/perf-%d.map", (int)getpid());
	m = fopen(path, "w");
	assert_non_null(m);
	fprintf(m, "7f3a40001000 40 from_map_a\n7f3a40002000 40 from_map_b\n");
	assert_int_equal(fclose(m), 0);
	return getpid();
}

static void own_load(struct fx *f, uint32_t pid, uint64_t ts)
{
	struct jt_ev_code c = {
		.h = { .type = JT_EV_CODE_LOAD, .size = jt_round8(JT_EV_CODE_FIXED + 1),
		       .ts = ts, .pid = pid, .tid = pid },
		.id = 1, .start = 0x7f3a40003000, .size = 0x40, .src = JT_SRC_AGENT,
		.name_len = 1, .name = "f",
	};

	feed_copy(f, &c, c.h.size);
}

/*
 * Once the agent of a process is known to report its code, the lines of its perf map are
 * dropped before the reorder buffer (the collector would ignore them anyway): a runtime
 * starting with thousands of methods does not fill the buffer with them. The map is then
 * no longer read.
 */
static void perfmap_lines_of_an_agent_process_are_not_queued(void **state)
{
	struct fx *f = fx_new_opts(1 << 20, 0, true);
	struct jt_pipeline_stats st;
	FILE *m;
	char path[64];
	uint32_t pid = write_own_map(path, sizeof(path));

	(void)state;
	own_load(f, pid, T0);
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 2 * WINDOW), 0);	/* the load is out */
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.pending, 0);
	jt_pipeline__scan(f->pl, pid, T0 + 2 * WINDOW);	/* the map is read now */
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.col.perfmap_skipped, 2);
	assert_int_equal(st.maps, 0);	/* and no longer followed */
	m = fopen(path, "a");
	assert_non_null(m);
	fprintf(m, "7f3a40004000 40 from_map_c\n");
	assert_int_equal(fclose(m), 0);
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 3 * WINDOW), 0);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.maps, 0);
	assert_int_equal(st.col.perfmap_skipped, 2);	/* not read at all */
	unlink(path);
	fx_free(f);
}

/* The control: before the agent is known (its load still waits to be ordered), they are. */
static void perfmap_lines_are_queued_while_the_agent_is_not_known(void **state)
{
	struct fx *f = fx_new_opts(1 << 20, 0, true);
	struct jt_pipeline_stats st;
	char path[64];
	uint32_t pid = write_own_map(path, sizeof(path));

	(void)state;
	own_load(f, pid, T0);
	jt_pipeline__scan(f->pl, pid, T0);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.maps, 1);
	assert_int_equal(st.pending, 3);
	assert_int_equal(st.col.perfmap_skipped, 0);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.pending, 0);
	unlink(path);
	fx_free(f);
}

/*
 * A full reorder buffer lets records out while the perf maps are being read; when one of
 * them is the exit of a process whose map is being read, its map is let go after the read,
 * not from under it (AddressSanitizer sees the difference).
 */
static void exit_let_out_during_a_map_read_lets_the_map_go_after_it(void **state)
{
	struct fx *f = fx_new_opts(1, 0, true);
	struct jt_pipeline_stats st;
	struct jt_ev_proc ex = { 0 };
	char path[64];
	uint32_t pid = write_own_map(path, sizeof(path));

	(void)state;
	raw_sample(f, T0, 0x10000);
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + WINDOW), 0);	/* the floor is T0 */
	ex.h = (struct jt_ev_hdr){ .type = JT_EV_EXIT, .size = sizeof(ex), .ts = T0,
				   .pid = pid, .tid = pid };
	feed_copy(f, &ex, sizeof(ex));
	/* its lines are timed at the floor, after the exit: the first one pushes it out */
	jt_pipeline__scan(f->pl, pid, T0 + WINDOW);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(count_type(f, JT_REC_EXIT), 1);
	assert_int_equal(st.maps, 0);	/* let go once the read was over */
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_ts_nondecreasing(f);
	unlink(path);
	fx_free(f);
}

/* The time perf-map reads take: the test says what the clock reads. */
static uint64_t test_clock_ns;

static uint64_t test_clock(void *ctx)
{
	(void)ctx;
	return test_clock_ns;
}

/* A user-stack sample of the test process (whose perf map is read) at ip. */
static void own_sample(struct fx *f, uint32_t pid, uint64_t ts, uint64_t ip)
{
	struct jt_ev_sample s = { .cpu = 0, .nr_user = 1, .ips = { ip } };

	hdr(&s, JT_EV_SAMPLE, JT_EV_SAMPLE_FIXED + 8, ts);
	s.h.pid = s.h.tid = pid;
	feed_copy(f, &s, JT_EV_SAMPLE_FIXED + 8);
}

/* The method frame 0 of the n-th sample names, or NULL for an unnamed frame. */
static const struct jt_rec_method *nth_sample_leaf(const struct fx *f, size_t n)
{
	size_t i;

	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_sample *s = (const void *)f->cap.recs[i];

		if (s->h.type != JT_REC_SAMPLE || n--)
			continue;
		if (JT_FRAME_KIND(s->frames[0].ref) != JT_FRAME_METHOD)
			return NULL;
		return method_def(f, JT_FRAME_ID(s->frames[0].ref));
	}
	fail_msg("no such sample");
	return NULL;
}

static void assert_named(const struct jt_rec_method *m, const char *name)
{
	assert_non_null(m);
	assert_int_equal(m->name_len, strlen(name));
	assert_memory_equal(m->name, name, m->name_len);
}

/*
 * A collector busy between two reads of a perf map (loading a large symbol table, starved
 * of CPU): in between, old code ran at an address, died, and new code of another function
 * was written there, and a map line says so. The read that finds the line cannot tell when
 * in that span the new code came: a sample at that address in the span is named by neither
 * function, and counted; one after the read is named by the new code; and a line at an
 * address where nothing was known names samples from the start of the span. This is what
 * named 18 samples of Node's reused code by the wrong function on a loaded machine.
 */
static void perfmap_code_replacing_other_code_names_no_sample_before_it_is_read(void **state)
{
	struct jt_pipeline_opts o = {
		.window_ns = WINDOW, .max_pending = 1 << 20, .proc_root = PROC_ROOT,
		.follow_perfmaps = true, .clock = test_clock,
	};
	struct fx *f = calloc(1, sizeof(*f));
	const struct jt_rec_drop *d;
	char path[64];
	uint32_t pid = write_own_map(path, sizeof(path));	/* from_map_a at ...1000 */
	FILE *m;

	(void)state;
	assert_non_null(f);
	f->sink = (struct jt_sink){ capture_record, &f->cap };
	f->pl = jt_pipeline__new(&o, &f->sink);
	assert_non_null(f->pl);
	test_clock_ns = T0 + 1;
	jt_pipeline__scan(f->pl, pid, T0);	/* from_map_a is there from the start */
	own_sample(f, pid, T0, 0x7f3a40001010);	/* runs from_map_a */
	own_sample(f, pid, T0 + 10 * WINDOW, 0x7f3a40005010);	/* code nothing names yet */
	/* from_map_a dies; other code lands on it, and new code at a fresh address */
	m = fopen(path, "a");
	assert_non_null(m);
	fprintf(m, "7f3a40001000 40 reused_c\n7f3a40005000 40 fresh_d\n");
	assert_int_equal(fclose(m), 0);
	own_sample(f, pid, T0 + 10 * WINDOW, 0x7f3a40001010);	/* reused_c, or still a? */
	test_clock_ns = T0 + 20 * WINDOW + 1;
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 20 * WINDOW), 0);	/* finds both */
	own_sample(f, pid, T0 + 21 * WINDOW, 0x7f3a40001010);	/* reused_c for sure */
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_ts_nondecreasing(f);

	assert_int_equal(count_type(f, JT_REC_SAMPLE), 4);
	assert_named(nth_sample_leaf(f, 0), "from_map_a");
	assert_named(nth_sample_leaf(f, 1), "fresh_d");	/* nothing else was known there */
	assert_null(nth_sample_leaf(f, 2));		/* not reused_c, not from_map_a */
	assert_named(nth_sample_leaf(f, 3), "reused_c");
	d = drop_of(f, JT_DROP_UNSURE_FRAME, 0);
	assert_non_null(d);
	assert_int_equal(d->count, 1);
	unlink(path);
	fx_free(f);
}

/*
 * Lines already in a map when recording began are timed then, not at 0 (dump showed
 * load=-686824339495 for them); a NUL in a name no longer cuts it where the decoder reads.
 */
static void perfmap_lines_there_at_start_load_then_and_keep_whole_names(void **state)
{
	struct jt_pipeline_opts o = {
		.window_ns = WINDOW, .max_pending = 1 << 20, .proc_root = PROC_ROOT,
		.follow_perfmaps = true, .clock = test_clock,
	};
	struct fx *f = calloc(1, sizeof(*f));
	const struct jt_rec_method *m;
	char path[64];
	uint32_t pid = getpid();
	FILE *mf;

	(void)state;
	assert_non_null(f);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	mf = fopen(path, "w");
	assert_non_null(mf);
	fwrite("7f3a40001000 40 na\0me\n", 1, 22, mf);
	assert_int_equal(fclose(mf), 0);
	f->sink = (struct jt_sink){ capture_record, &f->cap };
	f->pl = jt_pipeline__new(&o, &f->sink);
	assert_non_null(f->pl);
	test_clock_ns = T0 + 1;
	jt_pipeline__scan(f->pl, pid, T0);
	own_sample(f, pid, T0 + 5, 0x7f3a40001010);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	m = nth_sample_leaf(f, 0);
	assert_named(m, "na?me");
	assert_int_equal(m->load_ts, T0);
	unlink(path);
	fx_free(f);
}

/* A pipeline following perf maps, its clock the test's. */
static struct fx *fx_maps(void)
{
	struct jt_pipeline_opts o = {
		.window_ns = WINDOW, .max_pending = 1 << 20, .proc_root = PROC_ROOT,
		.follow_perfmaps = true, .clock = test_clock,
	};
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->sink = (struct jt_sink){ capture_record, &f->cap };
	f->pl = jt_pipeline__new(&o, &f->sink);
	assert_non_null(f->pl);
	return f;
}

static void write_map(const char *path, const char *text)
{
	FILE *m = fopen(path, "w");

	assert_non_null(m);
	fputs(text, m);
	assert_int_equal(fclose(m), 0);
}

enum map_change { IN_PLACE, BY_RENAME, BY_UNLINK };

/*
 * A map written anew while it is followed: in place and longer than before (what jcmd's
 * Compiler.perfmap does to HotSpot's map, same inode), replaced by rename, or unlinked and
 * created again. Its first line renames the code at from_map_a's address; samples after the
 * change carry the new name, samples before it the old one.
 */
static void map_written_anew(enum map_change how)
{
	struct fx *f = fx_maps();
	char path[64], tmp[80];
	uint32_t pid = write_own_map(path, sizeof(path));	/* from_map_a at ...1000 */
	uint64_t t = T0;

	test_clock_ns = t + 1;
	jt_pipeline__scan(f->pl, pid, t);
	own_sample(f, pid, t + 10, 0x7f3a40001010);
	t += 2 * WINDOW;
	test_clock_ns = t + 1;
	assert_int_equal(jt_pipeline__tick(f->pl, t), 0);
	if (how == IN_PLACE) {
		write_map(path, "7f3a40001000 40 renamed_a\n7f3a40002000 40 from_map_b\n"
				"7f3a40009000 40 more_code_than_before\n");
	} else {
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		if (how == BY_UNLINK)
			assert_int_equal(unlink(path), 0);
		write_map(how == BY_RENAME ? tmp : path,
			  "7f3a40001000 40 renamed_a\n7f3a40002000 40 from_map_b\n");
		if (how == BY_RENAME)
			assert_int_equal(rename(tmp, path), 0);
	}
	/* a name looked up again within a second (replacement), every read (in place) */
	t += 2000000000ULL;
	test_clock_ns = t + 1;
	assert_int_equal(jt_pipeline__tick(f->pl, t), 0);
	own_sample(f, pid, t + 10000, 0x7f3a40001010);	/* after the read (spans are in us) */
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_ts_nondecreasing(f);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 2);
	assert_named(nth_sample_leaf(f, 0), "from_map_a");
	assert_named(nth_sample_leaf(f, 1), "renamed_a");
	unlink(path);
	fx_free(f);
}

static void map_rewritten_in_place_longer_is_read_again(void **state)
{
	(void)state;
	map_written_anew(IN_PLACE);
}

static void map_replaced_by_rename_is_read_again(void **state)
{
	(void)state;
	map_written_anew(BY_RENAME);
}

static void map_unlinked_and_created_again_is_read_again(void **state)
{
	(void)state;
	map_written_anew(BY_UNLINK);
}

/* Appending keeps reading where the last read stopped: nothing is read twice. */
static void map_appended_to_is_not_read_again(void **state)
{
	struct fx *f = fx_maps();
	struct jt_pipeline_stats st;
	char path[64];
	uint32_t pid = write_own_map(path, sizeof(path));
	FILE *m;

	(void)state;
	test_clock_ns = T0 + 1;
	jt_pipeline__scan(f->pl, pid, T0);
	m = fopen(path, "a");
	assert_non_null(m);
	fprintf(m, "7f3a40003000 40 from_map_c\n");
	assert_int_equal(fclose(m), 0);
	test_clock_ns = T0 + 2000000001ULL;
	assert_int_equal(jt_pipeline__tick(f->pl, T0 + 2000000000ULL), 0);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.received, 0);
	assert_int_equal(st.pending + st.col.events, 3);	/* a, b, then c: once each */
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	unlink(path);
	fx_free(f);
}

static void bpf_drops_writes_records_only_for_kinds_that_grew(void **state)
{
	struct fx *f = *state;
	uint64_t t1[JT_DROP_MAX] = { 0 }, t2[JT_DROP_MAX] = { 0 };
	struct jt_pipeline_stats st;
	const struct jt_rec_drop *d;
	size_t mark, i;

	t1[JT_DROP_RB_SAMPLE] = 5;
	assert_int_equal(jt_pipeline__bpf_drops(f->pl, t1), 0);
	assert_int_equal(f->cap.n, 1);
	d = (const void *)f->cap.recs[0];
	assert_int_equal(d->h.type, JT_REC_DROP);
	assert_int_equal(d->h.size, sizeof(*d));
	assert_int_equal(d->what, JT_DROP_RB_SAMPLE);
	assert_int_equal(d->count, 5);

	assert_int_equal(jt_pipeline__bpf_drops(f->pl, t1), 0);	/* nothing grew */
	assert_int_equal(f->cap.n, 1);

	t2[JT_DROP_RB_CALL] = 2;
	t2[JT_DROP_RB_SAMPLE] = 7;
	t2[JT_DROP_STACK] = 1;
	mark = f->cap.n;
	assert_int_equal(jt_pipeline__bpf_drops(f->pl, t2), 0);
	assert_int_equal(f->cap.n, mark + 3);
	for (i = mark; i < f->cap.n; i++)
		assert_int_equal(f->cap.recs[i]->type, JT_REC_DROP);
	assert_int_equal(drop_of(f, JT_DROP_RB_CALL, mark)->count, 2);
	assert_int_equal(drop_of(f, JT_DROP_RB_SAMPLE, mark)->count, 2);	/* the delta */
	assert_int_equal(drop_of(f, JT_DROP_STACK, mark)->count, 1);
	assert_null(drop_of(f, JT_DROP_RB_CODE, mark));
	assert_null(drop_of(f, JT_DROP_RB_PROC, mark));
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.lost[JT_DROP_RB_CALL], 2);	/* totals */
	assert_int_equal(st.lost[JT_DROP_RB_SAMPLE], 7);
	assert_int_equal(st.lost[JT_DROP_STACK], 1);
	assert_ts_nondecreasing(f);
}

static void finish_writes_a_drop_record_for_every_kind_even_when_zero(void **state)
{
	struct fx *f = *state;
	unsigned int seen[JT_DROP_MAX] = { 0 };
	size_t i;

	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(f->cap.n, JT_DROP_MAX);
	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_drop *d = (const void *)f->cap.recs[i];

		assert_int_equal(d->h.type, JT_REC_DROP);
		assert_true(d->what < JT_DROP_MAX);
		assert_int_equal(d->count, 0);
		seen[d->what]++;
	}
	for (i = 0; i < JT_DROP_MAX; i++)
		assert_int_equal(seen[i], 1);
}

/* The final records carry what was lost since the last drop record of each kind. */
static void finish_counts_only_what_was_not_logged_before(void **state)
{
	struct fx *f = *state;
	uint64_t t[JT_DROP_MAX] = { 0 };
	size_t mark;

	t[JT_DROP_RB_CODE] = 9;
	assert_int_equal(jt_pipeline__bpf_drops(f->pl, t), 0);
	assert_int_equal(jt_pipeline__raw(f->pl, "x", 1), 0);	/* one decode drop */
	mark = f->cap.n;
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(f->cap.n - mark, JT_DROP_MAX);
	assert_int_equal(drop_of(f, JT_DROP_RB_CODE, mark)->count, 0);
	assert_int_equal(drop_of(f, JT_DROP_DECODE, mark)->count, 1);
}

/*
 * A thread's losses are written at once naming it; the kind's total, told after, adds a
 * record only for what no thread was named for, and the kind's records sum to it.
 */
static void thread_drops_name_the_thread_and_keep_the_total(void **state)
{
	struct fx *f = *state;
	uint64_t t[JT_DROP_MAX] = { 0 }, sum = 0;
	size_t i;

	assert_int_equal(jt_pipeline__thread_drops(f->pl, JT_DROP_CALLS_FULL, 77, 1200), 0);
	assert_int_equal(jt_pipeline__thread_drops(f->pl, JT_DROP_CALLS_FULL, 78, 34), 0);
	assert_int_equal(f->cap.n, 2);
	assert_int_equal(drop_of(f, JT_DROP_CALLS_FULL, 0)->tid, 77);
	assert_int_equal(drop_of(f, JT_DROP_CALLS_FULL, 0)->count, 1200);
	assert_int_equal(drop_of(f, JT_DROP_CALLS_FULL, 1)->tid, 78);
	jt_pipeline__source_drops(f->pl, JT_DROP_CALLS_FULL, 1234);
	assert_int_equal(jt_pipeline__bpf_drops(f->pl, t), 0);
	assert_int_equal(f->cap.n, 2);	/* all of it said already */
	jt_pipeline__source_drops(f->pl, JT_DROP_CALLS_FULL, 1240);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_drop *d = (const void *)f->cap.recs[i];

		if (d->what == JT_DROP_CALLS_FULL)
			sum += d->count;
		else
			assert_int_equal(d->tid, 0);
	}
	assert_int_equal(sum, 1240);
	assert_int_equal(drop_of(f, JT_DROP_CALLS_FULL, 2)->tid, 0);	/* the 6 unnamed */
	assert_int_equal(drop_of(f, JT_DROP_CALLS_FULL, 2)->count, 6);
	assert_ts_nondecreasing(f);
}

/*
 * A kind's total told lower than what its threads were already named for (the source
 * counts the two at different moments) is not a negative remainder: the named losses stand,
 * no record goes back, and a later total above them adds only what is new.
 */
static void a_total_below_the_named_losses_writes_no_negative_count(void **state)
{
	struct fx *f = *state;
	uint64_t t[JT_DROP_MAX] = { 0 }, sum = 0;
	size_t i;

	assert_int_equal(jt_pipeline__thread_drops(f->pl, JT_DROP_CALLS_FULL, 77, 300), 0);
	jt_pipeline__source_drops(f->pl, JT_DROP_CALLS_FULL, 100);
	assert_int_equal(jt_pipeline__bpf_drops(f->pl, t), 0);
	jt_pipeline__source_drops(f->pl, JT_DROP_CALLS_FULL, 310);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_drop *d = (const void *)f->cap.recs[i];

		if (d->what != JT_DROP_CALLS_FULL)
			continue;
		assert_true(d->count <= 310);
		sum += d->count;
	}
	assert_int_equal(sum, 310);
}

static void finish_lets_everything_out_before_the_drop_records(void **state)
{
	struct fx *f = *state;
	struct jt_pipeline_stats st;
	size_t i, first_drop;

	raw_load(f, T0 + 100, 1, JIT, 0x100, "m");
	for (i = 0; i < 100; i++)
		raw_sample(f, T0 + 1000 - i, JIT + i);	/* newest first */
	assert_int_equal(jt_pipeline__tick(f->pl, T0), 0);	/* nothing old enough */
	assert_int_equal(f->cap.n, 0);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 100);
	assert_int_equal(count_type(f, JT_REC_DROP), JT_DROP_MAX);
	first_drop = f->cap.n - JT_DROP_MAX;
	for (i = 0; i < first_drop; i++)
		assert_int_not_equal(f->cap.recs[i]->type, JT_REC_DROP);
	assert_ts_nondecreasing(f);
	jt_pipeline__stats(f->pl, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.col.samples, 100);
}

/*
 * The command jitrace forks runs jitrace's own code until its exec is done: its maps, read
 * then, name those samples by the files' symbols (here the fixture's, whose libc is this
 * host's, read by path: the fixture has no map_files).
 */
static void maps_read_now_name_the_samples_after(void **state)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	const struct jt_rec_sample *s = NULL;
	const struct jt_sym *sym = NULL;
	struct fx *f = fx_new(1 << 20);
	struct jt_elfsyms *es;
	uint64_t off;
	size_t i, idx;
	int fd, err;

	(void)state;
	fd = open(libc, O_RDONLY);
	assert_true(fd >= 0);
	es = jt_elfsyms__load(fd, -1, &err);
	close(fd);
	assert_non_null(es);
	for (off = 0x27000; !sym && off < 0x100000; off += 16) {	/* in the r-xp mapping */
		sym = jt_elfsyms__find(es, off, &idx);
		if (sym && (sym->start != off || sym->size < 16))
			sym = NULL;
	}
	assert_non_null(sym);
	off = sym->start;
	jt_elfsyms__free(es);
	assert_int_equal(jt_pipeline__maps_now(f->pl, PID, T0), 0);
	raw_sample(f, T0 + 10, 0x7fd98fa0b000ULL - 0x26000 + off + 1);
	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	for (i = 0; i < f->cap.n && !s; i++)
		if (f->cap.recs[i]->type == JT_REC_SAMPLE)
			s = (const void *)f->cap.recs[i];
	assert_non_null(s);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_SYMBOL);
	assert_int_equal(s->frames[0].off, 1);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(out_of_order_records_come_out_in_order_and_joined),
		T(tick_lets_out_records_at_or_before_now_minus_window),
		cmocka_unit_test(maps_read_now_name_the_samples_after),
		T(address_reuse_is_joined_by_time_not_arrival),
		T(malformed_records_are_counted_as_decode_drops),
		T(record_older_than_what_was_let_out_is_counted_not_emitted),
		cmocka_unit_test(max_pending_lets_the_oldest_out_early),
		T(a_run_of_calls_keeps_time_order_with_ring_records),
		T(ring_calls_timed_by_the_tsc_come_out_on_the_monotonic_clock),
		cmocka_unit_test(a_run_of_calls_older_than_let_out_is_counted_and_bounded),
		cmocka_unit_test(max_pending_holds_at_every_record_not_only_at_tick),
		cmocka_unit_test(max_pending_bytes_lets_the_oldest_out_early),
		cmocka_unit_test(perfmap_lines_of_an_agent_process_are_not_queued),
		cmocka_unit_test(perfmap_lines_are_queued_while_the_agent_is_not_known),
		cmocka_unit_test(exit_let_out_during_a_map_read_lets_the_map_go_after_it),
		cmocka_unit_test(perfmap_code_replacing_other_code_names_no_sample_before_it_is_read),
		cmocka_unit_test(perfmap_lines_there_at_start_load_then_and_keep_whole_names),
		cmocka_unit_test(map_rewritten_in_place_longer_is_read_again),
		cmocka_unit_test(map_replaced_by_rename_is_read_again),
		cmocka_unit_test(map_unlinked_and_created_again_is_read_again),
		cmocka_unit_test(map_appended_to_is_not_read_again),
		T(bpf_drops_writes_records_only_for_kinds_that_grew),
		T(finish_writes_a_drop_record_for_every_kind_even_when_zero),
		T(finish_counts_only_what_was_not_logged_before),
		T(thread_drops_name_the_thread_and_keep_the_total),
		T(a_total_below_the_named_losses_writes_no_negative_count),
		T(finish_lets_everything_out_before_the_drop_records),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
