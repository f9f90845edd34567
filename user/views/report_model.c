// SPDX-License-Identifier: GPL-2.0
/* The report's model: a log read record by record into per-method, per-process and
 * per-thread counts (samples, calls with inclusive and exclusive times, off-CPU time), then
 * added up over each process's stacks and the whole log. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "log/source.h"
#include "views/report_model.h"
#include "views/stacks.h"

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

const char report__nomem[] = "out of memory making the report";

static struct jt_report_section *section_get(struct jt_report_model *r, uint32_t pid)
{
	struct jt_report_section *s = jt_hash__get_new(&r->procs, pid, sizeof(*s), NULL);

	if (s)
		s->pid = pid;
	return s;
}

static struct jt_report_entry *entry_get(struct jt_report_section *s, uint32_t name)
{
	struct jt_report_entry *e = jt_hash__get_new(&s->entries, name, sizeof(*e), NULL);

	if (e)
		e->name = name;
	return e;
}

static int offs_add(struct jt_hash *h, uint64_t off, uint64_t n)
{
	uintptr_t cur = (uintptr_t)jt_hash__get(h, off);

	return jt_hash__put(h, off, (void *)(cur + n));
}

/* One more sample at off whose source line is src (JT_REPORT_SRC_*). */
static int srcs_add(struct jt_hash *h, uint64_t off, uint64_t src)
{
	uintptr_t cur = (uintptr_t)jt_hash__get(h, off);

	if (cur == src || cur == JT_REPORT_SRC_MIXED)
		return 0;
	return jt_hash__put(h, off, (void *)(uintptr_t)(cur ? JT_REPORT_SRC_MIXED : src));
}

static void section_free(struct jt_report_section *s)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&s->entries, &pos, &key, &val)) {
		jt_hash__fini(&((struct jt_report_entry *)val)->offs);
		jt_hash__fini(&((struct jt_report_entry *)val)->srcs);
		free(val);
	}
	jt_hash__fini(&s->entries);
}

void report__free(struct jt_report_model *r)
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
	jt_hash__fini_free(&r->walls);
	free(r->seen);
	jt_hash__fini_free(&r->mstats);
	jt_stacks__free(r->stk);
	jt_logsrc__close(&r->src);
}

/* ---- reading ---- */

/*
 * Whether name is met for the first time in the record being added up (r->stamp): 1 the
 * first time, 0 after; -ENOMEM.
 */
static int first_in_record(struct jt_report_model *r, uint32_t name)
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
static struct jt_report_section *tsec_get(struct jt_report_model *r, uint32_t pid, uint32_t tid)
{
	struct jt_report_section *t =
	    jt_hash__get_new(&r->tsecs, (uint64_t)pid << 32 | tid, sizeof(*t), NULL);

