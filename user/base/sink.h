/* SPDX-License-Identifier: GPL-2.0 */
/* Where the collector's ordered records go: the log writer, a live view, a test. */
#ifndef JT_SINK_H
#define JT_SINK_H

#include "jt_log_format.h"

struct jt_sink {
	/* One record, in timestamp order. Returns 0 or -errno (already reported). */
	int (*record)(void *ctx, const struct jt_rec_hdr *rec);
	void *ctx;
};

static inline int jt_sink__emit(const struct jt_sink *s, const struct jt_rec_hdr *rec)
{
	return s->record(s->ctx, rec);
}

#endif
