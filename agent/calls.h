/* SPDX-License-Identifier: MIT */
/* Inside libjitrace-agent: making the process's calls region (agent/calls.c). */
#ifndef JT_AGENT_CALLS_H
#define JT_AGENT_CALLS_H

/*
 * Make and announce the calls region once a process (again in a forked child), before
 * the first code load reaches the stub: the collector that sees the load has already seen
 * the region. Cheap after the first call.
 */
__attribute__((visibility("hidden"))) void jt_agent_calls_start(void);

#endif
