// SPDX-License-Identifier: GPL-2.0
/* `jitrace report` as text: the header, then per log and per process the hot methods, the
 * calls, where threads waited off the CPU, each thread's time on and off it (--threads:
 * a table per thread). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "base/text.h"
#include "base/util.h"
#include "log/source.h"
#include "views/report_model.h"
#include "views/stacks.h"

/*
 * Text from the log, for a terminal that may be root's: a traced process chooses its
 * command line and names, and their control bytes would drive the terminal (clear it,
 * retitle it, recolour it). As `dump` writes them: each control byte (C0, DEL, and C1 as
 * UTF-8), backslash and byte that is not UTF-8 becomes \xHH; the rest of UTF-8 is kept.
 * dump.c's put_esc writes into its own buffer and escapes all non-ASCII: one shared
 * helper would be better.
 */
void report__text_line(FILE *out, const char *before, const char *s, const char *after)
{
	fputs(before, out);
	jt_text__put(out, s, strlen(s));
	fputs(after, out);
}

/* Threads named in the report's lost line at most, the most lost first; the rest summed. */
#define LOST_THREADS_SHOWN 8

/* After a kind's count in the lost line, which threads lost them, if its records said. */
static void text_thread_lost(FILE *out, const struct jt_logsrc *src, unsigned int what)
{
	uint64_t rest = 0;
	size_t i, n = 0, more = 0;

	for (i = 0; i < src->nr_lost; i++) {
		const struct jt_logsrc_lost *l = &src->lost[i];

		if (l->what != what)
			continue;
		if (n == LOST_THREADS_SHOWN) {
			more++;
			rest += l->count;
			continue;
		}
		fprintf(out, "%stid %u: %" PRIu64, n++ ? ", " : " (", l->tid, l->count);
	}
	if (more)
		fprintf(out, ", %zu more threads: %" PRIu64, more, rest);
	if (n)
		fputc(')', out);
}

void report__text_header(FILE *out, const struct jt_report_model *r, const char *label,
			 const char *indent)
{
	const struct jt_log_header *h = r->src.hdr;
	char when[64], filt[256];
	bool kept;
	int i;

	report__start(r, when, sizeof(when));
	report__text_line(out, label, r->o->path, "\n");
	fprintf(out, "%srecorded %s on ", indent, when);
	jt_text__put(out, h->hostname, sizeof(h->hostname));
	fputs(" (", out);
	jt_text__put(out, h->kernel, sizeof(h->kernel));
	fprintf(out, "), %.3f s, %u CPUs, %u Hz%s%s%s%s\n", report__duration_s(r), h->ncpus,
		h->sample_hz, h->flags & JT_LOG_F_SYSTEM_WIDE ? ", system-wide" : "",
		h->flags & JT_LOG_F_CALLS ? ", calls" : "",
		h->flags & JT_LOG_F_KSTACK ? ", kernel stacks" : "",
		h->flags & JT_LOG_F_OFFCPU ? ", off-CPU" : "");
	fprintf(out, "%s%" PRIu64 " samples", indent, r->all.samples);
	if (jt_logsrc__late(&r->src))	/* their perf-map lines came after them */
		fprintf(out, " (%" PRIu64 " named late)", jt_logsrc__late(&r->src));
	fprintf(out, ", %" PRIu64 " calls", r->enters + r->summed + r->spans);
	if (jt_filter__describe(&r->o->filter, filt, sizeof(filt)))
		fprintf(out, " (kept: %s)", filt);
	fprintf(out, "; lost %" PRIu64, jt_logsrc__dropped(&r->src));
	for (i = 0; i < JT_DROP_MAX; i++)
		if (r->src.drops[i] && !jt_drop__kept(i)) {
			fprintf(out, ", %s %" PRIu64, jt_drop__name(i), r->src.drops[i]);
			text_thread_lost(out, &r->src, i);
		}
	for (i = 0, kept = false; i < JT_DROP_MAX; i++)	/* samples kept, in part unnamed */
		if (r->src.drops[i] && jt_drop__kept(i)) {
			fprintf(out, "%s%s %" PRIu64, kept ? ", " : "; kept, cut or unnamed: ",
				jt_drop__name(i), r->src.drops[i]);
			text_thread_lost(out, &r->src, i);
			kept = true;
		}
	fputc('\n', out);
}

