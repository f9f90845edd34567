// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a Mono JIT code body's shape (user/host/monocode.h) from untrusted bytes,
 * as the collector reads them from a traced process's memory: parsed from an exact-size heap
 * copy, then asked for the rule at 256 offsets (as a leaf and as a caller) across it and past
 * its end. What it promises is checked: a known error, or a shape whose offsets lie in the
 * body (its ret a ret byte) and rules whose CFA is above sp and whose rbp slot is in the frame.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/monocode.h"

static void check_rule(const struct jt_unwind_code *u)
{
	if (!u->has_rule)
		return;
	if (u->rule.cfa_reg != JT_CFI_SP || u->rule.cfa_off < 8 || u->rule.ra_off != -8 ||
	    u->rule.bp_lost || u->rule.outermost)
		__builtin_trap();
	if (u->rule.bp_saved && (u->rule.bp_off > -16 || u->rule.cfa_off + u->rule.bp_off < 0))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jt_mono_code mc;
	uint8_t *b = malloc(size ? size : 1);
	size_t off, step;
	int err;

	if (!b)
		return 0;
	memcpy(b, data, size);
	err = jt_monocode__parse(b, size, &mc);
	if (err && (err != -ENOENT && err != -EFBIG))
		__builtin_trap();
	if (err && mc.kind != JT_MONO_UNKNOWN)
		__builtin_trap();
	if (!err) {
		if (mc.size != size || mc.ret_off >= size || b[mc.ret_off] != 0xc3)
			__builtin_trap();
		if (mc.kind == JT_MONO_FRAMELESS &&
		    (mc.frame % 16 != 8 || (mc.sub_len != 4 && mc.sub_len != 7) ||
		     mc.ret_off < mc.sub_len || mc.bp_slot < -1 ||
		     (mc.bp_slot >= 0 && ((uint32_t)mc.bp_slot > mc.frame - 8 ||
					  mc.bp_stored > size))))
			__builtin_trap();
		if (mc.kind != JT_MONO_FRAMELESS && mc.kind != JT_MONO_FRAMED)
			__builtin_trap();
	}
	step = size / 256 + 1;
	for (off = 0; off < size + 16; off += step) {
		struct jt_unwind_code u = { 0 };

		err = jt_monocode__unwind_code(&mc, off, true, &u);
		if (err && err != -ENOENT)
			__builtin_trap();
		if (!err)
			check_rule(&u);
		if (!err && off >= size)
			__builtin_trap();
		u = (struct jt_unwind_code){ 0 };
		err = jt_monocode__unwind_code(&mc, off, false, &u);
		if (err && err != -ENOENT)
			__builtin_trap();
		if (!err)
			check_rule(&u);
	}
	free(b);
	return 0;
}
