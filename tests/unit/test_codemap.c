// SPDX-License-Identifier: GPL-2.0
/* Unit tests for a process's live code map (user/join/codemap.c, with user/join/methods.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "join/codemap.h"
#include "jt_events.h"
#include "join/methods.h"
#include "base/util.h"

#define MAX_METHODS 4096

/* The map under test, every method the test made (to free them) and every eviction seen. */
struct fx {
	struct jt_codemap cm;
	struct jt_method *made[MAX_METHODS];
	size_t nmade;
	struct jt_method *evicted[MAX_METHODS];
	size_t nevicted;
	bool evicted_while_live;	/* evict saw the method still in the map */
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	*state = f;
	return f ? 0 : -1;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	size_t i;

	free(f->cm.v);
	for (i = 0; i < f->nmade; i++)
		free(f->made[i]);
	free(f);
	return 0;
}

static void on_evict(void *ctx, struct jt_method *m)
{
	struct fx *f = ctx;

	if (jt_codemap__holds(&f->cm, m))
		f->evicted_while_live = true;
	assert_true(f->nevicted < MAX_METHODS);
	f->evicted[f->nevicted++] = m;
}

static struct jt_method *method(struct fx *f, uint64_t start, uint64_t size, const char *name)
{
	struct jt_method *m = jt_method__new(start, size, 1000, 0, JT_SRC_PERFMAP, name,
					     strlen(name));

	assert_non_null(m);
	assert_true(f->nmade < MAX_METHODS);
	f->made[f->nmade++] = m;
	return m;
}

static struct jt_method *insert(struct fx *f, struct jt_method *m)
{
	return jt_codemap__insert(&f->cm, m, on_evict, f);
}

static bool was_evicted(const struct fx *f, const struct jt_method *m)
{
	size_t i;

	for (i = 0; i < f->nevicted; i++)
		if (f->evicted[i] == m)
			return true;
	return false;
}

/* The map's own invariant: sorted by start, no overlaps, every member found at its start. */
static void assert_map_sound(const struct jt_codemap *cm)
{
	size_t i;

	assert_true(cm->n <= cm->cap);
	for (i = 0; i < cm->n; i++) {
		assert_ptr_equal(jt_codemap__find(cm, cm->v[i]->start), cm->v[i]);
		if (i)
			assert_true(cm->v[i - 1]->start + cm->v[i - 1]->size <= cm->v[i]->start);
	}
}

static void new_method_holds_its_fields(void **state)
{
	struct jt_method *m = jt_method__new(0x1000, 0x40, 123, 99, JT_SRC_USDT, "abcdef", 3);

	(void)state;
	assert_non_null(m);
	assert_int_equal(m->start, 0x1000);
	assert_int_equal(m->size, 0x40);
	assert_int_equal(m->load_ts, 123);
	assert_int_equal(m->agent_id, 99);
	assert_int_equal(m->src, JT_SRC_USDT);
	assert_int_equal(m->name_len, 3);
	assert_memory_equal(m->name, "abc", 3);
	assert_int_equal(m->log_id, 0);
	free(m);
}

static void insert_then_find(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x1000, 0x100, "a");
	struct jt_method *b = method(f, 0x3000, 0x80, "b");
	struct jt_method *c = method(f, 0x2000, 0x10, "c");

	assert_null(jt_codemap__find(&f->cm, 0x1000));	/* empty */
	assert_ptr_equal(insert(f, a), a);
	assert_ptr_equal(insert(f, b), b);
	assert_ptr_equal(insert(f, c), c);
	assert_true(jt_codemap__holds(&f->cm, a) && jt_codemap__holds(&f->cm, b) && jt_codemap__holds(&f->cm, c));
	assert_int_equal(f->cm.n, 3);
	assert_int_equal(f->nevicted, 0);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1080), a);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x3040), b);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x2008), c);
	assert_null(jt_codemap__find(&f->cm, 0x1800));
	assert_null(jt_codemap__find(&f->cm, 0));
	assert_null(jt_codemap__find(&f->cm, UINT64_MAX));
	assert_map_sound(&f->cm);
}

