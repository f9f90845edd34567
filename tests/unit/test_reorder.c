// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the timestamp reorder window (user/join/reorder.c). */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/event.h"
#include "join/reorder.h"
#include "base/util.h"

/* Every test record starts with this; the rest of it is a pattern derived from seq. */
struct trec {
	uint64_t ts;
	uint32_t seq;		/* arrival order */
	uint32_t len;
};

/* What the callback saw. */
struct out {
	size_t n;
	uint64_t last_ts;
	uint32_t last_seq;
	bool bad_order;		/* ts went back, or equal ts left out of arrival order */
	bool bad_bytes;		/* a record did not come out as it went in */
	uint32_t *seqs;		/* seqs in order of leaving, if not NULL */
	size_t max;
	unsigned char *seen;	/* seen[seq]++, if not NULL */
};

static unsigned char pattern(uint32_t seq, size_t i)
{
	return (unsigned char)(seq * 31 + i * 7 + 1);
}

static size_t make_rec(unsigned char *buf, uint64_t ts, uint32_t seq, size_t len)
{
	struct trec t = { .ts = ts, .seq = seq, .len = len };
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pattern(seq, i);
	memcpy(buf, &t, len < sizeof(t) ? len : sizeof(t));
	return len;
}

static void on_rec(void *ctx, const void *rec, size_t len)
{
	struct out *o = ctx;
	struct trec t;
	size_t i;

	assert_true(len >= sizeof(t));
	memcpy(&t, rec, sizeof(t));
	if (t.len != len)
		o->bad_bytes = true;
	for (i = sizeof(t); i < len; i++)
		if (((const unsigned char *)rec)[i] != pattern(t.seq, i))
			o->bad_bytes = true;
	if (o->n && (t.ts < o->last_ts || (t.ts == o->last_ts && t.seq < o->last_seq)))
		o->bad_order = true;
	if (o->seqs && o->n < o->max)
		o->seqs[o->n] = t.seq;
	if (o->seen)
		o->seen[t.seq]++;
	o->last_ts = t.ts;
	o->last_seq = t.seq;
	o->n++;
}

static void push(struct jt_reorder *r, uint64_t ts, uint32_t seq, size_t len)
{
	unsigned char buf[4096];

	assert_true(len <= sizeof(buf));
	make_rec(buf, ts, seq, len);
	assert_int_equal(jt_reorder__push(r, ts, buf, len), 0);
}

static void out_of_order_input_comes_out_sorted(void **state)
{
	static const uint64_t ts[] = { 50, 10, 40, 20, 30, 70, 60, 5 };
	struct jt_reorder *r = jt_reorder__new(100, 0);
	uint32_t seqs[16];
	struct out o = { .seqs = seqs, .max = 16 };
	size_t i;

	(void)state;
	assert_non_null(r);
	for (i = 0; i < JT_ARRAY_SIZE(ts); i++)
		push(r, ts[i], i, 24 + 8 * i);
	assert_int_equal(jt_reorder__count(r), JT_ARRAY_SIZE(ts));
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), JT_ARRAY_SIZE(ts));
	assert_int_equal(o.n, JT_ARRAY_SIZE(ts));
	assert_false(o.bad_order);
	assert_false(o.bad_bytes);
	/* 5 10 20 30 40 50 60 70 */
	assert_int_equal(seqs[0], 7);
	assert_int_equal(seqs[1], 1);
	assert_int_equal(seqs[2], 3);
	assert_int_equal(seqs[3], 4);
	assert_int_equal(seqs[4], 2);
	assert_int_equal(seqs[5], 0);
	assert_int_equal(seqs[6], 6);
	assert_int_equal(seqs[7], 5);
	assert_int_equal(jt_reorder__count(r), 0);
	assert_int_equal(jt_reorder__floor(r), 70);
	jt_reorder__free(r);
}

static void equal_timestamps_keep_arrival_order(void **state)
{
	struct jt_reorder *r = jt_reorder__new(100, 0);
	uint32_t seqs[16];
	struct out o = { .seqs = seqs, .max = 16 };
	uint32_t i;

	(void)state;
	/* ts: 20 10 20 10 20 10 20 10 20 10 */
	for (i = 0; i < 10; i++)
		push(r, i % 2 ? 10 : 20, i, 16 + (i % 3) * 64);
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), 10);
	for (i = 0; i < 5; i++) {
		assert_int_equal(seqs[i], 2 * i + 1);
		assert_int_equal(seqs[5 + i], 2 * i);
	}
	assert_false(o.bad_bytes);
	jt_reorder__free(r);
}

