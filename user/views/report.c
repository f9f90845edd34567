// SPDX-License-Identifier: GPL-2.0
/* `jitrace report`: hot methods by self and total samples, per log and per process, call
 * counts with inclusive and exclusive times from enter/leave records, and where threads
 * waited off the CPU with each thread's time on and off it. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/intern.h"
#include "base/xout.h"
#include "base/hash.h"
#include "log/source.h"
#include "base/names.h"
#include "views/report.h"
#include "views/stacks.h"
#include "base/text.h"
#include "base/util.h"

#define NR_OFFS 3		/* hottest offsets shown per method */

struct offc {
	uint64_t off, n;
	uint64_t src;		/* its source line (SRC_*), known at the end */
};

/*
 * The source line of an offset, as a hash value: file + 1 << 32 | line, or which of the
 * two kinds of not knowing. Every sample there must agree for the line to be shown: one
 * name may be several methods (code compiled again, other processes), each with its lines
 * or none.
 */
#define SRC_NONE 1		/* a sample there whose method has no line for it */
#define SRC_MIXED 2		/* samples there from methods whose lines disagree */
#define SRC_KNOWN(v) ((v) >> 32)

/*
 * Time off the CPU (off-CPU records) by state, enum jt_off_state: ns and the waits they
 * stand for; [0]: every state.
 */
struct offtime {
	uint64_t ns[JT_OFF_MAX], n[JT_OFF_MAX];
};

/* A method (an interned name) in one process, or over every process. */
struct entry {
	uint32_t name;
	uint64_t self, total;
	uint64_t calls, incl_ns, excl_ns;
	bool has_calls;
	/* off-CPU records whose stack holds it (once each, recursion or not): time, waits */
	uint64_t wait_ns, waits;
	uint64_t inner_ns;	/* ... of those, whose innermost user frame it is */
	struct jt_hash offs;	/* offset -> self samples there, held as the pointer's value */
	struct jt_hash srcs;	/* offset -> its source line (SRC_*), if the log has lines */
	struct offc top[NR_OFFS];
};

struct section {
	uint32_t pid;
	uint32_t tid;		/* a thread's section (--threads); 0 for a process's */
	uint64_t samples, calls;
	struct offtime off;
	struct jt_hash entries;	/* name -> struct entry */
};

/* A thread's time: on the CPU (its samples) and off it. */
struct wall {
	uint32_t pid, tid;
	uint64_t samples;
	struct offtime off;
};

/* An activation on a thread's call stack. */
struct cframe {
	uint64_t id, ts;
	uint64_t child_ns;	/* inclusive time of the calls it made that returned */
};

struct thread {
	struct cframe *v;
	size_t n, cap;
};

struct mstat {
	uint32_t pid;
	uint64_t calls, incl_ns, excl_ns;
};

struct rep {
	const struct jt_report_opts *o;
	struct jt_logsrc src;	/* the log, read with o's filter; its definitions and drops */
	struct jt_stacks *stk;
	struct jt_hash procs;	/* pid -> struct section */
	struct section all;
	struct jt_hash threads;	/* pid << 32 | tid -> struct thread */
	struct jt_hash tsecs;	/* --threads: pid << 32 | tid -> struct section */
	uint64_t *seen;		/* by name: the last record (stamp) that counted it */
	size_t cap_seen;
	uint64_t stamp;		/* the record being added up by name, from 1 */
	struct jt_hash walls;	/* pid << 32 | tid -> struct wall, every thread's */
	struct wall *last_wall;	/* the last sample's: a thread's samples come in runs */
	struct jt_hash mstats;	/* method id -> struct mstat */
	uint64_t samples, enters, leaves;
	uint64_t leave_no_enter;	/* a leave whose enter the log does not hold */
	uint64_t closed_by_outer;	/* activations left without their own leave */
	uint64_t open_at_end;		/* activations still open when the log ends */
	bool any_calls;
	bool any_offcpu;	/* the log recorded off-CPU time, or holds a record of it */
};

static const char nomem[] = "out of memory making the report";

static struct section *section_get(struct rep *r, uint32_t pid)
{
	struct section *s = jt_hash__get_new(&r->procs, pid, sizeof(*s), NULL);

	if (s)
		s->pid = pid;
	return s;
}

static struct entry *entry_get(struct section *s, uint32_t name)
{
	struct entry *e = jt_hash__get_new(&s->entries, name, sizeof(*e), NULL);

	if (e)
		e->name = name;
	return e;
}

static int offs_add(struct jt_hash *h, uint64_t off, uint64_t n)
{
	uintptr_t cur = (uintptr_t)jt_hash__get(h, off);

	return jt_hash__put(h, off, (void *)(cur + n));
}

/* One more sample at off whose source line is src (SRC_*). */
static int srcs_add(struct jt_hash *h, uint64_t off, uint64_t src)
{
	uintptr_t cur = (uintptr_t)jt_hash__get(h, off);

	if (cur == src || cur == SRC_MIXED)
		return 0;
	return jt_hash__put(h, off, (void *)(uintptr_t)(cur ? SRC_MIXED : src));
}

static void section_free(struct section *s)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&s->entries, &pos, &key, &val)) {
		jt_hash__fini(&((struct entry *)val)->offs);
		jt_hash__fini(&((struct entry *)val)->srcs);
		free(val);
	}
	jt_hash__fini(&s->entries);
}

static void rep_free(struct rep *r)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&r->procs, &pos, &key, &val)) {
		section_free(val);
		free(val);
	}
	jt_hash__fini(&r->procs);
	section_free(&r->all);
	pos = 0;
	while (jt_hash__next(&r->threads, &pos, &key, &val)) {
		free(((struct thread *)val)->v);
		free(val);
	}
	jt_hash__fini(&r->threads);
	pos = 0;
	while (jt_hash__next(&r->tsecs, &pos, &key, &val)) {
		section_free(val);
		free(val);
	}
	jt_hash__fini(&r->tsecs);
	pos = 0;
	while (jt_hash__next(&r->walls, &pos, &key, &val))
		free(val);
	jt_hash__fini(&r->walls);
	free(r->seen);
	pos = 0;
	while (jt_hash__next(&r->mstats, &pos, &key, &val))
		free(val);
	jt_hash__fini(&r->mstats);
	jt_stacks__free(r->stk);
	jt_logsrc__close(&r->src);
}

/* ---- reading ---- */

/*
 * Whether name is met for the first time in the record being added up (r->stamp): 1 the
 * first time, 0 after; -ENOMEM.
 */
static int first_in_record(struct rep *r, uint32_t name)
{
	size_t old = r->cap_seen;

	if (name >= r->cap_seen) {
		if (jt_array_grow(&r->seen, &r->cap_seen, name + 1, sizeof(*r->seen)))
			return -ENOMEM;
		memset(r->seen + old, 0, (r->cap_seen - old) * sizeof(*r->seen));
	}
	if (r->seen[name] == r->stamp)
		return 0;
	r->seen[name] = r->stamp;
	return 1;
}

