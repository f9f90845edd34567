// SPDX-License-Identifier: GPL-2.0
/* How much of its user stack each thread's samples copy, learned from their walks. */
#include <stdlib.h>
#include <string.h>

#include "jt_events.h"
#include "join/ucopy.h"

#define UCOPY_ROOM 512		/* above the outermost frame's sp: its own frame, and some */
#define UCOPY_ROUND 256
#define UCOPY_MIN 512		/* --stack-copy's least */
#define UCOPY_THREADS 65536	/* threads learned at most; the rest copy the most */

#define UCOPY_BUCKETS (JT_USTACK_MAX / UCOPY_ROUND)

/* A thread's copy: what it is now, and what the walks of the window under way needed. */
struct thread_copy {
	uint64_t told_at;	/* when the sampler was last told its copy (0: never) */
	uint32_t told;		/* what it was told */
	uint32_t want;		/* the bytes its samples copy (the most until told otherwise) */
	uint32_t walks;		/* that said what they needed, in this window */
	uint32_t window;	/* the walks this window takes: UCOPY_QUICK or UCOPY_WINDOW */
	bool pending;		/* want changed since the last take (its tid is in the list) */
	uint16_t needs[UCOPY_BUCKETS];	/* of them, by what they needed, UCOPY_ROUND apart */
	bool fp_walk;		/* its samples take the kernel's frame-pointer walk (untold: do) */
	uint16_t fp_seen;	/* walks of the frame-pointer window under way */
	uint16_t fp_wanted;	/* of them, that wanted the kernel's walk (fp_wanted) */
	uint16_t fp_tried;	/* of those, that had it */
	uint16_t fp_added;	/* and it added frames to */
};

void jt_ucopy__init(struct jt_ucopy *u, uint32_t max)
{
	memset(u, 0, sizeof(*u));
	u->max = max;
}

void jt_ucopy__fini(struct jt_ucopy *u)
{
	jt_hash__fini_free(&u->threads);
	free(u->pending);
	memset(u, 0, sizeof(*u));
}

/* tid's copy changes: for the next take. False when it cannot be said (no memory). */
static bool mark(struct jt_ucopy *u, uint32_t tid, struct thread_copy *t)
{
	if (!t->pending) {
		if (u->nr_pending == u->cap_pending) {
			size_t cap = u->cap_pending ? 2 * u->cap_pending : 64;
			uint32_t *p = realloc(u->pending, cap * sizeof(*p));

			if (!p)
				return false;	/* the sampler does as it did, till the next change */
			u->pending = p;
			u->cap_pending = cap;
		}
		u->pending[u->nr_pending++] = tid;
		t->pending = true;
	}
	return true;
}

/* tid's samples copy bytes from now on: for the next take. */
static void set_want(struct jt_ucopy *u, uint32_t tid, struct thread_copy *t, uint32_t bytes)
{
	if (!mark(u, tid, t))
		return;
	if (bytes < t->want)
		u->cut++;
	else
		u->grown++;
	t->want = bytes;
}

/* What a walk that ended so says the copy needs: 0 when it says nothing. */
static uint32_t walk_need(const struct jt_ucopy *u, const struct thread_copy *t, size_t len,
			  uint64_t top, enum jt_unwind_end end)
{
	uint64_t need;

	if (end == JT_UNWIND_OUTERMOST) {
		need = (top + UCOPY_ROOM + UCOPY_ROUND - 1) / UCOPY_ROUND * UCOPY_ROUND;
		return need < UCOPY_MIN ? UCOPY_MIN : need > u->max ? u->max : (uint32_t)need;
	}
	/* it ran off a copy cut below the most: twice that, at once */
	if (end == JT_UNWIND_SLICE && t->want < u->max && len >= t->want)
		return 2 * (uint64_t)t->want < u->max ? 2 * t->want : u->max;
	return 0;
}

/*
 * What the window's walks needed but for the deepest UCOPY_SPARED of them: a thread that
 * goes deep once in a while (a JVM's runtime under a Java method) keeps a copy its usual
 * walks need, and its rare deep ones double it when they come.
 */
