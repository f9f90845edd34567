/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `jitrace flamegraph`: a log's samples, or its off-CPU time, as an interactive SVG flame
 * graph, or folded stacks.
 */
#ifndef JT_FLAMEGRAPH_H
#define JT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include "log/filter.h"

struct jt_flame_opts {
	const char *path;	/* the log (with base: the new one) */
	const char *base;	/* NULL, or --diff's base log: colour path's frames against it */
	struct jt_filter filter;
	bool folded;		/* "root;caller;leaf count" lines instead of SVG */
	bool annotate;		/* folded: JIT frames end in _[j], kernel frames in _[k] */
	bool off_cpu;		/* the time threads waited off the CPU, in us, not samples */
	const char *title;	/* SVG title; NULL: "Flame graph: LOG" ("Off-CPU time: LOG") */
	unsigned int width;	/* SVG width in pixels; 0: 1200 */
	double min_width;	/* SVG: frames narrower (pixels) are left out; <= 0: 0.1 */
};

/*
 * Read the log at o->path and write its flame graph to out. Stacks are merged by frame
 * name, root (caller) first; with a root per process ("comm (pid)") when the recording was
 * system-wide or more than one process has samples. With o->base (SVG only), path's flame
 * graph with each frame coloured by how its share of the samples moved from the same
 * stack's in base (red grew, blue shrank), its tooltip with both counts and the change in
 * points; processes are merged by command name ("comm"), as pids differ between logs.
 * With o->off_cpu, the stacks of the log's off-CPU records (record --off-cpu) instead of
 * samples, each weighing its off_ns / 1000 (us: the folded stacks' counts; the SVG's
 * tooltips say ms), a process's short waits (no stacks) as one "[short waits]" frame under
 * it so that the whole time is drawn; a log that recorded none is an error.
 * Returns 0 (also for a truncated log, said on stderr) or 1 (reported).
 */
int jt_flamegraph(FILE *out, const struct jt_flame_opts *o);

#endif
