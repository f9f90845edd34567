// SPDX-License-Identifier: GPL-2.0
/* Unit tests for method definitions in the log (user/join/methods.c). */
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

#include "jt_events.h"
#include "join/methods.h"
#include "base/sink.h"
#include "base/util.h"

/* A sink that keeps a copy of every record, or fails with err when err is set. */
struct capture {
	size_t n;
	unsigned char *recs[16];
	int err;
};

static int capture_record(void *ctx, const struct jt_rec_hdr *rec)
{
	struct capture *c = ctx;

	if (c->err)
		return c->err;
	assert_true(rec->size >= sizeof(*rec));
	assert_true(c->n < JT_ARRAY_SIZE(c->recs));
	c->recs[c->n] = malloc(rec->size);
	assert_non_null(c->recs[c->n]);
	memcpy(c->recs[c->n], rec, rec->size);
	c->n++;
	return 0;
}

static void capture_free(struct capture *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->recs[i]);
	c->n = 0;
}

static const struct jt_rec_method *method_rec(const struct capture *c, size_t i)
{
	assert_true(i < c->n);
	return (const struct jt_rec_method *)c->recs[i];
}

/*
 * Fill the stack below us with a pattern, so that a record built on the stack with
 * unwritten padding shows it.
 */
static __attribute__((noinline)) void smear_stack(void)
{
	volatile unsigned char junk[80000];
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

static void assert_zero_tail(const struct jt_rec_method *r)
{
	const unsigned char *p = (const unsigned char *)r;
	size_t i;

	for (i = sizeof(*r) + r->name_len; i < r->h.size; i++)
		if (p[i])
			fail_msg("padding byte %zu of %u is 0x%02x", i, r->h.size, p[i]);
}

static void define_writes_one_method_record_with_every_field(void **state)
{
	struct capture cap = { 0 };
	struct jt_sink sink = { capture_record, &cap };
	struct jt_methods t = { 0 };
	struct jt_method *m = jt_method__new(0x7f3a40001000, 0x1c0, 111, 77, JT_SRC_USDT,
					     "java.lang.String::hashCode", 26);
	const struct jt_rec_method *r;

	(void)state;
	smear_stack();
	assert_int_equal(jt_methods__define(&t, m, 4242, 5000, &sink), 0);
	assert_int_equal(cap.n, 1);
	r = method_rec(&cap, 0);
	assert_int_equal(r->h.type, JT_REC_METHOD);
	assert_int_equal(r->h.reserved, 0);
	assert_int_equal(r->h.size, jt_round8(sizeof(*r) + 26));
	assert_int_equal(r->h.size, 96);
	assert_int_equal(r->h.ts, 5000);	/* the time of the reference, not of the load */
	assert_int_equal(r->id, 1);
	assert_int_equal(r->start, 0x7f3a40001000);
	assert_int_equal(r->size, 0x1c0);
	assert_int_equal(r->load_ts, 111);
	assert_int_equal(r->agent_id, 77);
	assert_int_equal(r->pid, 4242);
	assert_int_equal(r->src, JT_SRC_USDT);
	assert_int_equal(r->name_len, 26);
	assert_memory_equal(r->name, "java.lang.String::hashCode", 26);
	assert_zero_tail(r);
	assert_int_equal(m->log_id, 1);
	assert_int_equal(t.defined, 1);
	capture_free(&cap);
	free(m);
}

static void size_is_rounded_to_8_with_zero_padding_for_every_name_length(void **state)
{
	char name[64];
	size_t len;

	(void)state;
	memset(name, 'x', sizeof(name));
	for (len = 0; len <= 40; len++) {
		struct capture cap = { 0 };
		struct jt_sink sink = { capture_record, &cap };
		struct jt_methods t = { 0 };
		struct jt_method *m = jt_method__new(0x1000, 0x10, 1, 0, JT_SRC_PERFMAP, name,
						     len);
		const struct jt_rec_method *r;

		smear_stack();
		assert_int_equal(jt_methods__define(&t, m, 1, 10, &sink), 0);
		r = method_rec(&cap, 0);
		assert_int_equal(r->h.size % 8, 0);
		assert_int_equal(r->h.size, jt_round8(sizeof(*r) + len));
		assert_int_equal(r->name_len, len);
		assert_memory_equal(r->name, name, len);
		assert_zero_tail(r);
		capture_free(&cap);
		free(m);
	}
}

static void second_define_of_the_same_method_writes_nothing(void **state)
{
	struct capture cap = { 0 };
	struct jt_sink sink = { capture_record, &cap };
	struct jt_methods t = { 0 };
	struct jt_method *m = jt_method__new(0x1000, 0x10, 1, 0, JT_SRC_AGENT, "f", 1);

	(void)state;
	assert_int_equal(jt_methods__define(&t, m, 1, 10, &sink), 0);
	assert_int_equal(jt_methods__define(&t, m, 1, 20, &sink), 0);
	assert_int_equal(jt_methods__define(&t, m, 1, 30, &sink), 0);
	assert_int_equal(cap.n, 1);
	assert_int_equal(m->log_id, 1);
	assert_int_equal(t.defined, 1);
	assert_int_equal(t.next_id, 2);
	capture_free(&cap);
	free(m);
}

static void ids_count_from_one(void **state)
{
	struct capture cap = { 0 };
	struct jt_sink sink = { capture_record, &cap };
	struct jt_methods t = { 0 };
	struct jt_method *m[5];
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++)
		m[i] = jt_method__new(0x1000 * (i + 1), 0x10, 1, 0, JT_SRC_AGENT, "f", 1);
	for (i = 0; i < 5; i++) {
		assert_int_equal(jt_methods__define(&t, m[i], 1, 10 + i, &sink), 0);
		assert_int_equal(m[i]->log_id, i + 1);
		assert_int_equal(method_rec(&cap, i)->id, i + 1);
		assert_int_equal(method_rec(&cap, i)->start, 0x1000 * (i + 1));
	}
	assert_int_equal(t.defined, 5);
	/* the same code in another method object is another definition */
	assert_int_equal(jt_methods__define(&t, m[0], 1, 99, &sink), 0);
	assert_int_equal(cap.n, 5);
	capture_free(&cap);
	for (i = 0; i < 5; i++)
		free(m[i]);
}

