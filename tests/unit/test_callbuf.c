// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the calls-region source (user/sources/callbuf.c) on regions crafted in
 * memory: the geometry it refuses, what it skips and what it keeps at take, records merged
 * by time across threads, and everything a hostile process can write (indexes, times,
 * thread ids, counters) counted and never read out of bounds. No root needed.
 */
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

#include "jt_callbuf.h"
#include "sources/callbuf.h"
#include "sources/tscclock.h"

#define SLOTS 4
#define RECS 8
#define SLOT_SIZE (offsetof(struct jt_callbuf_slot, recs) + RECS * sizeof(struct jt_callbuf_rec))
#define REGION (JT_CALLBUF_HDR_SIZE + SLOTS * SLOT_SIZE)
#define PID 4242
#define ME 7
#define NOW 1000000ULL

struct region {
	char *mem;
	struct jt_callbuf_hdr *h;
};

/* What the emitter saw. */
struct seen {
	struct jt_event ev[64];	/* an enter or leave's first JT_EVENT_CALL_LEN bytes */
	int n;
	int stop_at;		/* return nonzero at this call (0: never) */
};

static int emit(void *ctx, const struct jt_event *ev)
{
	struct seen *s = ctx;

	if (s->stop_at && s->n + 1 == s->stop_at)
		return -5;
	assert_true(s->n < 64);
	memcpy(&s->ev[s->n++], ev, JT_EVENT_CALL_LEN);
	return 0;
}

static uint64_t fixed_now(void *ctx)
{
	(void)ctx;
	return NOW;
}

/* A region of size bytes as the agent makes it, its slots slot_size apart. */
static struct region make_sized(size_t size, uint32_t slot_size, uint32_t nr_sums)
{
	struct region r;

	r.mem = aligned_alloc(64, size);
	assert_non_null(r.mem);
	memset(r.mem, 0, size);
	r.h = (struct jt_callbuf_hdr *)r.mem;
	r.h->magic = JT_CALLBUF_MAGIC;
	r.h->version = JT_CALLBUF_VERSION;
	r.h->nr_slots = SLOTS;
	r.h->nr_recs = RECS;
	r.h->slot_size = slot_size;
	r.h->nr_sums = nr_sums;
	return r;
}

static struct region make(void)
{
	return make_sized(REGION, SLOT_SIZE, 0);
}

static struct jt_callbuf_slot *slot(struct region *r, int i)
{
	return (struct jt_callbuf_slot *)(r->mem + JT_CALLBUF_HDR_SIZE + i * SLOT_SIZE);
}

/* A thread's call as the agent writes it. */
static void put(struct region *r, int i, uint32_t tid, uint64_t ts, uint64_t id, bool leave)
{
	struct jt_callbuf_slot *s = slot(r, i);

	s->state = JT_CALLBUF_CLAIMED;
	s->tid = tid;
	s->recs[s->head % RECS] = (struct jt_callbuf_rec){ ts, leave ? id | JT_CALLBUF_LEAVE : id };
	s->head++;
}

static struct jt_callbuf *take(struct region *r, bool handed)
{
	const char *why = "unset";
	struct jt_callbuf *cb = jt_callbuf__take(r->mem, REGION, PID, ME, handed, &why);

	assert_non_null(cb);
	assert_null(why);
	jt_callbuf__set_clock(cb, fixed_now, NULL);
	return cb;
}

static void refused(struct region *r, size_t size, const char *want)
{
	const char *why = NULL;

	assert_null(jt_callbuf__take(r->mem, size, PID, ME, false, &why));
	assert_non_null(why);
	assert_non_null(strstr(why, want));
}

