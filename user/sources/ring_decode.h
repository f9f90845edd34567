/* SPDX-License-Identifier: GPL-2.0 */
/* The ring buffer's edge: checking its records (include/jt_events.h) and making events. */
#ifndef JT_DECODE_H
#define JT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/event.h"

/*
 * Decode the record at data (len bytes, as the ring buffer delivered it) into out. Returns
 * 0, or -EINVAL for a malformed record (unknown type, sizes that do not fit). Never reads
 * outside [data, data+len). A JT_EV_JAVA_CODE record comes out as a JT_EV_CODE_LOAD of
 * source JT_SRC_USDT named "pkg.Class.method(params)"; a name or path ends at its first NUL.
 */
int jt_decode(const void *data, size_t len, union jt_event_buf *out);

/* Timestamp of a record that jt_decode accepted. */
static inline uint64_t jt_decode__ts(const void *data)
{
	return ((const struct jt_ev_hdr *)data)->ts;
}

/* Whether a record jt_decode accepted is an enter or leave timed by the caller's TSC. */
static inline bool jt_decode__tsc(const void *data)
{
	const struct jt_ev_hdr *h = data;

	return (h->type == JT_EV_ENTER || h->type == JT_EV_LEAVE) && (h->flags & JT_CALL_TSC);
}

#endif
