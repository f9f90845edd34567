// SPDX-License-Identifier: GPL-2.0
/*
 * Mono's amd64 JIT code read by its prologue and epilogue shapes. Mono omits the frame
 * pointer of most methods (amd64 omit_fp): their frame is sub rsp,N then stores of the
 * callee-saved registers the method uses (and of arguments it spills), the callee-saved ones
 * restored just before the one add rsp,N; ret.
 * Mono exports no unwind info of its code, so the rule of a body is read from the body: only
 * the exact shapes Mono 6.8 emits (captured in tests/unit/test_monocode.c) give one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/monocode.h"

#define SAVES_MAX 16	/* more stores than x86-64 has registers: not a prologue */
#define FRAME_MAX (1U << 20)	/* a larger frame is no method's: no rule */
#define REG_SP 4
#define REG_BP 5

/* One mov reg64 to [rsp + disp]. */
struct save {
	uint8_t reg;
	int32_t disp;
	uint8_t len;
};

/*
 * The mov at b (n bytes) between a register and [rsp + disp] whose opcode is op (0x89: a
 * store, 0x8b: a load), into *s: its length, or 0 if b is not one. Mono encodes it as REX.W
 * (REX.R for r8-r15), op, a SIB byte of base rsp, a displacement of 0, 8 or 32 bits.
 */
static size_t rsp_mov(const uint8_t *b, size_t n, uint8_t op, struct save *s)
{
	uint8_t mod;

	if (n < 4 || (b[0] != 0x48 && b[0] != 0x4c) || b[1] != op || (b[2] & 7) != 4 ||
	    b[3] != 0x24)
		return 0;
	mod = b[2] >> 6;
	s->reg = (b[0] & 4 ? 8 : 0) | (b[2] >> 3 & 7);
	if (mod == 0) {
		s->disp = 0;
		s->len = 4;
	} else if (mod == 1 && n >= 5) {
		s->disp = (int8_t)b[4];
		s->len = 5;
	} else if (mod == 2 && n >= 8) {
		memcpy(&s->disp, b + 4, 4);
		s->len = 8;
	} else {
		return 0;
	}
	return s->len;
}

/* The encoding of a load of s's register from its slot, as Mono emits it, into out. */
static size_t restore_bytes(const struct save *s, uint8_t *out)
{
	uint8_t mod = s->len == 4 ? 0 : s->len == 5 ? 1 : 2;

	out[0] = s->reg & 8 ? 0x4c : 0x48;
	out[1] = 0x8b;
	out[2] = mod << 6 | (s->reg & 7) << 3 | 4;
	out[3] = 0x24;
	if (mod == 1)
		out[4] = (uint8_t)s->disp;
	else if (mod == 2)
		memcpy(out + 4, &s->disp, 4);
	return s->len;
}

/*
 * The length of a load of a return register from [rsp + disp] at b, else 0: Mono's epilogue
 * loads a value type returned in registers (rax, rdx; xmm0, xmm1 by movss or movsd), 1 to 8
 * bytes a register, between its restores and its add.
 */
static size_t ret_load(const uint8_t *b, size_t n)
{
	size_t i = 0, len;
	bool sse = false;
	uint8_t reg, mod;

	if (n >= 3 && (b[0] == 0xf2 || b[0] == 0xf3) && b[1] == 0x0f && b[2] == 0x10) {
		i = 3;
		sse = true;
	} else {
		if (n > i && b[i] == 0x66)
			i++;
		if (n > i && b[i] == 0x48)
			i++;
		if (n <= i || (b[i] != 0x8b && b[i] != 0x8a))
			return 0;
		i++;
	}
	if (n < i + 2 || (b[i] & 7) != 4 || b[i + 1] != 0x24)
		return 0;
	reg = b[i] >> 3 & 7;
	mod = b[i] >> 6;
	if (mod == 3 || (sse ? reg > 1 : reg != 0 && reg != 2))
		return 0;
	len = i + 2 + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
	return len <= n ? len : 0;
}

