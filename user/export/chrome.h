/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `jitrace export --format chrome`: enter/leave and off-CPU waits as Chrome Trace Event JSON
 * (Perfetto).
 */
#ifndef JT_EXPORT_CHROME_H
#define JT_EXPORT_CHROME_H

#include <stdio.h>

#include "log/filter.h"

/*
 * Write the enter/leave records of the log at path to out as {"traceEvents":[...]}: a "B"
 * and an "E" event per call, per thread, properly nested (a call open at the end is closed
 * at the log's last timestamp, a leave whose enter came before recording is dropped; each
 * fix-up is counted on stderr), ts in microseconds since recording began, and
 * process_name / thread_name metadata. Each off-CPU wait is an "X" event on its thread from
 * when it left the CPU to when it ran again, named "off-CPU: STATE", args "blocked in" (its
 * innermost user frame) and "stack" (leaf first); a sum of short waits an "i" event with
 * their count and time; otherData has the totals. A log recorded with neither --calls nor
 * --off-cpu is refused, nothing written. Returns 0 or 1 (reported).
 */
int jt_export_chrome(FILE *out, const char *path, const struct jt_filter *filter);

#endif
