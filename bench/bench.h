/* SPDX-License-Identifier: GPL-2.0 */
/* What the benchmarks share: CPU pinning and medians of repeated rounds. */
#ifndef JT_BENCH_H
#define JT_BENCH_H

#include <sched.h>
#include <stdlib.h>

/* Keep the calling thread on one CPU, so rounds do not differ by where threads land. */
static inline void bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sort v so that v[0] is the minimum, v[n / 2] the median and v[n - 1] the maximum. */
static inline void bench_sort(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
}

#endif
