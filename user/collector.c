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

#include "codemap.h"
#include "collector.h"
#include "hash.h"
#include "idmap.h"
#include "methods.h"
#include "procfs.h"
#include "symbols.h"
#include "util.h"

#define VMAS_REREAD_NS 1000000000ULL	/* reread /proc/PID/maps on a miss at most this often */
#define CMDLINE_MAX 4096
#define SYM_NAME_MAX 1024	/* longer (demangled) symbol names are cut */
#define SYM_IDX_BITS 24		/* symbols of a file past 16M stay file + offset */

struct proc {
	uint32_t pid;
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
};

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
	struct jt_hash ksyms;	/* kallsyms index -> log symbol id */
	uint64_t next_module_id;
	uint64_t next_symbol_id;
	struct jt_collector_stats st;
	union {			/* a sample record is built here, frames in place */
		struct jt_rec_sample rec;
		char bytes[sizeof(struct jt_rec_sample) + 2 * JT_MAX_FRAMES * sizeof(struct jt_frame)];
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
	c->symbols = jt_symbols__new(c->proc_root);
	if (!c->symbols) {
		free(c);
		return NULL;
	}
	return c;
}

/*
 * A process owns its methods; its code map (what is live at each address) and its id map
 * (what each agent id names) only borrow them. Once neither holds one, nothing can name it
 * any more and the process lets it go: here, the one place a method is freed.
 */
static bool in_ids(const struct proc *p, const struct jt_method *m)
{
	return m->agent_id && jt_idmap__get(&p->ids, m->agent_id) == m;
}

static void method_let_go(struct proc *p, struct jt_method *m)
{
	if (in_ids(p, m) || jt_codemap__holds(&p->code, m))
		return;
	if (m->has_lines)
		free(jt_hash__del(&p->lines, (uintptr_t)m));
	free(m);
}

/* What taking methods out of a process's code map did. */
struct evict_ctx {
	struct proc *p;
	size_t evicted;
};

static void on_evict(void *ctx, struct jt_method *m)
{
	struct evict_ctx *e = ctx;

	e->evicted++;
	if (m->src == JT_SRC_PERFMAP)
		e->p->perfmap_methods--;
	method_let_go(e->p, m);
}

/* Take m out of p's live code if it is there. */
static void code_remove(struct proc *p, struct jt_method *m)
{
	if (jt_codemap__remove(&p->code, m) && m->src == JT_SRC_PERFMAP)
		p->perfmap_methods--;
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
	jt_hash__fini(&p->syms);
	jt_vmas__free(&p->vmas);
	p->vmas_read = false;
	p->has_agent = false;
}

static void proc_free(struct proc *p)
{
	proc_reset(p);
	free(p);
}

void jt_collector__free(struct jt_collector *c)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	if (!c)
		return;
	while (jt_hash__next(&c->procs, &pos, &key, &val))
		proc_free(val);
	jt_hash__fini(&c->procs);
	jt_hash__fini(&c->ksyms);
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
	n = jt_procfs__read_cmdline(c->proc_root, p->pid, u.rec.cmdline, CMDLINE_MAX);
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

