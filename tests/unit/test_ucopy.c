// SPDX-License-Identifier: GPL-2.0
/* What each thread's user stack copy is cut to, learned from the walks of its samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "join/ucopy.h"

#define MAX 8192
#define TID 4243
#define TOLD_AT 1000000000ULL	/* when take hands the changes to the sampler */

/* The changes handed on since the last take, the last one's bytes for tid in *bytes. */
static size_t take(struct jt_ucopy *u, uint32_t tid, uint32_t *bytes)
{
	struct jt_ucopy_want w[8];
	size_t n = jt_ucopy__take(u, w, 8, TOLD_AT), i;

	for (i = 0; i < n; i++)
		if (w[i].tid == tid)
			*bytes = w[i].bytes;
	return n;
}

/* A walk of tid at ts over a copy of len bytes, that ended so at top, many frames deep. */
static void walk(struct jt_ucopy *u, uint32_t tid, uint64_t ts, size_t len, uint64_t top,
		 enum jt_unwind_end end)
{
	struct jt_ucopy_walk w = { .ts = ts, .len = len, .top = top, .end = end, .frames = 8 };

	jt_ucopy__walked(u, tid, &w);
}

/* n walks of tid that reached the stack's end top bytes above the copy's start */
static void walks(struct jt_ucopy *u, uint32_t tid, int n, size_t len, uint64_t top)
{
	while (n-- > 0)
		walk(u, tid, 0, len, top, JT_UNWIND_OUTERMOST);
}

/* n walks of tid as said, the kernel's walk taken with them and adding frames or not */
static void fp_walks(struct jt_ucopy *u, uint32_t tid, int n, size_t len, enum jt_unwind_end end,
		     unsigned int frames, bool taken, bool added)
{
	struct jt_ucopy_walk w = { .len = len, .top = len - 8, .end = end, .frames = frames,
				   .fp_taken = taken, .fp_added = added };

	while (n-- > 0)
		jt_ucopy__walked(u, tid, &w);
}

/* The last change handed on for tid: its bytes and whether it takes the kernel's walk. */
static size_t take_fp(struct jt_ucopy *u, uint32_t tid, uint32_t *bytes, bool *fp_walk)
{
	struct jt_ucopy_want w[8];
	size_t n = jt_ucopy__take(u, w, 8, TOLD_AT), i;

	for (i = 0; i < n; i++)
		if (w[i].tid == tid) {
			*bytes = w[i].bytes;
			*fp_walk = w[i].fp_walk;
		}
	return n;
}

/*
 * A thread's first window, UCOPY_QUICK walks that all reached the end 1,600 bytes up, cuts
 * the copy to that and room, rounded (2,304 bytes); nothing is said before the window is
 * whole. The next window is UCOPY_WINDOW walks.
 */
static void a_window_of_shallow_walks_cuts_the_copy(void **state)
{
	struct jt_ucopy u;
	uint32_t bytes = 0;

	(void)state;
	jt_ucopy__init(&u, MAX);
	walks(&u, TID, UCOPY_QUICK - 1, MAX, 1600);
	assert_int_equal(take(&u, TID, &bytes), 0);
	walks(&u, TID, 1, MAX, 1600);
	assert_int_equal(take(&u, TID, &bytes), 1);
	assert_int_equal(bytes, 2304);
	assert_int_equal(take(&u, TID, &bytes), 0);	/* said once */
	walks(&u, TID, UCOPY_WINDOW - 1, 2304, 700);
	assert_int_equal(take(&u, TID, &bytes), 0);
	walks(&u, TID, 1, 2304, 700);
	assert_int_equal(take(&u, TID, &bytes), 1);
	assert_int_equal(bytes, 1280);	/* 700 and room, rounded */
	jt_ucopy__fini(&u);
}

/*
 * The deepest 1% of a window's walks do not hold the copy up; more than that do. Each
 * thread is learned on its own.
 */
static void the_deepest_walks_but_one_percent_set_the_copy(void **state)
{
	int deep = UCOPY_WINDOW * UCOPY_SPARED / 100;
	struct jt_ucopy_want w[8];
	struct jt_ucopy u;

	(void)state;
	jt_ucopy__init(&u, MAX);
	walks(&u, TID, UCOPY_QUICK, MAX, 7000);	/* the first windows: all of them, 7,680 */
	walks(&u, TID + 1, UCOPY_QUICK, MAX, 7000);
	assert_int_equal(jt_ucopy__take(&u, w, 8, TOLD_AT), 2);
	assert_int_equal(w[0].bytes, 7680);
	walks(&u, TID, deep, MAX, 6000);
	walks(&u, TID + 1, deep + 1, MAX, 6000);
	walks(&u, TID, UCOPY_WINDOW - deep, MAX, 1000);
	walks(&u, TID + 1, UCOPY_WINDOW - deep - 1, MAX, 1000);
	assert_int_equal(jt_ucopy__take(&u, w, 8, TOLD_AT), 2);
	assert_int_equal(w[0].tid, TID);
	assert_int_equal(w[0].bytes, 1536);	/* 1,000 and room, rounded */
	assert_int_equal(w[1].tid, TID + 1);
	assert_int_equal(w[1].bytes, 6656);	/* 6,000 and room, rounded */
	jt_ucopy__fini(&u);
}

