/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which running JVMs a live session asks for the names of their code, and how: by HotSpot's
 * attach (sources/jvm_attach.h), at the session's start, after HotSpot's USDT probes are in
 * place, so code compiled before is in the perf map HotSpot writes (Compiler.perfmap) and
 * code compiled after is told by the probes: no gap between the two.
 */
#ifndef JT_JVMS_H
#define JT_JVMS_H

#include <stdbool.h>
#include <stdint.h>

struct jt_guard;

struct jt_jvms_opts {
	const char *proc_root;	/* "/proc" */
	const uint32_t *pids;	/* the processes asked for (-p) */
	int nr_pids;		/* 0: every process but jitrace (-a) */
	/* load this JVMTI agent (an absolute path, --jvm-agent) instead of asking for a perf
	 * map; NULL: the perf map */
	const char *agent;
	bool agent_calls;	/* the agent with its "calls" option (--calls) */
	/* holds a share of each JVM's map before it is asked for it (jt_guard__jvm_map), so
	 * that a map the attach made is removed after; NULL: the map is left there */
	struct jt_guard *guard;
	int timeout_ms;		/* each JVM's, all asked at once */
};

/*
 * Ask each JVM among o's processes (a process mapping libjvm.so). A JVM that cannot be asked
 * is named once on stderr with the reason; its JIT frames stay "[java jit]". Returns how many
 * answered.
 */
int jt_jvms__ask(const struct jt_jvms_opts *o);

#endif
