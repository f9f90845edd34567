/* SPDX-License-Identifier: GPL-2.0 */
/* Creating an output file (a log, a flame graph, an export) without trusting its path. */
#ifndef JT_OUTFILE_H
#define JT_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Create path for writing, a new regular file of mode 0600. Never through a symlink at the
 * path, nor through a symlink on the way there unless it is root's or the caller's, nor over
 * anything but a regular file. An existing file (or a symlink, replaced itself, never its
 * target) is refused unless force, which replaces it by renaming a new file over it.
 * Returns the fd or -errno, the error reported with the path and why.
 */
int jt_outfile__create(const char *path, bool force);

/* jt_outfile__create() as a stdio stream; NULL on failure, the error reported. */
FILE *jt_outfile__fopen(const char *path, bool force);

#endif
