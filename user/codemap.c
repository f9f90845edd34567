// SPDX-License-Identifier: GPL-2.0
/* A process's live code ranges: sorted array, binary search, overlap eviction. */
#include <stdlib.h>
#include <string.h>

#include "codemap.h"

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

struct jt_method *jt_codemap__insert(struct jt_codemap *cm, struct jt_method *m,
				     jt_codemap_evict_cb evict, void *ctx)
{
	uint64_t end = m->start + m->size;
	size_t lo = first_ending_after(cm, m->start), hi = lo, i;

	if (!m->size)		/* covers no address: nothing to find it by, nothing to evict */
		return m;
	while (hi < cm->n && cm->v[hi]->start < end)
		hi++;
	if (hi - lo == 1 && jt_method__same_code(cm->v[lo], m))
		return cm->v[lo];
	if (hi == lo && cm->n == cm->cap) {
		size_t cap = cm->cap ? 2 * cm->cap : 64;
		struct jt_method **v = realloc(cm->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		cm->v = v;
		cm->cap = cap;
	}
	for (i = lo; i < hi; i++) {
		cm->v[i]->in_codemap = false;
		evict(ctx, cm->v[i]);
	}
	if (hi == lo)	/* open a gap of one */
		memmove(cm->v + lo + 1, cm->v + lo, (cm->n - lo) * sizeof(*cm->v));
	else		/* keep one of the evicted slots, close the rest */
		memmove(cm->v + lo + 1, cm->v + hi, (cm->n - hi) * sizeof(*cm->v));
	cm->n = cm->n + 1 - (hi - lo);
	cm->v[lo] = m;
	m->in_codemap = true;
	return m;
}

void jt_codemap__remove(struct jt_codemap *cm, struct jt_method *m)
{
	size_t i;

	if (!m->in_codemap)
		return;
	i = first_ending_after(cm, m->start);
	if (i < cm->n && cm->v[i] == m) {
		memmove(cm->v + i, cm->v + i + 1, (cm->n - i - 1) * sizeof(*cm->v));
		cm->n--;
	}
	m->in_codemap = false;
}

void jt_codemap__clear(struct jt_codemap *cm, jt_codemap_evict_cb evict, void *ctx)
{
	size_t i;

	for (i = 0; i < cm->n; i++) {
		cm->v[i]->in_codemap = false;
		evict(ctx, cm->v[i]);
	}
	free(cm->v);
	cm->v = NULL;
	cm->n = cm->cap = 0;
}