static void test_geometry_out_of_bounds_is_refused(void **state)
{
	struct region r = make();

	(void)state;
	refused(&r, 100, "smaller than its header");
	refused(&r, REGION - 1, "past the end");
	r.h->magic ^= 1;
	refused(&r, REGION, "magic");
	r.h->magic ^= 1;
	r.h->version = 2;
	refused(&r, REGION, "version");
	r.h->version = JT_CALLBUF_VERSION;
	r.h->clock = 2;
	refused(&r, REGION, "a clock");
	r.h->clock = JT_CALLBUF_CLOCK_MONO;
	r.h->nr_slots = 0;
	refused(&r, REGION, "slot count");
	r.h->nr_slots = 5000;
	refused(&r, REGION, "slot count");
	r.h->nr_slots = SLOTS;
	r.h->nr_recs = 6;
	refused(&r, REGION, "power of two");
	r.h->nr_recs = 1u << 30;
	refused(&r, REGION, "power of two");
	r.h->nr_recs = 16;	/* a ring that its slot cannot hold */
	refused(&r, REGION, "does not hold");
	r.h->nr_recs = RECS;
	r.h->slot_size = SLOT_SIZE + 1;
	refused(&r, REGION, "does not hold");
	r.h->slot_size = 0xffffffc0u;	/* slots * size overflows 32 bits */
	refused(&r, REGION, "past the end");
	free(r.mem);
}

static void test_another_live_collector_keeps_it(void **state)
{
	struct region r = make();
	struct jt_callbuf *cb;

	(void)state;
	r.h->collector = (uint32_t)getpid();	/* alive */
	refused(&r, REGION, "another jitrace");
	r.h->collector = JT_CALLBUF_HANDED;	/* handed to no one we know: void */
	cb = take(&r, false);
	assert_int_equal(r.h->collector, ME);
	jt_callbuf__close(cb);
	assert_int_equal(r.h->collector, 0);	/* given back: the agent calls its stubs */
	free(r.mem);
}

static void test_calls_before_take_are_skipped_unless_handed(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb;

	(void)state;
	put(&r, 0, 11, 100, 1, false);
	put(&r, 0, 11, 200, 1, true);
	cb = take(&r, false);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 0);
	put(&r, 0, 11, 300, 2, false);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 1);
	assert_int_equal(s.ev[0].ts, 300);
	jt_callbuf__close(cb);

	/* handed over by the agent: every record is this recording's */
	r = (free(r.mem), make());
	r.h->collector = JT_CALLBUF_HANDED;
	put(&r, 0, 11, 100, 1, false);
	put(&r, 0, 11, 200, 1, true);
	s.n = 0;
	cb = take(&r, true);
	assert_int_equal(r.h->collector, ME);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 2);
	jt_callbuf__close(cb);
	free(r.mem);
}

static void test_threads_are_merged_by_time(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb = take(&r, false);
	struct jt_callbuf_stats st;
	int i;

	(void)state;
	put(&r, 0, 11, 10, 1, false);
	put(&r, 0, 11, 40, 1, true);
	put(&r, 2, 13, 20, 2, false);
	put(&r, 2, 13, 30, 2, true);
	put(&r, 3, 14, 25, 3, false);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 5);
	for (i = 1; i < s.n; i++)
		assert_true(s.ev[i - 1].ts <= s.ev[i].ts);
	assert_int_equal(s.ev[0].type, JT_EV_ENTER);
	assert_int_equal(s.ev[0].pid, PID);
	assert_int_equal(s.ev[0].tid, 11);
	assert_int_equal(s.ev[0].len, JT_EVENT_CALL_LEN);
	assert_int_equal(s.ev[0].id, 1);
	assert_int_equal(s.ev[2].tid, 14);
	assert_int_equal(s.ev[3].type, JT_EV_LEAVE);
	assert_int_equal(s.ev[3].id, 2);
	assert_int_equal(s.ev[4].type, JT_EV_LEAVE);
	/* the writer is told how far we read */
	assert_int_equal(slot(&r, 0)->tail, 2);
	assert_int_equal(slot(&r, 2)->tail, 2);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.records, 5);
	assert_int_equal(st.bad, 0);
	jt_callbuf__close(cb);
	free(r.mem);
}

/*
 * Only calls timed up to where the other sources were read: the later ones, of every
 * thread, wait for a later drain, the slot's tail left before them.
 */
