/* SPDX-License-Identifier: GPL-2.0 */
/* Agents' calls regions (include/jt_callbuf.h): found, checked, taken and drained as calls. */
#ifndef JT_CALLBUF_SRC_H
#define JT_CALLBUF_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/event.h"

/*
 * One enter or leave read from a region, as the pipeline's event (JT_EVENT_CALL_LEN bytes:
 * the drain knows all it says, nothing is encoded to be decoded again); in summary mode also
 * a JT_EV_CALL_SUM or JT_EV_CALL_SPAN. Return nonzero to stop the drain (the log failed).
 */
typedef int (*jt_callbuf_emit)(void *ctx, const struct jt_event *ev);
/*
 * The same for an enter or leave, typed: what the drain knows, in registers (an event built
 * in memory and read back at once stalls on the fields just stored). Nonzero: stop.
 */
typedef int (*jt_callbuf_call)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t id,
			       bool leave);

/* n calls thread tid (0: not known) lost to its full ring since it was last told. */
typedef void (*jt_callbuf_lost)(void *ctx, uint32_t tid, uint64_t n);

struct jt_callbuf_stats {
	uint64_t records;	/* delivered */
	uint64_t full;		/* lost in the process to a full ring (its counters' growth) */
	uint64_t bad;		/* records, indexes or sums refused */
	uint64_t sums;		/* summary mode: sums delivered */
	uint64_t spilled;	/* summary mode: calls one by one for want of room (the agent's) */
};

struct jt_callbuf;

/*
 * Take the region of size bytes at mem, the memory of process pid, for collector me: its
 * geometry is checked against size and copied once. What it held before is skipped (it was
 * written before this recording), unless it is ours from its first record: named me, or
 * (handed) JT_CALLBUF_HANDED, sent to the socket we listen on. NULL with *why set when it
 * is not a region of ours or another live collector drains it. mem stays the caller's
 * unless given with jt_callbuf__map.
 */
struct jt_callbuf *jt_callbuf__take(void *mem, size_t size, uint32_t pid, uint32_t me,
				    bool handed, const char **why);
/*
 * pid's region found in proc_root/PID/maps and opened through map_files (root only): its
 * fd, the process's uid into *uid; -1 if it has none (an open refused is said).
 */
int jt_callbuf__find(const char *proc_root, uint32_t pid, uid_t *uid);
/*
 * Check that the file at fd is a sealed memfd of mode 0600 owned by uid, map it and take
 * it (the caller closes fd). NULL when refused, said once with why.
 */
struct jt_callbuf *jt_callbuf__map(int fd, uint32_t pid, uid_t uid, uint32_t me, bool handed);
/*
 * The socket at path agents hand their regions to (JT_CALLBUF_SOCK), listening: its fd, or
 * -errno. Any user may connect; the kernel says who did.
 */
int jt_callbuf__listen(const char *path);
/* A connection waiting on sock: its fd (nonblocking), -EAGAIN when none waits. */
int jt_callbuf__accept(int sock);
/*
 * The region sent on connection conn: its fd, and its sender's pid and uid as the kernel
 * says them; -EAGAIN when nothing was sent yet, -EBADMSG for anything else (a message that
 * is not one, its fds closed; a sender that closed sending nothing).
 */
int jt_callbuf__receive(int conn, uint32_t *pid, uid_t *uid);
/*
 * Deliver at most max records, each checked: an index that does not fit the ring skips the
 * slot's records, a time later than the clock's when the index was read (or 0), or a thread
 * id out of range, the record; each counted bad. Exited threads' slots, once empty, are
 * given back. Returns the records delivered, or -1 when the emitter said stop.
 */
long jt_callbuf__drain(struct jt_callbuf *cb, uint64_t max, jt_callbuf_emit emit, void *ctx);
/*
 * The same, each enter and leave told to call, the rest (spans, sums) to emit; and only
 * records timed upto or before (see jt_callbuf__drain_upto).
 */
long jt_callbuf__drain_calls(struct jt_callbuf *cb, uint64_t max, uint64_t upto,
			     jt_callbuf_call call, jt_callbuf_emit emit, void *ctx);
/*
 * The same, but only records timed upto or before: the later ones stay for a later drain.
 * A reader that has read its other sources up to upto lets no call out before an older
 * event of theirs (a code load that names it) is read.
 */
long jt_callbuf__drain_upto(struct jt_callbuf *cb, uint64_t max, uint64_t upto,
			    jt_callbuf_emit emit, void *ctx);
/*
 * Summary mode: ask the agent to sum calls per method and thread in its slots (calls that
 * took min_ns or more still one by one, as spans; UINT64_MAX: none). -ENOTSUP when its
 * agent keeps no table of sums (its calls stay one by one), -ENOMEM.
 */
int jt_callbuf__want_sums(struct jt_callbuf *cb, uint64_t min_ns);
/* Every call one by one (a summary a recording before us asked for is not ours to keep). */
void jt_callbuf__want_each(struct jt_callbuf *cb);
/*
 * Summary mode: deliver what every slot's sums added since last read (jt_ev_callsum, each
 * checked), timed now, or at `at` if earlier and nonzero (the process's exit: they come
 * before it); an exited thread's last sums are delivered by drain before its slot is given
 * back. 0, or -1 when the emitter said stop.
 */
int jt_callbuf__drain_sums(struct jt_callbuf *cb, uint64_t at, jt_callbuf_emit emit, void *ctx);
/*
 * How drain times the last sums of exited threads, read before their slots are given back:
 * as drain_sums' at (UINT64_MAX, the default: now), or 0: not now (the slots wait, their
 * sums unread, for a drain told a time).
 */
void jt_callbuf__sums_at(struct jt_callbuf *cb, uint64_t at);
/* When its agent says it made the region (CLOCK_MONOTONIC ns), 0: it does not say. */
uint64_t jt_callbuf__made(const struct jt_callbuf *cb);
/*
 * Let go of the pages of the rings read so far (they are the process's; mapped, they count
 * in the recorder's resident size): the next drain maps again what it reads.
 */
void jt_callbuf__trim(struct jt_callbuf *cb);
/* The clock drains check times against (default CLOCK_MONOTONIC ns): tests set theirs. */
void jt_callbuf__set_clock(struct jt_callbuf *cb, uint64_t (*clock)(void *ctx), void *ctx);
/*
 * Who is told, as drains find them, of each thread's calls lost to its full ring (counted
 * in stats' full all the same); NULL: no one.
 */
void jt_callbuf__on_lost(struct jt_callbuf *cb, jt_callbuf_lost lost, void *ctx);
struct jt_tscclock;
/*
 * The calibration a region whose agent writes TSC values is read through (the caller's,
 * shared by regions; without one such a region's records are all refused as bad).
 */
void jt_callbuf__set_tscclock(struct jt_callbuf *cb, struct jt_tscclock *tsc);
/* Whether the region's records count the TSC (said by its agent, once). */
bool jt_callbuf__uses_tsc(const struct jt_callbuf *cb);
void jt_callbuf__stats(const struct jt_callbuf *cb, struct jt_callbuf_stats *st);
uint32_t jt_callbuf__pid(const struct jt_callbuf *cb);
/* The file behind the region (0, 0 for memory given to jt_callbuf__take). */
void jt_callbuf__file(const struct jt_callbuf *cb, uint64_t *dev, uint64_t *ino);
/* Give the region back: the agent's calls go to the stubs again (it can still be drained). */
void jt_callbuf__release(struct jt_callbuf *cb);
/* Give it back if not yet done, and unmap what we mapped. */
void jt_callbuf__close(struct jt_callbuf *cb);

#endif
