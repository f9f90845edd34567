/* SPDX-License-Identifier: GPL-2.0 */
/* The perf-map source: following the perf maps of the processes jitrace sees, as they grow. */
#ifndef JT_MAPWATCH_H
#define JT_MAPWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/event.h"
#include "sources/perfmap.h"
#include "sources/watch.h"

struct jt_mapwatch;

/* clock NULL: jt_now_ns(). */
struct jt_mapwatch *jt_mapwatch__new(jt_clock_fn clock, void *clock_ctx);
/*
 * Charge each map followed (JT_PERFMAP_FILE_BYTES) to the recorder's memory account
 * (membound.h): past its limit a map is not opened until there is room (it waits).
 */
struct jt_membound;
void jt_mapwatch__bound(struct jt_mapwatch *mw, struct jt_membound *mem);
void jt_mapwatch__free(struct jt_mapwatch *mw);
/* Follow pid's map from the next poll on, if it has one (looked for again, less and less
 * often, while it has none). */
void jt_mapwatch__notice(struct jt_mapwatch *mw, uint32_t pid);
/*
 * What an event from the ring buffer tells about maps, as it arrives: a process with user
 * frames is followed; one that exec'd is looked at again; one that exited has what is left
 * of its map read at the next poll, then let go; one whose agent reports its code has its
 * map no longer read once that report has been joined.
 */
void jt_mapwatch__see(struct jt_mapwatch *mw, const struct jt_event *ev);
/*
 * Open the maps of processes noticed since, and read what every followed map gained: each
 * line becomes a code-load event handed to push. A line was written in (lo, hi], lo the
 * previous read of its map that reached its end (or the program's start), hi the clock
 * after it was read: the event is timed lo with latest_ts hi. floor is the time of the
 * newest event already joined. Once the clock reaches until, the poll stops after the line
 * it is at (maps can wait); the next one goes on from there (that map's next line), so that
 * every map has its turn.
 */
void jt_mapwatch__poll(struct jt_mapwatch *mw, uint64_t now, uint64_t floor, uint64_t until,
		       jt_event_push_fn push, void *ctx);
size_t jt_mapwatch__following(const struct jt_mapwatch *mw);
/* Bad lines in all maps ever followed. */
uint64_t jt_mapwatch__bad_lines(const struct jt_mapwatch *mw);
/* Lines not read, or read and not handed on, because the process's agent reports its code. */
uint64_t jt_mapwatch__skipped(const struct jt_mapwatch *mw);

#endif
