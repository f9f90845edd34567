/* SPDX-License-Identifier: MIT */
/* The calls region: per-thread rings of enter/leave records a traced process shares with jitrace. */
#ifndef JT_CALLBUF_H
#define JT_CALLBUF_H

#include <stdint.h>

/*
 * One region a process, made by libjitrace-agent: a memfd named JT_CALLBUF_NAME (mode
 * 0600, sealed against shrinking and growing, so that a collector that maps it can never
 * fault on a page the process cut away), mapped shared. The agent announces it by calling
 * jitrace_stub_calls_region(addr, size), which jitrace uprobes; a collector that starts
 * later finds it in /proc/PID/maps. Only root can open it (/proc/PID/map_files).
 *
 * A collector takes the region by writing its pid into `collector` (compare-and-swap from
 * 0, or from a collector that is gone). While `collector` is nonzero, enter/leave write
 * into the calling thread's slot; while it is zero they call the uprobed stubs as before,
 * so a collector that also probes the stubs sees every call across the handover.
 *
 * Each slot is one thread's single-producer single-consumer ring: the thread claims a free
 * slot (state FREE -> CLAIMED, compare-and-swap), writes records at head and publishes head
 * with a release store; the collector reads from tail to head and publishes tail. A full
 * ring never waits: the record is counted in `dropped`. At thread exit the slot turns
 * EXITED; the collector drains it and frees it (EXITED -> FREE) for another thread.
 *
 * A collector that wants new processes' calls from their first one (jitrace record -a, or
 * the command it runs) listens on the datagram socket JT_CALLBUF_SOCK. An agent that finds
 * it sends the region's memfd there (SCM_RIGHTS, never waiting: a full queue is a refusal)
 * and, if it went, sets `collector` to JT_CALLBUF_HANDED at once: no call goes to the stubs
 * before the collector has the region, and the collector has it even if the process is gone
 * before it looks. The kernel tells the collector the sender's pid.
 *
 * What a record's ts counts is the agent's choice, made once when it makes the region and
 * said in `clock`: the TSC (rdtsc, a third of clock_gettime's cost) when the kernel's own
 * clocksource is the TSC and the CPU says it is invariant, else CLOCK_MONOTONIC ns. The
 * collector turns TSC values into CLOCK_MONOTONIC ns by pairs of rdtsc and clock_gettime it
 * takes itself, so that calls stay joined with what BPF stamps.
 *
 * Summary mode (`mode` JT_CALLBUF_MODE_SUM, set by the collector, or by the agent as it
 * hands its region over if JT_CALLBUF_WANT says so): a thread keeps a shadow
 * stack of its open calls in its slot and adds each call that leaves into its slot's table
 * of sums (count, inclusive and exclusive time per method; a recursive method's time
 * inclusive of its outermost activation only), which the collector reads and logs as
 * deltas. Nothing is lost: a method that finds no room in the table, and a call nested
 * deeper than the stack, go into the ring as enter and leave as before (counted in
 * `spilled`, `deep`); a leave that closes no open call does too. A call that took `min` or
 * more (in the region's clock) goes into the ring as one span (JT_CALLBUF_SPAN: two
 * records, written at its leave) instead of the table.
 *
 * The process may write anything here: the collector copies the geometry and the clock
 * once, checks them against the memfd's size, and never trusts head, tail, state, tid or a
 * record.
 */
#define JT_CALLBUF_NAME "jitrace-calls"
#define JT_CALLBUF_SOCK "/run/jitrace-calls.sock"
/* What the collector listening on JT_CALLBUF_SOCK wants of new regions, while it does: the
 * text "sum\n" (summary mode from the first call). Root's, mode 0644; absent: each call. */
#define JT_CALLBUF_WANT "/run/jitrace-calls.want"
#define JT_CALLBUF_HANDED 0xffffffffu	/* `collector`: sent to JT_CALLBUF_SOCK's listener */
#define JT_CALLBUF_MAGIC 0x4c4c4143544a0001ULL	/* "\1\0JTCALL" little-endian, + version */
#define JT_CALLBUF_VERSION 1
#define JT_CALLBUF_SLOTS 64		/* threads that write at once; more use the stubs */
/*
 * Records a slot (4 MiB, resident only as a thread writes them): 26 ms at 5M calls/s, what
 * a collector kept off its CPU by a busy host must ride out (1 MiB lost 0.1% of a minute at
 * that rate on an idle machine, bench/RESULTS.md)
 */
#define JT_CALLBUF_RECS (1u << 18)
#define JT_CALLBUF_HDR_SIZE 4096
#define JT_CALLBUF_SUMS 256		/* methods a thread sums (a power of two) */
#define JT_CALLBUF_DEPTH 256		/* calls a thread's summary stack holds open */
#define JT_CALLBUF_PROBES 16		/* entries a method's place in the table is looked in */

