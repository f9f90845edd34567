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

#define JT_LIVE_MAX_PIDS 1024

/* What a live session records, and how. */
struct jt_live_opts {
	unsigned int hz;	/* samples per second per CPU, 0: none */
	double duration;	/* seconds, 0: until stopped */
	size_t ringbuf_bytes;	/* a power of two */
	uint64_t max_memory;	/* the whole recorder's, bytes (jt_liveopts__mem_limit) */
	uint64_t window_ns;	/* how late an event may arrive and still be put in order */
	const char *agent_path;	/* after parsing: the agent to probe, NULL for none */
	bool calls, kstack, verbose, no_perfmap, no_jitdump, no_agent, no_usdt;
	bool offcpu;		/* off-CPU time: each wait of a traced thread, with its stack */
	uint64_t offcpu_min_ns;	/* shorter waits are summed per thread, without stacks */
	bool dotnet_module;	/* .NET: load libjitrace-coreclr.so, not the runtime's perf map */
	bool load_only;		/* benchmarks: load BPF, attach and scan nothing */
	bool hold_signals;	/* a second signal waits for the clean exit, not kills */
	uint32_t pids[JT_LIVE_MAX_PIDS];	/* only these processes and their children */
	int nr_pids;
	char **command;		/* run and traced, NULL-terminated; NULL: none */
	char agent_buf[PATH_MAX];	/* where the installed agent's path is kept */
};

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
};

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
/*
 * What a recorder holds that does not grow with the host, beside its ring buffer and its
 * reorder buffer: the program and its libraries, zlib, ELF symbol tables of the files mapped
 * (about 17 MB of heap here with a million methods loaded). libbpf's parse of the kernel's
 * BTF (about 40 MB) is freed once BPF is loaded, before anything grows, and reused.
 */
#define JT_LIVE_BASE_BYTES (32ULL << 20)
/* The least room --max-memory must leave for what grows (methods, definitions, maps). */
#define JT_LIVE_GROW_MIN_BYTES (16ULL << 20)

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
/*
 * What --max-memory leaves for the parts that grow with the host (membound.h): the bound
 * less the ring buffer, the reorder buffer's bound with its indexes and JT_LIVE_BASE_BYTES.
 */
uint64_t jt_liveopts__mem_limit(const struct jt_live_opts *o);

#endif
