// SPDX-License-Identifier: GPL-2.0
/*
 * The join. Events arrive in timestamp order, so applying code loads and unloads as they
 * come keeps each process's code map exactly as it was at the time of the next event: a
 * sample is named by the code live at its own time, even when an address is reused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "join/codemap.h"
#include "join/collector.h"
#include "base/hash.h"
#include "join/idmap.h"
#include "join/late.h"
#include "base/membound.h"
#include "host/unwind.h"
#include "join/methods.h"
#include "host/procfs.h"
#include "host/symbols.h"
#include "base/util.h"

#define VMAS_REREAD_NS 1000000000ULL	/* reread /proc/PID/maps on a miss at most this often */
#define CMDLINE_MAX 4096
#define SYM_NAME_MAX 1024	/* longer (demangled) symbol names are cut */
#define SYM_IDX_BITS 24		/* symbols of a file past 16M stay file + offset */

struct proc {
	uint32_t pid;
	struct jt_membound *mem;	/* the collector's: what its methods are charged to */
	size_t perfmap_methods;	/* live methods from its perf map, against the cap */
	bool defined;		/* its proc record is written */
	bool has_agent;		/* it has sent agent events */
	bool vmas_read;
	uint64_t vmas_ts;	/* when /proc/PID/maps was last read */
	char comm[16];
	struct jt_codemap code;
	struct jt_idmap ids;	/* agent id -> struct jt_method */
	struct jt_vmas vmas;
	struct jt_hash syms;	/* module id << SYM_IDX_BITS | symbol index -> log symbol id */
	struct jt_hash lines;	/* method -> struct lines, until the method is defined */
	char *cmdline;		/* from its exec, NULL: read from /proc when needed */
	uint64_t life_ts;	/* its exec, 0: it began before we did */
	struct jt_late late;	/* what a late perf-map line may name */
	struct jt_hash threads;	/* tid -> its name as last written (JT_COMM_LEN bytes) */
};

/*
 * A perf-map line that named code samples had met unnamed, held until every line read
 * with it has been seen: another line for the same addresses among them would say the
 * code there changed while nothing named it, and then neither is written as late.
 */
struct pending_late {
	uint32_t pid;
	struct jt_method *m;	/* held (late_pending) until written or given up */
	uint64_t from_ts;
	uint64_t ts;		/* the line's */
};

#define PENDING_LATE_MAX 4096

/* A method's source lines, as its JT_REC_LINES carries them after the fixed part. */
struct lines {
	uint16_t nr_lines;
	uint16_t names_len;
	uint32_t bytes;		/* of payload */
	char payload[];		/* nr_lines struct jt_line, then the names */
};

struct jt_collector {
	const char *proc_root;
	size_t max_perfmap_methods;
	struct jt_sink sink;
	struct jt_hash procs;	/* pid -> struct proc */
	struct jt_methods methods;
	struct jt_symbols *symbols;
	struct jt_membound *mem;
	bool own_symbols;	/* symbols is ours to free */
	struct jt_hash ksyms;	/* kallsyms index -> log symbol id */
	uint64_t next_module_id;
	uint64_t next_symbol_id;
	struct jt_collector_stats st;
	struct pending_late *pending;	/* in ts order */
	size_t nr_pending;
	union {			/* a sample or off-CPU record is built here, frames in place */
		struct jt_rec_offcpu off;
		char bytes[sizeof(struct jt_rec_offcpu) +
			   (2 * JT_MAX_FRAMES + 1) * sizeof(struct jt_frame)];
	} sample;
};

struct jt_collector *jt_collector__new(const struct jt_collector_opts *o,
				       const struct jt_sink *sink)
{
	struct jt_collector *c = calloc(1, sizeof(*c));

	if (!c) {
		jt_err("out of memory");
		return NULL;
	}
	c->proc_root = o->proc_root ? o->proc_root : "/proc";
	c->max_perfmap_methods = o->max_perfmap_methods ?: JT_PERFMAP_METHODS_MAX;
	c->sink = *sink;
	c->next_module_id = 1;
	c->next_symbol_id = 1;
	c->symbols = o->symbols;
	c->mem = o->mem;
	if (!c->symbols) {
		c->symbols = jt_symbols__new(c->proc_root);
		c->own_symbols = true;
	}
	if (!c->symbols) {
		free(c);
		return NULL;
	}
	return c;
}

/*
 * A process owns its methods; its code map (what is live at each address), its id map
 * (what each agent id names) and a late name waiting to be written only borrow them. Once
 * none holds one, nothing can name it any more and the process lets it go: here, the one
 * place a method is freed.
 */
static bool in_ids(const struct proc *p, const struct jt_method *m)
{
	return m->agent_id && jt_idmap__get(&p->ids, m->agent_id) == m;
}

static void method_let_go(struct proc *p, struct jt_method *m)
{
	if (in_ids(p, m) || jt_codemap__holds(&p->code, m) || m->late_pending)
		return;
	if (m->has_lines)
		free(jt_hash__del(&p->lines, (uintptr_t)m));
	jt_membound__give(p->mem, jt_method__cost(m->name_len));
	free(m);
}

/* What taking methods out of a process's code map did. */
struct evict_ctx {
	struct proc *p;
	size_t evicted;
	uint64_t ts;		/* when, 0: the process's code is forgotten whole */
};

