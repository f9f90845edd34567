// SPDX-License-Identifier: GPL-2.0
/* A process's live code ranges: sorted array, binary search, overlap eviction. */
#include <stdlib.h>
#include <string.h>

#include "join/codemap.h"

/* First index whose method ends after addr. Ends are sorted because ranges never overlap. */
static size_t first_ending_after(const struct jt_codemap *cm, uint64_t addr)
{
	size_t lo = 0, hi = cm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct jt_method *m = cm->v[mid];

		if (m->start + m->size > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

bool jt_codemap__overlaps(const struct jt_codemap *cm, uint64_t start, uint64_t size)
{
	size_t i = first_ending_after(cm, start);

	return size && i < cm->n && cm->v[i]->start < start + size;
}

struct jt_method *jt_codemap__find(const struct jt_codemap *cm, uint64_t addr)
{
	size_t i = first_ending_after(cm, addr);

	if (i < cm->n && cm->v[i]->start <= addr)
		return cm->v[i];
	return NULL;
}

/* Reverse v[a, b). */
static void reverse(struct jt_method **v, size_t a, size_t b)
{
	while (a + 1 < b) {
		struct jt_method *t = v[a];

		v[a++] = v[--b];
		v[b] = t;
	}
}

bool jt_codemap__holds(const struct jt_codemap *cm, const struct jt_method *m)
{
	return m->size && jt_codemap__find(cm, m->start) == m;
}

struct jt_method *jt_codemap__insert(struct jt_codemap *cm, struct jt_method *m,
				     jt_codemap_evict_cb evict, void *ctx)
{
	uint64_t end = m->start + m->size;
	size_t lo = first_ending_after(cm, m->start), hi = lo, i, n;
	struct jt_method *first;

	if (!m->size)		/* covers no address: nothing to find it by, nothing to evict */
		return m;
	while (hi < cm->n && cm->v[hi]->start < end)
		hi++;
	if (hi - lo == 1 && jt_method__same_code(cm->v[lo], m))
		return cm->v[lo];
	if (hi == lo) {		/* open a gap of one */
		if (cm->n == cm->cap) {
			size_t cap = cm->cap ? 2 * cm->cap : 64;
			struct jt_method **v = realloc(cm->v, cap * sizeof(*v));

			if (!v)
				return NULL;
			cm->v = v;
			cm->cap = cap;
		}
		memmove(cm->v + lo + 1, cm->v + lo, (cm->n - lo) * sizeof(*cm->v));
		cm->v[lo] = m;
		cm->n++;
		return m;
	}
	/*
	 * m takes the first evicted slot; the rest of them rotate past the end of what is
	 * live (the array still holds them there), so that evict sees each one already out.
	 */
	first = cm->v[lo];
	reverse(cm->v, lo + 1, hi);
	reverse(cm->v, hi, cm->n);
	reverse(cm->v, lo + 1, cm->n);
	cm->v[lo] = m;
	n = cm->n;
	cm->n = n + 1 - (hi - lo);
	evict(ctx, first);
	for (i = cm->n; i < n; i++)
		evict(ctx, cm->v[i]);
	return m;
}

bool jt_codemap__remove(struct jt_codemap *cm, struct jt_method *m)
{
	size_t i;

	if (!m->size)
		return false;
	i = first_ending_after(cm, m->start);
	if (i >= cm->n || cm->v[i] != m)
		return false;
	memmove(cm->v + i, cm->v + i + 1, (cm->n - i - 1) * sizeof(*cm->v));
	cm->n--;
	return true;
}

void jt_codemap__clear(struct jt_codemap *cm, jt_codemap_evict_cb evict, void *ctx)
{
	size_t i, n = cm->n;

	cm->n = 0;		/* all out before any is passed on */
	for (i = 0; i < n; i++)
		evict(ctx, cm->v[i]);
	free(cm->v);
	cm->v = NULL;
	cm->cap = 0;
}
