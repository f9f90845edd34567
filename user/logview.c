// SPDX-License-Identifier: GPL-2.0
/* The definitions a log has made so far, and a name for every frame. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "logview.h"
#include "util.h"

struct lv_symbol {
	char *name;
	uint64_t module;	/* 0: the kernel */
};

struct lv_module {
	char *base;		/* the file's name without its directories, NUL added */
	size_t len;		/* its bytes as the log has them (a crafted one may hold a NUL) */
};

struct jt_lv {
	struct jt_hash methods;	/* id -> struct jt_lv_method */
	struct jt_hash symbols;	/* id -> struct lv_symbol */
	struct jt_hash modules;	/* id -> struct lv_module */
	struct jt_hash procs;	/* pid -> struct jt_lv_proc */
};

struct jt_lv *jt_lv__new(void)
{
	struct jt_lv *lv = calloc(1, sizeof(*lv));

	if (!lv)
		jt_err("out of memory reading the log");
	return lv;
}

/* Put val at key, freeing what a redefinition replaces with free_old. */
static int put(struct jt_hash *h, uint64_t key, void *val, void (*free_old)(void *))
{
	void *old = jt_hash__get(h, key);

	if (jt_hash__put(h, key, val))
		return -ENOMEM;
	if (old)
		free_old(old);
	return 0;
}

static void free_method(void *p)
{
	free(((struct jt_lv_method *)p)->name);
	free(p);
}

static void free_symbol(void *p)
{
	free(((struct lv_symbol *)p)->name);
	free(p);
}

static void free_module(void *p)
{
	free(((struct lv_module *)p)->base);
	free(p);
}

static void free_proc(void *p)
{
	free(((struct jt_lv_proc *)p)->cmdline);
	free(p);
}

static void drain(struct jt_hash *h, void (*free_val)(void *))
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(h, &pos, &key, &val))
		free_val(val);
	jt_hash__fini(h);
}

void jt_lv__free(struct jt_lv *lv)
{
	if (!lv)
		return;
	drain(&lv->methods, free_method);
	drain(&lv->symbols, free_symbol);
	drain(&lv->modules, free_module);
	drain(&lv->procs, free_proc);
	free(lv);
}

