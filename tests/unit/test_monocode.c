// SPDX-License-Identifier: GPL-2.0
/*
 * Mono's JIT code read by its shapes (user/host/monocode.h), on bodies captured from a running
 * Mono 6.8.0.105 (tests/fixtures/mono/, read from /proc/PID/mem at the ranges of its
 * --jitmap): Hot.exe's Big, Split and Main without frame pointers (Mono's default) and Big
 * with them (MONO_DEBUG=disable_omit_fp), a method with a finally clause (framed: Mono keeps
 * the frame pointer of methods with clauses), the runtime-invoke wrapper (framed), an alloc
 * wrapper that keeps rbp in its frame and uses it, an icall wrapper that stores rbp for the
 * runtime's stack walks, a method that spills its argument, and two of mcs's own. Rules at
 * each place a thread can stop, a walk through three frameless frames into a framed one,
 * altered bodies that must give no rule, and the read from a live process's memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/monocode.h"

#define FIXTURES "tests/fixtures/mono/"

struct body {
	uint8_t *b;
	size_t n;
};

static struct body body_load(const char *name)
{
	char path[256];
	struct body s = { malloc(JT_MONO_CODE_MAX), 0 };
	FILE *f;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_non_null(s.b);
	s.n = fread(s.b, 1, JT_MONO_CODE_MAX, f);
	fclose(f);
	assert_true(s.n > 16);
	return s;
}

static struct jt_mono_code parsed(const char *name)
{
	struct body s = body_load(name);
	struct jt_mono_code mc;

	assert_int_equal(jt_monocode__parse(s.b, s.n, &mc), 0);
	assert_int_equal(mc.size, s.n);
	free(s.b);
	return mc;
}

/* name parsed, of shape kind with that frame, rbp slot and ret (frame and slot: frameless). */
static struct jt_mono_code shaped(const char *name, uint8_t kind, uint32_t frame, int32_t bp_slot,
				  uint32_t ret_off)
{
	struct jt_mono_code mc = parsed(name);

	assert_int_equal(mc.kind, kind);
	assert_int_equal(mc.ret_off, ret_off);
	if (kind == JT_MONO_FRAMELESS) {
		assert_int_equal(mc.frame, frame);
		assert_int_equal(mc.bp_slot, bp_slot);
	}
	return mc;
}

static struct jt_unwind_code rule_at(const struct jt_mono_code *mc, uint64_t off, bool leaf)
{
	struct jt_unwind_code u = { 0 };

	assert_int_equal(jt_monocode__unwind_code(mc, off, leaf, &u), 0);
	return u;
}

/* An sp rule of CFA sp + cfa_off, the return address below it, and where rbp is. */
static void assert_sp_rule(const struct jt_unwind_code *u, int32_t cfa_off, bool bp_saved,
			   int32_t bp_off)
{
	assert_true(u->has_rule);
	assert_int_equal(u->rule.cfa_reg, JT_CFI_SP);
	assert_int_equal(u->rule.cfa_off, cfa_off);
	assert_int_equal(u->rule.ra_off, -8);
	assert_int_equal(u->rule.bp_saved, bp_saved);
	assert_false(u->rule.bp_lost);
	assert_false(u->rule.outermost);
	if (bp_saved)
		assert_int_equal(u->rule.bp_off, bp_off);
}

/* The rule of mc at off is an sp rule of CFA sp + cfa_off (assert_sp_rule). */
static void assert_rule_at(const struct jt_mono_code *mc, uint64_t off, bool leaf, int32_t cfa_off,
			   bool bp_saved, int32_t bp_off)
{
	struct jt_unwind_code u = rule_at(mc, off, leaf);

	assert_sp_rule(&u, cfa_off, bp_saved, bp_off);
}

/*
 * Big without a frame pointer: sub $0x18,%rsp; r13-r15 stored at 0, 8, 0x10; restored before
 * add $0x18,%rsp at 0x92, ret at 0x96. rbp is never written: the caller's all along.
 */
static void a_frameless_body_by_where_the_thread_is(void **state)
{
	struct jt_mono_code mc =
		shaped("big-frameless.bin", JT_MONO_FRAMELESS, 0x18, -1, 0x96);
	struct jt_unwind_code u;

	(void)state;
	assert_int_equal(mc.sub_len, 4);
	/* before the sub: the return address at sp */
	assert_rule_at(&mc, 0, true, 8, false, 0);
	assert_rule_at(&mc, 4, true, 0x20, false, 0);	/* the frame is built: the first store */
	assert_rule_at(&mc, 0x6c, true, 0x20, false, 0);	/* the loop */
	/* the last byte of the call at 0x27 */
	assert_rule_at(&mc, 0x2b, false, 0x20, false, 0);
	assert_rule_at(&mc, 0x92, true, 0x20, false, 0);	/* at the add: not done yet */
	assert_rule_at(&mc, 0x96, true, 8, false, 0);	/* at the ret */
	assert_int_equal(jt_monocode__unwind_code(&mc, mc.size, true, &u), -ENOENT);
}