static void on_evict(void *ctx, struct jt_method *m)
{
	struct evict_ctx *e = ctx;

	e->evicted++;
	if (m->src == JT_SRC_PERFMAP)
		e->p->perfmap_methods--;
	if (e->ts)
		jt_late__gone(&e->p->late, m->start, m->size, e->ts);
	method_let_go(e->p, m);
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

static void threads_fini(struct proc *p)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&p->threads, &pos, &key, &val))
		free(val);
	jt_hash__fini(&p->threads);
}

/* Forget a process's code: at exec (a new image) and at exit. */
static void proc_reset(struct proc *p)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	struct evict_ctx e = { .p = p };

	struct jt_idmap ids;

	/* what is live goes first (those an id still names stay), then what ids name */
	jt_codemap__clear(&p->code, on_evict, &e);
	ids = p->ids;
	p->ids = (struct jt_idmap){ 0 };
	while (jt_idmap__next(&ids, &pos, &key, &val))
		method_let_go(p, val);
	jt_idmap__fini(&ids);
	jt_hash__fini(&p->lines);	/* emptied as its methods went */
	jt_late__fini(&p->late);
	threads_fini(p);
	jt_hash__fini(&p->syms);
	jt_vmas__free(&p->vmas);
	p->vmas_read = false;
	p->has_agent = false;
	free(p->cmdline);
	p->cmdline = NULL;
}

static void proc_free(struct proc *p)
{
	proc_reset(p);
	free(p);
}

static void late_release(struct jt_collector *c, const struct pending_late *l);

void jt_collector__free(struct jt_collector *c)
{
	size_t pos = 0, i;
	uint64_t key;
	void *val;

	if (!c)
		return;
	for (i = 0; i < c->nr_pending; i++)	/* not written: a stop on an error */
		late_release(c, &c->pending[i]);
	free(c->pending);
	while (jt_hash__next(&c->procs, &pos, &key, &val))
		proc_free(val);
	jt_hash__fini(&c->procs);
	jt_hash__fini(&c->ksyms);
	if (c->own_symbols)
		jt_symbols__free(c->symbols);
	free(c);
}

static struct proc *proc_get(struct jt_collector *c, uint32_t pid)
{
	struct proc *p = jt_hash__get_new(&c->procs, pid, sizeof(*p), NULL);

	if (!p) {
		jt_err("out of memory");
		return NULL;
	}
	p->pid = pid;
	p->mem = c->mem;
	return p;
}

