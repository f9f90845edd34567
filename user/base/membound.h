/* SPDX-License-Identifier: GPL-2.0 */
/* One memory bound for the whole recorder: what its growing parts hold, in one account. */
#ifndef JT_MEMBOUND_H
#define JT_MEMBOUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The parts of the recorder that grow with what the host does (methods, the definitions a
 * flight recorder keeps for its next segment, followed perf maps) charge what they hold to
 * one account. A part that can do without asks first and does without, counting what it
 * dropped (a method at new addresses) or waiting (a map not opened yet); one that cannot (a
 * definition the next segment needs, code replacing live code) charges anyway, so that the
 * others do without sooner. A NULL account bounds nothing; neither does a limit of 0.
 */
struct jt_membound {
	uint64_t limit;		/* bytes */
	uint64_t used;
	uint64_t peak;
};

static inline void jt_membound__charge(struct jt_membound *m, uint64_t bytes)
{
	if (!m)
		return;
	m->used += bytes;
	if (m->used > m->peak)
		m->peak = m->used;
}

/* Charge bytes if they fit; false (nothing charged) if not. */
static inline bool jt_membound__take(struct jt_membound *m, uint64_t bytes)
{
	if (m && m->limit && m->used + bytes > m->limit)
		return false;
	jt_membound__charge(m, bytes);
	return true;
}

static inline void jt_membound__give(struct jt_membound *m, uint64_t bytes)
{
	if (m)
		m->used -= bytes < m->used ? bytes : m->used;
}

#endif
