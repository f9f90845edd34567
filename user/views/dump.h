/* SPDX-License-Identifier: GPL-2.0 */
/* `jitrace dump`: a .jtl log as text, one record per line. */
#ifndef JT_DUMP_H
#define JT_DUMP_H

#include <stdio.h>

/*
 * Print every record of the log at path to out as "TIME TYPE key=value ...", TIME in ns
 * since the header's start_ns (tests/fixtures/dump/golden.txt shows each type); flags are
 * the reader's (enum jt_logr_flags: JT_LOGR_SALVAGE). Returns 0, also for a truncated log
 * or one salvaged (explained on stderr), or 1 if the log cannot be opened, is corrupt or
 * out cannot be written (reported).
 */
int jt_dump(FILE *out, const char *path, unsigned int flags);

struct jt_filter;
/*
 * The same for a log, a directory of segments or several logs read as one (filter->more),
 * samples, enters and leaves outside filter's time (--from, --to, --last) and processes
 * left out; the reader's flags from filter (--salvage).
 */
int jt_dump_filtered(FILE *out, const char *path, const struct jt_filter *filter);

#endif
