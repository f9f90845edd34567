// SPDX-License-Identifier: GPL-2.0
/* Error reporting, number parsing and clocks shared by the collector modules. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/util.h"

void jt_err(const char *fmt, ...)
{
	va_list ap;

	fputs("jitrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int jt_parse_uint(const char *what, const char *s, unsigned long min, unsigned long max,
		  unsigned long *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	/* strtoul takes "-1" as ULONG_MAX: a sign is never a whole number here */
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		jt_err("%s: '%s' is not a whole number from %lu to %lu", what, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int jt_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

uint64_t jt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int jt_wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t now;
	int n;

	do {
		now = jt_now_ns();
		/* rounded up: a wait of 0 ms would return at once, before the deadline */
		n = poll(&p, 1, now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

int jt_array_grow(void *pp, size_t *cap, size_t need, size_t elem)
{
	void **p = pp;
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}
