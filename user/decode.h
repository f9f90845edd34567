/* SPDX-License-Identifier: GPL-2.0 */
/* Checking ring-buffer records (include/jt_events.h) and turning them into jt_event. */
#ifndef JT_DECODE_H
#define JT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "jt_events.h"

/* One event, pointing into the record it was decoded from (or into its own name_buf). */
struct jt_event {
	uint64_t ts;
	uint32_t type;		/* enum jt_ev_type */
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;		/* sample */
	uint64_t id;		/* enter, leave, code load/unload: the process's method id */
	uint64_t start;		/* code load */
	uint64_t size;		/* code load */
	uint32_t src;		/* code load: enum jt_src */
	uint32_t unsure_us;	/* code load: live from some time in (ts, ts + this] */
	uint32_t child_pid;	/* fork */
	uint32_t exit_code;	/* exit */
	uint32_t str_len;
	const char *str;	/* code load: name; exec: path (not NUL-terminated) */
	const char *comm;	/* exec, exit, fork: JT_COMM_LEN bytes, maybe without NUL */
	uint16_t nr_kernel;	/* sample: ips[0..nr_kernel) are kernel frames, */
	uint16_t nr_user;	/* then ips[nr_kernel..nr_kernel+nr_user) user frames */
	const __u64 *ips;
	/* A name composed while decoding (HotSpot USDT): str points here. Last, and not
	 * cleared, so that decoding other records does not pay for it. */
	char name_buf[JT_NAME_MAX];
};

/*
 * Decode the record at data (len bytes, as the ring buffer delivered it). Returns 0, or
 * -EINVAL for a malformed record (unknown type, sizes that do not fit). Never reads
 * outside [data, data+len). A JT_EV_JAVA_CODE record comes out as a JT_EV_CODE_LOAD of
 * source JT_SRC_USDT named "pkg.Class.method(params)".
 */
int jt_decode(const void *data, size_t len, struct jt_event *ev);

/* Timestamp of a record that jt_decode accepted. */
static inline uint64_t jt_decode__ts(const void *data)
{
	return ((const struct jt_ev_hdr *)data)->ts;
}

#endif
