// SPDX-License-Identifier: GPL-2.0
/* `jitrace report --json`: the text report's tables as one JSON document. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "base/util.h"
#include "base/xout.h"
#include "log/source.h"
#include "views/report_model.h"
#include "views/stacks.h"


/* Through the exports' writer, so that every JSON jitrace writes escapes strings alike. */
void report__json_str(struct jt_xout *x, const char *s)
{
	jt_xout__json_str(x, s, strlen(s));
}

/* "on_cpu_ns": T (null when not sampled), "off_cpu": {"wait_ns": T, "waits": N, by state} */
static void json_time(struct jt_xout *x, const struct jt_report_model *r, uint64_t samples,
		      const struct jt_report_offtime *t)
{
	unsigned int k;

	if (r->src.hdr->sample_hz)
		jt_xout__printf(x, "\"on_cpu_ns\": %" PRIu64, report__cpu_ns(r, samples));
	else
		jt_xout__str(x, "\"on_cpu_ns\": null");
	jt_xout__printf(x, ", \"off_cpu\": {\"wait_ns\": %" PRIu64 ", \"waits\": %" PRIu64,
			t->ns[0], t->n[0]);
	for (k = 1; k < JT_OFF_MAX; k++)
		jt_xout__printf(x, ", \"%s\": {\"wait_ns\": %" PRIu64 ", \"waits\": %" PRIu64 "}",
				jt_off_state__name(k), t->ns[k], t->n[k]);
	jt_xout__str(x, "}");
}