/* --threads: thread tid's section, made if new; NULL without memory. */
static struct section *tsec_get(struct rep *r, uint32_t pid, uint32_t tid)
{
	struct section *t = jt_hash__get_new(&r->tsecs, (uint64_t)pid << 32 | tid, sizeof(*t),
					     NULL);

	if (t) {
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

/* Thread tid's time, made if new; NULL without memory. */
static struct wall *wall_get(struct rep *r, uint32_t pid, uint32_t tid)
{
	struct wall *w = r->last_wall;

	if (w && w->pid == pid && w->tid == tid)
		return w;
	w = jt_hash__get_new(&r->walls, (uint64_t)pid << 32 | tid, sizeof(*w), NULL);
	if (w) {
		w->pid = pid;
		w->tid = tid;
		r->last_wall = w;
	}
	return w;
}

/*
 * --threads: the sample into its thread's section, self for the leaf's name and total once
 * for each name on the stack (walked up the tree from the leaf). Returns the leaf's entry
 * (NULL if the sample has no frames) in *leaf. Returns 0 or -ENOMEM.
 */
static int thread_sample(struct rep *r, const struct jt_rec_sample *smp, uint32_t node,
			 struct entry **leaf)
{
	struct section *t = tsec_get(r, smp->pid, smp->tid);
	const struct jt_stk_node *n;
	struct entry *e;
	int first;

	*leaf = NULL;
	if (!t)
		return -ENOMEM;
	t->samples++;
	r->stamp++;
	for (n = jt_stacks__node(r->stk, node); n->depth >= 2;
	     n = jt_stacks__node(r->stk, n->parent)) {
		e = entry_get(t, n->name);
		first = first_in_record(r, n->name);	/* once a sample, recursion or not */
		if (!e || first < 0)
			return -ENOMEM;
		if (!*leaf) {
			e->self++;
			*leaf = e;
		}
		e->total += first;
	}
	return 0;
}

static int on_sample(struct rep *r, const struct jt_rec_sample *smp)
{
	const struct jt_frame *leaf = smp->frames;
	struct entry *e[2] = { NULL, NULL };	/* the process's entry, the thread's */
	struct section *s;
	struct wall *w;
	uint32_t node, file, line;
	uint64_t src = SRC_NONE;
	int64_t name;
	unsigned kind;
	int i;

	if (jt_stacks__add(r->stk, r->src.lv, smp, &node))
		return -ENOMEM;
	r->samples++;
	w = wall_get(r, smp->pid, smp->tid);
	if (!w)
		goto nomem;
	w->samples++;
	if (r->o->threads && thread_sample(r, smp, node, &e[1]))
		goto nomem;
	if (!smp->nr_frames)
		return 0;
	/* where in the leaf method its samples fall: only methods and symbols have an inside */
	kind = JT_FRAME_KIND(leaf->ref);
	if (kind != JT_FRAME_METHOD && kind != JT_FRAME_SYMBOL)
		return 0;
	name = jt_stacks__node(r->stk, node)->name;
	s = section_get(r, smp->pid);
	e[0] = s ? entry_get(s, name) : NULL;
	if (!e[0])
		goto nomem;
	for (i = 0; i < 2; i++)
		if (e[i] && offs_add(&e[i]->offs, leaf->off, 1))
			goto nomem;
	/* the leaf is where the process ran (a kernel leaf is no method): its own line */
	if (kind != JT_FRAME_METHOD || !jt_lv__has_lines(r->src.lv))
		return 0;
	if (jt_lv__frame_line(r->src.lv, leaf, false, &file, &line))
		src = ((uint64_t)file + 1) << 32 | line;
	for (i = 0; i < 2; i++)
		if (e[i] && srcs_add(&e[i]->srcs, leaf->off, src))
			goto nomem;
	return 0;
nomem:
	jt_err("%s", nomem);
	return -ENOMEM;
}

static void off_add(struct offtime *t, unsigned int state, uint64_t ns, uint64_t n)
{
	t->ns[0] += ns;
	t->ns[state] += ns;
	t->n[0] += n;
	t->n[state] += n;
}

/*
 * An off-CPU record: its time and waits to its thread, its process and (--threads) its
 * thread's section; to every name on its stack, once however often it recurs; and to the
 * innermost user frame's name as where the thread blocked. Short waits have no stack:
 * they count in the totals only.
 */
static int on_offcpu(struct rep *r, const struct jt_rec_offcpu *rec)
{
	const struct jt_rec_sample *smp = &rec->smp;
	unsigned int st = rec->state;	/* known: the reader refuses any other */
	unsigned int i, user = jt_lv__user_leaf(r->src.lv, smp);
	struct section *sec[2] = { section_get(r, smp->pid), NULL };	/* process, thread */
	struct wall *w = wall_get(r, smp->pid, smp->tid);
	struct entry *e;
	int64_t name;
	int k, first;

	if (!sec[0] || !w || (r->o->threads && !(sec[1] = tsec_get(r, smp->pid, smp->tid))))
		goto nomem;
	off_add(&w->off, st, rec->off_ns, rec->count);
	for (k = 0; k < 2 && sec[k]; k++)
		off_add(&sec[k]->off, st, rec->off_ns, rec->count);
	r->stamp++;
	for (i = 0; i < smp->nr_frames; i++) {	/* leaf first */
		name = jt_stacks__frame(r->stk, r->src.lv, &smp->frames[i]);
		if (name < 0)
			return -ENOMEM;
		first = first_in_record(r, name);
		if (first < 0)
			goto nomem;
		if (!first && i != user)
			continue;
		for (k = 0; k < 2 && sec[k]; k++) {
			e = entry_get(sec[k], name);
			if (!e)
				goto nomem;
			if (first) {
				e->wait_ns += rec->off_ns;
				e->waits += rec->count;
			}
			if (i == user)
				e->inner_ns += rec->off_ns;
		}
	}
	return 0;
nomem:
	jt_err("%s", nomem);
	return -ENOMEM;
}

static struct thread *thread_get(struct rep *r, uint32_t pid, uint32_t tid)
{
	return jt_hash__get_new(&r->threads, (uint64_t)pid << 32 | tid, sizeof(struct thread),
				NULL);
}

static struct mstat *mstat_get(struct rep *r, uint64_t id, uint32_t pid)
{
	bool added;
	struct mstat *m = jt_hash__get_new(&r->mstats, id, sizeof(*m), &added);

	if (m && added)
		m->pid = pid;
	return m;
}

static int on_enter(struct rep *r, const struct jt_rec_call *c)
{
	struct thread *t = thread_get(r, c->pid, c->tid);
	struct mstat *m = mstat_get(r, c->id, c->pid);

	if (!t || !m)
		goto nomem;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 32;
		struct cframe *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct cframe){ .id = c->id, .ts = c->h.ts };
	m->calls++;
	r->enters++;
	return 0;
nomem:
	jt_err("%s", nomem);
	return -ENOMEM;
}

/*
 * A leave closes the innermost open activation of its method. Activations above it never
 * saw their own leave (a lost record, a longjmp, an exception): they are dropped without
 * time and counted. A leave with no activation at all (entered before the log began) is
 * counted and otherwise ignored.
 */
static int on_leave(struct rep *r, const struct jt_rec_call *c)
{
	struct thread *t = thread_get(r, c->pid, c->tid);
	struct mstat *m;
	uint64_t dur;
	size_t k, j;

	if (!t)
		goto nomem;
	r->leaves++;
	for (k = t->n; k > 0 && t->v[k - 1].id != c->id; k--)
		;
	if (!k) {
		r->leave_no_enter++;
		return 0;
	}
	k--;
	r->closed_by_outer += t->n - 1 - k;
	m = mstat_get(r, c->id, c->pid);
	if (!m)
		goto nomem;
	dur = c->h.ts - t->v[k].ts;
	m->excl_ns += dur > t->v[k].child_ns ? dur - t->v[k].child_ns : 0;
	/* a recursive method's inner activations are inside its outermost one: count it once */
	for (j = 0; j < k && t->v[j].id != c->id; j++)
		;
	if (j == k)
		m->incl_ns += dur;
	if (k)
		t->v[k - 1].child_ns += dur;
	t->n = k;
	return 0;
nomem:
	jt_err("%s", nomem);
	return -ENOMEM;
}

static int read_log(struct rep *r)
{
	const struct jt_rec_hdr *rec;
	bool kept;
	int err = 0;

	while (!err && (rec = jt_logsrc__next(&r->src, &kept))) {
		err = jt_stacks__saw(r->stk, rec);
		if (err)
			break;
		switch (rec->type) {
		case JT_REC_SAMPLE:
			if (kept)
				err = on_sample(r, (const void *)rec);
			break;
		case JT_REC_OFFCPU:
			r->any_offcpu = true;
			if (kept)
				err = on_offcpu(r, (const void *)rec);
			break;
		case JT_REC_ENTER:
		case JT_REC_LEAVE: {
			const struct jt_rec_call *c = (const void *)rec;

			r->any_calls = true;
			if (kept)
				err = rec->type == JT_REC_ENTER ? on_enter(r, c) : on_leave(r, c);
			break;
		}
		default:
			break;
		}
	}
	return err;
}

/* ---- adding up ---- */

/*
 * Self and total per method of one process's subtree; total counts a sample once (onpath:
 * how often each name is on the path from the process down), walked without recursion.
 */
static int sum_tree(struct rep *r, struct section *s, uint32_t top, uint32_t *onpath)
{
	const struct jt_stk_node *n;
	struct jt_stacks_walk w;
	struct entry *e;
	bool leaving;

	jt_stacks__walk_init(&w, r->stk, top);
	while ((n = jt_stacks__walk_next(&w, &leaving))) {
		if (n->depth < 2)
			continue;
		if (leaving) {
			onpath[n->name]--;
			continue;
		}
		e = entry_get(s, n->name);
		if (!e)
			return -ENOMEM;
		e->self += n->self;
		if (!onpath[n->name])
			e->total += n->total;
		onpath[n->name]++;
	}
	return 0;
}

static void top_offsets(struct entry *e)
{
	size_t pos = 0;
	uint64_t off;
	void *val;
	int i, j;

	while (jt_hash__next(&e->offs, &pos, &off, &val)) {
		struct offc c = { off, (uintptr_t)val, 0 };

		for (i = 0; i < NR_OFFS; i++)
			if (c.n > e->top[i].n || (c.n == e->top[i].n && e->top[i].n &&
						   c.off < e->top[i].off))
				break;
		if (i == NR_OFFS)
			continue;
		for (j = NR_OFFS - 1; j > i; j--)
			e->top[j] = e->top[j - 1];
		e->top[i] = c;
	}
	for (i = 0; i < NR_OFFS && e->top[i].n; i++)
		e->top[i].src = (uintptr_t)jt_hash__get(&e->srcs, e->top[i].off);
}

/* Fold one process's method into the whole log's. */
static int merge_entry(struct rep *r, const struct entry *e)
{
	struct entry *g = entry_get(&r->all, e->name);
	size_t pos = 0;
	uint64_t off;
	void *val;

	if (!g)
		return -ENOMEM;
	g->self += e->self;
	g->total += e->total;
	g->calls += e->calls;
	g->incl_ns += e->incl_ns;
	g->excl_ns += e->excl_ns;
	g->has_calls |= e->has_calls;
	g->wait_ns += e->wait_ns;
	g->waits += e->waits;
	g->inner_ns += e->inner_ns;
	while (jt_hash__next(&e->offs, &pos, &off, &val))
		if (offs_add(&g->offs, off, (uintptr_t)val))
			return -ENOMEM;
	pos = 0;
	while (jt_hash__next(&e->srcs, &pos, &off, &val))
		if (srcs_add(&g->srcs, off, (uintptr_t)val))
			return -ENOMEM;
	return 0;
}

static int add_up(struct rep *r)
{
	uint32_t *onpath = calloc(jt_stacks__nr_names(r->stk) + 1, sizeof(*onpath));
	const struct jt_stk_node *root = jt_stacks__node(r->stk, JT_STK_ROOT);
	struct section *s;
	size_t pos = 0, epos;
	uint64_t key;
	void *val;
	uint32_t c;
	int err = -ENOMEM, k;

	if (!onpath)
		goto out;
	for (c = root->child; c != JT_STK_NONE; c = jt_stacks__node(r->stk, c)->next) {
		const struct jt_stk_node *p = jt_stacks__node(r->stk, c);

		s = section_get(r, p->name);
		if (!s || sum_tree(r, s, c, onpath))
			goto out;
		s->samples = p->total;
	}
	while (jt_hash__next(&r->mstats, &pos, &key, &val)) {
		const struct mstat *m = val;
		struct jt_frame f = { JT_FRAME_REF(JT_FRAME_METHOD, key), 0 };
		int64_t name = jt_stacks__frame(r->stk, r->src.lv, &f);
		struct entry *e;

		s = section_get(r, m->pid);
		if (name < 0 || !s || !(e = entry_get(s, name)))
			goto out;
		e->has_calls = true;
		e->calls += m->calls;
		e->incl_ns += m->incl_ns;
		e->excl_ns += m->excl_ns;
		s->calls += m->calls;
	}
	pos = 0;
	while (jt_hash__next(&r->procs, &pos, &key, &val)) {
		s = val;
		r->all.samples += s->samples;
		r->all.calls += s->calls;
		for (k = 0; k < JT_OFF_MAX; k++) {
			r->all.off.ns[k] += s->off.ns[k];
			r->all.off.n[k] += s->off.n[k];
		}
		epos = 0;
		while (jt_hash__next(&s->entries, &epos, &key, &val)) {
			top_offsets(val);
			if (merge_entry(r, val))
				goto out;
		}
	}
	epos = 0;
	while (jt_hash__next(&r->all.entries, &epos, &key, &val))
		top_offsets(val);
	pos = 0;
	while (jt_hash__next(&r->tsecs, &pos, &key, &val)) {
		s = val;
		epos = 0;
		while (jt_hash__next(&s->entries, &epos, &key, &val))
			top_offsets(val);
	}
	pos = 0;
	while (jt_hash__next(&r->threads, &pos, &key, &val))
		r->open_at_end += ((struct thread *)val)->n;
	err = 0;
out:
	if (err)
		jt_err("%s", nomem);
	free(onpath);
	return err;
}

/* ---- ordering ---- */

/* Which of a section's tables: hot methods, calls, off-CPU time. */
enum table {
	T_HOT,			/* by self or total samples (sort_ctx's by) */
	T_CALLS,		/* by inclusive time */
	T_OFF,			/* by time off the CPU */
};

struct sort_ctx {
	const struct jt_stacks *stk;
	enum jt_report_sort by;
	enum table table;
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_entries(const void *pa, const void *pb, void *ctx)
{
	const struct entry *a = *(void *const *)pa;
	const struct entry *b = *(void *const *)pb;
	const struct sort_ctx *sc = ctx;
	enum jt_lv_kind ka, kb;
	int c;

	if (sc->table == T_CALLS)
		c = cmp_u64_desc(a->incl_ns, b->incl_ns) ?: cmp_u64_desc(a->calls, b->calls);
	else if (sc->table == T_OFF)
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
	const struct entry *e = val;
	const struct sort_ctx *sc = ctx;

	switch (sc->table) {
	case T_CALLS:
		return e->has_calls;
	case T_OFF:
		return e->wait_ns || e->waits;
	default:
		return e->self || e->total;
	}
}

static int cmp_sections(const void *pa, const void *pb, void *ctx)
{
	const struct section *a = *(void *const *)pa;
	const struct section *b = *(void *const *)pb;

	(void)ctx;
	return cmp_u64_desc(a->samples, b->samples) ?: cmp_u64_desc(a->calls, b->calls) ?:
	       cmp_u64_desc(a->off.ns[0], b->off.ns[0]) ?: (a->pid > b->pid) - (a->pid < b->pid);
}

static bool keep_section(const void *val, const void *ctx)
{
	const struct section *s = val;

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
		jt_err("%s", nomem);
		return NULL;
	}
	while (jt_hash__next(h, &pos, &key, &val))
		if (keep(val, ctx))
			v[k++] = val;
	qsort_r(v, k, sizeof(*v), cmp, ctx);
	*n = max && k > max ? max : k;
	return v;
}

/* The rows (struct entry) of one of the section's tables in order, at most top of them. */
static void **rows(const struct rep *r, const struct section *s, enum table table, size_t *n)
{
	struct sort_ctx sc = { r->stk, r->o->sort, table };

	return pick(&s->entries, keep_entry, cmp_entries, &sc, r->o->top, n);
}

/* The process sections in order, at most procs of them; *n gets the count. */
static void **sections(const struct rep *r, size_t *n)
{
	return pick(&r->procs, keep_section, cmp_sections, NULL, r->o->procs, n);
}

static int cmp_threads(const void *pa, const void *pb, void *ctx)
{
	const struct section *a = *(void *const *)pa;
	const struct section *b = *(void *const *)pb;

	(void)ctx;
	return cmp_u64_desc(a->samples, b->samples) ?: cmp_u64_desc(a->off.ns[0], b->off.ns[0]) ?:
	       (a->tid > b->tid) - (a->tid < b->tid);
}

static bool keep_thread(const void *val, const void *ctx)
{
	const struct section *s = val;

	return s->pid == *(const uint32_t *)ctx;
}

/* --threads: the threads of process pid, the busiest first; *n gets the count. */
static void **threads_of(const struct rep *r, uint32_t pid, size_t *n)
{
	return pick(&r->tsecs, keep_thread, cmp_threads, &pid, 0, n);
}

/* The CPU time samples stand for: 1/hz s each. 0 when the log was not sampled. */
static uint64_t cpu_ns(const struct rep *r, uint64_t samples)
{
	uint32_t hz = r->src.hdr->sample_hz;

	return hz ? samples * 1000000000ULL / hz : 0;
}

struct wall_ctx {
	const struct rep *r;
	uint32_t pid;
};

/* Threads by their time on and off the CPU, the longest first. */
static int cmp_walls(const void *pa, const void *pb, void *ctx)
{
	const struct wall *a = *(void *const *)pa;
	const struct wall *b = *(void *const *)pb;
	const struct wall_ctx *wc = ctx;

	return cmp_u64_desc(cpu_ns(wc->r, a->samples) + a->off.ns[0],
			    cpu_ns(wc->r, b->samples) + b->off.ns[0]) ?:
	       cmp_u64_desc(a->samples, b->samples) ?: cmp_u64_desc(a->off.n[0], b->off.n[0]) ?:
	       (a->tid > b->tid) - (a->tid < b->tid);
}

static bool keep_wall(const void *val, const void *ctx)
{
	const struct wall *w = val;

	return w->pid == ((const struct wall_ctx *)ctx)->pid;
}

/* The time of process pid's threads, the longest first, at most top of them. */
static void **walls_of(const struct rep *r, uint32_t pid, size_t *n)
{
	struct wall_ctx wc = { r, pid };

	return pick(&r->walls, keep_wall, cmp_walls, &wc, r->o->top, n);
}

/* How many processes have a section, --procs aside. */
static size_t nr_sections(const struct rep *r)
{
	size_t pos = 0, k = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&r->procs, &pos, &key, &val))
		k += keep_section(val, NULL);
	return k;
}

