/* SPDX-License-Identifier: GPL-2.0 */
/* An open-addressing hash from 64-bit keys to non-NULL pointers. */
#ifndef JT_HASH_H
#define JT_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jt_hash_ent {
	uint64_t key;
	void *val;		/* NULL: empty */
};

struct jt_hash {
	struct jt_hash_ent *ents;
	size_t cap;		/* a power of two, or 0 */
	size_t count;
};

/* A zeroed struct jt_hash is an empty hash. */
void jt_hash__fini(struct jt_hash *h);
/* Free each value (they were malloc'd, and own nothing), then fini. */
void jt_hash__fini_free(struct jt_hash *h);
void *jt_hash__get(const struct jt_hash *h, uint64_t key);
/* Insert or replace; val must not be NULL. Returns 0 or -ENOMEM. */
int jt_hash__put(struct jt_hash *h, uint64_t key, void *val);
/*
 * The value at key, or a new zeroed value of size bytes (calloc) put there; *added says
 * which (may be NULL). NULL: out of memory.
 */
void *jt_hash__get_new(struct jt_hash *h, uint64_t key, size_t size, bool *added);
/* Remove key; returns what it held, or NULL. */
void *jt_hash__del(struct jt_hash *h, uint64_t key);
/* Iterate: start with *pos = 0; returns false at the end. Do not modify while iterating. */
bool jt_hash__next(const struct jt_hash *h, size_t *pos, uint64_t *key, void **val);
/*
 * The same walk begun at slot first (past the last slot: at 0) and going round to it, for
 * work spread over several calls: *pos starts at first and *wrapped false. The slot of the
 * entry returned is *pos - 1 (where a later walk may begin).
 */
bool jt_hash__next_round(const struct jt_hash *h, size_t first, size_t *pos, bool *wrapped,
			 uint64_t *key, void **val);

#endif
