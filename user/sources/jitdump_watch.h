/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The jitdump source: following the jit-PID.dump files that runtimes write (Node's
 * --perf-prof, .NET's DOTNET_PerfMapEnabled, perf's JVMTI agent, Python's -X perf_jit...),
 * found by the executable mapping of the file that announces it, read as they grow. A
 * process that also writes a perf map is named from that (its jitdump is not read).
 */
#ifndef JT_JITWATCH_H
#define JT_JITWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/event.h"

/* Agent-style ids of jitdump code: the runtime's code index with this bit (USDT ids use
 * bit 63, the agent's count from 1). */
#define JT_JITDUMP_ID_BIT (1ULL << 62)

struct jt_jitwatch_stats {
	uint64_t files;		/* followed now */
	uint64_t records;	/* code loads and moves handed on */
	uint64_t bad;		/* records not understood, or files refused (counted once) */
};

struct jt_jitwatch;

/* proc_root: "/proc" (tests may point elsewhere for the maps; files open in the real
 * process's root). */
struct jt_jitwatch *jt_jitwatch__new(const char *proc_root);
void jt_jitwatch__free(struct jt_jitwatch *jw);
/* Look for pid's jitdump from the next poll on (again, less and less often, while it has
 * none). */
void jt_jitwatch__notice(struct jt_jitwatch *jw, uint32_t pid);
/* pid was running when recording began: look for its jitdump once (not again unless it
 * execs). */
void jt_jitwatch__running(struct jt_jitwatch *jw, uint32_t pid);
/* What an event from the ring buffer tells: processes with user frames are looked at, an
 * exec starts afresh, an exit has what is left read at the next poll, then let go. */
void jt_jitwatch__see(struct jt_jitwatch *jw, const struct jt_event *ev);
/*
 * Find new files and read what every followed file gained, as events handed to push. Once
 * CLOCK_MONOTONIC reaches until the poll stops after the record it is at; the next one
 * begins with the file it stopped in.
 */
void jt_jitwatch__poll(struct jt_jitwatch *jw, uint64_t now, uint64_t until,
		       jt_event_push_fn push, void *ctx);
void jt_jitwatch__stats(const struct jt_jitwatch *jw, struct jt_jitwatch_stats *st);

#endif