/* Split and Main: larger frames, epilogues before out-of-line throw code (Main). */
static void split_and_main_parse_with_their_one_epilogue(void **state)
{
	struct jt_mono_code main =
		shaped("main-frameless.bin", JT_MONO_FRAMELESS, 0x28, -1, 0x267);

	(void)state;
	shaped("split-frameless.bin", JT_MONO_FRAMELESS, 0x28, -1, 0x125);
	/* code past the ret: its frame is still up */
	assert_rule_at(&main, 0x273, true, 0x30, false, 0);
}

/*
 * The alloc wrapper keeps rbp at 8(%rsp) (the store at 0x8, 5 bytes) and uses it as a plain
 * register: before the store rbp is the caller's, after it only the slot is.
 */
static void rbp_is_in_its_slot_once_stored(void **state)
{
	struct jt_mono_code mc =
		shaped("allocsmall-saves-rbp.bin", JT_MONO_FRAMELESS, 0x38, 8, 0xcb);

	(void)state;
	assert_int_equal(mc.bp_stored, 0xd);
	assert_rule_at(&mc, 0x8, true, 0x40, false, 0);
	assert_rule_at(&mc, 0xd, true, 0x40, true, 8 - 0x40);
	/* restored, sp not yet moved: the slot still holds it */
	assert_rule_at(&mc, 0xc7, true, 0x40, true, 8 - 0x40);
	assert_rule_at(&mc, 0xcb, true, 8, false, 0);
}

/*
 * Two shapes of mcs's own code (Mono's C# compiler): a wrapper that stores rbp twice (in its
 * LMF and as a callee-saved register; both the caller's) and restores both, and a getter of a
 * value type that loads its return value between its restore and its add.
 */
static void an_lmf_wrapper_and_a_value_type_return(void **state)
{
	struct jt_mono_code mc =
		shaped("monoio-open-rbp-twice.bin", JT_MONO_FRAMELESS, 0x68, 0x38, 0xeb);

	(void)state;
	assert_int_equal(mc.bp_stored, 0xe);
	assert_rule_at(&mc, 0x80, true, 0x70, true, 0x38 - 0x70);
	mc = shaped("nullable-get-value-loads-ret.bin", JT_MONO_FRAMELESS, 0x18, -1, 0x43);
	/* the return value's load: the frame still up */
	assert_rule_at(&mc, 0x3b, true, 0x20, false, 0);
}

/*
 * bench/workloads/Deep.cs's Level1 spills its argument (mov %rdi,(%rsp)) after its sub and
 * saves no callee-saved register: a store that is not restored, still the shape.
 */
static void an_argument_spilled_in_the_prologue_needs_no_restore(void **state)
{
	struct jt_mono_code mc =
		shaped("level1-spills-arg.bin", JT_MONO_FRAMELESS, 8, -1, 0x34);

	(void)state;
	assert_rule_at(&mc, 0x2b, false, 0x10, false, 0);	/* the call of Level2 */
}

/* The icall wrapper stores rsp and rbp for Mono's LMF and restores neither: still a shape. */
static void an_icall_wrapper_stores_rbp_it_never_restores(void **state)
{
	struct jt_mono_code mc =
		shaped("icall-wrapper-lmf.bin", JT_MONO_FRAMELESS, 0x48, 0x30, 0xb1);

	(void)state;
	assert_int_equal(mc.bp_stored, 0xe);
}

/* Framed bodies: frame pointers in the body, sp rules where rbp is not yet or no more it. */
static void a_framed_body_is_walked_by_its_frame_pointer(void **state)
{
	static const struct {
		const char *name;
		uint32_t ret;
	} bodies[] = { { "big-framed.bin", 0x99 }, { "runtime-invoke-framed.bin", 0x173 },
		       { "fin-framed-finally.bin", 0xf3 } };
	struct jt_unwind_code u;
	struct jt_mono_code mc;
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		mc = shaped(bodies[i].name, JT_MONO_FRAMED, 0, 0, bodies[i].ret);

			assert_rule_at(&mc, 0, true, 8, false, 0);
			assert_rule_at(&mc, 1, true, 16, true, -16);
		u = rule_at(&mc, 4, true);
		assert_false(u.has_rule);
		u = rule_at(&mc, 0x20, false);
		assert_false(u.has_rule);
		u = rule_at(&mc, mc.ret_off - 1, true);	/* leave: rbp is still the frame's */
		assert_false(u.has_rule);
			assert_rule_at(&mc, mc.ret_off, true, 8, false, 0);
	}
	/* the ret that ends Fin's finally clause returns within Fin: its frame pointer still */
	mc = parsed("fin-framed-finally.bin");
	u = rule_at(&mc, 0xe5, true);
	assert_false(u.has_rule);
}