static void test_a_drain_upto_leaves_later_calls_for_later(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb = take(&r, false);

	(void)state;
	put(&r, 0, 11, 10, 1, false);
	put(&r, 1, 12, 20, 2, false);
	put(&r, 0, 11, 30, 1, true);
	put(&r, 1, 12, 40, 2, true);
	assert_int_equal(jt_callbuf__drain_upto(cb, 100, 5, emit, &s), 0);
	assert_int_equal(jt_callbuf__drain_upto(cb, 100, 20, emit, &s), 2);
	assert_int_equal(s.ev[1].ts, 20);
	assert_int_equal(slot(&r, 0)->tail, 1);
	assert_int_equal(slot(&r, 1)->tail, 1);
	assert_int_equal(jt_callbuf__drain_upto(cb, 100, 30, emit, &s), 1);
	assert_int_equal(s.ev[2].ts, 30);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 1);
	assert_int_equal(s.ev[3].ts, 40);
	jt_callbuf__close(cb);
	free(r.mem);
}

static void test_a_drain_stops_at_max_and_goes_on(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb = take(&r, false);
	int i;

	(void)state;
	for (i = 0; i < 6; i++)
		put(&r, i % 2, 11 + i % 2, 10 + i, 1, i >= 2);
	assert_int_equal(jt_callbuf__drain(cb, 4, emit, &s), 4);
	assert_int_equal(jt_callbuf__drain(cb, 4, emit, &s), 2);
	for (i = 0; i < 6; i++)
		assert_int_equal(s.ev[i].ts, 10 + i);
	/* the emitter says stop (the log failed): what it refused is read next time */
	put(&r, 0, 11, 20, 1, false);
	put(&r, 0, 11, 21, 1, true);
	s.stop_at = s.n + 2;
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), -1);
	s.stop_at = 0;
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 1);
	assert_int_equal(s.ev[s.n - 1].ts, 21);
	jt_callbuf__close(cb);
	free(r.mem);
}

static void test_forged_indexes_are_counted_and_skipped(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb = take(&r, false);
	struct jt_callbuf_stats st;

	(void)state;
	slot(&r, 0)->head = 1000;	/* more than the ring holds */
	slot(&r, 1)->head = UINT64_MAX;	/* behind us */
	slot(&r, 2)->tail = 12345;	/* the shared tail is never read back */
	put(&r, 2, 13, 50, 9, false);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 1);
	assert_int_equal(s.ev[0].id, 9);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.bad, 2);
	/* from the forged head on, the slot is read as any other */
	put(&r, 0, 11, 60, 1, false);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 1);
	jt_callbuf__close(cb);
	free(r.mem);
}

static void test_forged_records_are_counted_not_delivered(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb = take(&r, false);
	struct jt_callbuf_stats st;

	(void)state;
	put(&r, 0, 11, NOW + 1, 1, false);	/* later than the clock after head was read */
	put(&r, 0, 11, 0, 1, false);		/* no time */
	put(&r, 0, 11, 5, 1, false);		/* fine */
	put(&r, 1, 0, 6, 1, false);		/* no thread */
	put(&r, 2, JT_PID_LIMIT, 7, 1, false);	/* a thread id no kernel gives */
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 1);
	assert_int_equal(s.ev[0].ts, 5);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.bad, 4);
	assert_int_equal(st.records, 1);
	jt_callbuf__close(cb);
	free(r.mem);
}

/* The TSC's pairs a drain is given: 4 ticks a ns, the TSC now at 4 * NOW. */
static int tsc_pair(void *ctx, uint64_t *tsc, uint64_t *ns, uint64_t *width)
{
	(void)ctx;
	*ns = NOW;
	*tsc = 4 * NOW;
	*width = 1;
	return 0;
}

