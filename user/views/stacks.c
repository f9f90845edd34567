// SPDX-License-Identifier: GPL-2.0
/* Samples (or weighted records: off-CPU time) merged into a tree of interned frame names,
 * one subtree per process. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/stacks.h"
#include "base/text.h"
#include "base/util.h"

/* (k1, k2) -> u32, open addressing, at most half full; val JT_STK_NONE marks a free slot. */
struct pent {
	uint64_t k1, k2;
	uint32_t val;
};

struct ptab {
	struct pent *v;
	size_t cap, n;
};

struct name {
	char *s;
	size_t len;
	uint64_t hash;
	enum jt_lv_kind kind;
};

struct jt_stacks {
	struct jt_stk_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct ptab children;	/* (parent, name or pid) -> node */
	struct ptab frames;	/* (ref, off or 0) -> name */
	struct ptab defined;	/* (ref, 0) of every definition seen */
	struct ptab unresolved;	/* (ref, 0) of references named before their definition */
	struct name *names;
	size_t nr_names, cap_names;
	uint32_t *itab;		/* interned names by hash, JT_STK_NONE free */
	size_t icap;
};

static inline size_t pslot(const struct ptab *t, uint64_t k1, uint64_t k2)
{
	uint64_t h = (k1 * 0x9E3779B97F4A7C15ULL) ^ (k2 * 0xC2B2AE3D27D4EB4FULL);

	return (size_t)(h ^ (h >> 29)) & (t->cap - 1);
}

static inline uint32_t ptab_get(const struct ptab *t, uint64_t k1, uint64_t k2)
{
	size_t i;

	if (!t->cap)
		return JT_STK_NONE;
	for (i = pslot(t, k1, k2); t->v[i].val != JT_STK_NONE; i = (i + 1) & (t->cap - 1))
		if (t->v[i].k1 == k1 && t->v[i].k2 == k2)
			return t->v[i].val;
	return JT_STK_NONE;
}

static void ptab_init_slots(struct pent *v, size_t cap)
{
	size_t i;

	for (i = 0; i < cap; i++)
		v[i].val = JT_STK_NONE;
}

/* Insert a key known to be absent. Returns 0 or -ENOMEM. */
static int ptab_put(struct ptab *t, uint64_t k1, uint64_t k2, uint32_t val)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		struct ptab g = { .cap = t->cap ? 2 * t->cap : 1024, .n = t->n };

		g.v = malloc(g.cap * sizeof(*g.v));
		if (!g.v)
			return -ENOMEM;
		ptab_init_slots(g.v, g.cap);
		for (i = 0; i < t->cap; i++) {
			size_t j;

			if (t->v[i].val == JT_STK_NONE)
				continue;
			for (j = pslot(&g, t->v[i].k1, t->v[i].k2); g.v[j].val != JT_STK_NONE;
			     j = (j + 1) & (g.cap - 1))
				;
			g.v[j] = t->v[i];
		}
		free(t->v);
		*t = g;
	}
	for (i = pslot(t, k1, k2); t->v[i].val != JT_STK_NONE; i = (i + 1) & (t->cap - 1))
		;
	t->v[i] = (struct pent){ k1, k2, val };
	t->n++;
	return 0;
}

static void ptab_clear(struct ptab *t)
{
	if (t->cap)
		ptab_init_slots(t->v, t->cap);
	t->n = 0;
}

static void ptab_fini(struct ptab *t)
{
	free(t->v);
	*t = (struct ptab){ 0 };
}

struct jt_stacks *jt_stacks__new(void)
{
	struct jt_stacks *s = calloc(1, sizeof(*s));

	if (!s)
		goto nomem;
	s->cap_nodes = 1024;
	s->nodes = malloc(s->cap_nodes * sizeof(*s->nodes));
	if (!s->nodes)
		goto nomem;
	s->nodes[0] = (struct jt_stk_node){ .parent = JT_STK_NONE, .child = JT_STK_NONE,
					    .next = JT_STK_NONE };
	s->nr_nodes = 1;
	return s;
nomem:
	jt_err("out of memory building stacks");
	jt_stacks__free(s);
	return NULL;
}

void jt_stacks__free(struct jt_stacks *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_names; i++)
		free(s->names[i].s);
	free(s->names);
	free(s->itab);
	free(s->nodes);
	ptab_fini(&s->children);
	ptab_fini(&s->frames);
	ptab_fini(&s->defined);
	ptab_fini(&s->unresolved);
	free(s);
}

