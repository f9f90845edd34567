/* SPDX-License-Identifier: GPL-2.0 */
/* Draining the BPF ring buffer (one of the two modules that use libbpf). */
#ifndef JT_RINGBUF_H
#define JT_RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Called once per record, in ring order. Return 0 to go on. */
typedef int (*jt_rb_cb)(void *ctx, const void *data, size_t len);

struct jt_rb;

struct jt_rb *jt_rb__new(int map_fd, jt_rb_cb cb, void *ctx);
void jt_rb__free(struct jt_rb *r);
/*
 * Consume everything available now. The producers never wake us (a wakeup per record
 * costs 2 to 3 us here), so the caller calls this on a timer. Returns records consumed or
 * the callback's nonzero return.
 */
long jt_rb__consume(struct jt_rb *r);
/*
 * The same, but only what was there when called, and stop once CLOCK_MONOTONIC reaches
 * until (checked every few thousand records): producers that keep up with the reader never
 * hold its caller's loop.
 */
long jt_rb__consume_until(struct jt_rb *r, uint64_t until);
/*
 * Whether the last consume stopped short of the end it found when called (its time was up,
 * or a record there was reserved and not yet submitted): a record reserved before it began
 * may be unread. Records are stamped after their reserve: when not behind, every record
 * stamped before the consume began has been read.
 */
bool jt_rb__behind(const struct jt_rb *r);

#endif