/* Bytes of the altered copy of name that must give no rule. */
static void assert_unknown(const uint8_t *b, size_t n)
{
	struct jt_mono_code mc;
	struct jt_unwind_code u = { 0 };

	assert_int_equal(jt_monocode__parse(b, n, &mc), -ENOENT);
	assert_int_equal(mc.kind, JT_MONO_UNKNOWN);
	assert_int_equal(jt_monocode__unwind_code(&mc, 8, false, &u), -ENOENT);
	assert_false(u.has_rule);
}

/*
 * Anything but the exact shapes gives no rule: a tail call's second add, an epilogue without
 * its ret, a restore the prologue did not save for, a frame that misaligns the stack, a body
 * cut before its epilogue, two framed epilogues, code of no known prologue.
 */
static void altered_bodies_give_no_rule(void **state)
{
	struct body big = body_load("big-frameless.bin"), fr = body_load("big-framed.bin");
	struct body ab = body_load("allocsmall-saves-rbp.bin");
	struct body nv = body_load("nullable-get-value-loads-ret.bin");
	uint8_t *b = malloc(JT_MONO_CODE_MAX);
	struct jt_mono_code mc;

	(void)state;
	assert_non_null(b);
	memcpy(b, big.b, big.n);	/* a second add $0x18,%rsp; ret in the body (the loop) */
	memcpy(b + 0x70, "\x48\x83\xc4\x18\xc3", 5);
	assert_unknown(b, big.n);
	memcpy(b, big.b, big.n);	/* ret replaced by a jmp: a tail call */
	b[0x96] = 0xe9;
	assert_unknown(b, big.n);
	memcpy(b, big.b, big.n);	/* r13's restore turned into rbp's: saved nowhere */
	memcpy(b + 0x84, "\x48\x8b\x2c\x24", 4);
	assert_unknown(b, big.n);
	memcpy(b, big.b, big.n);	/* sub $0x20,%rsp */
	b[3] = 0x20;
	assert_unknown(b, big.n);
	assert_unknown(big.b, 0x90);	/* cut before the epilogue */
	memcpy(b, big.b, big.n);	/* a store below the frame: mov %r15,0x18(%rsp) */
	b[0x11] = 0x18;
	assert_unknown(b, big.n);
	memcpy(b, ab.b, ab.n);		/* rbp's restore (at 0xae) turned into r13's */
	memcpy(b + 0xae, "\x4c\x8b\x6c\x24\x08", 5);
	assert_unknown(b, ab.n);
	memcpy(b, nv.b, nv.n);		/* a callee-saved load after the restores: ebx */
	b[0x3c] = 0x5c;
	assert_unknown(b, nv.n);
	memcpy(b, fr.b, fr.n);		/* a second leave; ret */
	memcpy(b + 0x40, "\xc9\xc3", 2);
	assert_unknown(b, fr.n);
	assert_unknown(fr.b, fr.n - 1);	/* framed, cut before its ret */
	assert_unknown((const uint8_t *)"\x55\x48\x8b\xec", 4);
	assert_unknown((const uint8_t *)"\x4c\x89\x5c\x24\x08\x48\x83\xc4\x08\xc3", 10);
	assert_unknown(NULL, 0);
	{	/* add $0x108,%rsp as the last bytes: its ret would be past the body */
		static const uint8_t end[] = { 0x48, 0x81, 0xec, 0x08, 0x01, 0x00, 0x00,
					       0x48, 0x81, 0xc4, 0x08, 0x01, 0x00, 0x00 };
		uint8_t *exact = malloc(sizeof(end));

		assert_non_null(exact);
		memcpy(exact, end, sizeof(end));
		assert_unknown(exact, sizeof(end));
		free(exact);
	}
	assert_int_equal(jt_monocode__parse(b, JT_MONO_CODE_MAX + 1, &mc), -EFBIG);
	free(b);
	free(nv.b);
	free(ab.b);
	free(fr.b);
	free(big.b);
}

/* The find callback of a walk over the three bodies below, placed at these addresses. */
struct placed {
	uint64_t start;
	struct jt_mono_code mc;
};

