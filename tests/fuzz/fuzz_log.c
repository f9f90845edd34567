// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the .jtl reader (user/log/log.h) on untrusted bytes, and what every
 * offline command does with each record it returns: define it in the log view and name
 * each frame of a sample. The first byte picks the mode: even, the rest is a whole file;
 * odd, the rest is the inflated content of one block, wrapped here in a valid header and
 * a block with the right crc32, so that mutated records get past the block checks.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "log/log.h"
#include "log/format.h"
#include "log/view.h"
#include "wrap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct jt_rec_hdr *rec;
	struct jt_log_reader *r;
	uint8_t *file = NULL;
	struct jt_lv *lv;
	enum jt_lv_kind kind;
	char buf[256];

	size = fuzz_input(&data, size, &file);
	if (!size)
		return 0;
	r = jt_logr__open_mem(data, size);
	if (!r) {
		free(file);
		return 0;
	}
	lv = jt_lv__new();
	while ((rec = jt_logr__next(r))) {
		if (jt_logfmt__invalid(rec, rec->size))
			__builtin_trap();	/* the reader returned what it must reject */
		if (!lv)
			continue;
		jt_lv__add(lv, rec);
		if (rec->type == JT_REC_SAMPLE) {
			const struct jt_rec_sample *s = (const void *)rec;
			unsigned i;

			for (i = 0; i < s->nr_frames; i++)
				jt_lv__frame(lv, &s->frames[i], buf, sizeof(buf), &kind);
		}
	}
	if (jt_logr__state(r) == JT_LOGR_TRUNCATED || jt_logr__state(r) == JT_LOGR_CORRUPT)
		(void)jt_logr__why(r);
	jt_lv__free(lv);
	jt_logr__close(r);
	free(file);
	return 0;
}