static void text_methods(FILE *out, const struct jt_report_model *r,
			 const struct jt_report_section *s)
{
	size_t n, i;
	void **v = report__rows(r, s, JT_REPORT_HOT, &n);
	int k;

	if (!v)
		return;
	if (!n) {
		free(v);
		return;
	}
	fprintf(out, "%9s %6s %9s %6s  %-7s %s\n", "SELF", "SELF%", "TOTAL", "TOTAL%", "KIND",
		"METHOD");
	for (i = 0; i < n; i++) {
		const struct jt_report_entry *e = v[i];
		enum jt_lv_kind kind;
		const char *name = jt_stacks__name(r->stk, e->name, &kind);

		fprintf(out, "%9" PRIu64 " %5.1f%% %9" PRIu64 " %5.1f%%  %-7s ", e->self,
			report__pct(e->self, s->samples), e->total,
			report__pct(e->total, s->samples), jt_lv__kind_name(kind));
		report__text_line(out, "", name, "\n");
		if (!e->top[0].n)
			continue;
		fprintf(out, "%42s", "hot offsets:");
		for (k = 0; k < JT_REPORT_NR_OFFS && e->top[k].n; k++) {
			double p = report__pct(e->top[k].n, e->self);

			fprintf(out, "%s +0x%" PRIx64 " %s%.0f%%", k ? "," : "", e->top[k].off,
				p < 0.5 ? "<" : "", p < 0.5 ? 1 : p);
			if (JT_REPORT_SRC_KNOWN(e->top[k].src)) {
				report__text_line(out, " ", report__src_file(r, e->top[k].src), "");
				fprintf(out, ":%u", (uint32_t)e->top[k].src);
			}
		}
		fputc('\n', out);
	}
	free(v);
}

static void text_calls(FILE *out, const struct jt_report_model *r,
		       const struct jt_report_section *s)
{
	size_t n, i;
	void **v = report__rows(r, s, JT_REPORT_CALLS, &n);

	if (!v)
		return;
	if (n) {
		fprintf(out, "\n%10s %12s %12s %10s  %s\n", "CALLS", "INCL_MS", "EXCL_MS",
			"AVG_US", "METHOD (calls)");
		for (i = 0; i < n; i++) {
			const struct jt_report_entry *e = v[i];

			fprintf(out, "%10" PRIu64 " %12.3f %12.3f %10.3f  ", e->calls,
				e->incl_ns / 1e6, e->excl_ns / 1e6,
				e->calls ? e->incl_ns / 1e3 / e->calls : 0);
			report__text_line(out, "", jt_stacks__name(r->stk, e->name, NULL), "\n");
		}
	}
	free(v);
}

/* ms, or "-" when the log was not sampled: its CPU time is not known. */
static const char *cpu_ms(const struct jt_report_model *r, uint64_t samples, char *buf, size_t cap)
{
	if (!r->src.hdr->sample_hz)
		return "-";
	snprintf(buf, cap, "%.3f", report__cpu_ns(r, samples) / 1e6);
	return buf;
}

/*
 * The whole log's time off the CPU and its split by state, and on it:
 * "off CPU 2504.000 ms in 15 waits: sleep 1500.000 ms (1), ..., short 4.000 ms (12)".
 */
static void text_off_totals(FILE *out, const struct jt_report_model *r)
{
	const struct jt_report_offtime *t = &r->all.off;
	unsigned int k;

	fprintf(out, "off CPU %.3f ms in %" PRIu64 " waits:", t->ns[0] / 1e6, t->n[0]);
	for (k = 1; k < JT_OFF_MAX; k++)
		fprintf(out, "%s %s %.3f ms (%" PRIu64 ")", k > 1 ? "," : "",
			jt_off_state__name(k), t->ns[k] / 1e6, t->n[k]);
	if (r->src.hdr->sample_hz)
		fprintf(out, "\non CPU %.3f ms: %" PRIu64 " samples at %u Hz\n",
			report__cpu_ns(r, r->all.samples) / 1e6, r->all.samples,
			r->src.hdr->sample_hz);
	else
		fputs("\non CPU: not sampled (0 Hz)\n", out);
}

