/* SPDX-License-Identifier: GPL-2.0 */
/* Interning byte strings to dense indexes, for the views and the exports alike. */
#ifndef JT_INTERN_H
#define JT_INTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/hash.h"

/* ---- interning: byte strings to dense indexes 0, 1, 2, ... in order of first sight ---- */
struct jt_xintern {
	struct jt_hash h;	/* hash of key -> last entry index + 1 with that hash */
	struct jt_xent *v;
	size_t n, cap;
};

/* The index of key, added if new (*added says so; may be NULL). Returns >= 0 or -ENOMEM. */
long jt_xintern__get(struct jt_xintern *t, const void *key, size_t len, bool *added);
/* The index of the pair of strings a and b (keyed "a\0b"), as jt_xintern__get. */
long jt_xintern__pair(struct jt_xintern *t, const char *a, const char *b, bool *added);
const void *jt_xintern__key(const struct jt_xintern *t, size_t idx, size_t *len);
void jt_xintern__fini(struct jt_xintern *t);

#endif
