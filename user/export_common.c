// SPDX-License-Identifier: GPL-2.0
/*
 * Shared by the exports: interning, call balancing, off-CPU wait names, buffered output and
 * JSON strings.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "export_common.h"
#include "jt_events.h"
#include "names.h"
#include "text.h"
#include "util.h"

/* ---- interning ---- */

struct jt_xent {
	char *key;
	size_t len;
	size_t next;		/* previous entry with the same hash, + 1; 0: none */
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

long jt_xintern__get(struct jt_xintern *t, const void *key, size_t len, bool *added)
{
	uint64_t h = hash_bytes(key, len);
	size_t i = (size_t)(uintptr_t)jt_hash__get(&t->h, h);
	struct jt_xent *e;

	if (added)
		*added = false;
	while (i) {
		e = &t->v[i - 1];
		if (e->len == len && !memcmp(e->key, key, len))
			return i - 1;
		i = e->next;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct jt_xent *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	e = &t->v[t->n];
	e->key = malloc(len ? len : 1);
	if (!e->key)
		return -ENOMEM;
	memcpy(e->key, key, len);
	e->len = len;
	e->next = (size_t)(uintptr_t)jt_hash__get(&t->h, h);
	if (jt_hash__put(&t->h, h, (void *)(uintptr_t)(t->n + 1))) {
		free(e->key);
		return -ENOMEM;
	}
	if (added)
		*added = true;
	return t->n++;
}

long jt_xintern__pair(struct jt_xintern *t, const char *a, const char *b, bool *added)
{
	size_t alen = strlen(a), blen = strlen(b);
	char *key = malloc(alen + 1 + blen);
	long idx;

	if (!key)
		return -ENOMEM;
	memcpy(key, a, alen + 1);
	memcpy(key + alen + 1, b, blen);
	idx = jt_xintern__get(t, key, alen + 1 + blen, added);
	free(key);
	return idx;
}

const void *jt_xintern__key(const struct jt_xintern *t, size_t idx, size_t *len)
{
	*len = t->v[idx].len;
	return t->v[idx].key;
}

void jt_xintern__fini(struct jt_xintern *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].key);
	free(t->v);
	jt_hash__fini(&t->h);
	memset(t, 0, sizeof(*t));
}

/* ---- call balancing ---- */

struct xstack {
	uint64_t *ids;
	size_t n, cap;
};

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static struct xstack *stack_of(struct jt_xcalls *c, uint64_t key)
{
	struct xstack *st = jt_hash__get(&c->threads, key);

	if (st)
		return st;
	if (c->nr_order == c->cap_order) {
		size_t cap = c->cap_order ? 2 * c->cap_order : 16;
		uint64_t *o = realloc(c->order, cap * sizeof(*o));

		if (!o)
			return NULL;
		c->order = o;
		c->cap_order = cap;
	}
	st = calloc(1, sizeof(*st));
	if (!st || jt_hash__put(&c->threads, key, st)) {
		free(st);
		return NULL;
	}
	c->order[c->nr_order++] = key;
	return st;
}

int jt_xcalls__see(struct jt_xcalls *c, uint32_t pid, uint32_t tid)
{
	return stack_of(c, thread_key(pid, tid)) ? 0 : -ENOMEM;
}

int jt_xcalls__feed(struct jt_xcalls *c, const struct jt_rec_call *rec, jt_xcalls_fn *fn,
		    void *ctx)
{
	struct xstack *st = stack_of(c, thread_key(rec->pid, rec->tid));
	size_t i;
	int err;

	if (!st)
		return -ENOMEM;
	if (rec->h.type == JT_REC_ENTER) {
		if (st->n == st->cap) {
			size_t cap = st->cap ? 2 * st->cap : 16;
			uint64_t *ids = realloc(st->ids, cap * sizeof(*ids));

			if (!ids)
				return -ENOMEM;
			st->ids = ids;
			st->cap = cap;
		}
		st->ids[st->n++] = rec->id;
		return fn(ctx, true, rec->pid, rec->tid, rec->id, rec->h.ts);
	}
	/* a leave closes the innermost open call of its method, and every call above it */
	for (i = st->n; i > 0 && st->ids[i - 1] != rec->id; i--)
		;
	if (!i) {
		c->orphan_leaves++;
		return 0;
	}
	while (st->n >= i) {
		if (st->n > i)
			c->implied_leaves++;
		err = fn(ctx, false, rec->pid, rec->tid, st->ids[--st->n], rec->h.ts);
		if (err)
			return err;
	}
	return 0;
}

