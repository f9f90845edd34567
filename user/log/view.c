// SPDX-License-Identifier: GPL-2.0
/* The definitions a log has made so far, and a name for every frame. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "log/view.h"
#include "base/util.h"

struct lv_symbol {
	char *name;
	uint64_t module;	/* 0: the kernel */
};

struct lv_module {
	char *base;		/* the file's name without its directories, NUL added */
	size_t len;		/* its bytes as the log has them (a crafted one may hold a NUL) */
};

/* A method's source lines, sorted by off; each covers up to the next one's off. */
#define LV_NO_FILE UINT32_MAX	/* an entry that names no file: no line there */

struct lv_line {
	uint32_t off;
	uint32_t line;		/* 0: none */
	uint32_t file;		/* index into jt_lv's files, or LV_NO_FILE */
};

struct lv_lines {
	uint32_t n;
	struct lv_line v[];
};

/* A method's inlined scopes (JT_REC_INLINE), checked once as they are read. */
struct lv_scope {
	uint32_t name;		/* offset into names */
	uint32_t file;		/* index into jt_lv's files, or LV_NO_FILE */
	uint32_t line;
	uint32_t caller;	/* a lower index, or JT_INLINE_NONE */
};

struct lv_inline {
	uint32_t nr_ranges, nr_scopes;
	struct jt_inline_range *ranges;	/* sorted by off; each scope below nr_scopes */
	struct lv_scope *scopes;
	char *names;		/* NUL-terminated, a NUL added after the last */
};

/* A source file's name, numbered once over the log. */
struct lv_file {
	char *name;		/* as the log has it, NUL added */
	size_t next;		/* the file before it with the same hash, + 1; 0: none */
};

