/* SPDX-License-Identifier: GPL-2.0 */
/* `jitrace top`'s model: the collector's ordered records in, the hottest JIT methods of the
 * last interval out, as one screen of text. No terminal or BPF here, so a test can drive it. */
#ifndef JT_TOP_H
#define JT_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/sink.h"

struct jt_top;

struct jt_top *jt_top__new(void);
void jt_top__free(struct jt_top *t);
/* Where the pipeline sends its records: definitions are kept, samples counted. */
struct jt_sink jt_top__sink(struct jt_top *t);

/*
 * Write one screen for the interval since the last call (secs long) to out: a status line,
 * then up to rows methods, hottest first, lines cut to cols, and start a new interval.
 * A method's self samples are those whose innermost JIT frame is it (time in native code it
 * called counts as its own); total, those with it anywhere on the stack.
 * term: terminal codes clear what the last screen left. Returns 0 or -errno.
 */
int jt_top__render(struct jt_top *t, FILE *out, unsigned int rows, unsigned int cols,
		   double secs, bool term);

/* Samples seen since the start. */
uint64_t jt_top__samples(const struct jt_top *t);

#endif
