// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: perf's jitdump parser (user/sources/jitdump.h) on a whole untrusted file, walked
 * as the jitdump source (user/sources/jitdump_watch.c) walks one: the header, then record after record by
 * their sizes, each parsed from an exact-size heap copy of the bytes the source would read
 * (the record, or its first 64 KiB), so that ASan sees any read past them. Every byte the
 * parser points at is read, debug-info entries are walked to their end, and what it promises
 * (pointers inside the bytes given, NUL-terminated strings, no address wrap) is checked. A
 * last record cut short is parsed too, from the bytes there: the parser must be safe on it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/jitdump.h"

#define PREFIX_MAX (64u << 10)	/* what user/sources/jitdump_watch.c reads of one record */

static volatile unsigned char sink;

/* Read n bytes at p one by one, so ASan checks each. */
static void touch(const char *p, size_t n)
{
	unsigned char s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += (unsigned char)p[i];
	sink += s;
}

/* [p, p + n) inside [lo, hi) */
static int inside(const char *p, size_t n, const char *lo, const char *hi)
{
	return p >= lo && p <= hi && n <= (size_t)(hi - p);
}

static void walk_lines(const struct jt_jitdump_rec *r)
{
	struct jt_jitdump_line l;
	size_t pos = 0, prev = 0;
	const char *end = r->lines + r->lines_len;

	while (jt_jitdump__line(r, &pos, &l)) {
		/* each entry at least its 16 bytes and a NUL, inside the entries, in order */
		if (pos < prev + 17 || pos > r->lines_len || l.file != r->lines + prev + 16 ||
		    !inside(l.file, l.file_len + 1, r->lines, end) || l.file[l.file_len])
			__builtin_trap();
		touch(l.file, l.file_len + 1);
		sink += (unsigned char)(l.addr ^ l.line ^ l.discrim);
		prev = pos;
	}
	if (pos != prev)
		__builtin_trap();	/* a walk that stops must not move */
}

static void check(const char *b, size_t len, uint32_t size, const struct jt_jitdump_rec *r)
{
	if (r->size != size)
		__builtin_trap();
	if (r->name) {
		if (!inside(r->name, r->name_len + 1, b, b + len) || r->name[r->name_len])
			__builtin_trap();
		touch(r->name, r->name_len + 1);
	}
	if ((r->type == JT_JITDUMP_CODE_LOAD || r->type == JT_JITDUMP_CODE_MOVE) &&
	    r->addr + r->code_size < r->addr)
		__builtin_trap();
	if (r->type == JT_JITDUMP_CODE_LOAD && !r->name)
		__builtin_trap();
	if (r->lines) {
		if (!inside(r->lines, r->lines_len, b, b + len))
			__builtin_trap();
		touch(r->lines, r->lines_len);
		walk_lines(r);
	} else if (r->lines_len) {
		__builtin_trap();
	}
}

/* Parse len bytes of the record at p (of size bytes) from an exact-size copy. */
static void parse(const uint8_t *p, size_t len, uint32_t size)
{
	struct jt_jitdump_rec r;
	char *b = malloc(len);

	if (!b)
		return;
	memcpy(b, p, len);
	if (!jt_jitdump__rec(b, len, &r))
		check(b, len, size, &r);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jt_jitdump_header h;
	size_t off;
	int err = jt_jitdump__header(data, size, &h);

	if (err == -EAGAIN && size >= JT_JITDUMP_HEADER_MIN)
		__builtin_trap();	/* a whole header is never "more needed" */
	if (err) {
		if (err != -EAGAIN && err != -EPROTO && err != -EINVAL)
			__builtin_trap();
		return 0;
	}
	if (h.version != 1 || h.size < JT_JITDUMP_HEADER_MIN || h.size > 4096)
		__builtin_trap();
	for (off = h.size; off <= size && size - off >= JT_JITDUMP_REC_HDR;) {
		uint32_t rs = jt_jitdump__rec_size(data + off, size - off);
		size_t avail = size - off, len;

		if (!rs)
			break;	/* the source stops following the file here */
		if (rs < JT_JITDUMP_REC_HDR || rs > JT_JITDUMP_REC_MAX)
			__builtin_trap();
		len = rs < PREFIX_MAX ? rs : PREFIX_MAX;
		parse(data + off, len < avail ? len : avail, rs);
		if (rs > avail)
			break;	/* not all written yet: the source waits for the rest */
		off += rs;
	}
	return 0;
}
