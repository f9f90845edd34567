// SPDX-License-Identifier: GPL-2.0
/* Reading a log for a command: definitions kept, drops counted, the filter applied, the
 * end explained once. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/latenames.h"
#include "log/set.h"
#include "log/source.h"
#include "base/names.h"
#include "base/util.h"

/*
 * The log names some methods late, after the samples they name: read it ahead once for
 * them, and know their definitions before any sample.
 */
static int read_late(struct jt_logsrc *s, const char *path, const struct jt_filter *filter)
{
	struct jt_filter f;
	struct jt_logset *ahead;
	const struct jt_rec_hdr *rec, *def;
	int err = 0;
	size_t i;

	if (filter)
		f = *filter;
	else
		jt_filter__init(&f);
	s->late = jt_latenames__new();
	if (!s->late)
		return -1;
	ahead = jt_logset__open(path, &f);
	if (!ahead)
		return -1;
	while (!err && (rec = jt_logset__next(ahead)))
		err = jt_latenames__take(s->late, rec);
	jt_logset__close(ahead);
	if (err || jt_latenames__ready(s->late))
		return -1;
	for (i = 0; (def = jt_latenames__def(s->late, i)); i++)
		if (jt_lv__add(s->lv, def))
			return -1;
	return 0;
}

int jt_logsrc__open(struct jt_logsrc *s, const char *path, const struct jt_filter *filter)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	if (filter)
		s->filter = *filter;
	else
		jt_filter__init(&s->filter);
	s->r = jt_logset__open(path, &s->filter);	/* a log, a directory, several logs */
	if (!s->r)
		return -1;
	s->lv = jt_lv__new();
	if (!s->lv) {
		jt_logsrc__close(s);
		return -1;
	}
	s->hdr = jt_logset__header(s->r);
	if ((s->hdr->flags & JT_LOG_F_LATE) && read_late(s, path, filter)) {
		jt_logsrc__close(s);
		return -1;
	}
	s->last_ts = s->hdr->start_ns;
	jt_filter__start(&s->filter, s->hdr->start_ns);
	return 0;
}

void jt_logsrc__close(struct jt_logsrc *s)
{
	free(s->lost);
	s->lost = NULL;
	s->nr_lost = s->cap_lost = 0;
	jt_lv__free(s->lv);
	jt_logset__close(s->r);
	jt_latenames__free(s->late);
	s->late = NULL;
	s->lv = NULL;
	s->r = NULL;
	s->hdr = NULL;
}

/* Whether a comes before b in the table of threads' losses: by kind, most lost first. */
static bool lost_before(const struct jt_logsrc_lost *a, const struct jt_logsrc_lost *b)
{
	if (a->what != b->what)
		return a->what < b->what;
	return a->count > b->count || (a->count == b->count && a->tid < b->tid);
}

