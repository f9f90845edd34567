/* SPDX-License-Identifier: MIT */
/*
 * The functions jitrace's uprobes sit on. Each begins with the 5-byte NOP 0f 1f 44 00 00,
 * which the kernel (6.18) turns into a call to its uprobe trampoline (about 460 ns a hit
 * here, against 9,200 ns for an int3 on an ordinary instruction stepped out of line: see
 * bench/RESULTS.md). Untraced, they cost a call and a return. Written in assembly so that
 * no compiler can put anything before it.
 */
	.text

.macro JT_STUB name
	.globl \name
	.type \name, @function
	.p2align 4
\name:
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	ret
	.size \name, . - \name
	JT_STUB_FORKED \name\()_forked
.endm

/*
 * Each stub's twin for a forked child (agent/stubs.h picks it there), which begins with a
 * one-byte NOP: a uprobe on it takes the int3 path and is never optimized. A stub the parent
 * hit under an optimized uprobe is a call into the parent's trampoline page, which the
 * kernel (6.18) does not give a forked child: the child's first call there would fault.
 */
.macro JT_STUB_FORKED name
	.globl \name
	.type \name, @function
	.p2align 4
\name:
	nop
	ret
	.size \name, . - \name
.endm

/*
 * Called by agent.c's jitrace_method_enter/leave while no collector drains the process's
 * calls region (jt_callbuf.h): jitrace's uprobe path. Agents before the region had the
 * public functions themselves as stubs, and jitrace still probes those where these are not.
 */
JT_STUB jitrace_stub_method_enter	/* (uint64_t id, uint64_t tsc) */
JT_STUB jitrace_stub_method_leave	/* (uint64_t id, uint64_t tsc) */
/* The same four for agent.c's own calls: hidden names are reached without the PLT's jump. */
	.globl jt_stub_enter_direct
	.hidden jt_stub_enter_direct
	.set jt_stub_enter_direct, jitrace_stub_method_enter
	.globl jt_stub_leave_direct
	.hidden jt_stub_leave_direct
	.set jt_stub_leave_direct, jitrace_stub_method_leave
	.globl jt_stub_enter_direct_forked
	.hidden jt_stub_enter_direct_forked
	.set jt_stub_enter_direct_forked, jitrace_stub_method_enter_forked
	.globl jt_stub_leave_direct_forked
	.hidden jt_stub_leave_direct_forked
	.set jt_stub_leave_direct_forked, jitrace_stub_method_leave_forked
/* Called by agent.c once the perf map line is written. */
JT_STUB jitrace_stub_code_load		/* (uint64_t id, const void *code, uint64_t size, const char *name) */
JT_STUB jitrace_stub_code_unload	/* (uint64_t id) */
/* (uint64_t id, const void *piece, uint32_t off, uint32_t len, uint32_t total) */
JT_STUB jitrace_stub_code_inline

/*
 * Called by agent.c once the process's calls region is made, and again in a forked child.
 * Not a 5-byte NOP: once hit, the kernel (6.18) rewrites that into a call to a trampoline
 * page that a forked child does not inherit, and the child's first call there faults. Its
 * one hit a process costs the int3 path instead.
 */
	.globl jitrace_stub_calls_region
	.type jitrace_stub_calls_region, @function
	.p2align 4
jitrace_stub_calls_region:		/* (const void *addr, uint64_t size) */
	nop
	ret
	.size jitrace_stub_calls_region, . - jitrace_stub_calls_region

	.section .note.GNU-stack, "", @progbits
