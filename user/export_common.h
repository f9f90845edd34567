/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the exports (pprof, speedscope, chrome) share beyond reading the log (logsrc.h):
 * interning, balancing enter/leave per thread, the names of off-CPU waits, and a buffered
 * writer with JSON string escaping, which report --json writes through too.
 */
#ifndef JT_EXPORT_COMMON_H
#define JT_EXPORT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hash.h"
#include "jt_log_format.h"

/* ---- interning: byte strings to dense indexes 0, 1, 2, ... in order of first sight ---- */
struct jt_xintern {
	struct jt_hash h;	/* hash of key -> last entry index + 1 with that hash */
	struct jt_xent *v;
	size_t n, cap;
};

/* The index of key, added if new (*added says so; may be NULL). Returns >= 0 or -ENOMEM. */
long jt_xintern__get(struct jt_xintern *t, const void *key, size_t len, bool *added);
/* The index of the pair of strings a and b (keyed "a\0b"), as jt_xintern__get. */
long jt_xintern__pair(struct jt_xintern *t, const char *a, const char *b, bool *added);
const void *jt_xintern__key(const struct jt_xintern *t, size_t idx, size_t *len);
void jt_xintern__fini(struct jt_xintern *t);

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
};

/*
 * Give thread (pid, tid) its place in order at first sight though it made no call yet (an
 * export that lists threads with calls and with something else, off-CPU waits). 0 or -ENOMEM.
 */
int jt_xcalls__see(struct jt_xcalls *c, uint32_t pid, uint32_t tid);
/* Feed one enter or leave record. Returns 0, -ENOMEM, or what a callback returned. */
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

/* ---- buffered output ---- */
struct jt_xout {
	FILE *f;
	char *buf;
	size_t len;
	int err;		/* errno of the first failure */
};

int jt_xout__init(struct jt_xout *o, FILE *f);	/* 0 or -ENOMEM */
void jt_xout__mem(struct jt_xout *o, const void *p, size_t n);
void jt_xout__str(struct jt_xout *o, const char *s);
void jt_xout__printf(struct jt_xout *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void jt_xout__u64(struct jt_xout *o, uint64_t v);
/* ns as microseconds with three decimals: 1234567 -> 1234.567 */
void jt_xout__usec(struct jt_xout *o, uint64_t ns);
/*
 * A JSON string, quotes included, from bytes that are not trusted to be UTF-8: quote,
 * backslash and control characters (C0, DEL and C1) escaped, '<' too (safe inside an HTML
 * script), each invalid UTF-8 byte as U+FFFD. The one JSON string writer: report --json
 * uses it too.
 */
void jt_xout__json_str(struct jt_xout *o, const char *s, size_t n);
/* Flush and free; returns 0 or the errno of the first failed write. */
int jt_xout__fini(struct jt_xout *o);

#endif
