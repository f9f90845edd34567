// SPDX-License-Identifier: GPL-2.0
/* UTF-8 checking and control escaping for every text output (report, top, stacks, JSON). */
#include <stdint.h>
#include <string.h>

#include "base/text.h"

size_t jt_text__utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

bool jt_text__is_control(const unsigned char *s, size_t len)
{
	if (len == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	return len == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

/* The next piece of s at i: a character to copy (*copy) or one byte to escape. */
static size_t piece(const unsigned char *p, size_t i, size_t n, bool *copy)
{
	size_t len = jt_text__utf8_len(p + i, n - i);

	*copy = len && !jt_text__is_control(p + i, len) && p[i] != '\\';
	return *copy ? len : 1;
}

void jt_text__put(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, len;
	bool copy;

	while (i < n && p[i]) {
		len = piece(p, i, n, &copy);
		if (copy)
			fwrite(p + i, 1, len, out);
		else
			fprintf(out, "\\x%02x", p[i]);
		i += len;
	}
}

size_t jt_text__clean(char *dst, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, l;

	while (i < n) {
		l = jt_text__utf8_len(p + i, n - i);
		if (!l || jt_text__is_control(p + i, l)) {
			dst[o++] = '?';
			i += l ? l : 1;	/* a C1 control is two bytes, one character */
			continue;
		}
		memcpy(dst + o, p + i, l);
		o += l;
		i += l;
	}
	dst[o] = '\0';
	return o;
}

size_t jt_text__escape(char *dst, size_t cap, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, len;
	bool copy;

	while (i < n && p[i]) {
		len = piece(p, i, n, &copy);
		if (o + (copy ? len : 4) >= cap)
			break;
		if (copy)
			memcpy(dst + o, p + i, len);
		else
			snprintf(dst + o, 5, "\\x%02x", p[i]);
		o += copy ? len : 4;
		i += len;
	}
	dst[o] = '\0';
	return o;
}
