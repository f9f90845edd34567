// SPDX-License-Identifier: GPL-2.0
/*
 * The collector's flow, one way: sources (the ring buffer's records, perf maps) hand events
 * to jt_pipeline__push; the reorder stage puts them in time order; the join makes log
 * records of them for the sink. Nothing downstream calls back into a source.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sources/ring_decode.h"
#include "sources/jitdump_watch.h"
#include "sources/perfmap_watch.h"
#include "sources/tscclock.h"
#include "join/pipeline.h"
#include "host/procfs.h"
#include "join/reorder.h"
#include "host/symbols.h"
#include "base/util.h"

struct jt_pipeline {
	struct jt_reorder *reorder;
	struct jt_collector *col;
	struct jt_symbols *symbols;	/* read as mappings are made, used by the join */
	const char *proc_root;
	struct jt_mapwatch *maps;	/* NULL: perf maps are not followed */
	struct jt_jitwatch *jitdumps;	/* NULL: jitdump files are not followed */
	uint64_t window_ns;
	uint64_t files_slice_ns;
	uint64_t (*clock)(void *ctx);	/* NULL: jt_now_ns */
	void *clock_ctx;
	uint64_t start_ts;		/* the first now it was given: when recording began */
	/* the TSC's calibration, made for the first record that counts it (ring or region) */
	struct jt_tscclock *tsc;
	uint64_t tsc_raw;		/* the TSC at its last pair: no record's is later */
	uint64_t tsc_calls, tsc_forged;	/* ring records timed by the TSC; of them later than it */
	int err;			/* first sink error: everything stops */
	uint64_t received;
	uint64_t lost[JT_DROP_MAX];	/* totals */
	uint64_t logged[JT_DROP_MAX];	/* totals already in the log */
};

static int push(void *ctx, const struct jt_event *ev);

struct jt_pipeline *jt_pipeline__new(const struct jt_pipeline_opts *o, const struct jt_sink *sink)
{
	struct jt_collector_opts co = {
		.proc_root = o->proc_root, .max_perfmap_methods = o->max_perfmap_methods,
		.mem = o->mem, .copy_max = o->copy_max,
	};
	struct jt_pipeline *pl = calloc(1, sizeof(*pl));

