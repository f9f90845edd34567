/* SPDX-License-Identifier: GPL-2.0 */
/* Loading and attaching jitrace's BPF programs (one of the two modules that use libbpf). */
#ifndef JT_LOADER_H
#define JT_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jt_events.h"

struct jt_bpf_opts {
	const char *agent_path;	/* library whose stubs are probed; NULL: no uprobes */
	unsigned int sample_hz;	/* 0: no sampling */
	size_t ringbuf_bytes;	/* power of two */
	bool calls;		/* attach enter/leave (agent stubs, and HotSpot's if usdt) */
	bool calls_buffers;	/* and learn of agents' calls regions (jt_callbuf.h) */
	bool usdt;		/* HotSpot's USDT probes in every libjvm.so found */
	bool kstack;		/* samples carry kernel frames */
	bool filter_pids;	/* only pids added with jt_bpf__add_pid, and their children */
	bool offcpu;		/* off-CPU time (the sched_switch program) */
	uint64_t offcpu_min_ns;	/* waits shorter than this are summed per thread, not stacked */
	uint32_t ustack_bytes;	/* user stack a sample copies for the CFI unwind; 0: none */
	bool attach;		/* false: load only (benchmarks drive jt_storm) */
	bool verbose;		/* libbpf's own messages */
};

struct jt_bpf;

/* Open, load and attach. Errors are reported with their cause; NULL is returned. */
struct jt_bpf *jt_bpf__open(const struct jt_bpf_opts *o);
void jt_bpf__close(struct jt_bpf *b);
int jt_bpf__add_pid(struct jt_bpf *b, uint32_t pid);
int jt_bpf__ringbuf_fd(const struct jt_bpf *b);
/* Sum the per-CPU drop counters into out[JT_DROP_MAX] (the kinds JT_DROP_BY_BPF names). */
int jt_bpf__drops(const struct jt_bpf *b, uint64_t *out);
/* Run jt_storm: count enter/leave events for pid; *dropped gets failed reserves. */
int jt_bpf__storm(struct jt_bpf *b, uint32_t pid, uint64_t count, uint64_t *dropped);
/*
 * Send what the threads' short waits add up to so far (the end of an off-CPU recording):
 * run jt_off_flush. Returns 0 or -errno (reported).
 */
int jt_bpf__offcpu_flush(struct jt_bpf *b);
/*
 * tid's samples copy bytes of its user stack from now on (less than --stack-copy: what its
 * walks need, join/ucopy.h), and take the kernel's frame-pointer walk too if fp_walk,
 * unless a thread whose tid has the same low bits (the slot's, JT_UCOPY_SLOTS) is set after
 * it: then it copies --stack-copy bytes and takes the walk again.
 */
void jt_bpf__ucopy(struct jt_bpf *b, uint32_t tid, uint32_t bytes, bool fp_walk);
/* How many per-CPU samplers are attached. */
int jt_bpf__nr_samplers(const struct jt_bpf *b);
/* How many libjvm.so files carry jitrace's USDT probes. */
int jt_bpf__nr_jvms(const struct jt_bpf *b);

#endif
