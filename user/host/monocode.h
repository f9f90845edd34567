/* SPDX-License-Identifier: GPL-2.0 */
/* Mono's amd64 JIT code read by its prologue and epilogue shapes: how a frame of it is stepped. */
#ifndef JT_MONOCODE_H
#define JT_MONOCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/unwind.h"

#define JT_MONO_CODE_MAX 65536	/* a longer body is not read: no rule */

enum jt_mono_kind {
	JT_MONO_UNREAD,		/* not read yet (a zeroed struct) */
	JT_MONO_UNKNOWN,	/* read, but not of a shape known here: no rule */
	JT_MONO_FRAMELESS,	/* sub rsp,N; callee-saved stores; ... restores; add rsp,N; ret */
	JT_MONO_FRAMED,		/* push rbp; mov rbp,rsp; ... leave; ret */
};

/*
 * What a code body's frame is, read once from its bytes and kept with its code record (a
 * few words: millions of methods may hold one). Offsets are from the body's start.
 */
struct jt_mono_code {
	uint8_t kind;		/* enum jt_mono_kind */
	uint8_t sub_len;	/* frameless: its sub rsp,N's length (the frame is built after) */
	uint16_t reserved;
	int32_t bp_slot;	/* frameless: rbp's save slot from sp, -1: rbp is never written */
	uint32_t frame;		/* frameless: N */
	uint32_t bp_stored;	/* frameless: where the slot holds rbp (after its store) */
	uint32_t ret_off;	/* its one epilogue's ret */
	uint32_t size;		/* the bytes read */
};

_Static_assert(sizeof(struct jt_mono_code) == 24, "kept in every method");

/*
 * Read the n bytes of a body at b into *mc: 0 and a frameless or framed shape, or -ENOENT
 * and JT_MONO_UNKNOWN when the bytes are not exactly one of Mono's shapes (the prologues
 * above; a frameless one's stores contiguous, its callee-saved ones restored in order just
 * before the one add that undoes the sub, or before the loads of a returned value; a framed
 * one's leave; ret found once). The bytes are the traced process's: anything else gives no
 * rule. -EFBIG: over JT_MONO_CODE_MAX.
 */
int jt_monocode__parse(const uint8_t *b, size_t n, struct jt_mono_code *mc);

/*
 * Read the body [start, start + size) of process pid from PROC_ROOT/PID/mem and parse it
 * into *mc. Returns what parse does, or -EFBIG (over JT_MONO_CODE_MAX), -EFAULT (unmapped)
 * or -errno with *mc JT_MONO_UNKNOWN; reports nothing (a body freed since is normal).
 */
int jt_monocode__read(const char *proc_root, uint32_t pid, uint64_t start, uint64_t size,
		      struct jt_mono_code *mc);

/*
 * How the frame of code mc at offset off is stepped (leaf: off is where the thread stopped,
 * else a call's last byte), into *u: an sp rule where the frame is not (yet, or any more)
 * what the body keeps, frame pointers (no rule) in a framed body. -ENOENT when mc is of no
 * known shape: frame pointers there could skip frames, the walk should end.
 */
int jt_monocode__unwind_code(const struct jt_mono_code *mc, uint64_t off, bool leaf,
			     struct jt_unwind_code *u);

#endif
