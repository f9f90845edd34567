// SPDX-License-Identifier: GPL-2.0
/* Shared by the exports: call balancing and off-CPU wait names. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "export/common.h"
#include "jt_events.h"
#include "base/names.h"
#include "base/text.h"
#include "base/util.h"

/* ---- call balancing ---- */

struct xstack {
	uint64_t *ids;
	size_t n, cap;
};

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static struct xstack *stack_of(struct jt_xcalls *c, uint64_t key)
{
	struct xstack *st = jt_hash__get(&c->threads, key);

	if (st)
		return st;
	if (c->nr_order == c->cap_order) {
		size_t cap = c->cap_order ? 2 * c->cap_order : 16;
		uint64_t *o = realloc(c->order, cap * sizeof(*o));

		if (!o)
			return NULL;
		c->order = o;
		c->cap_order = cap;
	}
	st = calloc(1, sizeof(*st));
	if (!st || jt_hash__put(&c->threads, key, st)) {
		free(st);
		return NULL;
	}
	c->order[c->nr_order++] = key;
	return st;
}

int jt_xcalls__see(struct jt_xcalls *c, uint32_t pid, uint32_t tid)
{
	return stack_of(c, thread_key(pid, tid)) ? 0 : -ENOMEM;
}

int jt_xcalls__feed(struct jt_xcalls *c, const struct jt_rec_call *rec, jt_xcalls_fn *fn,
		    void *ctx)
{
	struct xstack *st;
	size_t i;
	int err;

	/*
	 * Summed calls have no times of their own, and a span comes at its leave, after the
	 * calls it contains: neither is an enter or a leave of the nesting built here.
	 */
	if (rec->h.type == JT_REC_CALLSUM) {
		c->summed += ((const struct jt_rec_callsum *)rec)->calls;
		return 0;
	}
	if (rec->h.type == JT_REC_SPAN) {
		c->spans++;
		return 0;
	}
	st = stack_of(c, thread_key(rec->pid, rec->tid));
	if (!st)
		return -ENOMEM;
	if (rec->h.type == JT_REC_ENTER) {
		if (st->n == st->cap) {
			size_t cap = st->cap ? 2 * st->cap : 16;
			uint64_t *ids = realloc(st->ids, cap * sizeof(*ids));

			if (!ids)
				return -ENOMEM;
			st->ids = ids;
			st->cap = cap;
		}
		st->ids[st->n++] = rec->id;
		return fn(ctx, true, rec->pid, rec->tid, rec->id, rec->h.ts);
	}
	/* a leave closes the innermost open call of its method, and every call above it */
	for (i = st->n; i > 0 && st->ids[i - 1] != rec->id; i--)
		;
	if (!i) {
		c->orphan_leaves++;
		return 0;
	}
	while (st->n >= i) {
		if (st->n > i)
			c->implied_leaves++;
		err = fn(ctx, false, rec->pid, rec->tid, st->ids[--st->n], rec->h.ts);
		if (err)
			return err;
	}
	return 0;
}

int jt_xcalls__finish(struct jt_xcalls *c, uint64_t ts, jt_xcalls_fn *fn, void *ctx)
{
	size_t t;
	int err;

	for (t = 0; t < c->nr_order; t++) {
		struct xstack *st = jt_hash__get(&c->threads, c->order[t]);

		while (st->n) {
			c->open_at_end++;
			err = fn(ctx, false, c->order[t] >> 32, (uint32_t)c->order[t],
				 st->ids[--st->n], ts);
			if (err)
				return err;
		}
	}
	return 0;
}

void jt_xcalls__report(const struct jt_xcalls *c, const char *path)
{
	if (c->orphan_leaves)
		jt_err("%s: %" PRIu64 " leave(s) of calls entered before recording began: "
		       "dropped", path, c->orphan_leaves);
	if (c->implied_leaves)
		jt_err("%s: %" PRIu64 " call(s) without a leave of their own: closed when "
		       "their caller left", path, c->implied_leaves);
	if (c->open_at_end)
		jt_err("%s: %" PRIu64 " call(s) still open at the end: closed at the last "
		       "timestamp", path, c->open_at_end);
	if (c->summed || c->spans)
		jt_err("%s: not exported: %" PRIu64 " call(s) summed in the process and %" PRIu64
		       " logged alone for their length (see jitrace report)", path, c->summed,
		       c->spans);
}

void jt_xcalls__fini(struct jt_xcalls *c)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&c->threads, &pos, &key, &val)) {
		free(((struct xstack *)val)->ids);
		free(val);
	}
	jt_hash__fini(&c->threads);
	free(c->order);
	memset(c, 0, sizeof(*c));
}

/* ---- off-CPU waits ---- */

const char *jt_xoff__name(unsigned state, char *buf)
{
	snprintf(buf, JT_XOFF_NAME_CAP, "off-CPU: %s%s", jt_off_state__name(state),
		 state == JT_OFF_SHORT ? " waits" : "");
	return buf;
}