static void flush_lets_out_only_records_up_to_the_watermark(void **state)
{
	struct jt_reorder *r = jt_reorder__new(100, 0);
	struct out o = { 0 };

	(void)state;
	push(r, 30, 0, 16);
	push(r, 10, 1, 16);
	push(r, 20, 2, 16);
	push(r, 21, 3, 16);
	assert_int_equal(jt_reorder__flush(r, 9, on_rec, &o), 0);
	assert_int_equal(jt_reorder__floor(r), 0);
	assert_int_equal(jt_reorder__flush(r, 20, on_rec, &o), 2);	/* ts <= upto */
	assert_int_equal(o.n, 2);
	assert_int_equal(o.last_ts, 20);
	assert_int_equal(jt_reorder__count(r), 2);
	assert_int_equal(jt_reorder__floor(r), 20);
	assert_int_equal(jt_reorder__flush(r, 20, on_rec, &o), 0);
	assert_int_equal(jt_reorder__flush(r, 29, on_rec, &o), 1);
	assert_int_equal(o.last_ts, 21);
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), 1);
	assert_int_equal(o.last_ts, 30);
	assert_int_equal(o.n, 4);
	assert_false(o.bad_order);
	jt_reorder__free(r);
}

static void flush_of_empty_buffer_lets_out_nothing(void **state)
{
	struct jt_reorder *r = jt_reorder__new(10, 0);
	struct out o = { 0 };

	(void)state;
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), 0);
	assert_int_equal(o.n, 0);
	assert_int_equal(jt_reorder__count(r), 0);
	jt_reorder__free(r);
}

static void push_older_than_last_let_out_returns_erange(void **state)
{
	struct jt_reorder *r = jt_reorder__new(100, 0);
	unsigned char buf[64];
	struct out o = { 0 };

	(void)state;
	push(r, 100, 0, 32);
	push(r, 200, 1, 32);
	assert_int_equal(jt_reorder__flush(r, 150, on_rec, &o), 1);
	make_rec(buf, 99, 2, 32);
	assert_int_equal(jt_reorder__push(r, 99, buf, 32), -ERANGE);
	assert_int_equal(jt_reorder__count(r), 1);	/* nothing was taken in */
	/* the same time as the last one let out is not older: it is taken */
	make_rec(buf, 100, 3, 32);
	assert_int_equal(jt_reorder__push(r, 100, buf, 32), 0);
	/* newer than the floor, though older than the watermark used: taken */
	make_rec(buf, 120, 4, 32);
	assert_int_equal(jt_reorder__push(r, 120, buf, 32), 0);
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), 3);
	assert_int_equal(o.n, 4);
	assert_false(o.bad_order);
	make_rec(buf, 199, 5, 32);
	assert_int_equal(jt_reorder__push(r, 199, buf, 32), -ERANGE);
	jt_reorder__free(r);
}

static void max_records_lets_the_oldest_out_early(void **state)
{
	struct jt_reorder *r = jt_reorder__new(3, 0);
	unsigned char buf[64];
	uint32_t seqs[8];
	struct out o = { .seqs = seqs, .max = 8 };

	(void)state;
	push(r, 50, 0, 16);
	push(r, 10, 1, 200);
	push(r, 40, 2, 16);
	push(r, 20, 3, 200);
	push(r, 30, 4, 16);
	/* nothing is old enough, but five are held where three are allowed */
	assert_int_equal(jt_reorder__flush(r, 0, on_rec, &o), 2);
	assert_int_equal(seqs[0], 1);
	assert_int_equal(seqs[1], 3);
	assert_int_equal(jt_reorder__count(r), 3);
	assert_int_equal(jt_reorder__floor(r), 20);
	/* the window closed early: older records are now refused */
	make_rec(buf, 15, 5, 16);
	assert_int_equal(jt_reorder__push(r, 15, buf, 16), -ERANGE);
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), 3);
	assert_int_equal(seqs[2], 4);
	assert_int_equal(seqs[3], 2);
	assert_int_equal(seqs[4], 0);
	assert_false(o.bad_bytes);
	jt_reorder__free(r);
}

/*
 * A record as short as an enter or leave is held in its slot and costs two of them (the array
 * may be two slots a record held); it comes out as it went in, in order with the others.
 */
