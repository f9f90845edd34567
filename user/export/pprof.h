/* SPDX-License-Identifier: GPL-2.0 */
/* `jitrace export --format pprof`: a log's samples as a gzip-compressed pprof profile. */
#ifndef JT_EXPORT_PPROF_H
#define JT_EXPORT_PPROF_H

#include <stdio.h>

#include "log/filter.h"

/*
 * Write the samples of the log at path (those opts lets through; opts may be NULL) to out
 * as a gzip-compressed perftools.profiles.Profile (tests/views/profile.proto), as Pyroscope
 * and Parca take it: sample types samples/count and cpu/nanoseconds, identical stacks of a
 * thread merged, locations leaf first, labels pid, tid and comm (and thread, where named).
 * A log recorded with --off-cpu adds the type off_cpu/nanoseconds: each wait a sample of
 * the stack it left with (merged as CPU samples are, by state too), its time off the CPU
 * there and 0 in the others (CPU samples have 0 in off_cpu), labelled with its state; sums
 * of short waits one location, "[short waits]". Returns 0 (a truncated log is explained on
 * stderr and exported), or 1 (reported).
 */
int jt_export_pprof(FILE *out, const char *path, const struct jt_filter *filter);

#endif