int jt_xcalls__finish(struct jt_xcalls *c, uint64_t ts, jt_xcalls_fn *fn, void *ctx)
{
	size_t t;
	int err;

	for (t = 0; t < c->nr_order; t++) {
		struct xstack *st = jt_hash__get(&c->threads, c->order[t]);

		while (st->n) {
			c->open_at_end++;
			err = fn(ctx, false, c->order[t] >> 32, (uint32_t)c->order[t],
				 st->ids[--st->n], ts);
			if (err)
				return err;
		}
	}
	return 0;
}

void jt_xcalls__report(const struct jt_xcalls *c, const char *path)
{
	if (c->orphan_leaves)
		jt_err("%s: %" PRIu64 " leave(s) of calls entered before recording began: "
		       "dropped", path, c->orphan_leaves);
	if (c->implied_leaves)
		jt_err("%s: %" PRIu64 " call(s) without a leave of their own: closed when "
		       "their caller left", path, c->implied_leaves);
	if (c->open_at_end)
		jt_err("%s: %" PRIu64 " call(s) still open at the end: closed at the last "
		       "timestamp", path, c->open_at_end);
}

void jt_xcalls__fini(struct jt_xcalls *c)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&c->threads, &pos, &key, &val)) {
		free(((struct xstack *)val)->ids);
		free(val);
	}
	jt_hash__fini(&c->threads);
	free(c->order);
	memset(c, 0, sizeof(*c));
}

/* ---- off-CPU waits ---- */

const char *jt_xoff__name(unsigned state, char *buf)
{
	snprintf(buf, JT_XOFF_NAME_CAP, "off-CPU: %s%s", jt_off_state__name(state),
		 state == JT_OFF_SHORT ? " waits" : "");
	return buf;
}

/* ---- output ---- */

#define XOUT_CAP (256U * 1024)

int jt_xout__init(struct jt_xout *o, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->buf = malloc(XOUT_CAP);
	return o->buf ? 0 : -ENOMEM;
}

static void xflush(struct jt_xout *o)
{
	if (o->len && !o->err && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = errno ? errno : EIO;
	o->len = 0;
}

void jt_xout__mem(struct jt_xout *o, const void *p, size_t n)
{
	if (o->len + n > XOUT_CAP)
		xflush(o);
	if (n > XOUT_CAP) {
		if (!o->err && fwrite(p, 1, n, o->f) != n)
			o->err = errno ? errno : EIO;
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

void jt_xout__str(struct jt_xout *o, const char *s)
{
	jt_xout__mem(o, s, strlen(s));
}

void jt_xout__printf(struct jt_xout *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		jt_xout__mem(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void jt_xout__u64(struct jt_xout *o, uint64_t v)
{
	jt_xout__printf(o, "%" PRIu64, v);
}

void jt_xout__usec(struct jt_xout *o, uint64_t ns)
{
	jt_xout__printf(o, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

void jt_xout__json_str(struct jt_xout *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, run, len;
	char esc[8];

	jt_xout__mem(o, "\"", 1);
	while (i < n) {
		/* copy a run of bytes that need nothing */
		for (run = i; run < n && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' &&
			      p[run] != '\\' && p[run] != '<'; run++)
			;
		jt_xout__mem(o, s + i, run - i);
		i = run;
		if (i == n)
			break;
		if (p[i] >= 0x80) {
			len = jt_text__utf8_len(p + i, n - i);
			if (!len) {
				jt_xout__mem(o, "\\ufffd", 6);
				i++;
			} else if (jt_text__is_control(p + i, len)) {
				/* U+0080..U+009F, C1 controls: a terminal may act on them */
				memcpy(esc, "\\u00", 4);
				esc[4] = hex[p[i + 1] >> 4];
				esc[5] = hex[p[i + 1] & 15];
				jt_xout__mem(o, esc, 6);
				i += len;
			} else {
				jt_xout__mem(o, s + i, len);
				i += len;
			}
			continue;
		}
		switch (p[i]) {
		case '"':
			jt_xout__mem(o, "\\\"", 2);
			break;
		case '\\':
			jt_xout__mem(o, "\\\\", 2);
			break;
		case '\n':
			jt_xout__mem(o, "\\n", 2);
			break;
		case '\t':
			jt_xout__mem(o, "\\t", 2);
			break;
		default:	/* other control characters, DEL and '<' */
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[p[i] >> 4];
			esc[5] = hex[p[i] & 15];
			jt_xout__mem(o, esc, 6);
			break;
		}
		i++;
	}
	jt_xout__mem(o, "\"", 1);
}

int jt_xout__fini(struct jt_xout *o)
{
	int err;

	xflush(o);
	if (!o->err && fflush(o->f))
		o->err = errno ? errno : EIO;
	err = o->err;
	free(o->buf);
	o->buf = NULL;
	return err;
}
