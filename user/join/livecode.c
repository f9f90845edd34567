// SPDX-License-Identifier: GPL-2.0
/*
 * The code live in each process, as loads, unloads and moves say, applied in time order;
 * its methods' definitions and source lines, calls by agent id, and the late names of
 * perf-map lines read after samples met their code.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "join/collector_int.h"
#include "base/membound.h"
#include "base/util.h"

/*
 * A method's source lines, as its JT_REC_LINES carries them after the fixed part, or its
 * inlined scopes, as its JT_REC_INLINE does; a method with both holds a chain of two.
 */
struct lines {
	struct lines *next;
	uint16_t type;		/* JT_REC_LINES or JT_REC_INLINE */
	uint16_t nr_lines;
	uint16_t names_len;
	uint32_t bytes;		/* of payload */
	char payload[];		/* lines: nr_lines struct jt_line, then the names;
				 * inline: struct jt_inline_head, ranges, scopes, names */
};

/* A JT_REC_INLINE payload arriving in pieces (JT_EV_CODE_INLINE), by agent id. */
struct pieces {
	uint32_t total, have;
	char bytes[];
};

/* Payloads a process may have half-sent at once: one a compiling thread. */
#define PIECES_MAX 64

/*
 * What l holds, charged to the memory bound while it waits for its method's definition:
 * inlined scopes (a JVM sends them for every method it compiles, most never sampled);
 * jitdump lines are not charged, as before scopes were.
 */
static uint64_t lines_cost(const struct lines *l)
{
	return l->type == JT_REC_INLINE ? sizeof(*l) + l->bytes : 0;
}

/* Free the chain l, giving back what it was charged. */
static void lines_free(struct jt_membound *mem, struct lines *l)
{
	while (l) {
		struct lines *next = l->next;

		jt_membound__give(mem, lines_cost(l));
		free(l);
		l = next;
	}
}

/* Free half-sent pieces, giving back what they were charged. */
static void pieces_free(struct jt_membound *mem, struct pieces *pc)
{
	if (pc)
		jt_membound__give(mem, sizeof(*pc) + pc->total);
	free(pc);
}

void jt_coll_pieces_forget(struct proc *p)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&p->pieces, &pos, &key, &val))
		pieces_free(p->mem, val);
	jt_hash__fini(&p->pieces);
}

/*
 * A process owns its methods; its code map (what is live at each address), its id map
 * (what each agent id names) and a late name waiting to be written only borrow them. Once
 * none holds one, nothing can name it any more and the process lets it go: here, the one
 * place a method is freed.
 */
bool jt_coll_in_ids(const struct proc *p, const struct jt_method *m)
{
	return m->agent_id && jt_idmap__get(&p->ids, m->agent_id) == m;
}

void jt_coll_method_let_go(struct proc *p, struct jt_method *m)
{
	if (jt_coll_in_ids(p, m) || jt_codemap__holds(&p->code, m) || m->late_pending ||
	    m->unloaded)
		return;
	if (m->has_lines)
		lines_free(p->mem, jt_hash__del(&p->lines, (uintptr_t)m));
	jt_membound__give(p->mem, jt_method__cost(m->name_len));
	free(m);
}

void jt_coll_on_evict(void *ctx, struct jt_method *m)
{
	struct evict_ctx *e = ctx;

	e->evicted++;
	if (m->src == JT_SRC_PERFMAP)
		e->p->perfmap_methods--;
	if (e->ts)
		jt_late__gone(&e->p->late, m->start, m->size, e->ts);
	jt_coll_method_let_go(e->p, m);
}

/* Take m out of p's live code at ts if it is there. */
static void code_remove(struct proc *p, struct jt_method *m, uint64_t ts)
{
	if (!jt_codemap__remove(&p->code, m))
		return;
	if (m->src == JT_SRC_PERFMAP)
		p->perfmap_methods--;
	jt_late__gone(&p->late, m->start, m->size, ts);
}

