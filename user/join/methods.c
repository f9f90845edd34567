// SPDX-License-Identifier: GPL-2.0
/* Method objects and their one-time definition records. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "join/methods.h"
#include "base/util.h"

struct jt_method *jt_method__new(uint64_t start, uint64_t size, uint64_t load_ts,
				 uint64_t agent_id, uint8_t src, const char *name,
				 uint32_t name_len)
{
	struct jt_method *m;
	size_t bytes;

	if (name_len > UINT16_MAX)
		name_len = UINT16_MAX;
	/* the name from where it starts, not after the struct's tail padding */
	bytes = offsetof(struct jt_method, name) + name_len + 1;
	m = malloc(bytes > sizeof(*m) ? bytes : sizeof(*m));
	if (!m)
		return NULL;
	*m = (struct jt_method){
		.start = start, .size = size, .load_ts = load_ts, .agent_id = agent_id,
		.src = src, .name_len = name_len,
	};
	memcpy(m->name, name, name_len);
	m->name[name_len] = 0;
	return m;
}

size_t jt_method__cost(uint32_t name_len)
{
	size_t bytes;

	if (name_len > UINT16_MAX)
		name_len = UINT16_MAX;
	bytes = offsetof(struct jt_method, name) + name_len + 1;
	if (bytes < sizeof(struct jt_method))
		bytes = sizeof(struct jt_method);
	/* glibc: 8 bytes of chunk header, rounded up to 16; arrays grown by doubling hold up
	 * to twice their 8-byte slots */
	return ((bytes + 8 + 15) & ~(size_t)15) + 2 * 8 + 2 * 8;
}

bool jt_method__same_code(const struct jt_method *a, const struct jt_method *b)
{
	return a->start == b->start && a->size == b->size && a->name_len == b->name_len &&
	       !memcmp(a->name, b->name, a->name_len);
}

int jt_methods__define(struct jt_methods *t, struct jt_method *m, uint32_t pid, uint64_t ts,
		       const struct jt_sink *sink)
{
	union {
		struct jt_rec_method rec;
		char bytes[sizeof(struct jt_rec_method) + UINT16_MAX + 8];
	} u;
	size_t size;
	int err;

	if (m->log_id)
		return 0;
	size = jt_round8(sizeof(u.rec) + m->name_len);
	memset(u.bytes + size - 8, 0, 8);	/* padding */
	u.rec = (struct jt_rec_method){
		.h = { .type = JT_REC_METHOD, .size = size, .ts = ts },
		.id = t->next_id ? t->next_id : 1,
		.start = m->start, .size = m->size, .load_ts = m->load_ts,
		.agent_id = m->agent_id, .pid = pid, .src = m->src,
		.name_len = m->name_len,
	};
	memcpy(u.rec.name, m->name, m->name_len);
	err = jt_sink__emit(sink, &u.rec.h);
	if (err)
		return err;
	m->log_id = u.rec.id;
	t->next_id = m->log_id + 1;
	t->defined++;
	return 0;
}
