// SPDX-License-Identifier: GPL-2.0
/* Protocol buffers wire format: varints and length-delimited fields into a buffer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/pb.h"

void jt_pb__fini(struct jt_pb *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

static int reserve(struct jt_pb *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return -1;
	if (b->len + n <= b->cap)
		return 0;
	for (cap = b->cap ? b->cap : 4096; cap < b->len + n; cap *= 2)
		;
	p = realloc(b->buf, cap);
	if (!p) {
		b->err = -ENOMEM;
		return -1;
	}
	b->buf = p;
	b->cap = cap;
	return 0;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p = (uint8_t)v;
}

void jt_pb__varint(struct jt_pb *b, uint64_t v)
{
	size_t n = varint_size(v);

	if (reserve(b, n))
		return;
	put_varint(b->buf + b->len, v);
	b->len += n;
}

static void tag(struct jt_pb *b, unsigned field, enum jt_pb_wire wire)
{
	jt_pb__varint(b, (uint64_t)field << 3 | wire);
}

void jt_pb__uint(struct jt_pb *b, unsigned field, uint64_t v)
{
	tag(b, field, JT_PB_VARINT);
	jt_pb__varint(b, v);
}

void jt_pb__bytes(struct jt_pb *b, unsigned field, const void *p, size_t n)
{
	tag(b, field, JT_PB_LEN);
	jt_pb__varint(b, n);
	if (reserve(b, n))
		return;
	if (n)
		memcpy(b->buf + b->len, p, n);
	b->len += n;
}

size_t jt_pb__begin(struct jt_pb *b, unsigned field)
{
	size_t mark;

	tag(b, field, JT_PB_LEN);
	mark = b->len;
	/* one byte for the length; end moves the content if it needs more */
	if (!reserve(b, 1))
		b->buf[b->len++] = 0;
	return mark;
}

void jt_pb__end(struct jt_pb *b, size_t mark)
{
	size_t n, k;

	if (b->err)
		return;
	n = b->len - mark - 1;
	k = varint_size(n);
	if (k > 1) {
		if (reserve(b, k - 1))
			return;
		memmove(b->buf + mark + k, b->buf + mark + 1, n);
		b->len += k - 1;
	}
	put_varint(b->buf + mark, n);
}