/* Write m's source lines or inlined scopes, m being defined. */
static int lines_define(struct jt_collector *c, struct proc *p, struct jt_method *m,
			const struct lines *l, uint64_t ts)
{
	bool inl = l->type == JT_REC_INLINE;
	size_t fixed = inl ? offsetof(struct jt_rec_inline, head) : sizeof(struct jt_rec_lines);
	size_t size = jt_round8(fixed + l->bytes);
	struct jt_rec_hdr *rec = calloc(1, size);
	int err;

	if (!rec) {
		jt_err("out of memory for the source lines of pid %u", p->pid);
		return -ENOMEM;
	}
	*rec = (struct jt_rec_hdr){ .type = l->type, .size = size, .ts = ts };
	if (inl) {
		struct jt_rec_inline *r = (void *)rec;

		r->method = m->log_id;
		r->pid = p->pid;
	} else {
		struct jt_rec_lines *r = (void *)rec;

		r->method = m->log_id;
		r->pid = p->pid;
		r->nr_lines = l->nr_lines;
		r->names_len = l->names_len;
	}
	memcpy((char *)rec + fixed, l->payload, l->bytes);
	err = jt_sink__emit(&c->sink, rec);
	free(rec);
	return err;
}

int jt_coll_method_define(struct jt_collector *c, struct proc *p, struct jt_method *m,
			  uint64_t ts)
{
	struct lines *l, *k;
	int err;

	if (m->log_id)
		return 0;
	err = jt_coll_proc_define(c, p, ts);
	err = err ?: jt_methods__define(&c->methods, m, p->pid, ts, &c->sink);
	if (!err)
		c->st.methods = c->methods.defined;
	if (err || !m->has_lines)
		return err;
	/* its lines follow the definition at once: nothing can reference them before */
	l = jt_hash__del(&p->lines, (uintptr_t)m);
	m->has_lines = false;
	for (k = l; k && !err; k = k->next)
		err = lines_define(c, p, m, k, ts);
	lines_free(p->mem, l);
	return err;
}

/*
 * Keep l (source lines or inlined scopes of m) until m is defined, or write it now. It
 * replaces what m had of its type. Inlined scopes past the memory bound are counted and
 * not kept. Takes l.
 */
static int lines_take(struct jt_collector *c, struct proc *p, struct jt_method *m,
		      struct lines *l, uint64_t ts)
{
	struct lines *old, **at;

	if (m->log_id) {	/* already defined: its lines come now */
		int err = lines_define(c, p, m, l, ts);

		free(l);
		return err;
	}
	old = m->has_lines ? jt_hash__del(&p->lines, (uintptr_t)m) : NULL;
	for (at = &old; *at; at = &(*at)->next) {
		if ((*at)->type == l->type) {
			struct lines *gone = *at;

			*at = gone->next;
			gone->next = NULL;
			lines_free(p->mem, gone);
			break;
		}
	}
	if (jt_membound__take(p->mem, lines_cost(l))) {
		l->next = old;
	} else {
		c->st.memory_scopes++;
		free(l);
		l = old;
	}
	m->has_lines = l != NULL;
	if (l && jt_hash__put(&p->lines, (uintptr_t)m, l)) {
		m->has_lines = false;
		lines_free(p->mem, l);
		jt_err("out of memory for the source lines of pid %u", p->pid);
		return -ENOMEM;
	}
	return 0;
}

/* A method's source lines (jitdump debug info): kept until it is defined, or written now. */
int jt_coll_on_code_lines(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_method *m = jt_idmap__get(&p->ids, ev->lines_of);
	size_t bytes = (size_t)ev->nr_lines * sizeof(struct jt_line) + ev->names_len;
	struct lines *l;

	if (!m || !ev->nr_lines || ev->nr_lines > JT_LINES_MAX ||
	    ev->names_len > JT_LINES_NAMES_MAX || JT_EVENT_FIXED + bytes > ev->len)
		return 0;	/* lines of code we do not know, or not lines at all */
	l = malloc(sizeof(*l) + bytes);
	if (!l) {
		jt_err("out of memory for the source lines of pid %u", p->pid);
		return -ENOMEM;
	}
	*l = (struct lines){ .type = JT_REC_LINES, .nr_lines = ev->nr_lines,
			     .names_len = ev->names_len, .bytes = bytes };
	memcpy(l->payload, ev->tail, bytes);
	return lines_take(c, p, m, l, ev->ts);
}

