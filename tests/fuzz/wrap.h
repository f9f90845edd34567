/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the log fuzzers: raw record bytes wrapped in a valid header (sealed, every flag records
 * can contradict set) and one block (number 0) with the right crc32, so that mutated records
 * get past the header and block checks. Include once; link user/log/format.c.
 */
#ifndef JT_FUZZ_WRAP_H
#define JT_FUZZ_WRAP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "jt_log_format.h"
#include "log/format.h"

/* header + one block of raw bytes into *out (malloc'd); returns its length or 0. */
static size_t fuzz_wrap(const uint8_t *raw, size_t len, uint8_t **out)
{
	struct jt_log_header h = { .sample_hz = 99,
				   .flags = JT_LOG_F_CALLS | JT_LOG_F_KSTACK | JT_LOG_F_OFFCPU };
	size_t room = sizeof(h) + sizeof(struct jt_log_block) + compressBound(len) + 64;
	struct jt_log_block b = { .magic = JT_LOG_BLOCK_MAGIC, .rawsize = len };
	z_stream zs = { 0 };
	uint8_t *buf = malloc(room);

	jt_logfmt__seal(&h);
	if (!buf || deflateInit2(&zs, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)) {
		free(buf);
		return 0;
	}
	zs.next_in = (uint8_t *)raw;
	zs.avail_in = len;
	zs.next_out = buf + sizeof(h) + sizeof(b);
	zs.avail_out = room - sizeof(h) - sizeof(b);
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(buf);
		return 0;
	}
	b.zsize = zs.total_out;
	b.crc32 = crc32(0, raw, len);
	deflateEnd(&zs);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &b, sizeof(b));
	*out = buf;
	return sizeof(h) + sizeof(b) + b.zsize;
}

/*
 * The input as the fuzzers read it: first byte odd, the rest wrapped by fuzz_wrap (into
 * *file, to free); even, the rest as it is. Returns the log's length, 0 to skip the input.
 */
static size_t fuzz_input(const uint8_t **data, size_t size, uint8_t **file)
{
	const uint8_t *d = *data;

	*file = NULL;
	if (!size)
		return 0;
	if (!(d[0] & 1)) {
		*data = d + 1;
		return size - 1;
	}
	size = fuzz_wrap(d + 1, size - 1, file);
	*data = *file;
	return size;
}

#endif
