/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names given late (JT_REC_LATE), for the commands that read a log: read ahead once, before
 * the samples they name, then applied to each sample as it is read. A sample's bare user
 * frame (JT_FRAME_USER) that a late name covers, at its address and time, becomes a frame
 * of that method.
 */
#ifndef JT_LATENAMES_H
#define JT_LATENAMES_H

#include <stddef.h>
#include <stdint.h>

#include "jt_log_format.h"

struct jt_latenames;

/* An empty table, or NULL when out of memory (reported). */
struct jt_latenames *jt_latenames__new(void);
/*
 * Reading ahead: take in each record of the log, in order (late names, and the definitions
 * of the methods they may name); then ready(). Each returns 0 or -ENOMEM (reported).
 */
int jt_latenames__take(struct jt_latenames *ln, const struct jt_rec_hdr *rec);
int jt_latenames__ready(struct jt_latenames *ln);
void jt_latenames__free(struct jt_latenames *ln);
/* The i-th definition a late name needs (a JT_REC_METHOD, each followed by its
 * JT_REC_LINES if it has any), NULL past the last. */
const struct jt_rec_hdr *jt_latenames__def(const struct jt_latenames *ln, size_t i);
/*
 * s with the frames late names cover turned into method frames: a copy kept by ln until
 * the next call, or s itself when none are. leaf is the index of its first user frame
 * (jt_lv__user_leaf): those before it are the kernel's.
 */
const struct jt_rec_sample *jt_latenames__apply(struct jt_latenames *ln,
						const struct jt_rec_sample *s, unsigned int leaf);
/* The same for an off-CPU record's stack (its frames were named as of its h.ts). */
const struct jt_rec_offcpu *jt_latenames__apply_offcpu(struct jt_latenames *ln,
						       const struct jt_rec_offcpu *r,
						       unsigned int leaf);
/* Samples and off-CPU records apply() named a frame of, so far. */
uint64_t jt_latenames__named(const struct jt_latenames *ln);

#endif