/* n of kind what lost by thread tid, into the table kept in its order: 0 or -ENOMEM. */
static int thread_lost(struct jt_logsrc *s, uint32_t what, uint32_t tid, uint64_t n)
{
	struct jt_logsrc_lost t;
	size_t i;

	for (i = 0; i < s->nr_lost && (s->lost[i].what != what || s->lost[i].tid != tid); i++)
		;
	if (i == s->nr_lost) {
		if (s->nr_lost == s->cap_lost) {
			size_t cap = s->cap_lost ? 2 * s->cap_lost : 16;
			struct jt_logsrc_lost *v = realloc(s->lost, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			s->lost = v;
			s->cap_lost = cap;
		}
		s->lost[s->nr_lost++] = (struct jt_logsrc_lost){ what, tid, 0 };
	}
	s->lost[i].count += n;
	/* it only grew: it can only move towards the front */
	for (; i > 0 && lost_before(&s->lost[i], &s->lost[i - 1]); i--) {
		t = s->lost[i];
		s->lost[i] = s->lost[i - 1];
		s->lost[i - 1] = t;
	}
	return 0;
}

/* The process a sample or call is of, to filter it by; false for other records. */
static bool filtered_pid(const struct jt_rec_hdr *rec, uint32_t *pid)
{
	switch (rec->type) {
	case JT_REC_SAMPLE:
		*pid = ((const struct jt_rec_sample *)rec)->pid;
		return true;
	case JT_REC_OFFCPU:
		*pid = ((const struct jt_rec_offcpu *)rec)->smp.pid;
		return true;
	case JT_REC_ENTER:
	case JT_REC_LEAVE:
	case JT_REC_CALLSUM:	/* the same head: id, pid, tid */
	case JT_REC_SPAN:
		*pid = ((const struct jt_rec_call *)rec)->pid;
		return true;
	default:
		return false;
	}
}

const struct jt_rec_hdr *jt_logsrc__next(struct jt_logsrc *s, bool *kept)
{
	const struct jt_rec_hdr *rec;
	bool keep = false;
	uint32_t pid;

	if (s->err)
		return NULL;
	rec = jt_logset__next(s->r);
	if (!rec)
		return NULL;
	if (rec->ts > s->last_ts)
		s->last_ts = rec->ts;
	if (s->late && rec->type == JT_REC_SAMPLE) {
		const struct jt_rec_sample *smp = (const void *)rec;

		rec = &jt_latenames__apply(s->late, smp, jt_lv__user_leaf(s->lv, smp))->h;
	} else if (s->late && rec->type == JT_REC_OFFCPU) {
		const struct jt_rec_offcpu *off = (const void *)rec;

		rec = &jt_latenames__apply_offcpu(s->late, off,
						  jt_lv__user_leaf(s->lv, &off->smp))->h;
	}
	if (filtered_pid(rec, &pid)) {
		keep = jt_filter__keep(&s->filter, s->lv, rec->ts, pid);
		s->filtered += !keep;
	} else if (rec->type == JT_REC_DROP) {
		const struct jt_rec_drop *d = (const void *)rec;

		if (d->what < JT_DROP_MAX)
			s->drops[d->what] += d->count;
		else
			s->drops_other += d->count;
		if (d->what < JT_DROP_MAX && d->tid && d->count &&
		    thread_lost(s, d->what, d->tid, d->count)) {
			jt_err("out of memory: keeping thread %u's %s", d->tid,
			       jt_drop__name(d->what));
			s->err = -ENOMEM;
			return NULL;
		}
	} else if (jt_lv__add(s->lv, rec)) {
		s->err = -ENOMEM;
		return NULL;
	}
	if (kept)
		*kept = keep;
	return rec;
}

int jt_logsrc__finish(struct jt_logsrc *s, const char *done)
{
	if (s->err)
		return -1;
	switch (jt_logset__state(s->r)) {
	case JT_LOGR_TRUNCATED:
		jt_err("%s: truncated: %s; %s up to the last whole block", s->path,
		       jt_logset__why(s->r), done);
		return 0;
	case JT_LOGR_CORRUPT:
		jt_err("%s: corrupt: %s", s->path, jt_logset__why(s->r));
		return -1;
	default:
		return 0;
	}
}

uint64_t jt_logsrc__late(const struct jt_logsrc *s)
{
	return s->late ? jt_latenames__named(s->late) : 0;
}

uint64_t jt_logsrc__dropped(const struct jt_logsrc *s)
{
	return s->drops_other + jt_drop__lost(s->drops, JT_DROP_MAX);
}

const char *jt_logsrc__frame(const struct jt_logsrc *s, const struct jt_frame *f, char *buf,
			     const char **file, enum jt_lv_kind *kind)
{
	const char *name = jt_lv__frame(s->lv, f, buf, JT_LOGSRC_NAME_CAP, kind);
	const char *base;

	switch (*kind) {
	case JT_LV_JIT:
		*file = "[jit]";
		break;
	case JT_LV_KERNEL:
		*file = "[kernel]";
		break;
	case JT_LV_NATIVE:
		base = jt_lv__frame_file(s->lv, f, NULL);
		*file = base ? base : "[unknown]";
		break;
	default:
		*file = "[unknown]";
		break;
	}
	return name;
}

const char *jt_logsrc__method(const struct jt_logsrc *s, uint64_t id, char *buf)
{
	const struct jt_lv_method *m = jt_lv__method(s->lv, id);

	if (m)
		return m->name;
	snprintf(buf, JT_LOGSRC_NAME_CAP, "[unknown method %" PRIu64 "]", id);
	return buf;
}

uint64_t jt_logsrc__rel(const struct jt_logsrc *s, uint64_t ts)
{
	return ts > s->hdr->start_ns ? ts - s->hdr->start_ns : 0;
}
