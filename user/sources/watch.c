// SPDX-License-Identifier: GPL-2.0
/*
 * The watcher of per-process files: which processes to look at, when to look for their file
 * again, reading within a poll's time, letting go of those that exited. A format does the
 * files themselves (perfmap_watch.c, jitdump_watch.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "base/membound.h"
#include "base/util.h"
#include "sources/watch.h"

/* look again for a file that was not there: soon at first, then less and less often */
#define RETRY_MIN_NS 50000000ULL
#define RETRY_MAX_NS 2000000000ULL

static uint64_t real_clock(void *ctx)
{
	(void)ctx;
	return jt_now_ns();
}

void jt_watch__init(struct jt_watch *w, const struct jt_watch_format *fmt, jt_clock_fn clock,
		    void *clock_ctx)
{
	w->fmt = fmt;
	w->clock = clock ? clock : real_clock;
	w->clock_ctx = clock_ctx;
}

void jt_watch__bound(struct jt_watch *w, struct jt_membound *mem)
{
	w->mem = mem;
}

void jt_watch__close(struct jt_watch *w, struct jt_watch_proc *p)
{
	if (!p->open)
		return;
	w->fmt->close(w, p);
	p->open = false;
	jt_membound__give(w->mem, w->fmt->file_bytes);
	w->following--;
}

static void proc_free(struct jt_watch *w, struct jt_watch_proc *p)
{
	jt_hash__del(&w->procs, p->pid);
	jt_watch__close(w, p);
	free(p);
}

void jt_watch__fini(struct jt_watch *w)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&w->procs, &pos, &key, &val)) {
		jt_watch__close(w, val);
		free(val);
	}
	jt_hash__fini(&w->procs);
	free(w->dead);
}

struct jt_watch_proc *jt_watch__get(struct jt_watch *w, uint32_t pid)
{
	bool added;
	struct jt_watch_proc *p = jt_hash__get_new(&w->procs, pid, w->fmt->proc_size, &added);

	if (p && added)
		p->pid = pid;
	return p;	/* NULL: memory is short, this file can wait */
}

void jt_watch__notice(struct jt_watch *w, uint32_t pid)
{
	struct jt_watch_proc *p = jt_watch__get(w, pid);

	if (p)
		p->wanted = true;	/* opened at the next poll, once its exec is known too */
}

void jt_watch__see(struct jt_watch *w, const struct jt_event *ev)
{
	struct jt_watch_proc *p;

	switch (ev->type) {
	case JT_EV_SAMPLE:
		if (ev->nr_user)	/* opened at the next poll, before the sample is joined */
			jt_watch__notice(w, ev->pid);
		return;
	case JT_EV_EXEC:
		p = jt_watch__get(w, ev->pid);
		if (!p)
			return;
		if (w->fmt->exec_closes)
			jt_watch__close(w, p);
		/* a new program: nothing in the file now describes an older one, and it may
		 * write one soon */
		p->wanted = true;
		p->gone = false;
		w->fmt->exec(p, ev->ts);
		if (!p->open) {
			p->look_ts = p->tried_ts = p->retry_ns = 0;
			p->refused = false;
		}
		return;
	case JT_EV_EXIT:
		p = jt_watch__get(w, ev->pid);
		if (p)
			p->gone = true;
		return;
	default:
		if (w->fmt->see)
			w->fmt->see(w, ev);
		return;
	}
}

/* Open p's file if it has one now. Returns false if the process is gone. */
static bool try_open(struct jt_watch *w, struct jt_watch_proc *p, uint64_t now)
{
	char dir[64];
	struct stat st;
	bool alive;

	if (!p->look_ts)
		p->look_ts = now;
	p->tried_ts = now;
	p->retry_ns = p->retry_ns ? 2 * p->retry_ns : RETRY_MIN_NS;
	if (p->retry_ns > RETRY_MAX_NS)
		p->retry_ns = RETRY_MAX_NS;
	snprintf(dir, sizeof(dir), "/proc/%u", (unsigned int)p->pid);
	alive = !stat(dir, &st);
	if (w->fmt->open(w, p, alive ? &st : NULL, now)) {
		p->open = true;
		w->following++;
	}
	return alive;
}

/* Whether to look for p's file at this poll. */
static bool to_open(const struct jt_watch *w, const struct jt_watch_proc *p, uint64_t now)
{
	return !p->open && p->wanted && !p->refused &&
	       (p->gone || !p->tried_ts || now - p->tried_ts >= p->retry_ns) &&
	       (!w->fmt->look_ns || !p->look_ts || now - p->look_ts < w->fmt->look_ns);
}

static void keep_dead(struct jt_watch *w, struct jt_watch_proc *p)
{
	if (w->ndead == w->cap_dead) {
		size_t cap = w->cap_dead ? 2 * w->cap_dead : 16;
		struct jt_watch_proc **d = realloc(w->dead, cap * sizeof(*d));

		if (!d)
			return;	/* memory is short: let it go at a later poll */
		w->dead = d;
		w->cap_dead = cap;
	}
	w->dead[w->ndead++] = p;
}

void jt_watch__poll(struct jt_watch *w, uint64_t now, uint64_t floor, uint64_t until,
		    jt_event_push_fn push, void *ctx)
{
	const struct jt_watch_format *fmt = w->fmt;
	size_t first = w->cursor, pos = first;
	bool wrapped = false, late = false;
	uint64_t key;
	void *val;

	w->cursor = 0;
	/* from where the last poll ran out of time, round to it: every file has its turn */
	while (jt_hash__next_round(&w->procs, first, &pos, &wrapped, &key, &val)) {
		struct jt_watch_proc *p = val;

		if (late || w->clock(w->clock_ctx) >= until) {
			w->cursor = pos - 1;	/* this one first next time */
			break;
		}
		if (to_open(w, p, now) && jt_membound__take(w->mem, fmt->file_bytes)) {
			if (!try_open(w, p, now))
				p->gone = true;		/* nothing more of it will come */
			if (!p->open)
				jt_membound__give(w->mem, fmt->file_bytes);
		}
		if (p->open) {	/* the fd still reads the file after the process is gone */
			enum jt_watch_read r = fmt->read(w, p, now, floor, until, push, ctx);

			if (r == JT_WATCH_READ_CUT) {
				w->cursor = pos - 1;	/* the rest of it first, next time */
				break;
			}
			late = r == JT_WATCH_READ_LATE;
		}
		/* gone: let go once what it left is read (a read cut short goes on next time) */
		if (p->gone && (!p->open || !fmt->drained || fmt->drained(p)))
			keep_dead(w, p);
	}
	/* let them go after the walk: the hash may not change under it */
	for (size_t i = 0; i < w->ndead; i++)
		proc_free(w, w->dead[i]);
	w->ndead = 0;
}