/* Two tables are independent: no hidden global counter. */
static void two_tables_count_separately(void **state)
{
	struct capture cap = { 0 };
	struct jt_sink sink = { capture_record, &cap };
	struct jt_methods t1 = { 0 }, t2 = { 0 };
	struct jt_method *a = jt_method__new(0x1000, 0x10, 1, 0, JT_SRC_AGENT, "a", 1);
	struct jt_method *b = jt_method__new(0x2000, 0x10, 1, 0, JT_SRC_AGENT, "b", 1);

	(void)state;
	assert_int_equal(jt_methods__define(&t1, a, 1, 1, &sink), 0);
	assert_int_equal(jt_methods__define(&t2, b, 1, 1, &sink), 0);
	assert_int_equal(a->log_id, 1);
	assert_int_equal(b->log_id, 1);
	capture_free(&cap);
	free(a);
	free(b);
}

static void long_name_is_cut_at_65535(void **state)
{
	enum { LONG = 70000 };
	struct capture cap = { 0 };
	struct jt_sink sink = { capture_record, &cap };
	struct jt_methods t = { 0 };
	char *name = malloc(LONG);
	struct jt_method *m;
	const struct jt_rec_method *r;
	size_t i;

	(void)state;
	for (i = 0; i < LONG; i++)
		name[i] = 'a' + i % 26;
	m = jt_method__new(0x1000, 0x10, 1, 0, JT_SRC_PERFMAP, name, LONG);
	assert_non_null(m);
	assert_int_equal(m->name_len, 65535);
	smear_stack();
	assert_int_equal(jt_methods__define(&t, m, 1, 10, &sink), 0);
	r = method_rec(&cap, 0);
	assert_int_equal(r->name_len, 65535);
	assert_int_equal(r->h.size, jt_round8(sizeof(*r) + 65535));
	assert_memory_equal(r->name, name, 65535);
	assert_zero_tail(r);
	capture_free(&cap);
	free(m);

	/* exactly 65535 is kept whole */
	m = jt_method__new(0x1000, 0x10, 1, 0, JT_SRC_PERFMAP, name, 65535);
	assert_int_equal(m->name_len, 65535);
	assert_int_equal(jt_methods__define(&t, m, 1, 11, &sink), 0);
	assert_int_equal(method_rec(&cap, 0)->name_len, 65535);
	capture_free(&cap);
	free(m);
	free(name);
}

/* A definition that could not be written is not a definition: the next reference retries. */
static void failed_write_leaves_the_method_undefined(void **state)
{
	struct capture cap = { .err = -EIO };
	struct jt_sink sink = { capture_record, &cap };
	struct jt_methods t = { 0 };
	struct jt_method *m = jt_method__new(0x1000, 0x10, 1, 0, JT_SRC_AGENT, "f", 1);

	(void)state;
	assert_int_equal(jt_methods__define(&t, m, 1, 10, &sink), -EIO);
	assert_int_equal(m->log_id, 0);
	assert_int_equal(t.defined, 0);
	cap.err = 0;
	assert_int_equal(jt_methods__define(&t, m, 1, 20, &sink), 0);
	assert_int_equal(cap.n, 1);
	assert_int_equal(m->log_id, 1);
	assert_int_equal(method_rec(&cap, 0)->id, 1);
	capture_free(&cap);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(define_writes_one_method_record_with_every_field),
		cmocka_unit_test(size_is_rounded_to_8_with_zero_padding_for_every_name_length),
		cmocka_unit_test(second_define_of_the_same_method_writes_nothing),
		cmocka_unit_test(ids_count_from_one),
		cmocka_unit_test(two_tables_count_separately),
		cmocka_unit_test(long_name_is_cut_at_65535),
		cmocka_unit_test(failed_write_leaves_the_method_undefined),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
