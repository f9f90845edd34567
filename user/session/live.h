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
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "join/pipeline.h"
#include "base/sink.h"

#define JT_LIVE_MAX_PIDS 1024

/* What a live session records, and how. */
struct jt_live_opts {
	unsigned int hz;	/* samples per second per CPU, 0: none */
	double duration;	/* seconds, 0: until stopped */
	size_t ringbuf_bytes;	/* a power of two */
	uint64_t max_memory;	/* the whole recorder's, bytes (jt_live__mem_limit) */
	uint64_t window_ns;	/* how late an event may arrive and still be put in order */
	const char *agent_path;	/* after parsing: the agent to probe, NULL for none */
	bool calls_via_uprobe;	/* --calls-via uprobe: leave the agents' calls regions alone */
	bool calls_summary;	/* --calls-summary: the agents sum calls per method and thread */
	uint64_t calls_min_ns;	/* --calls-min: those this long one by one; 0: none */
	bool calls, kstack, verbose, no_perfmap, no_jitdump, no_agent, no_usdt;
	bool offcpu;		/* off-CPU time: each wait of a traced thread, with its stack */
	uint64_t offcpu_min_ns;	/* shorter waits are summed per thread, without stacks */
	/* --unwind cfi: bytes of user stack each sample copies, unwound by the code's CFI
	 * where frame pointers are missing; 0: frame pointers only */
	uint32_t ustack_bytes;
	bool dotnet_module;	/* .NET: load libjitrace-coreclr.so, not the runtime's perf map */
	bool no_attach;		/* JVMs running (-p, -a): no HotSpot attach at all */
	bool jvm_agent;		/* JVMs running: load libjitrace-jvmti.so, not Compiler.perfmap */
	bool load_only;		/* benchmarks: load BPF, attach and scan nothing */
	bool hold_signals;	/* a second signal waits for the clean exit, not kills */
	uint32_t pids[JT_LIVE_MAX_PIDS];	/* only these processes and their children */
	int nr_pids;
	char **command;		/* run and traced, NULL-terminated; NULL: none */
	char agent_buf[PATH_MAX];	/* where the installed agent's path is kept */
};

/*
 * What a recorder holds that does not grow with the host, beside its ring buffer and its
 * reorder buffer: the program and its libraries, zlib, ELF symbol tables of the files mapped
 * (about 17 MB of heap here with a million methods loaded). libbpf's parse of the kernel's
 * BTF (about 40 MB) is freed once BPF is loaded, before anything grows, and reused.
 */
#define JT_LIVE_BASE_BYTES (32ULL << 20)
/* The least room --max-memory must leave for what grows (methods, definitions, maps). */
#define JT_LIVE_GROW_MIN_BYTES (16ULL << 20)

/* What the recorder holds whatever the host does: the ring, the reorder buffer, the base. */
static inline uint64_t jt_live__fixed_bytes(const struct jt_live_opts *o)
{
	return o->ringbuf_bytes + 2ULL * JT_PIPELINE_PENDING_BYTES + JT_LIVE_BASE_BYTES;
}

/* What --max-memory leaves for the parts that grow with the host (base/membound.h). */
static inline uint64_t jt_live__mem_limit(const struct jt_live_opts *o)
{
	uint64_t fixed = jt_live__fixed_bytes(o);

	return o->max_memory > fixed ? o->max_memory - fixed : 0;
}

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
 * grows with the host (jt_live__mem_limit): the pipeline charges its methods and maps to
 * it, and a flight recorder's segments the definitions they keep.
 */
struct jt_membound *jt_live__mem(struct jt_live *l);
/* The command's pid (0: none); once it has ended, true and its wait status in *status. */
pid_t jt_live__child(const struct jt_live *l);
bool jt_live__child_ended(const struct jt_live *l, int *status);
/* Whether the duration (o->duration) ran out while the command, if any, still ran. */
bool jt_live__timed_out(const struct jt_live *l);

#endif