/* ---- text ---- */

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * n / of : 0;
}

/* When recording began, in UTC; "?" when the header's clocks add up to no time at all. */
static void fmt_start(const struct rep *r, char *buf, size_t cap)
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

static double duration_s(const struct rep *r)
{
	return jt_logsrc__rel(&r->src, r->src.last_ts) / 1e9;
}

/*
 * Text from the log, for a terminal that may be root's: a traced process chooses its
 * command line and names, and their control bytes would drive the terminal (clear it,
 * retitle it, recolour it). As `dump` writes them: each control byte (C0, DEL, and C1 as
 * UTF-8), backslash and byte that is not UTF-8 becomes \xHH; the rest of UTF-8 is kept.
 * dump.c's put_esc writes into its own buffer and escapes all non-ASCII: one shared
 * helper would be better.
 */
static void text_line(FILE *out, const char *before, const char *s, const char *after)
{
	fputs(before, out);
	jt_text__put(out, s, strlen(s));
	fputs(after, out);
}

/* The log's path after label, when and where it was recorded, its samples and losses. */
static void text_header(FILE *out, const struct rep *r, const char *label, const char *indent)
{
	const struct jt_log_header *h = r->src.hdr;
	char when[64], filt[256];
	bool kept;
	int i;

	fmt_start(r, when, sizeof(when));
	text_line(out, label, r->o->path, "\n");
	fprintf(out, "%srecorded %s on ", indent, when);
	jt_text__put(out, h->hostname, sizeof(h->hostname));
	fputs(" (", out);
	jt_text__put(out, h->kernel, sizeof(h->kernel));
	fprintf(out, "), %.3f s, %u CPUs, %u Hz%s%s%s%s\n", duration_s(r), h->ncpus,
		h->sample_hz, h->flags & JT_LOG_F_SYSTEM_WIDE ? ", system-wide" : "",
		h->flags & JT_LOG_F_CALLS ? ", calls" : "",
		h->flags & JT_LOG_F_KSTACK ? ", kernel stacks" : "",
		h->flags & JT_LOG_F_OFFCPU ? ", off-CPU" : "");
	fprintf(out, "%s%" PRIu64 " samples", indent, r->all.samples);
	if (jt_logsrc__late(&r->src))	/* their perf-map lines came after them */
		fprintf(out, " (%" PRIu64 " named late)", jt_logsrc__late(&r->src));
	fprintf(out, ", %" PRIu64 " calls", r->enters);
	if (jt_filter__describe(&r->o->filter, filt, sizeof(filt)))
		fprintf(out, " (kept: %s)", filt);
	fprintf(out, "; lost %" PRIu64, jt_logsrc__dropped(&r->src));
	for (i = 0; i < JT_DROP_MAX; i++)
		if (r->src.drops[i] && !jt_drop__kept(i))
			fprintf(out, ", %s %" PRIu64, jt_drop__name(i), r->src.drops[i]);
	for (i = 0, kept = false; i < JT_DROP_MAX; i++)	/* samples kept, in part unnamed */
		if (r->src.drops[i] && jt_drop__kept(i)) {
			fprintf(out, "%s%s %" PRIu64, kept ? ", " : "; kept, cut or unnamed: ",
				jt_drop__name(i), r->src.drops[i]);
			kept = true;
		}
	fputc('\n', out);
}

