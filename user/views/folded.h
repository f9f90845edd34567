/* SPDX-License-Identifier: GPL-2.0 */
/* Folded stacks ("root;caller;leaf count"), the text flamegraph.pl, inferno and speedscope read. */
#ifndef JT_FOLDED_H
#define JT_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "log/view.h"
#include "views/stacks.h"

/*
 * One line per distinct stack with self samples (or weight: off-CPU us), root first, in
 * the tree's order (sort it first for stable output). per_proc: each line starts with
 * "comm (pid)". A ';' inside a name becomes ':' (the format has no escape). annotate: JIT
 * frames end in "_[j]" and kernel frames in "_[k]", as flamegraph.pl --color=java expects.
 * Returns 0 or -errno.
 */
int jt_folded__write(FILE *out, const struct jt_stacks *s, const struct jt_lv *lv,
		     bool per_proc, bool annotate);

#endif
