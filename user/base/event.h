/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector's one record type. Every source (the ring buffer, perf maps) hands these
 * on, decoded and checked once at its edge, names already composed; the reorder stage holds
 * copies of them and the join reads them. Nothing after a source decodes anything again.
 */
#ifndef JT_EVENT_H
#define JT_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "jt_events.h"

/*
 * Flat, so that it can be copied as bytes: its variable part (a name, a path or frames)
 * follows it in tail, len bytes in all. Names and paths are NUL-terminated in tail (a NUL
 * inside one is never there: sources replace or stop at it).
 */
struct jt_event {
	uint64_t ts;
	uint32_t len;		/* bytes, header and tail, a multiple of 8 */
	uint16_t type;		/* enum jt_ev_type; never JT_EV_JAVA_CODE */
	uint16_t src;		/* code load: enum jt_src */
	uint32_t pid;
	uint32_t tid;
	uint32_t str_len;	/* code load: name; exec: path (in tail) */
	uint32_t flags;		/* JT_EVENT_* */
	union {
		struct {		/* enter, leave, code load, move and unload */
			uint64_t id;		/* the process's method id, 0: none */
			uint64_t start;		/* code load, move: [start, start + size) */
			uint64_t size;
			/* code load: a time only known to a span (a perf-map line) is the
			 * span (ts, latest_ts]; 0 when ts is exact */
			uint64_t latest_ts;
		};
		struct {		/* sample and off-CPU: tail holds ips (then a copy of
					 * the user stack, off_stack_len bytes) */
			uint32_t cpu;
			uint16_t nr_kernel;	/* ips[0, nr_kernel) are kernel frames, */
			uint16_t nr_user;	/* then nr_user user frames, leaf first */
			char thread[JT_COMM_LEN];	/* the thread's name: maybe no NUL */
			/* off-CPU: ran again at ts after off_ns, having left at off_left_ts
			 * (a sum of short waits: when the first began) */
			uint64_t off_ns;
			uint64_t off_left_ts;
			uint32_t off_count;	/* waits: 1, or the short waits summed */
			uint16_t off_state;	/* enum jt_off_state */
			/* bytes of user stack copied from off_sp (off-CPU: when it left; a
			 * sample: when taken, with record --unwind cfi), 0: none */
			uint16_t off_stack_len;
			uint64_t off_sp, off_bp;	/* the user registers it was copied with */
		};
		struct {		/* code lines: tail holds nr_lines struct jt_line
					 * (jt_log_format.h), then names_len bytes of names */
			uint64_t lines_of;	/* the method id */
			uint32_t nr_lines;
			uint32_t names_len;
		};
		struct {		/* a piece of inlined scopes: tail holds str_len bytes
					 * of a JT_REC_INLINE payload, from inl_off of inl_total */
			uint64_t inl_of;	/* the method id */
			uint32_t inl_off;
			uint32_t inl_total;
		};
		struct {		/* a call sum, a span (calls regions' summary mode) */
			uint64_t sum_of;	/* the method id */
			uint64_t sum_calls;	/* sum: calls; span: 1 */
			uint64_t sum_incl_ns;	/* sum: inclusive time; span: its enter time */
			uint64_t sum_excl_ns;	/* exclusive time */
		};
		struct {		/* exec, exit, fork */
			uint32_t child_pid;	/* fork */
			uint32_t exit_code;	/* exit */
			char comm[JT_COMM_LEN];	/* as the kernel gave it: maybe no NUL */
			/* exec: the command line (arguments joined by spaces) follows the
			 * path's NUL in tail, args_len bytes and a NUL; 0: not known */
			uint32_t args_len;
		};
		struct {		/* mmap: tail holds the path, "" if not known */
			uint64_t map_start;	/* [map_start, map_end) maps the file */
			uint64_t map_end;
			uint64_t map_pgoff;	/* from this offset, in bytes */
			uint64_t map_ino;	/* the file: st_ino, st_dev (0, 0: the vdso) */
			uint64_t map_dev;
		};
	};
	uint64_t tail[];
};

/*
 * A code event read from a file after the fact (a perf map, a jitdump): when it arrives
 * later than its time, what it says was still true when it was read, so it is joined then
 * rather than counted as too late.
 */
#define JT_EVENT_LATE_OK 1u
/* A sample whose user leaf is where the kernel runs uprobes (include/jt_events.h) */
#define JT_EVENT_LEAF_XOL 2u		/* the [uprobes] page */
#define JT_EVENT_LEAF_TRAMP 4u		/* an [uprobes-trampoline] page */
/* a sample whose user ips are the kernel's frame-pointer walk (not the leaf alone) */
#define JT_EVENT_FP_WALK 8u

#define JT_EVENT_FIXED sizeof(struct jt_event)
/*
 * An enter or leave is read no further than its id: a source may hand it on this short (the
 * calls regions do, ten million a second), so that it costs 40 bytes to make and hold.
 */
#define JT_EVENT_CALL_LEN (offsetof(struct jt_event, id) + sizeof(uint64_t))
/* The largest event: an off-CPU record of two full stacks and a stack copy (names and paths
 * are shorter). */
#define JT_EVENT_MAX (JT_EVENT_FIXED + 2 * JT_MAX_FRAMES * sizeof(uint64_t) + JT_OFF_STACK_BYTES)

/* Room for any one event, for a source to build it in. */
union jt_event_buf {
	struct jt_event ev;
	char bytes[JT_EVENT_MAX];
};

/* Where a source hands its events: the pipeline's input. Returns 0 or -errno. */
typedef int (*jt_event_push_fn)(void *ctx, const struct jt_event *ev);

static inline const char *jt_event__str(const struct jt_event *ev)
{
	return (const char *)ev->tail;
}

/* An exec's command line, "" if not known. */
static inline const char *jt_event__args(const struct jt_event *ev)
{
	return ev->args_len ? jt_event__str(ev) + ev->str_len + 1 : "";
}

static inline const uint64_t *jt_event__ips(const struct jt_event *ev)
{
	return ev->tail;
}

/* A sample's or off-CPU event's copy of the user stack: off_stack_len bytes from off_sp. */
static inline const void *jt_event__stack(const struct jt_event *ev)
{
	return ev->tail + ev->nr_kernel + ev->nr_user;
}

/* The bytes an event with a tail of n bytes takes (a string's NUL counted in n). */
static inline uint32_t jt_event__size(size_t n)
{
	return (uint32_t)((JT_EVENT_FIXED + n + 7) & ~(size_t)7);
}

/* Put len bytes of s (no NUL among them) in ev's tail, NUL-terminated and padded, as its
 * str_len and len say. */
void jt_event__put_str(struct jt_event *ev, const char *s, size_t len);
/*
 * Make ev (in a buffer of JT_EVENT_MAX bytes) a code load of pid at ts, named by the len
 * bytes at name (cut to JT_NAME_MAX - 1; a NUL in it shown as '?').
 */
void jt_event__code(struct jt_event *ev, uint64_t ts, uint32_t pid, const char *name,
		    size_t len);

#endif