static void find_at_start_hits_and_at_end_misses(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x1000, 0x100, "a");
	struct jt_method *b = method(f, 0x1100, 0x100, "b");	/* adjacent */
	struct jt_method *one = method(f, 0x5000, 1, "one");

	insert(f, a);
	insert(f, b);
	insert(f, one);
	assert_int_equal(f->nevicted, 0);	/* adjacent ranges do not overlap */
	assert_null(jt_codemap__find(&f->cm, 0xfff));
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1000), a);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x10ff), a);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1100), b);	/* a's end is b's start */
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x11ff), b);
	assert_null(jt_codemap__find(&f->cm, 0x1200));
	assert_null(jt_codemap__find(&f->cm, 0x4fff));
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x5000), one);
	assert_null(jt_codemap__find(&f->cm, 0x5001));
}

static void method_at_top_of_address_space_is_found(void **state)
{
	struct fx *f = *state;
	struct jt_method *top = method(f, UINT64_MAX - 0xff, 0xff, "top");

	insert(f, top);
	assert_ptr_equal(jt_codemap__find(&f->cm, UINT64_MAX - 0xff), top);
	assert_ptr_equal(jt_codemap__find(&f->cm, UINT64_MAX - 1), top);
	assert_null(jt_codemap__find(&f->cm, UINT64_MAX));
}

/* Code freed and re-compiled at the same address: the new method is the live one. */
static void new_method_over_old_range_evicts_it(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x7000, 0x200, "Old.run");
	struct jt_method *b = method(f, 0x7000, 0x200, "New.run");

	assert_ptr_equal(insert(f, a), a);
	assert_ptr_equal(insert(f, b), b);
	assert_int_equal(f->nevicted, 1);
	assert_ptr_equal(f->evicted[0], a);
	assert_false(f->evicted_while_live);
	assert_false(jt_codemap__holds(&f->cm, a));
	assert_true(jt_codemap__holds(&f->cm, b));
	assert_int_equal(f->cm.n, 1);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x7000), b);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x71ff), b);
}

/* Same start and name but another size is other code too. */
static void same_start_and_name_with_another_size_evicts(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x7000, 0x200, "run");
	struct jt_method *b = method(f, 0x7000, 0x180, "run");

	insert(f, a);
	assert_ptr_equal(insert(f, b), b);
	assert_true(was_evicted(f, a));
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x7000), b);
	assert_null(jt_codemap__find(&f->cm, 0x7190));	/* a's tail is no longer code */
}

static void partial_overlaps_evict_every_overlapped_method(void **state)
{
	struct fx *f = *state;
	struct jt_method *m0 = method(f, 0x0f00, 0x100, "before");
	struct jt_method *m1 = method(f, 0x1000, 0x100, "m1");
	struct jt_method *m2 = method(f, 0x1100, 0x100, "m2");
	struct jt_method *m3 = method(f, 0x1200, 0x100, "m3");
	struct jt_method *m4 = method(f, 0x1300, 0x100, "after");
	struct jt_method *n = method(f, 0x1080, 0x200, "new");	/* tail of m1 .. head of m3 */

	insert(f, m3);
	insert(f, m0);
	insert(f, m4);
	insert(f, m1);
	insert(f, m2);
	assert_int_equal(f->cm.n, 5);
	assert_ptr_equal(insert(f, n), n);
	assert_int_equal(f->nevicted, 3);
	assert_true(was_evicted(f, m1));
	assert_true(was_evicted(f, m2));
	assert_true(was_evicted(f, m3));
	assert_false(f->evicted_while_live);
	assert_false(jt_codemap__holds(&f->cm, m1) || jt_codemap__holds(&f->cm, m2) || jt_codemap__holds(&f->cm, m3));
	assert_int_equal(f->cm.n, 3);
	assert_map_sound(&f->cm);
	/* evicted methods name nothing, not even the parts the new one does not cover */
	assert_null(jt_codemap__find(&f->cm, 0x1000));
	assert_null(jt_codemap__find(&f->cm, 0x107f));
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1080), n);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x127f), n);
	assert_null(jt_codemap__find(&f->cm, 0x1280));
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x0fff), m0);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1300), m4);
}

