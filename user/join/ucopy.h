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
 *
 * A sample also takes the kernel's frame-pointer walk of the user stack only where it may
 * add frames, as it costs more than most copies: on a JVM without frame pointers, following
 * rbp through compiled code, 0.7 us a sample (bench/RESULTS.md). It can where the walk over
 * the copy could not go on, ran off a copy at the most or stopped at the leaf (the kernel's
 * walk is then spliced on, or taken whole: jt_unwind__splice). A thread not yet told takes
 * it; each UCOPY_QUICK walks of a thread decide whether its samples take it from then on:
 * they do if some walk wanted it, unless the walks that wanted it had it and it added
 * nothing to any of them (then the next window that wants it tries it again).
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
	bool fp_walk;		/* whether they take the kernel's frame-pointer walk too */
};

/* A sample's walk over its copy, what jt_ucopy__walked learns from. */
struct jt_ucopy_walk {
	uint64_t ts;		/* the sample's time (CLOCK_MONOTONIC, ns) */
	size_t len;		/* its copy's bytes */
	uint64_t top;		/* the sp of the last frame reached, bytes above the copy's start */
	enum jt_unwind_end end;
	unsigned int frames;	/* the walk's */
	bool fp_taken;		/* the kernel's frame-pointer walk came with the sample */
	bool fp_added;		/* and added frames to the walk's */
};

struct jt_ucopy {
	uint32_t max;		/* the most a copy holds (--stack-copy) */
	struct jt_hash threads;	/* tid -> its copy (ucopy.c) */
	uint32_t *pending;	/* tids whose copy changed since the last take */
	size_t nr_pending, cap_pending;
	uint64_t cut, grown;	/* times a thread's copy was cut, and grown */
	uint64_t copies, bytes;	/* samples' copies walked, and their bytes */
	uint64_t over;		/* of them, more than their thread's copy (UCOPY_GRACE_NS) */
	uint64_t fp_walks;	/* of them, with the kernel's frame-pointer walk */
};

/* max 0: nothing learned (no copies). */
void jt_ucopy__init(struct jt_ucopy *u, uint32_t max);
void jt_ucopy__fini(struct jt_ucopy *u);
/* A sample of tid was walked over its copy, as w says. */
void jt_ucopy__walked(struct jt_ucopy *u, uint32_t tid, const struct jt_ucopy_walk *w);
/* Up to n changes since the last take into out, handed to the sampler at now: how many. */
size_t jt_ucopy__take(struct jt_ucopy *u, struct jt_ucopy_want *out, size_t n, uint64_t now);

#endif