	if (!pl) {
		jt_err("out of memory");
		return NULL;
	}
	pl->window_ns = o->window_ns;
	pl->files_slice_ns = o->files_slice_ns;
	pl->clock = o->clock;
	pl->clock_ctx = o->clock_ctx;
	pl->proc_root = o->proc_root ? o->proc_root : "/proc";
	pl->reorder = jt_reorder__new(o->max_pending, o->max_pending_bytes ?
				      o->max_pending_bytes : JT_PIPELINE_PENDING_BYTES);
	pl->symbols = jt_symbols__new(o->proc_root ? o->proc_root : "/proc");
	if (pl->symbols && o->unwind_tables)
		jt_symbols__want_cfi(pl->symbols);
	co.symbols = pl->symbols;
	if (pl->symbols)
		pl->col = jt_collector__new(&co, sink);
	if (o->follow_perfmaps)
		pl->maps = jt_mapwatch__new(o->clock, o->clock_ctx);
	if (pl->maps)
		jt_mapwatch__bound(pl->maps, o->mem);
	if (o->follow_jitdumps)
		pl->jitdumps = jt_jitwatch__new(o->proc_root);
	if (!pl->reorder || !pl->symbols || !pl->col || (o->follow_perfmaps && !pl->maps) ||
	    (o->follow_jitdumps && !pl->jitdumps)) {
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
	jt_jitwatch__free(pl->jitdumps);
	jt_collector__free(pl->col);
	jt_symbols__free(pl->symbols);
	jt_reorder__free(pl->reorder);
	jt_tscclock__free(pl->tsc);
	free(pl);
}

size_t jt_pipeline__copy_wants(struct jt_pipeline *pl, struct jt_ucopy_want *out, size_t n,
			       uint64_t now)
{
	return jt_collector__copy_wants(pl->col, out, n, now);
}

struct jt_tscclock *jt_pipeline__tscclock(struct jt_pipeline *pl)
{
	if (!pl->tsc)
		pl->tsc = jt_tscclock__new(NULL, NULL);
	return pl->tsc;
}

/*
 * A ring record's TSC (JT_CALL_TSC: what the calling thread read before its stub) on
 * CLOCK_MONOTONIC, or 0 when this machine gives no TSC to calibrate by. The process chose
 * the value: one later than the TSC now (taken afresh when a record passes the last) is
 * forged, and is given now, so that it never holds the reorder window of other processes
 * nor moves the line's pin past a TSC that was.
 */
static uint64_t ring_tsc_ns(struct jt_pipeline *pl, uint64_t tsc)
{
	uint64_t ns;

	if (!jt_pipeline__tscclock(pl))
		return 0;
	if (tsc > pl->tsc_raw && jt_tscclock__now(pl->tsc, &pl->tsc_raw, &ns))
		return 0;
	pl->tsc_calls++;
	if (tsc > pl->tsc_raw) {
		pl->tsc_forged++;
		tsc = pl->tsc_raw;
	}
	return jt_tscclock__ns(pl->tsc, tsc);
}

/* The join, for each event the reorder stage lets out, oldest first. */
static void on_ordered(void *ctx, const void *rec, size_t len)
{
	struct jt_pipeline *pl = ctx;

	(void)len;
	if (!pl->err)
		pl->err = jt_collector__event(pl->col, rec);
}

/*
 * Every source's events come in here. One read from a file after the fact (a perf-map
 * line, a jitdump record) may be joined later than its time: one from before recording
 * began is timed then (nothing in the log is older), one older than what was already let
 * out is timed at that. Any other event older than that is too late, and counted.
 */
static int push(void *ctx, const struct jt_event *ev)
{
	struct jt_pipeline *pl = ctx;
	uint64_t floor = 0;
	union jt_event_buf later;
	struct jt_event *copy = NULL;
	int err;

	if (ev->flags & JT_EVENT_LATE_OK) {	/* (not asked of the millions of calls) */
		floor = jt_reorder__floor(pl->reorder);
		if (floor < pl->start_ts)
			floor = pl->start_ts;
	}
	if ((ev->flags & JT_EVENT_LATE_OK) && ev->ts < floor) {
		/* the copy held carries the time it is joined at (lines can be larger) */
		copy = ev->len <= sizeof(later) ? &later.ev : malloc(ev->len);
		if (!copy) {
			jt_err("out of memory");
			return pl->err = pl->err ?: -ENOMEM;
		}
		memcpy(copy, ev, ev->len);
		copy->ts = floor;
		ev = copy;
	}
	err = jt_reorder__push(pl->reorder, ev->ts, ev, ev->len);
	if (copy && copy != &later.ev)
		free(copy);
	if (err == -ERANGE)
		pl->lost[JT_DROP_REORDER]++;
	else if (err)
		pl->err = pl->err ?: err;
	/* the bound holds at every event, not just at the next tick */
	if (jt_reorder__over(pl->reorder))
		jt_reorder__flush(pl->reorder, 0, on_ordered, pl);
	return pl->err;
}

/* Follow the files of every process running now. */
static void scan_proc(struct jt_pipeline *pl)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d) {
		jt_err("listing /proc: %s", strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX)
			continue;
		if (pl->maps)
			jt_mapwatch__notice(pl->maps, pid);
		if (pl->jitdumps)
			jt_jitwatch__running(pl->jitdumps, pid);
	}
	closedir(d);
}

/* A jitdump's code is exact: the perf map of its process is then not needed. */
static int push_jitdump(void *ctx, const struct jt_event *ev)
{
	struct jt_pipeline *pl = ctx;

	if (pl->maps)
		jt_mapwatch__see(pl->maps, ev);
	return push(pl, ev);
}

/*
 * Read what the files gained, within the time slice: each source hands its events on,
 * nothing comes back.
 */
static void poll_files(struct jt_pipeline *pl, uint64_t now)
{
	uint64_t until = UINT64_MAX;

	if (!pl->start_ts)
		pl->start_ts = now;
	if (pl->files_slice_ns)
		until = (pl->clock ? pl->clock(pl->clock_ctx) : jt_now_ns()) + pl->files_slice_ns;
	if (pl->jitdumps)
		jt_jitwatch__poll(pl->jitdumps, now, until, push_jitdump, pl);
	if (pl->maps)
		jt_mapwatch__poll(pl->maps, now, jt_reorder__floor(pl->reorder), until, push, pl);
}

