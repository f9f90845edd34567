// SPDX-License-Identifier: GPL-2.0
/* Folded stacks from the merged stack tree: one line per stack with self samples. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/folded.h"
#include "base/util.h"

struct line {
	char *buf;
	size_t len, cap;
};

static int reserve(struct line *l, size_t more)
{
	size_t cap = l->cap ? l->cap : 4096;
	char *b;

	if (l->len + more <= l->cap)
		return 0;
	while (cap < l->len + more)
		cap *= 2;
	b = realloc(l->buf, cap);
	if (!b)
		return -ENOMEM;
	l->buf = b;
	l->cap = cap;
	return 0;
}

/* Append a frame's name, ';' turned into ':' so it cannot split the stack. */
static int put_name(struct line *l, const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix), i;

	if (reserve(l, n + m + 1))
		return -ENOMEM;
	if (l->len)
		l->buf[l->len++] = ';';
	for (i = 0; i < n; i++)
		l->buf[l->len++] = name[i] == ';' ? ':' : name[i];
	memcpy(l->buf + l->len, suffix, m);
	l->len += m;
	return 0;
}

struct walk {
	FILE *out;
	const struct jt_stacks *s;
	const struct jt_lv *lv;
	bool per_proc, annotate;
	struct line l;
};

/* Add n's name to the line, and write the line if samples end at n. */
static int visit(struct walk *w, const struct jt_stk_node *n)
{
	char num[32];
	int len;

	if (n->depth == 1 && w->per_proc) {
		char label[64];

		jt_stacks__proc_label(w->lv, n->name, label, sizeof(label));
		if (put_name(&w->l, label, ""))
			return -ENOMEM;
	} else if (n->depth >= 2) {
		enum jt_lv_kind kind;
		const char *name = jt_stacks__name(w->s, n->name, &kind);
		/* an inlined frame is marked _[i] already, as async-profiler marks it */
		const char *sfx = !w->annotate ? "" :
				  kind == JT_LV_JIT && !jt_lv__is_inlined(name, strlen(name)) ?
				  "_[j]" : kind == JT_LV_KERNEL ? "_[k]" : "";

		if (put_name(&w->l, name, sfx))
			return -ENOMEM;
	}
	if (n->self && n->depth >= 1) {
		len = snprintf(num, sizeof(num), " %" PRIu64 "\n", n->self);
		if (!w->l.len) {	/* a sample without frames: name its process */
			char label[64];

			jt_stacks__proc_label(w->lv, n->name, label, sizeof(label));
			if (fputs(label, w->out) == EOF)
				return -EIO;
		}
		if ((w->l.len && fwrite(w->l.buf, 1, w->l.len, w->out) != w->l.len) ||
		    fwrite(num, 1, len, w->out) != (size_t)len)
			return -EIO;
	}
	return 0;
}

/*
 * The tree in preorder (jt_stacks__walk: no recursion). marks[d] is the line's length
 * before the open node at depth d added its name, so leaving it cuts the name off again.
 */
int jt_folded__write(FILE *out, const struct jt_stacks *s, const struct jt_lv *lv,
		     bool per_proc, bool annotate)
{
	struct walk w = { .out = out, .s = s, .lv = lv, .per_proc = per_proc,
			  .annotate = annotate };
	const struct jt_stk_node *n;
	struct jt_stacks_walk tw;
	size_t *marks = NULL, cap = 0;
	bool leaving;
	int err = 0;

	jt_stacks__walk_init(&tw, s, JT_STK_ROOT);
	while ((n = jt_stacks__walk_next(&tw, &leaving))) {
		if (leaving) {
			w.l.len = marks[n->depth];
			continue;
		}
		if (jt_array_grow(&marks, &cap, n->depth + 1, sizeof(*marks))) {
			err = -ENOMEM;
			break;
		}
		marks[n->depth] = w.l.len;
		err = visit(&w, n);
		if (err)
			break;
	}
	free(marks);
	free(w.l.buf);
	return err;
}