/* ", T ms off CPU (P%)" after a section's samples, P of the whole log's; nothing without. */
static void text_off_head(FILE *out, const struct jt_report_model *r,
			  const struct jt_report_section *s, bool share)
{
	if (!r->any_offcpu)
		return;
	fprintf(out, ", %.3f ms off CPU", s->off.ns[0] / 1e6);
	if (share)
		fprintf(out, " (%.1f%%)", report__pct(s->off.ns[0], r->all.off.ns[0]));
}

/*
 * Where the section's threads waited: per method, the time of the waits whose stack held
 * it and their share of the section's, the time it was the innermost user frame (where
 * the thread blocked), the waits, and its CPU time (samples whose stack held it).
 */
static void text_offcpu(FILE *out, const struct jt_report_model *r,
			const struct jt_report_section *s)
{
	size_t n, i;
	void **v;
	char buf[32];

	if (!r->any_offcpu)
		return;
	v = report__rows(r, s, JT_REPORT_OFF, &n);
	if (!v)
		return;
	if (n) {
		fprintf(out, "\n%11s %6s %11s %7s %10s  %-7s %s\n", "WAIT_MS", "WAIT%", "INNER_MS",
			"WAITS", "CPU_MS", "KIND", "METHOD (off CPU)");
		for (i = 0; i < n; i++) {
			const struct jt_report_entry *e = v[i];
			enum jt_lv_kind kind;
			const char *name = jt_stacks__name(r->stk, e->name, &kind);

			fprintf(out, "%11.3f %5.1f%% %11.3f %7" PRIu64 " %10s  %-7s ",
				e->wait_ns / 1e6, report__pct(e->wait_ns, s->off.ns[0]),
				e->inner_ns / 1e6, e->waits, cpu_ms(r, e->total, buf, sizeof(buf)),
				jt_lv__kind_name(kind));
			report__text_line(out, "", name, "\n");
		}
	}
	free(v);
}

/*
 * Each thread of process pid, its time on the CPU (samples / hz) and off it by state (short
 * waits too), the share of the two it ran: "CPU_MS WAIT_MS SLEEP_MS ... CPU% THREAD".
 */
static int text_walls(FILE *out, const struct jt_report_model *r, uint32_t pid)
{
	static const char *const state_cols[] = {
		[JT_OFF_SLEEP] = "SLEEP_MS", [JT_OFF_BLOCKED] = "BLOCKED_MS",
		[JT_OFF_PREEMPTED] = "PREEMPT_MS", [JT_OFF_OTHER] = "OTHER_MS",
		[JT_OFF_SHORT] = "SHORT_MS",
	};
	_Static_assert(JT_ARRAY_SIZE(state_cols) == JT_OFF_MAX, "an off-CPU state has no column");
	size_t n, i;
	void **v;
	char buf[32], share[16];
	unsigned int k;

	if (!r->any_offcpu)
		return 0;
	v = report__walls_of(r, pid, &n);
	if (!v)
		return -ENOMEM;
	if (n) {
		fprintf(out, "\n%10s %11s", "CPU_MS", "WAIT_MS");
		for (k = 1; k < JT_OFF_MAX; k++)
			fprintf(out, " %10s", state_cols[k]);
		fprintf(out, " %7s %6s  %s\n", "WAITS", "CPU%", "THREAD (on and off CPU)");
	}
	for (i = 0; i < n; i++) {
		const struct jt_report_wall *w = v[i];
		const char *name = jt_lv__thread(r->src.lv, w->tid);
		uint64_t on = report__cpu_ns(r, w->samples);

		if (r->src.hdr->sample_hz)
			snprintf(share, sizeof(share), "%.1f%%",
				 report__pct(on, on + w->off.ns[0]));
		else
			snprintf(share, sizeof(share), "-");
		fprintf(out, "%10s %11.3f", cpu_ms(r, w->samples, buf, sizeof(buf)),
			w->off.ns[0] / 1e6);
		for (k = 1; k < JT_OFF_MAX; k++)
			fprintf(out, " %10.3f", w->off.ns[k] / 1e6);
		fprintf(out, " %7" PRIu64 " %6s  ", w->off.n[0], share);
		if (name) {
			report__text_line(out, "", name, "");
			fprintf(out, " (%u)\n", w->tid);
		} else {
			fprintf(out, "%u\n", w->tid);
		}
	}
	free(v);
	return 0;
}

