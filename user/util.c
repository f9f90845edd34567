// SPDX-License-Identifier: GPL-2.0
/* Error reporting and clocks shared by the collector modules. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "util.h"

void jt_err(const char *fmt, ...)
{
	va_list ap;

	fputs("jitrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

uint64_t jt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
