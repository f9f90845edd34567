/* SPDX-License-Identifier: GPL-2.0 */
/* The join: events in time order in, log records out (methods defined before use). */
#ifndef JT_COLLECTOR_H
#define JT_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "base/event.h"
#include "base/sink.h"

/*
 * A process writes its perf map as it likes, under -a any process: 5 million lines of
 * distinct addresses would cost about 360 MB of methods. Past this many live perf-map
 * methods, a line that adds code at new addresses is counted (JT_DROP_PERFMAP_CAP) and not
 * kept; one that replaces live code is still applied, so nothing is named by stale code.
 * About 75 MB a process; a large Java or Node application has 50,000 to 200,000.
 */
#define JT_PERFMAP_METHODS_MAX 1000000

struct jt_symbols;
struct jt_membound;

/*
 * Unloaded methods a process's calls may still name, the last ones of each process: a
 * call can come after its method's unload (a sum read at its thread's exit, the leave of a
 * call whose code was replaced while it ran) and is filed under the method's definition.
 * A segmented log keeps as many definitions after their unload (log/segment_defs.c).
 */
#define JT_UNLOADED_KEPT 256

struct jt_collector_opts {
	const char *proc_root;	/* "/proc"; tests point it at a fixture tree */
	/* live perf-map methods one process may hold (0: JT_PERFMAP_METHODS_MAX) */
	size_t max_perfmap_methods;
	/* the file symbols to name native frames by, shared with the source that reads them
	 * as mappings are made (NULL: the collector keeps its own) */
	struct jt_symbols *symbols;
	/*
	 * The recorder's memory account (membound.h; NULL: none): every method is charged to
	 * it, and past its limit code at new addresses is counted (JT_DROP_MEMORY_PERFMAP,
	 * JT_DROP_MEMORY_CODE) and not kept; code that replaces live code is still applied.
	 */
	struct jt_membound *mem;
	/* bytes a sample's user stack copy holds at most (--stack-copy): what each thread's
	 * copy is cut to below it is learned (ucopy.h); 0: no copies */
	uint32_t copy_max;
};

struct jt_collector_stats {
	uint64_t events;	/* events joined */
	uint64_t samples;
	uint64_t offcpu;	/* off-CPU records (waits, and sums of short ones) */
	uint64_t offcpu_ns;	/* the time they stand for */
	uint64_t calls;		/* enter + leave */
	uint64_t methods;	/* method definitions written */
	uint64_t procs;		/* processes known now */
	uint64_t mmaps;		/* executable file mappings seen as they were made */
	uint64_t threads;	/* thread names written (first seen, or renamed) */
	uint64_t unknown_ids;	/* enter/leave/unload of an id never loaded while recording */
	uint64_t unsure_frames;	/* frames left unnamed: new code or the code it replaced */
	uint64_t broken_stacks;	/* samples whose stack was cut where it broke */
	uint64_t late_names;	/* methods named late (JT_REC_LATE written) */
	uint64_t late_conflicts; /* late lines given up: other code was named at their place */
	uint64_t perfmap_capped; /* perf map lines past a process's cap, not kept */
	uint64_t memory_perfmap; /* perf map lines past the memory bound, not kept */
	uint64_t memory_code;	/* other code loads past the memory bound, not kept */
	uint64_t memory_scopes;	/* inlined scopes past the memory bound, not kept */
	uint64_t memory_interp;	/* interpreted frames' methods past the bound, not named */
	uint64_t perfmap_skipped; /* perf map lines of processes the agent already reports */
	uint64_t copies_cut;	/* times a thread's stack copy was cut to what it needs (ucopy.h) */
	uint64_t copies_grown;	/* times one grew again */
	uint64_t copies;	/* samples' stack copies walked */
	uint64_t copy_bytes;	/* their bytes */
	uint64_t copies_over;	/* of them, more than their thread was cut to (ucopy.h) */
	uint64_t copies_fp_walks; /* of them, with the kernel's frame-pointer walk (ucopy.h) */
};

struct jt_collector;

struct jt_collector *jt_collector__new(const struct jt_collector_opts *o,
				       const struct jt_sink *sink);
void jt_collector__free(struct jt_collector *c);
/*
 * One event. Events must come in nondecreasing ts order: the code live at a sample's
 * address is then exactly the code live at the sample's time. Returns 0 or -errno from the
 * sink (already reported).
 */
int jt_collector__event(struct jt_collector *c, const struct jt_event *ev);
/* The end of the events: what waits to be written is written. Returns 0 or -errno. */
int jt_collector__flush(struct jt_collector *c);
/* Record count lost things of kind what (enum jt_drop) at time ts, by thread tid (0: not said). */
int jt_collector__drop(struct jt_collector *c, unsigned int what, uint32_t tid, uint64_t count,
		       uint64_t ts);
/* Whether pid reports its code through the agent (its perf map is then only a backup). */
bool jt_collector__has_agent(const struct jt_collector *c, uint32_t pid);
void jt_collector__stats(const struct jt_collector *c, struct jt_collector_stats *st);
struct jt_ucopy_want;
/*
 * Up to n of what threads' stack copies were learned to need since the last call, handed to
 * the sampler at now (ucopy.h).
 */
size_t jt_collector__copy_wants(struct jt_collector *c, struct jt_ucopy_want *out, size_t n,
				uint64_t now);

#endif
