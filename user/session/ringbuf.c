// SPDX-License-Identifier: GPL-2.0
/*
 * Draining the BPF ring buffer into a callback. We read the mapped ring ourselves rather
 * than through libbpf's ring_buffer__consume(), which publishes the consumer position after
 * every record: the producers read that cache line on every reserve, and at millions of
 * records a second its bouncing between CPUs doubled the cost of a traced call here. We
 * publish it once per batch (and every so often within a long one). The data pages are
 * mapped once, not twice in a row as libbpf does: a second mapping of a 64 MiB ring adds
 * 64 MiB to our RSS for the same pages. The few records that wrap around the end are put
 * together in a buffer of our own.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "session/ringbuf.h"
#include "base/util.h"

#define RB_HDR_SZ 8		/* struct bpf_ringbuf_hdr: u32 len, u32 pg_off */
#define RB_BUSY (1U << 31)
#define RB_DISCARD (1U << 30)

struct jt_rb {
	jt_rb_cb cb;
	void *ctx;
	unsigned long *consumer_pos;	/* our page, read-write */
	unsigned long *producer_pos;	/* the kernel's page, read-only */
	unsigned char *data;		/* mapped once: a record may wrap around the end */
	size_t mask;
	unsigned char *wrap;		/* a wrapped record, put together */
	size_t wrap_cap;
	size_t page;
	size_t publish_every;		/* bytes consumed between publications */
	bool behind;			/* the last consume stopped short of what it saw */
};

struct jt_rb *jt_rb__new(int map_fd, jt_rb_cb cb, void *ctx)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	struct jt_rb *r = calloc(1, sizeof(*r));
	void *p;

	if (!r) {
		jt_err("out of memory");
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len)) {
		jt_err("reading the ring buffer's size: %s", strerror(errno));
		goto fail;
	}
	r->cb = cb;
	r->ctx = ctx;
	r->page = sysconf(_SC_PAGESIZE);
	r->mask = info.max_entries - 1;
	r->publish_every = info.max_entries / 8;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		jt_err("mapping the ring buffer's consumer page: %s", strerror(errno));
		goto fail;
	}
	r->consumer_pos = p;
	p = mmap(NULL, r->page + (size_t)info.max_entries, PROT_READ, MAP_SHARED, map_fd,
		 r->page);
	if (p == MAP_FAILED) {
		jt_err("mapping the ring buffer's data: %s", strerror(errno));
		munmap(r->consumer_pos, r->page);
		goto fail;
	}
	r->producer_pos = p;
	r->data = (unsigned char *)p + r->page;
	return r;
fail:
	free(r);
	return NULL;
}

void jt_rb__free(struct jt_rb *r)
{
	if (!r)
		return;
	munmap(r->consumer_pos, r->page);
	munmap(r->producer_pos, r->page + r->mask + 1);
	free(r->wrap);
	free(r);
}

/* The len bytes of a record's data at ring offset off, in one piece; NULL: out of memory. */
static const void *record_data(struct jt_rb *r, size_t off, size_t len)
{
	size_t first = r->mask + 1 - off;

	if (len <= first)
		return r->data + off;
	if (len > r->wrap_cap) {
		unsigned char *w = realloc(r->wrap, len);

		if (!w)
			return NULL;
		r->wrap = w;
		r->wrap_cap = len;
	}
	memcpy(r->wrap, r->data + off, first);
	memcpy(r->wrap + first, r->data, len - first);
	return r->wrap;
}

/* Records between two looks at the clock: a few ms of joining at most. */
#define CLOCK_EVERY 4096

/* Consume up to where the producers are, again while they move on if chase, or until. */
static long consume(struct jt_rb *r, bool chase, uint64_t until)
{
	unsigned long cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	unsigned long published = cons, prod;
	bool again = true;
	long n = 0;
	int err;

	r->behind = true;	/* until it reaches the end it saw */
	while (again) {
		again = chase;
		prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
		if (cons >= prod)
			break;
		while (cons < prod) {
			/* the 8-byte header never wraps: records are 8-aligned */
			unsigned char *rec = r->data + (cons & r->mask);
			__u32 len = __atomic_load_n((__u32 *)rec, __ATOMIC_ACQUIRE);
			size_t off = (cons + RB_HDR_SZ) & r->mask;
			const void *data;

			if (len & RB_BUSY)	/* reserved, not yet submitted */
				goto out;
			cons += jt_round8((len & ~RB_DISCARD) + RB_HDR_SZ);
			if (!(len & RB_DISCARD)) {
				data = record_data(r, off, len & ~RB_DISCARD);
				if (!data)
					jt_err("out of memory for a record of %u bytes",
					       len & ~RB_DISCARD);
				err = data ? r->cb(r->ctx, data, len & ~RB_DISCARD) : -ENOMEM;
				n++;
				if (err) {
					__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
					return err;
				}
				if (!(n % CLOCK_EVERY) && jt_now_ns() >= until)
					goto out;
			}
			if (cons - published >= r->publish_every) {
				__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
				published = cons;
			}
		}
	}
	r->behind = false;
out:
	if (cons != published)
		__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	return n;
}

long jt_rb__consume_until(struct jt_rb *r, uint64_t until)
{
	return consume(r, false, until);
}

bool jt_rb__behind(const struct jt_rb *r)
{
	return r->behind;
}

long jt_rb__consume(struct jt_rb *r)
{
	return consume(r, true, UINT64_MAX);
}