/*
 * A piece of code's inlined scopes (the agent's, in order, right after its load): joined
 * by agent id, then kept like source lines. A piece out of order (one before it lost from
 * the ring buffer, already counted there) drops the payload.
 */
int jt_coll_on_code_inline(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_method *m = jt_idmap__get(&p->ids, ev->inl_of);
	struct pieces *pc = jt_hash__get(&p->pieces, ev->inl_of);
	struct lines *l;

	if (!ev->inl_off) {
		pieces_free(p->mem, jt_hash__del(&p->pieces, ev->inl_of));
		pc = NULL;
		if (m && ev->inl_total >= sizeof(struct jt_inline_head) &&
		    p->pieces.count < PIECES_MAX) {
			if (!jt_membound__take(p->mem, sizeof(*pc) + ev->inl_total)) {
				c->st.memory_scopes++;
				return 0;
			}
			pc = malloc(sizeof(*pc) + ev->inl_total);
			if (pc)
				*pc = (struct pieces){ .total = ev->inl_total };
			if (!pc || jt_hash__put(&p->pieces, ev->inl_of, pc)) {
				jt_membound__give(p->mem, sizeof(*pc) + ev->inl_total);
				free(pc);
				jt_err("out of memory for the inlined scopes of pid %u", p->pid);
				return -ENOMEM;
			}
		}
	}
	if (!pc)
		return 0;	/* code we do not know, or its first piece was lost */
	if (pc->have != ev->inl_off || pc->total != ev->inl_total ||
	    ev->str_len > pc->total - pc->have) {
		pieces_free(p->mem, jt_hash__del(&p->pieces, ev->inl_of));
		return 0;
	}
	memcpy(pc->bytes + pc->have, ev->tail, ev->str_len);
	pc->have += ev->str_len;
	if (pc->have < pc->total)
		return 0;
	jt_hash__del(&p->pieces, ev->inl_of);
	l = m ? malloc(sizeof(*l) + pc->total) : NULL;
	if (l) {
		*l = (struct lines){ .type = JT_REC_INLINE, .bytes = pc->total };
		memcpy(l->payload, pc->bytes, pc->total);
	}
	pieces_free(p->mem, pc);
	if (!m)
		return 0;
	if (!l) {
		jt_err("out of memory for the inlined scopes of pid %u", p->pid);
		return -ENOMEM;
	}
	return lines_take(c, p, m, l, ev->ts);
}