int jt_stacks__saw(struct jt_stacks *s, const struct jt_rec_hdr *rec)
{
	uint64_t ref;

	switch (rec->type) {
	case JT_REC_METHOD:
		ref = JT_FRAME_REF(JT_FRAME_METHOD, ((const struct jt_rec_method *)rec)->id);
		break;
	case JT_REC_SYMBOL:
		ref = JT_FRAME_REF(JT_FRAME_SYMBOL, ((const struct jt_rec_symbol *)rec)->id);
		break;
	case JT_REC_MODULE:
		ref = JT_FRAME_REF(JT_FRAME_MODULE, ((const struct jt_rec_module *)rec)->id);
		break;
	default:
		return 0;
	}
	/* A name cached for this reference is now wrong: start the cache afresh (rare). */
	if (ptab_get(&s->defined, ref, 0) != JT_STK_NONE ||
	    ptab_get(&s->unresolved, ref, 0) != JT_STK_NONE) {
		ptab_clear(&s->frames);
		ptab_clear(&s->unresolved);
		return 0;
	}
	if (ptab_put(&s->defined, ref, 0, 1)) {
		jt_err("out of memory building stacks");
		return -ENOMEM;
	}
	return 0;
}

static uint64_t hash_name(const char *p, size_t n, enum jt_lv_kind kind)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ kind;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
	return h;
}

/*
 * Names come from other processes' memory: whatever is not valid UTF-8, and every control
 * character (C0, DEL, C1), becomes '?', so every output (text, JSON, XML) can carry the name as is.
 */
static char *clean_copy(const char *src, size_t n, size_t *out_len)
{
	char *d = malloc(n + 1);

	if (d)
		*out_len = jt_text__clean(d, src, n);
	return d;
}

static int itab_grow(struct jt_stacks *s)
{
	size_t cap = s->icap ? 2 * s->icap : 1024, i, j;
	uint32_t *t = malloc(cap * sizeof(*t));

	if (!t)
		return -ENOMEM;
	memset(t, 0xff, cap * sizeof(*t));
	for (i = 0; i < s->nr_names; i++) {
		for (j = s->names[i].hash & (cap - 1); t[j] != JT_STK_NONE; j = (j + 1) & (cap - 1))
			;
		t[j] = i;
	}
	free(s->itab);
	s->itab = t;
	s->icap = cap;
	return 0;
}

/* The index of name (cleaned) of kind, added if new; -ENOMEM. */
static int64_t intern(struct jt_stacks *s, const char *raw, enum jt_lv_kind kind)
{
	size_t len, i;
	char *c = clean_copy(raw, strlen(raw), &len);
	uint64_t h;

	if (!c)
		return -ENOMEM;
	h = hash_name(c, len, kind);
	if (2 * (s->nr_names + 1) > s->icap && itab_grow(s))
		goto nomem;
	for (i = h & (s->icap - 1); s->itab[i] != JT_STK_NONE; i = (i + 1) & (s->icap - 1)) {
		const struct name *nm = &s->names[s->itab[i]];

		if (nm->hash == h && nm->kind == kind && nm->len == len && !memcmp(nm->s, c, len)) {
			free(c);
			return s->itab[i];
		}
	}
	if (s->nr_names == s->cap_names) {
		size_t cap = s->cap_names ? 2 * s->cap_names : 256;
		struct name *v = realloc(s->names, cap * sizeof(*v));

		if (!v)
			goto nomem;
		s->names = v;
		s->cap_names = cap;
	}
	s->names[s->nr_names] = (struct name){ .s = c, .len = len, .hash = h, .kind = kind };
	s->itab[i] = s->nr_names;
	return s->nr_names++;
nomem:
	free(c);
	return -ENOMEM;
}

int64_t jt_stacks__frame(struct jt_stacks *s, const struct jt_lv *lv, const struct jt_frame *f)
{
	unsigned fk = JT_FRAME_KIND(f->ref);
	/* a method's or symbol's name does not depend on the offset into it */
	uint64_t k2 = fk == JT_FRAME_METHOD || fk == JT_FRAME_SYMBOL ? 0 : f->off;
	uint32_t v = ptab_get(&s->frames, f->ref, k2);
	enum jt_lv_kind kind;
	const char *name;
	char buf[320];
	int64_t idx;

	if (v != JT_STK_NONE)
		return v;
	name = jt_lv__frame(lv, f, buf, sizeof(buf), &kind);
	idx = intern(s, name, kind);
	if (idx < 0)
		goto nomem;
	if (kind == JT_LV_UNKNOWN && !k2 && (fk == JT_FRAME_METHOD || fk == JT_FRAME_SYMBOL)) {
		/* named by its offset until (if ever) defined: not cached by reference */
		if (ptab_get(&s->unresolved, f->ref, 0) == JT_STK_NONE &&
		    ptab_put(&s->unresolved, f->ref, 0, 1))
			goto nomem;
		return idx;
	}
	if (ptab_put(&s->frames, f->ref, k2, idx))
		goto nomem;
	return idx;
nomem:
	jt_err("out of memory naming frames");
	return -ENOMEM;
}