/* The length of add rsp,frame at b (the 8- or 32-bit immediate form), else 0. */
static size_t add_rsp(const uint8_t *b, size_t n, uint32_t frame)
{
	uint32_t imm;

	if (n >= 4 && b[0] == 0x48 && b[1] == 0x83 && b[2] == 0xc4)
		return (uint32_t)(int8_t)b[3] == frame ? 4 : 0;
	if (n >= 7 && b[0] == 0x48 && b[1] == 0x81 && b[2] == 0xc4) {
		memcpy(&imm, b + 3, 4);
		return imm == frame ? 7 : 0;
	}
	return 0;
}

/* Whether reg is one a callee keeps for its caller (rbx, rbp, r12-r15): else an argument. */
static bool callee_saved(uint8_t reg)
{
	return reg == 3 || reg == REG_BP || reg >= 12;
}

/*
 * Whether the bytes that end at b + end, after b + from, are the restores of the saves of
 * callee-saved registers (not of arguments spilled, not rsp; not rbp where skip_bp: a wrapper
 * keeps it for the runtime's stack walks, never changes it), in the saves' order.
 */
static bool restores_before(const uint8_t *b, size_t from, size_t end, const struct save *saves,
			    unsigned int nr, bool skip_bp)
{
	uint8_t want[SAVES_MAX * 8];
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (callee_saved(saves[i].reg) && !(skip_bp && saves[i].reg == REG_BP))
			len += restore_bytes(&saves[i], want + len);
	return len <= end - from && !memcmp(b + end - len, want, len);
}

/*
 * Whether the bytes that end at b + end (after b + from) are the restores of saves, then at
 * most `loads` loads of return registers (each tried at the lengths it can have, decoded
 * forward from where it would start). bp_saved: rbp may also be left unrestored.
 */
static bool epilogue_before(const uint8_t *b, size_t from, size_t end, const struct save *saves,
			    unsigned int nr, bool bp_saved, unsigned int loads)
{
	size_t len;

	if (restores_before(b, from, end, saves, nr, false) ||
	    (bp_saved && restores_before(b, from, end, saves, nr, true)))
		return true;
	for (len = 3; loads && len <= 10 && len <= end - from; len++)
		if (ret_load(b + end - len, len) == len &&
		    epilogue_before(b, from, end - len, saves, nr, bp_saved, loads - 1))
			return true;
	return false;
}

/* push rbp; mov rbp,rsp ... leave; ret, the epilogue found exactly once. */
static int parse_framed(const uint8_t *b, size_t n, struct jt_mono_code *mc)
{
	size_t i, at = 0;
	unsigned int nr = 0;

	for (i = 4; i + 1 < n; i++)
		if (b[i] == 0xc9 && b[i + 1] == 0xc3) {
			nr++;
			at = i + 1;
		}
	if (nr != 1)
		return -ENOENT;	/* none (a tail call), or one in other bytes: not sure which */
	mc->kind = JT_MONO_FRAMED;
	mc->ret_off = at;
	return 0;
}

/* sub rsp,N; saves ... restores; add rsp,N; ret. */
static int parse_frameless(const uint8_t *b, size_t n, struct jt_mono_code *mc)
{
	struct save saves[SAVES_MAX], s;
	size_t i, at = 0, len, sub_len, body;
	unsigned int nr = 0, adds = 0;
	uint32_t frame;

	if (n >= 4 && b[0] == 0x48 && b[1] == 0x83 && b[2] == 0xec && b[3] < 0x80) {
		frame = b[3];
		sub_len = 4;
	} else if (n >= 7 && b[0] == 0x48 && b[1] == 0x81 && b[2] == 0xec) {
		memcpy(&frame, b + 3, 4);
		sub_len = 7;
	} else {
		return -ENOENT;
	}
	/* the return address leaves sp 8 off a 16-byte boundary: N puts it back on one */
	if (frame % 16 != 8 || frame > FRAME_MAX)
		return -ENOENT;
	mc->bp_slot = -1;
	for (i = sub_len; (len = rsp_mov(b + i, n - i, 0x89, &s)); i += len) {
		if (nr == SAVES_MAX || s.disp < 0 || (uint32_t)s.disp > frame - 8)
			return -ENOENT;
		/* a wrapper with an LMF stores rbp twice: both the caller's, the first kept */
		if (s.reg == REG_BP && mc->bp_slot < 0) {
			mc->bp_slot = s.disp;
			mc->bp_stored = i + len;
		}
		saves[nr++] = s;
	}
	/* the one add rsp,N: the epilogue (a second: a tail call's) */
	for (body = i; i < n; i++) {
		len = add_rsp(b + i, n - i, frame);
		if (len) {
			adds++;
			at = i;
		}
	}
	if (adds != 1)
		return -ENOENT;
	len = add_rsp(b + at, n - at, frame);
	if (at + len >= n || b[at + len] != 0xc3)
		return -ENOENT;
	if (!epilogue_before(b, body, at, saves, nr, mc->bp_slot >= 0, 2))
		return -ENOENT;
	mc->kind = JT_MONO_FRAMELESS;
	mc->sub_len = sub_len;
	mc->frame = frame;
	mc->ret_off = at + len;
	return 0;
}

