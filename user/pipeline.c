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
	int err;			/* first sink error: everything stops */
	uint64_t received;
	uint64_t lost[JT_DROP_MAX];	/* totals */
	uint64_t logged[JT_DROP_MAX];	/* totals already in the log */
};

static void on_map_line(void *ctx, uint32_t pid, uint64_t ts, const struct jt_perfmap_entry *e);

struct jt_pipeline *jt_pipeline__new(const struct jt_pipeline_opts *o, const struct jt_sink *sink)
{
	struct jt_collector_opts co = { .proc_root = o->proc_root };
	struct jt_pipeline *pl = calloc(1, sizeof(*pl));

	if (!pl) {
		jt_err("out of memory");
		return NULL;
	}
	pl->window_ns = o->window_ns;
	pl->reorder = jt_reorder__new(o->max_pending);
	pl->col = jt_collector__new(&co, sink);
	if (o->follow_perfmaps)
		pl->maps = jt_mapwatch__new(on_map_line, pl);
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
	free(pl);
}

static void push(struct jt_pipeline *pl, uint64_t ts, const void *rec, size_t len)
{
	int err = jt_reorder__push(pl->reorder, ts, rec, len);

	if (err == -ERANGE)
		pl->lost[JT_DROP_REORDER]++;
	else if (err)
		pl->err = pl->err ?: err;
}

/* A perf map line becomes a code-load record like the agent's, timed as early as it can be. */
static void on_map_line(void *ctx, uint32_t pid, uint64_t ts, const struct jt_perfmap_entry *e)
{
	struct jt_pipeline *pl = ctx;
	struct jt_ev_code rec;
	size_t len = e->name_len < JT_NAME_MAX - 1 ? e->name_len : JT_NAME_MAX - 1;
	uint64_t floor = jt_reorder__floor(pl->reorder);

	if (ts < floor)
		ts = floor;
	memset(&rec, 0, JT_EV_CODE_FIXED);
	rec.h = (struct jt_ev_hdr){
		.type = JT_EV_CODE_LOAD, .size = jt_round8(JT_EV_CODE_FIXED + len), .ts = ts,
		.pid = pid, .tid = pid,
	};
	rec.start = e->start;
	rec.size = e->size;
	rec.src = JT_SRC_PERFMAP;
	rec.name_len = len;
	memcpy(rec.name, e->name, len);
	memset(rec.name + len, 0, rec.h.size - JT_EV_CODE_FIXED - len);
	push(pl, ts, &rec, rec.h.size);
}

void jt_pipeline__scan(struct jt_pipeline *pl, uint32_t pid, uint64_t now)
{
	if (!pl->maps)
		return;
	if (!pid) {
		jt_mapwatch__scan(pl->maps, now);
		return;
	}
	jt_mapwatch__notice(pl->maps, pid, now);
	jt_mapwatch__poll(pl->maps, now);
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
	/* after its exit nothing more of a process is coming: read its map to the end */
	if (ev.type == JT_EV_EXIT && pl->maps)
		jt_mapwatch__forget(pl->maps, ev.pid, ev.ts);
}

int jt_pipeline__tick(struct jt_pipeline *pl, uint64_t now)
{
	if (pl->maps)
		jt_mapwatch__poll(pl->maps, now);
	if (now > pl->window_ns)
		jt_reorder__flush(pl->reorder, now - pl->window_ns, on_ordered, pl);
	return pl->err;
}

/* Write a drop record for each kind that grew (every kind when all is set). */
static int log_drops(struct jt_pipeline *pl, bool all)
{
	uint64_t ts = jt_reorder__floor(pl->reorder);
	unsigned int i;

	if (pl->maps)
		pl->lost[JT_DROP_PERFMAP_LINE] = jt_mapwatch__bad_lines(pl->maps);
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
		jt_mapwatch__poll(pl->maps, jt_now_ns());
	jt_reorder__flush(pl->reorder, UINT64_MAX, on_ordered, pl);
	return log_drops(pl, true);
}

void jt_pipeline__stats(const struct jt_pipeline *pl, struct jt_pipeline_stats *st)
{
	jt_collector__stats(pl->col, &st->col);
	st->received = pl->received;
	st->pending = jt_reorder__count(pl->reorder);
	st->maps = pl->maps ? jt_mapwatch__following(pl->maps) : 0;
	memcpy(st->lost, pl->lost, sizeof(st->lost));
}
