// SPDX-License-Identifier: GPL-2.0
/* Agents' calls regions: found, checked, taken and drained as enter/leave events. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jt_callbuf.h"
#include "sources/callbuf.h"
#include "sources/tscclock.h"
#include "base/util.h"

/* Bounds on a region's geometry: far above what the agent makes, far below what hurts. */
#define MAX_SLOTS 4096
#define MAX_RECS (1u << 24)
#define MAX_SUMS 4096
#define MAX_SUM_ENTRIES (1u << 16)	/* of all slots: what we keep of them is 32 bytes each */
#define MAPS_LINE_MAX 4096

/*
 * What we keep of a slot: our own index (the one in shared memory is only told to the
 * writer, never read back) and the writer's drop counter as last seen.
 */
struct slot_seen {
	uint64_t tail;
	uint64_t dropped;
	uint64_t spilled;
	bool skip_sums;		/* its sums were written before us: read as a start */
};

/* What we last read of a method's sums in a slot: the next read logs what it adds. */
struct sum_seen {
	uint64_t id, calls, incl, excl;
};

/* A slot's unread records during a drain, and the one it is at. */
struct cursor {
	uint64_t pos, end;	/* next record, head */
	uint64_t now;		/* the clock after head was read: no record is later */
	uint64_t now_raw;	/* the same in the region's clock */
	uint64_t ts, v;		/* the record at pos, checked */
	uint64_t enter, self;	/* a span's (ns), its second record checked */
	unsigned int n;		/* records it takes: 1, a span 2 */
	uint32_t tid;
	unsigned int slot;
};

struct jt_callbuf {
	struct jt_callbuf_hdr *hdr;	/* shared: read once for geometry, then only collector */
	size_t size;
	bool mapped;			/* ours to unmap */
	uint32_t pid, me;
	uint32_t nr_slots, nr_recs, slot_size;	/* copied and checked at take */
	uint32_t clock_kind;			/* enum jt_callbuf_clock, copied at take */
	uint32_t nr_sums;			/* a slot's table of sums, copied at take */
	bool sum;				/* summary mode asked of it */
	struct sum_seen *sums;			/* nr_sums a slot, made when asked for */
	uint64_t sums_at;			/* how drain times exited threads' sums */
	uint64_t made;				/* the agent's word, copied at take */
	struct jt_tscclock *tsc;		/* the TSC's calibration (the caller's) */
	uint64_t dev, ino;
	struct slot_seen *seen;
	struct cursor *cursors;		/* one a slot */
	struct cursor **heap;		/* those with records, by time */
	uint64_t (*clock)(void *ctx);	/* CLOCK_MONOTONIC ns (tests set their own) */
	void *clock_ctx;
	jt_callbuf_lost lost;		/* told each thread's calls lost to a full ring */
	void *lost_ctx;
	struct jt_callbuf_stats st;
};

static struct jt_callbuf_slot *slot_at(const struct jt_callbuf *cb, unsigned int i)
{
	return (struct jt_callbuf_slot *)((char *)cb->hdr + JT_CALLBUF_HDR_SIZE +
					   (size_t)i * cb->slot_size);
}

static uint64_t load64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static uint32_t load32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static uint64_t monotonic(void *ctx)
{
	(void)ctx;
	return jt_now_ns();
}

/* Why the geometry the process wrote is not one we can read within size, or NULL. */
static const char *bad_geometry(const struct jt_callbuf *cb, uint64_t magic, uint32_t version)
{
	uint64_t need;

	if (magic != JT_CALLBUF_MAGIC)
		return "no calls region magic";
	if (version != JT_CALLBUF_VERSION)
		return "a calls region version this jitrace does not read";
	if (cb->clock_kind != JT_CALLBUF_CLOCK_MONO && cb->clock_kind != JT_CALLBUF_CLOCK_TSC)
		return "a clock this jitrace does not read";
	if (!cb->nr_slots || cb->nr_slots > MAX_SLOTS)
		return "a slot count out of bounds";
	if (!cb->nr_recs || cb->nr_recs > MAX_RECS || (cb->nr_recs & (cb->nr_recs - 1)))
		return "a ring size that is not a power of two within bounds";
	if (cb->slot_size % 64 ||
	    cb->slot_size < offsetof(struct jt_callbuf_slot, recs) +
			    (uint64_t)cb->nr_recs * sizeof(struct jt_callbuf_rec))
		return "a slot size that does not hold its ring";
	need = JT_CALLBUF_HDR_SIZE + (uint64_t)cb->nr_slots * cb->slot_size;
	if (need > cb->size)
		return "slots past the end of the region";
	/* summary mode's sums right after each ring, no more of them than we keep */
	if (cb->nr_sums && (cb->nr_sums > MAX_SUMS || (cb->nr_sums & (cb->nr_sums - 1)) ||
			    (uint64_t)cb->nr_sums * cb->nr_slots > MAX_SUM_ENTRIES ||
			    cb->slot_size < offsetof(struct jt_callbuf_slot, recs) +
					    (uint64_t)cb->nr_recs * sizeof(struct jt_callbuf_rec) +
					    (uint64_t)cb->nr_sums * sizeof(struct jt_callbuf_sum)))
		return "a table of sums out of bounds";
	return NULL;
}