/* The file of a known source line (SRC_KNOWN). */
static const char *src_file(const struct rep *r, uint64_t src)
{
	return jt_lv__file(r->src.lv, (uint32_t)(SRC_KNOWN(src) - 1));
}

static void text_methods(FILE *out, const struct rep *r, const struct section *s)
{
	size_t n, i;
	void **v = rows(r, s, T_HOT, &n);
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
		const struct entry *e = v[i];
		enum jt_lv_kind kind;
		const char *name = jt_stacks__name(r->stk, e->name, &kind);

		fprintf(out, "%9" PRIu64 " %5.1f%% %9" PRIu64 " %5.1f%%  %-7s ", e->self,
			pct(e->self, s->samples), e->total, pct(e->total, s->samples),
			jt_lv__kind_name(kind));
		text_line(out, "", name, "\n");
		if (!e->top[0].n)
			continue;
		fprintf(out, "%42s", "hot offsets:");
		for (k = 0; k < NR_OFFS && e->top[k].n; k++) {
			double p = pct(e->top[k].n, e->self);

			fprintf(out, "%s +0x%" PRIx64 " %s%.0f%%", k ? "," : "", e->top[k].off,
				p < 0.5 ? "<" : "", p < 0.5 ? 1 : p);
			if (SRC_KNOWN(e->top[k].src)) {
				text_line(out, " ", src_file(r, e->top[k].src), "");
				fprintf(out, ":%u", (uint32_t)e->top[k].src);
			}
		}
		fputc('\n', out);
	}
	free(v);
}