static void set_comm(struct proc *p, const char *comm)
{
	memcpy(p->comm, comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = 0;
}

/* The process's identity, written once before anything of it that needs a name. */
static int proc_define(struct jt_collector *c, struct proc *p, uint64_t ts)
{
	union {
		struct jt_rec_proc rec;
		char bytes[sizeof(struct jt_rec_proc) + CMDLINE_MAX + 8];
	} u;
	int n;
	size_t size;

	if (p->defined)
		return 0;
	if (p->cmdline) {	/* what its exec said: it may be gone by now */
		n = strnlen(p->cmdline, CMDLINE_MAX - 1);
		memcpy(u.rec.cmdline, p->cmdline, n);
	} else {
		n = jt_procfs__read_cmdline(c->proc_root, p->pid, u.rec.cmdline, CMDLINE_MAX);
	}
	if (n < 0)
		n = 0;
	if (!p->comm[0])
		jt_procfs__read_comm(c->proc_root, p->pid, p->comm);
	size = jt_round8(sizeof(u.rec) + n);
	memset(u.rec.cmdline + n, 0, size - sizeof(u.rec) - n);
	u.rec.h = (struct jt_rec_hdr){ .type = JT_REC_PROC, .size = size, .ts = ts };
	u.rec.pid = p->pid;
	u.rec.cmdline_len = n;
	u.rec.reserved = 0;
	memcpy(u.rec.comm, p->comm, sizeof(u.rec.comm));
	p->defined = true;
	return jt_sink__emit(&c->sink, &u.rec.h);
}

/* Write m's source lines, m being defined. */
static int lines_define(struct jt_collector *c, struct proc *p, struct jt_method *m,
			const struct lines *l, uint64_t ts)
{
	size_t size = jt_round8(sizeof(struct jt_rec_lines) + l->bytes);
	struct jt_rec_lines *rec = calloc(1, size);
	int err;

	if (!rec) {
		jt_err("out of memory for the source lines of pid %u", p->pid);
		return -ENOMEM;
	}
	rec->h = (struct jt_rec_hdr){ .type = JT_REC_LINES, .size = size, .ts = ts };
	rec->method = m->log_id;
	rec->pid = p->pid;
	rec->nr_lines = l->nr_lines;
	rec->names_len = l->names_len;
	memcpy(rec->lines, l->payload, l->bytes);
	err = jt_sink__emit(&c->sink, &rec->h);
	free(rec);
	return err;
}

static int method_define(struct jt_collector *c, struct proc *p, struct jt_method *m,
			 uint64_t ts)
{
	struct lines *l;
	int err;

	if (m->log_id)
		return 0;
	err = proc_define(c, p, ts);
	err = err ?: jt_methods__define(&c->methods, m, p->pid, ts, &c->sink);
	if (!err)
		c->st.methods = c->methods.defined;
	if (err || !m->has_lines)
		return err;
	/* its lines follow the definition at once: nothing can reference them before */
	l = jt_hash__del(&p->lines, (uintptr_t)m);
	m->has_lines = false;
	err = l ? lines_define(c, p, m, l, ts) : 0;
	free(l);
	return err;
}

/* A method's source lines (jitdump debug info): kept until it is defined, or written now. */
static int on_code_lines(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_method *m = jt_idmap__get(&p->ids, ev->lines_of);
	size_t bytes = (size_t)ev->nr_lines * sizeof(struct jt_line) + ev->names_len;
	struct lines *l;

	if (!m || !ev->nr_lines || ev->nr_lines > JT_LINES_MAX ||
	    ev->names_len > JT_LINES_NAMES_MAX || JT_EVENT_FIXED + bytes > ev->len)
		return 0;	/* lines of code we do not know, or not lines at all */
	l = malloc(sizeof(*l) + bytes);
	if (!l)
		goto oom;
	*l = (struct lines){ .nr_lines = ev->nr_lines, .names_len = ev->names_len,
			     .bytes = bytes };
	memcpy(l->payload, ev->tail, bytes);
	if (m->log_id) {	/* already defined: its lines come now */
		int err = lines_define(c, p, m, l, ev->ts);

		free(l);
		return err;
	}
	if (m->has_lines)
		free(jt_hash__del(&p->lines, (uintptr_t)m));
	if (jt_hash__put(&p->lines, (uintptr_t)m, l)) {
		free(l);
		goto oom;
	}
	m->has_lines = true;
	return 0;
oom:
	jt_err("out of memory for the source lines of pid %u", p->pid);
	return -ENOMEM;
}

/* Code to make live: from a code-load event, or a parent's code copied at a fork. */
struct code {
	uint64_t ts, id, start, size;
	uint32_t unsure_us;	/* its time is known only to (ts, ts + this] */
	uint8_t src;
	const char *name;
	uint32_t name_len;
};

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
static int add_code(struct jt_collector *c, struct proc *p, const struct code *k)
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
	live = jt_codemap__insert(&p->code, m, on_evict, &e);
	if (!live) {
		method_let_go(p, m);	/* held by nothing yet */
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
		method_let_go(p, m);	/* held by nothing */
		if (!k->id || in_ids(p, live))
			return 0;
		live->agent_id = k->id;
		m = live;
	}
	if (k->id && k->src != JT_SRC_PERFMAP) {
		old = jt_idmap__get(&p->ids, k->id);
		if (jt_idmap__put(&p->ids, k->id, m)) {
			code_remove(p, m, k->ts);
			method_let_go(p, m);
			goto oom;
		}
		if (old && old != m)	/* an id reused without unload: the old one is gone */
			method_let_go(p, old);
	}
	method_let_go(p, m);	/* size 0 and no id: nothing can name it */
	return 0;
oom:
	jt_err("out of memory for the methods of pid %u", p->pid);
	return -ENOMEM;
}

/* ---- late names: perf-map lines that appear after samples met their code ---- */

