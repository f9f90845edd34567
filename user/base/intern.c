// SPDX-License-Identifier: GPL-2.0
/* Interning: byte strings to dense indexes 0, 1, 2, ... in order of first sight. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"

struct jt_xent {
	char *key;
	size_t len;
	size_t next;		/* previous entry with the same hash, + 1; 0: none */
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

long jt_xintern__get(struct jt_xintern *t, const void *key, size_t len, bool *added)
{
	uint64_t h = hash_bytes(key, len);
	size_t i = (size_t)(uintptr_t)jt_hash__get(&t->h, h);
	struct jt_xent *e;

	if (added)
		*added = false;
	while (i) {
		e = &t->v[i - 1];
		if (e->len == len && !memcmp(e->key, key, len))
			return i - 1;
		i = e->next;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct jt_xent *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	e = &t->v[t->n];
	e->key = malloc(len ? len : 1);
	if (!e->key)
		return -ENOMEM;
	memcpy(e->key, key, len);
	e->len = len;
	e->next = (size_t)(uintptr_t)jt_hash__get(&t->h, h);
	if (jt_hash__put(&t->h, h, (void *)(uintptr_t)(t->n + 1))) {
		free(e->key);
		return -ENOMEM;
	}
	if (added)
		*added = true;
	return t->n++;
}

long jt_xintern__pair(struct jt_xintern *t, const char *a, const char *b, bool *added)
{
	size_t alen = strlen(a), blen = strlen(b);
	char *key = malloc(alen + 1 + blen);
	long idx;

	if (!key)
		return -ENOMEM;
	memcpy(key, a, alen + 1);
	memcpy(key + alen + 1, b, blen);
	idx = jt_xintern__get(t, key, alen + 1 + blen, added);
	free(key);
	return idx;
}

const void *jt_xintern__key(const struct jt_xintern *t, size_t idx, size_t *len)
{
	*len = t->v[idx].len;
	return t->v[idx].key;
}

void jt_xintern__fini(struct jt_xintern *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].key);
	free(t->v);
	jt_hash__fini(&t->h);
	memset(t, 0, sizeof(*t));
}