static void text_calls(FILE *out, const struct rep *r, const struct section *s)
{
	size_t n, i;
	void **v = rows(r, s, T_CALLS, &n);

	if (!v)
		return;
	if (n) {
		fprintf(out, "\n%10s %12s %12s %10s  %s\n", "CALLS", "INCL_MS", "EXCL_MS",
			"AVG_US", "METHOD (calls)");
		for (i = 0; i < n; i++) {
			const struct entry *e = v[i];

			fprintf(out, "%10" PRIu64 " %12.3f %12.3f %10.3f  ", e->calls,
				e->incl_ns / 1e6, e->excl_ns / 1e6,
				e->calls ? e->incl_ns / 1e3 / e->calls : 0);
			text_line(out, "", jt_stacks__name(r->stk, e->name, NULL), "\n");
		}
	}
	free(v);
}

/* ms, or "-" when the log was not sampled: its CPU time is not known. */
static const char *cpu_ms(const struct rep *r, uint64_t samples, char *buf, size_t cap)
{
	if (!r->src.hdr->sample_hz)
		return "-";
	snprintf(buf, cap, "%.3f", cpu_ns(r, samples) / 1e6);
	return buf;
}

/*
 * The whole log's time off the CPU and its split by state, and on it:
 * "off CPU 2504.000 ms in 15 waits: sleep 1500.000 ms (1), ..., short 4.000 ms (12)".
 */
static void text_off_totals(FILE *out, const struct rep *r)
{
	const struct offtime *t = &r->all.off;
	unsigned int k;

	fprintf(out, "off CPU %.3f ms in %" PRIu64 " waits:", t->ns[0] / 1e6, t->n[0]);
	for (k = 1; k < JT_OFF_MAX; k++)
		fprintf(out, "%s %s %.3f ms (%" PRIu64 ")", k > 1 ? "," : "",
			jt_off_state__name(k), t->ns[k] / 1e6, t->n[k]);
	if (r->src.hdr->sample_hz)
		fprintf(out, "\non CPU %.3f ms: %" PRIu64 " samples at %u Hz\n",
			cpu_ns(r, r->all.samples) / 1e6, r->all.samples, r->src.hdr->sample_hz);
	else
		fputs("\non CPU: not sampled (0 Hz)\n", out);
}

/* ", T ms off CPU (P%)" after a section's samples, P of the whole log's; nothing without. */
static void text_off_head(FILE *out, const struct rep *r, const struct section *s, bool share)
{
	if (!r->any_offcpu)
		return;
	fprintf(out, ", %.3f ms off CPU", s->off.ns[0] / 1e6);
	if (share)
		fprintf(out, " (%.1f%%)", pct(s->off.ns[0], r->all.off.ns[0]));
}