/* Let a pending late name's method go: written or given up. */
static void late_release(struct jt_collector *c, const struct pending_late *l)
{
	struct proc *p = jt_hash__get(&c->procs, l->pid);

	l->m->late_pending = false;
	if (p)
		method_let_go(p, l->m);
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
	err = method_define(c, p, l->m, l->ts);
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
static int late_flush(struct jt_collector *c, uint64_t ts, uint32_t pid)
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
		late_release(c, l);
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
		late_release(c, l);
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

static int on_code_load(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
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
	err = add_code(c, p, &k);
	if (err || !late)
		return err;
	m = jt_codemap__find(&p->code, k.start);
	if (!m || m->start != k.start || m->size != k.size)
		return 0;
	return late_hold(c, p, m, from, ev->ts);
}

/* Code that moved (jitdump): live at its new address, under the same id and name. */
static int on_code_move(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
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
	return add_code(c, p, &k);
}

/* The method an agent id names; one that was loaded before recording began gets a stand-in. */
static struct jt_method *method_by_id(struct jt_collector *c, struct proc *p, uint64_t id,
				      uint64_t ts)
{
	struct jt_method *m = jt_idmap__get(&p->ids, id);
	char name[48];
	int n;

	if (m)
		return m;
	c->st.unknown_ids++;
	n = snprintf(name, sizeof(name), "[unknown method %llu]", (unsigned long long)id);
	m = jt_method__new(0, 0, ts, id, JT_SRC_AGENT, name, n);
	if (m)	/* calls need it: charged, never refused */
		jt_membound__charge(c->mem, jt_method__cost(m->name_len));
	if (!m || jt_idmap__put(&p->ids, id, m)) {
		if (m)
			method_let_go(p, m);	/* held by nothing */
		jt_err("out of memory for the methods of pid %u", p->pid);
		return NULL;
	}
	return m;
}

static int on_call(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_rec_call rec;
	struct jt_method *m = method_by_id(c, p, ev->id, ev->ts);
	int err;

	if (!m)
		return -ENOMEM;
	err = method_define(c, p, m, ev->ts);
	if (err)
		return err;
	rec = (struct jt_rec_call){
		.h = { .type = ev->type == JT_EV_ENTER ? JT_REC_ENTER : JT_REC_LEAVE,
		       .size = sizeof(rec), .ts = ev->ts },
		.id = m->log_id, .pid = p->pid, .tid = ev->tid,
	};
	c->st.calls++;
	return jt_sink__emit(&c->sink, &rec.h);
}

/* The code is gone: no longer live, nor reachable by its id. Only a method the log already
 * defines needs an unload record. */
static int on_unload(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
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
	method_let_go(p, m);
	return err;
}

/*
 * What anonymous executable memory is called in the log: a known runtime's JIT code by
 * the runtime, any other process's as such. A frame there nothing named stays its address
 * (a late perf-map line may yet name it) and is shown by this name.
 */
static const char *anon_name(const char *comm)
{
	static const char *const runtimes[][2] = {
		{ "java", "[java jit]" }, { "node", "[node jit]" }, { "mono", "[mono jit]" },
		{ "mono-sgen", "[mono jit]" }, { "dotnet", "[dotnet jit]" },
		{ "beam.smp", "[beam jit]" },
	};
	size_t i;

	for (i = 0; i < JT_ARRAY_SIZE(runtimes); i++)
		if (!strcmp(comm, runtimes[i][0]))
			return runtimes[i][1];
	return "[anon exec]";
}

static int module_define(struct jt_collector *c, struct proc *p, struct jt_vma *vma,
			 uint64_t ts)
{
	union {
		struct jt_rec_module rec;
		char bytes[sizeof(struct jt_rec_module) + 4096 + 8];
	} u;
	const char *path = vma->path;
	size_t len, size;
	int err;

	if (vma->module_id)
		return 0;
	err = proc_define(c, p, ts);
	if (err)
		return err;
	if (!path[0])
		path = anon_name(p->comm);
	len = strlen(path);
	if (len > 4096)
		len = 4096;
	size = jt_round8(sizeof(u.rec) + len);
	memset(u.bytes + size - 8, 0, 8);
	u.rec = (struct jt_rec_module){
		.h = { .type = JT_REC_MODULE, .size = size, .ts = ts },
		.id = c->next_module_id, .start = vma->start, .end = vma->end,
		.pgoff = vma->pgoff, .pid = p->pid, .path_len = len,
	};
	memcpy(u.rec.path, path, len);
	err = jt_sink__emit(&c->sink, &u.rec.h);
	if (!err)
		vma->module_id = c->next_module_id++;
	return err;
}

/* Reread /proc/PID/maps; mappings that did not change keep their module ids. */
static void reread_vmas(struct jt_collector *c, struct proc *p)
{
	struct jt_vmas fresh = { 0 };
	size_t i;

	if (jt_procfs__read_maps(c->proc_root, p->pid, &fresh))
		return;
	for (i = 0; i < fresh.n; i++) {
		struct jt_vma *n = &fresh.v[i], *o = jt_vmas__find(&p->vmas, n->start);

		if (o && o->start == n->start && o->end == n->end && o->pgoff == n->pgoff &&
		    !strcmp(o->path, n->path)) {
			n->module_id = o->module_id;
			n->file = o->file;
			n->syms_looked = o->syms_looked;
		}
	}
	jt_vmas__free(&p->vmas);
	p->vmas = fresh;
}

static struct jt_vma *find_vma(struct jt_collector *c, struct proc *p, uint64_t addr,
			       uint64_t ts)
{
	struct jt_vma *vma;

	if (!p->vmas_read) {
		p->vmas_read = true;
		p->vmas_ts = ts;
		reread_vmas(c, p);
	}
	vma = jt_vmas__find(&p->vmas, addr);
	if (!vma && ts - p->vmas_ts > VMAS_REREAD_NS) {	/* a library loaded since? */
		p->vmas_ts = ts;
		reread_vmas(c, p);
		vma = jt_vmas__find(&p->vmas, addr);
	}
	return vma;
}

/* Write a symbol record; *id gets its log id. pid and module are 0 for the kernel. */
static int symbol_define(struct jt_collector *c, uint32_t pid, uint64_t module,
			 uint64_t start, uint64_t size, const char *raw, uint64_t ts,
			 uint64_t *id)
{
	union {
		struct jt_rec_symbol rec;
		char bytes[sizeof(struct jt_rec_symbol) + SYM_NAME_MAX + 8];
	} u;
	char buf[SYM_NAME_MAX + 1];
	const char *name = jt_symbols__demangle(c->symbols, raw, buf, sizeof(buf));
	size_t len = strnlen(name, SYM_NAME_MAX), sz = jt_round8(sizeof(u.rec) + len);
	int err;

	memset(u.bytes + sz - 8, 0, 8);
	u.rec = (struct jt_rec_symbol){
		.h = { .type = JT_REC_SYMBOL, .size = sz, .ts = ts },
		.id = c->next_symbol_id, .module = module, .start = start, .size = size,
		.pid = pid, .name_len = len,
	};
	memcpy(u.rec.name, name, len);
	err = jt_sink__emit(&c->sink, &u.rec.h);
	if (!err)
		*id = c->next_symbol_id++;
	return err;
}

/* vma's file, looked up at its first use. */
static void file_look(struct jt_collector *c, struct proc *p, struct jt_vma *vma)
{
	if (vma->syms_looked)
		return;
	vma->syms_looked = true;
	if (!strcmp(vma->path, "[vdso]"))
		vma->file = jt_symbols__vdso(c->symbols);
	else
		vma->file = jt_symbols__file(c->symbols, p->pid, vma->start, vma->end);
}

/*
 * Name the native frame at file offset off of vma from the file's symbols: *f becomes a
 * symbol frame, defined (after its module) at first use. Leaves *f as it is if the file
 * has no symbol there.
 */
static int native_symbol(struct jt_collector *c, struct proc *p, struct jt_vma *vma,
			 uint64_t off, bool leaf, uint64_t ts, struct jt_frame *f)
{
	const struct jt_sym *sym;
	uint64_t key, id;
	size_t idx;
	int err;

	file_look(c, p, vma);
	if (!vma->file || !vma->file->syms)
		return 0;
	/* a return address may be just past its function: look up the call instead */
	sym = jt_elfsyms__find(vma->file->syms, leaf ? off : off - 1, &idx);
	if (!sym || idx >> SYM_IDX_BITS)
		return 0;
	key = vma->module_id << SYM_IDX_BITS | idx;
	id = (uintptr_t)jt_hash__get(&p->syms, key);
	if (!id) {
		err = symbol_define(c, p->pid, vma->module_id, sym->start, sym->size, sym->name,
				    ts, &id);
		if (!err && jt_hash__put(&p->syms, key, (void *)(uintptr_t)id))
			err = -ENOMEM;
		if (err)
			return err;
	}
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_SYMBOL, id), off - sym->start };
	return 0;
}