int jt_monocode__parse(const uint8_t *b, size_t n, struct jt_mono_code *mc)
{
	static const uint8_t push_mov[][4] = { { 0x55, 0x48, 0x8b, 0xec },
					       { 0x55, 0x48, 0x89, 0xe5 } };
	int err;

	*mc = (struct jt_mono_code){ .kind = JT_MONO_UNKNOWN, .bp_slot = -1 };
	if (n > JT_MONO_CODE_MAX)
		return -EFBIG;
	if (n >= 4 && (!memcmp(b, push_mov[0], 4) || !memcmp(b, push_mov[1], 4)))
		err = parse_framed(b, n, mc);
	else
		err = parse_frameless(b, n, mc);
	if (err) {
		*mc = (struct jt_mono_code){ .kind = JT_MONO_UNKNOWN, .bp_slot = -1 };
		return err;
	}
	mc->size = n;
	return 0;
}

int jt_monocode__read(const char *proc_root, uint32_t pid, uint64_t start, uint64_t size,
		      struct jt_mono_code *mc)
{
	char path[64];
	uint8_t *b;
	ssize_t got;
	int fd, err;

	*mc = (struct jt_mono_code){ .kind = JT_MONO_UNKNOWN, .bp_slot = -1 };
	if (size > JT_MONO_CODE_MAX)
		return -EFBIG;
	if (!size || start > INT64_MAX - size)
		return -EFAULT;
	snprintf(path, sizeof(path), "%s/%u/mem", proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	b = malloc(size);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	got = pread(fd, b, size, start);
	if (got < 0)
		err = errno == EIO ? -EFAULT : -errno;
	else
		err = (uint64_t)got == size ? jt_monocode__parse(b, size, mc) : -EFAULT;
	free(b);
	close(fd);
	return err;
}

/* A frame whose CFA is sp + cfa_off, the return address just below it, rbp untouched. */
static void sp_rule(struct jt_unwind_code *u, int32_t cfa_off)
{
	u->has_rule = true;
	u->rule = (struct jt_cfi_rule){ .cfa_reg = JT_CFI_SP, .cfa_off = cfa_off, .ra_off = -8 };
}

int jt_monocode__unwind_code(const struct jt_mono_code *mc, uint64_t off, bool leaf,
			     struct jt_unwind_code *u)
{
	if ((mc->kind != JT_MONO_FRAMELESS && mc->kind != JT_MONO_FRAMED) || off >= mc->size)
		return -ENOENT;
	/*
	 * A thread stopped at the first instruction or at the ret has only its return address
	 * on the stack. (A caller's off is a call's last byte: in the body.)
	 */
	if (leaf && (off == 0 || off == mc->ret_off)) {
		sp_rule(u, 8);
		return 0;
	}
	if (mc->kind == JT_MONO_FRAMED) {
		if (leaf && off == 1) {	/* rbp pushed, not yet the frame pointer */
			sp_rule(u, 16);
			u->rule.bp_saved = true;
			u->rule.bp_off = -16;
		}
		return 0;	/* else its frame pointer */
	}
	if (off < mc->sub_len)	/* not a leaf, yet before the frame: not a call's byte */
		return -ENOENT;
	sp_rule(u, mc->frame + 8);
	/* rbp, if the body uses it, is in its slot once stored; until then still the caller's */
	if (mc->bp_slot >= 0 && off >= mc->bp_stored) {
		u->rule.bp_saved = true;
		u->rule.bp_off = mc->bp_slot - (int32_t)(mc->frame + 8);
	}
	return 0;
}
