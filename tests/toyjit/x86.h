/* SPDX-License-Identifier: MIT */
/* x86-64 encoder for the toy JIT: the few instructions it emits, written at their final address. */
#ifndef TOYJIT_X86_H
#define TOYJIT_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum x86_reg {
	X86_RAX, X86_RCX, X86_RDX, X86_RBX, X86_RSP, X86_RBP, X86_RSI, X86_RDI,
	X86_R8, X86_R9, X86_R10, X86_R11, X86_R12, X86_R13, X86_R14, X86_R15,
};

/* Condition codes, the low nibble of Jcc. */
enum x86_cc {
	X86_CC_Z = 0x4,
	X86_CC_NZ = 0x5,
};

/*
 * Bytes go straight into the (writable) memory they will run from, so an instruction's
 * address is known while it is emitted and relative branches need no relocation.
 */
struct x86_buf {
	uint8_t *code;
	size_t cap;
	size_t len;
	bool overflow;	/* an instruction did not fit; nothing more is written */
};

void x86__init(struct x86_buf *b, void *code, size_t cap);
/* Address of the next byte to be emitted. */
uintptr_t x86__here(const struct x86_buf *b);

void x86__push(struct x86_buf *b, enum x86_reg r);
void x86__pop(struct x86_buf *b, enum x86_reg r);
void x86__mov_rr(struct x86_buf *b, enum x86_reg dst, enum x86_reg src);
void x86__mov_imm64(struct x86_buf *b, enum x86_reg dst, uint64_t imm);	/* movabs */
void x86__mov_imm32(struct x86_buf *b, enum x86_reg dst, uint32_t imm);	/* zero-extends */
void x86__load(struct x86_buf *b, enum x86_reg dst, enum x86_reg base, int32_t disp);
void x86__store(struct x86_buf *b, enum x86_reg base, int32_t disp, enum x86_reg src);
void x86__inc_mem(struct x86_buf *b, enum x86_reg base, int32_t disp);	/* qword */
void x86__add_rr(struct x86_buf *b, enum x86_reg dst, enum x86_reg src);
void x86__sub_imm8(struct x86_buf *b, enum x86_reg dst, int8_t imm);
void x86__xor_rr32(struct x86_buf *b, enum x86_reg dst, enum x86_reg src);
void x86__dec(struct x86_buf *b, enum x86_reg r);
void x86__test_rr(struct x86_buf *b, enum x86_reg a, enum x86_reg c);

/* Forward Jcc rel32; returns where its displacement is, for x86__patch_here. */
size_t x86__jcc_fwd(struct x86_buf *b, enum x86_cc cc);
/* Point the forward branch whose displacement is at `at` to the next byte. */
void x86__patch_here(struct x86_buf *b, size_t at);
/* Jcc back to offset `target` of this buffer (rel8 when it reaches). */
void x86__jcc_back(struct x86_buf *b, enum x86_cc cc, size_t target);

/* call rel32; false (and nothing emitted) when target is out of reach. */
bool x86__call_rel(struct x86_buf *b, uintptr_t target);
/* mov rax, target; call rax. */
void x86__call_abs(struct x86_buf *b, uintptr_t target);
void x86__ret(struct x86_buf *b);

/* n bytes of executable padding, in the recommended multi-byte NOPs. */
void x86__nops(struct x86_buf *b, size_t n);
/* NOPs until (next address + ahead) is a multiple of align (a power of two). */
void x86__align_nops(struct x86_buf *b, size_t align, size_t ahead);
/* n bytes of int3, for padding that must never run. */
void x86__int3(struct x86_buf *b, size_t n);
/* int3 until the next address is a multiple of align (a power of two). */
void x86__align_int3(struct x86_buf *b, size_t align);

#endif
