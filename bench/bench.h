/* SPDX-License-Identifier: GPL-2.0 */
/* What the benchmarks share: CPU pinning, a live session into a log, medians of rounds. */
#ifndef JT_BENCH_H
#define JT_BENCH_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "log.h"

/* Keep the calling thread on one CPU, so rounds do not differ by where threads land. */
static inline void bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * A live session as jitrace record runs one, started into a log at path (*w), its header
 * the session's start: the collector under test. Exits on failure (reported).
 */
static inline struct jt_live *bench_live(const struct jt_live_opts *o, const char *path,
					 struct jt_log_writer **w)
{
	struct jt_live *live = jt_live__open(o);
	struct jt_log_header hdr = { 0 };
	struct jt_sink sink;

	if (!live)
		exit(1);
	hdr.start_ns = jt_live__start_ns(live);
	*w = jt_logw__create(path, &hdr, true);
	if (!*w)
		exit(1);
	sink = jt_logw__sink(*w);
	if (jt_live__start(live, &sink))
		exit(1);
	return live;
}

/* Whether a line of the file at path holds text (a tool's message, a perf map's line). */
static inline bool bench_file_has(const char *path, const char *text)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text);
	fclose(f);
	return found;
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

/*
 * Output. Each benchmark prints its own Markdown section on stdout (progress goes to
 * stderr); bench/run.sh puts the sections together into bench/RESULTS.md. A line that
 * begins "MISSED: " names a missed target, with the gap and what holds it back; run.sh
 * lifts those lines into the list at the top of RESULTS.md.
 */
static inline void bench_table_head(void)
{
	printf("| figure | target | median | min | max | |\n");
	printf("| --- | --- | --- | --- | --- | --- |\n");
}

/*
 * One row: v[] (n values, sorted here) printed with fmt ("%.2f", say) and unit; target
 * and verdict are free text ("<= 1.30x", "met"), "" for none.
 */
static inline void bench_row(const char *what, const char *target, const char *fmt,
			     const char *unit, double *v, int n, const char *verdict)
{
	char med[32], lo[32], hi[32];

	bench_sort(v, n);
	snprintf(med, sizeof(med), fmt, v[n / 2]);
	snprintf(lo, sizeof(lo), fmt, v[0]);
	snprintf(hi, sizeof(hi), fmt, v[n - 1]);
	printf("| %s | %s | **%s%s** | %s | %s | %s |\n", what, target, med, unit, lo, hi,
	       verdict);
}

#endif