void jt_pipeline__scan(struct jt_pipeline *pl, uint32_t pid, uint64_t now)
{
	if (pid) {
		if (pl->maps)
			jt_mapwatch__notice(pl->maps, pid);
		if (pl->jitdumps)
			jt_jitwatch__running(pl->jitdumps, pid);
	} else if (pl->maps || pl->jitdumps) {
		scan_proc(pl);
	}
	poll_files(pl, now);
}

int jt_pipeline__maps_now(struct jt_pipeline *pl, uint32_t pid, uint64_t now)
{
	struct jt_vmas vm = { 0 };
	union jt_event_buf b;
	size_t i;
	int err = 0;

	if (jt_procfs__read_maps(pl->proc_root, pid, &vm))
		return 0;	/* gone already: nothing to name */
	for (i = 0; i < vm.n && !err; i++) {
		const struct jt_vma *v = &vm.v[i];
		struct stat st;
		size_t len = strlen(v->path);

		memset(&b.ev, 0, JT_EVENT_FIXED);
		b.ev = (struct jt_event){ .ts = now, .len = JT_EVENT_FIXED, .type = JT_EV_MMAP,
					  .pid = pid, .tid = pid, .map_start = v->start,
					  .map_end = v->end, .map_pgoff = v->pgoff };
		if (jt_procfs__anon_path(v->path)) {
			;	/* JIT memory (a memfd's too): no file to read */
		} else if (v->path[0] == '/' && !stat(v->path, &st)) {
			b.ev.map_ino = st.st_ino;
			b.ev.map_dev = st.st_dev;
		} else if (v->path[0] == '/') {
			continue;	/* a file gone: map_files alone can name it */
		}
		jt_event__put_str(&b.ev, v->path, len < JT_PATH_MAX ? len : JT_PATH_MAX - 1);
		jt_symbols__mapped(pl->symbols, pid, &b.ev);
		err = push(pl, &b.ev);
	}
	jt_vmas__free(&vm);
	return err;
}

int jt_pipeline__event(struct jt_pipeline *pl, const struct jt_event *ev)
{
	pl->received++;
	/* which files to read: the processes seen, their execs, exits and agents (a call
	 * tells the watchers nothing, and calls come by the million) */
	if (ev->type == JT_EV_ENTER || ev->type == JT_EV_LEAVE)
		return push(pl, ev);
	if (pl->maps)
		jt_mapwatch__see(pl->maps, ev);
	if (pl->jitdumps)
		jt_jitwatch__see(pl->jitdumps, ev);
	/* a mapped file's symbols are read now, while the process may still map it */
	if (ev->type == JT_EV_MMAP)
		jt_symbols__mapped(pl->symbols, ev->pid, ev);
	return push(pl, ev);
}

int jt_pipeline__calls(struct jt_pipeline *pl, const void *evs, size_t n)
{
	long refused = jt_reorder__push_run(pl->reorder, evs, n, JT_EVENT_CALL_LEN);

	pl->received += n;
	if (refused < 0)
		pl->err = pl->err ?: (int)refused;
	else
		pl->lost[JT_DROP_REORDER] += refused;
	/* the bound holds at every run (they are short), as at every event */
	if (jt_reorder__over(pl->reorder))
		jt_reorder__flush(pl->reorder, 0, on_ordered, pl);
	return pl->err;
}

int jt_pipeline__raw(struct jt_pipeline *pl, const void *data, size_t len)
{
	union jt_event_buf b;

	if (jt_decode(data, len, &b) ||
	    (jt_decode__tsc(data) && !(b.ev.ts = ring_tsc_ns(pl, b.ev.ts)))) {
		pl->received++;
		pl->lost[JT_DROP_DECODE]++;
		return pl->err;
	}
	return jt_pipeline__event(pl, &b.ev);
}

int jt_pipeline__on_ring(void *ctx, const void *data, size_t len)
{
	return jt_pipeline__raw(ctx, data, len);
}

int jt_pipeline__tick(struct jt_pipeline *pl, uint64_t now)
{
	poll_files(pl, now);
	if (now > pl->window_ns)
		jt_reorder__flush(pl->reorder, now - pl->window_ns, on_ordered, pl);
	return pl->err;
}

