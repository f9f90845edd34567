// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the perf map line parser (user/sources/perfmap.h) on untrusted bytes. The
 * input is fed in two pieces, split where its first byte says, so that partial lines kept
 * between feeds are exercised as a growing map file exercises them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sources/perfmap.h"

struct seen {
	size_t entries;
	unsigned char sum;	/* touches every name byte, so ASan checks each read */
};

static void on_entry(void *ctx, const struct jt_perfmap_entry *e)
{
	struct seen *s = ctx;
	size_t i;

	s->entries++;
	for (i = 0; i < e->name_len; i++)
		s->sum += (unsigned char)e->name[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jt_perfmap_parser *p;
	struct seen s = { 0 };
	size_t cut, n;

	if (!size)
		return 0;
	p = jt_perfmap_parser__new();
	if (!p)
		return 0;
	cut = size > 1 ? data[0] % size : 0;
	data++;
	size--;
	if (cut > size)
		cut = size;
	n = jt_perfmap_parser__feed(p, (const char *)data, cut, on_entry, &s);
	n += jt_perfmap_parser__feed(p, (const char *)data + cut, size - cut, on_entry, &s);
	if (n != s.entries)
		__builtin_trap();	/* the count returned must match the callbacks made */
	jt_perfmap_parser__reset(p);
	jt_perfmap_parser__feed(p, (const char *)data, size, on_entry, &s);
	(void)jt_perfmap_parser__bad_lines(p);
	jt_perfmap_parser__free(p);
	return 0;
}