static void test_tsc_records_are_put_on_the_clock_and_checked_raw(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_tscclock *tc = jt_tscclock__new(tsc_pair, NULL);
	struct jt_callbuf *cb;
	struct jt_callbuf_stats st;

	(void)state;
	r.h->clock = JT_CALLBUF_CLOCK_TSC;
	cb = take(&r, false);
	assert_true(jt_callbuf__uses_tsc(cb));
	/* the line: 4 ticks a ns through (4 * NOW, NOW) */
	jt_tscclock__add(tc, 2 * NOW, NOW / 2, 1);
	jt_callbuf__set_tscclock(cb, tc);
	put(&r, 0, 11, 4 * 1000, 1, false);
	put(&r, 0, 11, 4 * NOW, 1, true);
	put(&r, 0, 11, 4 * NOW + 1, 2, false);	/* a TSC past the one read after head */
	put(&r, 1, 12, 4 * 500, 3, false);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 3);
	assert_int_equal(s.ev[0].ts, 500);
	assert_int_equal(s.ev[0].tid, 12);
	assert_int_equal(s.ev[1].ts, 1000);
	assert_int_equal(s.ev[2].ts, NOW);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.bad, 1);
	jt_callbuf__close(cb);
	jt_tscclock__free(tc);
	free(r.mem);
}

static void test_tsc_records_without_a_calibration_are_refused(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb;
	struct jt_callbuf_stats st;

	(void)state;
	r.h->clock = JT_CALLBUF_CLOCK_TSC;
	cb = take(&r, false);
	put(&r, 0, 11, 5, 1, false);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 0);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.bad, 1);
	jt_callbuf__close(cb);
	free(r.mem);
}

static void test_full_rings_are_counted_from_the_writers_counters(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb;
	struct jt_callbuf_stats st;

	(void)state;
	slot(&r, 0)->dropped = 7;	/* before this recording: not ours */
	cb = take(&r, false);
	slot(&r, 0)->dropped = 10;
	slot(&r, 1)->dropped = 5;
	jt_callbuf__drain(cb, 100, emit, &s);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.full, 3 + 5);
	slot(&r, 1)->dropped = 2;	/* shrinks: forged, nothing counted */
	jt_callbuf__drain(cb, 100, emit, &s);
	slot(&r, 1)->dropped = 4;
	jt_callbuf__drain(cb, 100, emit, &s);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.full, 3 + 5 + 2);
	jt_callbuf__close(cb);
	free(r.mem);
}

/* What on_lost was told: one entry a call, in order. */
struct told {
	uint32_t tid[8];
	uint64_t n[8];
	int nr;
};

static void tell_lost(void *ctx, uint32_t tid, uint64_t n)
{
	struct told *t = ctx;

	assert_true(t->nr < 8);
	t->tid[t->nr] = tid;
	t->n[t->nr++] = n;
}

/*
 * Each thread's losses are told with its tid as drains find them; a slot given to another
 * thread tells that thread's; a tid out of range is told as 0 (counted all the same).
 */
static void test_full_rings_are_told_per_thread(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct told t = { 0 };
	struct jt_callbuf *cb;
	struct jt_callbuf_stats st;

	(void)state;
	cb = take(&r, false);
	jt_callbuf__on_lost(cb, tell_lost, &t);
	slot(&r, 0)->tid = 77;
	slot(&r, 0)->state = JT_CALLBUF_CLAIMED;
	slot(&r, 0)->dropped = 1200;
	slot(&r, 1)->tid = 78;
	slot(&r, 1)->state = JT_CALLBUF_CLAIMED;
	jt_callbuf__drain(cb, 100, emit, &s);
	assert_int_equal(t.nr, 1);	/* 78 lost none: not told */
	assert_int_equal(t.tid[0], 77);
	assert_int_equal(t.n[0], 1200);
	slot(&r, 1)->dropped = 34;
	jt_callbuf__drain(cb, 100, emit, &s);
	assert_int_equal(t.nr, 2);
	assert_int_equal(t.tid[1], 78);
	assert_int_equal(t.n[1], 34);
	/* 77 exits, its slot freed by the drain, and 79 takes it and loses 5 */
	slot(&r, 0)->state = JT_CALLBUF_EXITED;
	jt_callbuf__drain(cb, 100, emit, &s);
	assert_int_equal(slot(&r, 0)->state, JT_CALLBUF_FREE);
	slot(&r, 0)->tid = 79;
	slot(&r, 0)->state = JT_CALLBUF_CLAIMED;
	slot(&r, 0)->dropped = 1205;
	slot(&r, 1)->tid = JT_PID_LIMIT;	/* forged */
	slot(&r, 1)->dropped = 40;
	jt_callbuf__drain(cb, 100, emit, &s);
	assert_int_equal(t.nr, 4);
	assert_int_equal(t.tid[2], 79);
	assert_int_equal(t.n[2], 5);
	assert_int_equal(t.tid[3], 0);
	assert_int_equal(t.n[3], 6);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.full, 1200 + 34 + 5 + 6);
	jt_callbuf__close(cb);
	free(r.mem);
}

