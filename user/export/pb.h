/* SPDX-License-Identifier: GPL-2.0 */
/* A tiny protocol buffers encoder (wire format only), enough to write a pprof profile. */
#ifndef JT_PB_H
#define JT_PB_H

#include <stddef.h>
#include <stdint.h>

enum jt_pb_wire {
	JT_PB_VARINT = 0,
	JT_PB_LEN = 2,
};

/* A growing buffer; a zeroed one is empty. After a failed allocation err is -ENOMEM and
 * every later call does nothing, so a caller checks once at the end. */
struct jt_pb {
	uint8_t *buf;
	size_t len, cap;
	int err;
};

void jt_pb__fini(struct jt_pb *b);
void jt_pb__varint(struct jt_pb *b, uint64_t v);
/* field as a varint (uint64, int64 and bool are all written this way) */
void jt_pb__uint(struct jt_pb *b, unsigned field, uint64_t v);
/* field as length-delimited bytes (string, bytes) */
void jt_pb__bytes(struct jt_pb *b, unsigned field, const void *p, size_t n);
/*
 * A length-delimited field whose content is written next (an embedded message or a packed
 * repeated field): begin returns a mark that end takes to fill in the length.
 */
size_t jt_pb__begin(struct jt_pb *b, unsigned field);
void jt_pb__end(struct jt_pb *b, size_t mark);

#endif