static int add_method(struct jt_lv *lv, const struct jt_rec_method *r)
{
	struct jt_lv_method *m = malloc(sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->id = r->id;
	m->pid = r->pid;
	m->start = r->start;
	m->size = r->size;
	m->name = strndup(r->name, r->name_len);
	if (!m->name || put(&lv->methods, r->id, m, free_method)) {
		free(m->name);
		free(m);
		return -ENOMEM;
	}
	return 0;
}

static int add_symbol(struct jt_lv *lv, const struct jt_rec_symbol *r)
{
	struct lv_symbol *s = malloc(sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->module = r->module;
	s->name = strndup(r->name, r->name_len);
	if (!s->name || put(&lv->symbols, r->id, s, free_symbol)) {
		free(s->name);
		free(s);
		return -ENOMEM;
	}
	return 0;
}

static int add_module(struct jt_lv *lv, const struct jt_rec_module *r)
{
	struct lv_module *m = malloc(sizeof(*m));
	const char *path = r->path, *slash;
	size_t len = r->path_len;

	if (!m)
		return -ENOMEM;
	slash = memrchr(path, '/', len);
	if (slash) {
		len -= slash + 1 - path;
		path = slash + 1;
	}
	m->len = len;
	m->base = malloc(len + 1);
	if (m->base) {
		memcpy(m->base, path, len);
		m->base[len] = '\0';
	}
	if (!m->base || put(&lv->modules, r->id, m, free_module)) {
		free(m->base);
		free(m);
		return -ENOMEM;
	}
	return 0;
}

/* The process pid, created empty if the log has not named it yet; NULL: no memory. */
static struct jt_lv_proc *proc_get(struct jt_lv *lv, uint32_t pid)
{
	bool added;
	struct jt_lv_proc *p = jt_hash__get_new(&lv->procs, pid, sizeof(*p), &added);

	if (p && added) {
		p->pid = pid;
		p->cmdline = strdup("");
		if (!p->cmdline) {
			free(jt_hash__del(&lv->procs, pid));
			return NULL;
		}
	}
	return p;
}

static int set_proc(struct jt_lv *lv, uint32_t pid, const char *comm, const char *cmdline,
		    size_t cmdline_len)
{
	struct jt_lv_proc *p = proc_get(lv, pid);
	char *c;

	if (!p)
		return -ENOMEM;
	c = strndup(cmdline, cmdline_len);
	if (!c)
		return -ENOMEM;
	free(p->cmdline);
	p->cmdline = c;
	memcpy(p->comm, comm, sizeof(p->comm) - 1);
	p->comm[sizeof(p->comm) - 1] = '\0';
	return 0;
}

int jt_lv__add(struct jt_lv *lv, const struct jt_rec_hdr *rec)
{
	int err = 0;

	switch (rec->type) {
	case JT_REC_METHOD:
		err = add_method(lv, (const void *)rec);
		break;
	case JT_REC_SYMBOL:
		err = add_symbol(lv, (const void *)rec);
		break;
	case JT_REC_MODULE:
		err = add_module(lv, (const void *)rec);
		break;
	case JT_REC_PROC: {
		const struct jt_rec_proc *p = (const void *)rec;

		err = set_proc(lv, p->pid, p->comm, p->cmdline, p->cmdline_len);
		break;
	}
	case JT_REC_EXEC: {	/* the new program: its path until a proc record says more */
		const struct jt_rec_exec *e = (const void *)rec;

		err = set_proc(lv, e->pid, e->comm, e->path, e->path_len);
		break;
	}
	default:
		break;
	}
	if (err)
		jt_err("out of memory reading the log");
	return err;
}

const char *jt_lv__frame(const struct jt_lv *lv, const struct jt_frame *f, char *buf,
			 size_t cap, enum jt_lv_kind *kind)
{
	uint64_t id = JT_FRAME_ID(f->ref);
	const struct jt_lv_method *m;
	const struct lv_module *mod;
	const struct lv_symbol *s;

	switch (JT_FRAME_KIND(f->ref)) {
	case JT_FRAME_METHOD:
		m = jt_hash__get(&lv->methods, id);
		if (!m)
			break;
		*kind = JT_LV_JIT;
		return m->name;
	case JT_FRAME_SYMBOL:
		s = jt_hash__get(&lv->symbols, id);
		if (!s)
			break;
		*kind = s->module ? JT_LV_NATIVE : JT_LV_KERNEL;
		return s->name;
	case JT_FRAME_MODULE:
		mod = jt_hash__get(&lv->modules, id);
		if (!mod)
			break;
		*kind = JT_LV_NATIVE;
		snprintf(buf, cap, "%.*s+0x%" PRIx64, (int)(cap - 24), mod->base, (uint64_t)f->off);
		return buf;
	case JT_FRAME_KERNEL:
		*kind = JT_LV_KERNEL;
		snprintf(buf, cap, "[k] 0x%" PRIx64, (uint64_t)f->off);
		return buf;
	default:
		break;
	}
	/* a bare user address, or a reference the log never defined: shown, not dropped */
	*kind = JT_LV_UNKNOWN;
	snprintf(buf, cap, "0x%" PRIx64, (uint64_t)f->off);
	return buf;
}

const char *jt_lv__frame_file(const struct jt_lv *lv, const struct jt_frame *f, size_t *len)
{
	const struct lv_symbol *s;
	const struct lv_module *m;
	uint64_t mod;

	switch (JT_FRAME_KIND(f->ref)) {
	case JT_FRAME_MODULE:
		mod = JT_FRAME_ID(f->ref);
		break;
	case JT_FRAME_SYMBOL:
		s = jt_hash__get(&lv->symbols, JT_FRAME_ID(f->ref));
		mod = s ? s->module : 0;
		break;
	default:
		return NULL;
	}
	m = mod ? jt_hash__get(&lv->modules, mod) : NULL;
	if (m && len)
		*len = m->len;
	return m ? m->base : NULL;
}

const struct jt_lv_method *jt_lv__method(const struct jt_lv *lv, uint64_t id)
{
	return jt_hash__get(&lv->methods, id);
}

const struct jt_lv_proc *jt_lv__proc(const struct jt_lv *lv, uint32_t pid)
{
	return jt_hash__get(&lv->procs, pid);
}

const char *jt_lv__kind_name(enum jt_lv_kind kind)
{
	static const char *const names[] = {
		[JT_LV_JIT] = "jit",
		[JT_LV_NATIVE] = "native",
		[JT_LV_KERNEL] = "kernel",
		[JT_LV_UNKNOWN] = "unknown",
	};

	return kind < JT_ARRAY_SIZE(names) ? names[kind] : "unknown";
}