static void method_inside_a_larger_one_evicts_it(void **state)
{
	struct fx *f = *state;
	struct jt_method *big = method(f, 0x1000, 0x1000, "big");
	struct jt_method *small = method(f, 0x1800, 0x10, "small");

	insert(f, big);
	insert(f, small);
	assert_true(was_evicted(f, big));
	assert_null(jt_codemap__find(&f->cm, 0x1000));
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1808), small);
	assert_int_equal(f->cm.n, 1);
}

/* The same code announced twice (agent and perf map): one method stays. */
static void identical_code_returns_the_existing_method(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x4000, 0x100, "Foo.bar");
	struct jt_method *again = method(f, 0x4000, 0x100, "Foo.bar");
	struct jt_method *other = method(f, 0x5000, 0x100, "other");

	insert(f, a);
	insert(f, other);
	assert_ptr_equal(insert(f, again), a);
	assert_int_equal(f->nevicted, 0);
	assert_true(jt_codemap__holds(&f->cm, a));
	assert_false(jt_codemap__holds(&f->cm, again));
	assert_int_equal(f->cm.n, 2);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x4000), a);
	assert_map_sound(&f->cm);
}

static void same_code_compares_start_size_and_name(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x4000, 0x100, "Foo.bar");

	(void)state;
	assert_true(jt_method__same_code(a, method(f, 0x4000, 0x100, "Foo.bar")));
	assert_false(jt_method__same_code(a, method(f, 0x4001, 0x100, "Foo.bar")));
	assert_false(jt_method__same_code(a, method(f, 0x4000, 0x101, "Foo.bar")));
	assert_false(jt_method__same_code(a, method(f, 0x4000, 0x100, "Foo.baz")));
	assert_false(jt_method__same_code(a, method(f, 0x4000, 0x100, "Foo.ba")));
	assert_false(jt_method__same_code(a, method(f, 0x4000, 0x100, "Foo.barx")));
}

static void remove_takes_the_method_out(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x1000, 0x100, "a");
	struct jt_method *b = method(f, 0x2000, 0x100, "b");
	struct jt_method *c = method(f, 0x3000, 0x100, "c");

	insert(f, a);
	insert(f, b);
	insert(f, c);
	jt_codemap__remove(&f->cm, b);
	assert_false(jt_codemap__holds(&f->cm, b));
	assert_int_equal(f->cm.n, 2);
	assert_int_equal(f->nevicted, 0);	/* remove is not an eviction */
	assert_null(jt_codemap__find(&f->cm, 0x2000));
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1000), a);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x3000), c);
	jt_codemap__remove(&f->cm, b);	/* not live: nothing happens */
	assert_int_equal(f->cm.n, 2);
	jt_codemap__remove(&f->cm, a);
	jt_codemap__remove(&f->cm, c);
	assert_int_equal(f->cm.n, 0);
	assert_null(jt_codemap__find(&f->cm, 0x3000));
	assert_map_sound(&f->cm);
}

/* An evicted method stays evicted: removing it must not take out its successor. */
static void remove_of_an_evicted_method_leaves_its_successor(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x1000, 0x100, "a");
	struct jt_method *b = method(f, 0x1000, 0x100, "b");

	insert(f, a);
	insert(f, b);
	jt_codemap__remove(&f->cm, a);
	assert_int_equal(f->cm.n, 1);
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1000), b);
	assert_true(jt_codemap__holds(&f->cm, b));
}

static void clear_evicts_every_method(void **state)
{
	struct fx *f = *state;
	struct jt_method *ms[10];
	size_t i;

	for (i = 0; i < 10; i++) {
		ms[i] = method(f, 0x10000 - i * 0x1000, 0x800, "m");
		insert(f, ms[i]);
	}
	jt_codemap__clear(&f->cm, on_evict, f);
	assert_int_equal(f->nevicted, 10);
	for (i = 0; i < 10; i++) {
		assert_true(was_evicted(f, ms[i]));
		assert_false(jt_codemap__holds(&f->cm, ms[i]));
	}
	assert_false(f->evicted_while_live);
	assert_int_equal(f->cm.n, 0);
	assert_null(f->cm.v);
	assert_null(jt_codemap__find(&f->cm, 0x10000));
	/* and the map is usable again */
	insert(f, method(f, 0x1000, 0x10, "again"));
	assert_non_null(jt_codemap__find(&f->cm, 0x1000));
	jt_codemap__clear(&f->cm, on_evict, f);
	jt_codemap__clear(&f->cm, on_evict, f);	/* clearing an empty map */
	assert_int_equal(f->nevicted, 11);
}

