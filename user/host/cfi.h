/* SPDX-License-Identifier: GPL-2.0 */
/* One ELF file's unwind table (.eh_frame CFI), asked by file offset: how to find a caller. */
#ifndef JT_CFI_H
#define JT_CFI_H

#include <stdbool.h>
#include <stdint.h>

struct jt_cfi;

/*
 * Read the CFI of the x86-64 ELF file open at fd: .eh_frame, searched through
 * .eh_frame_hdr's sorted table when it has a usable one, else through an index sorted here.
 * The sections are copied (pread): fd may be closed after. Addresses are file offsets, as
 * in elfsyms.h. Returns NULL with *err = -errno, -ENOEXEC (not an x86-64 ELF file),
 * -ENOENT (no .eh_frame) or -EFBIG (a section over 64 MiB: not copied), and reports nothing:
 * a file without CFI is normal. A lookup runs at most 16,384 instructions of a table.
 */
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
 * The rule at file offset off: 0; -ENOENT if no FDE covers off; -ENOTSUP if its CFA or
 * return address rule is one this does not follow (an expression, another register, an
 * unknown instruction); -EINVAL if its entry is malformed (cut short, a bad encoding).
 */
int jt_cfi__rule(const struct jt_cfi *c, uint64_t off, struct jt_cfi_rule *r);

#endif