/*
 * Where the section's threads waited: per method, the time of the waits whose stack held
 * it and their share of the section's, the time it was the innermost user frame (where
 * the thread blocked), the waits, and its CPU time (samples whose stack held it).
 */
static void text_offcpu(FILE *out, const struct rep *r, const struct section *s)
{
	size_t n, i;
	void **v;
	char buf[32];

	if (!r->any_offcpu)
		return;
	v = rows(r, s, T_OFF, &n);
	if (!v)
		return;
	if (n) {
		fprintf(out, "\n%11s %6s %11s %7s %10s  %-7s %s\n", "WAIT_MS", "WAIT%", "INNER_MS",
			"WAITS", "CPU_MS", "KIND", "METHOD (off CPU)");
		for (i = 0; i < n; i++) {
			const struct entry *e = v[i];
			enum jt_lv_kind kind;
			const char *name = jt_stacks__name(r->stk, e->name, &kind);

			fprintf(out, "%11.3f %5.1f%% %11.3f %7" PRIu64 " %10s  %-7s ",
				e->wait_ns / 1e6, pct(e->wait_ns, s->off.ns[0]), e->inner_ns / 1e6,
				e->waits, cpu_ms(r, e->total, buf, sizeof(buf)),
				jt_lv__kind_name(kind));
			text_line(out, "", name, "\n");
		}
	}
	free(v);
}

/*
 * Each thread of process pid, its time on the CPU (samples / hz) and off it by state (short
 * waits too), the share of the two it ran: "CPU_MS WAIT_MS SLEEP_MS ... CPU% THREAD".
 */
static int text_walls(FILE *out, const struct rep *r, uint32_t pid)
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
	v = walls_of(r, pid, &n);
	if (!v)
		return -ENOMEM;
	if (n) {
		fprintf(out, "\n%10s %11s", "CPU_MS", "WAIT_MS");
		for (k = 1; k < JT_OFF_MAX; k++)
			fprintf(out, " %10s", state_cols[k]);
		fprintf(out, " %7s %6s  %s\n", "WAITS", "CPU%", "THREAD (on and off CPU)");
	}
	for (i = 0; i < n; i++) {
		const struct wall *w = v[i];
		const char *name = jt_lv__thread(r->src.lv, w->tid);
		uint64_t on = cpu_ns(r, w->samples);

		if (r->src.hdr->sample_hz)
			snprintf(share, sizeof(share), "%.1f%%", pct(on, on + w->off.ns[0]));
		else
			snprintf(share, sizeof(share), "-");
		fprintf(out, "%10s %11.3f", cpu_ms(r, w->samples, buf, sizeof(buf)),
			w->off.ns[0] / 1e6);
		for (k = 1; k < JT_OFF_MAX; k++)
			fprintf(out, " %10.3f", w->off.ns[k] / 1e6);
		fprintf(out, " %7" PRIu64 " %6s  ", w->off.n[0], share);
		if (name) {
			text_line(out, "", name, "");
			fprintf(out, " (%u)\n", w->tid);
		} else {
			fprintf(out, "%u\n", w->tid);
		}
	}
	free(v);
	return 0;
}

/* --threads: a table per thread of process s, "== thread NAME (TID) of COMM (PID): ...". */
static int text_threads(FILE *out, const struct rep *r, const struct section *s)
{
	char label[64];
	size_t n, i;
	void **v;

	if (!r->o->threads)
		return 0;
	v = threads_of(r, s->pid, &n);
	if (!v)
		return -ENOMEM;
	jt_stacks__proc_label(r->src.lv, s->pid, label, sizeof(label));
	for (i = 0; i < n; i++) {
		const struct section *t = v[i];
		const char *name = jt_lv__thread(r->src.lv, t->tid);

		if (name) {	/* "NAME (TID)", or the tid alone when the log never named it */
			text_line(out, "\n== thread ", name, "");
			fprintf(out, " (%u) of ", t->tid);
		} else {
			fprintf(out, "\n== thread %u of ", t->tid);
		}
		text_line(out, "", label, ": ");
		fprintf(out, "%" PRIu64 " samples (%.1f%%)", t->samples,
			pct(t->samples, r->all.samples));
		text_off_head(out, r, t, true);
		fputc('\n', out);
		text_methods(out, r, t);
		text_offcpu(out, r, t);
	}
	free(v);
	return 0;
}