/* , the section's time on and off the CPU, "off_cpu_methods": [...] as text_offcpu's table */
static int json_offcpu(struct jt_xout *x, const struct jt_report_model *r,
		       const struct jt_report_section *s)
{
	size_t n, i;
	void **v;

	if (!r->any_offcpu)
		return 0;
	v = report__rows(r, s, JT_REPORT_OFF, &n);
	if (!v)
		return -ENOMEM;
	jt_xout__str(x, ", ");
	json_time(x, r, s->samples, &s->off);
	jt_xout__str(x, ", \"off_cpu_methods\": [");
	for (i = 0; i < n; i++) {
		const struct jt_report_entry *e = v[i];
		enum jt_lv_kind kind;
		const char *name = jt_stacks__name(r->stk, e->name, &kind);

		jt_xout__str(x, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		report__json_str(x, name);
		jt_xout__printf(x, ", \"kind\": \"%s\", \"wait_ns\": %" PRIu64
				", \"wait_pct\": %.2f, \"inner_ns\": %" PRIu64 ", \"waits\": %"
				PRIu64 ", ", jt_lv__kind_name(kind), e->wait_ns,
				report__pct(e->wait_ns, s->off.ns[0]), e->inner_ns, e->waits);
		if (r->src.hdr->sample_hz)
			jt_xout__printf(x, "\"cpu_ns\": %" PRIu64 "}", report__cpu_ns(r, e->total));
		else
			jt_xout__str(x, "\"cpu_ns\": null}");
	}
	free(v);
	jt_xout__str(x, "]");
	return 0;
}

/* A thread's entry in a list, up to its name: {"tid": T, "name": NAME or "" */
static void json_thread_head(struct jt_xout *x, const struct jt_report_model *r, uint32_t tid,
			     bool first)
{
	const char *name = jt_lv__thread(r->src.lv, tid);

	jt_xout__printf(x, "%s\n   {\"tid\": %u, \"name\": ", first ? "" : ",", tid);
	report__json_str(x, name ? name : "");
}

/* , "thread_times": [{"tid": T, "name": NAME or "", "samples": N, time on and off}, ...] */
static int json_walls(struct jt_xout *x, const struct jt_report_model *r, uint32_t pid)
{
	size_t n, i;
	void **v;

	if (!r->any_offcpu)
		return 0;
	v = report__walls_of(r, pid, &n);
	if (!v)
		return -ENOMEM;
	jt_xout__str(x, ", \"thread_times\": [");
	for (i = 0; i < n; i++) {
		const struct jt_report_wall *w = v[i];

		json_thread_head(x, r, w->tid, i == 0);
		jt_xout__printf(x, ", \"samples\": %" PRIu64 ", ", w->samples);
		json_time(x, r, w->samples, &w->off);
		jt_xout__str(x, "}");
	}
	free(v);
	jt_xout__str(x, "]");
	return 0;
}

static int json_section(struct jt_xout *x, const struct jt_report_model *r,
			const struct jt_report_section *s)
{
	size_t n, i;
	void **v = report__rows(r, s, JT_REPORT_HOT, &n);
	int k;

	if (!v)
		return -ENOMEM;
	jt_xout__printf(x, "\"samples\": %" PRIu64 ", \"calls\": %" PRIu64 ", \"methods\": [",
			s->samples, s->calls);
	for (i = 0; i < n; i++) {
		const struct jt_report_entry *e = v[i];
		enum jt_lv_kind kind;
		const char *name = jt_stacks__name(r->stk, e->name, &kind);

		jt_xout__str(x, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		report__json_str(x, name);
		jt_xout__printf(x, ", \"kind\": \"%s\", \"self\": %" PRIu64 ", \"self_pct\": %.2f, "
				"\"total\": %" PRIu64 ", \"total_pct\": %.2f, \"offsets\": [",
				jt_lv__kind_name(kind), e->self, report__pct(e->self, s->samples),
				e->total, report__pct(e->total, s->samples));
		for (k = 0; k < JT_REPORT_NR_OFFS && e->top[k].n; k++) {
			jt_xout__printf(x, "%s{\"offset\": %" PRIu64 ", \"samples\": %" PRIu64,
					k ? ", " : "", e->top[k].off, e->top[k].n);
			if (JT_REPORT_SRC_KNOWN(e->top[k].src)) {
				jt_xout__str(x, ", \"file\": ");
				report__json_str(x, report__src_file(r, e->top[k].src));
				jt_xout__printf(x, ", \"line\": %u", (uint32_t)e->top[k].src);
			}
			jt_xout__str(x, "}");
		}
		jt_xout__str(x, "]");
		if (e->has_calls)
			jt_xout__printf(x, ", \"calls\": %" PRIu64 ", \"incl_ns\": %" PRIu64
					", \"excl_ns\": %" PRIu64, e->calls, e->incl_ns,
					e->excl_ns);
		jt_xout__str(x, "}");
	}
	free(v);
	jt_xout__str(x, "]");
	v = report__rows(r, s, JT_REPORT_CALLS, &n);
	if (!v)
		return -ENOMEM;
	jt_xout__str(x, ", \"calls_by_time\": [");
	for (i = 0; i < n; i++) {
		const struct jt_report_entry *e = v[i];

		jt_xout__str(x, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		report__json_str(x, jt_stacks__name(r->stk, e->name, NULL));
		jt_xout__printf(x, ", \"calls\": %" PRIu64 ", \"incl_ns\": %" PRIu64
				", \"excl_ns\": %" PRIu64 "}", e->calls, e->incl_ns, e->excl_ns);
	}
	free(v);
	jt_xout__str(x, "]");
	return json_offcpu(x, r, s);
}

/* --threads: , "threads": [{"tid": T, "name": NAME or "", samples, methods...}, ...] */
static int json_threads(struct jt_xout *x, const struct jt_report_model *r,
			const struct jt_report_section *s)
{
	size_t n, i;
	void **v;

	if (!r->o->threads)
		return 0;
	v = report__threads_of(r, s->pid, &n);
	if (!v)
		return -ENOMEM;
	jt_xout__str(x, ", \"threads\": [");
	for (i = 0; i < n; i++) {
		const struct jt_report_section *t = v[i];

		json_thread_head(x, r, t->tid, i == 0);
		jt_xout__str(x, ", ");
		if (json_section(x, r, t)) {
			free(v);
			return -ENOMEM;
		}
		jt_xout__str(x, "}");
	}
	free(v);
	jt_xout__str(x, "]");
	return 0;
}

void report__json_log(struct jt_xout *x, const struct jt_report_model *r)
{
	const struct jt_log_header *h = r->src.hdr;
	char when[64], host[65], kernel[65];
	size_t i;
	int k;

	report__start(r, when, sizeof(when));
	snprintf(host, sizeof(host), "%.64s", h->hostname);
	snprintf(kernel, sizeof(kernel), "%.64s", h->kernel);
	jt_xout__str(x, "\"log\": ");
	report__json_str(x, r->o->path);
	jt_xout__str(x, ", \"start\": ");
	report__json_str(x, when);
	jt_xout__str(x, ", \"host\": ");
	report__json_str(x, host);
	jt_xout__str(x, ", \"kernel\": ");
	report__json_str(x, kernel);
	jt_xout__printf(x, ", \"duration_s\": %.6f, \"cpus\": %u, \"hz\": %u, "
			"\"system_wide\": %s, \"calls_recorded\": %s, \"kernel_stacks\": %s,\n "
			"\"lost\": {", report__duration_s(r), h->ncpus, h->sample_hz,
			h->flags & JT_LOG_F_SYSTEM_WIDE ? "true" : "false",
			h->flags & JT_LOG_F_CALLS ? "true" : "false",
			h->flags & JT_LOG_F_KSTACK ? "true" : "false");
	for (k = 0; k < JT_DROP_MAX; k++)
		jt_xout__printf(x, "%s\"%s\": %" PRIu64, k ? ", " : "", jt_drop__name(k),
				r->src.drops[k]);
	jt_xout__str(x, "}");
	/* only where drop records named threads: logs without any read as they did */
	for (i = 0; i < r->src.nr_lost; i++) {
		const struct jt_logsrc_lost *l = &r->src.lost[i];

		jt_xout__printf(x, "%s{\"what\": \"%s\", \"tid\": %u, \"count\": %" PRIu64 "}",
				i ? ", " : ",\n \"lost_by_thread\": [", jt_drop__name(l->what),
				l->tid, l->count);
	}
	if (r->src.nr_lost)
		jt_xout__str(x, "]");
}

static int json_body(struct jt_xout *x, const struct jt_report_model *r)
{
	void **procs;
	size_t n, i;

	jt_xout__str(x, "{");
	report__json_log(x, r);
	jt_xout__printf(x, ",\n \"call_records\": {\"entered\": %" PRIu64 ", \"left\": %"
			PRIu64 ", \"leave_without_enter\": %" PRIu64 ", \"closed_by_outer_leave\": %"
			PRIu64 ", \"open_at_end\": %" PRIu64 ", \"summed_in_process\": %" PRIu64
			", \"logged_for_length\": %" PRIu64 "},\n \"all\": {", r->enters,
			r->leaves, r->leave_no_enter, r->closed_by_outer, r->open_at_end, r->summed,
			r->spans);
	if (json_section(x, r, &r->all))
		return -ENOMEM;
	jt_xout__str(x, "},\n \"processes\": [");
	procs = report__sections(r, &n);
	if (!procs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct jt_report_section *s = procs[i];
		const struct jt_lv_proc *p = jt_lv__proc(r->src.lv, s->pid);

		jt_xout__printf(x, "%s\n  {\"pid\": %u, \"comm\": ", i ? "," : "", s->pid);
		report__json_str(x, p ? p->comm : "");
		jt_xout__str(x, ", \"cmdline\": ");
		report__json_str(x, p ? p->cmdline : "");
		jt_xout__str(x, ", ");
		if (json_section(x, r, s) || json_walls(x, r, s->pid) || json_threads(x, r, s)) {
			free(procs);
			return -ENOMEM;
		}
		jt_xout__str(x, "}");
	}
	free(procs);
	jt_xout__str(x, "]}\n");
	return 0;
}

int report__json(FILE *out, const struct jt_report_model *r)
{
	struct jt_xout x;
	int err, werr;

	if (jt_xout__init(&x, out)) {
		jt_err("%s", report__nomem);
		return -ENOMEM;
	}
	err = json_body(&x, r);
	werr = jt_xout__fini(&x);
	if (!err && werr) {
		jt_err("writing the report: %s", strerror(werr));
		err = -werr;
	}
	return err;
}
