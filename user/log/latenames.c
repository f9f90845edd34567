// SPDX-License-Identifier: GPL-2.0
/* Late names read ahead and applied to samples (see latenames.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "jt_events.h"
#include "log/latenames.h"
#include "base/util.h"

#define OVERLAP_SCAN 16	/* late names of one pid before an address looked at for it */

struct late {
	uint32_t pid;
	uint64_t start, end;	/* addresses */
	uint64_t from, to;	/* times: [from, to] */
	uint64_t method;
};

struct jt_latenames {
	struct late *v;		/* sorted by pid, then start (once ready) */
	size_t n, cap;
	struct jt_hash methods;	/* while reading ahead: id -> a definition from a file */
	struct jt_hash lines;	/* and id -> its source lines, if it has any */
	struct jt_rec_hdr **defs;	/* the methods named late and their lines, as the log
					 * defines them */
	size_t nr_defs;
	uint64_t named;
	union {			/* a sample (or off-CPU record) rewritten */
		struct jt_rec_offcpu off;
		char bytes[sizeof(struct jt_rec_offcpu) +
			   (2 * JT_MAX_FRAMES + 1) * sizeof(struct jt_frame)];
	} out;
};

static int by_pid_start(const void *a, const void *b)
{
	const struct late *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Keep a copy of rec under id (one a log defines once: a copy there already is stale). */
static int keep(struct jt_hash *h, uint64_t id, const struct jt_rec_hdr *rec)
{
	void *copy = malloc(rec->size);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, rec->size);
	free(jt_hash__get(h, id));
	if (jt_hash__put(h, id, copy)) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

static int add_late(struct jt_latenames *ln, const struct jt_rec_late *l)
{
	if (ln->n == ln->cap) {
		size_t nc = ln->cap ? 2 * ln->cap : 64;
		struct late *v = realloc(ln->v, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ln->v = v;
		ln->cap = nc;
	}
	if (!l->size || l->start + l->size < l->start || l->from_ts > l->h.ts)
		return 0;	/* names nothing */
	ln->v[ln->n++] = (struct late){ l->pid, l->start, l->start + l->size, l->from_ts,
					l->h.ts, l->method };
	return 0;
}

/*
 * The definitions the late names need, each followed by its lines: a view that names a
 * frame at first sight (pprof's locations) needs them before the samples too.
 */
static int take_defs(struct jt_latenames *ln)
{
	size_t i;

	ln->defs = calloc(2 * ln->n + 1, sizeof(*ln->defs));
	if (!ln->defs)
		return -ENOMEM;
	for (i = 0; i < ln->n; i++) {
		struct jt_rec_hdr *def = jt_hash__del(&ln->methods, ln->v[i].method);
		struct jt_rec_hdr *lines = jt_hash__del(&ln->lines, ln->v[i].method);

		if (def)
			ln->defs[ln->nr_defs++] = def;
		if (def && lines)
			ln->defs[ln->nr_defs++] = lines;
		else
			free(lines);
	}
	return 0;
}

struct jt_latenames *jt_latenames__new(void)
{
	struct jt_latenames *ln = calloc(1, sizeof(*ln));

	if (!ln)
		jt_err("out of memory reading the log's late names");
	return ln;
}

int jt_latenames__take(struct jt_latenames *ln, const struct jt_rec_hdr *rec)
{
	const struct jt_rec_method *m = (const void *)rec;
	const struct jt_rec_lines *l = (const void *)rec;
	int err = 0;

	/* only what a file (perf map, jitdump) told is ever named late */
	if (rec->type == JT_REC_METHOD && (m->src == JT_SRC_PERFMAP || m->src == JT_SRC_JITDUMP))
		err = keep(&ln->methods, m->id, rec);
	else if (rec->type == JT_REC_LINES && jt_hash__get(&ln->methods, l->method))
		err = keep(&ln->lines, l->method, rec);
	else if (rec->type == JT_REC_LATE)
		err = add_late(ln, (const void *)rec);
	if (err)
		jt_err("out of memory reading the log's late names");
	return err;
}

int jt_latenames__ready(struct jt_latenames *ln)
{
	int err = take_defs(ln);

	jt_hash__fini_free(&ln->methods);
	jt_hash__fini_free(&ln->lines);
	if (err) {
		jt_err("out of memory reading the log's late names");
		return err;
	}
	if (ln->n)	/* ln->v is NULL without late names: not for qsort */
		qsort(ln->v, ln->n, sizeof(*ln->v), by_pid_start);
	return 0;
}

void jt_latenames__free(struct jt_latenames *ln)
{
	size_t i;

	if (!ln)
		return;
	jt_hash__fini_free(&ln->methods);	/* ready() not reached */
	jt_hash__fini_free(&ln->lines);
	for (i = 0; i < ln->nr_defs; i++)
		free(ln->defs[i]);
	free(ln->defs);
	free(ln->v);
	free(ln);
}

const struct jt_rec_hdr *jt_latenames__def(const struct jt_latenames *ln, size_t i)
{
	return i < ln->nr_defs ? ln->defs[i] : NULL;
}

/* The late name of pid covering address at at time ts, or NULL. */
static const struct late *find(const struct jt_latenames *ln, uint32_t pid, uint64_t at,
			       uint64_t ts)
{
	size_t lo = 0, hi = ln->n, k;

	/* the first entry after (pid, at) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct late *e = &ln->v[mid];

		if (e->pid < pid || (e->pid == pid && e->start <= at))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; k < OVERLAP_SCAN && lo > k; k++) {
		const struct late *e = &ln->v[lo - 1 - k];

		if (e->pid != pid)
			break;
		if (at < e->end && ts >= e->from && ts <= e->to)
			return e;
	}
	return NULL;
}

/*
 * s's frames covered by late names at time ts into out (s copied there first, at most
 * cap bytes): out, or NULL when none are (or s does not fit).
 */
static struct jt_rec_sample *apply_at(struct jt_latenames *ln, const struct jt_rec_sample *s,
				      unsigned int leaf, uint64_t ts, struct jt_rec_sample *out,
				      size_t cap)
{
	bool copied = false;
	unsigned int i;

	if (!ln->n)
		return NULL;
	for (i = leaf; i < s->nr_frames; i++) {
		const struct jt_frame *f = &s->frames[i];
		const struct late *e;

		if (JT_FRAME_KIND(f->ref) != JT_FRAME_USER)
			continue;
		/* a return address may be just past its function: look up the call instead */
		e = find(ln, s->pid, i == leaf ? f->off : f->off - 1, ts);
		if (!e)
			continue;
		if (!copied) {
			if (s->h.size > cap)
				return NULL;
			memcpy(out, s, s->h.size);
			copied = true;
		}
		out->frames[i] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_METHOD, e->method),
						    f->off - e->start };
	}
	if (!copied)
		return NULL;
	ln->named++;
	return out;
}

const struct jt_rec_sample *jt_latenames__apply(struct jt_latenames *ln,
						const struct jt_rec_sample *s, unsigned int leaf)
{
	const struct jt_rec_sample *o = apply_at(ln, s, leaf, s->h.ts, &ln->out.off.smp,
						 sizeof(ln->out) - offsetof(struct jt_rec_offcpu,
									    smp));

	return o ? o : s;
}

const struct jt_rec_offcpu *jt_latenames__apply_offcpu(struct jt_latenames *ln,
						       const struct jt_rec_offcpu *r,
						       unsigned int leaf)
{
	/* its frames were named as of its own time, when the thread ran again */
	if (!apply_at(ln, &r->smp, leaf, r->h.ts, &ln->out.off.smp,
		      sizeof(ln->out) - offsetof(struct jt_rec_offcpu, smp)))
		return r;
	memcpy(&ln->out.off, r, offsetof(struct jt_rec_offcpu, smp));
	return &ln->out.off;
}

uint64_t jt_latenames__named(const struct jt_latenames *ln)
{
	return ln->named;
}