int64_t jt_stacks__inlined(struct jt_stacks *s, const char *name)
{
	char buf[1024 + sizeof(JT_LV_INLINED)];	/* the JVMTI agent's names are shorter */
	int64_t idx = intern(s, jt_lv__inlined_name(name, buf, sizeof(buf)), JT_LV_JIT);

	if (idx < 0)
		jt_err("out of memory naming frames");
	return idx;
}

/* The child of parent called name (a pid under the root), added if new; JT_STK_NONE. */
static uint32_t child(struct jt_stacks *s, uint32_t parent, uint32_t name)
{
	struct jt_stk_node *p = &s->nodes[parent];
	uint32_t c = p->child;
	int hops;

	/* most frames have one or a few callees: their list is nearer than the hash */
	for (hops = 0; c != JT_STK_NONE && hops < 4; hops++, c = s->nodes[c].next)
		if (s->nodes[c].name == name)
			return c;
	if (c != JT_STK_NONE) {
		c = ptab_get(&s->children, parent, name);
		if (c != JT_STK_NONE)
			return c;
	}
	if (s->nr_nodes == s->cap_nodes) {
		size_t cap = 2 * s->cap_nodes;
		struct jt_stk_node *v = realloc(s->nodes, cap * sizeof(*v));

		if (!v || cap >= JT_STK_NONE)
			return JT_STK_NONE;
		s->nodes = v;
		s->cap_nodes = cap;
	}
	c = s->nr_nodes;
	if (ptab_put(&s->children, parent, name, c))
		return JT_STK_NONE;
	p = &s->nodes[parent];
	s->nodes[c] = (struct jt_stk_node){ .parent = parent, .name = name, .child = JT_STK_NONE,
					    .next = p->child, .depth = p->depth + 1 };
	p->child = c;
	s->nr_nodes++;
	return c;
}

/*
 * The stack of smp under its process, each node's total and the leaf's self grown by
 * weight. Inline in both adds, so that a sample's constant 1 costs what it always did.
 */
static inline int add(struct jt_stacks *s, const struct jt_lv *lv,
		      const struct jt_rec_sample *smp, uint64_t weight, uint32_t *leaf)
{
	uint32_t node = child(s, JT_STK_ROOT, smp->pid);
	/* the user leaf is where it ran; frames past it hold return addresses */
	int i, user = jt_lv__has_lines(lv) ? (int)jt_lv__user_leaf(lv, smp) : 0;
	bool expand = jt_lv__expands(smp);

	if (node == JT_STK_NONE)
		goto nomem;
	s->nodes[JT_STK_ROOT].total += weight;
	s->nodes[node].total += weight;
	for (i = (int)smp->nr_frames - 1; i >= 0; i--) {	/* outermost caller first */
		int64_t name = jt_stacks__frame(s, lv, &smp->frames[i]);
		struct jt_lv_scope sc[JT_LV_DEPTH_MAX];
		unsigned int k;

		if (name < 0)
			return -ENOMEM;
		/* the method itself, then what it inlined there, innermost last */
		k = expand ? jt_lv__frame_scopes(lv, &smp->frames[i], i > user, sc,
						 JT_LV_DEPTH_MAX) : 0;
		for (k = k ? k - 1 : 0;; k--) {
			node = child(s, node, name);
			if (node == JT_STK_NONE)
				goto nomem;
			s->nodes[node].total += weight;
			if (!k)
				break;
			name = jt_stacks__inlined(s, sc[k - 1].name);
			if (name < 0)
				return -ENOMEM;
		}
	}
	s->nodes[node].self += weight;
	*leaf = node;
	return 0;
nomem:
	jt_err("out of memory building stacks");
	return -ENOMEM;
}

int jt_stacks__add(struct jt_stacks *s, const struct jt_lv *lv, const struct jt_rec_sample *smp,
		   uint32_t *leaf)
{
	return add(s, lv, smp, 1, leaf);
}

int jt_stacks__add_weight(struct jt_stacks *s, const struct jt_lv *lv,
			  const struct jt_rec_sample *smp, uint64_t weight, uint32_t *leaf)
{
	return add(s, lv, smp, weight, leaf);
}

int jt_stacks__add_named(struct jt_stacks *s, uint32_t pid, const char *name,
			 enum jt_lv_kind kind, uint64_t weight, uint32_t *leaf)
{
	uint32_t node = child(s, JT_STK_ROOT, pid);
	int64_t idx;

