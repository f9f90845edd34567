/* SPDX-License-Identifier: GPL-2.0 */
/* One watcher of the files runtimes write per process (perf maps, jitdumps), any format. */
#ifndef JT_WATCH_H
#define JT_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/event.h"
#include "base/hash.h"

/*
 * The watcher keeps what is known of each process: whether its file is wanted, when to look
 * for it again (soon at first, then less and less often), when it exited (what is left is
 * read, then it is let go). Each poll walks them within a time budget, going on next time
 * from where it stopped, and charges each file followed to the memory account. A format
 * (struct jt_watch_format) finds, opens, reads and closes the files themselves.
 */

/* CLOCK_MONOTONIC in ns, as jt_now_ns() (tests pass their own). */
typedef uint64_t (*jt_clock_fn)(void *ctx);

/* What the watcher knows of one process; a format's own state follows it (it comes first). */
struct jt_watch_proc {
	uint32_t pid;
	bool wanted;		/* its frames need names: follow its file */
	bool refused;		/* said why once, or not to be read: not read */
	bool gone;		/* it exited: read what is left, then let it go */
	bool open;		/* its file is followed (and charged to the account) */
	uint64_t look_ts;	/* looked for since (first tried, or its exec) */
	uint64_t tried_ts;
	uint64_t retry_ns;	/* wait before trying again */
};

/* What a format's read says of the poll's time. */
enum jt_watch_read {
	JT_WATCH_READ_ON,	/* time is left: on to the next process */
	JT_WATCH_READ_LATE,	/* time is up: the next poll begins with the next process */
	JT_WATCH_READ_CUT,	/* time is up within this file: the next poll begins with it */
};

struct jt_watch;

/* One format of file: what the watcher asks of it. */
struct jt_watch_format {
	size_t proc_size;	/* its per-process state, struct jt_watch_proc first */
	uint64_t file_bytes;	/* what following one file holds, charged to the account */
	uint64_t look_ns;	/* looked for this long after the first try or an exec (0: on) */
	bool exec_closes;	/* an exec lets the file go (the new program writes its own) */
	/* Open p's file if it has one now (true); proc is /proc/PID's stat, NULL once the
	 * process is gone. */
	bool (*open)(struct jt_watch *w, struct jt_watch_proc *p, const struct stat *proc,
		     uint64_t now);
	/* Hand on what p's open file gained, as events to push, until the clock reaches until. */
	enum jt_watch_read (*read)(struct jt_watch *w, struct jt_watch_proc *p, uint64_t now,
				   uint64_t floor, uint64_t until, jt_event_push_fn push,
				   void *ctx);
	/* Whether all of a gone process's file was read (NULL: what one read left is let go). */
	bool (*drained)(const struct jt_watch_proc *p);
	void (*close)(struct jt_watch *w, struct jt_watch_proc *p);
	void (*exec)(struct jt_watch_proc *p, uint64_t ts);	/* its own state, afresh */
	void (*see)(struct jt_watch *w, const struct jt_event *ev);	/* other events (NULL) */
};

struct jt_membound;

/* A format's watcher begins with this (zeroed, then jt_watch__init). */
struct jt_watch {
	const struct jt_watch_format *fmt;
	struct jt_hash procs;		/* pid -> struct jt_watch_proc and the format's state */
	jt_clock_fn clock;
	void *clock_ctx;
	struct jt_membound *mem;	/* each file followed is charged to it (NULL: none) */
	size_t following;
	struct jt_watch_proc **dead;	/* gone, freed at the end of a poll */
	size_t ndead, cap_dead;
	size_t cursor;			/* the slot the last poll ran out of time at */
};

/* clock NULL: jt_now_ns(). */
void jt_watch__init(struct jt_watch *w, const struct jt_watch_format *fmt, jt_clock_fn clock,
		    void *clock_ctx);
/* Close every file and let every process go (w itself is the caller's). */
void jt_watch__fini(struct jt_watch *w);
/* Charge each file followed (the format's file_bytes) to the recorder's memory account
 * (membound.h): past its limit a file is not opened until there is room (it waits). */
void jt_watch__bound(struct jt_watch *w, struct jt_membound *mem);
/* pid's state, new (zeroed) if it had none; NULL: memory is short. */
struct jt_watch_proc *jt_watch__get(struct jt_watch *w, uint32_t pid);
/* Follow pid's file from the next poll on, if it has one (looked for again while not). */
void jt_watch__notice(struct jt_watch *w, uint32_t pid);
/*
 * What an event from the ring buffer tells: a process with user frames is followed; one that
 * exec'd is looked at again; one that exited has what is left read at the next poll, then is
 * let go; any other event is the format's.
 */
void jt_watch__see(struct jt_watch *w, const struct jt_event *ev);
/* Let p's file go (its charge back to the account), if it has one open. */
void jt_watch__close(struct jt_watch *w, struct jt_watch_proc *p);
/*
 * Open the files of processes noticed since and read what every open file gained. Once the
 * clock reaches until, the poll stops where the format's read says; the next one goes on
 * from there, so that every file has its turn.
 */
void jt_watch__poll(struct jt_watch *w, uint64_t now, uint64_t floor, uint64_t until,
		    jt_event_push_fn push, void *ctx);

#endif
