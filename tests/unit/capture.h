/* SPDX-License-Identifier: GPL-2.0 */
/* Unit-test helper: a jt_sink that keeps a copy of every record it is given. */
#ifndef JT_TEST_CAPTURE_H
#define JT_TEST_CAPTURE_H

#include <stdlib.h>
#include <string.h>

#include "jt_log_format.h"

/* Include after <cmocka.h>. */
struct capture {
	struct jt_rec_hdr **recs;
	size_t n, cap;
};

static int capture_record(void *ctx, const struct jt_rec_hdr *rec)
{
	struct capture *c = ctx;
	struct jt_rec_hdr *copy;

	assert_true(rec->size >= sizeof(*rec));
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->recs = realloc(c->recs, c->cap * sizeof(*c->recs));
		assert_non_null(c->recs);
	}
	copy = malloc(rec->size);
	assert_non_null(copy);
	memcpy(copy, rec, rec->size);
	c->recs[c->n++] = copy;
	return 0;
}

#endif
