// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the calls-region source (user/sources/callbuf.h) on a region a hostile
 * process wrote. The input's first 48 bytes are the region's header (its clock the TSC or
 * CLOCK_MONOTONIC, as the input says), the rest its slots,
 * in a buffer of exactly that size (ASan catches a read past it). It is taken, drained in
 * small steps, rewritten under the reader (the input again, reversed, as a writer racing
 * it would) and drained again: every call delivered must be well-formed and of the one pid,
 * and the work bounded.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jt_callbuf.h"
#include "sources/callbuf.h"
#include "sources/tscclock.h"

#define PID 4242
#define ME 7
#define NOW (1ULL << 40)
#define STEP 5		/* records a drain */
#define DRAINS 8

struct count {
	uint64_t n;
};

static uint64_t fixed_now(void *ctx)
{
	(void)ctx;
	return NOW;
}

/* The TSC's pairs: 3 ticks a ns, now at 3 * NOW. */
static int tsc_pair(void *ctx, uint64_t *tsc, uint64_t *ns, uint64_t *width)
{
	(void)ctx;
	*ns = NOW;
	*tsc = 3 * NOW;
	*width = 1;
	return 0;
}

/* Every event well-formed: its size its type's, its times within the clock's. */
static int check(void *ctx, const struct jt_event *ev)
{
	struct count *c = ctx;

	if (ev->pid != PID || !ev->tid || ev->tid >= JT_PID_LIMIT || !ev->ts || ev->ts > NOW)
		__builtin_trap();
	switch (ev->type) {
	case JT_EV_ENTER:
	case JT_EV_LEAVE:
		if (ev->len != JT_EVENT_CALL_LEN || (ev->id & JT_CALLBUF_KINDS))
			__builtin_trap();
		break;
	case JT_EV_CALL_SPAN:	/* its enter time and own time where the collector reads them */
		if (ev->len != JT_EVENT_FIXED || (ev->sum_of & JT_CALLBUF_KINDS) ||
		    !ev->sum_incl_ns || ev->sum_incl_ns > ev->ts ||
		    ev->sum_excl_ns > ev->ts - ev->sum_incl_ns)
			__builtin_trap();
		break;
	case JT_EV_CALL_SUM:
		if (ev->len != JT_EVENT_FIXED || !ev->sum_of || (ev->sum_of & JT_CALLBUF_KINDS) ||
		    !ev->sum_calls + !ev->sum_incl_ns + !ev->sum_excl_ns == 3)
			__builtin_trap();
		break;
	default:
		__builtin_trap();
	}
	c->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t hdr = sizeof(struct jt_callbuf_hdr), len, i;
	struct count c = { 0 };
	struct jt_callbuf *cb;
	struct jt_tscclock *tc;
	const char *why;
	long n;
	char *mem;
	int k;

	if (size < hdr + 1)
		return 0;
	len = JT_CALLBUF_HDR_SIZE + (size - hdr - 1);
	mem = aligned_alloc(64, (len + 63) & ~(size_t)63);
	if (!mem)
		return 0;
	memset(mem, 0, len);
	memcpy(mem, data + 1, hdr);
	memcpy(mem + JT_CALLBUF_HDR_SIZE, data + 1 + hdr, size - hdr - 1);
	/* the first byte: whether we listen (a region handed over is ours from the first) */
	cb = jt_callbuf__take(mem, len, PID, ME, data[0] & 1, &why);
	if (!cb) {
		if (!why)
			__builtin_trap();
		free(mem);
		return 0;
	}
	jt_callbuf__set_clock(cb, fixed_now, NULL);
	tc = jt_tscclock__new(tsc_pair, NULL);
	if (!tc)
		__builtin_trap();
	jt_tscclock__add(tc, NOW, NOW / 3, 1);
	jt_callbuf__set_tscclock(cb, tc);
	/* the first byte's second bit: summary mode, its third: with --calls-min 1 us */
	if ((data[0] & 2) && jt_callbuf__want_sums(cb, data[0] & 4 ? 1000 : UINT64_MAX) == -ENOMEM)
		__builtin_trap();
	for (k = 0; k < DRAINS; k++) {
		n = jt_callbuf__drain(cb, STEP, check, &c);
		if (n < 0 || n > STEP || jt_callbuf__drain_sums(cb, k & 1 ? NOW / 2 : 0, check, &c))
			__builtin_trap();
		if (k == DRAINS / 2)	/* the process rewrites its slots under us */
			for (i = JT_CALLBUF_HDR_SIZE; i < len; i++)
				mem[i] ^= data[size - 1 - (i - JT_CALLBUF_HDR_SIZE) % size];
	}
	jt_callbuf__close(cb);
	jt_tscclock__free(tc);
	free(mem);
	return 0;
}