/* Whether live code that an exact source told of overlaps [start, start + size). */
static bool over_exact_code(const struct jt_codemap *cm, uint64_t start, uint64_t size)
{
	size_t lo = 0, hi = cm->n;

	while (lo < hi) {	/* the first method ending after start */
		size_t mid = lo + (hi - lo) / 2;

		if (cm->v[mid]->start + cm->v[mid]->size <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < cm->n && cm->v[lo]->start < start + size; lo++)
		if (cm->v[lo]->src != JT_SRC_PERFMAP)
			return true;
	return false;
}

/* Make code live in p (and reachable by its agent id). */
int jt_coll_add_code(struct jt_collector *c, struct proc *p, const struct code *k)
{
	struct evict_ctx e = { .p = p, .ts = k->ts };
	struct jt_method *m, *live, *old;

	/* a perf-map line over code an exact source (agent, USDT, jitdump) named, by another
	 * spelling and measure (HotSpot's map at exit, of what its probes told): kept as told */
	if (k->src == JT_SRC_PERFMAP && over_exact_code(&p->code, k->start, k->size)) {
		c->st.perfmap_skipped++;
		return 0;
	}
	/* past the cap only lines that replace live code are kept (see collector.h) */
	if (k->src == JT_SRC_PERFMAP && p->perfmap_methods >= c->max_perfmap_methods &&
	    !jt_codemap__overlaps(&p->code, k->start, k->size)) {
		c->st.perfmap_capped++;
		return 0;
	}
	/* past the memory bound the same: what replaces live code gives its bytes back soon */
	if (!jt_membound__take(c->mem, jt_method__cost(k->name_len))) {
		if (!jt_codemap__overlaps(&p->code, k->start, k->size)) {
			if (k->src == JT_SRC_PERFMAP)
				c->st.memory_perfmap++;
			else
				c->st.memory_code++;
			return 0;
		}
		jt_membound__charge(c->mem, jt_method__cost(k->name_len));
	}
	m = jt_method__new(k->start, k->size, k->ts, k->id, k->src, k->name, k->name_len);
	if (!m) {
		jt_membound__give(c->mem, jt_method__cost(k->name_len));
		goto oom;
	}
	live = jt_codemap__insert(&p->code, m, jt_coll_on_evict, &e);
	if (!live) {
		jt_coll_method_let_go(p, m);	/* held by nothing yet */
		goto oom;
	}
	if (live == m && m->size && m->src == JT_SRC_PERFMAP)
		p->perfmap_methods++;
	/*
	 * Code whose time is known only to a span (a perf-map line) names samples in that span
	 * only where no other code was known: where it replaced some, either could have run.
	 */
	if (live == m && e.evicted)
		m->unsure_us = k->unsure_us;
	if (live != m) {	/* the same code again (e.g. agent and perf map): keep one */
		jt_coll_method_let_go(p, m);	/* held by nothing */
		if (!k->id || jt_coll_in_ids(p, live))
			return 0;
		live->agent_id = k->id;
		m = live;
	}
	/*
	 * Any source: a perf-map line carries no id, but code it made live and an agent then
	 * named keeps its origin and that id, and a fork or a move hands both on together.
	 */
	if (k->id) {
		old = jt_idmap__get(&p->ids, k->id);
		if (jt_idmap__put(&p->ids, k->id, m)) {
			code_remove(p, m, k->ts);
			jt_coll_method_let_go(p, m);
			goto oom;
		}
		if (old && old != m)	/* an id reused without unload: the old one is gone */
			jt_coll_method_let_go(p, old);
	}
	jt_coll_method_let_go(p, m);	/* size 0 and no id: nothing can name it */
	return 0;
oom:
	jt_err("out of memory for the methods of pid %u", p->pid);
	return -ENOMEM;
}

/* ---- late names: perf-map lines that appear after samples met their code ---- */

/* Let a pending late name's method go: written or given up. */
void jt_coll_late_release(struct jt_collector *c, const struct pending_late *l)
{
	struct proc *p = jt_hash__get(&c->procs, l->pid);

	l->m->late_pending = false;
	if (p)
		jt_coll_method_let_go(p, l->m);
	else			/* cannot happen: a process's are written before it goes */
		free(l->m);
}

/* The method's definition, then the late name: its bare frames since from_ts are it. */
static int late_write(struct jt_collector *c, const struct pending_late *l)
{
	struct proc *p = jt_hash__get(&c->procs, l->pid);
	struct jt_rec_late rec;
	int err;

	if (!p)
		return 0;
	err = jt_coll_method_define(c, p, l->m, l->ts);
	if (err)
		return err;
	rec = (struct jt_rec_late){
		.h = { .type = JT_REC_LATE, .size = sizeof(rec), .ts = l->ts },
		.method = l->m->log_id, .start = l->m->start, .size = l->m->size,
		.from_ts = l->from_ts, .pid = l->pid,
	};
	c->st.late_names++;
	return jt_sink__emit(&c->sink, &rec.h);
}

/* Write the late names read before ts, and all of pid's (0: none) when it execs or exits. */
int jt_coll_late_flush(struct jt_collector *c, uint64_t ts, uint32_t pid)
{
	size_t i, kept = 0;
	int err = 0;

	for (i = 0; i < c->nr_pending; i++) {
		struct pending_late *l = &c->pending[i];

		if (l->ts >= ts && l->pid != pid) {
			c->pending[kept++] = *l;
			continue;
		}
		if (!err)
			err = late_write(c, l);
		jt_coll_late_release(c, l);
	}
	c->nr_pending = kept;
	return err;
}

/*
 * A line for [start, start + size) arrived: a pending late name of other code there is
 * given up. Both lines named code that samples met unnamed at those addresses, and which
 * was there when cannot be told.
 */
static void late_conflict(struct jt_collector *c, uint32_t pid, const struct jt_method *line)
{
	size_t i, kept = 0;

	for (i = 0; i < c->nr_pending; i++) {
		struct pending_late *l = &c->pending[i];

		if (l->pid != pid || l->m->start >= line->start + line->size ||
		    line->start >= l->m->start + l->m->size || jt_method__same_code(l->m, line)) {
			c->pending[kept++] = *l;
			continue;
		}
		c->st.late_conflicts++;
		jt_coll_late_release(c, l);
	}
	c->nr_pending = kept;
}

/* Hold m's late name until the lines read with it are all in. */
static int late_hold(struct jt_collector *c, struct proc *p, struct jt_method *m,
		     uint64_t from_ts, uint64_t ts)
{
	struct pending_late *v;

	if (m->late_pending)
		return 0;
	if (c->nr_pending == PENDING_LATE_MAX) {
		c->st.late_conflicts++;	/* too many at once: not named late */
		return 0;
	}
	v = realloc(c->pending, (c->nr_pending + 1) * sizeof(*v));
	if (!v) {
		jt_err("out of memory");
		return -ENOMEM;
	}
	c->pending = v;
	m->late_pending = true;
	v[c->nr_pending++] = (struct pending_late){ p->pid, m, from_ts, ts };
	return 0;
}

/*
 * HotSpot's probes measure a compiled method's instructions, its perf map the whole method:
 * the stubs and handlers after them, where a return address can be too (a deoptimization
 * runs from there). A map line that starts where exact code starts and reaches past its end,
 * over no other code, makes that method so long; samples that met the tail unnamed since the
 * method was made are its, named late. *done says whether the line was such a one.
 */
static int exact_code_grows(struct jt_collector *c, struct proc *p, const struct jt_event *ev,
			    bool *done)
{
	struct jt_method *m = jt_codemap__find(&p->code, ev->start);
	uint64_t end, since;

	*done = false;
	if (!m || m->src == JT_SRC_PERFMAP || m->start != ev->start || ev->size <= m->size)
		return 0;
	*done = true;
	c->st.perfmap_skipped++;	/* its name is not taken: the probe's is exact */
	end = m->start + m->size;
	if (jt_codemap__overlaps(&p->code, end, ev->start + ev->size - end))
		return 0;
	m->size = ev->size;
	/* the method was there all along, so no other code was: no page's history matters */
	since = p->life_ts > m->load_ts ? p->life_ts : m->load_ts;
	if (!(ev->flags & JT_EVENT_LATE_OK) ||
	    !jt_late__met(&p->late, end, ev->start + ev->size - end, since))
		return 0;
	return late_hold(c, p, m, since, ev->ts);
}

int jt_coll_on_code_load(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	uint64_t span = ev->latest_ts > ev->ts ? (ev->latest_ts - ev->ts + 999) / 1000 : 0;
	struct code k = {
		.ts = ev->ts, .id = ev->id, .start = ev->start, .size = ev->size,
		.unsure_us = span < UINT32_MAX ? span : UINT32_MAX, .src = ev->src,
		.name = jt_event__str(ev), .name_len = ev->str_len,
	};

	struct jt_method *m;
	uint64_t from = 0;
	bool late = false, done;
	int err;

	if (ev->src == JT_SRC_AGENT || ev->src == JT_SRC_JITDUMP) {
		p->has_agent = true;
	} else if (ev->src == JT_SRC_PERFMAP && p->has_agent) {
		/* the agent (or a jitdump) already told us, with exact times */
		c->st.perfmap_skipped++;
		return 0;
	} else if (ev->src == JT_SRC_PERFMAP) {
		err = exact_code_grows(c, p, ev, &done);
		if (err || done)
			return err;
	}
	/* read from a file after the fact: it may name what samples already met */
	if ((ev->flags & JT_EVENT_LATE_OK) && k.size) {
		if (c->nr_pending) {	/* a line of the same read over a pending one? */
			m = jt_method__new(k.start, k.size, k.ts, 0, k.src, k.name, k.name_len);
			if (!m)
				return -ENOMEM;
			late_conflict(c, p->pid, m);
			free(m);
		}
		late = !jt_codemap__overlaps(&p->code, k.start, k.size) &&
		       jt_late__window(&p->late, k.start, k.size, p->life_ts, &from);
	}
	err = jt_coll_add_code(c, p, &k);
	if (err || !late)
		return err;
	m = jt_codemap__find(&p->code, k.start);
	if (!m || m->start != k.start || m->size != k.size)
		return 0;
	return late_hold(c, p, m, from, ev->ts);
}

/* Code that moved (jitdump): live at its new address, under the same id and name. */
int jt_coll_on_code_move(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_method *m = jt_idmap__get(&p->ids, ev->id);
	struct code k;

	if (!m || !m->size) {	/* loaded before we started, or a stand-in */
		c->st.unknown_ids++;
		return 0;
	}
	k = (struct code){
		.ts = ev->ts, .id = ev->id, .start = ev->start, .size = ev->size,
		.src = m->src, .name = m->name, .name_len = m->name_len,
	};
	code_remove(p, m, ev->ts);	/* the id then names the new method; m is let go */
	return jt_coll_add_code(c, p, &k);
}

/* Let go of the oldest of p's kept unloaded methods. */
static void drop_oldest_unloaded(struct proc *p)
{
	struct jt_method *m = p->unloaded[p->unloaded_at];

	p->unloaded_at = (p->unloaded_at + 1) % JT_UNLOADED_KEPT;
	p->nr_unloaded--;
	m->unloaded = false;
	jt_coll_method_let_go(p, m);
}

/* Keep m, just unloaded, among p's last unloaded methods; the oldest of them goes. */
static void keep_unloaded(struct proc *p, struct jt_method *m)
{
	if (!p->unloaded) {
		p->unloaded = malloc(JT_UNLOADED_KEPT * sizeof(*p->unloaded));
		if (!p->unloaded) {	/* a late call of it gets a stand-in, as before */
			jt_coll_method_let_go(p, m);
			return;
		}
	}
	if (p->nr_unloaded == JT_UNLOADED_KEPT)
		drop_oldest_unloaded(p);
	m->unloaded = true;
	p->unloaded[(p->unloaded_at + p->nr_unloaded++) % JT_UNLOADED_KEPT] = m;
}

/* The unloaded method agent id named last, or NULL. */
static struct jt_method *find_unloaded(const struct proc *p, uint64_t id)
{
	unsigned int i;

	for (i = p->nr_unloaded; i > 0; i--) {
		struct jt_method *m = p->unloaded[(p->unloaded_at + i - 1) % JT_UNLOADED_KEPT];

		if (m->agent_id == id)
			return m;
	}
	return NULL;
}

void jt_coll_unloaded_forget(struct proc *p)
{
	while (p->nr_unloaded)
		drop_oldest_unloaded(p);
	p->unloaded_at = 0;
	free(p->unloaded);
	p->unloaded = NULL;
}

/*
 * The method an agent id names, or named until its unload; one that was loaded before
 * recording began gets a stand-in.
 */
static struct jt_method *method_by_id(struct jt_collector *c, struct proc *p, uint64_t id,
				      uint64_t ts)
{
	struct jt_method *m = jt_idmap__get(&p->ids, id);
	char name[48];
	int n;

	if (!m)
		m = find_unloaded(p, id);
	if (m)
		return m;
	c->st.unknown_ids++;
	n = snprintf(name, sizeof(name), "[unknown method %llu]", (unsigned long long)id);
	m = jt_method__new(0, 0, ts, id, JT_SRC_AGENT, name, n);
	if (m)	/* calls need it: charged, never refused */
		jt_membound__charge(c->mem, jt_method__cost(m->name_len));
	if (!m || jt_idmap__put(&p->ids, id, m)) {
		if (m)
			jt_coll_method_let_go(p, m);	/* held by nothing */
		jt_err("out of memory for the methods of pid %u", p->pid);
		return NULL;
	}
	return m;
}

/*
 * An enter or a leave; or (summary mode) a thread's calls of a method summed, or one long
 * call: each under its method's log id.
 */
int jt_coll_on_call(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	bool summed = ev->type == JT_EV_CALL_SUM || ev->type == JT_EV_CALL_SPAN;
	uint64_t id = summed ? ev->sum_of : ev->id;
	/* a method called before is known by its id and defined: the calls' way, by millions */
	struct jt_method *m = id < p->ids.cap ? p->ids.dense[id] : NULL;
	union {
		struct jt_rec_call call;
		struct jt_rec_callsum sum;
		struct jt_rec_span span;
	} rec;
	int err;

	if (!m || !m->log_id) {
		m = method_by_id(c, p, id, ev->ts);
		if (!m)
			return -ENOMEM;
		err = jt_coll_method_define(c, p, m, ev->ts);
		if (err)
			return err;
	}
	if (ev->type == JT_EV_CALL_SUM)
		rec.sum = (struct jt_rec_callsum){
			.h = { .type = JT_REC_CALLSUM, .size = sizeof(rec.sum), .ts = ev->ts },
			.id = m->log_id, .pid = p->pid, .tid = ev->tid, .calls = ev->sum_calls,
			.incl_ns = ev->sum_incl_ns, .excl_ns = ev->sum_excl_ns,
		};
	else if (ev->type == JT_EV_CALL_SPAN)
		rec.span = (struct jt_rec_span){
			.h = { .type = JT_REC_SPAN, .size = sizeof(rec.span), .ts = ev->ts },
			.id = m->log_id, .pid = p->pid, .tid = ev->tid,
			.enter_ts = ev->sum_incl_ns, .self_ns = ev->sum_excl_ns,
		};
	else
		rec.call = (struct jt_rec_call){
			.h = { .type = ev->type == JT_EV_ENTER ? JT_REC_ENTER : JT_REC_LEAVE,
			       .size = sizeof(rec.call), .ts = ev->ts },
			.id = m->log_id, .pid = p->pid, .tid = ev->tid,
		};
	c->st.calls += summed ? 2 * ev->sum_calls : 1;	/* as enters and leaves */
	return jt_sink__emit(&c->sink, &rec.call.h);
}

/* The code is gone: no longer live, nor reachable by its id. Only a method the log already
 * defines needs an unload record. */
int jt_coll_on_unload(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_method *m = jt_idmap__del(&p->ids, ev->id);
	struct jt_rec_call rec;
	int err = 0;

	if (!m) {		/* loaded before we started */
		c->st.unknown_ids++;
		return 0;
	}
	code_remove(p, m, ev->ts);
	if (m->log_id) {
		rec = (struct jt_rec_call){
			.h = { .type = JT_REC_UNLOAD, .size = sizeof(rec), .ts = ev->ts },
			.id = m->log_id, .pid = p->pid, .tid = ev->tid,
		};
		err = jt_sink__emit(&c->sink, &rec.h);
	}
	if (m->agent_id == ev->id && !m->unloaded)
		keep_unloaded(p, m);
	else
		jt_coll_method_let_go(p, m);
	return err;
}
