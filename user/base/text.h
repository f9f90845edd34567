/* SPDX-License-Identifier: GPL-2.0 */
/* Names from other processes made safe to show: UTF-8 checking and escaping of controls. */
#ifndef JT_TEXT_H
#define JT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Length of the valid UTF-8 sequence at s (of n bytes), or 0: overlong forms, surrogates,
 * code points past U+10FFFF and the noncharacters U+FFFE and U+FFFF (which XML refuses)
 * are not valid.
 */
size_t jt_text__utf8_len(const unsigned char *s, size_t n);

/* Whether the len-byte sequence at s (jt_text__utf8_len) is a control character: C0, DEL,
 * or C1 (U+0080 to U+009F), all of which a terminal may act on. */
bool jt_text__is_control(const unsigned char *s, size_t len);

/*
 * Write s (n bytes, up to a NUL) to out as dump does, so that a name, path or command line
 * cannot drive the terminal: valid UTF-8 other than controls as it is; controls, a
 * backslash and bytes that are not UTF-8 as \xHH.
 */
void jt_text__put(FILE *out, const char *s, size_t n);

/*
 * Copy s (n bytes) into dst (n + 1 bytes at least) with every control character (C0, DEL,
 * C1) and every byte that is not UTF-8 as one '?': text any output can carry as it is.
 * Returns the length written, NUL not counted.
 */
size_t jt_text__clean(char *dst, const char *s, size_t n);

/* The same into dst (cap > 0 bytes, always NUL-terminated, cut at a whole character or
 * escape); returns the length written. */
size_t jt_text__escape(char *dst, size_t cap, const char *s, size_t n);

#endif
