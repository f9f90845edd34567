/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The options every live command (record, top) shares, in one table with one parser:
 * frequency, pids, duration, calls, kernel stacks, agent, ring size, window, perf maps,
 * USDT, -v and --help. Plain C (no libbpf), so a test can drive it.
 */
#ifndef JT_LIVEOPTS_H
#define JT_LIVEOPTS_H

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session/live.h"

/* The shared options a command takes, or'ed; -v and -h are every command's. */
enum {
	JT_LIVE_OPT_FREQ = 1 << 0,	/* -F, --freq HZ */
	JT_LIVE_OPT_PID = 1 << 1,	/* -p, --pid PID[,PID...] */
	JT_LIVE_OPT_DURATION = 1 << 2,	/* -d, --duration SECS */
	JT_LIVE_OPT_CALLS = 1 << 3,	/* -c, --calls */
	JT_LIVE_OPT_KSTACK = 1 << 4,	/* -g, --kernel-stack */
	JT_LIVE_OPT_AGENT = 1 << 5,	/* --agent PATH, --no-agent */
	JT_LIVE_OPT_RINGBUF = 1 << 6,	/* --ringbuf MB, --max-memory MB */
	JT_LIVE_OPT_WINDOW = 1 << 7,	/* --window MS */
	JT_LIVE_OPT_NO_PERFMAP = 1 << 8,	/* --no-perfmap, --no-jitdump, --dotnet-module */
	JT_LIVE_OPT_NO_USDT = 1 << 9,	/* --no-usdt */
	JT_LIVE_OPT_OFFCPU = 1 << 10,	/* --off-cpu, --off-cpu-min US */
	JT_LIVE_OPT_UNWIND = 1 << 11,	/* --unwind fp|cfi, --stack-copy BYTES */
};

/* --unwind cfi's copy of each sample's stack top, bytes (as perf --call-graph dwarf's) */
#define JT_USTACK_DEFAULT 8192

/*
 * --off-cpu-min's default. A thread can make at most one stack record per this much of
 * its wall-clock time, so it bounds the volume: 1,000 records a second per thread.
 */
#define JT_OFFCPU_MIN_US 1000

/* A command's side of the parse: which shared options it takes, and its own. */
struct jt_live_cli {
	const char *name;		/* "record": for "Try 'jitrace record --help'." */
	const char *usage;		/* what -h prints */
	unsigned int shared;		/* JT_LIVE_OPT_* */
	unsigned int min_hz;		/* the least -F */
	bool command;			/* takes [--] COMMAND [ARGS...] after its options */
	const char *shortopts;		/* its own, as getopt spells them */
	const struct option *longopts;	/* its own, ending in {}; long-only codes from 0x400 */
	/* One of its own options: 0, or -EINVAL (reported). */
	int (*option)(void *ctx, int c, const char *arg);
	void *ctx;
};

/*
 * --max-memory's default, MiB: the README's DaemonSet gives the recorder 256Mi, and the
 * kernel charges the pod the page cache of the segments it writes too.
 */
#define JT_MAX_MEMORY_MB 200
/* The defaults: 99 Hz, a 64 MiB ring, a 100 ms window, off-CPU threshold 1 ms (off),
 * JT_MAX_MEMORY_MB. */
void jt_liveopts__init(struct jt_live_opts *o);
/*
 * Parse argv (argv[0] the command's name) into o, which jt_liveopts__init set up and the
 * command may have changed since; then check the options together and find the agent:
 * --agent's if readable, else libjitrace-agent.so beside jitrace or in ../lib, else none
 * (o->agent_path NULL; an error with --calls). Returns 0, 1 if --help was printed, or
 * -EINVAL (reported; an unknown option also gets "Try 'jitrace NAME --help'.").
 */
int jt_liveopts__parse(struct jt_live_opts *o, const struct jt_live_cli *cli, int argc,
		       char **argv);
/*
 * Add PID[,PID...] to o->pids: each a running process under proc_root ("/proc"); a thread
 * id stands for its process; one named twice counts once. 0 or -EINVAL (reported).
 */
int jt_liveopts__add_pids(struct jt_live_opts *o, const char *list, const char *proc_root);
#endif
