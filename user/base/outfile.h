/* SPDX-License-Identifier: GPL-2.0 */
/* Creating an output file (a log, a flame graph, an export) without trusting its path. */
#ifndef JT_OUTFILE_H
#define JT_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

/*
 * An output being written: a new file of mode 0600 in the target's directory, with no name
 * there (O_TMPFILE) or a hidden temporary one, put under the target's name only once it is
 * whole. Until then the target is exactly as it was; a failed output is dropped through the
 * directory it was made in, never by looking its path up again.
 */
struct jt_outfile;

/*
 * Start writing path. The directory is reached without following a symlink on the way
 * unless it is root's or the caller's. What is at path now is checked at once: anything
 * there is refused unless force, and with force anything but a regular file or a symlink
 * (replaced itself, never its target). NULL on failure, the error reported with the path.
 */
struct jt_outfile *jt_outfile__open(const char *path, bool force);

/* The file being written (valid until jt_outfile__close); its stream, made once, owns it. */
int jt_outfile__fd(const struct jt_outfile *of);
FILE *jt_outfile__stream(struct jt_outfile *of);

/*
 * Put what is written so far (the stream flushed, the file fsync'ed) under the target's
 * name, and go on writing it there: without force only if nothing appeared at the name
 * meanwhile; with force replacing what is there. Once placed, only flushes and fsyncs.
 * 0 or -errno, reported; on failure the target is as it was and the file can only be
 * closed.
 */
int jt_outfile__place(struct jt_outfile *of);

/*
 * Close and free of. A file never placed is dropped (a temporary name removed through its
 * directory); a placed one is kept as written. 0, or -errno of a failed close (reported).
 */
int jt_outfile__close(struct jt_outfile *of);

/* jt_outfile__place() then jt_outfile__close(): the whole output in place, or none of it. */
int jt_outfile__commit(struct jt_outfile *of);

/* For a command's output: jt_outfile__open() and its stream; NULL on failure (reported). */
FILE *jt_outfile__fopen(const char *path, bool force, struct jt_outfile **of);
/* Its end: committed if ok (0, or -errno reported), else dropped (0), the target untouched. */
int jt_outfile__finish(struct jt_outfile *of, bool ok);

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
