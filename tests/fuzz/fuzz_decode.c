// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the ring-buffer record decoder (user/decode.h) on untrusted bytes.
 * What it accepts is read through, byte by byte, so that a pointer it hands out beyond
 * the record is caught by ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

static volatile unsigned char sink;	/* keeps the reads from being optimized out */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jt_event ev;
	unsigned char sum = 0;
	uint8_t *copy;
	size_t i;

	/* an exact-size, 8-byte aligned copy, as the ring buffer hands records over */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!jt_decode(copy, size, &ev)) {
		for (i = 0; ev.str && i < ev.str_len; i++)
			sum += (unsigned char)ev.str[i];
		for (i = 0; ev.comm && i < JT_COMM_LEN; i++)
			sum += (unsigned char)ev.comm[i];
		for (i = 0; ev.ips && i < (size_t)ev.nr_kernel + ev.nr_user; i++)
			sum += (unsigned char)ev.ips[i];
		if (ev.ts != jt_decode__ts(copy))
			__builtin_trap();
	}
	sink = sum;
	free(copy);
	return 0;
}
