/* SPDX-License-Identifier: GPL-2.0 */
/* A process's method ids to pointers: a plain array while the ids are dense, a hash past it. */
#ifndef JT_IDMAP_H
#define JT_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"

/*
 * Runtimes number their methods 1, 2, 3... (the agent does): an array indexed by id costs
 * 8 bytes a method where a hash costs 21 to 32. Ids below cap live in the array, which
 * grows to cover a new id only while it stays at most about twice the ids it holds; any
 * other id (HotSpot's USDT ids, say) goes to the hash. A zeroed struct is an empty map.
 */
struct jt_idmap {
	void **dense;		/* [0, cap): NULL where no id */
	size_t cap;
	size_t n_dense;
	struct jt_hash sparse;
};

void jt_idmap__fini(struct jt_idmap *m);
void *jt_idmap__get(const struct jt_idmap *m, uint64_t id);
/* Insert or replace; val must not be NULL. Returns 0 or -ENOMEM. */
int jt_idmap__put(struct jt_idmap *m, uint64_t id, void *val);
/* Remove id; returns what it held, or NULL. */
void *jt_idmap__del(struct jt_idmap *m, uint64_t id);
/* Iterate: start with *pos = 0; returns false at the end. Do not modify while iterating. */
bool jt_idmap__next(const struct jt_idmap *m, size_t *pos, uint64_t *id, void **val);
size_t jt_idmap__count(const struct jt_idmap *m);

#endif