static void short_records_are_held_in_their_slot(void **state)
{
	struct jt_reorder *r = jt_reorder__new(100, 0);
	struct out o = { 0 };

	(void)state;
	push(r, 30, 0, JT_REORDER_INLINE);
	push(r, 10, 1, 40);
	push(r, 20, 2, JT_REORDER_INLINE + 8);	/* pooled */
	push(r, 20, 3, 16);
	assert_int_equal(jt_reorder__bytes(r), 3 * 2 * JT_REORDER_SLOT +
					       JT_REORDER_SMALL + JT_REORDER_SLOT);
	assert_int_equal(jt_reorder__flush(r, 20, on_rec, &o), 3);
	assert_int_equal(jt_reorder__bytes(r), 2 * JT_REORDER_SLOT);
	assert_int_equal(o.last_seq, 3);
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), 1);
	assert_int_equal(jt_reorder__bytes(r), 0);
	assert_false(o.bad_order);
	assert_false(o.bad_bytes);
	jt_reorder__free(r);
}

/*
 * The slots are a ring: records let out as others come wrap it many times over, a record
 * put a few places back across the wrap and the ring grown while wrapped keep every record
 * and the order.
 */
static void the_ring_wraps_and_grows_wrapped_in_order(void **state)
{
	struct jt_reorder *r = jt_reorder__new(1 << 20, 0);
	unsigned char *seen = calloc(30000, 1);
	struct out o = { .seen = seen };
	uint32_t i;

	(void)state;
	assert_non_null(seen);
	for (i = 0; i < 30000; i++) {
		/* every third a few places back; from 20000 on nothing goes: the ring grows */
		push(r, 100 + 10 * (uint64_t)i - (i % 3 == 0 ? 25 : 0), i, i % 2 ? 40 : 72);
		if (i < 20000 && i % 7 == 0 && i > 200)
			jt_reorder__flush(r, 10 * (uint64_t)(i - 150), on_rec, &o);
	}
	assert_true(jt_reorder__count(r) > 10000);
	jt_reorder__flush(r, UINT64_MAX, on_rec, &o);
	assert_int_equal(o.n, 30000);
	for (i = 0; i < 30000; i++)
		assert_int_equal(seen[i], 1);
	assert_false(o.bad_order);
	assert_false(o.bad_bytes);
	assert_int_equal(jt_reorder__bytes(r), 0);
	free(seen);
	jt_reorder__free(r);
}

/* What left, in order: a run's call as its id, another record as 1000 + its seq. */
struct mixed {
	uint64_t ts[32];
	uint64_t tag[32];
	size_t n;
};

static void on_mixed(void *ctx, const void *rec, size_t len)
{
	struct mixed *m = ctx;
	struct trec t;

	assert_true(m->n < 32);
	if (len == JT_EVENT_CALL_LEN) {
		const struct jt_event *ev = rec;

		assert_int_equal(ev->len, JT_EVENT_CALL_LEN);
		assert_int_equal(ev->type, JT_EV_LEAVE);
		assert_int_equal(ev->pid, 42);
		assert_int_equal(ev->tid, 43);
		m->ts[m->n] = ev->ts;
		m->tag[m->n++] = ev->id;
		return;
	}
	memcpy(&t, rec, sizeof(t));
	m->ts[m->n] = t.ts;
	m->tag[m->n++] = 1000 + t.seq;
}

/* A run of n leaves at ts[], ids id0, id0 + 1, ... */
static long run(struct jt_reorder *r, const uint64_t *ts, size_t n, uint64_t id0)
{
	char buf[8 * JT_EVENT_CALL_LEN];
	struct jt_event ev = { .len = JT_EVENT_CALL_LEN, .type = JT_EV_LEAVE, .pid = 42,
			       .tid = 43 };
	size_t i;

	assert_true(n <= 8);
	for (i = 0; i < n; i++) {
		ev.ts = ts[i];
		ev.id = id0 + i;
		memcpy(buf + i * JT_EVENT_CALL_LEN, &ev, JT_EVENT_CALL_LEN);
	}
	return jt_reorder__push_run(r, buf, n, JT_EVENT_CALL_LEN);
}

/*
 * A run's calls in the lane and records pushed one by one go out by time, at equal times in
 * the order they came; a run's call older than the lane's last goes the other way, in order
 * all the same; one older than what went out is refused.
 */
