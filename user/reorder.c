// SPDX-License-Identifier: GPL-2.0
/* Timestamp reordering: a sorted array filled from the back, with a pool for small records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"

#define SMALL 64		/* records up to this size (enter, leave, unload) use the pool */
#define POOL_BLOCK 4096		/* small chunks allocated at a time */

struct slot {
	uint64_t ts;
	void *rec;
	uint32_t len;
};

union chunk {
	union chunk *next;
	char bytes[SMALL];
};

struct pool_block {
	struct pool_block *next;
	union chunk chunks[POOL_BLOCK];
};

struct jt_reorder {
	struct slot *slots;	/* sorted by ts in [head, tail) */
	size_t head, tail, cap;
	size_t max_records;
	uint64_t floor;
	union chunk *free_chunks;
	struct pool_block *blocks;
};

struct jt_reorder *jt_reorder__new(size_t max_records)
{
	struct jt_reorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->max_records = max_records ? max_records : 1;
	return r;
}

static void release(struct jt_reorder *r, struct slot *s)
{
	if (s->len <= SMALL) {
		union chunk *c = s->rec;

		c->next = r->free_chunks;
		r->free_chunks = c;
	} else {
		free(s->rec);
	}
}

void jt_reorder__free(struct jt_reorder *r)
{
	struct pool_block *b, *next;
	size_t i;

	if (!r)
		return;
	for (i = r->head; i < r->tail; i++)
		if (r->slots[i].len > SMALL)
			free(r->slots[i].rec);
	for (b = r->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(r->slots);
	free(r);
}

static void *alloc_rec(struct jt_reorder *r, size_t len)
{
	union chunk *c;

	if (len > SMALL)
		return malloc(len);
	if (!r->free_chunks) {
		struct pool_block *b = malloc(sizeof(*b));
		size_t i;

		if (!b)
			return NULL;
		b->next = r->blocks;
		r->blocks = b;
		for (i = 0; i < POOL_BLOCK; i++) {
			b->chunks[i].next = r->free_chunks;
			r->free_chunks = &b->chunks[i];
		}
	}
	c = r->free_chunks;
	r->free_chunks = c->next;
	return c;
}

/* Make room for one more slot at the tail. */
static int reserve_slot(struct jt_reorder *r)
{
	struct slot *s;
	size_t n;

	if (r->tail < r->cap)
		return 0;
	if (r->head >= r->cap / 2 && r->head) {	/* slide down instead of growing */
		memmove(r->slots, r->slots + r->head, (r->tail - r->head) * sizeof(*s));
		r->tail -= r->head;
		r->head = 0;
		return 0;
	}
	n = r->cap ? 2 * r->cap : 4096;
	s = realloc(r->slots, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	r->slots = s;
	r->cap = n;
	return 0;
}

int jt_reorder__push(struct jt_reorder *r, uint64_t ts, const void *rec, size_t len)
{
	struct slot *s;
	size_t i;
	void *copy;

	if (ts < r->floor)
		return -ERANGE;
	if (reserve_slot(r))
		return -ENOMEM;
	copy = alloc_rec(r, len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, len);
	/* Nearly sorted input: walk back from the tail over the few newer records. */
	s = r->slots;
	for (i = r->tail; i > r->head && s[i - 1].ts > ts; i--)
		s[i] = s[i - 1];
	s[i] = (struct slot){ .ts = ts, .rec = copy, .len = len };
	r->tail++;
	return 0;
}

size_t jt_reorder__flush(struct jt_reorder *r, uint64_t upto, jt_reorder_cb cb, void *ctx)
{
	size_t n = 0;

	while (r->head < r->tail &&
	       (r->slots[r->head].ts <= upto || r->tail - r->head > r->max_records)) {
		struct slot *s = &r->slots[r->head++];

		r->floor = s->ts;
		cb(ctx, s->rec, s->len);
		release(r, s);
		n++;
	}
	if (r->head == r->tail)
		r->head = r->tail = 0;
	return n;
}

size_t jt_reorder__count(const struct jt_reorder *r)
{
	return r->tail - r->head;
}

uint64_t jt_reorder__floor(const struct jt_reorder *r)
{
	return r->floor;
}