	if (t) {
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

/* Thread tid's time, made if new; NULL without memory. */
static struct jt_report_wall *wall_get(struct jt_report_model *r, uint32_t pid, uint32_t tid)
{
	struct jt_report_wall *w = r->last_wall;

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
static int thread_sample(struct jt_report_model *r, const struct jt_rec_sample *smp, uint32_t node,
			 struct jt_report_entry **leaf)
{
	struct jt_report_section *t = tsec_get(r, smp->pid, smp->tid);
	const struct jt_stk_node *n;
	struct jt_report_entry *e;
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

static int on_sample(struct jt_report_model *r, const struct jt_rec_sample *smp)
{
	const struct jt_frame *leaf = smp->frames;
	/* the process's entry, the thread's */
	struct jt_report_entry *e[2] = { NULL, NULL };
	struct jt_report_section *s;
	struct jt_report_wall *w;
	uint32_t node, file, line;
	uint64_t src = JT_REPORT_SRC_NONE;
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
	jt_err("%s", report__nomem);
	return -ENOMEM;
}

static void off_add(struct jt_report_offtime *t, unsigned int state, uint64_t ns, uint64_t n)
{
	t->ns[0] += ns;
	t->ns[state] += ns;
	t->n[0] += n;
	t->n[state] += n;
}

/*
 * An off-CPU record's wait to one name on its stack (once a record however often the name
 * recurs), and, if inner, as where the thread blocked. 0 or -ENOMEM (reported, also for a
 * name that could not be made, < 0).
 */
static int off_name(struct jt_report_model *r, struct jt_report_section **sec,
		    const struct jt_rec_offcpu *rec, int64_t name, bool inner)
{
	struct jt_report_entry *e;
	int k, first;

	if (name < 0)
		return -ENOMEM;		/* said where it was made */
	first = first_in_record(r, name);
	if (first < 0)
		goto nomem;
	if (!first && !inner)
		return 0;
	for (k = 0; k < 2 && sec[k]; k++) {
		e = entry_get(sec[k], name);
		if (!e)
			goto nomem;
		if (first) {
			e->wait_ns += rec->off_ns;
			e->waits += rec->count;
		}
		if (inner)
			e->inner_ns += rec->off_ns;
	}
	return 0;
nomem:
	jt_err("%s", report__nomem);
	return -ENOMEM;
}

/*
 * An off-CPU record: its time and waits to its thread, its process and (--threads) its
 * thread's section; to every name on its stack (the methods inlined at a JIT frame's
 * address too, as the stacks tree expands them), once however often it recurs; and to the
 * innermost user frame's innermost name as where the thread blocked. Short waits have no
 * stack: they count in the totals only.
 */
static int on_offcpu(struct jt_report_model *r, const struct jt_rec_offcpu *rec)
{
	const struct jt_rec_sample *smp = &rec->smp;
	unsigned int st = rec->state;	/* known: the reader refuses any other */
	unsigned int i, user = jt_lv__user_leaf(r->src.lv, smp);
	/* the process's section, the thread's */
	struct jt_report_section *sec[2] = { section_get(r, smp->pid), NULL };
	struct jt_report_wall *w = wall_get(r, smp->pid, smp->tid);
	bool expand = jt_lv__expands(smp);
	int k;

	if (!sec[0] || !w || (r->o->threads && !(sec[1] = tsec_get(r, smp->pid, smp->tid))))
		goto nomem;
	off_add(&w->off, st, rec->off_ns, rec->count);
	for (k = 0; k < 2 && sec[k]; k++)
		off_add(&sec[k]->off, st, rec->off_ns, rec->count);
	r->stamp++;
	for (i = 0; i < smp->nr_frames; i++) {	/* leaf first */
		struct jt_lv_scope sc[JT_LV_DEPTH_MAX];
		unsigned int n = expand ? jt_lv__frame_scopes(r->src.lv, &smp->frames[i], i > user,
							      sc, JT_LV_DEPTH_MAX) : 0, j;

		for (j = 0; j + 1 < n; j++)	/* what it inlined there, innermost first */
			if (off_name(r, sec, rec, jt_stacks__inlined(r->stk, sc[j].name),
				     i == user && !j))
				return -ENOMEM;
		if (off_name(r, sec, rec, jt_stacks__frame(r->stk, r->src.lv, &smp->frames[i]),
			     i == user && n < 2))
			return -ENOMEM;
	}
	return 0;
nomem:
	jt_err("%s", report__nomem);
	return -ENOMEM;
}

static struct thread *thread_get(struct jt_report_model *r, uint32_t pid, uint32_t tid)
{
	return jt_hash__get_new(&r->threads, (uint64_t)pid << 32 | tid, sizeof(struct thread),
				NULL);
}

static struct mstat *mstat_get(struct jt_report_model *r, uint64_t id, uint32_t pid)
{
	bool added;
	struct mstat *m = jt_hash__get_new(&r->mstats, id, sizeof(*m), &added);

	if (m && added)
		m->pid = pid;
	return m;
}

static int on_enter(struct jt_report_model *r, const struct jt_rec_call *c)
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
	jt_err("%s", report__nomem);
	return -ENOMEM;
}

/*
 * A leave closes the innermost open activation of its method. Activations above it never
 * saw their own leave (a lost record, a longjmp, an exception): they are dropped without
 * time and counted. A leave with no activation at all (entered before the log began) is
 * counted and otherwise ignored.
 */
static int on_leave(struct jt_report_model *r, const struct jt_rec_call *c)
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
	jt_err("%s", report__nomem);
	return -ENOMEM;
}

/* A thread's calls of a method summed in the process: into the method's calls as they are. */
static int on_callsum(struct jt_report_model *r, const struct jt_rec_callsum *c)
{
	struct mstat *m = mstat_get(r, c->id, c->pid);

	if (!m) {
		jt_err("%s", report__nomem);
		return -ENOMEM;
	}
	m->calls += c->calls;
	m->incl_ns += c->incl_ns;
	m->excl_ns += c->excl_ns;
	r->summed += c->calls;
	return 0;
}

/*
 * One call logged alone at its leave, with its enter and its own time: a call of its
 * method, and time its caller spent in callees if the caller is open in the log.
 */
static int on_span(struct jt_report_model *r, const struct jt_rec_span *c)
{
	struct mstat *m = mstat_get(r, c->id, c->pid);
	struct thread *t = thread_get(r, c->pid, c->tid);
	uint64_t dur = c->h.ts - c->enter_ts;	/* the reader checked enter_ts <= ts */

	if (!m || !t) {
		jt_err("%s", report__nomem);
		return -ENOMEM;
	}
	m->calls++;
	m->incl_ns += dur;
	m->excl_ns += c->self_ns;
	if (t->n)
		t->v[t->n - 1].child_ns += dur;
	r->spans++;
	return 0;
}

static int read_log(struct jt_report_model *r)
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
		case JT_REC_CALLSUM:
			r->any_calls = true;
			if (kept)
				err = on_callsum(r, (const void *)rec);
			break;
		case JT_REC_SPAN:
			r->any_calls = true;
			if (kept)
				err = on_span(r, (const void *)rec);
			break;
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
static int sum_tree(struct jt_report_model *r, struct jt_report_section *s, uint32_t top,
		    uint32_t *onpath)
{
	const struct jt_stk_node *n;
	struct jt_stacks_walk w;
	struct jt_report_entry *e;
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

static void top_offsets(struct jt_report_entry *e)
{
	size_t pos = 0;
	uint64_t off;
	void *val;
	int i, j;

	while (jt_hash__next(&e->offs, &pos, &off, &val)) {
		struct jt_report_offc c = { off, (uintptr_t)val, 0 };

		for (i = 0; i < JT_REPORT_NR_OFFS; i++)
			if (c.n > e->top[i].n || (c.n == e->top[i].n && e->top[i].n &&
						   c.off < e->top[i].off))
				break;
		if (i == JT_REPORT_NR_OFFS)
			continue;
		for (j = JT_REPORT_NR_OFFS - 1; j > i; j--)
			e->top[j] = e->top[j - 1];
		e->top[i] = c;
	}
	for (i = 0; i < JT_REPORT_NR_OFFS && e->top[i].n; i++)
		e->top[i].src = (uintptr_t)jt_hash__get(&e->srcs, e->top[i].off);
}

/* Fold one process's method into the whole log's. */
static int merge_entry(struct jt_report_model *r, const struct jt_report_entry *e)
{
	struct jt_report_entry *g = entry_get(&r->all, e->name);
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

static int add_up(struct jt_report_model *r)
{
	uint32_t *onpath = calloc(jt_stacks__nr_names(r->stk) + 1, sizeof(*onpath));
	const struct jt_stk_node *root = jt_stacks__node(r->stk, JT_STK_ROOT);
	struct jt_report_section *s;
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
		struct jt_report_entry *e;

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
		jt_err("%s", report__nomem);
	free(onpath);
	return err;
}


int report__load(struct jt_report_model *r)
{
	if (jt_logsrc__open(&r->src, r->o->path, &r->o->filter))
		return -1;
	r->any_offcpu = r->src.hdr->flags & JT_LOG_F_OFFCPU;
	r->stk = jt_stacks__new();
	if (!r->stk || read_log(r) || jt_logsrc__finish(&r->src, "reported") || add_up(r))
		return -1;
	return 0;
}
