/* SPDX-License-Identifier: GPL-2.0 */
/* The live code of one process: non-overlapping methods sorted by address. */
#ifndef JT_CODEMAP_H
#define JT_CODEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "join/methods.h"

struct jt_codemap {
	struct jt_method **v;	/* sorted by start; ranges never overlap */
	size_t n, cap;
};

/* Called for each method taken out of the map, once it is out (the map does not own it). */
typedef void (*jt_codemap_evict_cb)(void *ctx, struct jt_method *m);

/*
 * Make m live. Methods it overlaps are no longer live: they are taken out and passed to
 * evict. If a live method already has the same start, size and name, the map is left
 * as it is and that method is returned (the same code announced twice, e.g. by the agent
 * and by the perf map); otherwise m is returned. A method of size 0 covers no address: it
 * is returned without entering the map. NULL on allocation failure.
 */
struct jt_method *jt_codemap__insert(struct jt_codemap *cm, struct jt_method *m,
				     jt_codemap_evict_cb evict, void *ctx);
/* Whether any live method overlaps [start, start + size). */
bool jt_codemap__overlaps(const struct jt_codemap *cm, uint64_t start, uint64_t size);
/* The live method containing addr, or NULL. */
struct jt_method *jt_codemap__find(const struct jt_codemap *cm, uint64_t addr);
/* Whether m is live in the map. */
bool jt_codemap__holds(const struct jt_codemap *cm, const struct jt_method *m);
/* Take m out if it is live; returns whether it was. */
bool jt_codemap__remove(struct jt_codemap *cm, struct jt_method *m);
/* Take everything out (exec, exit), passing each to evict; frees the array. */
void jt_codemap__clear(struct jt_codemap *cm, jt_codemap_evict_cb evict, void *ctx);

#endif
