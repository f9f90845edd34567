/* SPDX-License-Identifier: GPL-2.0 */
/* Putting records back in timestamp order within a bounded window. */
#ifndef JT_REORDER_H
#define JT_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Records reach the ring buffer nearly, but not exactly, in time order (each CPU takes its
 * timestamp before it reserves). The reorder buffer holds copies sorted by timestamp, equal
 * timestamps in arrival order, and lets out those older than a watermark.
 */
struct jt_reorder;

typedef void (*jt_reorder_cb)(void *ctx, const void *rec, size_t len);

/* Copies up to this size come from a pool, not malloc: a decoded event's (96). */
#define JT_REORDER_SMALL 96
/* Records up to this size are held in their slot, not copied again: a short enter or leave's. */
#define JT_REORDER_INLINE 48
/* What a slot, in the array or the heap, takes. */
#define JT_REORDER_SLOT 64

/*
 * The bounds on what is held: max_records records and max_bytes bytes (0: no byte bound),
 * a record costing its copy (at least JT_REORDER_SMALL bytes) plus a 64-byte slot, or, held
 * in its slot, twice the slot. Past either, flush lets the oldest out early. With the ring
 * of slots (at most two slots a record held) and the pool of small copies (kept at its high
 * mark), memory stays under about 2 x max_bytes.
 */
struct jt_reorder *jt_reorder__new(size_t max_records, size_t max_bytes);
void jt_reorder__free(struct jt_reorder *r);
/*
 * Copy a record in. Returns 0; -ERANGE if ts is older than a record already let out
 * (the window was too short: the caller counts it as lost); -ENOMEM.
 */
int jt_reorder__push(struct jt_reorder *r, uint64_t ts, const void *rec, size_t len);
/*
 * n records of len bytes each, one after the other at recs, each beginning with its uint64_t
 * timestamp (a run of a calls region's, in time order): taken in as push takes them, one by
 * one, at the cost of one call; short enters and leaves (JT_EVENT_CALL_LEN) in order into a
 * lane of 32 bytes a call, given back to flush's callback as the short events they came as.
 * Returns how many were refused as older than a record already let out (-ERANGE each: the
 * caller counts them lost); -ENOMEM, the rest not taken.
 */
long jt_reorder__push_run(struct jt_reorder *r, const void *recs, size_t n, size_t len);
/* Let out, oldest first, every record with ts <= upto, then any beyond the bounds. */
size_t jt_reorder__flush(struct jt_reorder *r, uint64_t upto, jt_reorder_cb cb, void *ctx);
/* Whether more is held than the bounds allow (a flush would let some out early). */
bool jt_reorder__over(const struct jt_reorder *r);
size_t jt_reorder__count(const struct jt_reorder *r);
/* Bytes held, as the bound counts them. */
size_t jt_reorder__bytes(const struct jt_reorder *r);
/* Timestamp of the last record let out: nothing older can be pushed any more. */
uint64_t jt_reorder__floor(const struct jt_reorder *r);

#endif
