/* SPDX-License-Identifier: GPL-2.0 */
/* A buffered writer with the one JSON string escaper: report --json and the exports. */
#ifndef JT_XOUT_H
#define JT_XOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