static void test_an_exited_threads_slot_is_freed_once_drained(void **state)
{
	struct region r = make();
	struct seen s = { 0 };
	struct jt_callbuf *cb = take(&r, false);

	(void)state;
	put(&r, 1, 12, 10, 1, false);
	put(&r, 1, 12, 11, 1, true);
	slot(&r, 1)->state = JT_CALLBUF_EXITED;
	assert_int_equal(jt_callbuf__drain(cb, 1, emit, &s), 1);
	assert_int_equal(slot(&r, 1)->state, JT_CALLBUF_EXITED);	/* one left to read */
	assert_int_equal(jt_callbuf__drain(cb, 1, emit, &s), 1);
	jt_callbuf__drain(cb, 1, emit, &s);
	assert_int_equal(slot(&r, 1)->state, JT_CALLBUF_FREE);
	/* another thread takes it, its head where the last one left it */
	put(&r, 1, 15, 20, 2, false);
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 1);
	assert_int_equal(s.ev[2].tid, 15);
	jt_callbuf__close(cb);
	free(r.mem);
}

/* ---- summary mode: sums and spans ---- */

#define NSUMS 4
#define SUM_SLOT (((SLOT_SIZE + NSUMS * sizeof(struct jt_callbuf_sum)) + 63) & ~(size_t)63)
#define SUM_REGION (JT_CALLBUF_HDR_SIZE + SLOTS * SUM_SLOT)

/* Whole events as the emitter got them. */
struct events {
	struct jt_event ev[16];
	int n;
};

static int keep(void *ctx, const struct jt_event *ev)
{
	struct events *e = ctx;

	assert_true(e->n < 16 && ev->len <= sizeof(e->ev[0]));
	memcpy(&e->ev[e->n++], ev, ev->len);
	return 0;
}

static struct region make_sum(void)
{
	return make_sized(SUM_REGION, SUM_SLOT, NSUMS);
}

static struct jt_callbuf_slot *sslot(struct region *r, int i)
{
	return (struct jt_callbuf_slot *)(r->mem + JT_CALLBUF_HDR_SIZE + i * SUM_SLOT);
}

/* Slot i's table of sums, right after its ring. */
static struct jt_callbuf_sum *sums(struct region *r, int i)
{
	return (struct jt_callbuf_sum *)((char *)sslot(r, i) + SLOT_SIZE);
}

static void sput(struct region *r, int i, uint32_t tid, uint64_t ts, uint64_t id_kind)
{
	struct jt_callbuf_slot *s = sslot(r, i);

	s->state = JT_CALLBUF_CLAIMED;
	s->tid = tid;
	s->recs[s->head % RECS] = (struct jt_callbuf_rec){ ts, id_kind };
	s->head++;
}

static struct jt_callbuf *take_sum(struct region *r, uint64_t min_ns)
{
	const char *why = "unset";
	struct jt_callbuf *cb = jt_callbuf__take(r->mem, SUM_REGION, PID, ME, true, &why);

	assert_non_null(cb);
	jt_callbuf__set_clock(cb, fixed_now, NULL);
	assert_int_equal(jt_callbuf__want_sums(cb, min_ns), 0);
	assert_int_equal(r->h->mode, JT_CALLBUF_MODE_SUM);
	assert_int_equal(r->h->min, min_ns);
	return cb;
}

