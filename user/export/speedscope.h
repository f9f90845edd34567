/* SPDX-License-Identifier: GPL-2.0 */
/* `jitrace export --format speedscope`: a log as speedscope JSON (sampled and evented). */
#ifndef JT_EXPORT_SPEEDSCOPE_H
#define JT_EXPORT_SPEEDSCOPE_H

#include <stdio.h>

#include "log/filter.h"

/*
 * Write the log at path to out as a speedscope file
 * (https://www.speedscope.app/file-format-schema.json): one shared frame table; per
 * thread a "sampled" profile (stacks root first, consecutive equal stacks merged, weights
 * in ns) and, where the log has enter/leave, an "evented" profile of properly nested O/C
 * events (fix-ups told on stderr). Off-CPU waits are in both, in time order: in the sampled
 * profile a sample of the stack the thread left with, "[off-CPU: STATE]" as its leaf, that
 * weighs the time off the CPU (a sum of short waits: "[off-CPU: short waits]" alone); in
 * the evented one that frame open from when it left to when it ran again. Returns 0 or 1
 * (reported).
 */
int jt_export_speedscope(FILE *out, const char *path, const struct jt_filter *filter);

#endif
