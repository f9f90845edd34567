/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the tests of real runtimes (Node, BEAM): what a test program printed about
 * the work it did, and what the log says each of its samples was doing.
 * Header-only (static inline) so each itest links with lib.c alone, as the Makefile does.
 */
#ifndef JT_ITEST_RT_H
#define JT_ITEST_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "jt_log_format.h"
#include "lib.h"

#define RT_FNS 256	/* churn.js makes many */
#define RT_MARGIN_NS 50000ULL	/* a sample this close to a span's ends may be in the caller */

/* One call of a hot function, on CLOCK_MONOTONIC. */
struct rt_span {
	uint64_t begin, end;
	int fn;
};

/* What a test program (tests/runtimes/...) printed. */
struct rt_truth {
	pid_t pid;
	int nr_fns;
	char fns[RT_FNS][64];	/* as the runtime names them: "hotA", "hot:a/2" */
	uint64_t units[RT_FNS];	/* units of work, the same CPU cost each */
	struct rt_span *spans;	/* in time order */
	size_t nr_spans;
	bool done;
};

static inline int rt_fn_index(struct rt_truth *t, const char *fn, bool add)
{
	int i;

	for (i = 0; i < t->nr_fns; i++)
		if (!strcmp(t->fns[i], fn))
			return i;
	if (!add || t->nr_fns == RT_FNS)
		return -1;
	snprintf(t->fns[t->nr_fns], sizeof(t->fns[0]), "%s", fn);
	return t->nr_fns++;
}

/* Lines "pid N", "iv FN BEGIN END", "units FN=N", "done". */
static inline void rt_truth_parse(const char *path, struct rt_truth *t)
{
	FILE *f = fopen(path, "r");
	char line[512], fn[64];
	unsigned long long a, b;
	size_t cap = 0;
	int pid;

	memset(t, 0, sizeof(*t));
	if (!f)
		fail_msg("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "pid %d", &pid) == 1) {
			t->pid = pid;
		} else if (sscanf(line, "iv %63s %llu %llu", fn, &a, &b) == 3) {
			if (t->nr_spans == cap) {
				cap = cap ? 2 * cap : 4096;
				t->spans = realloc(t->spans, cap * sizeof(*t->spans));
				assert_non_null(t->spans);
			}
			t->spans[t->nr_spans++] = (struct rt_span){ a, b, rt_fn_index(t, fn, true) };
		} else if (sscanf(line, "units %63[^=]=%llu", fn, &a) == 2) {
			int i = rt_fn_index(t, fn, true);

			if (i >= 0)
				t->units[i] = a;
		} else if (!strcmp(line, "done\n")) {
			t->done = true;
		}
	}
	fclose(f);
	if (!t->done || !t->pid || t->nr_fns < 2 || !t->nr_spans)
		fail_msg("%s: the program did not finish its report", path);
}

static inline void rt_truth_free(struct rt_truth *t)
{
	free(t->spans);
	memset(t, 0, sizeof(*t));
}