/* Make code live in p (and reachable by its agent id). */
static int add_code(struct jt_collector *c, struct proc *p, const struct code *k)
{
	struct evict_ctx e = { .p = p };
	struct jt_method *m, *live, *old;

	/* past the cap only lines that replace live code are kept (see collector.h) */
	if (k->src == JT_SRC_PERFMAP && p->perfmap_methods >= c->max_perfmap_methods &&
	    !jt_codemap__overlaps(&p->code, k->start, k->size)) {
		c->st.perfmap_capped++;
		return 0;
	}
	m = jt_method__new(k->start, k->size, k->ts, k->id, k->src, k->name, k->name_len);
	if (!m)
		goto oom;
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
			code_remove(p, m);
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

static int on_code_load(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	uint64_t span = ev->latest_ts > ev->ts ? (ev->latest_ts - ev->ts + 999) / 1000 : 0;
	struct code k = {
		.ts = ev->ts, .id = ev->id, .start = ev->start, .size = ev->size,
		.unsure_us = span < UINT32_MAX ? span : UINT32_MAX, .src = ev->src,
		.name = jt_event__str(ev), .name_len = ev->str_len,
	};

	if (ev->src == JT_SRC_AGENT || ev->src == JT_SRC_JITDUMP) {
		p->has_agent = true;
	} else if (ev->src == JT_SRC_PERFMAP && p->has_agent) {
		/* the agent (or a jitdump) already told us, with exact times */
		c->st.perfmap_skipped++;
		return 0;
	}
	return add_code(c, p, &k);
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
	code_remove(p, m);	/* the id then names the new method, and m is let go */
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
	code_remove(p, m);
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

static int module_define(struct jt_collector *c, struct proc *p, struct jt_vma *vma,
			 uint64_t ts)
{
	union {
		struct jt_rec_module rec;
		char bytes[sizeof(struct jt_rec_module) + 4096 + 8];
	} u;
	size_t len = strlen(vma->path), size;
	int err;

	if (vma->module_id)
		return 0;
	if (len > 4096)
		len = 4096;
	err = proc_define(c, p, ts);
	if (err)
		return err;
	size = jt_round8(sizeof(u.rec) + len);
	memset(u.bytes + size - 8, 0, 8);
	u.rec = (struct jt_rec_module){
		.h = { .type = JT_REC_MODULE, .size = size, .ts = ts },
		.id = c->next_module_id, .start = vma->start, .end = vma->end,
		.pgoff = vma->pgoff, .pid = p->pid, .path_len = len,
	};
	memcpy(u.rec.path, vma->path, len);
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
			n->syms = o->syms;
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

	if (!vma->syms_looked) {
		vma->syms_looked = true;
		vma->syms = jt_symbols__file(c->symbols, p->pid, vma->start, vma->end);
	}
	if (!vma->syms)
		return 0;
	/* a return address may be just past its function: look up the call instead */
	sym = jt_elfsyms__find(vma->syms, leaf ? off : off - 1, &idx);
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
	if (vma) {
		uint64_t off = ip - vma->start + vma->pgoff;

		err = module_define(c, p, vma, ts);
		if (err)
			return err;
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_MODULE, vma->module_id), off };
		return native_symbol(c, p, vma, off, leaf, ts, f);
	}
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 0), ip };
	return 0;
}

static int on_sample(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_rec_sample *rec = &c->sample.rec;
	struct jt_frame *f = rec->frames;
	unsigned int i, n = 0;
	int err;

	const uint64_t *ips = jt_event__ips(ev);

	for (i = 0; i < ev->nr_kernel; i++) {
		err = kernel_frame(c, ips[i], i == 0, ev->ts, &f[n++]);
		if (err)
			return err;
	}
	for (i = 0; i < ev->nr_user; i++) {
		uint64_t ip = ips[ev->nr_kernel + i];

		if (!ip)	/* the frame-pointer chain's end */
			break;
		err = user_frame(c, p, ip, i == 0, ev->ts, &f[n++]);
		if (err)
			return err;
	}
	err = proc_define(c, p, ev->ts);
	if (err)
		return err;
	rec->h = (struct jt_rec_hdr){ .type = JT_REC_SAMPLE,
				      .size = sizeof(*rec) + n * sizeof(*f), .ts = ev->ts };
	rec->pid = p->pid;
	rec->tid = ev->tid;
	rec->cpu = ev->cpu;
	rec->nr_frames = n;
	rec->reserved = 0;
	c->st.samples++;
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
	set_comm(p, ev->comm);
	p->defined = false;	/* its command line changed: say it again when it matters */
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

/* A forked child runs its parent's code until it execs: give it copies of the live ranges. */
static int on_fork(struct jt_collector *c, struct proc *parent, const struct jt_event *ev)
{
	struct proc *child = jt_hash__del(&c->procs, ev->child_pid);
	size_t i;

	if (child)		/* a stale pid (its exit was lost): start afresh */
		proc_free(child);
	if (parent->code.n == 0)
		return 0;
	child = proc_get(c, ev->child_pid);
	if (!child)
		return -ENOMEM;
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	child->has_agent = parent->has_agent;
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
	case JT_EV_EXEC:
		return on_exec(c, p, ev);
	case JT_EV_EXIT:
		return on_exit_ev(c, p, ev);
	case JT_EV_FORK:
		return on_fork(c, p, ev);
	default:
		return 0;
	}
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
