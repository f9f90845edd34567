/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `jitrace report`: hot methods of a log by self and total samples, calls if recorded, and
 * off-CPU time if recorded.
 */
#ifndef JT_REPORT_H
#define JT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "log/filter.h"

enum jt_report_sort {
	JT_REPORT_BY_SELF,
	JT_REPORT_BY_TOTAL,
};

struct jt_report_opts {
	const char *path;	/* the log (with base: the new one) */
	const char *base;	/* NULL, or --diff's base log: report what moved from it to path */
	struct jt_filter filter;
	bool json;
	bool threads;		/* a table per thread after each process's */
	enum jt_report_sort sort;
	unsigned int top;	/* rows per table; 0: all */
	unsigned int procs;	/* process sections; 0: all */
};

/*
 * Read the log at o->path and print its report to out: a header (the log, its duration,
 * samples, rate, losses), the hottest methods over every kept sample, then per process
 * (pid and command line); each method with its hottest offsets, and with --calls logs the
 * call counts and inclusive and exclusive times; with o->threads, each process's threads
 * (by name, the busiest first) with their methods. A log with off-CPU time (record
 * --off-cpu) adds, and only then: the time off the CPU by state and on it (samples / hz)
 * in the header and each section's head; after each section's tables an off-CPU table
 * (per frame name: the wait of the records whose stack holds it, once a record, its share,
 * the time it was the innermost user frame, the waits, its CPU time), sorted by wait and
 * cut at o->top; and per process (after the all-processes tables when there is one) each
 * thread's time on and off the CPU by state, short waits included, the longest first, at
 * most o->top of them. With o->base, both logs' headers and the
 * methods (matched by name and kind over every process) whose share of their log's
 * samples moved most from base to path, self and total, the change in points; sorted by
 * o->sort's share, at most o->top of them. Returns 0 (also for a truncated log, which is
 * said on stderr) or 1 (reported).
 */
int jt_report(FILE *out, const struct jt_report_opts *o);

#endif
