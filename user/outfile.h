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

/*
 * The same for a file name in the directory dirfd (which the caller made safe, as
 * jt_outfile__dir does): new, 0600, never through a symlink or over anything there.
 * shown is the path errors name. Returns the fd or -errno (reported).
 */
int jt_outfile__create_at(int dirfd, const char *name, const char *shown);

/*
 * A directory jitrace keeps its own files in (a recording's segments): reached like an
 * output file's directory (only root's and the caller's symlinks followed), made with mode
 * 0700 if missing, and refused if it is neither root's nor the caller's or if others can
 * write to it. Returns an fd of it (O_RDONLY) or -errno, the error reported with the path.
 */
int jt_outfile__dir(const char *path);

#endif