/* An empty range overlaps nothing: it must not evict the code around it. */
static void zero_size_method_evicts_nothing(void **state)
{
	struct fx *f = *state;
	struct jt_method *a = method(f, 0x1000, 0x100, "a");
	struct jt_method *z = method(f, 0x1080, 0, "empty");

	insert(f, a);
	insert(f, z);
	assert_false(was_evicted(f, a));
	assert_true(jt_codemap__holds(&f->cm, a));
	assert_ptr_equal(jt_codemap__find(&f->cm, 0x1080), a);
}

/*
 * Once removed, a method must be out of the array: the collector frees a method that is
 * neither live nor reachable by id, so a pointer left behind would dangle.
 */
static void zero_size_method_once_removed_is_gone_from_the_map(void **state)
{
	struct fx *f = *state;
	struct jt_method *z = method(f, 0x1080, 0, "empty");
	size_t i;

	insert(f, z);
	jt_codemap__remove(&f->cm, z);
	assert_false(jt_codemap__holds(&f->cm, z));
	for (i = 0; i < f->cm.n; i++)
		assert_ptr_not_equal(f->cm.v[i], z);
	assert_int_equal(f->cm.n, 0);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/*
 * Random loads over 64 slots of 0x100 bytes, each of random offset and length (so they
 * overlap their neighbours), checked against a byte-by-byte picture of who owns what.
 */
static void random_loads_match_a_reference_picture(void **state)
{
	enum { SPAN = 64 * 0x100, BASE = 0x7f0000000000ULL };
	struct fx *f = *state;
	struct jt_method **owner = calloc(SPAN, sizeof(*owner));
	uint64_t seed = 77;
	size_t op, a;

	assert_non_null(owner);
	for (op = 0; op < 3000; op++) {
		uint64_t start = rnd(&seed) % SPAN, size = 1 + rnd(&seed) % 0x300;
		struct jt_method *m;

		if (start + size > SPAN)
			size = SPAN - start;
		m = method(f, BASE + start, size, "r");
		assert_ptr_equal(insert(f, m), m);
		/* whatever it touched is gone everywhere; it owns its range */
		for (a = 0; a < SPAN; a++)
			if (owner[a] && !jt_codemap__holds(&f->cm, owner[a]))
				owner[a] = NULL;
		for (a = start; a < start + size; a++)
			assert_null(owner[a]);
		for (a = start; a < start + size; a++)
			owner[a] = m;
		if (op % 50 == 0) {
			assert_map_sound(&f->cm);
			for (a = 0; a < SPAN; a++)
				assert_ptr_equal(jt_codemap__find(&f->cm, BASE + a), owner[a]);
		}
		if (f->nmade == MAX_METHODS) {	/* recycle the bookkeeping */
			jt_codemap__clear(&f->cm, on_evict, f);
			for (a = 0; a < f->nmade; a++)
				free(f->made[a]);
			f->nmade = f->nevicted = 0;
			memset(owner, 0, SPAN * sizeof(*owner));
		}
	}
	free(owner);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		cmocka_unit_test(new_method_holds_its_fields),
		T(insert_then_find),
		T(find_at_start_hits_and_at_end_misses),
		T(method_at_top_of_address_space_is_found),
		T(new_method_over_old_range_evicts_it),
		T(same_start_and_name_with_another_size_evicts),
		T(partial_overlaps_evict_every_overlapped_method),
		T(method_inside_a_larger_one_evicts_it),
		T(identical_code_returns_the_existing_method),
		T(same_code_compares_start_size_and_name),
		T(remove_takes_the_method_out),
		T(remove_of_an_evicted_method_leaves_its_successor),
		T(clear_evicts_every_method),
		T(zero_size_method_evicts_nothing),
		T(zero_size_method_once_removed_is_gone_from_the_map),
		T(random_loads_match_a_reference_picture),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
