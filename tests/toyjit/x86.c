// SPDX-License-Identifier: MIT
/* x86-64 encoder for the toy JIT: the few instructions it emits, written at their final address. */
#include <string.h>

#include "x86.h"

#define REX_W 0x08

void x86__init(struct x86_buf *b, void *code, size_t cap)
{
	b->code = code;
	b->cap = cap;
	b->len = 0;
	b->overflow = false;
}

uintptr_t x86__here(const struct x86_buf *b)
{
	return (uintptr_t)(b->code + b->len);
}

static void put(struct x86_buf *b, const void *bytes, size_t n)
{
	if (b->overflow || n > b->cap - b->len) {
		b->overflow = true;
		return;
	}
	memcpy(b->code + b->len, bytes, n);
	b->len += n;
}

static void put1(struct x86_buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put4(struct x86_buf *b, uint32_t v)
{
	uint8_t le[4] = { v, v >> 8, v >> 16, v >> 24 };

	put(b, le, sizeof(le));
}

static void put8(struct x86_buf *b, uint64_t v)
{
	put4(b, (uint32_t)v);
	put4(b, (uint32_t)(v >> 32));
}

/* REX prefix carrying the high bits of the ModRM reg and rm/base fields. */
static uint8_t rex(int w, int reg, int rm)
{
	return 0x40 | w | (reg & 8) >> 1 | (rm & 8) >> 3;
}

/* Register-direct ModRM. */
static uint8_t modrm_rr(int reg, int rm)
{
	return 0xc0 | (reg & 7) << 3 | (rm & 7);
}

/* ModRM (+SIB, +displacement) for [base + disp], with `reg` in the reg field. */
static void mem_operand(struct x86_buf *b, int reg, enum x86_reg base, int32_t disp)
{
	int mod;

	if (disp == 0 && (base & 7) != X86_RBP)	/* rbp/r13 with mod 0 mean rip-relative */
		mod = 0;
	else if (disp >= -128 && disp <= 127)
		mod = 1;
	else
		mod = 2;
	put1(b, mod << 6 | (reg & 7) << 3 | (base & 7));
	if ((base & 7) == X86_RSP)	/* rsp/r12 as base need a SIB byte: no index */
		put1(b, 0x24);
	if (mod == 1)
		put1(b, (uint8_t)disp);
	else if (mod == 2)
		put4(b, (uint32_t)disp);
}

void x86__push(struct x86_buf *b, enum x86_reg r)
{
	if (r & 8)
		put1(b, rex(0, 0, r));
	put1(b, 0x50 | (r & 7));
}

void x86__pop(struct x86_buf *b, enum x86_reg r)
{
	if (r & 8)
		put1(b, rex(0, 0, r));
	put1(b, 0x58 | (r & 7));
}

void x86__mov_rr(struct x86_buf *b, enum x86_reg dst, enum x86_reg src)
{
	put1(b, rex(REX_W, src, dst));
	put1(b, 0x89);	/* mov r/m64, r64 */
	put1(b, modrm_rr(src, dst));
}

void x86__mov_imm64(struct x86_buf *b, enum x86_reg dst, uint64_t imm)
{
	put1(b, rex(REX_W, 0, dst));
	put1(b, 0xb8 | (dst & 7));
	put8(b, imm);
}

void x86__mov_imm32(struct x86_buf *b, enum x86_reg dst, uint32_t imm)
{
	if (dst & 8)
		put1(b, rex(0, 0, dst));
	put1(b, 0xb8 | (dst & 7));
	put4(b, imm);
}

void x86__load(struct x86_buf *b, enum x86_reg dst, enum x86_reg base, int32_t disp)
{
	put1(b, rex(REX_W, dst, base));
	put1(b, 0x8b);	/* mov r64, r/m64 */
	mem_operand(b, dst, base, disp);
}

void x86__store(struct x86_buf *b, enum x86_reg base, int32_t disp, enum x86_reg src)
{
	put1(b, rex(REX_W, src, base));
	put1(b, 0x89);	/* mov r/m64, r64 */
	mem_operand(b, src, base, disp);
}

void x86__inc_mem(struct x86_buf *b, enum x86_reg base, int32_t disp)
{
	put1(b, rex(REX_W, 0, base));
	put1(b, 0xff);	/* /0: inc r/m64 */
	mem_operand(b, 0, base, disp);
}

void x86__add_rr(struct x86_buf *b, enum x86_reg dst, enum x86_reg src)
{
	put1(b, rex(REX_W, src, dst));
	put1(b, 0x01);	/* add r/m64, r64 */
	put1(b, modrm_rr(src, dst));
}

void x86__sub_imm8(struct x86_buf *b, enum x86_reg dst, int8_t imm)
{
	put1(b, rex(REX_W, 0, dst));
	put1(b, 0x83);	/* /5: sub r/m64, imm8 */
	put1(b, modrm_rr(5, dst));
	put1(b, (uint8_t)imm);
}

void x86__xor_rr32(struct x86_buf *b, enum x86_reg dst, enum x86_reg src)
{
	if ((dst | src) & 8)
		put1(b, rex(0, src, dst));
	put1(b, 0x31);	/* xor r/m32, r32 */
	put1(b, modrm_rr(src, dst));
}

void x86__dec(struct x86_buf *b, enum x86_reg r)
{
	put1(b, rex(REX_W, 0, r));
	put1(b, 0xff);	/* /1: dec r/m64 */
	put1(b, modrm_rr(1, r));
}

void x86__test_rr(struct x86_buf *b, enum x86_reg a, enum x86_reg c)
{
	put1(b, rex(REX_W, c, a));
	put1(b, 0x85);
	put1(b, modrm_rr(c, a));
}

size_t x86__jcc_fwd(struct x86_buf *b, enum x86_cc cc)
{
	size_t at;

	put1(b, 0x0f);
	put1(b, 0x80 | cc);
	at = b->len;
	put4(b, 0);
	return at;
}

void x86__patch_here(struct x86_buf *b, size_t at)
{
	int32_t rel;

	if (b->overflow)
		return;
	rel = (int32_t)(b->len - (at + 4));
	memcpy(b->code + at, &rel, sizeof(rel));
}

void x86__jcc_back(struct x86_buf *b, enum x86_cc cc, size_t target)
{
	/* Displacements count from the end of the instruction: 2 bytes short, 6 near. */
	int64_t rel8 = (int64_t)target - (int64_t)(b->len + 2);

	if (rel8 >= -128 && rel8 <= 127) {
		put1(b, 0x70 | cc);
		put1(b, (uint8_t)rel8);
		return;
	}
	put1(b, 0x0f);
	put1(b, 0x80 | cc);
	put4(b, (uint32_t)((int64_t)target - (int64_t)(b->len + 4)));
}

bool x86__call_rel(struct x86_buf *b, uintptr_t target)
{
	int64_t rel = (int64_t)(target - (x86__here(b) + 5));

	if (rel < INT32_MIN || rel > INT32_MAX)
		return false;
	put1(b, 0xe8);
	put4(b, (uint32_t)rel);
	return true;
}

void x86__call_abs(struct x86_buf *b, uintptr_t target)
{
	x86__mov_imm64(b, X86_RAX, target);
	put1(b, 0xff);	/* /2: call r/m64 */
	put1(b, modrm_rr(2, X86_RAX));
}

void x86__ret(struct x86_buf *b)
{
	put1(b, 0xc3);
}

/* The recommended NOP of each length from 1 to 9 bytes (0f 1f /0 with a memory operand). */
static const uint8_t nop_seq[9][9] = {
	{ 0x90 },
	{ 0x66, 0x90 },
	{ 0x0f, 0x1f, 0x00 },
	{ 0x0f, 0x1f, 0x40, 0x00 },
	{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	{ 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

void x86__nops(struct x86_buf *b, size_t n)
{
	while (n) {
		size_t k = n < 9 ? n : 9;

		put(b, nop_seq[k - 1], k);
		n -= k;
	}
}

void x86__align_nops(struct x86_buf *b, size_t align, size_t ahead)
{
	x86__nops(b, (align - (x86__here(b) + ahead) % align) % align);
}

void x86__int3(struct x86_buf *b, size_t n)
{
	while (n--)
		put1(b, 0xcc);
}

void x86__align_int3(struct x86_buf *b, size_t align)
{
	x86__int3(b, (align - x86__here(b) % align) % align);
}