static int kernel_frame(struct jt_collector *c, uint64_t ip, bool leaf, uint64_t ts,
			struct jt_frame *f)
{
	const struct jt_kallsyms *k = jt_symbols__kernel(c->symbols);
	const struct jt_ksym *sym, *next;
	uint64_t id;
	size_t idx;
	int err;

	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_KERNEL, 0), ip };
	sym = k ? jt_kallsyms__find(k, leaf ? ip : ip - 1, &idx) : NULL;
	if (!sym)
		return 0;
	id = (uintptr_t)jt_hash__get(&c->ksyms, idx + 1);
	if (!id) {
		next = sym + 1;	/* find() never returns the last symbol */
		err = symbol_define(c, 0, 0, sym->addr, next->addr - sym->addr, sym->name, ts,
				    &id);
		if (!err && jt_hash__put(&c->ksyms, idx + 1, (void *)(uintptr_t)id))
			err = -ENOMEM;
		if (err)
			return err;
	}
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_SYMBOL, id), ip - sym->addr };
	return 0;
}

/*
 * A leaf the sampler found in a page the kernel runs uprobes from: a frame of that
 * mapping, by its name, whether or not /proc still shows it.
 */
static int uprobes_frame(struct jt_collector *c, struct proc *p, uint64_t ip, const char *name,
			 uint64_t ts, struct jt_frame *f)
{
	uint64_t page = ip & ~4095ULL;
	struct jt_vma *vma = jt_vmas__find(&p->vmas, ip);
	int err;

	if (!vma || strcmp(vma->path, name)) {
		vma = jt_vmas__add(&p->vmas, page, page + 4096, 0, name);
		if (!vma) {
			jt_err("out of memory");
			return -ENOMEM;
		}
		vma->syms_looked = true;
	}
	err = module_define(c, p, vma, ts);
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_MODULE, vma->module_id), ip - vma->start };
	return err;
}

#define FRAME_NOWHERE 1	/* user_frame: a caller's address in no code the process has */

/*
 * A user frame into f, named as of ts. Returns 0, a negative error, or FRAME_NOWHERE (f
 * untouched): a caller's address (not the leaf, which ran) in no executable mapping and no
 * JIT code of a process whose mappings are known cannot be a return address. A frame-pointer
 * walk went astray there, through code that keeps data in rbp, and what follows is noise.
 */
static int user_frame(struct jt_collector *c, struct proc *p, uint64_t ip, bool leaf,
		      uint64_t ts, struct jt_frame *f)
{
	/* a return address may be just past its function: look up the call instead */
	uint64_t at = leaf ? ip : ip - 1;
	struct jt_method *m = jt_codemap__find(&p->code, at);
	struct jt_vma *vma;
	int err;

	if (m && m->unsure_us && ts < m->load_ts + m->unsure_us * 1000ULL) {
		c->st.unsure_frames++;	/* this code, or what it replaced: not known */
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 0), ip };
		return 0;
	}
	if (m) {
		err = method_define(c, p, m, ts);
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_METHOD, m->log_id), ip - m->start };
		return err;
	}
	vma = find_vma(c, p, at, ts);
	if (vma && !vma->path[0]) {	/* anonymous: a bare address, in a named place */
		jt_late__unnamed(&p->late, at, ts);	/* a line read later may name it */
		err = module_define(c, p, vma, ts);
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, vma->module_id), ip };
		return err;
	}
	if (vma) {
		uint64_t off = ip - vma->start + vma->pgoff;

		err = module_define(c, p, vma, ts);
		if (err)
			return err;
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_MODULE, vma->module_id), off };
		return native_symbol(c, p, vma, off, leaf, ts, f);
	}
	if (!leaf && p->vmas.n)
		return FRAME_NOWHERE;
	jt_late__unnamed(&p->late, at, ts);	/* a line read later may name it */
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 0), ip };
	return 0;
}

