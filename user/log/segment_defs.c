// SPDX-License-Identifier: GPL-2.0
/* Definitions remembered and written again, so that every segment defines what it uses. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "jt_events.h"
#include "join/collector.h"
#include "log/segment_defs.h"
#include "base/util.h"

/* The kinds of ids a frame or a call references, as enum jt_frame_kind numbers them. */
#define KINDS (JT_FRAME_SYMBOL + 1)
#define THREAD_NAMES 0	/* kind 0 is no frame's: thread names by tid are kept there */
#define OWNED(kind, id) ((uint64_t)(kind) << 56 | (id))

/* A method, module or symbol: its definition record, as the collector wrote it. */
struct def {
	uint64_t seg;			/* the segment it was last written in */
	uint32_t pid;			/* its process (0: the kernel's symbols) */
	struct jt_rec_hdr *rec;
	struct jt_rec_hdr *lines;	/* a method's source lines, written after it */
	struct jt_rec_hdr *inl;		/* a method's inlined scopes, written after it */
};

struct proc {
	uint64_t seg;
	struct jt_rec_hdr *rec;		/* its latest proc record; NULL since an exec */
	uint64_t *owned;		/* OWNED(kind, id) of what it defined */
	size_t n, cap;
};

/* unloaded method definitions kept: the collector's per process, for 16 processes */
#define UNLOADED_KEPT (16 * JT_UNLOADED_KEPT)

struct jt_segdefs {
	struct jt_sink out;
	uint64_t seg;			/* the segment being written, from 1 */
	struct jt_hash procs;		/* pid -> struct proc */
	struct jt_hash defs[KINDS];	/* by frame kind: id -> struct def */
	bool drop_seen[JT_DROP_MAX];	/* kinds of loss this segment has a record of */
	/* the last methods unloaded, oldest first from unloaded_at: kept for calls that name
	 * them after their unload, as the collector keeps each process's last ones */
	uint64_t unloaded[UNLOADED_KEPT];
	unsigned int nr_unloaded, unloaded_at;
	struct jt_segdefs_stats st;
};

struct jt_segdefs *jt_segdefs__new(void)
{
	struct jt_segdefs *d = calloc(1, sizeof(*d));

	if (!d)
		jt_err("out of memory");
	return d;
}

static void def_free(struct jt_segdefs *d, struct def *f)
{
	d->st.held--;
	d->st.held_bytes -= f->rec->size + (f->lines ? f->lines->size : 0) +
			    (f->inl ? f->inl->size : 0);
	free(f->rec);
	free(f->lines);
	free(f->inl);
	free(f);
}

static void proc_free(struct jt_segdefs *d, struct proc *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		unsigned int kind = p->owned[i] >> 56;
		struct def *f = jt_hash__del(&d->defs[kind], p->owned[i] & ((1ULL << 56) - 1));

		if (f)
			def_free(d, f);
	}
	if (p->rec)
		d->st.held_bytes -= p->rec->size;
	free(p->rec);
	free(p->owned);
	free(p);
}

void jt_segdefs__free(struct jt_segdefs *d)
{
	size_t pos = 0;
	uint64_t key;
	void *val;
	int k;

	if (!d)
		return;
	while (jt_hash__next(&d->procs, &pos, &key, &val))
		proc_free(d, val);
	jt_hash__fini(&d->procs);
	for (k = 0; k < KINDS; k++) {
		pos = 0;
		while (jt_hash__next(&d->defs[k], &pos, &key, &val))
			def_free(d, val);
		jt_hash__fini(&d->defs[k]);
	}
	free(d);
}

void jt_segdefs__begin(struct jt_segdefs *d, const struct jt_sink *out)
{
	d->out = *out;
	d->seg++;	/* every definition is now one of an earlier segment */
	memset(d->drop_seen, 0, sizeof(d->drop_seen));
}

static struct jt_rec_hdr *copy_rec(const struct jt_rec_hdr *rec)
{
	struct jt_rec_hdr *c = malloc(rec->size);

	if (c)
		memcpy(c, rec, rec->size);
	else
		jt_err("out of memory keeping a %u-byte definition for the next segment",
		       rec->size);
	return c;
}

/* Write a kept record again at ts. */
static int emit_again(struct jt_segdefs *d, struct jt_rec_hdr *rec, uint64_t ts)
{
	rec->ts = ts;
	d->st.rewritten++;
	return jt_sink__emit(&d->out, rec);
}

static int need_proc(struct jt_segdefs *d, uint32_t pid, uint64_t ts)
{
	struct proc *p = pid ? jt_hash__get(&d->procs, pid) : NULL;

	if (!p || !p->rec || p->seg == d->seg)
		return 0;
	p->seg = d->seg;
	return emit_again(d, p->rec, ts);
}

