/* SPDX-License-Identifier: GPL-2.0 */
/* TSC values (agents' calls records) turned into CLOCK_MONOTONIC ns by our own calibration. */
#ifndef JT_TSCCLOCK_H
#define JT_TSCCLOCK_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The calibration is a line through points, each a pair of rdtsc and clock_gettime taken
 * here (the tightest of a few tries, at its midpoint), at most one a millisecond, the last
 * JT_TSC_POINTS kept. A value between two points is interpolated on their segment; one
 * beyond them is on the line through the first and the last (the longest base, the steadiest
 * slope), and the largest value so given past the last point is pinned as
 * a point of its own before the next real point, so that what was once given never changes:
 * the mapping is monotonic (nondecreasing) over the whole recording.
 *
 * Its error is measured at each new point: the distance between where the line through the
 * first and last points put it and where clock_gettime says it is (an extrapolation over a
 * whole segment, which bounds the interpolation inside one as long as the clock's rate
 * moves slowly), and the
 * width of the pair (how long clock_gettime took around the rdtsc).
 */
#define JT_TSC_POINTS 64

struct jt_tscclock_stats {
	uint64_t points;	/* pairs taken into the line */
	uint64_t max_err_ns;	/* largest distance of a new point from the line before it */
	uint64_t max_width_ns;	/* widest pair kept */
	uint64_t clamped;	/* points moved up to a value already given (monotony kept) */
};

/*
 * Where pairs come from: a TSC value and CLOCK_MONOTONIC ns taken around it with the
 * width of the interval; nonzero when there is no TSC here. Tests give their own.
 */
typedef int (*jt_tsc_pair_fn)(void *ctx, uint64_t *tsc, uint64_t *ns, uint64_t *width);

struct jt_tscclock;

/* pair NULL: rdtsc and clock_gettime. NULL when out of memory (said). */
struct jt_tscclock *jt_tscclock__new(jt_tsc_pair_fn pair, void *ctx);
void jt_tscclock__free(struct jt_tscclock *c);
/*
 * The TSC and CLOCK_MONOTONIC ns now, from a fresh pair, taken as a new point if the last
 * is a millisecond old or more (two at first, 200 us apart, for a first slope): what a
 * drain checks records against. 0, or -ENOTSUP when this machine gives no TSC.
 */
int jt_tscclock__now(struct jt_tscclock *c, uint64_t *tsc, uint64_t *ns);
/* Add the point (tsc, ns) of a pair width ns wide taken elsewhere (as __now does). */
void jt_tscclock__add(struct jt_tscclock *c, uint64_t tsc, uint64_t ns, uint64_t width);
/* tsc in CLOCK_MONOTONIC ns; 0 when there is no line yet or it would fall before 0. */
uint64_t jt_tscclock__ns(struct jt_tscclock *c, uint64_t tsc);
/* A length of ticks in ns, and of ns in ticks, by the line's slope; 0 with no line yet. */
uint64_t jt_tscclock__dur_ns(const struct jt_tscclock *c, uint64_t ticks);
uint64_t jt_tscclock__ticks(const struct jt_tscclock *c, uint64_t ns);
void jt_tscclock__stats(const struct jt_tscclock *c, struct jt_tscclock_stats *st);
/* Whether this CPU has an invariant TSC (CPUID 0x80000007 EDX bit 8). */
bool jt_tscclock__invariant(void);

#endif