/*
 * A walk that runs off a cut copy doubles it at once; one that ran off a copy shorter than
 * the cut (made before the sampler was told) says nothing; the most is never passed. After
 * it grew, a window of UCOPY_QUICK walks cuts it again to what they all needed.
 */
static void a_walk_off_a_cut_copy_doubles_it(void **state)
{
	struct jt_ucopy u;
	uint32_t bytes = 0;

	(void)state;
	jt_ucopy__init(&u, MAX);
	walks(&u, TID, UCOPY_WINDOW, MAX, 1600);
	take(&u, TID, &bytes);
	assert_int_equal(bytes, 2304);
	walk(&u, TID, 0, 2304, 2300, JT_UNWIND_SLICE);
	assert_int_equal(take(&u, TID, &bytes), 1);
	assert_int_equal(bytes, 4608);
	walk(&u, TID, 0, 2304, 2300, JT_UNWIND_SLICE);	/* an older, shorter copy */
	assert_int_equal(take(&u, TID, &bytes), 0);
	walk(&u, TID, 0, 4608, 4600, JT_UNWIND_SLICE);
	take(&u, TID, &bytes);
	assert_int_equal(bytes, MAX);
	walk(&u, TID, 0, MAX, MAX - 8, JT_UNWIND_SLICE);	/* the most: as is */
	assert_int_equal(take(&u, TID, &bytes), 0);
	assert_int_equal(u.grown, 2);
	walks(&u, TID, UCOPY_QUICK - 1, MAX, 1600);
	walks(&u, TID, 1, MAX, 3000);
	assert_int_equal(take(&u, TID, &bytes), 1);
	assert_int_equal(bytes, 3584);	/* the deepest of them, 3,000, and room, rounded */
	jt_ucopy__fini(&u);
}

/*
 * Walks lost past the leaf or too long say nothing of the copy (only that the kernel's walk
 * would not help them), and tid 0 nothing at all; with no copies (max 0) nothing is learned.
 */
static void walks_that_say_nothing_change_nothing(void **state)
{
	struct jt_ucopy u;
	uint32_t bytes = 0;
	bool fp_walk = true;
	int i;

	(void)state;
	jt_ucopy__init(&u, MAX);
	for (i = 0; i < 2 * UCOPY_WINDOW; i++) {
		walk(&u, TID, 0, MAX, 100, JT_UNWIND_LOST);
		walk(&u, TID, 0, MAX, 100, JT_UNWIND_MAX_FRAMES);
		walk(&u, 0, 0, MAX, 100, JT_UNWIND_OUTERMOST);
	}
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 1);
	assert_int_equal(bytes, MAX);
	assert_false(fp_walk);
	assert_int_equal(u.cut + u.grown, 0);
	jt_ucopy__fini(&u);
	jt_ucopy__init(&u, 0);
	walks(&u, TID, UCOPY_WINDOW, MAX, 100);
	assert_int_equal(take(&u, TID, &bytes), 0);
	jt_ucopy__fini(&u);
}

/*
 * A copy larger than its thread was told is counted once the grace after the telling is
 * over (before it, a sample may have been made with the old copy); every copy walked is
 * counted with its bytes.
 */
static void copies_larger_than_told_are_counted(void **state)
{
	uint64_t after = TOLD_AT + UCOPY_GRACE_NS + 1;
	struct jt_ucopy u;
	uint32_t bytes = 0;

	(void)state;
	jt_ucopy__init(&u, MAX);
	walk(&u, TID, after, MAX, 1600, JT_UNWIND_OUTERMOST);	/* never told */
	walks(&u, TID, UCOPY_WINDOW - 1, MAX, 1600);
	take(&u, TID, &bytes);
	assert_int_equal(bytes, 2304);
	walk(&u, TID, TOLD_AT + UCOPY_GRACE_NS, MAX, 1600, JT_UNWIND_OUTERMOST);
	assert_int_equal(u.over, 0);
	walk(&u, TID, after, 2304, 1600, JT_UNWIND_OUTERMOST);
	assert_int_equal(u.over, 0);
	walk(&u, TID, after, 2560, 1600, JT_UNWIND_OUTERMOST);
	assert_int_equal(u.over, 1);
	walk(&u, TID + 1, after, MAX, 1600, JT_UNWIND_OUTERMOST);	/* not told */
	assert_int_equal(u.over, 1);
	assert_int_equal(u.copies, UCOPY_WINDOW + 4);
	assert_int_equal(u.bytes, (uint64_t)(UCOPY_WINDOW + 2) * MAX + 2304 + 2560);
	jt_ucopy__fini(&u);
}

