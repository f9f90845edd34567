// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: whole logs on untrusted bytes through every offline view, as the
 * commands run them: report (text and JSON), flamegraph (SVG and folded) and the pprof,
 * speedscope and chrome exports. The first byte picks the mode: its low bit as in
 * fuzz_log.c (even, the rest is a whole file; odd, the rest is the inflated content of one
 * block, wrapped in a valid header and block, so that mutated records get past the block
 * checks and reach the views); bits 1-3 the view (one a run: seven at once ran at a
 * seventh of the speed); bit 4 strict or --salvage. Each input is handed over as a file
 * (a memfd), the views' only way in.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "export/chrome.h"
#include "export/pprof.h"
#include "export/speedscope.h"
#include "views/flamegraph.h"
#include "log/log.h"
#include "views/report.h"
#include "wrap.h"

/* The views print to a stream: /dev/null, opened once. */
static FILE *sink(void)
{
	static FILE *null;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!null)
		__builtin_trap();
	return null;
}

/* A memfd holding the input, reused across runs; its path for the views. */
static const char *as_file(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz_views", MFD_CLOEXEC);
		if (fd < 0)
			__builtin_trap();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		__builtin_trap();
	return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jt_report_opts ro = { 0 };
	struct jt_flame_opts fo = { 0 };
	struct jt_filter filter;
	uint8_t *file = NULL;
	unsigned int view;
	const char *path;
	FILE *out = sink();

	if (!size)
		return 0;
	view = (data[0] >> 1) & 7;
	jt_filter__init(&filter);
	filter.salvage = data[0] & 0x10;
	size = fuzz_input(&data, size, &file);
	if (!size)
		return 0;
	path = as_file(data, size);
	ro.path = fo.path = path;
	ro.filter = fo.filter = filter;
	switch (view) {
	case 0:
		jt_report(out, &ro);
		break;
	case 1:
		ro.json = true;
		ro.sort = JT_REPORT_BY_TOTAL;
		jt_report(out, &ro);
		break;
	case 2:
		jt_flamegraph(out, &fo);
		break;
	case 3:
		fo.folded = true;
		fo.annotate = true;
		jt_flamegraph(out, &fo);
		break;
	case 4:
		jt_export_pprof(out, path, &filter);
		break;
	case 5:
		jt_export_speedscope(out, path, &filter);
		break;
	default:
		jt_export_chrome(out, path, &filter);
		break;
	}
	fflush(out);
	free(file);
	return 0;
}
