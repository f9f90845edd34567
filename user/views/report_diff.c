// SPDX-License-Identifier: GPL-2.0
/* `jitrace report --diff`: two logs' methods matched by name and kind, what moved most in
 * share of samples from base to new, as text or JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "base/util.h"
#include "base/xout.h"
#include "views/report_model.h"
#include "views/stacks.h"

/* ---- two logs: what moved ---- */

/* A method (by name and kind) in either log of a diff: its samples in each. */
struct drow {
	const char *name;	/* held by one of the logs' stacks */
	enum jt_lv_kind kind;
	uint64_t self[2], total[2];	/* [0] base, [1] new */
	double self_chg, total_chg;	/* points of each log's samples, new less base */
};

struct diff {
	const struct jt_report_opts *o;
	struct jt_report_model log[2];	/* base, new */
	struct jt_xintern keys;	/* kind, then name: index into rows */
	struct drow *rows;
	size_t cap;
};

/* Take in one log's methods over every process. Returns 0 or -ENOMEM. */
static int diff_add(struct diff *d, int which)
{
	const struct jt_report_model *r = &d->log[which];
	size_t pos = 0, klen;
	uint64_t key;
	void *val;
	char *k;

	while (jt_hash__next(&r->all.entries, &pos, &key, &val)) {
		const struct jt_report_entry *e = val;
		struct drow *row;
		enum jt_lv_kind kind;
		const char *name = jt_stacks__name(r->stk, e->name, &kind);
		bool added;
		long idx;

		if (!e->self && !e->total)
			continue;
		klen = strlen(name) + 1;
		k = malloc(klen);
		if (!k)
			return -ENOMEM;
		k[0] = (char)kind;
		memcpy(k + 1, name, klen - 1);
		idx = jt_xintern__get(&d->keys, k, klen, &added);
		free(k);
		if (idx < 0 || jt_array_grow(&d->rows, &d->cap, idx + 1, sizeof(*d->rows)))
			return -ENOMEM;
		row = &d->rows[idx];
		if (added)
			*row = (struct drow){ .name = name, .kind = kind };
		row->self[which] += e->self;
		row->total[which] += e->total;
	}
	return 0;
}

static double abs_d(double v)
{
	return v < 0 ? -v : v;
}

static int cmp_drows(const void *pa, const void *pb, void *ctx)
{
	const struct drow *a = *(void *const *)pa, *b = *(void *const *)pb;
	const struct diff *d = ctx;
	double x = d->o->sort == JT_REPORT_BY_TOTAL ? abs_d(a->total_chg) : abs_d(a->self_chg);
	double y = d->o->sort == JT_REPORT_BY_TOTAL ? abs_d(b->total_chg) : abs_d(b->self_chg);
	int c;

	if (x != y)
		return x > y ? -1 : 1;
	x = d->o->sort == JT_REPORT_BY_TOTAL ? abs_d(a->self_chg) : abs_d(a->total_chg);
	y = d->o->sort == JT_REPORT_BY_TOTAL ? abs_d(b->self_chg) : abs_d(b->total_chg);
	if (x != y)
		return x > y ? -1 : 1;
	c = strcmp(a->name, b->name);
	return c ?: (int)a->kind - (int)b->kind;
}

/* The rows, what moved most first, at most --top of them; *n gets the count. */
static const struct drow **diff_rows(struct diff *d, size_t *n)
{
	const struct drow **v = malloc((d->keys.n + 1) * sizeof(*v));
	uint64_t nb = d->log[0].all.samples, nn = d->log[1].all.samples;
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < d->keys.n; i++) {
		struct drow *row = &d->rows[i];

		row->self_chg = report__pct(row->self[1], nn) - report__pct(row->self[0], nb);
		row->total_chg = report__pct(row->total[1], nn) - report__pct(row->total[0], nb);
		v[i] = row;
	}
	qsort_r(v, d->keys.n, sizeof(*v), cmp_drows, d);
	*n = d->o->top && d->keys.n > d->o->top ? d->o->top : d->keys.n;
	return v;
}