static void test_a_table_of_sums_out_of_bounds_is_refused(void **state)
{
	struct region r = make_sum();

	(void)state;
	r.h->nr_sums = 3;
	refused(&r, SUM_REGION, "table of sums");
	r.h->nr_sums = 64;	/* more than the slot holds past its ring */
	refused(&r, SUM_REGION, "table of sums");
	r.h->nr_sums = 1u << 20;
	refused(&r, SUM_REGION, "table of sums");
	free(r.mem);
}

static void test_sums_are_logged_as_what_they_added(void **state)
{
	struct region r = make_sum();
	struct events e = { 0 };
	struct jt_callbuf *cb = take_sum(&r, UINT64_MAX);
	struct jt_callbuf_stats st;

	(void)state;
	sslot(&r, 0)->state = JT_CALLBUF_CLAIMED;
	sslot(&r, 0)->tid = 11;
	sums(&r, 0)[2] = (struct jt_callbuf_sum){ .id = 7, .calls = 10, .incl = 500, .excl = 300 };
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.ev[0].type, JT_EV_CALL_SUM);
	assert_int_equal(e.ev[0].tid, 11);
	assert_int_equal(e.ev[0].ts, NOW);
	assert_int_equal(e.ev[0].sum_of, 7);
	assert_int_equal(e.ev[0].sum_calls, 10);
	assert_int_equal(e.ev[0].sum_incl_ns, 500);
	assert_int_equal(e.ev[0].sum_excl_ns, 300);
	/* nothing new: nothing logged; then only what was added, timed at an exit before now */
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	assert_int_equal(e.n, 1);
	sums(&r, 0)[2].calls = 12;
	sums(&r, 0)[2].incl = 600;
	assert_int_equal(jt_callbuf__drain_sums(cb, NOW - 5, keep, &e), 0);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.ev[1].ts, NOW - 5);
	assert_int_equal(e.ev[1].sum_calls, 2);
	assert_int_equal(e.ev[1].sum_incl_ns, 100);
	assert_int_equal(e.ev[1].sum_excl_ns, 0);
	/* forged: a counter that shrinks, an entry that changes method, kind bits in an id */
	sums(&r, 0)[2].calls = 1;
	sums(&r, 0)[1] = (struct jt_callbuf_sum){ .id = 1ULL << 63, .calls = 1 };
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	sums(&r, 0)[2].id = 8;
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.bad, 3);
	assert_int_equal(e.n, 3);	/* method 8 from 0: its one call */
	assert_int_equal(e.ev[2].sum_of, 8);
	assert_int_equal(e.ev[2].sum_calls, 1);
	jt_callbuf__close(cb);
	free(r.mem);
}

/* A TSC region's sums in ns: less than a ns of ticks waits until it is more, none lost. */
static void test_tsc_sums_under_a_ns_are_kept_for_later(void **state)
{
	struct region r = make_sum();
	struct events e = { 0 };
	struct jt_tscclock *tc = jt_tscclock__new(tsc_pair, NULL);
	struct jt_callbuf *cb;

	(void)state;
	r.h->clock = JT_CALLBUF_CLOCK_TSC;
	cb = take_sum(&r, UINT64_MAX);
	jt_tscclock__add(tc, 2 * NOW, NOW / 2, 1);	/* 4 ticks a ns */
	jt_callbuf__set_tscclock(cb, tc);
	sslot(&r, 0)->state = JT_CALLBUF_CLAIMED;
	sslot(&r, 0)->tid = 11;
	sums(&r, 0)[0] = (struct jt_callbuf_sum){ .id = 3, .calls = 0, .incl = 2, .excl = 2 };
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	assert_int_equal(e.n, 0);
	sums(&r, 0)[0] = (struct jt_callbuf_sum){ .id = 3, .calls = 1, .incl = 8, .excl = 6 };
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.ev[0].sum_calls, 1);
	assert_int_equal(e.ev[0].sum_incl_ns, 2);
	assert_int_equal(e.ev[0].sum_excl_ns, 1);
	jt_callbuf__close(cb);
	jt_tscclock__free(tc);
	free(r.mem);
}

