/* SPDX-License-Identifier: MIT */
/* Inside libjitrace-agent: the stubs jitrace's uprobes sit on (stubs.S), and which set a process calls. */
#ifndef JT_AGENT_STUBS_H
#define JT_AGENT_STUBS_H

#include <stdbool.h>
#include <stdint.h>

#define JT_HIDDEN __attribute__((visibility("hidden")))

/* The stubs (a 5-byte NOP first: the kernel may optimize their uprobes) and their twins. */
void jitrace_stub_code_load(uint64_t id, const void *code, uint64_t size, const char *name);
void jitrace_stub_code_unload(uint64_t id);
void jitrace_stub_code_inline(uint64_t id, const void *piece, uint32_t off, uint32_t len,
			      uint32_t total);
void jitrace_stub_code_load_forked(uint64_t id, const void *code, uint64_t size,
				   const char *name);
void jitrace_stub_code_unload_forked(uint64_t id);
void jitrace_stub_code_inline_forked(uint64_t id, const void *piece, uint32_t off,
				     uint32_t len, uint32_t total);
/*
 * jitrace_stub_method_enter and _leave, reached without the PLT: (id, ts), ts the TSC their
 * uprobe logs as the call's time, 0: the uprobe reads the clock.
 */
JT_HIDDEN void jt_stub_enter_direct(uint64_t id, uint64_t ts);
JT_HIDDEN void jt_stub_leave_direct(uint64_t id, uint64_t ts);
JT_HIDDEN void jt_stub_enter_direct_forked(uint64_t id, uint64_t ts);	/* its twin */
JT_HIDDEN void jt_stub_leave_direct_forked(uint64_t id, uint64_t ts);	/* its twin */
/* A stub's first byte while no uprobe sits on it (stubs.S): a 5-byte NOP's, a 1-byte NOP's */
#define JT_STUB_NOP5_BYTE 0x0f
#define JT_STUB_NOP1_BYTE 0x90

/*
 * This process is a forked child (set by agent.c's fork handler): its copy of the stubs'
 * page may hold calls into a trampoline it does not have, so it calls the twins, whose
 * uprobes are never optimized. The parent keeps the cheaper stubs.
 */
JT_HIDDEN extern bool jt_agent_forked;

/* Call stub, or its twin stub##_forked in a forked child. */
#define JT_STUB_CALL(stub, ...)						\
	(__builtin_expect(jt_agent_forked, 0) ? stub##_forked(__VA_ARGS__) : stub(__VA_ARGS__))

#endif
