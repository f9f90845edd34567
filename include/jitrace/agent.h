/* SPDX-License-Identifier: MIT */
/*
 * libjitrace-agent: tell jitrace (and perf) about JIT-compiled code and calls.
 *
 * Link with -ljitrace-agent or load the library into the runtime. Each call writes the
 * standard perf map line (/tmp/perf-PID.map) where it applies and calls an exported stub
 * that jitrace's uprobes watch. With nothing tracing, enter and leave cost one call to a
 * function made of a 5-byte NOP and a return. All calls are thread-safe.
 */
#ifndef JITRACE_AGENT_H
#define JITRACE_AGENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Code [code, code+size) now holds the method called name. Returns an id, unique in the
 * process and never 0. */
uint64_t jitrace_code_load(const void *code, size_t size, const char *name);

/* The code of method_id is gone; its address range may be reused. */
void jitrace_code_unload(uint64_t method_id);

/*
 * The runtime writes /tmp/perf-PID.map itself: the agent writes none (two writers of one file
 * garble it), and names go to jitrace through its probes alone. Call before the first load.
 */
void jitrace_perfmap_off(void);

/* The calling thread entered or left method_id. */
void jitrace_method_enter(uint64_t method_id);
void jitrace_method_leave(uint64_t method_id);

#ifdef __cplusplus
}
#endif

#endif