static void diff_text(FILE *out, const struct diff *d, const struct drow **v, size_t n)
{
	const uint64_t nb = d->log[0].all.samples, nn = d->log[1].all.samples;
	size_t i;

	fputs("jitrace report --diff: the methods whose share of samples moved most\n", out);
	report__text_header(out, &d->log[0], "base: ", "   ");
	report__text_header(out, &d->log[1], "new:  ", "   ");
	fprintf(out, "\n== %zu method%s; %% of each log's own samples, CHANGE in points "
		"(new - base); sorted by %s\n", n, n == 1 ? "" : "s",
		d->o->sort == JT_REPORT_BY_TOTAL ? "total" : "self");
	if (!n)
		return;
	fprintf(out, "%35s %36s\n", "self (the method is the leaf)",
		"total (anywhere on the stack)");
	fprintf(out, "%7s %6s %7s %6s %7s  %7s %6s %7s %6s %7s  %-7s %s\n", "BASE", "%", "NEW",
		"%", "CHANGE", "BASE", "%", "NEW", "%", "CHANGE", "KIND", "METHOD");
	for (i = 0; i < n; i++) {
		const struct drow *w = v[i];

		fprintf(out, "%7" PRIu64 " %5.1f%% %7" PRIu64 " %5.1f%% %+7.1f  %7" PRIu64
			" %5.1f%% %7" PRIu64 " %5.1f%% %+7.1f  %-7s ", w->self[0],
			report__pct(w->self[0], nb), w->self[1], report__pct(w->self[1], nn),
			w->self_chg, w->total[0], report__pct(w->total[0], nb), w->total[1],
			report__pct(w->total[1], nn), w->total_chg, jt_lv__kind_name(w->kind));
		report__text_line(out, "", w->name, "\n");
	}
}

static void diff_json(struct jt_xout *x, const struct diff *d, const struct drow **v, size_t n)
{
	const uint64_t nb = d->log[0].all.samples, nn = d->log[1].all.samples;
	size_t i;

	jt_xout__str(x, "{\"base\": {");
	report__json_log(x, &d->log[0]);
	jt_xout__printf(x, ", \"samples\": %" PRIu64 "},\n \"new\": {", nb);
	report__json_log(x, &d->log[1]);
	jt_xout__printf(x, ", \"samples\": %" PRIu64 "},\n \"sort\": \"%s\", \"methods\": [",
			nn, d->o->sort == JT_REPORT_BY_TOTAL ? "total" : "self");
	for (i = 0; i < n; i++) {
		const struct drow *w = v[i];

		jt_xout__str(x, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		report__json_str(x, w->name);
		jt_xout__printf(x, ", \"kind\": \"%s\", \"base_self\": %" PRIu64
				", \"base_self_pct\": %.2f, \"new_self\": %" PRIu64
				", \"new_self_pct\": %.2f, \"self_change\": %.2f, \"base_total\": %"
				PRIu64 ", \"base_total_pct\": %.2f, \"new_total\": %" PRIu64
				", \"new_total_pct\": %.2f, \"total_change\": %.2f}",
				jt_lv__kind_name(w->kind), w->self[0],
				report__pct(w->self[0], nb), w->self[1],
				report__pct(w->self[1], nn), w->self_chg, w->total[0],
				report__pct(w->total[0], nb), w->total[1],
				report__pct(w->total[1], nn), w->total_chg);
	}
	jt_xout__str(x, "]}\n");
}

int report__diff(FILE *out, const struct jt_report_opts *o)
{
	struct jt_report_opts base = *o;
	struct diff d = { .o = o };
	const struct drow **v = NULL;
	struct jt_xout x;
	int i, ret = 1, werr;
	size_t n;

	base.path = o->base;
	base.base = NULL;
	d.log[0].o = &base;
	d.log[1].o = o;
	for (i = 0; i < 2; i++)
		if (report__load(&d.log[i]))
			goto out;
	if (diff_add(&d, 0) || diff_add(&d, 1) || !(v = diff_rows(&d, &n))) {
		jt_err("%s", report__nomem);
		goto out;
	}
	if (o->json) {
		if (jt_xout__init(&x, out)) {
			jt_err("%s", report__nomem);
			goto out;
		}
		diff_json(&x, &d, v, n);
		werr = jt_xout__fini(&x);
		if (werr) {
			jt_err("writing the report: %s", strerror(werr));
			goto out;
		}
	} else {
		diff_text(out, &d, v, n);
	}
	if (fflush(out) || ferror(out)) {
		jt_err("writing the report: %s", strerror(errno ? errno : EIO));
		goto out;
	}
	ret = 0;
out:
	free(v);
	free(d.rows);
	jt_xintern__fini(&d.keys);
	report__free(&d.log[0]);
	report__free(&d.log[1]);
	return ret;
}