/* --threads: a table per thread of process s, "== thread NAME (TID) of COMM (PID): ...". */
static int text_threads(FILE *out, const struct jt_report_model *r,
			const struct jt_report_section *s)
{
	char label[64];
	size_t n, i;
	void **v;

	if (!r->o->threads)
		return 0;
	v = report__threads_of(r, s->pid, &n);
	if (!v)
		return -ENOMEM;
	jt_stacks__proc_label(r->src.lv, s->pid, label, sizeof(label));
	for (i = 0; i < n; i++) {
		const struct jt_report_section *t = v[i];
		const char *name = jt_lv__thread(r->src.lv, t->tid);

		if (name) {	/* "NAME (TID)", or the tid alone when the log never named it */
			report__text_line(out, "\n== thread ", name, "");
			fprintf(out, " (%u) of ", t->tid);
		} else {
			fprintf(out, "\n== thread %u of ", t->tid);
		}
		report__text_line(out, "", label, ": ");
		fprintf(out, "%" PRIu64 " samples (%.1f%%)", t->samples,
			report__pct(t->samples, r->all.samples));
		text_off_head(out, r, t, true);
		fputc('\n', out);
		text_methods(out, r, t);
		text_offcpu(out, r, t);
	}
	free(v);
	return 0;
}

int report__text(FILE *out, const struct jt_report_model *r)
{
	void **procs;
	size_t n, i;
	char label[64];
	const struct jt_lv_proc *p;
	bool one;

	report__text_header(out, r, "jitrace report: ", "");
	if (r->any_calls)
		fprintf(out, "calls: %" PRIu64 " entered, %" PRIu64 " left; %" PRIu64
			" leaves without an enter, %" PRIu64 " closed by an outer leave, %" PRIu64
			" open at the end\n", r->enters, r->leaves, r->leave_no_enter,
			r->closed_by_outer, r->open_at_end);
	if (r->summed || r->spans)
		fprintf(out, "calls summed in the process: %" PRIu64 "; logged alone for their "
			"length: %" PRIu64 "\n", r->summed, r->spans);
	if (r->any_offcpu)
		text_off_totals(out, r);
	procs = report__sections(r, &n);
	if (!procs)
		return -ENOMEM;
	one = report__nr_sections(r) == 1;
	if (one) {	/* its tables would be the all-processes ones again: just name it */
		jt_stacks__proc_label(r->src.lv, ((struct jt_report_section *)procs[0])->pid, label,
				      sizeof(label));
		p = jt_lv__proc(r->src.lv, ((struct jt_report_section *)procs[0])->pid);
		report__text_line(out, "one process: ", label, "\n");
		if (p && p->cmdline[0])
			report__text_line(out, "   ", p->cmdline, "\n");
	}
	fprintf(out, "\n== all processes: %" PRIu64 " samples", r->all.samples);
	text_off_head(out, r, &r->all, false);
	fputc('\n', out);
	text_methods(out, r, &r->all);
	text_calls(out, r, &r->all);
	text_offcpu(out, r, &r->all);
	if (one && (text_walls(out, r, ((struct jt_report_section *)procs[0])->pid) ||
		    text_threads(out, r, procs[0])))
		goto nomem;
	for (i = 0; i < n && !one; i++) {
		const struct jt_report_section *s = procs[i];

		jt_stacks__proc_label(r->src.lv, s->pid, label, sizeof(label));
		p = jt_lv__proc(r->src.lv, s->pid);
		report__text_line(out, "\n== ", label, ": ");
		fprintf(out, "%" PRIu64 " samples (%.1f%%)", s->samples,
			report__pct(s->samples, r->all.samples));
		if (s->calls)
			fprintf(out, ", %" PRIu64 " calls", s->calls);
		text_off_head(out, r, s, true);
		fprintf(out, "\n");
		if (p && p->cmdline[0])
			report__text_line(out, "   ", p->cmdline, "\n");
		text_methods(out, r, s);
		text_calls(out, r, s);
		text_offcpu(out, r, s);
		if (text_walls(out, r, s->pid) || text_threads(out, r, s))
			goto nomem;
	}
	free(procs);
	return 0;
nomem:
	free(procs);
	return -ENOMEM;
}