static void a_runs_lane_merges_with_other_records_by_time_and_arrival(void **state)
{
	static const uint64_t first[] = { 10, 20, 20, 35 }, second[] = { 25, 40 };
	static const uint64_t want_ts[] = { 10, 20, 20, 20, 20, 25, 30, 35, 40 };
	static const uint64_t want_tag[] = { 1, 1000, 2, 3, 1005, 5, 1006, 4, 6 };
	struct jt_reorder *r = jt_reorder__new(100, 0);
	struct mixed m = { .n = 0 };
	size_t i;

	(void)state;
	push(r, 20, 0, 64);
	assert_int_equal(run(r, first, 4, 1), 0);
	push(r, 20, 5, 64);
	push(r, 30, 6, 24);
	assert_int_equal(run(r, second, 2, 5), 0);
	assert_int_equal(jt_reorder__count(r), 9);
	/* 5 calls in the lane (64 each), 25 and one of 24 bytes held in their slots, two of
	 * 64 bytes pooled */
	assert_int_equal(jt_reorder__bytes(r), 5 * 64 + 2 * 2 * JT_REORDER_SLOT +
					       2 * (JT_REORDER_SMALL + JT_REORDER_SLOT));
	assert_int_equal(jt_reorder__flush(r, 20, on_mixed, &m), 5);
	assert_int_equal(run(r, (const uint64_t[]){ 15, 50 }, 2, 7), 1);	/* 15: too late */
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_mixed, &m), 5);
	assert_int_equal(m.n, 10);
	for (i = 0; i < 9; i++) {
		assert_int_equal(m.ts[i], want_ts[i]);
		assert_int_equal(m.tag[i], want_tag[i]);
	}
	assert_int_equal(m.tag[9], 8);
	assert_int_equal(jt_reorder__bytes(r), 0);
	jt_reorder__free(r);
}

/* Calls let out: how many, and whether their times and ids kept their order. */
struct lane_out {
	size_t n;
	uint64_t last_ts, last_id;
	bool bad;
};

static void on_lane(void *ctx, const void *rec, size_t len)
{
	const struct jt_event *ev = rec;
	struct lane_out *o = ctx;

	if (len != JT_EVENT_CALL_LEN || (o->n && (ev->ts < o->last_ts || ev->id != o->last_id + 1)))
		o->bad = true;
	o->last_ts = ev->ts;
	o->last_id = ev->id;
	o->n++;
}

/* The lane wraps as calls go out while others come, and grows wrapped, losing none. */
static void the_lane_wraps_and_grows_wrapped_in_order(void **state)
{
	struct jt_reorder *r = jt_reorder__new(1 << 20, 0);
	struct lane_out o = { 0 };
	uint64_t ts[8];
	uint32_t i, k;

	(void)state;
	for (i = 0; i < 40000; i += 8) {
		for (k = 0; k < 8; k++)
			ts[k] = 100 + 10 * (uint64_t)(i + k);
		assert_int_equal(run(r, ts, 8, 1 + i), 0);
		if (i < 25000 && i % 64 == 0 && i > 800)
			jt_reorder__flush(r, 10 * (uint64_t)(i - 600), on_lane, &o);
	}
	assert_true(jt_reorder__count(r) > 10000);
	jt_reorder__flush(r, UINT64_MAX, on_lane, &o);
	assert_int_equal(o.n, 40000);
	assert_false(o.bad);
	assert_int_equal(jt_reorder__bytes(r), 0);
	jt_reorder__free(r);
}

/* Each record costs its copy (JT_REORDER_SMALL bytes at least) and its slot. */
#define SMALL_COST (JT_REORDER_SMALL + JT_REORDER_SLOT)
static void max_bytes_lets_the_oldest_out_early(void **state)
{
	struct jt_reorder *r = jt_reorder__new(100, 3 * SMALL_COST + 200 + JT_REORDER_SLOT);
	uint32_t seqs[8];
	struct out o = { .seqs = seqs, .max = 8 };

	(void)state;
	push(r, 50, 0, 56);
	push(r, 10, 1, 200);
	assert_int_equal(jt_reorder__bytes(r), SMALL_COST + 200 + JT_REORDER_SLOT);
	push(r, 40, 2, 56);
	push(r, 20, 3, 64);
	assert_false(jt_reorder__over(r));	/* 3 small and one of 200: just fits */
	assert_int_equal(jt_reorder__flush(r, 0, on_rec, &o), 0);
	push(r, 30, 4, 56);
	assert_true(jt_reorder__over(r));
	/* the oldest goes, and it is large: that is enough */
	assert_int_equal(jt_reorder__flush(r, 0, on_rec, &o), 1);
	assert_int_equal(seqs[0], 1);
	assert_false(jt_reorder__over(r));
	assert_int_equal(jt_reorder__bytes(r), 4 * SMALL_COST);
	assert_int_equal(jt_reorder__floor(r), 10);
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), 4);
	assert_int_equal(jt_reorder__bytes(r), 0);
	assert_false(o.bad_order);
	assert_false(o.bad_bytes);
	jt_reorder__free(r);
}

