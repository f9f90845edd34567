// SPDX-License-Identifier: GPL-2.0
/* Linear-probing hash with backward-shift deletion (no tombstones). */
#include <errno.h>
#include <stdlib.h>

#include "base/hash.h"

static size_t slot_of(const struct jt_hash *h, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 17) & (h->cap - 1);
}

void jt_hash__fini(struct jt_hash *h)
{
	free(h->ents);
	h->ents = NULL;
	h->cap = h->count = 0;
}

void jt_hash__fini_free(struct jt_hash *h)
{
	size_t i;

	for (i = 0; i < h->cap; i++)
		free(h->ents[i].val);	/* NULL where empty */
	jt_hash__fini(h);
}

void *jt_hash__get(const struct jt_hash *h, uint64_t key)
{
	size_t i;

	if (!h->cap)
		return NULL;
	for (i = slot_of(h, key); h->ents[i].val; i = (i + 1) & (h->cap - 1))
		if (h->ents[i].key == key)
			return h->ents[i].val;
	return NULL;
}

static int grow(struct jt_hash *h)
{
	struct jt_hash old = *h;
	size_t i;

	h->cap = old.cap ? 2 * old.cap : 16;
	h->ents = calloc(h->cap, sizeof(*h->ents));
	if (!h->ents) {
		*h = old;
		return -ENOMEM;
	}
	h->count = 0;
	for (i = 0; i < old.cap; i++)
		if (old.ents[i].val)
			jt_hash__put(h, old.ents[i].key, old.ents[i].val);
	free(old.ents);
	return 0;
}

int jt_hash__put(struct jt_hash *h, uint64_t key, void *val)
{
	size_t i;

	if ((h->count + 1) * 4 > h->cap * 3 && grow(h))	/* load factor 3/4 */
		return -ENOMEM;
	for (i = slot_of(h, key); h->ents[i].val; i = (i + 1) & (h->cap - 1)) {
		if (h->ents[i].key == key) {
			h->ents[i].val = val;
			return 0;
		}
	}
	h->ents[i].key = key;
	h->ents[i].val = val;
	h->count++;
	return 0;
}

void *jt_hash__del(struct jt_hash *h, uint64_t key)
{
	size_t i, j, mask = h->cap - 1;
	void *val;

	if (!h->cap)
		return NULL;
	for (i = slot_of(h, key); h->ents[i].val; i = (i + 1) & mask)
		if (h->ents[i].key == key)
			break;
	val = h->ents[i].val;
	if (!val)
		return NULL;
	/* Shift later members of the probe run back over the hole. */
	for (j = (i + 1) & mask; h->ents[j].val; j = (j + 1) & mask) {
		size_t home = slot_of(h, h->ents[j].key);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			h->ents[i] = h->ents[j];
			i = j;
		}
	}
	h->ents[i].val = NULL;
	h->count--;
	return val;
}

bool jt_hash__next(const struct jt_hash *h, size_t *pos, uint64_t *key, void **val)
{
	for (; *pos < h->cap; (*pos)++) {
		if (h->ents[*pos].val) {
			*key = h->ents[*pos].key;
			*val = h->ents[(*pos)++].val;
			return true;
		}
	}
	return false;
}

bool jt_hash__next_round(const struct jt_hash *h, size_t first, size_t *pos, bool *wrapped,
			 uint64_t *key, void **val)
{
	if (!*wrapped) {
		if (jt_hash__next(h, pos, key, val))
			return true;
		*wrapped = true;
		*pos = 0;
	}
	return *pos < first && jt_hash__next(h, pos, key, val) && *pos - 1 < first;
}

void *jt_hash__get_new(struct jt_hash *h, uint64_t key, size_t size, bool *added)
{
	void *val = jt_hash__get(h, key);

	if (added)
		*added = !val;
	if (val)
		return val;
	val = calloc(1, size);
	if (val && jt_hash__put(h, key, val)) {
		free(val);
		val = NULL;
	}
	return val;
}