/* The span containing ts (RT_MARGIN_NS inside its ends), or NULL. */
static inline const struct rt_span *rt_span_at(const struct rt_truth *t, uint64_t ts)
{
	size_t lo = 0, hi = t->nr_spans;

	while (lo < hi) {	/* the first span ending after ts */
		size_t mid = (lo + hi) / 2;

		if (t->spans[mid].end <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nr_spans)
		return NULL;
	if (ts < t->spans[lo].begin + RT_MARGIN_NS || ts + RT_MARGIN_NS > t->spans[lo].end)
		return NULL;
	return &t->spans[lo];
}

/*
 * A runtime's naming: the program function a method is (e.g. "hotA" for
 * "JS:*hotA /p/hot.js:15:14", "hot:a/2" for "$hot:a/2") written to fn; false for a method
 * that is not a function of the program (a builtin, a stub, a bytecode handler).
 */
typedef bool (*rt_fn_of)(const struct jt_rec_method *m, char *fn, size_t size);

static inline bool rt_name_has_prefix(const struct jt_rec_method *m, const char *prefix)
{
	size_t n = strlen(prefix);

	return m->name_len >= n && !memcmp(m->name, prefix, n);
}

/* V8: "JS:" then the tier ('~' interpreted, '^' baseline, '+' Maglev, '*' TurboFan, or none),
 * the function's name, a space and where it is defined. */
static inline bool rt_node_fn(const struct jt_rec_method *m, char *fn, size_t size)
{
	size_t i = 3, n;

	if (!rt_name_has_prefix(m, "JS:"))
		return false;
	if (i < m->name_len && strchr("~^+*", m->name[i]))
		i++;
	for (n = 0; i + n < m->name_len && m->name[i + n] != ' '; n++)
		;
	if (n >= size)
		return false;
	memcpy(fn, m->name + i, n);
	fn[n] = 0;
	return true;
}

/* BEAM: "$module:function/arity"; "$global::..." are the emulator's shared fragments and
 * "...-CodeInfoPrologue" the headers before each function. */
static inline bool rt_beam_fn(const struct jt_rec_method *m, char *fn, size_t size)
{
	static const char prologue[] = "-CodeInfoPrologue";
	size_t n = m->name_len - 1, pl = sizeof(prologue) - 1;

	if (!rt_name_has_prefix(m, "$") || rt_name_has_prefix(m, "$global:"))
		return false;
	if (n >= pl && !memcmp(m->name + m->name_len - pl, prologue, pl))
		return false;
	if (n >= size)
		return false;
	memcpy(fn, m->name + 1, n);
	fn[n] = 0;
	return true;
}

/* What the log says a program's samples were doing. */
struct rt_stats {
	uint64_t samples;
	uint64_t leaf[RT_FNS];		/* leaf frame in each hot function */
	uint64_t attr[RT_FNS];		/* innermost program function is each hot function */
	/* samples inside a call span (the program's own clock) on the thread that made the
	 * call (Node) or on any (BEAM): the innermost program
	 * function is the span's (right), another hot function (wrong), another function,
	 * e.g. the caller (other), or none at all (unnamed) */
	uint64_t in_span, right, wrong, other, unnamed;
	/* the same for the spans that began in the program's first second (it_scale()) */
	uint64_t early_in_span, early_right, early_wrong;
	uint64_t early_tier[4];		/* V8 tiers of the early right ones: ~ ^ + * */
	uint64_t foreign;		/* frames naming a method of another process */
	/* methods whose code lies where earlier code of another function lay */
	uint64_t reused;
};

/* Innermost frame that is a program function: its index in t (or -1) and its method. */
static inline int rt_attribute(const struct it_log *log, const struct jt_rec_sample *s,
			       struct rt_truth *t, rt_fn_of fn_of,
			       const struct jt_rec_method **which)
{
	char fn[64];
	unsigned int k;

	*which = NULL;
	for (k = 0; k < s->nr_frames; k++) {
		const struct jt_rec_method *m;

		if (JT_FRAME_KIND(s->frames[k].ref) != JT_FRAME_METHOD)
			continue;
		m = it_method(log, JT_FRAME_ID(s->frames[k].ref));
		if (!m || !fn_of(m, fn, sizeof(fn)))
			continue;
		*which = m;
		return rt_fn_index(t, fn, false);
	}
	return -2;
}

static inline void rt_count_reuse(const struct it_log *log, uint32_t pid, rt_fn_of fn_of,
				  struct rt_stats *st)
{
	size_t i, j;
	char a[64], b[64];

	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		if (!m || m->pid != pid || !fn_of(m, a, sizeof(a)))
			continue;
		for (j = 1; j < i; j++) {
			const struct jt_rec_method *o = log->methods[j];

			if (o && o->pid == pid && o->start < m->start + m->size &&
			    m->start < o->start + o->size && fn_of(o, b, sizeof(b)) &&
			    strcmp(a, b)) {
				st->reused++;
				break;
			}
		}
	}
}

/* main_only: the program runs on its main thread (Node), so the spans are that thread's;
 * otherwise (BEAM's schedulers) on any thread. */
