// SPDX-License-Identifier: GPL-2.0
/*
 * Timestamp reordering. Records from the ring buffer are out of order by a few places at
 * most: they go into a sorted ring of slots, filled from the back (a ring: an array slid
 * down as it empties copied a slot a record at ten million records a second). A record that
 * belongs further back (a perf map line, timed at the last read of its map, lands before
 * thousands held) goes into a heap instead, so that no record costs a walk over everything
 * held; the two are merged as records are let out. A record as short as an enter or leave
 * is held in its slot; a pool serves the other small records. The enters and leaves of a
 * calls region's runs, in order, go into a lane of their own, 32 bytes each (their slots
 * were the most of the collector's memory traffic), merged with the others by (ts, seq).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/event.h"
#include "join/reorder.h"

#define SMALL JT_REORDER_SMALL
#define POOL_BLOCK 4096		/* small chunks allocated at a time */
#define NEAR 8			/* places back from the tail a record may go in the array */
#define INLINE JT_REORDER_INLINE

struct slot {
	uint64_t ts;
	uint32_t len;
	uint32_t seq;		/* arrival order, for equal timestamps across array and heap */
	union {
		void *rec;	/* len > INLINE: a pool chunk, or malloc's */
		uint64_t in[INLINE / 8];	/* len <= INLINE: the record itself */
	};
};

_Static_assert(sizeof(struct slot) == JT_REORDER_SLOT, "a slot is a cache line");

/* An enter or leave in the lane: what its short event says (src, str_len, flags: 0). */
struct call {
	uint64_t ts;
	uint64_t id;
	uint32_t pid, tid;
	uint32_t seq;
	uint16_t type;
	uint16_t pad;
};

_Static_assert(sizeof(struct call) == 32, "a call in the lane");
/* What holding one costs: twice its place (the lane may grow to two places a call held). */
#define CALL_COST (2 * sizeof(struct call))
_Static_assert(JT_EVENT_CALL_LEN <= INLINE, "an enter or leave is held in its slot");

union chunk {
	union chunk *next;
	char bytes[SMALL];
};

struct pool_block {
	struct pool_block *next;
	union chunk chunks[POOL_BLOCK];
};

struct jt_reorder {
	struct slot *slots;	/* a ring of cap (a power of two), sorted by (ts, seq) in
				 * [head, tail): indexes that only grow, taken modulo cap */
	size_t head, tail, cap;
	struct call *lane;	/* a ring of lane_cap (a power of two) in (ts, seq) order, in
				 * [lane_head, lane_tail) */
	size_t lane_head, lane_tail, lane_cap;
	uint64_t lane_last;	/* the time of the last call put in it */
	struct slot *heap;	/* a binary min-heap by (ts, seq) of the records far back */
	size_t nheap, cap_heap;
	size_t max_records;
	size_t max_bytes;	/* SIZE_MAX: none */
	size_t bytes;		/* held, as cost() counts them */
	uint32_t seq;
	uint64_t floor;
	union chunk *free_chunks;
	struct pool_block *blocks;
};

struct jt_reorder *jt_reorder__new(size_t max_records, size_t max_bytes)
{
	struct jt_reorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->max_records = max_records ? max_records : 1;
	r->max_bytes = max_bytes ? max_bytes : SIZE_MAX;
	return r;
}

/*
 * What holding a record of len bytes costs: its copy and its slot; one held in its slot,
 * that slot twice (the ring may grow to two slots a record held, see reorder.h).
 */
static size_t cost(size_t len)
{
	if (len <= INLINE)
		return 2 * sizeof(struct slot);
	return (len <= SMALL ? SMALL : len) + sizeof(struct slot);
}

/* Whether more is held than the bounds allow (asked at every record let out). */
static inline bool over(const struct jt_reorder *r)
{
	return r->tail - r->head + r->nheap + (r->lane_tail - r->lane_head) > r->max_records ||
	       r->bytes > r->max_bytes;
}

static struct call *lane_at(const struct jt_reorder *r, size_t i)
{
	return &r->lane[i & (r->lane_cap - 1)];
}

/* The slot at index i of the ring. */
static struct slot *at(const struct jt_reorder *r, size_t i)
{
	return &r->slots[i & (r->cap - 1)];
}

/* The record slot s holds. */
static const void *rec_of(const struct slot *s)
{
	return s->len <= INLINE ? (const void *)s->in : s->rec;
}

/* Whether (ts, seq) a goes out before b. Sequence numbers wrap; held records are never 2^31
 * apart. */
