/* SPDX-License-Identifier: GPL-2.0 */
/* One ELF file's unwind table (.eh_frame, .debug_frame) by file offset: how to find a caller. */
#ifndef JT_CFI_H
#define JT_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jt_cfi;

/*
 * Read the CFI of the x86-64 ELF file open at fd: its .eh_frame, and its .debug_frame (else
 * that of its separate debug file open at debug_fd, -1: none) for the addresses .eh_frame
 * has no FDE for. Every FDE's instructions are run here, once, into a compact table: fd may
 * be closed after. Addresses are file offsets, as in elfsyms.h. Returns NULL with *err =
 * -errno, -ENOEXEC (not an x86-64 ELF file), -ENOENT (neither section), -EFBIG (a section
 * over 64 MiB: not read), -ENOTSUP (a compressed .debug_frame alone) or -E2BIG (over a file's
 * budget: 16 Mi instructions run, 4 Mi rows or 65,535 distinct rules kept), and reports
 * nothing: a file without CFI is normal. A .debug_frame that cannot be read is left out when
 * .eh_frame is there. One FDE's run takes at most 16,384 instructions; past them its rule is
 * not followed.
 */
struct jt_cfi *jt_cfi__load_debug(int fd, int debug_fd, int *err);
/* jt_cfi__load_debug without a debug file */
struct jt_cfi *jt_cfi__load(int fd, int *err);
void jt_cfi__free(struct jt_cfi *c);

enum { JT_CFI_SP = 7, JT_CFI_BP = 6 };	/* DWARF register numbers on x86-64 */

struct jt_cfi_rule {
	uint8_t cfa_reg;	/* JT_CFI_SP or JT_CFI_BP */
	int32_t cfa_off;	/* CFA = reg + cfa_off */
	bool bp_saved;		/* the caller's rbp is at CFA + bp_off */
	int32_t bp_off;
	/* the caller's rbp cannot be had (undefined, in another register, an expression);
	 * neither this nor bp_saved: rbp is the caller's, unchanged */
	bool bp_lost;
	int32_t ra_off;		/* the return address is at CFA + ra_off (-8 in practice) */
	/* the return address is undefined: the stack's first frame (_start, a thread's start) */
	bool outermost;
};

/*
 * The rule at file offset off, by a binary search: 0; -ENOENT if no FDE covers off; -ENOTSUP
 * if its CFA or return address rule is one this does not follow (an expression, another
 * register, an unknown instruction, a run over its bound); -EINVAL if its entry is malformed
 * (cut short, a bad encoding).
 */
int jt_cfi__rule(const struct jt_cfi *c, uint64_t off, struct jt_cfi_rule *r);

/* A table's size: for the recorder's memory figures and the tests. */
struct jt_cfi_stats {
	size_t rows;	/* spans of addresses with one rule (or none, or one not followed) */
	size_t rules;	/* distinct rules */
	size_t bytes;	/* held */
};

void jt_cfi__stats(const struct jt_cfi *c, struct jt_cfi_stats *st);

#endif
