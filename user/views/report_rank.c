// SPDX-License-Identifier: GPL-2.0
/* The report's rankings: the rows of each table and the sections in the order shown, cut
 * at --top and --procs; and the figures every renderer derives alike from the model. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hash.h"
#include "base/util.h"
#include "log/source.h"
#include "views/report_model.h"
#include "views/stacks.h"

/* ---- ordering ---- */

struct sort_ctx {
	const struct jt_stacks *stk;
	enum jt_report_sort by;
	enum jt_report_table table;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_entries(const void *pa, const void *pb, void *ctx)
{
	const struct jt_report_entry *a = *(void *const *)pa;
	const struct jt_report_entry *b = *(void *const *)pb;
	const struct sort_ctx *sc = ctx;
	enum jt_lv_kind ka, kb;
	int c;

	if (sc->table == JT_REPORT_CALLS)
		c = cmp_u64_desc(a->incl_ns, b->incl_ns) ?: cmp_u64_desc(a->calls, b->calls);
	else if (sc->table == JT_REPORT_OFF)
		c = cmp_u64_desc(a->wait_ns, b->wait_ns) ?:
		    cmp_u64_desc(a->inner_ns, b->inner_ns) ?: cmp_u64_desc(a->waits, b->waits);
	else if (sc->by == JT_REPORT_BY_TOTAL)
		c = cmp_u64_desc(a->total, b->total) ?: cmp_u64_desc(a->self, b->self);
	else
		c = cmp_u64_desc(a->self, b->self) ?: cmp_u64_desc(a->total, b->total);
	if (c)
		return c;
	c = strcmp(jt_stacks__name(sc->stk, a->name, &ka), jt_stacks__name(sc->stk, b->name, &kb));
	return c ?: (int)ka - (int)kb;
}

static bool keep_entry(const void *val, const void *ctx)
{
	const struct jt_report_entry *e = val;
	const struct sort_ctx *sc = ctx;

	switch (sc->table) {
	case JT_REPORT_CALLS:
		return e->has_calls;
	case JT_REPORT_OFF:
		return e->wait_ns || e->waits;
	default:
		return e->self || e->total;
	}
}

static int cmp_sections(const void *pa, const void *pb, void *ctx)
{
	const struct jt_report_section *a = *(void *const *)pa;
	const struct jt_report_section *b = *(void *const *)pb;

	(void)ctx;
	return cmp_u64_desc(a->samples, b->samples) ?: cmp_u64_desc(a->calls, b->calls) ?:
	       cmp_u64_desc(a->off.ns[0], b->off.ns[0]) ?: (a->pid > b->pid) - (a->pid < b->pid);
}

static bool keep_section(const void *val, const void *ctx)
{
	const struct jt_report_section *s = val;

	(void)ctx;
	return s->samples || s->calls || s->off.n[0] || s->off.ns[0];
}

/*
 * The values of h that keep takes, sorted by cmp (ctx goes to both), at most max of them
 * (0: all); *n gets the count. NULL (reported) without memory.
 */
static void **pick(const struct jt_hash *h, bool (*keep)(const void *val, const void *ctx),
		   int (*cmp)(const void *, const void *, void *), void *ctx, unsigned int max,
		   size_t *n)
{
	void **v = malloc((h->count + 1) * sizeof(*v));
	size_t pos = 0, k = 0;
	uint64_t key;
	void *val;

	if (!v) {
		jt_err("%s", report__nomem);
		return NULL;
	}
	while (jt_hash__next(h, &pos, &key, &val))
		if (keep(val, ctx))
			v[k++] = val;
	qsort_r(v, k, sizeof(*v), cmp, ctx);
	*n = max && k > max ? max : k;
	return v;
}

void **report__rows(const struct jt_report_model *r, const struct jt_report_section *s,
		    enum jt_report_table table, size_t *n)
{
	struct sort_ctx sc = { r->stk, r->o->sort, table };

	return pick(&s->entries, keep_entry, cmp_entries, &sc, r->o->top, n);
}

void **report__sections(const struct jt_report_model *r, size_t *n)
{
	return pick(&r->procs, keep_section, cmp_sections, NULL, r->o->procs, n);
}

static int cmp_threads(const void *pa, const void *pb, void *ctx)
{
	const struct jt_report_section *a = *(void *const *)pa;
	const struct jt_report_section *b = *(void *const *)pb;

	(void)ctx;
	return cmp_u64_desc(a->samples, b->samples) ?: cmp_u64_desc(a->off.ns[0], b->off.ns[0]) ?:
	       (a->tid > b->tid) - (a->tid < b->tid);
}

static bool keep_thread(const void *val, const void *ctx)
{
	const struct jt_report_section *s = val;

	return s->pid == *(const uint32_t *)ctx;
}

void **report__threads_of(const struct jt_report_model *r, uint32_t pid, size_t *n)
{
	return pick(&r->tsecs, keep_thread, cmp_threads, &pid, 0, n);
}

uint64_t report__cpu_ns(const struct jt_report_model *r, uint64_t samples)
{
	uint32_t hz = r->src.hdr->sample_hz;

	return hz ? samples * 1000000000ULL / hz : 0;
}

struct wall_ctx {
	const struct jt_report_model *r;
	uint32_t pid;
};

/* Threads by their time on and off the CPU, the longest first. */
static int cmp_walls(const void *pa, const void *pb, void *ctx)
{
	const struct jt_report_wall *a = *(void *const *)pa;
	const struct jt_report_wall *b = *(void *const *)pb;
	const struct wall_ctx *wc = ctx;

	return cmp_u64_desc(report__cpu_ns(wc->r, a->samples) + a->off.ns[0],
			    report__cpu_ns(wc->r, b->samples) + b->off.ns[0]) ?:
	       cmp_u64_desc(a->samples, b->samples) ?: cmp_u64_desc(a->off.n[0], b->off.n[0]) ?:
	       (a->tid > b->tid) - (a->tid < b->tid);
}

static bool keep_wall(const void *val, const void *ctx)
{
	const struct jt_report_wall *w = val;

	return w->pid == ((const struct wall_ctx *)ctx)->pid;
}

void **report__walls_of(const struct jt_report_model *r, uint32_t pid, size_t *n)
{
	struct wall_ctx wc = { r, pid };

	return pick(&r->walls, keep_wall, cmp_walls, &wc, r->o->top, n);
}

size_t report__nr_sections(const struct jt_report_model *r)
{
	size_t pos = 0, k = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&r->procs, &pos, &key, &val))
		k += keep_section(val, NULL);
	return k;
}

/* ---- figures every renderer shows alike ---- */

double report__pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * n / of : 0;
}

void report__start(const struct jt_report_model *r, char *buf, size_t cap)
{
	const struct jt_log_header *h = r->src.hdr;
	const int64_t ns_per_s = 1000000000LL;
	int64_t wall;
	struct tm tm;
	time_t t;

	/* both come from the file: their sum may not fit, and overflow is undefined */
	if (h->start_ns > INT64_MAX ||
	    __builtin_add_overflow((int64_t)h->start_ns, h->realtime_offset_ns, &wall)) {
		snprintf(buf, cap, "?");
		return;
	}
	t = wall / ns_per_s - (wall % ns_per_s < 0);	/* seconds, rounded down */
	if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, cap, "?");
}

double report__duration_s(const struct jt_report_model *r)
{
	return jt_logsrc__rel(&r->src, r->src.last_ts) / 1e9;
}

const char *report__src_file(const struct jt_report_model *r, uint64_t src)
{
	return jt_lv__file(r->src.lv, (uint32_t)(JT_REPORT_SRC_KNOWN(src) - 1));
}