static uint32_t window_need(const struct thread_copy *t)
{
	uint32_t spared = 0;
	int b;

	for (b = UCOPY_BUCKETS - 1; b >= 0; b--) {
		if (spared + t->needs[b] > t->walks * UCOPY_SPARED / 100)
			break;
		spared += t->needs[b];
	}
	return (uint32_t)(b + 1) * UCOPY_ROUND;
}

/*
 * Whether the kernel's frame-pointer walk may add to a walk over the copy: one that stopped
 * at the leaf (it is taken whole) or ran off a copy at the most (it is spliced on).
 */
static bool fp_wanted(const struct jt_ucopy *u, const struct jt_ucopy_walk *w)
{
	if (w->frames <= 1 && (w->end == JT_UNWIND_LOST || w->end == JT_UNWIND_SLICE))
		return true;
	return w->end == JT_UNWIND_SLICE && w->len >= u->max;
}

/* A walk into tid's frame-pointer window; at its end, whether its samples take the walk. */
static void fp_window(struct jt_ucopy *u, uint32_t tid, struct thread_copy *t,
		      const struct jt_ucopy_walk *w)
{
	bool walk;

	if (fp_wanted(u, w)) {
		t->fp_wanted++;
		t->fp_tried += w->fp_taken;
		t->fp_added += w->fp_taken && w->fp_added;
	}
	if (++t->fp_seen < UCOPY_QUICK)
		return;
	walk = t->fp_wanted && (!t->fp_tried || t->fp_added);
	if (walk != t->fp_walk && mark(u, tid, t))
		t->fp_walk = walk;
	t->fp_seen = t->fp_wanted = t->fp_tried = t->fp_added = 0;
}

void jt_ucopy__walked(struct jt_ucopy *u, uint32_t tid, const struct jt_ucopy_walk *w)
{
	struct thread_copy *t;
	uint32_t need, want;
	bool added;

	if (!u->max || !tid)
		return;
	u->copies++;
	u->bytes += w->len;
	u->fp_walks += w->fp_taken;
	t = jt_hash__get(&u->threads, tid);
	if (t && t->told_at && w->ts > t->told_at + UCOPY_GRACE_NS && w->len > t->told)
		u->over++;
	if (!t) {
		if (u->threads.count >= UCOPY_THREADS)
			return;	/* it copies the most, as it does untold */
		t = jt_hash__get_new(&u->threads, tid, sizeof(*t), &added);
		if (!t)
			return;
		t->want = u->max;
		t->window = UCOPY_QUICK;
		t->fp_walk = true;
	}
	fp_window(u, tid, t, w);
	need = walk_need(u, t, w->len, w->top, w->end);
	if (!need)
		return;
	t->needs[(need - 1) / UCOPY_ROUND]++;
	/* only a walk that ran off the copy says it was short (one that reached its end
	 * beyond the cut had a copy made before the sampler was told of it) */
	if (w->end == JT_UNWIND_SLICE) {
		set_want(u, tid, t, need);
		t->window = UCOPY_QUICK;	/* from now: a window of walks with it */
		memset(t->needs, 0, sizeof(t->needs));
		t->walks = 0;
		return;
	}
	if (++t->walks < t->window)
		return;
	want = window_need(t);
	if (want && want != t->want)
		set_want(u, tid, t, want);
	memset(t->needs, 0, sizeof(t->needs));
	t->walks = 0;
	t->window = UCOPY_WINDOW;
}

size_t jt_ucopy__take(struct jt_ucopy *u, struct jt_ucopy_want *out, size_t n, uint64_t now)
{
	size_t i;

	if (!u->nr_pending)
		return 0;
	for (i = 0; i < u->nr_pending && i < n; i++) {
		struct thread_copy *t = jt_hash__get(&u->threads, u->pending[i]);

		t->pending = false;
		t->told = t->want;
		t->told_at = now;
		out[i] = (struct jt_ucopy_want){ u->pending[i], t->want, t->fp_walk };
	}
	u->nr_pending -= i;
	memmove(u->pending, u->pending + i, u->nr_pending * sizeof(*u->pending));
	return i;
}