/*
 * A thread not told yet takes the kernel's frame-pointer walk; a window of walks that all
 * reach the stack's end over the copy drops it, with the cut, and says it once. Every walk
 * that came with the kernel's walk is counted.
 */
static void walks_whole_by_the_copy_drop_the_kernel_walk(void **state)
{
	struct jt_ucopy u;
	uint32_t bytes = 0;
	bool fp_walk = true;

	(void)state;
	jt_ucopy__init(&u, MAX);
	fp_walks(&u, TID, UCOPY_QUICK - 1, MAX, JT_UNWIND_OUTERMOST, 12, true, false);
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 0);
	fp_walks(&u, TID, 1, MAX, JT_UNWIND_OUTERMOST, 12, true, false);
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 1);
	assert_false(fp_walk);
	assert_int_equal(bytes, MAX);	/* their end, with room, is past the most: not cut */
	assert_int_equal(u.fp_walks, UCOPY_QUICK);
	fp_walks(&u, TID, 4 * UCOPY_QUICK, MAX, JT_UNWIND_OUTERMOST, 12, false, false);
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 0);	/* said once */
	assert_int_equal(u.fp_walks, UCOPY_QUICK);
	jt_ucopy__fini(&u);
}

/*
 * Walks that run off a copy at the most, or stop at the leaf, want the kernel's walk: a
 * thread keeps it while it adds frames to them, drops it when it added to none of them, and
 * tries it again the next window that wants it. Walks that want nothing of it drop it.
 */
static void the_kernel_walk_is_taken_where_it_adds_frames(void **state)
{
	struct jt_ucopy u;
	uint32_t bytes = 0;
	bool fp_walk = false;

	(void)state;
	jt_ucopy__init(&u, MAX);
	/* deeper than the most: the kernel's walk, spliced on, adds the rest: kept as untold */
	fp_walks(&u, TID, UCOPY_QUICK, MAX, JT_UNWIND_SLICE, 20, true, true);
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 0);
	/* it added to none of them (no frame pointers there): dropped */
	fp_walks(&u, TID, UCOPY_QUICK, MAX, JT_UNWIND_SLICE, 20, true, false);
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 1);
	assert_false(fp_walk);
	/* wanted again, without it: tried again */
	fp_walks(&u, TID, UCOPY_QUICK, MAX, JT_UNWIND_SLICE, 20, false, false);
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 1);
	assert_true(fp_walk);
	/* walks lost at the leaf want it too; it adds to one of them: kept */
	fp_walks(&u, TID, UCOPY_QUICK - 1, MAX, JT_UNWIND_LOST, 1, true, false);
	fp_walks(&u, TID, 1, MAX, JT_UNWIND_LOST, 1, true, true);
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 0);
	/* lost deeper than the leaf: the kernel's walk is no help there */
	fp_walks(&u, TID, UCOPY_QUICK, MAX, JT_UNWIND_LOST, 5, true, false);
	assert_int_equal(take_fp(&u, TID, &bytes, &fp_walk), 1);
	assert_false(fp_walk);
	/* a thread of its own, lost at the leaf, never taken: keeps it, as untold */
	fp_walks(&u, TID + 1, UCOPY_QUICK, MAX, JT_UNWIND_LOST, 1, false, false);
	assert_int_equal(take_fp(&u, TID + 1, &bytes, &fp_walk), 0);
	jt_ucopy__fini(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_window_of_shallow_walks_cuts_the_copy),
		cmocka_unit_test(the_deepest_walks_but_one_percent_set_the_copy),
		cmocka_unit_test(a_walk_off_a_cut_copy_doubles_it),
		cmocka_unit_test(walks_that_say_nothing_change_nothing),
		cmocka_unit_test(copies_larger_than_told_are_counted),
		cmocka_unit_test(walks_whole_by_the_copy_drop_the_kernel_walk),
		cmocka_unit_test(the_kernel_walk_is_taken_where_it_adds_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
