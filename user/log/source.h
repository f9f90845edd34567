/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one way the commands that read a log (report, flamegraph, dump, the exports) read
 * it: the checked reader, strict or --salvage; what the log has defined so far (logview);
 * the --pid/--comm/--from/--to filter; the drop counts; and at the end one explanation of a
 * truncated or corrupt log, naming the file and the offset.
 */
#ifndef JT_LOGSRC_H
#define JT_LOGSRC_H

#include <stdbool.h>
#include <stdint.h>

#include "log/filter.h"
#include "jt_events.h"
#include "log/log.h"
#include "log/view.h"

#define JT_LOGSRC_NAME_CAP 256	/* buffer for a frame name formatted from file+offset */

struct jt_logset;

struct jt_latenames;

/* What one thread lost of one kind, as the drop records naming it say. */
struct jt_logsrc_lost {
	uint32_t what;			/* enum jt_drop */
	uint32_t tid;
	uint64_t count;
};

struct jt_logsrc {
	const char *path;
	struct jt_filter filter;	/* what is kept; its times resolved at open */
	struct jt_logset *r;		/* the log, or logs read as one (log/set.h) */
	struct jt_lv *lv;		/* every definition read so far */
	const struct jt_log_header *hdr;
	uint64_t last_ts;		/* the latest of the header's start and every record's time */
	uint64_t filtered;		/* samples and calls the filter left out */
	uint64_t drops[JT_DROP_MAX];	/* events lost by enum jt_drop, from the drop records */
	uint64_t drops_other;		/* lost for reasons a newer jitrace knows */
	/* the drop records that name a thread (part of drops): by kind, most lost first */
	struct jt_logsrc_lost *lost;
	size_t nr_lost, cap_lost;
	int err;			/* -ENOMEM: a definition could not be kept (reported) */
	struct jt_latenames *late;	/* names given late, NULL if the log has none */
};

/*
 * Open the log at path for reading with filter (NULL: keep everything, strictly). Errors
 * are reported, naming the file. Returns 0 or -1.
 */
int jt_logsrc__open(struct jt_logsrc *s, const char *path, const struct jt_filter *filter);
/*
 * The next record, every one in file order, once the source has taken it in: definitions
 * into lv, drops counted. *kept (kept may be NULL) says whether it is a sample, enter or
 * leave the filter keeps; those it leaves out are counted in filtered. NULL at the end of
 * what can be read, or on an error (reported); jt_logsrc__finish tells which.
 */
const struct jt_rec_hdr *jt_logsrc__next(struct jt_logsrc *s, bool *kept);
/*
 * After the last record: a truncated log is said on stderr and accepted ("PATH: truncated:
 * WHY; DONE up to the last whole block", done saying what the command did, "reported"),
 * a corrupt one is an error, reported. Returns 0 or -1 (also after an error next reported).
 */
int jt_logsrc__finish(struct jt_logsrc *s, const char *done);
void jt_logsrc__close(struct jt_logsrc *s);

/* Samples read so far that a late name (JT_REC_LATE) named a frame of. */
uint64_t jt_logsrc__late(const struct jt_logsrc *s);
/* Every event the drop records say was lost (not the kinds jt_drop__kept counts). */
uint64_t jt_logsrc__dropped(const struct jt_logsrc *s);
/*
 * A frame's name (as jt_lv__frame) and the file it is in: the module's base name for
 * native code, "[jit]", "[kernel]" or "[unknown]". buf holds JT_LOGSRC_NAME_CAP bytes.
 */
const char *jt_logsrc__frame(const struct jt_logsrc *s, const struct jt_frame *f, char *buf,
			     const char **file, enum jt_lv_kind *kind);
/* The name of a method an enter or leave names; "[unknown method N]" formatted into buf. */
const char *jt_logsrc__method(const struct jt_logsrc *s, uint64_t id, char *buf);
/* ns since the header's start_ns; a time before it counts as 0. */
uint64_t jt_logsrc__rel(const struct jt_logsrc *s, uint64_t ts);

#endif
