// SPDX-License-Identifier: GPL-2.0
/* Method ids: an array for the dense ids runtimes hand out, a hash for the rest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "join/idmap.h"

#define MIN_CAP 64

void jt_idmap__fini(struct jt_idmap *m)
{
	free(m->dense);
	jt_hash__fini(&m->sparse);
	memset(m, 0, sizeof(*m));
}

void *jt_idmap__get(const struct jt_idmap *m, uint64_t id)
{
	if (id < m->cap)
		return m->dense[id];
	return jt_hash__get(&m->sparse, id);
}

/* Grow the array to n slots and move the hash's ids below n into it. */
static int grow(struct jt_idmap *m, size_t n)
{
	void **d = realloc(m->dense, n * sizeof(*d));
	size_t pos = 0;
	uint64_t id;
	void *val;

	if (!d)
		return -ENOMEM;
	memset(d + m->cap, 0, (n - m->cap) * sizeof(*d));
	m->dense = d;
	m->cap = n;
	while (jt_hash__next(&m->sparse, &pos, &id, &val)) {
		if (id >= n)
			continue;
		jt_hash__del(&m->sparse, id);
		d[id] = val;
		m->n_dense++;
		pos = 0;	/* deleting shifts entries: look again from the start */
	}
	return 0;
}

int jt_idmap__put(struct jt_idmap *m, uint64_t id, void *val)
{
	size_t n = m->cap ? m->cap : MIN_CAP;

	if (id >= m->cap && id < SIZE_MAX / 4) {
		while (n <= id)
			n *= 2;
		/* dense enough: at most about two slots for each id held */
		if (n <= 2 * (m->n_dense + m->sparse.count + 1) + MIN_CAP && grow(m, n))
			return -ENOMEM;
	}
	if (id < m->cap) {
		m->n_dense += !m->dense[id];
		m->dense[id] = val;
		return 0;
	}
	return jt_hash__put(&m->sparse, id, val);
}

void *jt_idmap__del(struct jt_idmap *m, uint64_t id)
{
	void *val;

	if (id >= m->cap)
		return jt_hash__del(&m->sparse, id);
	val = m->dense[id];
	m->dense[id] = NULL;
	m->n_dense -= !!val;
	return val;
}

bool jt_idmap__next(const struct jt_idmap *m, size_t *pos, uint64_t *id, void **val)
{
	size_t hpos;
	bool more;

	for (; *pos < m->cap; (*pos)++) {
		if (m->dense[*pos]) {
			*id = *pos;
			*val = m->dense[(*pos)++];
			return true;
		}
	}
	hpos = *pos - m->cap;
	more = jt_hash__next(&m->sparse, &hpos, id, val);
	*pos = m->cap + hpos;
	return more;
}

size_t jt_idmap__count(const struct jt_idmap *m)
{
	return m->n_dense + m->sparse.count;
}
