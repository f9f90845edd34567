/* SPDX-License-Identifier: GPL-2.0 */
/* One user stack walk over a copy of the stack: DWARF CFI where the code has it, else rbp. */
#ifndef JT_UNWIND_H
#define JT_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/cfi.h"

struct jt_unwind_regs {
	uint64_t ip, sp, bp;
};

/*
 * How the frame of the code at an address is stepped over: by the rule its runtime gives for
 * it (a JIT code body's frame size, as HotSpot's nmethods have: CFA = sp + size), else by its
 * file's CFI table, else (neither) by frame pointers.
 */
struct jt_unwind_code {
	bool has_rule;
	struct jt_cfi_rule rule;	/* when has_rule */
	const struct jt_cfi *cfi;	/* its file's table, NULL: none */
	uint64_t off;			/* the address's offset in that file */
	/*
	 * Its frame is stepped by frame pointers, but the caller's sp is the word at bp +
	 * sender_sp_off, not the CFA: HotSpot's interpreter keeps its sender's sp there, which a
	 * compiled caller's frame size counts from (the adapter between them extended it).
	 */
	bool sender_sp;
	int32_t sender_sp_off;
};

/*
 * Where code at ip is, into *code (zeroed by the caller): leaf says ip is where the thread
 * was stopped (else it is a return address less one: the call). Returns false when nothing
 * is mapped at ip (the walk ends there).
 */
typedef bool (*jt_unwind_find_fn)(void *ctx, uint64_t ip, bool leaf,
				  struct jt_unwind_code *code);

enum jt_unwind_end {
	JT_UNWIND_OUTERMOST,	/* a return address of 0 or undefined, or bp 0 where frame
				 * pointers were followed: the stack's end */
	JT_UNWIND_SLICE,	/* the next read fell outside the copy: *regs is the frame it stopped at */
	JT_UNWIND_LOST,		/* nothing mapped at ip, a rule not followed, a loop or a bad address */
	JT_UNWIND_MAX_FRAMES,
};

/*
 * Walk from regs through stack: len bytes copied from user address base (base == regs->sp
 * in practice). ips[0] = regs->ip; each next is a return address. For each frame: the rule
 * find gives, else the CFI rule at ip's offset (ips[0]: ip itself; callers: ip - 1, the
 * call), else frame pointers
 * (CFA = bp + 16, return address at bp + 8, caller's bp at bp); no rule at ip in a file
 * with CFI (hand-written code) is followed by frame pointers too. A return address is taken
 * only where find maps it. Returns the number of ips (at most max) and sets *end; *regs
 * becomes the state of the last frame, ips[n - 1] (its bp stale if a rule said it was lost).
 * bps, if not NULL, gets each frame's bp alike (an interpreted frame's holds its method).
 */
unsigned int jt_unwind(struct jt_unwind_regs *regs, const void *stack, uint64_t base, size_t len,
		       jt_unwind_find_fn find, void *ctx, uint64_t *ips, uint64_t *bps,
		       unsigned int max, enum jt_unwind_end *end);

/*
 * Join an unwind that ended early to the kernel's frame-pointer walk of the same stack:
 * ips[0..nr) as jt_unwind returned them with end, fp[0..nr_fp) the kernel's walk (fp[0] is
 * the leaf ip). Into out (max entries; it may be ips itself): the unwound ips, then, if the
 * unwind ended at JT_UNWIND_SLICE, what follows in fp the place of the last unwound ip: its
 * k-th occurrence after fp[0], k its occurrences in ips after ips[0] (so that a recursion is
 * not repeated); nothing if fp has fewer. When the unwind gave no more than the leaf (LOST
 * or SLICE at its very first step), out is fp unchanged. Returns the count (<= max).
 */
unsigned int jt_unwind__splice(const uint64_t *ips, unsigned int nr, enum jt_unwind_end end,
			       const uint64_t *fp, unsigned int nr_fp, uint64_t *out,
			       unsigned int max);

#endif
