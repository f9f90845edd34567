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
	struct jt_ev_call ev[64];
	int n;
	int stop_at;		/* return nonzero at this call (0: never) */
};

static int emit(void *ctx, const struct jt_ev_call *ev)
{
	struct seen *s = ctx;

	if (s->stop_at && s->n + 1 == s->stop_at)
		return -5;
	assert_true(s->n < 64);
	s->ev[s->n++] = *ev;
	return 0;
}

static uint64_t fixed_now(void *ctx)
{
	(void)ctx;
	return NOW;
}

static struct region make(void)
{
	struct region r;

	r.mem = aligned_alloc(64, REGION);
	assert_non_null(r.mem);
	memset(r.mem, 0, REGION);
	r.h = (struct jt_callbuf_hdr *)r.mem;
	r.h->magic = JT_CALLBUF_MAGIC;
	r.h->version = JT_CALLBUF_VERSION;
	r.h->nr_slots = SLOTS;
	r.h->nr_recs = RECS;
	r.h->slot_size = SLOT_SIZE;
	return r;
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
	assert_int_equal(s.ev[0].h.ts, 300);
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
		assert_true(s.ev[i - 1].h.ts <= s.ev[i].h.ts);
	assert_int_equal(s.ev[0].h.type, JT_EV_ENTER);
	assert_int_equal(s.ev[0].h.pid, PID);
	assert_int_equal(s.ev[0].h.tid, 11);
	assert_int_equal(s.ev[0].h.size, sizeof(struct jt_ev_call));
	assert_int_equal(s.ev[0].id, 1);
	assert_int_equal(s.ev[2].h.tid, 14);
	assert_int_equal(s.ev[3].h.type, JT_EV_LEAVE);
	assert_int_equal(s.ev[3].id, 2);
	assert_int_equal(s.ev[4].h.type, JT_EV_LEAVE);
	/* the writer is told how far we read */
	assert_int_equal(slot(&r, 0)->tail, 2);
	assert_int_equal(slot(&r, 2)->tail, 2);
	jt_callbuf__stats(cb, &st);
	assert_int_equal(st.records, 5);
	assert_int_equal(st.bad, 0);
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
		assert_int_equal(s.ev[i].h.ts, 10 + i);
	/* the emitter says stop (the log failed): what it refused is read next time */
	put(&r, 0, 11, 20, 1, false);
	put(&r, 0, 11, 21, 1, true);
	s.stop_at = s.n + 2;
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), -1);
	s.stop_at = 0;
	assert_int_equal(jt_callbuf__drain(cb, 100, emit, &s), 1);
	assert_int_equal(s.ev[s.n - 1].h.ts, 21);
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
	assert_int_equal(s.ev[0].h.ts, 5);
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
	assert_int_equal(s.ev[0].h.ts, 500);
	assert_int_equal(s.ev[0].h.tid, 12);
	assert_int_equal(s.ev[1].h.ts, 1000);
	assert_int_equal(s.ev[2].h.ts, NOW);
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
	assert_int_equal(s.ev[2].h.tid, 15);
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
		cmocka_unit_test(test_forged_indexes_are_counted_and_skipped),
		cmocka_unit_test(test_forged_records_are_counted_not_delivered),
		cmocka_unit_test(test_full_rings_are_counted_from_the_writers_counters),
		cmocka_unit_test(test_tsc_records_are_put_on_the_clock_and_checked_raw),
		cmocka_unit_test(test_tsc_records_without_a_calibration_are_refused),
		cmocka_unit_test(test_an_exited_threads_slot_is_freed_once_drained),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
