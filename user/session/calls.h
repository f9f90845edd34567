/* SPDX-License-Identifier: GPL-2.0 */
/* The agents' calls regions of a live session: taken, drained into the pipeline, given back. */
#ifndef JT_SESSION_CALLS_H
#define JT_SESSION_CALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "join/pipeline.h"

struct jt_calls;

/*
 * Regions drained into pl. listen: take new processes' regions from their first call, on
 * the socket agents hand them to (JT_CALLBUF_SOCK); only those of the nr_roots roots and
 * their descendants when there are roots (the command a recording runs, the processes of
 * -p), every process's otherwise. sum: ask agents to sum calls per method and thread
 * (summary mode), and to keep the calls that took min_ns or more one by one (0: none).
 * NULL when out of memory (said). Not listening is said, and recording goes on.
 */
struct jt_calls *jt_calls__new(struct jt_pipeline *pl, bool listen, const uint32_t *roots,
			       int nr_roots, bool sum, uint64_t min_ns);
/*
 * pid's region, if it has one (found in its maps): announced by its agent as it made it
 * (fresh: what it holds is ours), or found at start (what it holds is older than us).
 */
/*
 * Process pid exits at ts (its exit event, not yet in the pipeline): what its region holds
 * goes in first, its sums timed before the exit, while the collector still knows its
 * methods. 0, or -EIO when the log failed.
 */
int jt_calls__exiting(struct jt_calls *c, uint32_t pid, uint64_t ts);
/*
 * Process pid execs at ts (its exec event, not yet in the pipeline): its old image's region
 * (made before ts, as its agent says; from an agent that does not say, one pid maps no
 * more) is drained, its sums timed before the exec while the collector still knows the old
 * image's methods, and dropped; the new image's, which may be taken already, stays.
 * 0, or -EIO when the log failed.
 */
int jt_calls__exec(struct jt_calls *c, uint32_t pid, uint64_t ts);
int jt_calls__add(struct jt_calls *c, uint32_t pid, bool fresh);
/* Every process's region (at start, with -a). */
void jt_calls__scan_all(struct jt_calls *c);
/*
 * The ring was read to its end, every record it held at ts handled (0: not this time, cut
 * short): sums the next ticks read are timed ts, before any exit or exec that came after;
 * with 0 they read none.
 */
void jt_calls__ring_read(struct jt_calls *c, uint64_t ts);
/*
 * A tick: regions handed over, then at most max records of every region timed upto or
 * before (the ring buffer was read that far: a call never goes out before the code load
 * that names it), merged by time within each, how many into *drained; every second
 * (check), regions of processes gone, drained to the last, dropped. Returns 0, or -errno
 * when the log failed.
 */
int jt_calls__tick(struct jt_calls *c, uint64_t max, uint64_t upto, bool check,
		   uint64_t *drained);
/* Give every region back and deliver what it holds; stop listening. */
int jt_calls__finish(struct jt_calls *c);
void jt_calls__free(struct jt_calls *c);

#endif
