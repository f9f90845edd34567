// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the TSC calibration (user/sources/tscclock.c) on pairs we make up: values
 * put on the line between points, a value once given never moving when points come, the
 * error measured at each point, the ring of points wrapping, and the real pairs of this
 * machine when it has a TSC.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "sources/tscclock.h"
#include "base/util.h"

/* Pairs handed out in turn by the fake source. */
struct pairs {
	uint64_t tsc[8], ns[8];
	int n, i;
};

static int fake_pair(void *ctx, uint64_t *tsc, uint64_t *ns, uint64_t *width)
{
	struct pairs *p = ctx;

	if (p->i >= p->n)
		return -1;
	*tsc = p->tsc[p->i];
	*ns = p->ns[p->i++];
	*width = 10;
	return 0;
}

static void test_no_line_gives_zero(void **state)
{
	struct jt_tscclock *c = jt_tscclock__new(fake_pair, &(struct pairs){ 0 });

	(void)state;
	assert_int_equal(jt_tscclock__ns(c, 12345), 0);
	jt_tscclock__add(c, 1000, 5000000, 1);
	assert_int_equal(jt_tscclock__ns(c, 12345), 0);	/* one point: no slope yet */
	jt_tscclock__free(c);
}

static void test_values_between_points_are_on_their_segment(void **state)
{
	struct jt_tscclock *c = jt_tscclock__new(fake_pair, &(struct pairs){ 0 });

	(void)state;
	/* 3 ticks a ns, then 2 ticks a ns: each segment its own slope */
	jt_tscclock__add(c, 3000000, 1000000, 1);
	jt_tscclock__add(c, 6000000, 2000000, 1);
	jt_tscclock__add(c, 8000000, 3000000, 1);
	assert_int_equal(jt_tscclock__ns(c, 4500000), 1500000);
	assert_int_equal(jt_tscclock__ns(c, 7000000), 2500000);
	assert_int_equal(jt_tscclock__ns(c, 3000000), 1000000);
	/* before the first point: back along the line through the first and the last (2
	 * ns for 5 ticks), never below 0 */
	assert_int_equal(jt_tscclock__ns(c, 0), 0);
	assert_int_equal(jt_tscclock__ns(c, 1500000), 400000);
	jt_tscclock__free(c);
}

static void test_a_value_given_never_moves(void **state)
{
	struct jt_tscclock *c = jt_tscclock__new(fake_pair, &(struct pairs){ 0 });
	struct jt_tscclock_stats st;
	uint64_t before, after;

	(void)state;
	jt_tscclock__add(c, 1000000, 1000000, 1);
	jt_tscclock__add(c, 2000000, 2000000, 1);
	/* past the last point: extrapolated */
	before = jt_tscclock__ns(c, 2500000);
	assert_int_equal(before, 2500000);
	/* the clock was slower than the line said: the new point falls below what was given */
	jt_tscclock__add(c, 3000000, 2400000, 1);
	after = jt_tscclock__ns(c, 2500000);
	assert_int_equal(after, before);
	/* and what comes after is not earlier than it */
	assert_true(jt_tscclock__ns(c, 2600000) >= before);
	assert_true(jt_tscclock__ns(c, 3000000) >= jt_tscclock__ns(c, 2600000));
	jt_tscclock__stats(c, &st);
	assert_int_equal(st.points, 3);
	assert_int_equal(st.clamped, 1);
	assert_int_equal(st.max_err_ns, 600000);	/* 3000000 predicted, 2400000 seen */
	jt_tscclock__free(c);
}

static void test_a_tsc_that_goes_back_is_not_a_point(void **state)
{
	struct jt_tscclock *c = jt_tscclock__new(fake_pair, &(struct pairs){ 0 });
	struct jt_tscclock_stats st;

	(void)state;
	jt_tscclock__add(c, 1000000, 1000000, 1);
	jt_tscclock__add(c, 2000000, 2000000, 1);
	jt_tscclock__add(c, 1500000, 9000000, 1);
	jt_tscclock__stats(c, &st);
	assert_int_equal(st.points, 2);
	assert_int_equal(jt_tscclock__ns(c, 1500000), 1500000);
	jt_tscclock__free(c);
}

static void test_the_ring_of_points_wraps(void **state)
{
	struct jt_tscclock *c = jt_tscclock__new(fake_pair, &(struct pairs){ 0 });
	uint64_t i, prev = 0, v;

	(void)state;
	for (i = 1; i <= 3 * JT_TSC_POINTS; i++)
		jt_tscclock__add(c, i * 4000000, i * 1000000 + (i % 2) * 100, 1);
	for (i = 1; i <= 3 * JT_TSC_POINTS; i++) {
		v = jt_tscclock__ns(c, i * 4000000 + 2000000);
		assert_true(v >= prev);
		prev = v;
	}
	/* the newest points are kept exactly */
	assert_int_equal(jt_tscclock__ns(c, 3 * JT_TSC_POINTS * 4000000ULL),
			 3 * JT_TSC_POINTS * 1000000ULL + 0);
	jt_tscclock__free(c);
}

static void test_now_takes_two_points_first_then_one_a_ms(void **state)
{
	struct pairs p = { .tsc = { 1000, 2000, 3000, 10000 },
			   .ns = { 1000000, 1000500, 1000800, 3000000 }, .n = 4 };
	struct jt_tscclock *c = jt_tscclock__new(fake_pair, &p);
	struct jt_tscclock_stats st;
	uint64_t tsc, ns;

	(void)state;
	assert_int_equal(jt_tscclock__now(c, &tsc, &ns), 0);
	assert_int_equal(p.i, 2);
	assert_int_equal(tsc, 2000);
	assert_int_equal(ns, 1000500);
	assert_int_equal(jt_tscclock__now(c, &tsc, &ns), 0);	/* 300 ns later: no point */
	jt_tscclock__stats(c, &st);
	assert_int_equal(st.points, 2);
	assert_int_equal(jt_tscclock__now(c, &tsc, &ns), 0);	/* 2 ms later: one */
	jt_tscclock__stats(c, &st);
	assert_int_equal(st.points, 3);
	assert_int_equal(jt_tscclock__now(c, &tsc, &ns), -ENOTSUP);	/* no pairs left */
	jt_tscclock__free(c);
}

