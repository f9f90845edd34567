/* SPDX-License-Identifier: GPL-2.0 */
/* `jitrace export --format chrome`: enter/leave as Chrome Trace Event JSON (Perfetto). */
#ifndef JT_EXPORT_CHROME_H
#define JT_EXPORT_CHROME_H

#include <stdio.h>

#include "filter.h"

/*
 * Write the enter/leave records of the log at path to out as {"traceEvents":[...]}: a "B"
 * and an "E" event per call, per thread, properly nested (a call open at the end is closed
 * at the log's last timestamp, a leave whose enter came before recording is dropped; each
 * fix-up is counted on stderr), ts in microseconds since recording began, and
 * process_name / thread_name metadata. Returns 0 or 1 (reported).
 */
int jt_export_chrome(FILE *out, const char *path, const struct jt_filter *filter);

#endif
