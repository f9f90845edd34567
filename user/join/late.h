/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a late perf-map line may name, one process's worth: where its samples met code
 * nothing named (the pages of their bare frames, and when), and where known code went
 * away (when). A line that appears after samples met its code unnamed names them only back
 * to the latest of the process's start and the last time other code left those pages.
 */
#ifndef JT_LATE_H
#define JT_LATE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/hash.h"

#define JT_LATE_PAGES_MAX 65536	/* pages remembered of each kind in one process */

struct jt_late {
	struct jt_hash unnamed;	/* page -> the last time a bare frame was in it */
	struct jt_hash gone;	/* page -> the last time known code left it */
	uint64_t all_gone_ts;	/* gone too full: every page counts as left then */
};

/* A sample's frame at addr, at ts, that nothing named. */
void jt_late__unnamed(struct jt_late *l, uint64_t addr, uint64_t ts);
/* Known code at [start, start + size) went away at ts (unloaded, or replaced). */
void jt_late__gone(struct jt_late *l, uint64_t start, uint64_t size, uint64_t ts);
/*
 * Whether code at [start, start + size), named at last, was met unnamed by a sample since
 * it could have been there: since life_ts (the process's start, 0 if before recording) and
 * since any other code left its pages. *from gets that time.
 */
bool jt_late__window(const struct jt_late *l, uint64_t start, uint64_t size, uint64_t life_ts,
		     uint64_t *from);
/* Whether a sample met [start, start + size) unnamed after since (what the window checks,
 * for code known to have been there all that time). */
bool jt_late__met(const struct jt_late *l, uint64_t start, uint64_t size, uint64_t since);
/* Forget it all (a new image); the tables may be used again. */
void jt_late__fini(struct jt_late *l);

#endif