struct jt_lv {
	struct jt_hash methods;	/* id -> struct jt_lv_method */
	struct jt_hash symbols;	/* id -> struct lv_symbol */
	struct jt_hash modules;	/* id -> struct lv_module */
	struct jt_hash procs;	/* pid -> struct jt_lv_proc */
	struct jt_hash threads;	/* tid -> its name, NUL-terminated (17 bytes) */
	struct jt_hash lines;	/* method id -> struct lv_lines, for methods that have them */
	struct jt_hash inl;	/* method id -> struct lv_inline, for methods that have them */
	struct lv_file *files;	/* by number */
	size_t nr_files, cap_files;
	struct jt_hash file_hash;	/* hash of a name -> the last file with it, + 1 */
	bool any_lines;
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

static void free_inline(void *p)
{
	struct lv_inline *in = p;

	free(in->ranges);
	free(in->scopes);
	free(in->names);
	free(in);
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
	drain(&lv->lines, free);
	drain(&lv->inl, free_inline);
	drain(&lv->threads, free);
	while (lv->nr_files)
		free(lv->files[--lv->nr_files].name);
	free(lv->files);
	jt_hash__fini(&lv->file_hash);
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
	/* a new definition: its lines and scopes, if any, follow */
	free(jt_hash__del(&lv->lines, r->id));
	if (lv->inl.count) {
		void *in = jt_hash__del(&lv->inl, r->id);

		if (in)
			free_inline(in);
	}
	return 0;
}

/* The number of file name s (n bytes, no NUL), added if new; -ENOMEM. */
static long file_index(struct jt_lv *lv, const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	size_t i, at;
	struct lv_file *f;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	for (at = (uintptr_t)jt_hash__get(&lv->file_hash, h); at; at = f->next) {
		f = &lv->files[at - 1];
		if (!strncmp(f->name, s, n) && !f->name[n])
			return at - 1;
	}
	if (lv->nr_files >= LV_NO_FILE ||
	    jt_array_grow(&lv->files, &lv->cap_files, lv->nr_files + 1, sizeof(*lv->files)))
		return -ENOMEM;
	f = &lv->files[lv->nr_files];
	f->name = strndup(s, n);
	if (!f->name)
		return -ENOMEM;
	f->next = (uintptr_t)jt_hash__get(&lv->file_hash, h);
	if (jt_hash__put(&lv->file_hash, h, (void *)(uintptr_t)(lv->nr_files + 1))) {
		free(f->name);
		return -ENOMEM;
	}
	return lv->nr_files++;
}

static int cmp_lines(const void *a, const void *b)
{
	const struct lv_line *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* a log's entries come sorted; a crafted one's ties keep a fixed order */
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

static int add_lines(struct jt_lv *lv, const struct jt_rec_lines *r)
{
	const struct jt_lv_method *m = jt_hash__get(&lv->methods, r->method);
	size_t fixed = sizeof(*r) + (size_t)r->nr_lines * sizeof(struct jt_line);
	const char *names = (const char *)(r->lines + r->nr_lines), *end;
	uint32_t *map = NULL, nr_names = 0, i;
	struct lv_lines *l;
	long idx;

	if (!m || m->pid != r->pid || !r->nr_lines || r->h.size < fixed ||
	    r->names_len > r->h.size - fixed)
		return 0;	/* not this log's promise: shown by dump, used by nothing */
	end = names + r->names_len;
	if (r->names_len) {
		map = malloc(r->names_len * sizeof(*map));	/* a name takes a byte at least */
		if (!map)
			return -ENOMEM;
	}
	while (names < end) {
		const char *nul = memchr(names, '\0', end - names);
		size_t n = nul ? (size_t)(nul - names) : (size_t)(end - names);

		idx = file_index(lv, names, n);
		if (idx < 0) {
			free(map);
			return -ENOMEM;
		}
		map[nr_names++] = idx;
		names = nul ? nul + 1 : end;
	}
	l = malloc(sizeof(*l) + r->nr_lines * sizeof(l->v[0]));
	if (!l) {
		free(map);
		return -ENOMEM;
	}
	l->n = r->nr_lines;
	for (i = 0; i < l->n; i++) {
		const struct jt_line *e = &r->lines[i];
		bool named = e->file < nr_names && e->line;

		l->v[i] = (struct lv_line){ .off = e->off, .line = named ? e->line : 0,
					    .file = named ? map[e->file] : LV_NO_FILE };
	}
	free(map);
	qsort(l->v, l->n, sizeof(l->v[0]), cmp_lines);
	if (put(&lv->lines, r->method, l, free)) {
		free(l);
		return -ENOMEM;
	}
	lv->any_lines = true;
	return 0;
}

static int cmp_ranges(const void *a, const void *b)
{
	const struct jt_inline_range *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->scope < y->scope ? -1 : x->scope > y->scope;	/* a crafted log's ties */
}

/* Whether a name offset lies inside names (len bytes, a NUL after the last). */
static bool name_ok(uint32_t at, uint32_t len)
{
	return at < len;
}

/*
 * A JT_REC_INLINE taken in if it keeps its promises: every range names a scope, every
 * scope a caller before it (so no chain loops) and names inside the record; otherwise
 * ignored, like lines that do not.
 */
static int add_inline(struct jt_lv *lv, const struct jt_rec_inline *r)
{
	const struct jt_lv_method *m = jt_hash__get(&lv->methods, r->method);
	const struct jt_inline_head *h = &r->head;
	const struct jt_inline_range *ranges = (const void *)(r + 1);
	const struct jt_inline_scope *scopes;
	const char *names;
	struct lv_inline *in;
	uint64_t need;
	uint32_t i;
	long idx;

	if (!m || m->pid != r->pid || !h->nr_ranges || h->nr_ranges > JT_INLINE_RANGES_MAX ||
	    h->nr_scopes > JT_INLINE_SCOPES_MAX || h->names_len > JT_INLINE_BYTES_MAX)
		return 0;
	need = sizeof(*r) + (uint64_t)h->nr_ranges * sizeof(*ranges) +
	       (uint64_t)h->nr_scopes * sizeof(*scopes) + h->names_len;
	if (r->h.size < need)
		return 0;
	scopes = (const void *)(ranges + h->nr_ranges);
	names = (const char *)(scopes + h->nr_scopes);
	for (i = 0; i < h->nr_ranges; i++)
		if (ranges[i].scope >= h->nr_scopes)
			return 0;
	for (i = 0; i < h->nr_scopes; i++)
		if (!name_ok(scopes[i].name, h->names_len) ||
		    (scopes[i].file != JT_INLINE_NONE && !name_ok(scopes[i].file, h->names_len)) ||
		    (scopes[i].caller != JT_INLINE_NONE && scopes[i].caller >= i))
			return 0;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->nr_ranges = h->nr_ranges;
	in->nr_scopes = h->nr_scopes;
	in->ranges = malloc(h->nr_ranges * sizeof(*in->ranges));
	in->scopes = malloc((h->nr_scopes ?: 1) * sizeof(*in->scopes));
	in->names = malloc(h->names_len + 1);
	if (!in->ranges || !in->scopes || !in->names)
		goto nomem;
	memcpy(in->ranges, ranges, h->nr_ranges * sizeof(*in->ranges));
	qsort(in->ranges, in->nr_ranges, sizeof(*in->ranges), cmp_ranges);
	memcpy(in->names, names, h->names_len);
	in->names[h->names_len] = '\0';
	for (i = 0; i < h->nr_scopes; i++) {
		uint32_t f = scopes[i].file;

		idx = LV_NO_FILE;
		if (f != JT_INLINE_NONE) {
			idx = file_index(lv, in->names + f, strlen(in->names + f));
			if (idx < 0)
				goto nomem;
		}
		in->scopes[i] = (struct lv_scope){ .name = scopes[i].name, .file = idx,
						   .line = scopes[i].line,
						   .caller = scopes[i].caller };
	}
	if (put(&lv->inl, r->method, in, free_inline))
		goto nomem;
	lv->any_lines = true;
	return 0;
nomem:
	free_inline(in);
	return -ENOMEM;
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
	/* a process defined again after its exit, when /proc no longer knew it, keeps its name */
	if (!comm[0] && !cmdline_len)
		return 0;
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
	case JT_REC_LINES:
		err = add_lines(lv, (const void *)rec);
		break;
	case JT_REC_INLINE:
		err = add_inline(lv, (const void *)rec);
		break;
	case JT_REC_PROC: {
		const struct jt_rec_proc *p = (const void *)rec;

		err = set_proc(lv, p->pid, p->comm, p->cmdline, p->cmdline_len);
		break;
	}
	case JT_REC_THREAD: {
		const struct jt_rec_thread *t = (const void *)rec;
		char *name = malloc(sizeof(t->comm) + 1);

		if (!name) {
			err = -ENOMEM;
			break;
		}
		memcpy(name, t->comm, sizeof(t->comm));
		name[sizeof(t->comm)] = 0;
		err = put(&lv->threads, t->tid, name, free);
		if (err)
			free(name);
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
		if (mod->base[0] == '[')	/* the kernel's own mapping: one frame */
			snprintf(buf, cap, "%.*s", (int)(cap - 1), mod->base);
		else
			snprintf(buf, cap, "%.*s+0x%" PRIx64, (int)(cap - 24), mod->base,
				 (uint64_t)f->off);
		return buf;
	case JT_FRAME_KERNEL:
		*kind = JT_LV_KERNEL;
		snprintf(buf, cap, "[k] 0x%" PRIx64, (uint64_t)f->off);
		return buf;
	case JT_FRAME_TRUNCATED:
		*kind = JT_LV_UNKNOWN;
		return "[truncated]";
	case JT_FRAME_USER:	/* in anonymous executable memory: JIT code nothing named */
		mod = id ? jt_hash__get(&lv->modules, id) : NULL;
		if (!mod)
			break;
		*kind = JT_LV_JIT;
		snprintf(buf, cap, "%.*s", (int)(cap - 1), mod->base);
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

const char *jt_lv__thread(const struct jt_lv *lv, uint32_t tid)
{
	return jt_hash__get(&lv->threads, tid);
}

const struct jt_lv_proc *jt_lv__proc(const struct jt_lv *lv, uint32_t pid)
{
	return jt_hash__get(&lv->procs, pid);
}

bool jt_lv__has_lines(const struct jt_lv *lv)
{
	return lv->any_lines;
}

bool jt_lv__method_has_lines(const struct jt_lv *lv, uint64_t id)
{
	return (lv->lines.count && jt_hash__get(&lv->lines, id)) ||
	       (lv->inl.count && jt_hash__get(&lv->inl, id));
}

/* Whether byte off is inside method id (a method of size 0 holds every offset). */
static bool inside(const struct jt_lv *lv, uint64_t id, uint64_t off)
{
	const struct jt_lv_method *m = jt_hash__get(&lv->methods, id);

	return m && (!m->size || off < m->size);
}

/*
 * The first of n entries sorted by offset whose offset is past off (n: none): source lines
 * and inlined ranges both, each entry stride bytes beginning with its uint32_t offset.
 */
_Static_assert(offsetof(struct lv_line, off) == 0, "lv_line begins with its offset");
_Static_assert(offsetof(struct jt_inline_range, off) == 0, "a range begins with its offset");
static size_t first_past(const void *v, size_t n, size_t stride, uint64_t off)
{
	size_t lo = 0, hi = n, mid;
	uint32_t at;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		memcpy(&at, (const char *)v + mid * stride, sizeof(at));
		if (at <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

unsigned int jt_lv__scopes(const struct jt_lv *lv, uint64_t id, uint64_t off,
			   struct jt_lv_scope *out, unsigned int max)
{
	const struct lv_inline *in;
	unsigned int n = 0;
	uint32_t at;
	size_t lo;

	if (!lv->inl.count || !(in = jt_hash__get(&lv->inl, id)) || !inside(lv, id, off))
		return 0;
	lo = first_past(in->ranges, in->nr_ranges, sizeof(*in->ranges), off);
	if (lo == in->nr_ranges)
		return 0;
	for (at = in->ranges[lo].scope; at != JT_INLINE_NONE && n < max;
	     at = in->scopes[at].caller) {
		const struct lv_scope *s = &in->scopes[at];

		out[n++] = (struct jt_lv_scope){ .name = in->names + s->name, .file = s->file,
						 .line = s->line };
	}
	return n;
}

const char *jt_lv__inlined_name(const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.*s" JT_LV_INLINED, (int)(cap - sizeof(JT_LV_INLINED)), name);
	return buf;
}

unsigned int jt_lv__frame_scopes(const struct jt_lv *lv, const struct jt_frame *f, bool caller,
				 struct jt_lv_scope *out, unsigned int max)
{
	if (JT_FRAME_KIND(f->ref) != JT_FRAME_METHOD || !lv->inl.count)
		return 0;
	return jt_lv__scopes(lv, JT_FRAME_ID(f->ref), caller && f->off ? f->off - 1 : f->off,
			     out, max);
}

bool jt_lv__line(const struct jt_lv *lv, uint64_t id, uint64_t off, uint32_t *file,
		 uint32_t *line)
{
	const struct lv_lines *l;
	size_t lo;

	if (!lv->lines.count)
		return false;
	l = jt_hash__get(&lv->lines, id);
	if (!l || !inside(lv, id, off))
		return false;
	lo = first_past(l->v, l->n, sizeof(l->v[0]), off);
	if (!lo || l->v[lo - 1].file == LV_NO_FILE)
		return false;
	*file = l->v[lo - 1].file;
	*line = l->v[lo - 1].line;
	return true;
}

bool jt_lv__own_line(const struct jt_lv *lv, const struct jt_frame *f, bool caller,
		     const struct jt_lv_scope *sc, unsigned int n, uint32_t *file, uint32_t *line)
{
	if (n <= 1)
		return jt_lv__frame_line(lv, f, caller, file, line);
	*file = sc[n - 1].file;
	*line = sc[n - 1].line;
	return *line != 0;
}

bool jt_lv__frame_line(const struct jt_lv *lv, const struct jt_frame *f, bool caller,
		       uint32_t *file, uint32_t *line)
{
	uint64_t off = f->off;
	struct jt_lv_scope s;

	if (JT_FRAME_KIND(f->ref) != JT_FRAME_METHOD)
		return false;
	if (jt_lv__frame_scopes(lv, f, caller, &s, 1) && s.file != LV_NO_FILE && s.line) {
		*file = s.file;
		*line = s.line;
		return true;
	}
	if (!lv->lines.count)
		return false;
	if (caller && off)
		off--;
	return jt_lv__line(lv, JT_FRAME_ID(f->ref), off, file, line);
}

const char *jt_lv__file(const struct jt_lv *lv, uint32_t file)
{
	return file < lv->nr_files ? lv->files[file].name : "?";
}

uint32_t jt_lv__first_line(const struct jt_lv *lv, uint64_t id, uint32_t file)
{
	const struct lv_lines *l = jt_hash__get(&lv->lines, id);
	uint32_t i, first = 0;

	for (i = 0; l && i < l->n; i++)
		if (l->v[i].file == file && (!first || l->v[i].line < first))
			first = l->v[i].line;
	return first;
}

unsigned int jt_lv__user_leaf(const struct jt_lv *lv, const struct jt_rec_sample *smp)
{
	const struct lv_symbol *s;
	unsigned int i;

	for (i = 0; i < smp->nr_frames; i++) {
		switch (JT_FRAME_KIND(smp->frames[i].ref)) {
		case JT_FRAME_KERNEL:
			continue;
		case JT_FRAME_SYMBOL:
			s = jt_hash__get(&lv->symbols, JT_FRAME_ID(smp->frames[i].ref));
			if (s && !s->module)
				continue;
			return i;
		default:
			return i;
		}
	}
	return i;
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