static bool find_placed(void *ctx, uint64_t ip, bool leaf, struct jt_unwind_code *code)
{
	const struct placed *p = ctx;
	size_t i;

	if (ip == p[4].start - 1) {	/* a return to p[4]: the stack's end */
		code->has_rule = true;
		code->rule.outermost = true;
		return true;
	}

	for (i = 0; i < 4; i++)
		if (ip >= p[i].start && ip < p[i].start + p[i].mc.size)
			return !jt_monocode__unwind_code(&p[i].mc, ip - p[i].start, leaf, code);
	return false;
}

/*
 * Big (in its loop) called by Split called by Main, all frameless, called by the framed
 * runtime-invoke wrapper whose rbp none of them wrote: the walk gives each frame in turn, and
 * the wrapper's caller by its frame pointer. Frame pointers alone would give Big, then the
 * wrapper's caller: Split, Main and the wrapper skipped. (The last frame's rule says it is the
 * stack's end.)
 */
static void a_walk_through_frameless_frames_into_a_framed_one(void **state)
{
	const uint64_t base = 0x7ffd0000, top = 0x410000000;
	struct placed p[5] = {
		{ 0x400d6230, parsed("big-frameless.bin") },
		{ 0x400d60c0, parsed("split-frameless.bin") },
		{ 0x400d0fd0, parsed("main-frameless.bin") },
		{ 0x41d8d300, parsed("runtime-invoke-framed.bin") },
		{ top, { 0 } },
	};
	uint64_t stack[64] = { 0 }, ips[8];
	struct jt_unwind_regs regs;
	enum jt_unwind_end end;
	unsigned int n;

	(void)state;
	/* Big's frame: 0x18 bytes of saves, then its return into Split after the call at 0x16f */
	stack[3] = 0x400d6174;
	/* Split's: 0x28 bytes, then into Main after the call at 0x173 */
	stack[4 + 5] = 0x400d1178;
	/* Main's: 0x28 bytes, then into the wrapper */
	stack[10 + 5] = 0x41d8d300 + 0x50;
	/* the wrapper's frame: 0x60 bytes, then its saved rbp (its caller's) and return */
	stack[16 + 12] = base + 8 * 40;
	stack[16 + 13] = top;
	regs = (struct jt_unwind_regs){ 0x400d6288, base, base + 8 * 28 };
	n = jt_unwind(&regs, stack, base, sizeof(stack), find_placed, p, ips, NULL, 8, &end);
	assert_int_equal(n, 5);
	assert_int_equal(ips[1], 0x400d6174);
	assert_int_equal(ips[2], 0x400d1178);
	assert_int_equal(ips[3], 0x41d8d350);
	assert_int_equal(ips[4], top);
	assert_int_equal(end, JT_UNWIND_OUTERMOST);
}

/* The body read from a live process's memory (this one's) parses as the fixture does. */
static void a_body_is_read_from_process_memory(void **state)
{
	struct body big = body_load("big-frameless.bin");
	struct jt_mono_code mc;

	(void)state;
	assert_int_equal(jt_monocode__read("/proc", getpid(), (uintptr_t)big.b, big.n, &mc), 0);
	assert_int_equal(mc.kind, JT_MONO_FRAMELESS);
	assert_int_equal(mc.ret_off, 0x96);
	assert_int_equal(jt_monocode__read("/proc", getpid(), 4096, 64, &mc), -EFAULT);
	assert_int_equal(mc.kind, JT_MONO_UNKNOWN);
	assert_int_equal(jt_monocode__read("/proc", getpid(), (uintptr_t)big.b,
					   JT_MONO_CODE_MAX + 1, &mc), -EFBIG);
	assert_true(jt_monocode__read("tests/fixtures/none", getpid(), (uintptr_t)big.b, big.n,
				      &mc) < 0);
	free(big.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_frameless_body_by_where_the_thread_is),
		cmocka_unit_test(split_and_main_parse_with_their_one_epilogue),
		cmocka_unit_test(rbp_is_in_its_slot_once_stored),
		cmocka_unit_test(an_argument_spilled_in_the_prologue_needs_no_restore),
		cmocka_unit_test(an_icall_wrapper_stores_rbp_it_never_restores),
		cmocka_unit_test(an_lmf_wrapper_and_a_value_type_return),
		cmocka_unit_test(a_framed_body_is_walked_by_its_frame_pointer),
		cmocka_unit_test(altered_bodies_give_no_rule),
		cmocka_unit_test(a_walk_through_frameless_frames_into_a_framed_one),
		cmocka_unit_test(a_body_is_read_from_process_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