#define USER_MIN 4096ULL			/* below: no code is ever mapped there */
#define USER_END 0x0000800000000000ULL	/* x86-64 user space ends here, */
#define VSYSCALL 0xffffffffff600000ULL	/* but for the legacy vsyscall page */
#define LOOP_PERIOD_MAX 8		/* the longest repeating run of callers looked for */

/*
 * How many of a sample's user frames to keep. A frame-pointer chain that reaches an address
 * no user code can have is cut there (one that reaches memory that holds no code of the
 * process, as user_frame finds, is cut as its frames are named). One that loops runs until the kernel stops walking
 * it, at JT_MAX_FRAMES: when such a full stack ends in a run of callers repeated at least
 * three times, one turn of it is kept (a recursion deeper than the walk is cut alike: its
 * bottom was not seen either). *cut says whether anything was cut.
 */
static unsigned int user_frames_kept(const uint64_t *ips, unsigned int n, bool *cut)
{
	unsigned int i, period, start;

	*cut = false;
	for (i = 0; i < n && ips[i]; i++)
		if (ips[i] < USER_MIN || (ips[i] >= USER_END && ips[i] - VSYSCALL >= 4096)) {
			*cut = true;
			return i;
		}
	if (i < JT_MAX_FRAMES)
		return i;
	for (period = 1; period <= LOOP_PERIOD_MAX; period++) {
		for (start = n - period; start > 0 && ips[start - 1] == ips[start - 1 + period];
		     start--)
			;
		if (n - start >= 3 * period) {
			*cut = true;
			return start + period;
		}
	}
	return n;
}

/* The sampled thread's name, written when first seen and whenever it changes. */
static int thread_define(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	char *name = jt_hash__get(&p->threads, ev->tid);
	struct jt_rec_thread rec;

	if (!ev->thread[0] || (name && !memcmp(name, ev->thread, JT_COMM_LEN)))
		return 0;	/* nothing said (a crafted record), or nothing new */
	if (!name) {
		name = malloc(JT_COMM_LEN);
		if (!name || jt_hash__put(&p->threads, ev->tid, name)) {
			free(name);
			jt_err("out of memory");
			return -ENOMEM;
		}
	}
	memcpy(name, ev->thread, JT_COMM_LEN);
	rec = (struct jt_rec_thread){
		.h = { .type = JT_REC_THREAD, .size = sizeof(rec), .ts = ev->ts },
		.pid = p->pid, .tid = ev->tid,
	};
	memcpy(rec.comm, name, JT_COMM_LEN);
	c->st.threads++;
	return jt_sink__emit(&c->sink, &rec.h);
}

/* What the unwinder asks of a process: where code at an address is, and its unwind table. */
struct unwind_ctx {
	struct jt_collector *c;
	struct proc *p;
	uint64_t ts;
};

static bool unwind_find(void *ctx, uint64_t ip, const struct jt_cfi **cfi, uint64_t *off)
{
	struct unwind_ctx *u = ctx;
	struct jt_vma *vma;

	*cfi = NULL;
	*off = 0;
	if (ip < USER_MIN || ip >= USER_END)
		return false;
	vma = find_vma(u->c, u->p, ip, u->ts);
	if (vma && vma->path[0]) {	/* a file: its table, if it has one */
		file_look(u->c, u->p, vma);
		*cfi = vma->file ? vma->file->cfi : NULL;
		*off = ip - vma->start + vma->pgoff;
	}
	return true;	/* JIT code, or memory nothing names: frame pointers */
}

/*
 * An off-CPU stack's user frames into out: unwound through the copy of its stack by the
 * code's unwind tables (the C library, built without frame pointers, is where a thread
 * blocks), the kernel's frame-pointer walk spliced on where the copy ends.
 */
static unsigned int offcpu_user_ips(struct jt_collector *c, struct proc *p,
				    const struct jt_event *ev, uint64_t *out)
{
	const uint64_t *fp = jt_event__ips(ev) + ev->nr_kernel;
	struct unwind_ctx u = { c, p, ev->ts };
	struct jt_unwind_regs regs = { fp[0], ev->off_sp, ev->off_bp };
	uint64_t ips[JT_MAX_FRAMES];
	enum jt_unwind_end end;
	unsigned int n;

	n = jt_unwind(&regs, jt_event__stack(ev), ev->off_sp, ev->off_stack_len, unwind_find,
		      &u, ips, JT_MAX_FRAMES, &end);
	return jt_unwind__splice(ips, n, end, fp, ev->nr_user, out, JT_MAX_FRAMES);
}

/*
 * How many of an off-CPU kernel stack's leaf frames are the tracing that took it (the
 * tracepoint's iterator, bpf_trace_run, jitrace's own program), not the thread's: they go.
 */
static unsigned int tracing_frames(struct jt_collector *c, const uint64_t *ips, unsigned int n)
{
	static const char *const tracing[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
					       "__bpf_trace_" };
	const struct jt_kallsyms *k = jt_symbols__kernel(c->symbols);
	unsigned int i, j;
	size_t idx;

	for (i = 0; k && i < n && i < 4; i++) {
		const struct jt_ksym *sym = jt_kallsyms__find(k, ips[i], &idx);

		for (j = 0; sym && j < JT_ARRAY_SIZE(tracing); j++)
			if (!strncmp(sym->name, tracing[j], strlen(tracing[j])))
				break;
		if (!sym || j == JT_ARRAY_SIZE(tracing))
			break;
	}
	return i;
}

