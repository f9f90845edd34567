/* SPDX-License-Identifier: MIT */
/*
 * The functions jitrace's uprobes sit on. Each begins with the 5-byte NOP 0f 1f 44 00 00,
 * which the kernel turns into a call to its uprobe trampoline (about 200 ns a hit here,
 * against 430 ns for an int3 on an ordinary first instruction). Untraced, they cost a
 * call and a return. Written in assembly so that no compiler can put anything before it.
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
.endm

/* Public API: these are the stubs themselves, so enter/leave is one call. */
JT_STUB jitrace_method_enter		/* (uint64_t id) */
JT_STUB jitrace_method_leave		/* (uint64_t id) */
/* Called by agent.c once the perf map line is written. */
JT_STUB jitrace_stub_code_load		/* (uint64_t id, const void *code, uint64_t size, const char *name) */
JT_STUB jitrace_stub_code_unload	/* (uint64_t id) */
/* (uint64_t id, const void *piece, uint32_t off, uint32_t len, uint32_t total) */
JT_STUB jitrace_stub_code_inline

	.section .note.GNU-stack, "", @progbits
