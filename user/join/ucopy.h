/* SPDX-License-Identifier: GPL-2.0 */
/* How much of its user stack each thread's samples copy (--unwind cfi), learned from walks. */
#ifndef JT_UCOPY_H
#define JT_UCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "host/unwind.h"

/*
 * A sample copies the top of its thread's user stack for the collector to unwind; most of
 * the copy's cost to the sampled CPU is its bytes (bench/RESULTS.md), and most walks end far
 * below the most a copy may hold. A thread's copy is cut to what its walks need, with room:
 * the sp of the outermost frame a walk reached, plus UCOPY_ROOM, rounded up; each window of
 * UCOPY_WINDOW walks sets it to what all but the deepest UCOPY_SPARED percent of them
 * needed. A walk that runs off a cut copy doubles it at once, up to the most (that
 * sample's stack is cut there, counted as broken, as a too-short copy's always is). A
 * thread's first window, and the one after its copy grew, are UCOPY_QUICK walks and set
 * it to what all of them needed: a copy spends little time at the most, or doubled for a
 * rare deep walk, and most of it at what the thread's usual walks need.
 * Changes reach the sampler in batches (jt_ucopy__take); a thread it has not been told of
 * copies the most.
 */
#define UCOPY_WINDOW 512
#define UCOPY_SPARED 1
#define UCOPY_QUICK 64
/*
 * A sample taken this long after its thread's copy was handed to the sampler is made with
 * it: one that copied more is counted (over), and there are none unless the sampler
 * ignores what it is told (or two threads share its slot, session/loader.h).
 */
#define UCOPY_GRACE_NS 50000000ULL

struct jt_ucopy_want {
	uint32_t tid;
	uint32_t bytes;		/* what its samples copy from now on */
};

struct jt_ucopy {
	uint32_t max;		/* the most a copy holds (--stack-copy) */
	struct jt_hash threads;	/* tid -> its copy (ucopy.c) */
	uint32_t *pending;	/* tids whose copy changed since the last take */
	size_t nr_pending, cap_pending;
	uint64_t cut, grown;	/* times a thread's copy was cut, and grown */
	uint64_t copies, bytes;	/* samples' copies walked, and their bytes */
	uint64_t over;		/* of them, more than their thread's copy (UCOPY_GRACE_NS) */
};

/* max 0: nothing learned (no copies). */
void jt_ucopy__init(struct jt_ucopy *u, uint32_t max);
void jt_ucopy__fini(struct jt_ucopy *u);
/*
 * A sample of tid taken at ts (CLOCK_MONOTONIC, ns) whose copy held len bytes from sp was
 * walked to end, its last frame's sp top bytes above the copy's start.
 */
void jt_ucopy__walked(struct jt_ucopy *u, uint32_t tid, uint64_t ts, size_t len, uint64_t top,
		      enum jt_unwind_end end);
/* Up to n changes since the last take into out, handed to the sampler at now: how many. */
size_t jt_ucopy__take(struct jt_ucopy *u, struct jt_ucopy_want *out, size_t n, uint64_t now);

#endif