/*
 * A sample's (or off-CPU record's) stack into rec: its frames named as of ev->ts, the process
 * and thread defined before it.
 */
static int stack_build(struct jt_collector *c, struct proc *p, const struct jt_event *ev,
		       struct jt_rec_sample *rec)
{
	struct jt_frame *f = rec->frames;
	const uint64_t *ips = jt_event__ips(ev), *uips = ips + ev->nr_kernel;
	unsigned int i, n = 0, nr_user = ev->nr_user, kept;
	uint64_t unwound[JT_MAX_FRAMES];
	bool cut;
	int err;

	i = ev->type == JT_EV_OFFCPU ? tracing_frames(c, ips, ev->nr_kernel) : 0;
	for (; i < ev->nr_kernel; i++, n++) {
		err = kernel_frame(c, ips[i], n == 0, ev->ts, &f[n]);
		if (err)
			return err;
	}
	if (ev->type == JT_EV_OFFCPU && ev->off_stack_len && nr_user) {
		nr_user = offcpu_user_ips(c, p, ev, unwound);
		uips = unwound;
	}
	kept = user_frames_kept(uips, nr_user, &cut);
	for (i = 0; i < kept; i++, n++) {
		uint64_t ip = uips[i];

		if (i == 0 && (ev->flags & JT_EVENT_LEAF_XOL))
			err = uprobes_frame(c, p, ip, "[uprobes]", ev->ts, &f[n]);
		else if (i == 0 && (ev->flags & JT_EVENT_LEAF_TRAMP))
			err = uprobes_frame(c, p, ip, "[uprobes-trampoline]", ev->ts, &f[n]);
		else
			err = user_frame(c, p, ip, i == 0, ev->ts, &f[n]);
		if (err == FRAME_NOWHERE) {
			kept = i;
			cut = true;
			break;
		}
		if (err)
			return err;
	}
	if (cut) {
		c->st.broken_stacks++;
		f[n++] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_TRUNCATED, 0), nr_user - kept };
	}
	/*
	 * A process neither an exec nor /proc named (gone before its samples were joined, or
	 * sampled after its exit record, running on in the kernel): the sampled thread's name
	 * stands for it, the program's name unless the thread renamed itself.
	 */
	if (!p->defined && !p->comm[0]) {
		jt_procfs__read_comm(c->proc_root, p->pid, p->comm);
		if (!p->comm[0] && ev->thread[0])
			set_comm(p, ev->thread);
	}
	err = proc_define(c, p, ev->ts);
	err = err ?: thread_define(c, p, ev);
	if (err)
		return err;
	rec->h = (struct jt_rec_hdr){ .type = JT_REC_SAMPLE,
				      .size = sizeof(*rec) + n * sizeof(*f), .ts = ev->ts };
	rec->pid = p->pid;
	rec->tid = ev->tid;
	rec->cpu = ev->cpu;
	rec->nr_frames = n;
	rec->reserved = 0;
	return 0;
}

static int on_sample(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_rec_sample *rec = &c->sample.off.smp;
	int err = stack_build(c, p, ev, rec);

	if (err)
		return err;
	c->st.samples++;
	return jt_sink__emit(&c->sink, &rec->h);
}

/*
 * A thread ran again after time off the CPU. Its stack is named as of now: the thread
 * returns into the code its frames hold, so that code was live all the while it waited.
 */
static int on_offcpu(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_rec_offcpu *rec = &c->sample.off;
	int err = stack_build(c, p, ev, &rec->smp);

	if (err)
		return err;
	rec->smp.h.ts = ev->off_left_ts;
	rec->h = (struct jt_rec_hdr){ .type = JT_REC_OFFCPU,
				      .size = offsetof(struct jt_rec_offcpu, smp) + rec->smp.h.size,
				      .ts = ev->ts };
	rec->off_ns = ev->off_ns;
	rec->count = ev->off_count;
	rec->state = ev->off_state;
	rec->reserved = 0;
	c->st.offcpu++;
	c->st.offcpu_ns += ev->off_ns;
	return jt_sink__emit(&c->sink, &rec->h);
}

static int on_exec(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	union {
		struct jt_rec_exec rec;
		char bytes[sizeof(struct jt_rec_exec) + JT_PATH_MAX + 8];
	} u;
	size_t size = jt_round8(sizeof(u.rec) + ev->str_len);

	proc_reset(p);		/* a new image: the old code is gone */
	p->life_ts = ev->ts;
	set_comm(p, ev->comm);
	p->defined = false;	/* its command line changed: say it again when it matters */
	if (ev->args_len)
		p->cmdline = strdup(jt_event__args(ev));	/* NULL: read from /proc */
	memset(u.bytes + size - 8, 0, 8);
	u.rec = (struct jt_rec_exec){
		.h = { .type = JT_REC_EXEC, .size = size, .ts = ev->ts },
		.pid = p->pid, .path_len = ev->str_len,
	};
	memcpy(u.rec.comm, p->comm, sizeof(u.rec.comm));
	memcpy(u.rec.path, jt_event__str(ev), ev->str_len);
	return jt_sink__emit(&c->sink, &u.rec.h);
}

