// SPDX-License-Identifier: GPL-2.0
/* Unit tests for method id maps (user/join/idmap.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "join/idmap.h"

#define VAL(id) ((void *)(uintptr_t)((id) * 16 + 8))	/* a distinct non-NULL value */
#define USDT_ID(n) ((1ULL << 63) | (n))

/* The agent counts from 1: every id goes in the array, about 8 bytes each. */
static void sequential_ids_are_held_in_the_array(void **state)
{
	struct jt_idmap m = { 0 };
	uint64_t id;

	(void)state;
	for (id = 1; id <= 10000; id++)
		assert_int_equal(jt_idmap__put(&m, id, VAL(id)), 0);
	assert_int_equal(jt_idmap__count(&m), 10000);
	assert_int_equal(m.sparse.count, 0);
	assert_true(m.cap <= 2 * 10000 + 64);
	for (id = 1; id <= 10000; id++)
		assert_ptr_equal(jt_idmap__get(&m, id), VAL(id));
	assert_null(jt_idmap__get(&m, 0));
	assert_null(jt_idmap__get(&m, 10001));
	jt_idmap__fini(&m);
}

/* A lone large id would cost a huge array: it goes to the hash. */
static void sparse_ids_go_to_the_hash(void **state)
{
	struct jt_idmap m = { 0 };

	(void)state;
	assert_int_equal(jt_idmap__put(&m, 1, VAL(1)), 0);
	assert_int_equal(jt_idmap__put(&m, 5000000, VAL(5000000)), 0);
	assert_int_equal(jt_idmap__put(&m, USDT_ID(7), VAL(7)), 0);
	assert_int_equal(m.sparse.count, 2);
	assert_true(m.cap <= 64);
	assert_ptr_equal(jt_idmap__get(&m, 5000000), VAL(5000000));
	assert_ptr_equal(jt_idmap__get(&m, USDT_ID(7)), VAL(7));
	assert_ptr_equal(jt_idmap__del(&m, USDT_ID(7)), VAL(7));
	assert_null(jt_idmap__get(&m, USDT_ID(7)));
	assert_ptr_equal(jt_idmap__del(&m, 1), VAL(1));
	assert_null(jt_idmap__del(&m, 1));
	assert_int_equal(jt_idmap__count(&m), 1);
	jt_idmap__fini(&m);
}

/* Ids that came too early for the array move into it once it grows over them. */
static void ids_in_descending_order_end_up_in_the_array(void **state)
{
	struct jt_idmap m = { 0 };
	uint64_t id;

	(void)state;
	for (id = 20000; id >= 1; id--)
		assert_int_equal(jt_idmap__put(&m, id, VAL(id)), 0);
	assert_int_equal(jt_idmap__count(&m), 20000);
	assert_true(m.sparse.count < 20000);	/* most moved */
	assert_true(m.cap <= 2 * 20000 + 64);
	for (id = 1; id <= 20000; id++)
		assert_ptr_equal(jt_idmap__get(&m, id), VAL(id));
	jt_idmap__fini(&m);
}

static void put_replaces_and_del_forgets(void **state)
{
	struct jt_idmap m = { 0 };

	(void)state;
	assert_int_equal(jt_idmap__put(&m, 3, VAL(3)), 0);
	assert_int_equal(jt_idmap__put(&m, 3, VAL(4)), 0);
	assert_int_equal(jt_idmap__count(&m), 1);
	assert_ptr_equal(jt_idmap__get(&m, 3), VAL(4));
	assert_ptr_equal(jt_idmap__del(&m, 3), VAL(4));
	assert_int_equal(jt_idmap__count(&m), 0);
	assert_null(jt_idmap__del(&m, 999999999));
	jt_idmap__fini(&m);
}

static void next_visits_every_id_once(void **state)
{
	struct jt_idmap m = { 0 };
	unsigned int seen[301] = { 0 }, usdt = 0, n = 0;
	size_t pos = 0;
	uint64_t id;
	void *val;

	(void)state;
	for (id = 1; id <= 300; id++)
		assert_int_equal(jt_idmap__put(&m, id, VAL(id)), 0);
	assert_int_equal(jt_idmap__put(&m, USDT_ID(1), VAL(1)), 0);
	assert_int_equal(jt_idmap__put(&m, USDT_ID(2), VAL(2)), 0);
	while (jt_idmap__next(&m, &pos, &id, &val)) {
		n++;
		if (id & (1ULL << 63)) {
			assert_ptr_equal(val, VAL(id & ~(1ULL << 63)));
			usdt++;
			continue;
		}
		assert_true(id >= 1 && id <= 300);
		assert_ptr_equal(val, VAL(id));
		seen[id]++;
	}
	assert_int_equal(n, 302);
	assert_int_equal(usdt, 2);
	for (id = 1; id <= 300; id++)
		assert_int_equal(seen[id], 1);
	jt_idmap__fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sequential_ids_are_held_in_the_array),
		cmocka_unit_test(sparse_ids_go_to_the_hash),
		cmocka_unit_test(ids_in_descending_order_end_up_in_the_array),
		cmocka_unit_test(put_replaces_and_del_forgets),
		cmocka_unit_test(next_visits_every_id_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