static inline void rt_count(const struct it_log *log, struct rt_truth *t, rt_fn_of fn_of,
			    bool main_only, struct rt_stats *st)
{
	/* the first second's work takes it_scale() seconds where everything runs slower */
	uint64_t early_end = t->spans[0].begin + it_scale() * 1000000000ULL;
	char fn[64];
	size_t i;
	unsigned int k;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m, *leaf;
		const struct rt_span *span;
		int f;

		if (s->h.type != JT_REC_SAMPLE || s->pid != (uint32_t)t->pid)
			continue;
		st->samples++;
		for (k = 0; k < s->nr_frames; k++) {
			m = JT_FRAME_KIND(s->frames[k].ref) == JT_FRAME_METHOD ?
				    it_method(log, JT_FRAME_ID(s->frames[k].ref)) : NULL;
			st->foreign += m && m->pid != s->pid;
		}
		leaf = it_leaf_method(log, s);
		if (leaf && fn_of(leaf, fn, sizeof(fn)) && (f = rt_fn_index(t, fn, false)) >= 0)
			st->leaf[f]++;
		f = rt_attribute(log, s, t, fn_of, &m);
		if (f >= 0)
			st->attr[f]++;
		span = rt_span_at(t, s->h.ts);
		if (!span || (main_only && s->tid != s->pid))
			continue;
		st->in_span++;
		st->right += f == span->fn;
		st->wrong += f >= 0 && f != span->fn;
		st->other += f == -1;
		st->unnamed += f == -2;
		if (span->begin >= early_end)
			continue;
		st->early_in_span++;
		st->early_right += f == span->fn;
		st->early_wrong += f >= 0 && f != span->fn;
		if (f == span->fn && m->name_len > 3) {
			const char *tier = strchr("~^+*", m->name[3]);

			if (tier && *tier)
				st->early_tier[tier - "~^+*"]++;
		}
	}
	rt_count_reuse(log, t->pid, fn_of, st);
}

/*
 * fns[0]'s share of work as the program did it, and of samples as uses[] counted them:
 * equal within systematic (what the runtime may add, said by the caller) and chance.
 */
static inline void rt_assert_share(const char *what, const struct rt_truth *t,
				   const uint64_t *uses, double systematic)
{
	uint64_t units = 0, n = 0;
	char label[256];
	int i;

	for (i = 0; i < t->nr_fns; i++) {
		units += t->units[i];
		n += uses[i];
	}
	assert_true(units > 0);
	snprintf(label, sizeof(label), "pid %d %s in %s (of %s and %s)", t->pid, what, t->fns[0],
		 t->fns[0], t->fns[1]);
	it_assert_share_near(label, uses[0], n, (double)t->units[0] / units, systematic);
}

/* The share of in-span samples named right is at least floor, less chance (see lib.h). */
static inline void rt_assert_right(const struct rt_truth *t, uint64_t right, uint64_t in_span,
				   double floor, const char *why)
{
	char label[64];

	snprintf(label, sizeof(label), "pid %d samples in calls named right", t->pid);
	it_assert_share_at_least(label, right, in_span, floor, why);
}

static inline void rt_print_stats(const struct rt_truth *t, const struct rt_stats *st)
{
	print_message("pid %d: %llu samples, %llu inside calls: %llu right, %llu wrong, %llu in "
		      "another function, %llu unnamed; first second %llu: %llu right, %llu "
		      "wrong (tiers ~%llu ^%llu +%llu *%llu); %llu foreign frames; %llu "
		      "methods on reused code\n", t->pid,
		      (unsigned long long)st->samples, (unsigned long long)st->in_span,
		      (unsigned long long)st->right, (unsigned long long)st->wrong,
		      (unsigned long long)st->other, (unsigned long long)st->unnamed,
		      (unsigned long long)st->early_in_span, (unsigned long long)st->early_right,
		      (unsigned long long)st->early_wrong,
		      (unsigned long long)st->early_tier[0], (unsigned long long)st->early_tier[1],
		      (unsigned long long)st->early_tier[2], (unsigned long long)st->early_tier[3],
		      (unsigned long long)st->foreign, (unsigned long long)st->reused);
}

/* Every method named in a sample of pid is pid's own and none is named with bad_prefix
 * (another runtime's naming) or one of the functions of another program. */
static inline void rt_assert_own_names(const struct it_log *log, uint32_t pid,
				       const char *bad_prefix, const char *const *bad_fns,
				       rt_fn_of fn_of)
{
	char fn[64];
	size_t i;
	unsigned int k;
	int j;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		for (k = 0; k < s->nr_frames; k++) {
			const struct jt_rec_method *m;

			if (JT_FRAME_KIND(s->frames[k].ref) != JT_FRAME_METHOD)
				continue;
			m = it_method(log, JT_FRAME_ID(s->frames[k].ref));
			assert_non_null(m);
			if (m->pid != pid)
				fail_msg("a sample of pid %u names method %llu of pid %u", pid,
					 (unsigned long long)m->id, m->pid);
			if (rt_name_has_prefix(m, bad_prefix))
				fail_msg("a sample of pid %u names %.*s", pid, (int)m->name_len,
					 m->name);
			if (!fn_of(m, fn, sizeof(fn)))
				continue;
			for (j = 0; bad_fns[j]; j++)
				if (!strcmp(fn, bad_fns[j]))
					fail_msg("a sample of pid %u names %s", pid, fn);
		}
	}
}

#endif