/* `clock`: what a record's ts counts. 0 is what agents before the field wrote. */
enum jt_callbuf_clock {
	JT_CALLBUF_CLOCK_MONO = 0,	/* CLOCK_MONOTONIC ns */
	JT_CALLBUF_CLOCK_TSC,		/* the x86 TSC, invariant, the kernel's clocksource */
};

/* `mode`: what the collector wants of enter and leave. */
enum jt_callbuf_mode {
	JT_CALLBUF_MODE_EACH = 0,	/* every enter and leave into the ring */
	JT_CALLBUF_MODE_SUM,		/* summed per method in the slot's table (see above) */
};

enum jt_callbuf_state {
	JT_CALLBUF_FREE = 0,
	JT_CALLBUF_CLAIMED,
	JT_CALLBUF_EXITED,
};

/*
 * What a record's kind bits say: the top bits of id_kind. Agent ids count from 1 and never
 * reach 2^62. A span is two records: {leave time, id | SPAN} then {enter time, its own
 * (exclusive) time}, published together.
 */
#define JT_CALLBUF_LEAVE (1ULL << 63)
#define JT_CALLBUF_SPAN (1ULL << 62)
#define JT_CALLBUF_KINDS (JT_CALLBUF_LEAVE | JT_CALLBUF_SPAN)

struct jt_callbuf_rec {
	uint64_t ts;		/* in the header's `clock` */
	uint64_t id_kind;	/* method id, JT_CALLBUF_LEAVE set for a leave */
};

/* A method's sums in a thread's table (summary mode): written by the thread only. */
struct jt_callbuf_sum {
	uint64_t id;		/* method id, 0: a free entry */
	uint64_t calls;		/* calls that left, summed */
	uint64_t incl;		/* their time, in the region's clock (outermost activations) */
	uint64_t excl;		/* their time less the calls they made */
	uint64_t open;		/* the writer's: activations open now */
	uint64_t pad;
};

/* An open call on a thread's summary stack: the writer's alone. */
struct jt_callbuf_frame {
	uint64_t id;
	uint64_t enter;		/* its time, in the region's clock */
	uint64_t child;		/* time of the calls it made that left */
	int64_t entry;		/* its sums' index, -1: written into the ring (spilled) */
};

struct jt_callbuf_slot {
	uint32_t state;		/* enum jt_callbuf_state */
	uint32_t tid;		/* the thread that claimed it */
	uint64_t head;		/* records written (the writer's) */
	uint64_t dropped;	/* records lost to a full ring (the writer's) */
	uint64_t spilled;	/* summary mode: calls written one by one for want of room */
	uint32_t depth;		/* the writer's: frames on the summary stack */
	uint32_t deep;		/* the writer's: calls open beyond them (written one by one) */
	uint8_t pad1[24];	/* the reader's index on a line of its own */
	uint64_t tail;		/* records read (the collector's) */
	uint8_t pad2[56];
	struct jt_callbuf_rec recs[JT_CALLBUF_RECS];
	/* summary mode; the collector reads sums[0, nr_sums) only, right after the ring */
	struct jt_callbuf_sum sums[JT_CALLBUF_SUMS];
	struct jt_callbuf_frame stack[JT_CALLBUF_DEPTH];
};

struct jt_callbuf_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t owner;		/* the process that made the region */
	uint32_t nr_slots;
	uint32_t nr_recs;	/* records a slot, a power of two */
	uint32_t slot_size;	/* bytes from one slot to the next */
	uint32_t collector;	/* pid of the collector that drains it, 0: none */
	uint64_t no_slot;	/* calls sent to the stubs for want of a free slot */
	uint32_t clock;		/* enum jt_callbuf_clock, set before magic */
	uint32_t nr_sums;	/* entries of a slot's table of sums (0: no summary mode) */
	uint32_t mode;		/* enum jt_callbuf_mode: the collector's */
	uint32_t pad;
	uint64_t min;		/* the collector's: summary mode logs calls this long one by one */
	/*
	 * CLOCK_MONOTONIC ns when the agent made it, set before magic; 0: an agent from before
	 * the field. Which image of an exec'd pid a region is when the process is gone.
	 */
	uint64_t made;
};

_Static_assert(sizeof(struct jt_callbuf_rec) == 16, "jt_callbuf_rec layout");
_Static_assert(sizeof(struct jt_callbuf_hdr) == 72, "jt_callbuf_hdr layout");
_Static_assert(__builtin_offsetof(struct jt_callbuf_slot, tail) == 64, "jt_callbuf_slot tail");
_Static_assert(__builtin_offsetof(struct jt_callbuf_slot, recs) == 128,
	       "jt_callbuf_slot layout");
_Static_assert(sizeof(struct jt_callbuf_sum) == 48, "jt_callbuf_sum layout");
#define JT_CALLBUF_SLOT_SIZE sizeof(struct jt_callbuf_slot)
#define JT_CALLBUF_SIZE (JT_CALLBUF_HDR_SIZE + JT_CALLBUF_SLOTS * JT_CALLBUF_SLOT_SIZE)

#endif
