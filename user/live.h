/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A live session, what record, top and the benchmarks run: BPF loaded and attached, the
 * ring buffer read into the pipeline, one loop until a signal, the duration, the traced
 * command's exit or the command's hook says stop; one cleanup path.
 */
#ifndef JT_LIVE_H
#define JT_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "liveopts.h"
#include "pipeline.h"
#include "sink.h"

struct jt_live;
struct jt_bpf;
struct jt_membound;

/* Called on every tick (about every 10 ms) with the time: 0 goes on, JT_LIVE_STOP stops
 * cleanly, -errno stops with that error (reported by the hook). */
#define JT_LIVE_STOP 1
typedef int (*jt_live_hook)(void *ctx, uint64_t now);

/*
 * Take SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGCHLD through a signalfd, then open, load
 * and attach BPF as o says. o is read until jt_live__close. NULL on failure (reported):
 * nothing else has been made, so a command can create its output only once BPF works.
 */
struct jt_live *jt_live__open(const struct jt_live_opts *o);
/*
 * Records go to sink from now on: the pipeline and the ring reader, the pid filter, the
 * command forked (it execs at jt_live__exec, or when jt_live__run begins), perf maps of the
 * processes already running scanned. 0 or -errno (reported).
 */
int jt_live__start(struct jt_live *l, const struct jt_sink *sink);
/*
 * Let the command exec, and wait until it has: 0 once it runs (or if there is no command,
 * or it was let go already), -errno if exec failed ("cannot run COMMAND: why" reported).
 */
int jt_live__exec(struct jt_live *l);
/*
 * Let the command run (jt_live__exec: if it cannot, that error at once), then loop: ring
 * buffer into the pipeline, the pipeline's tick, BPF's drop counters every second, hook
 * (NULL: none). A first signal stops the loop (a second
 * one kills, unless o->hold_signals), as do the duration and the command's exit. Then drain
 * the ring and finish the pipeline. 0 or -errno (reported).
 */
int jt_live__run(struct jt_live *l, jt_live_hook hook, void *ctx);
/* Stop the command if it still runs, free everything, give the signals back. NULL is fine. */
void jt_live__close(struct jt_live *l);

/* When the session began (jt_now_ns), the time -d counts from. */
uint64_t jt_live__start_ns(const struct jt_live *l);
/* The loaded programs, for what only BPF knows (samplers attached) or does (jt_storm). */
struct jt_bpf *jt_live__bpf(const struct jt_live *l);
void jt_live__stats(const struct jt_live *l, struct jt_pipeline_stats *st);
/*
 * The recorder's memory account (membound.h), its limit what --max-memory leaves for what
 * grows with the host (jt_liveopts__mem_limit): the pipeline charges its methods and maps to
 * it, and a flight recorder's segments the definitions they keep.
 */
struct jt_membound *jt_live__mem(struct jt_live *l);
/* The command's pid (0: none); once it has ended, true and its wait status in *status. */
pid_t jt_live__child(const struct jt_live *l);
bool jt_live__child_ended(const struct jt_live *l, int *status);
/* Whether the duration (o->duration) ran out while the command, if any, still ran. */
bool jt_live__timed_out(const struct jt_live *l);

#endif