/*
 * Perf map lines are timed at the last read of their map, often before everything held:
 * they go in at the front, in arrival order, without a walk over what is held (100,000
 * here: done by walking, this would move a hundred thousand slots for each).
 */
static void records_far_back_go_in_at_the_front_in_arrival_order(void **state)
{
	enum { HELD = 100000, LATE = 20000 };
	struct jt_reorder *r = jt_reorder__new(1 << 20, 0);
	uint32_t *seqs = calloc(HELD + LATE, sizeof(*seqs));
	struct out o = { .seqs = seqs, .max = HELD + LATE };
	uint32_t i;

	(void)state;
	assert_non_null(seqs);
	for (i = 0; i < HELD; i++)
		push(r, 1000 + i, i, 32);
	for (i = 0; i < LATE; i++)	/* two timestamps, interleaved, both before all held */
		push(r, 500 + (i & 1), HELD + i, 16);
	assert_int_equal(jt_reorder__count(r), HELD + LATE);
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_rec, &o), HELD + LATE);
	assert_false(o.bad_order);
	assert_false(o.bad_bytes);
	for (i = 0; i < LATE / 2; i++) {
		assert_int_equal(seqs[i], HELD + 2 * i);	/* time 500, in arrival order */
		assert_int_equal(seqs[LATE / 2 + i], HELD + 2 * i + 1);	/* then 501 */
	}
	for (i = 0; i < HELD; i++)
		assert_int_equal(seqs[LATE + i], i);
	free(seqs);
	jt_reorder__free(r);
}

