/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the exports (pprof, speedscope, chrome) share beyond reading the log (log/source.h)
 * and the interner and writer they share with the views (base/intern.h, base/xout.h):
 * balancing enter/leave per thread, and the names of off-CPU waits.
 */
#ifndef JT_EXPORT_COMMON_H
#define JT_EXPORT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/intern.h"
#include "base/xout.h"
#include "jt_log_format.h"

/* ---- enter/leave made into properly nested open/close pairs per thread ---- */
/* A call of method id opens (open) or closes on thread (pid, tid) at ts; nonzero stops. */
typedef int jt_xcalls_fn(void *ctx, bool open, uint32_t pid, uint32_t tid, uint64_t id,
			 uint64_t ts);

struct jt_xcalls {
	struct jt_hash threads;		/* pid << 32 | tid -> struct xthread_stack */
	uint64_t *order;		/* thread keys in order of first sight, for the end */
	size_t nr_order, cap_order;
	/* fix-ups, so that the output is always balanced */
	uint64_t orphan_leaves;		/* a leave whose enter was before recording: dropped */
	uint64_t implied_leaves;	/* calls closed because a caller's leave came first */
	uint64_t open_at_end;		/* calls still open at the end: closed at the last time */
	/* calls the log has without an enter and a leave of their own: not exported, said */
	uint64_t summed;		/* in JT_REC_CALLSUM records (--calls-summary, -min) */
	uint64_t spans;			/* JT_REC_SPAN records (--calls-min) */
};

/*
 * Give thread (pid, tid) its place in order at first sight though it made no call yet (an
 * export that lists threads with calls and with something else, off-CPU waits). 0 or -ENOMEM.
 */
int jt_xcalls__see(struct jt_xcalls *c, uint32_t pid, uint32_t tid);
/*
 * Feed one enter or leave record (a callsum or span record is counted, not exported).
 * Returns 0, -ENOMEM, or what a callback returned.
 */
int jt_xcalls__feed(struct jt_xcalls *c, const struct jt_rec_call *rec, jt_xcalls_fn *fn,
		    void *ctx);
/* Close every call still open, at ts, innermost first, threads in order of first sight. */
int jt_xcalls__finish(struct jt_xcalls *c, uint64_t ts, jt_xcalls_fn *fn, void *ctx);
/* Tell what was fixed up (if anything) on stderr, naming the log. */
void jt_xcalls__report(const struct jt_xcalls *c, const char *path);
void jt_xcalls__fini(struct jt_xcalls *c);

/* ---- off-CPU waits (JT_REC_OFFCPU) ---- */
#define JT_XOFF_NAME_CAP 32

/*
 * What a wait in state (enum jt_off_state) is called on a timeline, into buf
 * (JT_XOFF_NAME_CAP bytes): "off-CPU: sleep", "off-CPU: blocked", ..., and "off-CPU: short
 * waits" for a sum of waits under the recording's threshold.
 */
const char *jt_xoff__name(unsigned state, char *buf);

#endif