static int on_exit_ev(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_rec_exit rec = {
		.h = { .type = JT_REC_EXIT, .size = sizeof(rec), .ts = ev->ts },
		.pid = p->pid,
	};

	jt_hash__del(&c->procs, p->pid);
	proc_free(p);
	return jt_sink__emit(&c->sink, &rec.h);
}

/*
 * An executable file mapped as it happened: the process's native frames are named from it
 * even when it is gone before they are joined. The file's symbols were read as the event
 * arrived (jt_symbols__mapped, from the pipeline); here they are looked up, and read only
 * if nothing read them before (a collector fed without the pipeline).
 */
static int on_mmap(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_vma *vma = jt_vmas__add(&p->vmas, ev->map_start, ev->map_end, ev->map_pgoff,
					  jt_event__str(ev));

	if (!vma) {
		jt_err("out of memory");
		return -ENOMEM;
	}
	if (ev->map_ino && !jt_symbols__known(c->symbols, ev, &vma->file))
		vma->file = jt_symbols__mapped(c->symbols, p->pid, ev);	/* not read yet */
	else if (!strcmp(vma->path, "[vdso]"))
		vma->file = jt_symbols__vdso(c->symbols);
	vma->syms_looked = true;
	p->vmas_read = true;	/* a miss still reads /proc, at most once a second */
	c->st.mmaps++;
	return 0;
}

/*
 * A forked child runs its parent's code until it execs: give it copies of the live ranges
 * and of the mapped files.
 */
static int on_fork(struct jt_collector *c, struct proc *parent, const struct jt_event *ev)
{
	struct proc *child = jt_hash__del(&c->procs, ev->child_pid);
	size_t i;

	if (child)		/* a stale pid (its exit was lost): start afresh */
		proc_free(child);
	if (parent->code.n == 0 && !parent->vmas.n)
		return 0;
	child = proc_get(c, ev->child_pid);
	if (!child)
		return -ENOMEM;
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	child->has_agent = parent->has_agent;
	if (jt_vmas__copy(&child->vmas, &parent->vmas)) {
		jt_err("out of memory");
		return -ENOMEM;
	}
	child->vmas_read = parent->vmas_read;
	child->vmas_ts = parent->vmas_ts;
	child->life_ts = parent->life_ts;
	for (i = 0; i < parent->code.n; i++) {
		struct jt_method *pm = parent->code.v[i];
		struct code k = {
			.ts = ev->ts, .start = pm->start, .size = pm->size,
			.id = in_ids(parent, pm) ? pm->agent_id : 0, .src = pm->src,
			.name = pm->name, .name_len = pm->name_len,
		};
		int err = add_code(c, child, &k);

		if (err)
			return err;
	}
	return 0;
}

int jt_collector__event(struct jt_collector *c, const struct jt_event *ev)
{
	struct proc *p = proc_get(c, ev->pid);

	if (!p)
		return -ENOMEM;
	c->st.events++;
	/* the lines read with a late one are all in once time moves on (or the process goes) */
	if (c->nr_pending && (c->pending[0].ts < ev->ts || ev->type == JT_EV_EXEC ||
			      ev->type == JT_EV_EXIT)) {
		int err = late_flush(c, ev->ts, ev->type == JT_EV_EXEC ||
					     ev->type == JT_EV_EXIT ? ev->pid : 0);

		if (err)
			return err;
	}
	switch (ev->type) {
	case JT_EV_CODE_LOAD:
		return on_code_load(c, p, ev);
	case JT_EV_CODE_UNLOAD:
		return on_unload(c, p, ev);
	case JT_EV_CODE_MOVE:
		return on_code_move(c, p, ev);
	case JT_EV_CODE_LINES:
		return on_code_lines(c, p, ev);
	case JT_EV_ENTER:
	case JT_EV_LEAVE:
		return on_call(c, p, ev);
	case JT_EV_SAMPLE:
		return on_sample(c, p, ev);
	case JT_EV_OFFCPU:
		return on_offcpu(c, p, ev);
	case JT_EV_EXEC:
		return on_exec(c, p, ev);
	case JT_EV_EXIT:
		return on_exit_ev(c, p, ev);
	case JT_EV_FORK:
		return on_fork(c, p, ev);
	case JT_EV_MMAP:
		return on_mmap(c, p, ev);
	default:
		return 0;
	}
}

int jt_collector__flush(struct jt_collector *c)
{
	return late_flush(c, UINT64_MAX, 0);
}

int jt_collector__drop(struct jt_collector *c, unsigned int what, uint64_t count, uint64_t ts)
{
	struct jt_rec_drop rec = {
		.h = { .type = JT_REC_DROP, .size = sizeof(rec), .ts = ts },
		.what = what, .count = count,
	};

	return jt_sink__emit(&c->sink, &rec.h);
}

bool jt_collector__has_agent(const struct jt_collector *c, uint32_t pid)
{
	const struct proc *p = jt_hash__get(&c->procs, pid);

	return p && p->has_agent;
}

void jt_collector__stats(const struct jt_collector *c, struct jt_collector_stats *st)
{
	*st = c->st;
	st->procs = c->procs.count;
}