/* Near and far-back records mixed at random, let out in steps: one order, ties by arrival. */
static void near_and_far_records_mixed_come_out_in_order(void **state)
{
	enum { N = 200000 };
	struct jt_reorder *r = jt_reorder__new(1 << 20, 0);
	unsigned char *seen = calloc(N, 1);
	struct out o = { .seen = seen };
	uint64_t now = 1000000, lo;
	uint32_t i, rnd = 12345;

	(void)state;
	assert_non_null(seen);
	for (i = 0; i < N; i++) {
		rnd = rnd * 1103515245 + 12345;
		now += rnd >> 30;	/* 0 to 3 ns on */
		lo = jt_reorder__floor(r);
		/* one in eight far back, down to the floor; the rest a little late, or equal */
		if ((rnd >> 8) % 8 == 0)
			push(r, lo + (rnd >> 12) % (now - lo + 1), i, 16 + (rnd >> 20) % 200);
		else
			push(r, now - (rnd >> 16) % 4, i, 16 + (rnd >> 20) % 100);
		if (i % 5000 == 4999)
			jt_reorder__flush(r, now - 2000, on_rec, &o);
	}
	jt_reorder__flush(r, UINT64_MAX, on_rec, &o);
	assert_int_equal(o.n, N);
	assert_false(o.bad_order);
	assert_false(o.bad_bytes);
	for (i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(jt_reorder__bytes(r), 0);
	free(seen);
	jt_reorder__free(r);
}

/* Records too short to carry a struct trec: the expected length is known from the order. */
struct sized_out {
	size_t next_len;
	size_t n;
	bool bad;
};

static void on_sized(void *ctx, const void *rec, size_t len)
{
	struct sized_out *o = ctx;
	size_t i;

	if (len != o->next_len)
		o->bad = true;
	for (i = 0; i < len; i++)
		if (((const unsigned char *)rec)[i] != pattern(len, i))
			o->bad = true;
	o->next_len--;
	o->n++;
}

static void records_of_every_size_are_copied_intact(void **state)
{
	struct jt_reorder *r = jt_reorder__new(1 << 20, 0);
	struct sized_out o = { .next_len = 2000 };
	unsigned char buf[2000];
	size_t len, i;

	(void)state;
	/* sizes 1 .. 2000, pushed newest first so every one is moved by later inserts */
	for (len = 1; len <= 2000; len++) {
		for (i = 0; i < len; i++)
			buf[i] = pattern(len, i);
		assert_int_equal(jt_reorder__push(r, 10000 - len, buf, len), 0);
		memset(buf, 0xa5, len);	/* the caller's buffer is theirs again */
	}
	assert_int_equal(jt_reorder__count(r), 2000);
	/* half now, half later: records wait intact inside */
	assert_int_equal(jt_reorder__flush(r, 10000 - 1001, on_sized, &o), 1000);
	assert_false(o.bad);
	assert_int_equal(jt_reorder__flush(r, UINT64_MAX, on_sized, &o), 1000);
	assert_int_equal(o.n, 2000);
	assert_false(o.bad);
	jt_reorder__free(r);
}

/* xorshift64*: reproducible and fast enough for a million records */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/*
 * A million records as CPUs deliver them: record i is stamped somewhere in
 * [i * 100, i * 100 + 5000), so neighbours arrive out of order and some share a stamp.
 * The window lets out all that no later record can precede.
 */
static void nearly_sorted_million_come_out_in_order_and_complete(void **state)
{
	enum { N = 1000000, STEP = 100, JITTER = 5000 };
	struct jt_reorder *r = jt_reorder__new(1 << 20, 0);
	struct out o = { .seen = calloc(N, 1) };
	unsigned char buf[256];
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t flushed = 0, i;

	(void)state;
	assert_non_null(o.seen);
	for (i = 0; i < N; i++) {
		uint64_t ts = (uint64_t)i * STEP + rnd(&seed) % JITTER;
		size_t len = i % 7 ? 16 + rnd(&seed) % 48 : 65 + rnd(&seed) % 160;

		make_rec(buf, ts, i, len);
		assert_int_equal(jt_reorder__push(r, ts, buf, len), 0);
		/* every later record is stamped at or after (i + 1) * STEP */
		if (i % 1000 == 999)
			flushed += jt_reorder__flush(r, (uint64_t)(i + 1) * STEP - 1, on_rec, &o);
	}
	assert_true(jt_reorder__count(r) > 0);
	flushed += jt_reorder__flush(r, UINT64_MAX, on_rec, &o);
	assert_int_equal(flushed, N);
	assert_int_equal(o.n, N);
	assert_false(o.bad_order);
	assert_false(o.bad_bytes);
	for (i = 0; i < N; i++)
		if (o.seen[i] != 1)
			fail_msg("record %zu came out %u times", i, o.seen[i]);
	assert_int_equal(jt_reorder__count(r), 0);
	free(o.seen);
	jt_reorder__free(r);
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;	/* small chunks and mmap()ed ones */
}

/* Run under valgrind --leak-check=full as well: this counts only glibc's heap. */
static void free_with_records_still_held_leaks_nothing(void **state)
{
	size_t before = heap_in_use();
	struct jt_reorder *r = jt_reorder__new(1 << 20, 0);
	struct out o = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < 20000; i++)	/* small pooled records and large ones */
		push(r, 20000 - i, i, i % 3 ? 16 + i % 48 : 100 + i % 1900);
	assert_int_equal(jt_reorder__flush(r, 10000, on_rec, &o), 10000);
	assert_true(jt_reorder__count(r) > 0);
	jt_reorder__free(r);
	assert_int_equal(heap_in_use(), before);
	jt_reorder__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(out_of_order_input_comes_out_sorted),
		cmocka_unit_test(equal_timestamps_keep_arrival_order),
		cmocka_unit_test(flush_lets_out_only_records_up_to_the_watermark),
		cmocka_unit_test(flush_of_empty_buffer_lets_out_nothing),
		cmocka_unit_test(push_older_than_last_let_out_returns_erange),
		cmocka_unit_test(max_records_lets_the_oldest_out_early),
		cmocka_unit_test(max_bytes_lets_the_oldest_out_early),
		cmocka_unit_test(short_records_are_held_in_their_slot),
		cmocka_unit_test(the_ring_wraps_and_grows_wrapped_in_order),
		cmocka_unit_test(a_runs_lane_merges_with_other_records_by_time_and_arrival),
		cmocka_unit_test(the_lane_wraps_and_grows_wrapped_in_order),
		cmocka_unit_test(records_far_back_go_in_at_the_front_in_arrival_order),
		cmocka_unit_test(near_and_far_records_mixed_come_out_in_order),
		cmocka_unit_test(records_of_every_size_are_copied_intact),
		cmocka_unit_test(nearly_sorted_million_come_out_in_order_and_complete),
		cmocka_unit_test(free_with_records_still_held_leaks_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
