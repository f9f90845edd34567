/* SPDX-License-Identifier: GPL-2.0 */
/* Writing and reading the .jtl log (format in include/jt_log_format.h). */
#ifndef JT_LOG_H
#define JT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jt_log_format.h"
#include "sink.h"

#define JT_LOG_BLOCK_TARGET (256 * 1024)	/* a block is written once this much is held */

/* ---- writer ---- */
struct jt_log_writer;

/*
 * Create path with mode 0600, never through a symlink. An existing file is an error
 * unless force is set, in which case it is replaced. hdr->magic, version and header_size
 * are filled in by the writer. Errors are reported (with the path) and NULL returned.
 */
struct jt_log_writer *jt_logw__create(const char *path, const struct jt_log_header *hdr,
				      bool force);
/*
 * Append one record; rec->size must be set, a multiple of 8 and cover the payload.
 * Records are held and written in compressed blocks. Returns 0 or -errno (reported).
 */
int jt_logw__append(struct jt_log_writer *w, const struct jt_rec_hdr *rec);
/* Compress and write what is held, so that a crash keeps it. Returns 0 or -errno. */
int jt_logw__flush(struct jt_log_writer *w);
/* Write the end record, flush, fsync and close. Frees w. Returns 0 or -errno. */
int jt_logw__close(struct jt_log_writer *w);
/* Free without writing the end record (after an error). */
void jt_logw__abort(struct jt_log_writer *w);
uint64_t jt_logw__records(const struct jt_log_writer *w);
/* The writer as the collector's sink: each record appended. */
struct jt_sink jt_logw__sink(struct jt_log_writer *w);
uint64_t jt_logw__bytes(const struct jt_log_writer *w);	/* compressed bytes written */

/* ---- reader ---- */
struct jt_log_reader;

enum jt_logr_state {
	JT_LOGR_OK,		/* more may follow */
	JT_LOGR_END,		/* clean end: the end record was read */
	JT_LOGR_TRUNCATED,	/* the file stops without an end record (crash, kill, disk full) */
	JT_LOGR_CORRUPT,	/* a block or record failed its checks */
};

/* Open and check the header. Errors are reported (with the path) and NULL returned. */
struct jt_log_reader *jt_logr__open(const char *path);
/* Same, over a memory buffer (for tests and fuzzing); buf must outlive the reader. */
struct jt_log_reader *jt_logr__open_mem(const void *buf, size_t len);
void jt_logr__close(struct jt_log_reader *r);
const struct jt_log_header *jt_logr__header(const struct jt_log_reader *r);
/*
 * Next record, validated (its size fits its type, lengths fit its size), or NULL when
 * there are no more; then jt_logr__state() says why. The record stays valid until the
 * next call.
 */
const struct jt_rec_hdr *jt_logr__next(struct jt_log_reader *r);
enum jt_logr_state jt_logr__state(const struct jt_log_reader *r);
/* A one-line explanation of a TRUNCATED or CORRUPT state (with the file offset). */
const char *jt_logr__why(const struct jt_log_reader *r);

/*
 * Why a record of avail bytes (its own size, or what is left of its block) is malformed:
 * size not a multiple of 8, below 16 or beyond avail, or too small for its type's fixed
 * part and lengths. NULL if it is well formed; unknown types need only a valid size.
 * The writer refuses, and the reader stops at, what this rejects.
 */
const char *jt_rec__invalid(const struct jt_rec_hdr *rec, size_t avail);

#endif
