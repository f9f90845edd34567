// SPDX-License-Identifier: GPL-2.0
/* Buffered output, and JSON strings from bytes not trusted to be UTF-8. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "base/xout.h"

#define XOUT_CAP (256U * 1024)

int jt_xout__init(struct jt_xout *o, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->buf = malloc(XOUT_CAP);
	return o->buf ? 0 : -ENOMEM;
}

static void xflush(struct jt_xout *o)
{
	if (o->len && !o->err && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = errno ? errno : EIO;
	o->len = 0;
}

void jt_xout__mem(struct jt_xout *o, const void *p, size_t n)
{
	if (o->len + n > XOUT_CAP)
		xflush(o);
	if (n > XOUT_CAP) {
		if (!o->err && fwrite(p, 1, n, o->f) != n)
			o->err = errno ? errno : EIO;
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

void jt_xout__str(struct jt_xout *o, const char *s)
{
	jt_xout__mem(o, s, strlen(s));
}

void jt_xout__printf(struct jt_xout *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		jt_xout__mem(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void jt_xout__u64(struct jt_xout *o, uint64_t v)
{
	jt_xout__printf(o, "%" PRIu64, v);
}

void jt_xout__usec(struct jt_xout *o, uint64_t ns)
{
	jt_xout__printf(o, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

void jt_xout__json_str(struct jt_xout *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, run, len;
	char esc[8];

	jt_xout__mem(o, "\"", 1);
	while (i < n) {
		/* copy a run of bytes that need nothing */
		for (run = i; run < n && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' &&
			      p[run] != '\\' && p[run] != '<'; run++)
			;
		jt_xout__mem(o, s + i, run - i);
		i = run;
		if (i == n)
			break;
		if (p[i] >= 0x80) {
			len = jt_text__utf8_len(p + i, n - i);
			if (!len) {
				jt_xout__mem(o, "\\ufffd", 6);
				i++;
			} else if (jt_text__is_control(p + i, len)) {
				/* U+0080..U+009F, C1 controls: a terminal may act on them */
				memcpy(esc, "\\u00", 4);
				esc[4] = hex[p[i + 1] >> 4];
				esc[5] = hex[p[i + 1] & 15];
				jt_xout__mem(o, esc, 6);
				i += len;
			} else {
				jt_xout__mem(o, s + i, len);
				i += len;
			}
			continue;
		}
		switch (p[i]) {
		case '"':
			jt_xout__mem(o, "\\\"", 2);
			break;
		case '\\':
			jt_xout__mem(o, "\\\\", 2);
			break;
		case '\n':
			jt_xout__mem(o, "\\n", 2);
			break;
		case '\t':
			jt_xout__mem(o, "\\t", 2);
			break;
		default:	/* other control characters, DEL and '<' */
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[p[i] >> 4];
			esc[5] = hex[p[i] & 15];
			jt_xout__mem(o, esc, 6);
			break;
		}
		i++;
	}
	jt_xout__mem(o, "\"", 1);
}

int jt_xout__fini(struct jt_xout *o)
{
	int err;

	xflush(o);
	if (!o->err && fflush(o->f))
		o->err = errno ? errno : EIO;
	err = o->err;
	free(o->buf);
	o->buf = NULL;
	return err;
}
