// SPDX-License-Identifier: GPL-2.0
/* Draining the BPF ring buffer into a callback, without per-record wakeups. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "ringbuf.h"
#include "util.h"

struct jt_rb {
	struct ring_buffer *rb;
	jt_rb_cb cb;
	void *ctx;
};

static int on_record(void *ctx, void *data, size_t len)
{
	struct jt_rb *r = ctx;

	return r->cb(r->ctx, data, len);
}

struct jt_rb *jt_rb__new(int map_fd, jt_rb_cb cb, void *ctx)
{
	struct jt_rb *r = calloc(1, sizeof(*r));

	if (!r) {
		jt_err("out of memory");
		return NULL;
	}
	r->cb = cb;
	r->ctx = ctx;
	r->rb = ring_buffer__new(map_fd, on_record, r, NULL);
	if (!r->rb) {
		jt_err("opening the ring buffer: %s", strerror(errno));
		free(r);
		return NULL;
	}
	return r;
}

void jt_rb__free(struct jt_rb *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	free(r);
}

long jt_rb__consume(struct jt_rb *r)
{
	int n = ring_buffer__consume(r->rb);

	if (n < 0)
		jt_err("reading the ring buffer: %s", strerror(-n));
	return n;
}