	if (node == JT_STK_NONE)
		goto nomem;
	idx = intern(s, name, kind);
	if (idx < 0)
		goto nomem;
	s->nodes[JT_STK_ROOT].total += weight;
	s->nodes[node].total += weight;
	node = child(s, node, idx);
	if (node == JT_STK_NONE)
		goto nomem;
	s->nodes[node].total += weight;
	s->nodes[node].self += weight;
	*leaf = node;
	return 0;
nomem:
	jt_err("out of memory building stacks");
	return -ENOMEM;
}

static int cmp_nodes(const void *a, const void *b, void *ctx)
{
	const struct jt_stacks *s = ctx;
	const struct jt_stk_node *x = &s->nodes[*(const uint32_t *)a];
	const struct jt_stk_node *y = &s->nodes[*(const uint32_t *)b];
	const struct name *nx, *ny;
	int c;

	if (x->depth == 1)	/* processes, by pid */
		return x->name < y->name ? -1 : x->name > y->name;
	nx = &s->names[x->name];
	ny = &s->names[y->name];
	if (nx->kind != ny->kind)
		return nx->kind < ny->kind ? -1 : 1;
	c = strcmp(nx->s, ny->s);
	return c;
}

void jt_stacks__sort(struct jt_stacks *s)
{
	uint32_t *tmp = NULL, c;
	size_t cap = 0, n, i, k;

	for (i = 0; i < s->nr_nodes; i++) {
		n = 0;
		for (c = s->nodes[i].child; c != JT_STK_NONE; c = s->nodes[c].next) {
			if (n == cap) {
				uint32_t *t = realloc(tmp, (cap = cap ? 2 * cap : 64) * sizeof(*t));

				if (!t) {	/* unsorted output is still right */
					free(tmp);
					return;
				}
				tmp = t;
			}
			tmp[n++] = c;
		}
		if (n < 2)
			continue;
		qsort_r(tmp, n, sizeof(*tmp), cmp_nodes, s);
		s->nodes[i].child = tmp[0];
		for (k = 0; k + 1 < n; k++)
			s->nodes[tmp[k]].next = tmp[k + 1];
		s->nodes[tmp[n - 1]].next = JT_STK_NONE;
	}
	free(tmp);
}

void jt_stacks__walk_init(struct jt_stacks_walk *w, const struct jt_stacks *s, uint32_t top)
{
	*w = (struct jt_stacks_walk){ .s = s, .top = top, .idx = top };
}

const struct jt_stk_node *jt_stacks__walk_next(struct jt_stacks_walk *w, bool *leaving)
{
	const struct jt_stk_node *n;

	if (w->idx == JT_STK_NONE)
		return NULL;
	n = jt_stacks__node(w->s, w->idx);
	*leaving = w->up;
	if (!w->up && n->child != JT_STK_NONE) {
		w->idx = n->child;		/* down first */
	} else if (!w->up) {
		w->up = true;			/* a leaf: leave it next */
	} else if (w->idx == w->top) {
		w->idx = JT_STK_NONE;		/* left the top: done */
	} else if (n->next != JT_STK_NONE) {
		w->idx = n->next;		/* on to the next sibling, going down */
		w->up = false;
	} else {
		w->idx = n->parent;		/* the last child: leave the parent */
	}
	return n;
}

size_t jt_stacks__nr_nodes(const struct jt_stacks *s)
{
	return s->nr_nodes;
}

const struct jt_stk_node *jt_stacks__node(const struct jt_stacks *s, uint32_t idx)
{
	return &s->nodes[idx];
}

size_t jt_stacks__nr_names(const struct jt_stacks *s)
{
	return s->nr_names;
}

const char *jt_stacks__name(const struct jt_stacks *s, uint32_t name, enum jt_lv_kind *kind)
{
	if (kind)
		*kind = s->names[name].kind;
	return s->names[name].s;
}

void jt_stacks__proc_label(const struct jt_lv *lv, uint32_t pid, char *buf, size_t cap)
{
	const struct jt_lv_proc *p = jt_lv__proc(lv, pid);
	char *comm;
	size_t len;

	if (!p || !p->comm[0] || !(comm = clean_copy(p->comm, strlen(p->comm), &len))) {
		snprintf(buf, cap, "[pid %u]", pid);
		return;
	}
	snprintf(buf, cap, "%s (%u)", comm, pid);
	free(comm);
}

int jt_stacks__per_proc(const struct jt_stacks *s, uint32_t log_flags)
{
	uint32_t c = s->nodes[JT_STK_ROOT].child;

	return (log_flags & JT_LOG_F_SYSTEM_WIDE) || (c != JT_STK_NONE && s->nodes[c].next != JT_STK_NONE);
}