/* Make sure id (of frame kind kind) is defined in this segment; lines: with its lines. */
static int need(struct jt_segdefs *d, unsigned int kind, uint64_t id, uint64_t ts, bool lines)
{
	struct def *f = kind < KINDS ? jt_hash__get(&d->defs[kind], id) : NULL;
	int err;

	if (!f) {
		d->st.missing += kind == JT_FRAME_METHOD || kind == JT_FRAME_MODULE ||
				 kind == JT_FRAME_SYMBOL;
		return 0;
	}
	if (f->seg == d->seg)
		return 0;
	f->seg = d->seg;
	if (kind == JT_FRAME_SYMBOL) {
		const struct jt_rec_symbol *y = (const void *)f->rec;

		if (y->module && (err = need(d, JT_FRAME_MODULE, y->module, ts, false)))
			return err;
	}
	err = need_proc(d, f->pid, ts) ?: emit_again(d, f->rec, ts);
	if (!err && lines && f->lines)
		err = emit_again(d, f->lines, ts);
	if (!err && lines && f->inl)
		err = emit_again(d, f->inl, ts);
	return err;
}

static struct proc *proc_get(struct jt_segdefs *d, uint32_t pid)
{
	struct proc *p = jt_hash__get_new(&d->procs, pid, sizeof(*p), NULL);

	if (!p)
		jt_err("out of memory keeping process %u for the next segment", pid);
	return p;
}

/* Keep a new definition of id, owned by process pid (0: by none). */
static int keep(struct jt_segdefs *d, unsigned int kind, uint64_t id, uint32_t pid,
		const struct jt_rec_hdr *rec)
{
	struct def *f = calloc(1, sizeof(*f)), *old;
	struct proc *p = pid ? proc_get(d, pid) : NULL;

	if (!f || (pid && !p))
		goto nomem;
	f->rec = copy_rec(rec);
	if (!f->rec) {
		free(f);
		return -ENOMEM;
	}
	f->seg = d->seg;
	f->pid = pid;
	if (p && jt_array_grow(&p->owned, &p->cap, p->n + 1, sizeof(*p->owned)))
		goto nomem_rec;
	old = jt_hash__get(&d->defs[kind], id);
	if (jt_hash__put(&d->defs[kind], id, f))
		goto nomem_rec;
	if (old)	/* the collector never defines an id twice; keep the newer */
		def_free(d, old);
	if (p)
		p->owned[p->n++] = OWNED(kind, id);
	d->st.held++;
	d->st.held_bytes += rec->size;
	return 0;
nomem_rec:
	free(f->rec);
nomem:
	free(f);
	jt_err("out of memory keeping definitions for the next segment");
	return -ENOMEM;
}

static int keep_proc(struct jt_segdefs *d, const struct jt_rec_proc *rec)
{
	struct proc *p = proc_get(d, rec->pid);
	struct jt_rec_hdr *c;

	if (!p)
		return -ENOMEM;
	c = copy_rec(&rec->h);
	if (!c)
		return -ENOMEM;
	if (p->rec)
		d->st.held_bytes -= p->rec->size;
	free(p->rec);
	p->rec = c;
	p->seg = d->seg;
	d->st.held_bytes += c->size;
	return 0;
}

/* A method's source lines or inlined scopes (rec of type JT_REC_LINES or JT_REC_INLINE). */
static int keep_lines(struct jt_segdefs *d, uint64_t method, const struct jt_rec_hdr *rec)
{
	struct def *f = jt_hash__get(&d->defs[JT_FRAME_METHOD], method);
	struct jt_rec_hdr *c, **slot;

	if (!f)
		return 0;
	c = copy_rec(rec);
	if (!c)
		return -ENOMEM;
	slot = rec->type == JT_REC_INLINE ? &f->inl : &f->lines;
	if (*slot)
		d->st.held_bytes -= (*slot)->size;
	free(*slot);
	*slot = c;
	d->st.held_bytes += c->size;
	return 0;
}

/* An exec or an exit: what the process defined is gone with its image. */
static void forget_proc(struct jt_segdefs *d, uint32_t pid)
{
	struct proc *p = jt_hash__del(&d->procs, pid);

	if (p)
		proc_free(d, p);
}

static int forget_method(struct jt_segdefs *d, uint64_t id)
{
	struct def *f = jt_hash__del(&d->defs[JT_FRAME_METHOD], id);

	if (f)
		def_free(d, f);
	return 0;
}

/* An unloaded method is forgotten UNLOADED_KEPT unloads (of any process) later. */
static int unloaded_method(struct jt_segdefs *d, uint64_t id)
{
	uint64_t old;

	if (d->nr_unloaded == UNLOADED_KEPT) {
		old = d->unloaded[d->unloaded_at];
		d->unloaded_at = (d->unloaded_at + 1) % UNLOADED_KEPT;
		d->nr_unloaded--;
		forget_method(d, old);
	}
	d->unloaded[(d->unloaded_at + d->nr_unloaded++) % UNLOADED_KEPT] = id;
	return 0;
}

/* A sample's process, thread name and what its frames name (a user address: the
 * anonymous memory it lies in, a module). */
