/* SPDX-License-Identifier: GPL-2.0 */
/* Ring-buffer records and perf map lines in; ordered, joined log records out. */
#ifndef JT_PIPELINE_H
#define JT_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "join/collector.h"
#include "base/sink.h"

/*
 * The reorder buffer's default byte bound (so at most about 16 MiB in all, see reorder.h):
 * about 95,000 call records, the whole 100 ms window up to 1M events/s and 27 ms at the
 * collector's full rate, where records from the ring buffer are out of order by
 * microseconds. When more waits, the oldest go out early (a record that then arrives older
 * than them is counted lost, JT_DROP_REORDER): the backlog of a collector starved of CPU
 * costs drops, never unbounded memory.
 */
#define JT_PIPELINE_PENDING_BYTES (8u << 20)

struct jt_pipeline_opts {
	uint64_t window_ns;	/* how late a record may arrive and still be put in order */
	size_t max_pending;	/* records held for reordering at most */
	size_t max_pending_bytes; /* and bytes (0: JT_PIPELINE_PENDING_BYTES); see reorder.h */
	const char *proc_root;	/* "/proc" */
	bool follow_perfmaps;
	bool follow_jitdumps;	/* jit-PID.dump files (user/sources/jitdump_watch.h) */
	bool unwind_tables;	/* read mapped files' unwind tables: off-CPU stacks need them */
	uint32_t copy_max;	/* a sample's user stack copy at most (--stack-copy), 0: none */
	size_t max_perfmap_methods;	/* a process's, 0: JT_PERFMAP_METHODS_MAX (collector.h) */
	/* the recorder's memory account (membound.h), which outlives the pipeline, charged by
	 * the methods and the perf maps followed (NULL: no bound) */
	struct jt_membound *mem;
	/*
	 * How long one tick (or scan, or finish) may read perf maps and jitdump files, by the
	 * clock below (0: until each file's per-read budget is spent). What is left is read at
	 * the next tick: files can wait, the loop and the end of a recording cannot.
	 */
	uint64_t files_slice_ns;
	/* the clock perf-map reads are timed by (NULL: jt_now_ns; tests pass their own) */
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
};

struct jt_pipeline_stats {
	struct jt_collector_stats col;
	uint64_t received;	/* ring-buffer records */
	uint64_t pending;	/* held for reordering */
	uint64_t pending_bytes;
	uint64_t maps;		/* perf maps followed */
	uint64_t jitdumps;	/* jitdump files followed */
	uint64_t jitdump_records; /* code loads and moves read from them */
	uint64_t lost[JT_DROP_MAX];	/* totals, BPF's and ours */
};

struct jt_pipeline;
struct jt_tscclock;
struct jt_ucopy_want;

struct jt_pipeline *jt_pipeline__new(const struct jt_pipeline_opts *o, const struct jt_sink *sink);
void jt_pipeline__free(struct jt_pipeline *pl);
/* Start following the perf maps of processes that are already running: all of them, or
 * (pid != 0) one. */
void jt_pipeline__scan(struct jt_pipeline *pl, uint32_t pid, uint64_t now);
/*
 * pid's executable mappings as /proc shows them now, as mapping events at now: for the
 * command jitrace forks, whose first samples (its exec) run in jitrace's own image.
 * Returns 0, or -errno if the log failed.
 */
int jt_pipeline__maps_now(struct jt_pipeline *pl, uint32_t pid, uint64_t now);
/*
 * One ring-buffer record (the ring buffer's callback). Returns 0, or -errno if the log
 * failed (already reported). An enter or leave timed by the caller's TSC (JT_CALL_TSC) is put
 * on CLOCK_MONOTONIC by jt_pipeline__tscclock's calibration.
 */
int jt_pipeline__raw(struct jt_pipeline *pl, const void *data, size_t len);
/*
 * The one calibration of the TSC a recording puts every record that counts it on
 * CLOCK_MONOTONIC by (the ring's, the calls regions'), made at the first call: NULL when out
 * of memory (said). The pipeline's: freed with it.
 */
struct jt_tscclock *jt_pipeline__tscclock(struct jt_pipeline *pl);
/*
 * Up to n changes of what threads' user stack copies need (join/ucopy.h), learned from the
 * samples joined since the last call, for the sampler, which is told at now: how many.
 */
size_t jt_pipeline__copy_wants(struct jt_pipeline *pl, struct jt_ucopy_want *out, size_t n,
			       uint64_t now);
/*
 * An event a source of the session made itself, checked (the calls regions': an enter or
 * leave may be JT_EVENT_CALL_LEN bytes short): taken as a decoded ring-buffer record is.
 */
int jt_pipeline__event(struct jt_pipeline *pl, const struct jt_event *ev);
/*
 * n enters and leaves, JT_EVENT_CALL_LEN bytes each one after the other at evs, in time
 * order (a run of a calls region's drain): taken as n events are, at the cost of one.
 */
int jt_pipeline__calls(struct jt_pipeline *pl, const void *evs, size_t n);
/* The same, shaped as the ring-buffer reader's callback (jt_rb_cb), ctx being the pipeline. */
int jt_pipeline__on_ring(void *ctx, const void *data, size_t len);
/* Read perf maps, then let out every record older than now minus the window. */
int jt_pipeline__tick(struct jt_pipeline *pl, uint64_t now);
/* BPF's drop counters, totals since start (JT_DROP_MAX of them, the kinds JT_DROP_BY_BPF
 * names read): record what grew. */
int jt_pipeline__bpf_drops(struct jt_pipeline *pl, const uint64_t *totals);
/*
 * A count of a kind the session's own sources keep (the agents' calls regions: the
 * JT_DROP_CALLS_* kinds), total since start: written with the next drop records.
 */
void jt_pipeline__source_drops(struct jt_pipeline *pl, unsigned int what, uint64_t total);
/*
 * count things of kind what that thread tid lost, written now as a drop record naming it;
 * they are part of the kind's total told with source_drops (before or after), which the
 * next drop records complete with what no thread was named for. Returns 0 or -errno.
 */
int jt_pipeline__thread_drops(struct jt_pipeline *pl, unsigned int what, uint32_t tid,
			      uint64_t count);
/* Let out everything and record the final loss counts, zero or not. */
int jt_pipeline__finish(struct jt_pipeline *pl);
void jt_pipeline__stats(const struct jt_pipeline *pl, struct jt_pipeline_stats *st);

#endif