/* Slot i's thread tid, which summed 4 calls of method 3, exited. */
static void exit_thread(struct region *r, int i, uint32_t tid)
{
	sslot(r, i)->tid = tid;
	sums(r, i)[0] = (struct jt_callbuf_sum){ .id = 3, .calls = 4, .incl = 40, .excl = 40 };
	sslot(r, i)->state = JT_CALLBUF_EXITED;
}

static void test_an_exited_threads_sums_come_before_its_slot_is_freed(void **state)
{
	struct region r = make_sum();
	struct events e = { 0 };
	struct jt_callbuf *cb = take_sum(&r, UINT64_MAX);

	(void)state;
	exit_thread(&r, 1, 12);
	assert_int_equal(jt_callbuf__drain(cb, 100, keep, &e), 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.ev[0].sum_calls, 4);
	assert_int_equal(sslot(&r, 1)->state, JT_CALLBUF_FREE);
	/* another thread there, its table from 0 as the agent clears it: all of it is new */
	memset(sums(&r, 1), 0, NSUMS * sizeof(struct jt_callbuf_sum));
	sslot(&r, 1)->state = JT_CALLBUF_CLAIMED;
	sslot(&r, 1)->tid = 13;
	sums(&r, 1)[0] = (struct jt_callbuf_sum){ .id = 3, .calls = 2, .incl = 20, .excl = 20 };
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.ev[1].tid, 13);
	assert_int_equal(e.ev[1].sum_calls, 2);
	jt_callbuf__close(cb);
	free(r.mem);
}

/*
 * A drain told no time (the session's ring not read to its end) leaves an exited thread's
 * sums and slot as they are; told one, it times them there (before an exit or exec still
 * in the ring), not now, and frees the slot.
 */
static void test_an_exited_threads_sums_wait_for_a_time_and_take_it(void **state)
{
	struct region r = make_sum();
	struct events e = { 0 };
	struct jt_callbuf *cb = take_sum(&r, UINT64_MAX);

	(void)state;
	exit_thread(&r, 1, 12);
	jt_callbuf__sums_at(cb, 0);
	assert_int_equal(jt_callbuf__drain(cb, 100, keep, &e), 0);
	assert_int_equal(e.n, 0);
	assert_int_equal(sslot(&r, 1)->state, JT_CALLBUF_EXITED);
	jt_callbuf__sums_at(cb, NOW - 7);
	assert_int_equal(jt_callbuf__drain(cb, 100, keep, &e), 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.ev[0].ts, NOW - 7);
	assert_int_equal(e.ev[0].tid, 12);
	assert_int_equal(e.ev[0].sum_calls, 4);
	assert_int_equal(sslot(&r, 1)->state, JT_CALLBUF_FREE);
	jt_callbuf__close(cb);
	free(r.mem);
}

/* When the agent made the region, as it says: how an exec'd pid's two regions are told apart. */
static void test_the_region_says_when_it_was_made(void **state)
{
	struct region r = make_sum();
	struct jt_callbuf *cb;

	(void)state;
	r.h->made = NOW - 3;
	cb = take_sum(&r, UINT64_MAX);
	r.h->made = 1;	/* read once, at take */
	assert_int_equal(jt_callbuf__made(cb), NOW - 3);
	jt_callbuf__close(cb);
	free(r.mem);
}

static void test_sums_from_before_the_take_are_a_start(void **state)
{
	struct region r = make_sum();
	struct events e = { 0 };
	const char *why;
	struct jt_callbuf *cb;

	(void)state;
	sslot(&r, 0)->state = JT_CALLBUF_CLAIMED;
	sslot(&r, 0)->tid = 11;
	sums(&r, 0)[0] = (struct jt_callbuf_sum){ .id = 3, .calls = 4, .incl = 40, .excl = 40 };
	cb = jt_callbuf__take(r.mem, SUM_REGION, PID, ME, false, &why);
	assert_non_null(cb);
	jt_callbuf__set_clock(cb, fixed_now, NULL);
	assert_int_equal(jt_callbuf__want_sums(cb, UINT64_MAX), 0);
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	assert_int_equal(e.n, 0);
	sums(&r, 0)[0].calls = 5;
	assert_int_equal(jt_callbuf__drain_sums(cb, 0, keep, &e), 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.ev[0].sum_calls, 1);
	jt_callbuf__close(cb);
	free(r.mem);
}