static inline bool earlier(uint64_t a_ts, uint32_t a_seq, uint64_t b_ts, uint32_t b_seq)
{
	return a_ts < b_ts || (a_ts == b_ts && (int32_t)(a_seq - b_seq) < 0);
}

static bool before(const struct slot *a, const struct slot *b)
{
	return earlier(a->ts, a->seq, b->ts, b->seq);
}

static void release(struct jt_reorder *r, struct slot *s)
{
	if (s->len <= INLINE)
		return;		/* it was in the slot */
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
		if (at(r, i)->len > SMALL)
			free(at(r, i)->rec);
	for (i = 0; i < r->nheap; i++)
		if (r->heap[i].len > SMALL)
			free(r->heap[i].rec);
	for (b = r->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(r->slots);
	free(r->lane);
	free(r->heap);
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

/*
 * A full ring (*ring, *cap elements of size bytes, a power of two, [*head, *tail) held)
 * doubled, 4096 at first, what it holds unwrapped to its start. 0 or -ENOMEM.
 */
static int grow_ring(void **ring, size_t size, size_t *cap, size_t *head, size_t *tail)
{
	size_t n = *cap ? 2 * *cap : 4096, held = *tail - *head;
	size_t first = *cap ? *head & (*cap - 1) : 0, k = held < *cap - first ? held : *cap - first;
	char *to = malloc(n * size);

	if (!to)
		return -ENOMEM;
	if (held) {
		memcpy(to, (char *)*ring + first * size, k * size);
		memcpy(to + k * size, *ring, (held - k) * size);
	}
	free(*ring);
	*ring = to;
	*cap = n;
	*head = 0;
	*tail = held;
	return 0;
}

static int heap_reserve(struct jt_reorder *r)
{
	struct slot *h;
	size_t n;

	if (r->nheap < r->cap_heap)
		return 0;
	n = r->cap_heap ? 2 * r->cap_heap : 1024;
	h = realloc(r->heap, n * sizeof(*h));
	if (!h)
		return -ENOMEM;
	r->heap = h;
	r->cap_heap = n;
	return 0;
}

static void heap_push(struct jt_reorder *r, struct slot s)
{
	size_t i = r->nheap++;

	while (i && before(&s, &r->heap[(i - 1) / 2])) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = s;
}

static struct slot heap_pop(struct jt_reorder *r)
{
	struct slot top = r->heap[0], last = r->heap[--r->nheap];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < r->nheap) {
		if (c + 1 < r->nheap && before(&r->heap[c + 1], &r->heap[c]))
			c++;
		if (!before(&r->heap[c], &last))
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (r->nheap)
		r->heap[i] = last;
	return top;
}

/* Fill slot s with the record (copied into it when short, else to copy). */
static void fill(struct slot *s, uint64_t ts, uint32_t seq, const void *rec, size_t len,
		 void *copy)
{
	s->ts = ts;
	s->len = len;
	s->seq = seq;
	if (len == JT_EVENT_CALL_LEN)	/* an enter or leave: a copy of known size, inlined */
		memcpy(s->in, rec, JT_EVENT_CALL_LEN);
	else if (len <= INLINE)
		memcpy(s->in, rec, len);
	else
		s->rec = copy;
}

/* One record in (jt_reorder__push); inlined in runs. */
static inline int push_one(struct jt_reorder *r, uint64_t ts, const void *rec, size_t len)
{
	struct slot s;
	void *copy = NULL;
	size_t i, k, stop;
	bool far;

	if (ts < r->floor)
		return -ERANGE;
	if (r->tail - r->head == r->cap &&
	    grow_ring((void **)&r->slots, sizeof(*r->slots), &r->cap, &r->head, &r->tail))
		return -ENOMEM;
	/* Nearly sorted input: walk back from the tail over the few newer records. */
	stop = r->tail - r->head > NEAR ? r->tail - NEAR : r->head;
	for (i = r->tail; i > stop && at(r, i - 1)->ts > ts; i--)
		;
	far = i == stop && i > r->head && at(r, i - 1)->ts > ts;
	if (far && heap_reserve(r))
		return -ENOMEM;
	if (len > INLINE) {
		copy = alloc_rec(r, len);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, rec, len);
	}
	r->bytes += cost(len);
	if (far) {
		fill(&s, ts, r->seq++, rec, len, copy);
		heap_push(r, s);
		return 0;
	}
	for (k = r->tail; k > i; k--)	/* in order, as most come: nothing to move */
		*at(r, k) = *at(r, k - 1);
	/* made in place: a copy made on the stack first costs more than the record */
	fill(at(r, i), ts, r->seq++, rec, len, copy);
	r->tail++;
	return 0;
}

int jt_reorder__push(struct jt_reorder *r, uint64_t ts, const void *rec, size_t len)
{
	return push_one(r, ts, rec, len);
}

/*
 * An enter or leave of a run into the lane: 0, 1 when it is not one the lane takes (not in
 * order after the lane's last, or with more to it than a call), -ENOMEM.
 */
static inline int lane_push(struct jt_reorder *r, const struct jt_event *ev)
{
	struct call *c;

	if (ev->src || ev->str_len || ev->flags ||
	    (r->lane_tail != r->lane_head && r->lane_last > ev->ts))
		return 1;
	if (r->lane_tail - r->lane_head == r->lane_cap &&
	    grow_ring((void **)&r->lane, sizeof(*r->lane), &r->lane_cap, &r->lane_head,
		      &r->lane_tail))
		return -ENOMEM;
	c = lane_at(r, r->lane_tail++);
	c->ts = ev->ts;
	c->id = ev->id;
	c->pid = ev->pid;
	c->tid = ev->tid;
	c->seq = r->seq++;
	c->type = ev->type;
	r->lane_last = ev->ts;
	r->bytes += CALL_COST;
	return 0;
}

long jt_reorder__push_run(struct jt_reorder *r, const void *recs, size_t n, size_t len)
{
	const char *rec = recs;
	long refused = 0;
	uint64_t ts;
	size_t i;
	int err;

	for (i = 0; i < n; i++, rec += len) {
		memcpy(&ts, rec, sizeof(ts));
		if (ts < r->floor) {
			refused++;
			continue;
		}
		err = len == JT_EVENT_CALL_LEN ? lane_push(r, (const struct jt_event *)rec) : 1;
		if (err == 1)
			err = push_one(r, ts, rec, len);
		if (err == -ERANGE)
			refused++;
		else if (err)
			return err;
	}
	return refused;
}

size_t jt_reorder__flush(struct jt_reorder *r, uint64_t upto, jt_reorder_cb cb, void *ctx)
{
	struct jt_event ev;	/* a call of the lane, as the short event it came as */
	size_t n = 0;

	for (;;) {
		bool in_array = r->head < r->tail, in_lane = r->lane_head < r->lane_tail;
		const struct call *c = in_lane ? lane_at(r, r->lane_head) : NULL;
		struct slot popped, *s = NULL;
		bool from_heap = false;

		if (in_array)
			s = at(r, r->head);
		if (r->nheap && (!s || before(&r->heap[0], s))) {
			s = &r->heap[0];
			from_heap = true;
		}
		if (c && (!s || earlier(c->ts, c->seq, s->ts, s->seq))) {
			if (c->ts > upto && !over(r))
				break;
			r->lane_head++;
			r->floor = c->ts;
			r->bytes -= CALL_COST;
			/* field by field: the join reads it so, at once */
			ev.ts = c->ts;
			ev.len = JT_EVENT_CALL_LEN;
			ev.type = c->type;
			ev.src = 0;
			ev.pid = c->pid;
			ev.tid = c->tid;
			ev.str_len = 0;
			ev.flags = 0;
			ev.id = c->id;
			cb(ctx, &ev, JT_EVENT_CALL_LEN);
			n++;
			continue;
		}
		if (!s)
			break;
		if (s->ts > upto && !over(r))
			break;
		/* the array's is read where it is (the callback never pushes); the heap's moves */
		if (from_heap) {
			popped = heap_pop(r);
			s = &popped;
		}
		r->floor = s->ts;
		r->bytes -= cost(s->len);
		cb(ctx, rec_of(s), s->len);
		release(r, s);
		if (!from_heap)
			r->head++;
		n++;
	}
	if (r->head == r->tail)
		r->head = r->tail = 0;
	return n;
}

bool jt_reorder__over(const struct jt_reorder *r)
{
	return over(r);
}

size_t jt_reorder__bytes(const struct jt_reorder *r)
{
	return r->bytes;
}

size_t jt_reorder__count(const struct jt_reorder *r)
{
	return r->tail - r->head + r->nheap + (r->lane_tail - r->lane_head);
}

uint64_t jt_reorder__floor(const struct jt_reorder *r)
{
	return r->floor;
}
