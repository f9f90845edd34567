// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the ring-buffer record decoder (user/sources/ring_decode.h) on untrusted bytes.
 * What it accepts is read through, byte by byte, so that a pointer it hands out beyond
 * the record is caught by ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/ring_decode.h"

static volatile unsigned char sink;	/* keeps the reads from being optimized out */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union jt_event_buf b;
	const struct jt_event *ev = &b.ev;
	unsigned char sum = 0;
	uint8_t *copy;
	size_t i;

	/* an exact-size, 8-byte aligned copy, as the ring buffer hands records over */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!jt_decode(copy, size, &b)) {
		/* the event is whole in itself: everything it says it holds lies inside it */
		if (ev->len % 8 || ev->len < JT_EVENT_FIXED || ev->len > JT_EVENT_MAX ||
		    ev->ts != jt_decode__ts(copy) || ev->type == JT_EV_JAVA_CODE)
			__builtin_trap();
		if (ev->type == JT_EV_CODE_LOAD || ev->type == JT_EV_EXEC) {
			if (JT_EVENT_FIXED + ev->str_len >= ev->len || jt_event__str(ev)[ev->str_len])
				__builtin_trap();
			for (i = 0; i < ev->str_len; i++)
				sum += (unsigned char)jt_event__str(ev)[i];
		}
		if (ev->type == JT_EV_SAMPLE) {
			if (JT_EVENT_FIXED + 8 * ((size_t)ev->nr_kernel + ev->nr_user) > ev->len)
				__builtin_trap();
			for (i = 0; i < (size_t)ev->nr_kernel + ev->nr_user; i++)
				sum += (unsigned char)jt_event__ips(ev)[i];
		}
	}
	sink = sum;
	free(copy);
	return 0;
}
