// SPDX-License-Identifier: GPL-2.0
/* The collector's flow: decode, reorder, join, sink; perf map lines join the same stream. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "mapwatch.h"
#include "pipeline.h"
#include "reorder.h"
#include "util.h"

struct jt_pipeline {
	struct jt_reorder *reorder;
	struct jt_collector *col;
	struct jt_mapwatch *maps;	/* NULL: perf maps are not followed */
	uint64_t window_ns;
	uint64_t start_ts;		/* the first now it was given: when recording began */
	int err;			/* first sink error: everything stops */
	/*
	 * A full reorder buffer lets records out while a poll of the perf maps is walking
	 * them: the exits among them wait here, and their maps are let go after the walk.
	 */
	bool polling;
	struct gone { uint32_t pid; uint64_t ts; } *gone;
	size_t ngone, cap_gone;
	uint64_t received;
	uint64_t maps_skipped;		/* perf map lines of agent processes, not queued */
	uint64_t lost[JT_DROP_MAX];	/* totals */
	uint64_t logged[JT_DROP_MAX];	/* totals already in the log */
};

static void on_map_line(void *ctx, uint32_t pid, uint64_t lo, uint64_t hi,
			const struct jt_perfmap_entry *e);
static void on_ordered(void *ctx, const void *rec, size_t len);

struct jt_pipeline *jt_pipeline__new(const struct jt_pipeline_opts *o, const struct jt_sink *sink)
{
	struct jt_collector_opts co = {
		.proc_root = o->proc_root, .max_perfmap_methods = o->max_perfmap_methods,
	};
	struct jt_pipeline *pl = calloc(1, sizeof(*pl));

	if (!pl) {
		jt_err("out of memory");
		return NULL;
	}
	pl->window_ns = o->window_ns;
	pl->reorder = jt_reorder__new(o->max_pending, o->max_pending_bytes ?
				      o->max_pending_bytes : JT_PIPELINE_PENDING_BYTES);
	pl->col = jt_collector__new(&co, sink);
	if (o->follow_perfmaps)
		pl->maps = jt_mapwatch__new(on_map_line, pl, o->clock, o->clock_ctx);
	if (!pl->reorder || !pl->col || (o->follow_perfmaps && !pl->maps)) {
		jt_err("out of memory");
		jt_pipeline__free(pl);
		return NULL;
	}
	return pl;
}

void jt_pipeline__free(struct jt_pipeline *pl)
{
	if (!pl)
		return;
	jt_mapwatch__free(pl->maps);
	jt_collector__free(pl->col);
	jt_reorder__free(pl->reorder);
	free(pl->gone);
	free(pl);
}

static void push(struct jt_pipeline *pl, uint64_t ts, const void *rec, size_t len)
{
	int err = jt_reorder__push(pl->reorder, ts, rec, len);

	if (err == -ERANGE)
		pl->lost[JT_DROP_REORDER]++;
	else if (err)
		pl->err = pl->err ?: err;
	/* the bound holds at every record, not just at the next tick */
	if (jt_reorder__over(pl->reorder))
		jt_reorder__flush(pl->reorder, 0, on_ordered, pl);
}

/* Let go of the maps of processes that exited while a poll was walking them. */
static void forget_gone(struct jt_pipeline *pl)
{
	size_t i;

	for (i = 0; i < pl->ngone; i++)	/* forgetting one may let out more exits */
		jt_mapwatch__forget(pl->maps, pl->gone[i].pid, pl->gone[i].ts);
	pl->ngone = 0;
}

static void poll_maps(struct jt_pipeline *pl, uint32_t pid, uint64_t now)
{
	if (!pl->start_ts)
		pl->start_ts = now;
	pl->polling = true;
	if (pid == UINT32_MAX) {
		jt_mapwatch__scan(pl->maps, now);
	} else {
		if (pid)
			jt_mapwatch__notice(pl->maps, pid, now);
		jt_mapwatch__poll(pl->maps, now);
	}
	pl->polling = false;
	forget_gone(pl);
}

/* After its exit nothing more of a process is coming: read its map to the end. */
static void map_gone(struct jt_pipeline *pl, uint32_t pid, uint64_t ts)
{
	struct gone *g;
	size_t cap;

	if (!pl->polling) {
		jt_mapwatch__forget(pl->maps, pid, ts);
		return;
	}
	if (pl->ngone == pl->cap_gone) {
		cap = pl->cap_gone ? 2 * pl->cap_gone : 16;
		g = realloc(pl->gone, cap * sizeof(*g));
		if (!g)
			return;	/* memory is short: the map stays followed */
		pl->gone = g;
		pl->cap_gone = cap;
	}
	pl->gone[pl->ngone++] = (struct gone){ pid, ts };
}

/*
 * A perf map line becomes a code-load record like the agent's, timed as early as it can be
 * (lo), and saying for how long after that its time is unsure (up to hi, when it was read):
 * the join names no sample by it in that span where it took the place of other code.
 */
