/* SPDX-License-Identifier: GPL-2.0 */
/* Printable names of the log's enums: drop reasons, method sources, record types, waits. */
#ifndef JT_NAMES_H
#define JT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each returns a static string; "unknown" for a value it does not know. */
const char *jt_drop__name(unsigned what);	/* enum jt_drop */
/*
 * Whether a drop kind counts what was kept, not lost: a frame left unnamed (unsure_frame)
 * or a stack cut (broken_stack), their samples in the log. Shown apart from what was lost.
 */
bool jt_drop__kept(unsigned what);
/* What counts[0..n) (by enum jt_drop) say was lost: the kinds jt_drop__kept() are not. */
uint64_t jt_drop__lost(const uint64_t *counts, size_t n);
const char *jt_src__name(unsigned src);		/* enum jt_src */
const char *jt_rec__name(unsigned type);	/* enum jt_rec_type */
/* enum jt_off_state: "sleep", "blocked", "preempted", "other", "short" */
const char *jt_off_state__name(unsigned state);

#endif
