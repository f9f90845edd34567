/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers every collector module uses: error reporting, numbers and rounding. */
#ifndef JT_UTIL_H
#define JT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Report an error once, where it can be explained: "jitrace: " + message + newline. */
void jt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The whole of s as a whole number from min to max, into *out. Returns 0, or -EINVAL
 * reported as "WHAT: 'S' is not a whole number from MIN to MAX".
 */
int jt_parse_uint(const char *what, const char *s, unsigned long min, unsigned long max,
		  unsigned long *out);
/* The whole of s as a finite number, into *out. Returns 0 or -EINVAL (the caller reports:
 * what makes sense, seconds or a ratio, is its to say). */
int jt_parse_double(const char *s, double *out);

/* Monotonic clock in ns, the clock of bpf_ktime_get_ns(). */
uint64_t jt_now_ns(void);
/*
 * Wait until fd is ready for events (poll's) or the jt_now_ns time deadline passes, through
 * EINTR: 0, -ETIMEDOUT, or -errno. For a runtime's socket, whose answer is bounded.
 */
int jt_wait_fd(int fd, short events, uint64_t deadline);

static inline size_t jt_round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * Make room for need elements of elem bytes in the array *pp of *cap elements, doubling
 * from 64; the array is unchanged on failure. Returns 0 or -ENOMEM.
 */
int jt_array_grow(void *pp, size_t *cap, size_t need, size_t elem);

#define JT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
