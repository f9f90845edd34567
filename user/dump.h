/* SPDX-License-Identifier: GPL-2.0 */
/* `jitrace dump`: a .jtl log as text, one record per line. */
#ifndef JT_DUMP_H
#define JT_DUMP_H

#include <stdio.h>

/*
 * Print every record of the log at path to out as "TIME TYPE key=value ...", TIME in ns
 * since the header's start_ns (tests/fixtures/dump/golden.txt shows each type). Returns 0,
 * also for a truncated log (explained on stderr), or 1 if the log cannot be opened, is
 * corrupt or out cannot be written (reported).
 */
int jt_dump(FILE *out, const char *path);

#endif