static void test_spans_are_delivered_whole_and_checked(void **state)
{
	struct region r = make_sum();
	struct events e = { 0 };
	struct jt_callbuf *cb = take_sum(&r, 50);
	struct jt_callbuf_stats st;

	(void)state;
	sput(&r, 0, 11, 100, 5);			/* an enter written one by one */
	sput(&r, 0, 11, 300, 6 | JT_CALLBUF_SPAN);	/* method 6 from 120 to 300 */
	sput(&r, 0, 11, 120, 70);			/* 70 ns of it its own */
	sput(&r, 0, 11, 400, 6 | JT_CALLBUF_SPAN);	/* enters after it leaves */
	sput(&r, 0, 11, 401, 1);
	assert_int_equal(jt_callbuf__drain(cb, 100, keep, &e), 3);
	assert_int_equal(e.ev[0].type, JT_EV_ENTER);
	assert_int_equal(e.ev[1].type, JT_EV_CALL_SPAN);
	assert_int_equal(e.ev[1].ts, 300);
	assert_int_equal(e.ev[1].sum_of, 6);
	assert_int_equal(e.ev[1].sum_incl_ns, 120);
	assert_int_equal(e.ev[1].sum_excl_ns, 70);
	/* the bad span's first record counted; its second, read alone, an enter of method 1 */
	assert_int_equal(e.ev[2].type, JT_EV_ENTER);
	assert_int_equal(e.ev[2].ts, 401);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.bad, 1);
	/* a span whose second record is not published yet, and one with both kinds */
	sput(&r, 0, 11, 500, 6 | JT_CALLBUF_SPAN | JT_CALLBUF_LEAVE);
	sput(&r, 0, 11, 600, 6 | JT_CALLBUF_SPAN);
	assert_int_equal(jt_callbuf__drain(cb, 100, keep, &e), 0);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.bad, 3);
	jt_callbuf__close(cb);
	free(r.mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry_out_of_bounds_is_refused),
		cmocka_unit_test(test_another_live_collector_keeps_it),
		cmocka_unit_test(test_calls_before_take_are_skipped_unless_handed),
		cmocka_unit_test(test_threads_are_merged_by_time),
		cmocka_unit_test(test_a_drain_stops_at_max_and_goes_on),
		cmocka_unit_test(test_a_drain_upto_leaves_later_calls_for_later),
		cmocka_unit_test(test_forged_indexes_are_counted_and_skipped),
		cmocka_unit_test(test_forged_records_are_counted_not_delivered),
		cmocka_unit_test(test_full_rings_are_counted_from_the_writers_counters),
		cmocka_unit_test(test_full_rings_are_told_per_thread),
		cmocka_unit_test(test_tsc_records_are_put_on_the_clock_and_checked_raw),
		cmocka_unit_test(test_tsc_records_without_a_calibration_are_refused),
		cmocka_unit_test(test_a_table_of_sums_out_of_bounds_is_refused),
		cmocka_unit_test(test_sums_are_logged_as_what_they_added),
		cmocka_unit_test(test_tsc_sums_under_a_ns_are_kept_for_later),
		cmocka_unit_test(test_an_exited_threads_sums_come_before_its_slot_is_freed),
		cmocka_unit_test(test_an_exited_threads_sums_wait_for_a_time_and_take_it),
		cmocka_unit_test(test_the_region_says_when_it_was_made),
		cmocka_unit_test(test_sums_from_before_the_take_are_a_start),
		cmocka_unit_test(test_spans_are_delivered_whole_and_checked),
		cmocka_unit_test(test_an_exited_threads_slot_is_freed_once_drained),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
