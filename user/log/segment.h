/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A flight recorder's directory: the collector's records written as a run of segments, each
 * a complete log of its own (segment_defs.h), closed every so often, on demand (SIGUSR2),
 * or when it grows past a quarter of the size bound; the oldest whole segments deleted to
 * keep the directory within an age and a size.
 *
 * A segment is written as NAME.part and renamed NAME once closed, NAME being
 * jitrace-YYYYmmdd-HHMMSS-SEQ.jtl (UTC, the time it begins): readers take only *.jtl, so
 * they see closed segments alone. A .part left by a recorder that died is renamed when the
 * next one opens the directory (it reads up to its last flushed block). Every segment's
 * header is the recording's, but for start_ns, which is the time of the last record
 * before it: a segment begins where the one before it ends, so a reader can tell that
 * they follow each other.
 */
#ifndef JT_SEGMENT_H
#define JT_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "jt_log_format.h"
#include "base/sink.h"

struct jt_membound;

#define JT_SEGMENT_PREFIX "jitrace-"
#define JT_SEGMENT_SUFFIX ".jtl"
#define JT_SEGMENT_NAME_MAX 64
/* NAME.pushed: what a pusher (push.h) has sent of segment NAME; deleted with it */
#define JT_SEGMENT_PUSHED ".pushed"

/*
 * What the size bound keeps free beyond what the recorder is about to write: the directory's
 * own growth and what the pusher appends to its NAME.pushed notes between two looks at the
 * directory (a line a profile, a few KB a segment). 64 KiB, a sixteenth of a small bound.
 */
#define JT_SEGMENT_SLACK(max_bytes) ((max_bytes) / 16 < 65536 ? (max_bytes) / 16 : 65536)

struct jt_segment_opts {
	const char *dir;		/* made (0700) if missing; see jt_outfile__dir() */
	uint64_t rotate_ns;		/* a segment's length */
	uint64_t max_age_ns;		/* delete segments that ended longer ago (0: keep) */
	/* keep the directory within, as du -sb counts it: the directory itself, every segment
	 * (the open one included, at every moment) and push note (0: no bound) */
	uint64_t max_bytes;
	const struct jt_log_header *hdr;	/* the recording's header */
	/* the recorder's memory account (membound.h), which outlives the segment: the
	 * definitions kept for the next segment are charged to it, never refused (NULL: none) */
	struct jt_membound *mem;
	/* A segment was closed, under its final name (NULL: nobody to tell). */
	void (*closed)(void *ctx, const char *name);
	void *ctx;
};

struct jt_segment_stats {
	uint64_t closed;		/* segments closed by this recorder */
	uint64_t deleted;		/* segments deleted to keep within the bounds */
	uint64_t kept;			/* closed segments in the directory now */
	uint64_t bytes;			/* their bytes and the open segment's */
	uint64_t records;		/* records written, definitions written again included */
	uint64_t rewritten;		/* definitions written again in a later segment */
	uint64_t held_bytes;		/* definitions remembered for that */
};

struct jt_segment;

/*
 * Open (or make) the directory, lock it against a second recorder, rename what a dead one
 * left open, bound the directory and begin the first segment. NULL on error (reported).
 */
struct jt_segment *jt_segment__open(const struct jt_segment_opts *o);
/* The sink the collector's records go to. */
struct jt_sink jt_segment__sink(struct jt_segment *s);
/*
 * The time is now (CLOCK_MONOTONIC): if the segment is due (its time is up, it holds more
 * than a quarter of max_bytes) or close_now, close it and begin the next; then keep the
 * directory within its bounds. Between records only. 0 or -errno (reported).
 */
int jt_segment__tick(struct jt_segment *s, uint64_t now, bool close_now);
/* Write what is held of the open segment, so that a crash keeps it. 0 or -errno. */
int jt_segment__flush(struct jt_segment *s);
/* Close the last segment and bound the directory; only stats and free after. 0 or -errno. */
int jt_segment__close(struct jt_segment *s);
/*
 * Free. A segment still open (after an error) has what is held written if it can be and is
 * renamed as it is: it reads as truncated. NULL is fine.
 */
void jt_segment__free(struct jt_segment *s);
void jt_segment__stats(const struct jt_segment *s, struct jt_segment_stats *st);
/* The directory as given, for messages. */
const char *jt_segment__dir(const struct jt_segment *s);

/* Whether name is a closed segment's ("jitrace-...jtl"). */
bool jt_segment__is_name(const char *name);

#endif
