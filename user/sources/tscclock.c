// SPDX-License-Identifier: GPL-2.0
/* TSC values turned into CLOCK_MONOTONIC ns by pairs of rdtsc and clock_gettime we take. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "sources/tscclock.h"
#include "base/util.h"

#define MIN_GAP_NS 1000000ULL	/* points this far apart at least: a pair's width is small beside */
#define FIRST_GAP_NS 200000L	/* between the first two points, for a first slope */
#define TRIES 5			/* pairs a point is the tightest of */

struct point {
	uint64_t tsc, ns;
};

/*
 * The line through two points, its slope also as a multiplier and shift: a value on it
 * costs a 64 x 64 bit multiply and a step of correction, not a 128-bit division (which
 * took a tenth of the collector at 10 million calls records a second).
 */
struct line {
	uint64_t tsc, ns;	/* the first point */
	uint64_t dt, dn;	/* to the second: dt > 0 */
	uint64_t mult;		/* floor(dn * 2^shift / dt), the largest shift it fits 64 bits at */
	unsigned int shift;
};

struct jt_tscclock {
	struct point p[JT_TSC_POINTS];	/* a ring, p[first] the oldest */
	unsigned int first, n;
	uint64_t lo_tsc, hi_tsc;	/* the first point's and the last's tsc (n >= 2) */
	struct line wide;		/* through the first and the last point (n >= 2) */
	/* the segment the last value between points fell in (values come in order), dt 0
	 * until one did; points never change */
	struct line seg;
	struct point hi;		/* the largest value given past the last point, or 0 */
	jt_tsc_pair_fn pair;
	void *ctx;
	struct jt_tscclock_stats st;
};

static int real_pair(void *ctx, uint64_t *tsc, uint64_t *ns, uint64_t *width)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t a, b, best = UINT64_MAX;
	int i;

	(void)ctx;
	for (i = 0; i < TRIES; i++) {
		uint64_t t;

		a = jt_now_ns();
		t = __rdtsc();
		b = jt_now_ns();
		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
	*width = best;
	return 0;
#else
	(void)ctx, (void)tsc, (void)ns, (void)width;
	return -ENOTSUP;
#endif
}

bool jt_tscclock__invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d;

	return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#else
	return false;
#endif
}

struct jt_tscclock *jt_tscclock__new(jt_tsc_pair_fn pair, void *ctx)
{
	struct jt_tscclock *c = calloc(1, sizeof(*c));

	if (!c) {
		jt_err("out of memory");
		return NULL;
	}
	c->pair = pair ?: real_pair;
	c->ctx = ctx;
	return c;
}

void jt_tscclock__free(struct jt_tscclock *c)
{
	free(c);
}

static const struct point *at(const struct jt_tscclock *c, unsigned int i)
{
	return &c->p[(c->first + i) % JT_TSC_POINTS];
}

static struct line line_of(const struct point *a, const struct point *b)
{
	struct line l = { a->tsc, a->ns, b->tsc - a->tsc, b->ns - a->ns, 0, 64 };
	uint64_t q = l.dn / l.dt;

	/* dn / dt below 2^k (k its integer part's bits): dn * 2^(64 - k) / dt below 2^64 */
	if (q)
		l.shift = __builtin_clzll(q);
	l.mult = (uint64_t)(((unsigned __int128)l.dn << l.shift) / l.dt);
	return l;
}

/*
 * floor(d * dn / dt), exactly: for d below 2^shift (always, with a TSC faster than 1 GHz)
 * the multiply gives it or one less, the remainder says which; a d farther out (a tsc
 * seconds off the line with a slope of more than 1 ns a tick, which no TSC has) is divided.
 */
static inline unsigned __int128 line_scale(const struct line *l, uint64_t d)
{
	uint64_t q;

	if (l->shift == 64)	/* a TSC faster than 1 GHz: the product's high half */
		q = (uint64_t)(((unsigned __int128)d * l->mult) >> 64);
	else if (d >> l->shift)
		return (unsigned __int128)d * l->dn / l->dt;
	else
		q = (uint64_t)(((unsigned __int128)d * l->mult) >> l->shift);	/* below mult */
	return q + ((unsigned __int128)d * l->dn - (unsigned __int128)q * l->dt >= l->dt);
}

/* x on line l (dn may be 0); 0 below 0, capped above. */
static inline uint64_t line_at(const struct line *l, uint64_t x)
{
	unsigned __int128 d;

	if (x >= l->tsc) {
		d = line_scale(l, x - l->tsc);
		return d > UINT64_MAX - l->ns ? UINT64_MAX : l->ns + (uint64_t)d;
	}
	d = line_scale(l, l->tsc - x);
	return d >= l->ns ? 0 : l->ns - (uint64_t)d;
}