/* A collector that has the region and still runs; a dead one's claim is void. */
static bool other_collector(uint32_t pid, uint32_t me)
{
	/* JT_CALLBUF_HANDED (or any pid out of range) names no process: kill(-1) never */
	return pid && pid != me && pid < JT_PID_LIMIT && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

struct jt_callbuf *jt_callbuf__take(void *mem, size_t size, uint32_t pid, uint32_t me,
				    bool handed, const char **why)
{
	struct jt_callbuf *cb;
	struct jt_callbuf_hdr *h = mem;
	uint32_t old;
	unsigned int i;

	*why = "region smaller than its header";
	if (size < JT_CALLBUF_HDR_SIZE)
		return NULL;
	*why = "out of memory";
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return NULL;
	cb->hdr = h;
	cb->size = size;
	cb->pid = pid;
	cb->me = me;
	cb->clock = monotonic;
	cb->sums_at = UINT64_MAX;
	cb->made = load64(&h->made);
	cb->nr_slots = load32(&h->nr_slots);
	cb->nr_recs = load32(&h->nr_recs);
	cb->slot_size = load32(&h->slot_size);
	cb->clock_kind = load32(&h->clock);
	cb->nr_sums = load32(&h->nr_sums);
	*why = bad_geometry(cb, load64(&h->magic), load32(&h->version));
	if (*why)
		goto fail;
	*why = "out of memory";
	cb->seen = calloc(cb->nr_slots, sizeof(*cb->seen));
	cb->cursors = calloc(cb->nr_slots, sizeof(*cb->cursors));
	cb->heap = calloc(cb->nr_slots, sizeof(*cb->heap));
	if (!cb->seen || !cb->cursors || !cb->heap)
		goto fail;
	old = load32(&h->collector);
	*why = "another jitrace drains its calls";
	if (old == me || (handed && old == JT_CALLBUF_HANDED)) {
		/* ours from its first record: the agent handed it to us */
		for (i = 0; i < cb->nr_slots; i++)
			cb->seen[i].tail = load64(&slot_at(cb, i)->tail);
		if (old == me || __atomic_compare_exchange_n(&h->collector, &old, me, false,
							     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			*why = NULL;
			return cb;
		}
		goto fail;
	}
	if (other_collector(old, me))
		goto fail;
	/* what the rings hold now was written before us (no collector, or a dead one) */
	for (i = 0; i < cb->nr_slots; i++) {
		struct jt_callbuf_slot *s = slot_at(cb, i);
		uint32_t exited = JT_CALLBUF_EXITED;

		cb->seen[i].tail = load64(&s->head);
		cb->seen[i].dropped = load64(&s->dropped);
		cb->seen[i].spilled = load64(&s->spilled);
		__atomic_store_n(&s->tail, cb->seen[i].tail, __ATOMIC_RELEASE);
		/* a running thread's sums from before us are where we start; a new thread's
		 * (in a free slot, or one we free) from 0 */
		cb->seen[i].skip_sums = load32(&s->state) == JT_CALLBUF_CLAIMED;
		__atomic_compare_exchange_n(&s->state, &exited, JT_CALLBUF_FREE, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
	/* from none, or from the dead one seen above: another taking it meanwhile wins */
	if (!__atomic_compare_exchange_n(&h->collector, &old, me, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		goto fail;
	*why = NULL;
	return cb;
fail:
	free(cb->heap);
	free(cb->cursors);
	free(cb->seen);
	free(cb);
	return NULL;
}

static const struct jt_callbuf_sum *sum_at(const struct jt_callbuf *cb, unsigned int i,
					    unsigned int j)
{
	return (const struct jt_callbuf_sum *)((const char *)slot_at(cb, i) +
		offsetof(struct jt_callbuf_slot, recs) +
		(size_t)cb->nr_recs * sizeof(struct jt_callbuf_rec)) + j;
}

/* A length in the region's clock in ns. */
static uint64_t dur_ns(const struct jt_callbuf *cb, uint64_t d)
{
	return cb->clock_kind == JT_CALLBUF_CLOCK_MONO ? d : jt_tscclock__dur_ns(cb->tsc, d);
}

/*
 * Log what slot i's sums added since we last read them, each checked (counters only grow,
 * an entry keeps its method, a thread id in range; what breaks that is counted bad and
 * read again from where it is): nonzero when the emitter said stop.
 */
static int sums_read(struct jt_callbuf *cb, unsigned int i, uint64_t at, jt_callbuf_emit emit,
		     void *ctx)
{
	struct jt_event ev = { .len = JT_EVENT_FIXED, .type = JT_EV_CALL_SUM, .pid = cb->pid };
	struct jt_callbuf_slot *s = slot_at(cb, i);
	struct sum_seen *seen;
	uint64_t raw, now;
	bool start;
	unsigned int j;
	int stop;

	if (!cb->sums || load32(&s->state) == JT_CALLBUF_FREE)
		return 0;
	/* after every call it sums left; a TSC region's lengths need the line */
	if (cb->clock_kind == JT_CALLBUF_CLOCK_MONO)
		now = cb->clock(cb->clock_ctx);
	else if (!cb->tsc || jt_tscclock__now(cb->tsc, &raw, &now))
		return 0;	/* no TSC here: never read, never logged */
	seen = &cb->sums[(size_t)i * cb->nr_sums];
	start = cb->seen[i].skip_sums;
	cb->seen[i].skip_sums = false;
	ev.tid = load32(&s->tid);
	ev.ts = at && at < now ? at : now;
	for (j = 0; j < cb->nr_sums; j++) {
		const struct jt_callbuf_sum *e = sum_at(cb, i, j);
		struct sum_seen cur = { load64(&e->id), load64(&e->calls), load64(&e->incl),
					load64(&e->excl) };
		struct sum_seen *was = &seen[j];

		if (start || (!cur.id && !was->id))
			goto seen;
		if (cur.id != was->id) {
			if (was->id)	/* an entry that changed its method under us */
				cb->st.bad++;
			*was = (struct sum_seen){ .id = cur.id };
		}
		if (cur.calls == was->calls && cur.incl == was->incl && cur.excl == was->excl)
			continue;	/* nothing new (a forged entry is counted once) */
		if (cur.calls < was->calls || cur.incl < was->incl || cur.excl < was->excl ||
		    !cur.id || (cur.id & JT_CALLBUF_KINDS) || !ev.tid ||
		    ev.tid >= JT_PID_LIMIT) {
			cb->st.bad++;
			goto seen;
		}
		ev.sum_of = cur.id;
		ev.sum_calls = cur.calls - was->calls;
		ev.sum_incl_ns = dur_ns(cb, cur.incl - was->incl);
		ev.sum_excl_ns = dur_ns(cb, cur.excl - was->excl);
		if (!ev.sum_calls && !ev.sum_incl_ns && !ev.sum_excl_ns)
			continue;	/* less than a ns of the TSC yet: kept until it is more */
		stop = emit(ctx, &ev);
		if (stop)
			return stop;	/* read again next time */
		cb->st.sums++;
seen:
		*was = cur;
	}
	return 0;
}

int jt_callbuf__drain_sums(struct jt_callbuf *cb, uint64_t at, jt_callbuf_emit emit, void *ctx)
{
	unsigned int i;

	for (i = 0; i < cb->nr_slots; i++)
		if (sums_read(cb, i, at, emit, ctx))
			return -1;
	return 0;
}

void jt_callbuf__sums_at(struct jt_callbuf *cb, uint64_t at)
{
	cb->sums_at = at;
}

uint64_t jt_callbuf__made(const struct jt_callbuf *cb)
{
	return cb->made;
}

void jt_callbuf__want_each(struct jt_callbuf *cb)
{
	__atomic_store_n(&cb->hdr->mode, JT_CALLBUF_MODE_EACH, __ATOMIC_RELEASE);
}

int jt_callbuf__want_sums(struct jt_callbuf *cb, uint64_t min_ns)
{
	uint64_t min = min_ns, tsc, ns;

	if (!cb->nr_sums)
		return -ENOTSUP;	/* an agent with no table: every call one by one */
	if (!cb->sums) {
		cb->sums = calloc((size_t)cb->nr_slots * cb->nr_sums, sizeof(*cb->sums));
		if (!cb->sums)
			return -ENOMEM;
	}
	if (cb->clock_kind == JT_CALLBUF_CLOCK_TSC && min_ns != UINT64_MAX) {
		if (!cb->tsc || jt_tscclock__now(cb->tsc, &tsc, &ns))
			return -ENOTSUP;
		min = jt_tscclock__ticks(cb->tsc, min_ns) ?: 1;
	}
	__atomic_store_n(&cb->hdr->min, min, __ATOMIC_RELAXED);
	__atomic_store_n(&cb->hdr->mode, JT_CALLBUF_MODE_SUM, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Open slot i's unread records as a cursor: 1, or 0 when it has none (an exited thread's
 * slot, empty, its sums read, is given back then), -1 when the emitter said stop. An index
 * that does not fit the ring is counted bad and its records skipped.
 */
static int cursor_open(struct jt_callbuf *cb, unsigned int i, struct cursor *c,
		       jt_callbuf_emit emit, void *ctx)
{
	struct jt_callbuf_slot *s = slot_at(cb, i);
	struct slot_seen *seen = &cb->seen[i];
	uint32_t state = load32(&s->state);
	uint64_t head = load64(&s->head), dropped = load64(&s->dropped);
	uint64_t spilled = load64(&s->spilled);
	uint32_t exited = JT_CALLBUF_EXITED;

	if (dropped > seen->dropped) {	/* a counter that shrinks was written by someone else */
		/* after dropped: a thread that claimed the slot since state was read named
		 * itself before it could drop (the slot changes hands only at our free) */
		uint32_t tid = load32(&s->tid);

		cb->st.full += dropped - seen->dropped;
		if (cb->lost)	/* a tid out of range is only not said */
			cb->lost(cb->lost_ctx, tid < JT_PID_LIMIT ? tid : 0,
				 dropped - seen->dropped);
	}
	seen->dropped = dropped;
	if (spilled > seen->spilled)	/* read as dropped is */
		cb->st.spilled += spilled - seen->spilled;
	seen->spilled = spilled;
	if (head - seen->tail > cb->nr_recs) {	/* more than the ring holds, or behind us */
		cb->st.bad++;
		seen->tail = head;
	}
	if (head != seen->tail) {
		*c = (struct cursor){
			.slot = i, .pos = seen->tail, .end = head,
			/* only a label within this pid: it names no other process */
			.tid = load32(&s->tid),
		};
		/* after head: every record it covers was written before */
		if (cb->clock_kind == JT_CALLBUF_CLOCK_MONO)
			c->now = c->now_raw = cb->clock(cb->clock_ctx);
		else if (!cb->tsc || jt_tscclock__now(cb->tsc, &c->now_raw, &c->now))
			c->now = c->now_raw = 0;	/* no TSC here: every record is refused */
		return 1;
	}
	__atomic_store_n(&s->tail, seen->tail, __ATOMIC_RELEASE);
	/* sums not to be read now: the slot waits, its sums unread */
	if (state != JT_CALLBUF_EXITED || (cb->sums && !cb->sums_at))
		return 0;
	if (sums_read(cb, i, cb->sums_at, emit, ctx))	/* its last sums, before another's */
		return -1;
	if (__atomic_compare_exchange_n(&s->state, &exited, JT_CALLBUF_FREE, false,
					__ATOMIC_ACQ_REL, __ATOMIC_RELAXED) && cb->sums)
		memset(&cb->sums[(size_t)i * cb->nr_sums], 0, cb->nr_sums * sizeof(*cb->sums));
	return 0;
}

/* Load the cursor's next record that makes sense (others counted bad): false at its end. */
static inline bool cursor_load(struct jt_callbuf *cb, struct cursor *c)
{
	const struct jt_callbuf_slot *s = slot_at(cb, c->slot);

	for (; c->pos != c->end; c->pos++) {
		const struct jt_callbuf_rec *r = &s->recs[c->pos & (cb->nr_recs - 1)];

		c->n = 1;
		c->ts = __atomic_load_n(&r->ts, __ATOMIC_RELAXED);
		c->v = __atomic_load_n(&r->id_kind, __ATOMIC_RELAXED);
		/* a time later than the index is forged, and would hold the reorder window of
		 * every process */
		if (!c->ts || c->ts > c->now_raw || !c->tid || c->tid >= JT_PID_LIMIT ||
		    (c->v & JT_CALLBUF_KINDS) == JT_CALLBUF_KINDS)
			goto bad;
		if (c->v & JT_CALLBUF_SPAN) {	/* its second record, published with it */
			r = &s->recs[(c->pos + 1) & (cb->nr_recs - 1)];
			c->enter = __atomic_load_n(&r->ts, __ATOMIC_RELAXED);
			c->self = __atomic_load_n(&r->id_kind, __ATOMIC_RELAXED);
			if (c->pos + 1 == c->end || !c->enter || c->enter > c->ts ||
			    c->self > c->ts - c->enter)
				goto bad;
			c->n = 2;
		}
		if (cb->clock_kind == JT_CALLBUF_CLOCK_MONO)
			return true;
		/* checked raw first: only a TSC already past moves the line's pin */
		c->ts = jt_tscclock__ns(cb->tsc, c->ts);
		if (c->ts > c->now)
			c->ts = c->now;
		if (c->n == 2) {
			c->enter = jt_tscclock__ns(cb->tsc, c->enter);
			c->enter = c->enter < c->ts ? c->enter : c->ts;
			c->self = jt_tscclock__dur_ns(cb->tsc, c->self);
			c->self = c->self < c->ts - c->enter ? c->self : c->ts - c->enter;
			if (!c->enter)
				goto bad;
		}
		if (c->ts)
			return true;
bad:
		cb->st.bad++;
	}
	return false;
}

/* Where cursor c has read to: ours, and told to the writer. */
static void cursor_close(struct jt_callbuf *cb, const struct cursor *c)
{
	cb->seen[c->slot].tail = c->pos;
	__atomic_store_n(&slot_at(cb, c->slot)->tail, c->pos, __ATOMIC_RELEASE);
}

/* Restore the min-heap of n cursors by time from position k down. */
static void sift_down(struct cursor **h, unsigned int n, unsigned int k)
{
	for (;;) {
		unsigned int l = 2 * k + 1, m = k;
		struct cursor *t;

		if (l < n && h[l]->ts < h[m]->ts)
			m = l;
		if (l + 1 < n && h[l + 1]->ts < h[m]->ts)
			m = l + 1;
		if (m == k)
			return;
		t = h[k];
		h[k] = h[m];
		h[m] = t;
		k = m;
	}
}

/*
 * The slots merged by time, oldest first: the reorder stage holds a bounded number of
 * records, and one thread's burst delivered before another's older calls would push those
 * out of its window.
 */
long jt_callbuf__drain_calls(struct jt_callbuf *cb, uint64_t max, uint64_t upto,
			     jt_callbuf_call call, jt_callbuf_emit emit, void *ctx)
{
	struct jt_event span = { .len = JT_EVENT_FIXED, .type = JT_EV_CALL_SPAN, .pid = cb->pid,
				 .sum_calls = 1 };
	unsigned int i, n = 0, k;
	long done = 0;
	int stop = 0, ret;

	for (i = 0; i < cb->nr_slots && !stop; i++) {
		struct cursor *c = &cb->cursors[i];

		ret = cursor_open(cb, i, c, emit, ctx);
		stop = ret < 0;
		if (ret <= 0)
			continue;
		if (cursor_load(cb, c))
			cb->heap[n++] = c;
		else
			cursor_close(cb, c);
	}
	for (k = n / 2; k-- > 0;)
		sift_down(cb->heap, n, k);
	while (n && (uint64_t)done < max && !stop) {
		struct cursor *c = cb->heap[0];

		if (c->ts > upto)	/* the oldest left: every other is later still */
			break;
		if (c->n == 2) {
			span.ts = c->ts;
			span.tid = c->tid;
			span.sum_of = c->v & ~JT_CALLBUF_KINDS;
			span.sum_incl_ns = c->enter;	/* as the collector reads a span */
			span.sum_excl_ns = c->self;
			stop = emit(ctx, &span);
		} else {
			stop = call(ctx, cb->pid, c->tid, c->ts, c->v & ~JT_CALLBUF_LEAVE,
				    c->v & JT_CALLBUF_LEAVE);
		}
		if (stop)
			break;	/* this one is read again next time */
		done++;
		c->pos += c->n;
		if (!cursor_load(cb, c)) {
			cursor_close(cb, c);
			cb->heap[0] = cb->heap[--n];
		}
		if (n > 1)	/* one thread's records alone need no merging */
			sift_down(cb->heap, n, 0);
	}
	while (n)	/* stopped early: the rest is read next time */
		cursor_close(cb, cb->heap[--n]);
	cb->st.records += done;
	return stop ? -1 : done;
}

/* jt_callbuf__drain's emitter and its context, for its calls made events. */
struct as_events {
	jt_callbuf_emit emit;
	void *ctx;
};

/* An enter or leave as an event (JT_EVENT_CALL_LEN bytes: nothing reads past its id). */
static int call_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t id,
		      bool leave)
{
	const struct as_events *a = ctx;
	struct jt_event ev = {
		.ts = ts, .len = JT_EVENT_CALL_LEN, .type = leave ? JT_EV_LEAVE : JT_EV_ENTER,
		.pid = pid, .tid = tid, .id = id,
	};

	return a->emit(a->ctx, &ev);
}

static int emit_event(void *ctx, const struct jt_event *ev)
{
	const struct as_events *a = ctx;

	return a->emit(a->ctx, ev);
}

long jt_callbuf__drain(struct jt_callbuf *cb, uint64_t max, jt_callbuf_emit emit, void *ctx)
{
	return jt_callbuf__drain_upto(cb, max, UINT64_MAX, emit, ctx);
}

long jt_callbuf__drain_upto(struct jt_callbuf *cb, uint64_t max, uint64_t upto,
			    jt_callbuf_emit emit, void *ctx)
{
	struct as_events a = { emit, ctx };

	return jt_callbuf__drain_calls(cb, max, upto, call_event, emit_event, &a);
}

void jt_callbuf__trim(struct jt_callbuf *cb)
{
	size_t off = JT_CALLBUF_HDR_SIZE, len = (size_t)cb->nr_slots * cb->slot_size;

	/* shared memory: only our page tables go, the process's rings stay as they are */
	if (cb->mapped)
		madvise((char *)cb->hdr + off, len, MADV_DONTNEED);
}

void jt_callbuf__set_clock(struct jt_callbuf *cb, uint64_t (*clock)(void *ctx), void *ctx)
{
	cb->clock = clock;
	cb->clock_ctx = ctx;
}

void jt_callbuf__on_lost(struct jt_callbuf *cb, jt_callbuf_lost lost, void *ctx)
{
	cb->lost = lost;
	cb->lost_ctx = ctx;
}

void jt_callbuf__set_tscclock(struct jt_callbuf *cb, struct jt_tscclock *tsc)
{
	cb->tsc = tsc;
}

bool jt_callbuf__uses_tsc(const struct jt_callbuf *cb)
{
	return cb->clock_kind == JT_CALLBUF_CLOCK_TSC;
}

void jt_callbuf__stats(const struct jt_callbuf *cb, struct jt_callbuf_stats *st)
{
	*st = cb->st;
}

uint32_t jt_callbuf__pid(const struct jt_callbuf *cb)
{
	return cb->pid;
}

void jt_callbuf__file(const struct jt_callbuf *cb, uint64_t *dev, uint64_t *ino)
{
	*dev = cb->dev;
	*ino = cb->ino;
}

void jt_callbuf__release(struct jt_callbuf *cb)
{
	uint32_t me = cb->me;

	__atomic_compare_exchange_n(&cb->hdr->collector, &me, 0, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
}

void jt_callbuf__close(struct jt_callbuf *cb)
{
	if (!cb)
		return;
	jt_callbuf__release(cb);
	if (cb->mapped)
		munmap(cb->hdr, cb->size);
	free(cb->sums);
	free(cb->heap);
	free(cb->cursors);
	free(cb->seen);
	free(cb);
}

/* The start and end of pid's region in its maps: 0, or -ENOENT (none), or -errno. */
static int find_region(const char *proc_root, uint32_t pid, unsigned long *start,
		       unsigned long *end)
{
	char path[64], line[MAPS_LINE_MAX];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		int name = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &s, &e, &name) != 2 || !name)
			continue;
		/* the kernel names it "/memfd:NAME (deleted)"; the last one is the newest */
		if (!strncmp(line + name, "/memfd:" JT_CALLBUF_NAME " ",
			     sizeof("/memfd:" JT_CALLBUF_NAME)) ||
		    !strcmp(line + name, "/memfd:" JT_CALLBUF_NAME "\n")) {
			*start = s;
			*end = e;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* Why the file at fd is not a region of pid's that only its user can reach, or NULL. */
static const char *not_region(int fd, const struct stat *st, uid_t uid)
{
	int seals = fcntl(fd, F_GET_SEALS);

	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_uid != uid)
		return "owned by another user than the process's";
	if (st->st_mode & 077)
		return "readable or writable by other users (mode not 0600)";
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return "not sealed against shrinking (a cut under our mapping would fault)";
	if ((size_t)st->st_size < JT_CALLBUF_HDR_SIZE)
		return "smaller than its header";
	return NULL;
}

int jt_callbuf__find(const char *proc_root, uint32_t pid, uid_t *uid)
{
	char path[128];
	unsigned long start = 0, end = 0;
	struct stat proc;
	int fd;

	if (find_region(proc_root, pid, &start, &end))
		return -1;	/* no agent with a region, or the process is gone */
	snprintf(path, sizeof(path), "%s/%u", proc_root, pid);
	if (stat(path, &proc))
		return -1;
	*uid = proc.st_uid;	/* the process's effective uid */
	snprintf(path, sizeof(path), "%s/%u/map_files/%lx-%lx", proc_root, pid, start, end);
	/* a magic link to the mapped file itself, never resolved by name: nothing to plant */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		jt_err("warning: pid %u's calls go through uprobes: opening %s: %s", pid, path,
		       strerror(errno));
	return fd;
}

struct jt_callbuf *jt_callbuf__map(int fd, uint32_t pid, uid_t uid, uint32_t me, bool handed)
{
	struct jt_callbuf *cb;
	struct stat st;
	const char *why;
	void *mem;

	why = fstat(fd, &st) ? strerror(errno) : not_region(fd, &st, uid);
	if (why) {
		jt_err("warning: pid %u's calls go through uprobes: its calls region: %s", pid, why);
		return NULL;
	}
	mem = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		jt_err("warning: pid %u's calls go through uprobes: mapping its calls region: %s",
		       pid, strerror(errno));
		return NULL;
	}
	cb = jt_callbuf__take(mem, st.st_size, pid, me, handed, &why);
	if (!cb) {
		jt_err("warning: pid %u's calls go through uprobes: its calls region: %s", pid, why);
		munmap(mem, st.st_size);
		return NULL;
	}
	cb->mapped = true;
	cb->dev = st.st_dev;
	cb->ino = st.st_ino;
	return cb;
}

int jt_callbuf__listen(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int s, err;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* a socket left by a recording that is gone (or one running: the newest wins) */
	if (unlink(path) && errno != ENOENT)
		goto fail;
	/* every agent may connect (the kernel names it), only root listens; the backlog
	 * holds a burst of processes starting between two ticks */
	if (bind(s, (struct sockaddr *)&sun, sizeof(sun)) || chmod(path, 0666) ||
	    listen(s, SOMAXCONN))
		goto fail;
	return s;
fail:
	err = -errno;
	close(s);
	return err;
}

int jt_callbuf__accept(int sock)
{
	int c = accept4(sock, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	return c < 0 ? -errno : c;
}

int jt_callbuf__receive(int conn, uint32_t *pid, uid_t *uid)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	uint64_t magic = 0;
	struct iovec iov = { &magic, sizeof(magic) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			      .msg_controllen = sizeof(ctl.buf) };
	struct ucred cred = { 0 };
	socklen_t cl = sizeof(cred);
	struct cmsghdr *c;
	int fd = -1, n, k;
	ssize_t len = recvmsg(conn, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (len < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		/* every fd sent is ours to close; only a lone one is a region */
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < n; k++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (fd < 0 && n == 1)
				fd = f;
			else
				close(f);
		}
	}
	/* who connected, as the kernel saw it then, in our pid namespace */
	if (fd < 0 || len != sizeof(magic) || magic != JT_CALLBUF_MAGIC ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.pid <= 0) {
		if (fd >= 0)
			close(fd);
		return -EBADMSG;
	}
	*pid = (uint32_t)cred.pid;
	*uid = cred.uid;
	return fd;
}