static int text_report(FILE *out, const struct rep *r)
{
	void **procs;
	size_t n, i;
	char label[64];
	const struct jt_lv_proc *p;
	bool one;

	text_header(out, r, "jitrace report: ", "");
	if (r->any_calls)
		fprintf(out, "calls: %" PRIu64 " entered, %" PRIu64 " left; %" PRIu64
			" leaves without an enter, %" PRIu64 " closed by an outer leave, %" PRIu64
			" open at the end\n", r->enters, r->leaves, r->leave_no_enter,
			r->closed_by_outer, r->open_at_end);
	if (r->any_offcpu)
		text_off_totals(out, r);
	procs = sections(r, &n);
	if (!procs)
		return -ENOMEM;
	one = nr_sections(r) == 1;
	if (one) {	/* its tables would be the all-processes ones again: just name it */
		jt_stacks__proc_label(r->src.lv, ((struct section *)procs[0])->pid, label,
				      sizeof(label));
		p = jt_lv__proc(r->src.lv, ((struct section *)procs[0])->pid);
		text_line(out, "one process: ", label, "\n");
		if (p && p->cmdline[0])
			text_line(out, "   ", p->cmdline, "\n");
	}
	fprintf(out, "\n== all processes: %" PRIu64 " samples", r->all.samples);
	text_off_head(out, r, &r->all, false);
	fputc('\n', out);
	text_methods(out, r, &r->all);
	text_calls(out, r, &r->all);
	text_offcpu(out, r, &r->all);
	if (one && (text_walls(out, r, ((struct section *)procs[0])->pid) ||
		    text_threads(out, r, procs[0])))
		goto nomem;
	for (i = 0; i < n && !one; i++) {
		const struct section *s = procs[i];

		jt_stacks__proc_label(r->src.lv, s->pid, label, sizeof(label));
		p = jt_lv__proc(r->src.lv, s->pid);
		text_line(out, "\n== ", label, ": ");
		fprintf(out, "%" PRIu64 " samples (%.1f%%)", s->samples,
			pct(s->samples, r->all.samples));
		if (s->calls)
			fprintf(out, ", %" PRIu64 " calls", s->calls);
		text_off_head(out, r, s, true);
		fprintf(out, "\n");
		if (p && p->cmdline[0])
			text_line(out, "   ", p->cmdline, "\n");
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

/* ---- JSON ---- */

/* Through the exports' writer, so that every JSON jitrace writes escapes strings alike. */
static void json_str(struct jt_xout *x, const char *s)
{
	jt_xout__json_str(x, s, strlen(s));
}

/* "on_cpu_ns": T (null when not sampled), "off_cpu": {"wait_ns": T, "waits": N, by state} */
static void json_time(struct jt_xout *x, const struct rep *r, uint64_t samples,
		      const struct offtime *t)
{
	unsigned int k;

	if (r->src.hdr->sample_hz)
		jt_xout__printf(x, "\"on_cpu_ns\": %" PRIu64, cpu_ns(r, samples));
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
static int json_offcpu(struct jt_xout *x, const struct rep *r, const struct section *s)
{
	size_t n, i;
	void **v;

	if (!r->any_offcpu)
		return 0;
	v = rows(r, s, T_OFF, &n);
	if (!v)
		return -ENOMEM;
	jt_xout__str(x, ", ");
	json_time(x, r, s->samples, &s->off);
	jt_xout__str(x, ", \"off_cpu_methods\": [");
	for (i = 0; i < n; i++) {
		const struct entry *e = v[i];
		enum jt_lv_kind kind;
		const char *name = jt_stacks__name(r->stk, e->name, &kind);

		jt_xout__str(x, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		json_str(x, name);
		jt_xout__printf(x, ", \"kind\": \"%s\", \"wait_ns\": %" PRIu64
				", \"wait_pct\": %.2f, \"inner_ns\": %" PRIu64 ", \"waits\": %"
				PRIu64 ", ", jt_lv__kind_name(kind), e->wait_ns,
				pct(e->wait_ns, s->off.ns[0]), e->inner_ns, e->waits);
		if (r->src.hdr->sample_hz)
			jt_xout__printf(x, "\"cpu_ns\": %" PRIu64 "}", cpu_ns(r, e->total));
		else
			jt_xout__str(x, "\"cpu_ns\": null}");
	}
	free(v);
	jt_xout__str(x, "]");
	return 0;
}

/* A thread's entry in a list, up to its name: {"tid": T, "name": NAME or "" */
static void json_thread_head(struct jt_xout *x, const struct rep *r, uint32_t tid, bool first)
{
	const char *name = jt_lv__thread(r->src.lv, tid);

	jt_xout__printf(x, "%s\n   {\"tid\": %u, \"name\": ", first ? "" : ",", tid);
	json_str(x, name ? name : "");
}

/* , "thread_times": [{"tid": T, "name": NAME or "", "samples": N, time on and off}, ...] */
static int json_walls(struct jt_xout *x, const struct rep *r, uint32_t pid)
{
	size_t n, i;
	void **v;

	if (!r->any_offcpu)
		return 0;
	v = walls_of(r, pid, &n);
	if (!v)
		return -ENOMEM;
	jt_xout__str(x, ", \"thread_times\": [");
	for (i = 0; i < n; i++) {
		const struct wall *w = v[i];

		json_thread_head(x, r, w->tid, i == 0);
		jt_xout__printf(x, ", \"samples\": %" PRIu64 ", ", w->samples);
		json_time(x, r, w->samples, &w->off);
		jt_xout__str(x, "}");
	}
	free(v);
	jt_xout__str(x, "]");
	return 0;
}

static int json_section(struct jt_xout *x, const struct rep *r, const struct section *s)
{
	size_t n, i;
	void **v = rows(r, s, T_HOT, &n);
	int k;

	if (!v)
		return -ENOMEM;
	jt_xout__printf(x, "\"samples\": %" PRIu64 ", \"calls\": %" PRIu64 ", \"methods\": [",
			s->samples, s->calls);
	for (i = 0; i < n; i++) {
		const struct entry *e = v[i];
		enum jt_lv_kind kind;
		const char *name = jt_stacks__name(r->stk, e->name, &kind);

		jt_xout__str(x, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		json_str(x, name);
		jt_xout__printf(x, ", \"kind\": \"%s\", \"self\": %" PRIu64 ", \"self_pct\": %.2f, "
				"\"total\": %" PRIu64 ", \"total_pct\": %.2f, \"offsets\": [",
				jt_lv__kind_name(kind), e->self, pct(e->self, s->samples),
				e->total, pct(e->total, s->samples));
		for (k = 0; k < NR_OFFS && e->top[k].n; k++) {
			jt_xout__printf(x, "%s{\"offset\": %" PRIu64 ", \"samples\": %" PRIu64,
					k ? ", " : "", e->top[k].off, e->top[k].n);
			if (SRC_KNOWN(e->top[k].src)) {
				jt_xout__str(x, ", \"file\": ");
				json_str(x, src_file(r, e->top[k].src));
				jt_xout__printf(x, ", \"line\": %u", (uint32_t)e->top[k].src);
			}
			jt_xout__str(x, "}");
		}
		jt_xout__str(x, "]");
		if (e->has_calls)
			jt_xout__printf(x, ", \"calls\": %" PRIu64 ", \"incl_ns\": %" PRIu64
					", \"excl_ns\": %" PRIu64, e->calls, e->incl_ns, e->excl_ns);
		jt_xout__str(x, "}");
	}
	free(v);
	jt_xout__str(x, "]");
	v = rows(r, s, T_CALLS, &n);
	if (!v)
		return -ENOMEM;
	jt_xout__str(x, ", \"calls_by_time\": [");
	for (i = 0; i < n; i++) {
		const struct entry *e = v[i];

		jt_xout__str(x, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		json_str(x, jt_stacks__name(r->stk, e->name, NULL));
		jt_xout__printf(x, ", \"calls\": %" PRIu64 ", \"incl_ns\": %" PRIu64
				", \"excl_ns\": %" PRIu64 "}", e->calls, e->incl_ns, e->excl_ns);
	}
	free(v);
	jt_xout__str(x, "]");
	return json_offcpu(x, r, s);
}

/* --threads: , "threads": [{"tid": T, "name": NAME or "", samples, methods...}, ...] */
static int json_threads(struct jt_xout *x, const struct rep *r, const struct section *s)
{
	size_t n, i;
	void **v;

	if (!r->o->threads)
		return 0;
	v = threads_of(r, s->pid, &n);
	if (!v)
		return -ENOMEM;
	jt_xout__str(x, ", \"threads\": [");
	for (i = 0; i < n; i++) {
		const struct section *t = v[i];

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

/* "log": PATH, when and where it was recorded, "lost": {...}, without braces around. */
static void json_log(struct jt_xout *x, const struct rep *r)
{
	const struct jt_log_header *h = r->src.hdr;
	char when[64], host[65], kernel[65];
	int k;

	fmt_start(r, when, sizeof(when));
	snprintf(host, sizeof(host), "%.64s", h->hostname);
	snprintf(kernel, sizeof(kernel), "%.64s", h->kernel);
	jt_xout__str(x, "\"log\": ");
	json_str(x, r->o->path);
	jt_xout__str(x, ", \"start\": ");
	json_str(x, when);
	jt_xout__str(x, ", \"host\": ");
	json_str(x, host);
	jt_xout__str(x, ", \"kernel\": ");
	json_str(x, kernel);
	jt_xout__printf(x, ", \"duration_s\": %.6f, \"cpus\": %u, \"hz\": %u, "
			"\"system_wide\": %s, \"calls_recorded\": %s, \"kernel_stacks\": %s,\n "
			"\"lost\": {", duration_s(r), h->ncpus, h->sample_hz,
			h->flags & JT_LOG_F_SYSTEM_WIDE ? "true" : "false",
			h->flags & JT_LOG_F_CALLS ? "true" : "false",
			h->flags & JT_LOG_F_KSTACK ? "true" : "false");
	for (k = 0; k < JT_DROP_MAX; k++)
		jt_xout__printf(x, "%s\"%s\": %" PRIu64, k ? ", " : "", jt_drop__name(k),
				r->src.drops[k]);
	jt_xout__str(x, "}");
}

static int json_body(struct jt_xout *x, const struct rep *r)
{
	void **procs;
	size_t n, i;

	jt_xout__str(x, "{");
	json_log(x, r);
	jt_xout__printf(x, ",\n \"call_records\": {\"entered\": %" PRIu64 ", \"left\": %"
			PRIu64 ", \"leave_without_enter\": %" PRIu64 ", \"closed_by_outer_leave\": %"
			PRIu64 ", \"open_at_end\": %" PRIu64 "},\n \"all\": {", r->enters,
			r->leaves, r->leave_no_enter, r->closed_by_outer, r->open_at_end);
	if (json_section(x, r, &r->all))
		return -ENOMEM;
	jt_xout__str(x, "},\n \"processes\": [");
	procs = sections(r, &n);
	if (!procs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct section *s = procs[i];
		const struct jt_lv_proc *p = jt_lv__proc(r->src.lv, s->pid);

		jt_xout__printf(x, "%s\n  {\"pid\": %u, \"comm\": ", i ? "," : "", s->pid);
		json_str(x, p ? p->comm : "");
		jt_xout__str(x, ", \"cmdline\": ");
		json_str(x, p ? p->cmdline : "");
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

/* Returns 0 or -errno, reported (out of memory by rows() and sections()). */
static int json_report(FILE *out, const struct rep *r)
{
	struct jt_xout x;
	int err, werr;

	if (jt_xout__init(&x, out)) {
		jt_err("%s", nomem);
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
	struct rep log[2];	/* base, new */
	struct jt_xintern keys;	/* kind, then name: index into rows */
	struct drow *rows;
	size_t cap;
};

/* Take in one log's methods over every process. Returns 0 or -ENOMEM. */
static int diff_add(struct diff *d, int which)
{
	const struct rep *r = &d->log[which];
	size_t pos = 0, klen;
	uint64_t key;
	void *val;
	char *k;

	while (jt_hash__next(&r->all.entries, &pos, &key, &val)) {
		const struct entry *e = val;
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

		row->self_chg = pct(row->self[1], nn) - pct(row->self[0], nb);
		row->total_chg = pct(row->total[1], nn) - pct(row->total[0], nb);
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
	text_header(out, &d->log[0], "base: ", "   ");
	text_header(out, &d->log[1], "new:  ", "   ");
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
			pct(w->self[0], nb), w->self[1], pct(w->self[1], nn), w->self_chg,
			w->total[0], pct(w->total[0], nb), w->total[1], pct(w->total[1], nn),
			w->total_chg, jt_lv__kind_name(w->kind));
		text_line(out, "", w->name, "\n");
	}
}

static void diff_json(struct jt_xout *x, const struct diff *d, const struct drow **v, size_t n)
{
	const uint64_t nb = d->log[0].all.samples, nn = d->log[1].all.samples;
	size_t i;

	jt_xout__str(x, "{\"base\": {");
	json_log(x, &d->log[0]);
	jt_xout__printf(x, ", \"samples\": %" PRIu64 "},\n \"new\": {", nb);
	json_log(x, &d->log[1]);
	jt_xout__printf(x, ", \"samples\": %" PRIu64 "},\n \"sort\": \"%s\", \"methods\": [",
			nn, d->o->sort == JT_REPORT_BY_TOTAL ? "total" : "self");
	for (i = 0; i < n; i++) {
		const struct drow *w = v[i];

		jt_xout__str(x, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		json_str(x, w->name);
		jt_xout__printf(x, ", \"kind\": \"%s\", \"base_self\": %" PRIu64
				", \"base_self_pct\": %.2f, \"new_self\": %" PRIu64
				", \"new_self_pct\": %.2f, \"self_change\": %.2f, \"base_total\": %"
				PRIu64 ", \"base_total_pct\": %.2f, \"new_total\": %" PRIu64
				", \"new_total_pct\": %.2f, \"total_change\": %.2f}",
				jt_lv__kind_name(w->kind), w->self[0], pct(w->self[0], nb),
				w->self[1], pct(w->self[1], nn), w->self_chg, w->total[0],
				pct(w->total[0], nb), w->total[1], pct(w->total[1], nn),
				w->total_chg);
	}
	jt_xout__str(x, "]}\n");
}

/* Read one log and add it up. Returns 0 or -1 (reported). */
static int load(struct rep *r)
{
	if (jt_logsrc__open(&r->src, r->o->path, &r->o->filter))
		return -1;
	r->any_offcpu = r->src.hdr->flags & JT_LOG_F_OFFCPU;
	r->stk = jt_stacks__new();
	if (!r->stk || read_log(r) || jt_logsrc__finish(&r->src, "reported") || add_up(r))
		return -1;
	return 0;
}

static int report_diff(FILE *out, const struct jt_report_opts *o)
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
		if (load(&d.log[i]))
			goto out;
	if (diff_add(&d, 0) || diff_add(&d, 1) || !(v = diff_rows(&d, &n))) {
		jt_err("%s", nomem);
		goto out;
	}
	if (o->json) {
		if (jt_xout__init(&x, out)) {
			jt_err("%s", nomem);
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
	rep_free(&d.log[0]);
	rep_free(&d.log[1]);
	return ret;
}

int jt_report(FILE *out, const struct jt_report_opts *o)
{
	struct rep r = { .o = o };
	int ret = 1;

	if (o->base)
		return report_diff(out, o);
	if (load(&r))
		goto out;
	if (o->json ? json_report(out, &r) : text_report(out, &r))
		goto out;
	if (fflush(out) || ferror(out)) {
		jt_err("writing the report: %s", strerror(errno ? errno : EIO));
		goto out;
	}
	ret = 0;
out:
	rep_free(&r);
	return ret;
}