static void on_map_line(void *ctx, uint32_t pid, uint64_t lo, uint64_t hi,
			const struct jt_perfmap_entry *e)
{
	struct jt_pipeline *pl = ctx;
	struct jt_ev_code rec;
	size_t len = e->name_len < JT_NAME_MAX - 1 ? e->name_len : JT_NAME_MAX - 1;
	uint64_t floor = jt_reorder__floor(pl->reorder), ts = lo, unsure_us;

	/*
	 * The collector ignores the map of a process whose agent reports its code (its own
	 * records are exact); when that is already known, and no exec of the process waits
	 * in the reorder buffer, skip the line here rather than queue a copy of it (a
	 * runtime starting with thousands of methods would fill the buffer with them), and
	 * stop following the map until the process execs.
	 */
	if (jt_collector__has_agent(pl->col, pid) && jt_mapwatch__exec_ts(pl->maps, pid) <= floor) {
		pl->maps_skipped++;
		jt_mapwatch__drop(pl->maps, pid);	/* and stop reading it */
		return;
	}
	/* lines there before recording began: their code is as old as that, as far as the
	 * log can tell (nothing in it is older) */
	if (ts < pl->start_ts)
		ts = pl->start_ts;
	if (ts < floor)
		ts = floor;
	unsure_us = hi > ts ? (hi - ts + 999) / 1000 : 0;
	memset(&rec, 0, JT_EV_CODE_FIXED);
	rec.h = (struct jt_ev_hdr){
		.type = JT_EV_CODE_LOAD, .size = jt_round8(JT_EV_CODE_FIXED + len), .ts = ts,
		.pid = pid, .tid = pid,
	};
	rec.start = e->start;
	rec.size = e->size;
	rec.src = JT_SRC_PERFMAP;
	rec.unsure_us = unsure_us < UINT32_MAX ? unsure_us : UINT32_MAX;
	rec.name_len = len;
	memcpy(rec.name, e->name, len);
	/* a NUL would end the name where the decoder reads it: show it as '?' instead */
	for (char *nul = memchr(rec.name, 0, len); nul; nul = memchr(nul, 0, rec.name + len - nul))
		*nul = '?';
	memset(rec.name + len, 0, rec.h.size - JT_EV_CODE_FIXED - len);
	push(pl, ts, &rec, rec.h.size);
}

void jt_pipeline__scan(struct jt_pipeline *pl, uint32_t pid, uint64_t now)
{
	if (pl->maps)
		poll_maps(pl, pid ? pid : UINT32_MAX, now);
}

int jt_pipeline__raw(struct jt_pipeline *pl, const void *data, size_t len)
{
	struct jt_event ev;

	pl->received++;
	if (jt_decode(data, len, &ev)) {
		pl->lost[JT_DROP_DECODE]++;
		return pl->err;
	}
	/* its map is opened at the next tick, before this sample leaves the reorder window */
	if (pl->maps && ev.type == JT_EV_SAMPLE && ev.nr_user)
		jt_mapwatch__notice(pl->maps, ev.pid, ev.ts);
	else if (pl->maps && ev.type == JT_EV_EXEC)
		jt_mapwatch__exec(pl->maps, ev.pid, ev.ts);
	push(pl, ev.ts, data, ((const struct jt_ev_hdr *)data)->size);
	return pl->err;
}

int jt_pipeline__on_ring(void *ctx, const void *data, size_t len)
{
	return jt_pipeline__raw(ctx, data, len);
}

static void on_ordered(void *ctx, const void *rec, size_t len)
{
	struct jt_pipeline *pl = ctx;
	struct jt_event ev;

	if (pl->err || jt_decode(rec, len, &ev))
		return;
	pl->err = jt_collector__event(pl->col, &ev);
	if (ev.type == JT_EV_EXIT && pl->maps)
		map_gone(pl, ev.pid, ev.ts);
}

int jt_pipeline__tick(struct jt_pipeline *pl, uint64_t now)
{
	if (pl->maps)
		poll_maps(pl, 0, now);
	if (now > pl->window_ns)
		jt_reorder__flush(pl->reorder, now - pl->window_ns, on_ordered, pl);
	return pl->err;
}

/* Write a drop record for each kind that grew (every kind when all is set). */
static int log_drops(struct jt_pipeline *pl, bool all)
{
	uint64_t ts = jt_reorder__floor(pl->reorder);
	unsigned int i;

	struct jt_collector_stats cs;

	if (pl->maps)
		pl->lost[JT_DROP_PERFMAP_LINE] = jt_mapwatch__bad_lines(pl->maps);
	jt_collector__stats(pl->col, &cs);
	pl->lost[JT_DROP_UNSURE_FRAME] = cs.unsure_frames;
	pl->lost[JT_DROP_PERFMAP_CAP] = cs.perfmap_capped;
	for (i = 0; i < JT_DROP_MAX && !pl->err; i++) {
		if (pl->lost[i] == pl->logged[i] && !all)
			continue;
		pl->err = jt_collector__drop(pl->col, i, pl->lost[i] - pl->logged[i], ts);
		pl->logged[i] = pl->lost[i];
	}
	return pl->err;
}

int jt_pipeline__bpf_drops(struct jt_pipeline *pl, const uint64_t *totals)
{
	memcpy(pl->lost, totals, JT_DROP_BPF_MAX * sizeof(*totals));
	return log_drops(pl, false);
}

int jt_pipeline__finish(struct jt_pipeline *pl)
{
	if (pl->maps)
		poll_maps(pl, 0, jt_now_ns());
	jt_reorder__flush(pl->reorder, UINT64_MAX, on_ordered, pl);
	return log_drops(pl, true);
}

void jt_pipeline__stats(const struct jt_pipeline *pl, struct jt_pipeline_stats *st)
{
	jt_collector__stats(pl->col, &st->col);
	st->col.perfmap_skipped += pl->maps_skipped;
	st->received = pl->received;
	st->pending = jt_reorder__count(pl->reorder);
	st->pending_bytes = jt_reorder__bytes(pl->reorder);
	st->maps = pl->maps ? jt_mapwatch__following(pl->maps) : 0;
	memcpy(st->lost, pl->lost, sizeof(st->lost));
}