/* On this machine's TSC: a value read between two clock readings falls between them. */
static void test_real_pairs_put_the_tsc_on_the_clock(void **state)
{
	struct jt_tscclock *c = jt_tscclock__new(NULL, NULL);
	struct timespec ms = { 0, 2000000 };
	uint64_t tsc, ns, a, b, x, v;
	int i;

	(void)state;
	if (!jt_tscclock__invariant())
		skip();
	assert_int_equal(jt_tscclock__now(c, &tsc, &ns), 0);
	nanosleep(&ms, NULL);
	assert_int_equal(jt_tscclock__now(c, &tsc, &ns), 0);
	for (i = 0; i < 3; i++) {
		nanosleep(&ms, NULL);
		a = jt_now_ns();
		x = __builtin_ia32_rdtsc();
		b = jt_now_ns();
		assert_int_equal(jt_tscclock__now(c, &tsc, &ns), 0);
		v = jt_tscclock__ns(c, x);
		/* within the pair around it, give or take 20 us of a noisy VM's slope */
		assert_true(v + 20000 >= a && v <= b + 20000);
	}
	jt_tscclock__free(c);
}

/* x on the line through (t0, n0) and (t1, n1), by a 128-bit division: what the clock gives. */
static uint64_t divided(uint64_t t0, uint64_t n0, uint64_t t1, uint64_t n1, uint64_t x)
{
	unsigned __int128 d;

	if (x >= t0) {
		d = (unsigned __int128)(x - t0) * (n1 - n0) / (t1 - t0);
		return d > UINT64_MAX - n0 ? UINT64_MAX : n0 + (uint64_t)d;
	}
	d = (unsigned __int128)(t0 - x) * (n1 - n0) / (t1 - t0);
	return d >= n0 ? 0 : n0 - (uint64_t)d;
}

/*
 * The multiply that stands for the division gives the division's ns exactly, inside each
 * segment and on the line beyond the points, for slopes from a GHz TSC's to ones no TSC has
 * (a tick worth more than a ns, a line that does not rise), and far out.
 */
static void test_the_multiply_gives_the_division_exactly(void **state)
{
	/* ticks and ns between points, made uneven below */
	static const uint64_t gaps[][2] = {
		{ 3000000, 1000000 }, { 2194871, 1000003 }, { 1000, 1000000 },
		{ 1, 4000000000ULL }, { 5000000, 0 }, { 1ULL << 40, (1ULL << 40) - 1 },
	};
	uint64_t tsc[8], ns[8], x;
	unsigned int g, i, k;

	(void)state;
	srandom(29);
	for (g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		struct jt_tscclock *c = jt_tscclock__new(fake_pair, &(struct pairs){ 0 });

		tsc[0] = 123456789ULL * (g + 1);
		ns[0] = 987654321ULL;
		for (i = 1; i < 8; i++) {
			tsc[i] = tsc[i - 1] + gaps[g][0] + (gaps[g][0] > 1 ? random() % 97 : 0);
			ns[i] = ns[i - 1] + gaps[g][1] + (gaps[g][1] ? random() % 89 : 0);
		}
		for (i = 0; i < 8; i++)
			jt_tscclock__add(c, tsc[i], ns[i], 1);
		for (i = 0; i < 7; i++) {	/* in order, as drains give them */
			for (k = 0; k < 5000; k++) {
				x = tsc[i] + (uint64_t)((double)(tsc[i + 1] - tsc[i]) * k / 5000);
				assert_int_equal(jt_tscclock__ns(c, x),
						 divided(tsc[i], ns[i], tsc[i + 1], ns[i + 1], x));
			}
		}
		for (k = 0; k < 5000; k++) {	/* out of order, and the segment's ends */
			i = random() % 7;
			x = tsc[i] + random() % (tsc[i + 1] - tsc[i] + 1);
			assert_int_equal(jt_tscclock__ns(c, x),
					 divided(tsc[i], ns[i], tsc[i + 1], ns[i + 1], x));
		}
		/* before the first point, near and far, on the line through first and last */
		for (k = 0; k < 64; k++) {
			x = k < 63 ? tsc[0] - (tsc[0] >> k) : 0;
			assert_int_equal(jt_tscclock__ns(c, x),
					 divided(tsc[0], ns[0], tsc[7], ns[7], x));
		}
		/* after the last (each pinned, which only moves later points) */
		for (k = 0; k < 64; k++) {
			x = tsc[7] + (k < 63 ? 1ULL << k : UINT64_MAX - tsc[7]);
			assert_int_equal(jt_tscclock__ns(c, x),
					 divided(tsc[0], ns[0], tsc[7], ns[7], x));
		}
		jt_tscclock__free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_line_gives_zero),
		cmocka_unit_test(test_values_between_points_are_on_their_segment),
		cmocka_unit_test(test_a_value_given_never_moves),
		cmocka_unit_test(test_a_tsc_that_goes_back_is_not_a_point),
		cmocka_unit_test(test_the_ring_of_points_wraps),
		cmocka_unit_test(test_now_takes_two_points_first_then_one_a_ms),
		cmocka_unit_test(test_real_pairs_put_the_tsc_on_the_clock),
		cmocka_unit_test(test_the_multiply_gives_the_division_exactly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
