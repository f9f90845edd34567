/* SPDX-License-Identifier: GPL-2.0 */
/* Writing and reading the .jtl log (format in include/jt_log_format.h, its rules in log/format.h). */
#ifndef JT_LOG_H
#define JT_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jt_log_format.h"
#include "base/sink.h"

#define JT_LOG_BLOCK_TARGET (256 * 1024)	/* a block is written once this much is held */

/* ---- writer ---- */
struct jt_log_writer;

/*
 * Create path with mode 0600, never through a symlink (jt_outfile__open). An existing file
 * is an error unless force is set, in which case it is replaced once the header is written.
 * hdr->magic, version and header_size are filled in by the writer. Errors are reported
 * (with the path) and NULL returned.
 */
struct jt_log_writer *jt_logw__create(const char *path, const struct jt_log_header *hdr,
				      bool force);
/*
 * The same, but the log is not under its name until jt_logw__place() (or jt_logw__close()):
 * aborted before, it leaves path as it was. 0 or -errno from place (reported).
 */
struct jt_log_writer *jt_logw__create_unplaced(const char *path,
					       const struct jt_log_header *hdr, bool force);
int jt_logw__place(struct jt_log_writer *w);
/*
 * The same, the file created as name in the directory dirfd (never through a symlink, never
 * over anything there, mode 0600); shown is the path errors name.
 */
struct jt_log_writer *jt_logw__create_at(int dirfd, const char *name, const char *shown,
					 const struct jt_log_header *hdr);
/*
 * Append one record; rec->size must be set, a multiple of 8 and cover the payload.
 * Records are held and written in compressed blocks. Returns 0 or -errno (reported).
 */
int jt_logw__append(struct jt_log_writer *w, const struct jt_rec_hdr *rec);
/* Compress and write what is held, so that a crash keeps it. Returns 0 or -errno. */
int jt_logw__flush(struct jt_log_writer *w);
/* Write the end record, flush, fsync, place and close. Frees w. Returns 0 or -errno. */
int jt_logw__close(struct jt_log_writer *w);
/* Free without writing the end record (after an error); a log never placed is dropped. */
void jt_logw__abort(struct jt_log_writer *w);
/* Records appended, as readers give them (the calls of a JT_REC_CALLS one by one). */
uint64_t jt_logw__records(const struct jt_log_writer *w);
/* The writer as the collector's sink: each record appended. */
struct jt_sink jt_logw__sink(struct jt_log_writer *w);
uint64_t jt_logw__bytes(const struct jt_log_writer *w);	/* compressed bytes written */
/*
 * Called with the size of each write that grows the file (a block, with the end record's
 * block at close), before it is made: a flight recorder makes room on its disk bound
 * there, so that the file never passes it even for a moment. 0 goes on; -errno fails the
 * write with it (the hook reports why).
 */
typedef int (*jt_logw_room_fn)(void *ctx, uint64_t bytes);
void jt_logw__set_room(struct jt_log_writer *w, jt_logw_room_fn fn, void *ctx);

/* ---- reader ---- */
struct jt_log_reader;

enum jt_logr_state {
	JT_LOGR_OK,		/* more may follow */
	JT_LOGR_END,		/* clean end: the end record was read */
	JT_LOGR_TRUNCATED,	/* the file stops without an end record (crash, kill, disk full) */
	JT_LOGR_CORRUPT,	/* a block or record failed its checks */
};

enum jt_logr_flags {
	/*
	 * Read past what breaks the log's promises instead of stopping there: skip a damaged,
	 * repeated or out-of-sequence block, a malformed record's block tail, a record that
	 * goes back in time, references an id nothing defined or defines one again. Each is
	 * said on stderr and counted, and a summary follows at the end.
	 */
	JT_LOGR_SALVAGE = 1 << 0,
};

/*
 * What a reader found wrong with a log, by kind. Without JT_LOGR_SALVAGE the first one
 * stops the reader (CORRUPT), so at most one is counted.
 */
enum jt_logr_problem {
	JT_LOGR_P_HEADER,	/* a header field out of range */
	JT_LOGR_P_BLOCK,	/* a block that fails its crc32 or does not inflate */
	JT_LOGR_P_SEQUENCE,	/* a block out of sequence: blocks missing, repeated or moved */
	JT_LOGR_P_RECORD,	/* a malformed record (size, lengths, ids out of range) */
	JT_LOGR_P_TIME,		/* a record earlier than the one before it */
	JT_LOGR_P_UNDEFINED,	/* a reference to a method, module or symbol not defined yet */
	JT_LOGR_P_REDEFINED,	/* a second definition of a method, module or symbol id */
	JT_LOGR_P_END,		/* the end record's count disagrees with the records found */
	JT_LOGR_P_MAX,
};

struct jt_logr_stats {
	uint64_t problems[JT_LOGR_P_MAX];
	uint64_t records;		/* handed to the caller, the end record included */
	uint64_t records_skipped;	/* read and passed over (salvage) */
	uint64_t records_missing;	/* lost with missing or damaged blocks, as far as known */
	uint64_t blocks_skipped;	/* not read: damaged, repeated or out of order (salvage) */
	uint64_t blocks_missing;	/* numbers that never came in their turn (version 2) */
};

/*
 * Open and check the header, strictly: the first problem found stops the reader. Errors
 * are reported (with the path) and NULL returned.
 */
struct jt_log_reader *jt_logr__open(const char *path);
/* Same, with enum jt_logr_flags. */
struct jt_log_reader *jt_logr__open_flags(const char *path, unsigned int flags);
/* Same, over a memory buffer (for tests and fuzzing); buf must outlive the reader. */
struct jt_log_reader *jt_logr__open_mem(const void *buf, size_t len);
struct jt_log_reader *jt_logr__open_mem_flags(const void *buf, size_t len, unsigned int flags);
void jt_logr__close(struct jt_log_reader *r);
const struct jt_log_header *jt_logr__header(const struct jt_log_reader *r);
/*
 * Next record, checked, or NULL when there are no more; then jt_logr__state() says why.
 * A record returned is well formed (its size fits its type, lengths fit its size), comes
 * no earlier than the one before, references only methods, modules and symbols defined
 * before it and defines none twice; in a version 2 log its block came in sequence. The
 * record stays valid until the next call.
 */
const struct jt_rec_hdr *jt_logr__next(struct jt_log_reader *r);
enum jt_logr_state jt_logr__state(const struct jt_log_reader *r);
/* A one-line explanation of a TRUNCATED or CORRUPT state (with the file offset). */
const char *jt_logr__why(const struct jt_log_reader *r);
/* What was found wrong and skipped so far. */
const struct jt_logr_stats *jt_logr__stats(const struct jt_log_reader *r);
/* "header", "block", ... : a problem kind's name, for messages and tests */
const char *jt_logr__problem_name(enum jt_logr_problem p);

#endif
