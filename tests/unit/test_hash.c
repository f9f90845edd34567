// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the open-addressing hash (user/base/hash.c). */
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

#include "base/hash.h"
#include "base/util.h"

/* Values are never dereferenced: any non-NULL pointer will do. */
static void *val(uint64_t n)
{
	return (void *)(uintptr_t)(n * 8 + 8);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void zeroed_hash_is_empty(void **state)
{
	struct jt_hash h = { 0 };
	size_t pos = 0;
	uint64_t key;
	void *v;

	(void)state;
	assert_null(jt_hash__get(&h, 0));
	assert_null(jt_hash__get(&h, 42));
	assert_null(jt_hash__del(&h, 42));
	assert_false(jt_hash__next(&h, &pos, &key, &v));
	jt_hash__fini(&h);
	jt_hash__fini(&h);	/* twice is harmless */
}

static void put_get_replace_del(void **state)
{
	struct jt_hash h = { 0 };

	(void)state;
	assert_int_equal(jt_hash__put(&h, 7, val(1)), 0);
	assert_int_equal(jt_hash__put(&h, 0, val(2)), 0);	/* 0 is an ordinary key */
	assert_int_equal(jt_hash__put(&h, UINT64_MAX, val(3)), 0);
	assert_int_equal(h.count, 3);
	assert_ptr_equal(jt_hash__get(&h, 7), val(1));
	assert_ptr_equal(jt_hash__get(&h, 0), val(2));
	assert_ptr_equal(jt_hash__get(&h, UINT64_MAX), val(3));
	assert_null(jt_hash__get(&h, 8));

	assert_int_equal(jt_hash__put(&h, 7, val(4)), 0);	/* replace */
	assert_int_equal(h.count, 3);
	assert_ptr_equal(jt_hash__get(&h, 7), val(4));

	assert_ptr_equal(jt_hash__del(&h, 7), val(4));
	assert_null(jt_hash__get(&h, 7));
	assert_null(jt_hash__del(&h, 7));
	assert_int_equal(h.count, 2);
	assert_ptr_equal(jt_hash__del(&h, 0), val(2));
	assert_ptr_equal(jt_hash__del(&h, UINT64_MAX), val(3));
	assert_int_equal(h.count, 0);
	assert_null(jt_hash__get(&h, UINT64_MAX));

	assert_int_equal(jt_hash__put(&h, 7, val(5)), 0);	/* usable again */
	assert_ptr_equal(jt_hash__get(&h, 7), val(5));
	jt_hash__fini(&h);
	assert_int_equal(h.count, 0);
	assert_null(jt_hash__get(&h, 7));
}

static void growing_keeps_every_key(void **state)
{
	struct jt_hash h = { 0 };
	uint64_t i;

	(void)state;
	for (i = 0; i < 100000; i++) {
		assert_int_equal(jt_hash__put(&h, i * 4096, val(i)), 0);	/* page-like keys */
		assert_true(h.count * 4 <= h.cap * 3);
	}
	assert_int_equal(h.count, 100000);
	assert_true((h.cap & (h.cap - 1)) == 0);
	for (i = 0; i < 100000; i++)
		assert_ptr_equal(jt_hash__get(&h, i * 4096), val(i));
	assert_null(jt_hash__get(&h, 100000 * 4096ULL));
	jt_hash__fini(&h);
}

/*
 * Delete each key, one at a time, from a table as full as it gets: whatever probe run the
 * deleted key sat in, every other key must still be found.
 */
static void deleting_any_key_of_a_full_table_keeps_the_others_reachable(void **state)
{
	enum { N = 12 };	/* 12 in 16 slots: long runs that wrap around the end */
	uint64_t keys[N], seed = 1;
	unsigned int d, i, round;

	(void)state;
	for (round = 0; round < 200; round++) {
		for (i = 0; i < N; i++)
			/* spread keys, then clustered ones */
			keys[i] = round < 100 ? rnd(&seed) : rnd(&seed) % 64;
		for (d = 0; d < N; d++) {
			struct jt_hash h = { 0 };
			bool dup = false;

			for (i = 0; i < N; i++) {
				if (jt_hash__get(&h, keys[i]))
					dup = true;
				assert_int_equal(jt_hash__put(&h, keys[i], val(i)), 0);
			}
			if (dup) {	/* the same key twice: not this test's business */
				jt_hash__fini(&h);
				break;
			}
			assert_int_equal(h.cap, 16);
			assert_ptr_equal(jt_hash__del(&h, keys[d]), val(d));
			for (i = 0; i < N; i++) {
				if (i == d)
					assert_null(jt_hash__get(&h, keys[i]));
				else
					assert_ptr_equal(jt_hash__get(&h, keys[i]), val(i));
			}
			assert_int_equal(h.count, N - 1);
			jt_hash__fini(&h);
		}
	}
}

/*
 * 100k random puts, gets and deletes over a small key set, checked against a plain array.
 * The table stays near its load limit, so most deletions land inside probe runs.
 */
static void random_ops_match_a_reference_array(void **state)
{
	enum { NKEYS = 600, OPS = 100000 };
	uint64_t keys[NKEYS], seed = 0x1234567;
	void *ref[NKEYS] = { 0 };
	struct jt_hash h = { 0 };
	size_t live = 0, i, k, op;

	(void)state;
	for (i = 0; i < NKEYS; i++) {
		switch (i % 3) {
		case 0: keys[i] = rnd(&seed); break;
		case 1: keys[i] = i * 4096; break;	/* aligned code addresses */
		default: keys[i] = i; break;		/* small pids and ids */
		}
	}
	for (op = 0; op < OPS; op++) {
		uint64_t r = rnd(&seed);

		k = r % NKEYS;
		switch ((r >> 32) % 8) {
		case 0: case 1: case 2:	/* put, or replace */
			if (!ref[k])
				live++;
			ref[k] = val(op);
			assert_int_equal(jt_hash__put(&h, keys[k], ref[k]), 0);
			break;
		case 3: case 4: case 5:	/* delete */
			assert_ptr_equal(jt_hash__del(&h, keys[k]), ref[k]);
			if (ref[k])
				live--;
			ref[k] = NULL;
			break;
		default:
			assert_ptr_equal(jt_hash__get(&h, keys[k]), ref[k]);
			break;
		}
		assert_int_equal(h.count, live);
		if (op % 1000 == 0)
			for (i = 0; i < NKEYS; i++)
				assert_ptr_equal(jt_hash__get(&h, keys[i]), ref[i]);
	}
	for (i = 0; i < NKEYS; i++)
		assert_ptr_equal(jt_hash__get(&h, keys[i]), ref[i]);
	jt_hash__fini(&h);
}

static void iteration_visits_each_key_once(void **state)
{
	enum { N = 5000 };
	unsigned int *seen = calloc(N, sizeof(*seen));
	struct jt_hash h = { 0 };
	size_t pos = 0, visits = 0, i;
	uint64_t key;
	void *v;

	(void)state;
	for (i = 0; i < N; i++)
		assert_int_equal(jt_hash__put(&h, i * 977 + 3, val(i)), 0);
	for (i = 0; i < N; i += 3)	/* holes left by deletion are skipped */
		jt_hash__del(&h, i * 977 + 3);
	while (jt_hash__next(&h, &pos, &key, &v)) {
		assert_int_equal((key - 3) % 977, 0);
		i = (key - 3) / 977;
		assert_true(i < N);
		assert_ptr_equal(v, val(i));
		seen[i]++;
		visits++;
	}
	assert_int_equal(visits, h.count);
	for (i = 0; i < N; i++)
		assert_int_equal(seen[i], i % 3 ? 1 : 0);
	assert_false(jt_hash__next(&h, &pos, &key, &v));	/* stays at the end */
	free(seen);
	jt_hash__fini(&h);
}

/* A walk begun at any slot, even past the last, goes round to it: each key once. */
static void a_round_from_any_slot_visits_each_key_once(void **state)
{
	enum { N = 300 };
	unsigned int seen[N];
	struct jt_hash h = { 0 };
	size_t first, pos, visits, i;
	bool wrapped;
	uint64_t key;
	void *v;

	(void)state;
	for (i = 0; i < N; i++)
		assert_int_equal(jt_hash__put(&h, i * 977 + 3, val(i)), 0);
	for (first = 0; first <= h.cap + 1; first++) {
		memset(seen, 0, sizeof(seen));
		pos = first;
		wrapped = false;
		visits = 0;
		while (jt_hash__next_round(&h, first, &pos, &wrapped, &key, &v)) {
			i = (key - 3) / 977;
			assert_true(i < N);
			assert_ptr_equal(v, val(i));
			/* the slot said is the entry's, where a later walk may begin */
			assert_int_equal(h.ents[pos - 1].key, key);
			seen[i]++;
			visits++;
		}
		assert_int_equal(visits, N);
		for (i = 0; i < N; i++)
			assert_int_equal(seen[i], 1);
	}
	jt_hash__fini(&h);
}

static void get_new_creates_zeroed_once(void **state)
{
	struct jt_hash h = { 0 };
	uint64_t *a, *b;
	bool added;

	(void)state;
	a = jt_hash__get_new(&h, 7, 4 * sizeof(*a), &added);
	assert_non_null(a);
	assert_true(added);
	assert_int_equal(a[0] | a[1] | a[2] | a[3], 0);
	a[2] = 99;
	b = jt_hash__get_new(&h, 7, 4 * sizeof(*b), &added);
	assert_ptr_equal(a, b);
	assert_false(added);
	assert_int_equal(b[2], 99);
	assert_int_equal(h.count, 1);
	free(jt_hash__del(&h, 7));
	jt_hash__fini(&h);
}

/*
 * fini_free frees every value left (the sanitizer build's leak check sees one it missed) and
 * leaves an empty hash; on an empty one it does nothing.
 */
static void fini_free_frees_every_value(void **state)
{
	struct jt_hash h = { 0 };
	uint64_t k;

	(void)state;
	jt_hash__fini_free(&h);
	for (k = 1; k <= 1000; k++)
		assert_non_null(jt_hash__get_new(&h, k, 16, NULL));
	for (k = 1; k <= 1000; k += 3)
		free(jt_hash__del(&h, k));
	assert_int_equal(h.count, 666);
	jt_hash__fini_free(&h);
	assert_null(h.ents);
	assert_int_equal(h.cap, 0);
	assert_int_equal(h.count, 0);
	assert_null(jt_hash__get(&h, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(get_new_creates_zeroed_once),
		cmocka_unit_test(fini_free_frees_every_value),
		cmocka_unit_test(zeroed_hash_is_empty),
		cmocka_unit_test(put_get_replace_del),
		cmocka_unit_test(growing_keeps_every_key),
		cmocka_unit_test(deleting_any_key_of_a_full_table_keeps_the_others_reachable),
		cmocka_unit_test(random_ops_match_a_reference_array),
		cmocka_unit_test(iteration_visits_each_key_once),
		cmocka_unit_test(a_round_from_any_slot_visits_each_key_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
