// SPDX-License-Identifier: GPL-2.0
/*
 * The join. Events arrive in timestamp order, so applying code loads and unloads as they
 * come keeps each process's code map exactly as it was at the time of the next event: a
 * sample is named by the code live at its own time, even when an address is reused.
 * Here: the collector's processes and the event dispatch; their definitions in the log are
 * written by procdefs.c, the code live in each process is kept by livecode.c, a stack is
 * named by frames.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "join/collector_int.h"
#include "host/symbols.h"
#include "base/util.h"

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
	c->hotspots.proc_root = c->proc_root;
	c->next_module_id = 1;
	c->next_symbol_id = 1;
	c->symbols = o->symbols;
	c->mem = o->mem;
	jt_ucopy__init(&c->ucopy, o->copy_max);
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

/* Forget a process's code: at exec (a new image) and at exit. */
static void proc_reset(struct proc *p)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	struct evict_ctx e = { .p = p };

	struct jt_idmap ids;

	/* what is live goes first (those an id still names stay), then what ids name */
	jt_codemap__clear(&p->code, jt_coll_on_evict, &e);
	ids = p->ids;
	p->ids = (struct jt_idmap){ 0 };
	while (jt_idmap__next(&ids, &pos, &key, &val))
		jt_coll_method_let_go(p, val);
	jt_idmap__fini(&ids);
	jt_coll_unloaded_forget(p);
	jt_hash__fini(&p->lines);	/* emptied as its methods went */
	jt_coll_pieces_forget(p);
	jt_late__fini(&p->late);
	jt_hash__fini_free(&p->threads);
	jt_coll_interp_forget(p);
	jt_hash__fini(&p->syms);
	jt_vmas__free(&p->vmas);
	p->vmas_read = false;
	/* the old image's last read says nothing of the new one: its first miss reads again */
	p->vmas_ts = 0;
	p->mono = 0;
	p->has_agent = false;
	free(p->cmdline);
	p->cmdline = NULL;
}

static void proc_free(struct proc *p)
{
	proc_reset(p);
	free(p);
}

void jt_collector__free(struct jt_collector *c)
{
	size_t pos = 0, i;
	uint64_t key;
	void *val;

	if (!c)
		return;
	for (i = 0; i < c->nr_pending; i++)	/* not written: a stop on an error */
		jt_coll_late_release(c, &c->pending[i]);
	free(c->pending);
	while (jt_hash__next(&c->procs, &pos, &key, &val))
		proc_free(val);
	jt_hash__fini(&c->procs);
	jt_hash__fini(&c->ksyms);
	jt_hotspots__fini(&c->hotspots);
	jt_ucopy__fini(&c->ucopy);
	if (c->own_symbols)
		jt_symbols__free(c->symbols);
	free(c);
}

/* pid's process, found (or made) in the table. */
static struct proc *proc_find(struct jt_collector *c, uint32_t pid)
{
	struct proc *p = jt_hash__get_new(&c->procs, pid, sizeof(*p), NULL);

	if (!p) {
		jt_err("out of memory");
		return NULL;
	}
	p->pid = pid;
	p->mem = c->mem;
	c->last = p;
	return p;
}

/* pid's process: most often the one found last (calls come in bursts of one process's). */
static inline struct proc *proc_get(struct jt_collector *c, uint32_t pid)
{
	return c->last && c->last->pid == pid ? c->last : proc_find(c, pid);
}

/* Take pid's proc out of the table (NULL: none), to be freed by the caller. */
static struct proc *proc_del(struct jt_collector *c, uint32_t pid)
{
	if (c->last && c->last->pid == pid)
		c->last = NULL;
	return jt_hash__del(&c->procs, pid);
}

static int on_sample(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	struct jt_rec_sample *rec = &c->sample.off.smp;
	int err = jt_coll_stack_build(c, p, ev, rec);

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
	int err = jt_coll_stack_build(c, p, ev, &rec->smp);

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
	jt_hotspots__forget(&c->hotspots, p->pid);
	p->life_ts = ev->ts;
	jt_coll_set_comm(p, ev->comm);
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

	proc_del(c, p->pid);
	jt_hotspots__forget(&c->hotspots, p->pid);
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
	p->mono = 0;		/* it may be Mono's runtime */
	c->st.mmaps++;
	return 0;
}

/*
 * A forked child runs its parent's code until it execs: give it copies of the live ranges
 * and of the mapped files.
 */
static int on_fork(struct jt_collector *c, struct proc *parent, const struct jt_event *ev)
{
	struct proc *child = proc_del(c, ev->child_pid);
	size_t i;

	if (child)		/* a stale pid (its exit was lost): start afresh */
		proc_free(child);
	jt_hotspots__forget(&c->hotspots, ev->child_pid);
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
			.id = jt_coll_in_ids(parent, pm) ? pm->agent_id : 0, .src = pm->src,
			.name = pm->name, .name_len = pm->name_len,
		};
		int err = jt_coll_add_code(c, child, &k);

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
		int err = jt_coll_late_flush(c, ev->ts, ev->type == JT_EV_EXEC ||
						     ev->type == JT_EV_EXIT ? ev->pid : 0);

		if (err)
			return err;
	}
	if (ev->type == JT_EV_ENTER || ev->type == JT_EV_LEAVE)
		return jt_coll_on_call(c, p, ev);	/* by far the most, before the rest */
	switch (ev->type) {
	case JT_EV_CODE_LOAD:
		return jt_coll_on_code_load(c, p, ev);
	case JT_EV_CODE_UNLOAD:
		return jt_coll_on_unload(c, p, ev);
	case JT_EV_CODE_MOVE:
		return jt_coll_on_code_move(c, p, ev);
	case JT_EV_CODE_LINES:
		return jt_coll_on_code_lines(c, p, ev);
	case JT_EV_CODE_INLINE:
		return jt_coll_on_code_inline(c, p, ev);
	case JT_EV_ENTER:
	case JT_EV_LEAVE:
	case JT_EV_CALL_SUM:
	case JT_EV_CALL_SPAN:
		return jt_coll_on_call(c, p, ev);
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
	return jt_coll_late_flush(c, UINT64_MAX, 0);
}

int jt_collector__drop(struct jt_collector *c, unsigned int what, uint32_t tid, uint64_t count,
		       uint64_t ts)
{
	struct jt_rec_drop rec = {
		.h = { .type = JT_REC_DROP, .size = sizeof(rec), .ts = ts },
		.what = what, .tid = tid, .count = count,
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
	st->copies_cut = c->ucopy.cut;
	st->copies_grown = c->ucopy.grown;
	st->copies = c->ucopy.copies;
	st->copy_bytes = c->ucopy.bytes;
	st->copies_over = c->ucopy.over;
	st->copies_fp_walks = c->ucopy.fp_walks;
}

size_t jt_collector__copy_wants(struct jt_collector *c, struct jt_ucopy_want *out, size_t n,
				uint64_t now)
{
	return jt_ucopy__take(&c->ucopy, out, n, now);
}
