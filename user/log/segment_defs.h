/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What makes each segment of a rotating recording a complete log: the definitions the
 * collector wrote once (processes, methods and their source lines, modules, symbols) are
 * remembered, and written again in a new segment just before the first record there that
 * needs them. The collector is not involved: it defines each thing once, as ever, and its
 * ids stay the same in every segment.
 */
#ifndef JT_SEGMENT_DEFS_H
#define JT_SEGMENT_DEFS_H

#include <stdint.h>

#include "base/sink.h"

struct jt_segdefs_stats {
	uint64_t rewritten;	/* definitions written again in a later segment */
	uint64_t held;		/* definitions remembered now */
	uint64_t held_bytes;	/* and their bytes */
	uint64_t missing;	/* references to something never defined: passed on as they are */
};

struct jt_segdefs;

/* NULL: out of memory (reported). */
struct jt_segdefs *jt_segdefs__new(void);
void jt_segdefs__free(struct jt_segdefs *d);
/*
 * Records go to out from now on, a new segment: each definition is written again there
 * before the first record that needs it. Call it for the first segment too.
 */
void jt_segdefs__begin(struct jt_segdefs *d, const struct jt_sink *out);
/*
 * One record of the collector's stream (timestamps nondecreasing): the definitions it
 * needs that this segment lacks go out first, at its time, then the record. What an
 * unload, an exec or an exit makes useless is forgotten. 0 or -errno (reported).
 */
int jt_segdefs__record(struct jt_segdefs *d, const struct jt_rec_hdr *rec);
/*
 * The segment ends at ts: a drop record of count 0 for every kind of loss this segment
 * has none of, so that it accounts for every kind on its own. 0 or -errno.
 */
int jt_segdefs__end(struct jt_segdefs *d, uint64_t ts);
void jt_segdefs__stats(const struct jt_segdefs *d, struct jt_segdefs_stats *st);

#endif