static int need_stack(struct jt_segdefs *d, const struct jt_rec_sample *s, uint64_t ts)
{
	unsigned int i;
	int err = need_proc(d, s->pid, ts);

	err = err ?: need(d, THREAD_NAMES, s->tid, ts, false);
	for (i = 0; !err && i < s->nr_frames; i++) {
		uint64_t ref = s->frames[i].ref;
		unsigned int kind = JT_FRAME_KIND(ref);

		if (kind == JT_FRAME_USER && JT_FRAME_ID(ref))
			kind = JT_FRAME_MODULE;
		err = need(d, kind, JT_FRAME_ID(ref), ts, true);
	}
	return err;
}

/* What rec needs defined before it, written now if this segment lacks it. */
static int before(struct jt_segdefs *d, const struct jt_rec_hdr *rec)
{
	uint64_t ts = rec->ts;
	int err;

	switch (rec->type) {
	case JT_REC_METHOD:
		return need_proc(d, ((const struct jt_rec_method *)rec)->pid, ts);
	case JT_REC_MODULE:
		return need_proc(d, ((const struct jt_rec_module *)rec)->pid, ts);
	case JT_REC_SYMBOL: {
		const struct jt_rec_symbol *y = (const void *)rec;

		err = y->module ? need(d, JT_FRAME_MODULE, y->module, ts, false) : 0;
		return err ?: need_proc(d, y->pid, ts);
	}
	case JT_REC_LINES:	/* the method, not its old lines: these replace them */
		return need(d, JT_FRAME_METHOD, ((const struct jt_rec_lines *)rec)->method, ts,
			    false);
	case JT_REC_INLINE:
		return need(d, JT_FRAME_METHOD, ((const struct jt_rec_inline *)rec)->method, ts,
			    false);
	case JT_REC_LATE:	/* names frames of samples before it: not written again */
		return need(d, JT_FRAME_METHOD, ((const struct jt_rec_late *)rec)->method, ts,
			    true);
	case JT_REC_ENTER:
	case JT_REC_LEAVE:
	case JT_REC_UNLOAD:
	case JT_REC_CALLSUM:	/* the same head: id, pid, tid */
	case JT_REC_SPAN:
		return need(d, JT_FRAME_METHOD, ((const struct jt_rec_call *)rec)->id, ts, true);
	case JT_REC_SAMPLE:
		return need_stack(d, (const void *)rec, ts);
	case JT_REC_OFFCPU:
		return need_stack(d, &((const struct jt_rec_offcpu *)rec)->smp, ts);
	default:
		return 0;
	}
}

/* What rec defines or ends, kept or forgotten once it is written. */
static int after(struct jt_segdefs *d, const struct jt_rec_hdr *rec)
{
	switch (rec->type) {
	case JT_REC_PROC:
		return keep_proc(d, (const void *)rec);
	case JT_REC_METHOD: {
		const struct jt_rec_method *m = (const void *)rec;

		return keep(d, JT_FRAME_METHOD, m->id, m->pid, rec);
	}
	case JT_REC_MODULE: {
		const struct jt_rec_module *m = (const void *)rec;

		return keep(d, JT_FRAME_MODULE, m->id, m->pid, rec);
	}
	case JT_REC_SYMBOL: {
		const struct jt_rec_symbol *y = (const void *)rec;

		return keep(d, JT_FRAME_SYMBOL, y->id, y->pid, rec);
	}
	case JT_REC_LINES:
		return keep_lines(d, ((const struct jt_rec_lines *)rec)->method, rec);
	case JT_REC_INLINE:
		return keep_lines(d, ((const struct jt_rec_inline *)rec)->method, rec);
	case JT_REC_THREAD: {
		const struct jt_rec_thread *t = (const void *)rec;

		return keep(d, THREAD_NAMES, t->tid, t->pid, rec);
	}
	case JT_REC_UNLOAD:
		return unloaded_method(d, ((const struct jt_rec_call *)rec)->id);
	case JT_REC_EXEC:
		forget_proc(d, ((const struct jt_rec_exec *)rec)->pid);
		return 0;
	case JT_REC_EXIT:
		forget_proc(d, ((const struct jt_rec_exit *)rec)->pid);
		return 0;
	case JT_REC_DROP: {
		const struct jt_rec_drop *r = (const void *)rec;

		if (r->what < JT_DROP_MAX)
			d->drop_seen[r->what] = true;
		return 0;
	}
	default:
		return 0;
	}
}

int jt_segdefs__record(struct jt_segdefs *d, const struct jt_rec_hdr *rec)
{
	return before(d, rec) ?: jt_sink__emit(&d->out, rec) ?: after(d, rec);
}

int jt_segdefs__end(struct jt_segdefs *d, uint64_t ts)
{
	struct jt_rec_drop rec = { .h = { .type = JT_REC_DROP, .size = sizeof(rec), .ts = ts } };
	unsigned int k;
	int err = 0;

	for (k = 0; k < JT_DROP_MAX && !err; k++) {
		if (d->drop_seen[k])
			continue;
		rec.what = k;
		err = jt_sink__emit(&d->out, &rec.h);
		d->drop_seen[k] = !err;
	}
	return err;
}

void jt_segdefs__stats(const struct jt_segdefs *d, struct jt_segdefs_stats *st)
{
	*st = d->st;
}
