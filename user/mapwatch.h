/* SPDX-License-Identifier: GPL-2.0 */
/* Following the perf maps of the processes jitrace sees, as they grow. */
#ifndef JT_MAPWATCH_H
#define JT_MAPWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "perfmap.h"

/*
 * One map line, read now, for pid. The line was written in (lo, hi]: lo is the earliest
 * time it can have been written (the previous read of that file found nothing past it),
 * hi a time after it was read. A map tells no more than that.
 */
typedef void (*jt_mapwatch_cb)(void *ctx, uint32_t pid, uint64_t lo, uint64_t hi,
			       const struct jt_perfmap_entry *e);
/* CLOCK_MONOTONIC in ns, as jt_now_ns() (tests pass their own). */
typedef uint64_t (*jt_clock_fn)(void *ctx);

struct jt_mapwatch;

/* clock NULL: jt_now_ns(). */
struct jt_mapwatch *jt_mapwatch__new(jt_mapwatch_cb cb, void *ctx, jt_clock_fn clock,
				     void *clock_ctx);
void jt_mapwatch__free(struct jt_mapwatch *mw);
/* Follow pid's map from the next poll on, if it has one (looked for again, less and less
 * often, while it has none). */
void jt_mapwatch__notice(struct jt_mapwatch *mw, uint32_t pid, uint64_t now);
/* pid exec'd a new program: look for its map again without waiting. */
void jt_mapwatch__exec(struct jt_mapwatch *mw, uint32_t pid, uint64_t ts);
/* Follow the maps of every process running now. */
void jt_mapwatch__scan(struct jt_mapwatch *mw, uint64_t now);
/* Open the maps of processes noticed since, and read what every followed map gained. */
void jt_mapwatch__poll(struct jt_mapwatch *mw, uint64_t now);
/* pid exited (or exec'd into something else): read what is left, then let it go. */
void jt_mapwatch__forget(struct jt_mapwatch *mw, uint32_t pid, uint64_t now);
/* Stop reading pid's map (its lines are not wanted: its agent reports its code) until it
 * execs. Safe from within the line callback. */
void jt_mapwatch__drop(struct jt_mapwatch *mw, uint32_t pid);
/* When pid last exec'd, as told by jt_mapwatch__exec (0: not since it was noticed). */
uint64_t jt_mapwatch__exec_ts(const struct jt_mapwatch *mw, uint32_t pid);
size_t jt_mapwatch__following(const struct jt_mapwatch *mw);
/* Bad lines in all maps ever followed. */
uint64_t jt_mapwatch__bad_lines(const struct jt_mapwatch *mw);

#endif