/* x on the line through a and b (a.tsc < b.tsc, a.ns <= b.ns); 0 below 0, capped above. */
static uint64_t on_line(const struct point *a, const struct point *b, uint64_t x)
{
	struct line l = line_of(a, b);

	return line_at(&l, x);
}

static void push(struct jt_tscclock *c, struct point pt)
{
	if (c->n == JT_TSC_POINTS) {
		c->first = (c->first + 1) % JT_TSC_POINTS;
		c->n--;
	}
	c->p[(c->first + c->n++) % JT_TSC_POINTS] = pt;
	if (c->n < 2)
		return;
	c->wide = line_of(at(c, 0), at(c, c->n - 1));
	c->lo_tsc = at(c, 0)->tsc;
	c->hi_tsc = pt.tsc;
}

void jt_tscclock__add(struct jt_tscclock *c, uint64_t tsc, uint64_t ns, uint64_t width)
{
	const struct point *last = c->n ? at(c, c->n - 1) : NULL;
	struct point pt = { tsc, ns };

	if (last && (tsc <= last->tsc || tsc <= c->hi.tsc))
		return;		/* a TSC that went back says nothing we can use */
	if (c->n >= 2) {
		uint64_t pred = on_line(at(c, 0), last, tsc);
		uint64_t err = pred > ns ? pred - ns : ns - pred;

		if (err > c->st.max_err_ns)
			c->st.max_err_ns = err;
	}
	/* what was given past the last point stays as it was given: pinned */
	if (c->hi.tsc) {
		push(c, c->hi);
		last = at(c, c->n - 1);
		c->hi = (struct point){ 0, 0 };
	}
	if (last && pt.ns < last->ns) {
		pt.ns = last->ns;
		c->st.clamped++;
	}
	push(c, pt);
	c->st.points++;
	if (width > c->st.max_width_ns)
		c->st.max_width_ns = width;
}

int jt_tscclock__now(struct jt_tscclock *c, uint64_t *tsc, uint64_t *ns)
{
	uint64_t width;
	struct timespec gap = { 0, FIRST_GAP_NS };

	if (c->pair(c->ctx, tsc, ns, &width))
		return -ENOTSUP;
	if (!c->n || *ns - at(c, c->n - 1)->ns >= MIN_GAP_NS)
		jt_tscclock__add(c, *tsc, *ns, width);
	if (c->n >= 2)
		return 0;
	nanosleep(&gap, NULL);
	if (c->pair(c->ctx, tsc, ns, &width))
		return -ENOTSUP;
	jt_tscclock__add(c, *tsc, *ns, width);
	return 0;
}

uint64_t jt_tscclock__ns(struct jt_tscclock *c, uint64_t tsc)
{
	unsigned int lo, hi, mid;
	uint64_t v;

	if (c->n < 2)
		return 0;
	/* beyond the points: on the line through the first and the last, the longest base */
	if (tsc > c->hi_tsc) {
		v = line_at(&c->wide, tsc);
		if (tsc > c->hi.tsc && v != UINT64_MAX)
			c->hi = (struct point){ tsc, v };
		return v;
	}
	if (tsc < c->lo_tsc)
		return line_at(&c->wide, tsc);
	/* between points: the segment the last value fell in, most often (a segment's
	 * line, once made, stays right: its points do not change) */
	if (c->seg.dt && tsc >= c->seg.tsc && tsc - c->seg.tsc <= c->seg.dt)
		return line_at(&c->seg, tsc);
	lo = 0;
	hi = c->n - 1;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (tsc < at(c, mid)->tsc)
			hi = mid;
		else
			lo = mid;
	}
	c->seg = line_of(at(c, lo), at(c, lo + 1));
	return line_at(&c->seg, tsc);
}

/* v * num / den, capped; 0 when den is. */
static uint64_t scale(uint64_t v, uint64_t num, uint64_t den)
{
	unsigned __int128 d;

	if (!den)
		return 0;
	d = (unsigned __int128)v * num / den;
	return d > UINT64_MAX ? UINT64_MAX : (uint64_t)d;
}

/* A length v in ns (to_ns) or in ticks, by the slope of the first and last points. */
static uint64_t length(const struct jt_tscclock *c, uint64_t v, bool to_ns)
{
	const struct point *a, *b;

	if (c->n < 2)
		return 0;
	a = at(c, 0);
	b = at(c, c->n - 1);
	return to_ns ? scale(v, b->ns - a->ns, b->tsc - a->tsc) :
		       scale(v, b->tsc - a->tsc, b->ns - a->ns);
}

uint64_t jt_tscclock__dur_ns(const struct jt_tscclock *c, uint64_t ticks)
{
	return length(c, ticks, true);
}

uint64_t jt_tscclock__ticks(const struct jt_tscclock *c, uint64_t ns)
{
	return length(c, ns, false);
}

void jt_tscclock__stats(const struct jt_tscclock *c, struct jt_tscclock_stats *st)
{
	*st = c->st;
}