/* Write a drop record for each kind that grew (every kind when all is set). */
static int log_drops(struct jt_pipeline *pl, bool all)
{
	uint64_t ts = jt_reorder__floor(pl->reorder);
	struct jt_collector_stats cs;
	unsigned int i;

	if (pl->maps)
		pl->lost[JT_DROP_PERFMAP_LINE] = jt_mapwatch__bad_lines(pl->maps);
	jt_collector__stats(pl->col, &cs);
	pl->lost[JT_DROP_UNSURE_FRAME] = cs.unsure_frames;
	pl->lost[JT_DROP_BROKEN_STACK] = cs.broken_stacks;
	pl->lost[JT_DROP_PERFMAP_CAP] = cs.perfmap_capped;
	pl->lost[JT_DROP_MEMORY_PERFMAP] = cs.memory_perfmap;
	pl->lost[JT_DROP_MEMORY_CODE] = cs.memory_code;
	pl->lost[JT_DROP_MEMORY_SCOPES] = cs.memory_scopes;
	pl->lost[JT_DROP_MEMORY_INTERP] = cs.memory_interp;
	if (pl->jitdumps) {
		struct jt_jitwatch_stats js;

		jt_jitwatch__stats(pl->jitdumps, &js);
		pl->lost[JT_DROP_JITDUMP] = js.bad;
	}
	for (i = 0; i < JT_DROP_MAX && !pl->err; i++) {
		if (pl->lost[i] == pl->logged[i] && !all)
			continue;
		pl->err = jt_collector__drop(pl->col, i, 0, pl->lost[i] - pl->logged[i], ts);
		pl->logged[i] = pl->lost[i];
	}
	return pl->err;
}

int jt_pipeline__bpf_drops(struct jt_pipeline *pl, const uint64_t *totals)
{
	unsigned int i;

	for (i = 0; i < JT_DROP_MAX; i++)
		if (JT_DROP_BY_BPF(i))
			pl->lost[i] = totals[i];
	return log_drops(pl, false);
}

void jt_pipeline__source_drops(struct jt_pipeline *pl, unsigned int what, uint64_t total)
{
	/* never below what threads were named for: those records are written */
	if (what < JT_DROP_MAX)
		pl->lost[what] = total > pl->logged[what] ? total : pl->logged[what];
}

int jt_pipeline__thread_drops(struct jt_pipeline *pl, unsigned int what, uint32_t tid,
			      uint64_t count)
{
	if (what >= JT_DROP_MAX || !count || pl->err)
		return pl->err;
	pl->err = jt_collector__drop(pl->col, what, tid, count, jt_reorder__floor(pl->reorder));
	if (!pl->err)
		pl->logged[what] += count;
	/* the kind's total, told with source_drops, covers them: never less than written */
	if (pl->lost[what] < pl->logged[what])
		pl->lost[what] = pl->logged[what];
	return pl->err;
}

int jt_pipeline__finish(struct jt_pipeline *pl)
{
	poll_files(pl, jt_now_ns());
	jt_reorder__flush(pl->reorder, UINT64_MAX, on_ordered, pl);
	if (!pl->err)
		pl->err = jt_collector__flush(pl->col);
	if (pl->tsc_calls)
		jt_err("%llu enters and leaves through the stubs' uprobes timed by their callers' "
		       "TSC (%llu of them later than the TSC when read: given that time)",
		       (unsigned long long)pl->tsc_calls, (unsigned long long)pl->tsc_forged);
	return log_drops(pl, true);
}

void jt_pipeline__stats(const struct jt_pipeline *pl, struct jt_pipeline_stats *st)
{
	jt_collector__stats(pl->col, &st->col);
	if (pl->maps)
		st->col.perfmap_skipped += jt_mapwatch__skipped(pl->maps);
	st->received = pl->received;
	st->pending = jt_reorder__count(pl->reorder);
	st->pending_bytes = jt_reorder__bytes(pl->reorder);
	st->maps = pl->maps ? jt_mapwatch__following(pl->maps) : 0;
	st->jitdumps = st->jitdump_records = 0;
	if (pl->jitdumps) {
		struct jt_jitwatch_stats js;

		jt_jitwatch__stats(pl->jitdumps, &js);
		st->jitdumps = js.files;
		st->jitdump_records = js.records;
	}
	memcpy(st->lost, pl->lost, sizeof(st->lost));
}
