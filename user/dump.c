// SPDX-License-Identifier: GPL-2.0
/* `jitrace dump`: each record of a .jtl log as one line of text. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "jt_events.h"
#include "log.h"
#include "names.h"
#include "util.h"

/*
 * Lines are formatted by hand into one large buffer written with fwrite(): dump may print
 * millions of lines, and the caller's FILE may already be in use, too late for setvbuf().
 */
#define OUT_CAP (1U << 20)
#define LINE_FIXED 512		/* room for a line's numbers and literal text between strings */

struct out {
	FILE *f;
	char *buf;
	size_t len;
	int err;		/* errno of the first failed write */
};

/* A module's file name, for the frames that name it. */
struct mod {
	uint64_t id;
	char *base;		/* NULL: free slot */
	size_t len;
};

/* Modules by id: open addressing, at most half full. */
struct mods {
	struct mod *v;
	size_t cap;		/* a power of two */
	size_t n;
};

static void out_flush(struct out *o)
{
	if (o->len && !o->err && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = errno ? errno : EIO;
	o->len = 0;
}

/* Make room for n more bytes; n is well below OUT_CAP. */
static void room(struct out *o, size_t n)
{
	if (o->len + n > OUT_CAP)
		out_flush(o);
}

static void put_mem(struct out *o, const char *s, size_t n)
{
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

#define PUT(o, lit) put_mem((o), (lit), sizeof(lit) - 1)

static void put_str(struct out *o, const char *s)
{
	put_mem(o, s, strlen(s));
}

static void put_u64(struct out *o, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		o->buf[o->len++] = tmp[--n];
}

static void put_i64(struct out *o, int64_t v)
{
	if (v < 0) {
		o->buf[o->len++] = '-';
		put_u64(o, -(uint64_t)v);
	} else {
		put_u64(o, v);
	}
}

static const char hexdig[] = "0123456789abcdef";

static void put_hex(struct out *o, uint64_t v)
{
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = hexdig[v & 15];
		v >>= 4;
	} while (v);
	PUT(o, "0x");
	while (n)
		o->buf[o->len++] = tmp[--n];
}

/* ns since the header's start: signed, as a record may precede it */
static void put_time(struct out *o, uint64_t ts, uint64_t start)
{
	put_i64(o, (int64_t)(ts - start));
}

/*
 * Bytes from the log, never trusted to be text: anything unprintable, and the backslash
 * itself, becomes \xHH. A value with more fields after it (sep) also escapes ' ' and ','.
 */
static void put_esc(struct out *o, const char *s, size_t n, bool sep)
{
	size_t i;

	room(o, 4 * n + LINE_FIXED);	/* and what follows it, as if a line began */
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c >= 0x7f || c == '\\' || (sep && (c == ' ' || c == ','))) {
			PUT(o, "\\x");
			o->buf[o->len++] = hexdig[c >> 4];
			o->buf[o->len++] = hexdig[c & 15];
		} else {
			o->buf[o->len++] = c;
		}
	}
}

static size_t mod_slot(const struct mods *m, uint64_t id)
{
	size_t i = (id * 0x9e3779b97f4a7c15ULL) >> 32 & (m->cap - 1);

	while (m->v[i].base && m->v[i].id != id)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static const struct mod *mod_find(const struct mods *m, uint64_t id)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = mod_slot(m, id);
	return m->v[i].base ? &m->v[i] : NULL;
}

/* Remember the file name of a module record's path; a later record of the id replaces it. */
static int mod_add(struct mods *m, uint64_t id, const char *path, size_t len)
{
	const char *base = path + len;
	struct mod *slot;
	char *copy;
	size_t i;

	while (base > path && base[-1] != '/')
		base--;

	if (2 * (m->n + 1) > m->cap) {
		struct mods grown = { .cap = m->cap ? 2 * m->cap : 64, .n = m->n };

		grown.v = calloc(grown.cap, sizeof(*grown.v));
		if (!grown.v)
			return -ENOMEM;
		for (i = 0; i < m->cap; i++)
			if (m->v[i].base)
				grown.v[mod_slot(&grown, m->v[i].id)] = m->v[i];
		free(m->v);
		*m = grown;
	}
	len -= base - path;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, base, len);
	copy[len] = '\0';

	slot = &m->v[mod_slot(m, id)];
	if (slot->base)
		free(slot->base);
	else
		m->n++;
	*slot = (struct mod){ .id = id, .base = copy, .len = len };
	return 0;
}

static void mods_free(struct mods *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->v[i].base);
	free(m->v);
}

static void put_frames(struct out *o, const struct mods *mods, const struct jt_rec_sample *s)
{
	const struct mod *mod;
	unsigned i;

	PUT(o, " frames=");
	for (i = 0; i < s->nr_frames; i++) {
		const struct jt_frame *f = &s->frames[i];
		uint64_t id = JT_FRAME_ID(f->ref);

		room(o, LINE_FIXED);
		if (i)
			PUT(o, ",");
		switch (JT_FRAME_KIND(f->ref)) {
		case JT_FRAME_METHOD:
			PUT(o, "#");
			put_u64(o, id);
			PUT(o, "+");
			break;
		case JT_FRAME_MODULE:
			mod = mod_find(mods, id);
			if (mod) {
				put_esc(o, mod->base, mod->len, true);
			} else {	/* the log broke its promise: show it */
				PUT(o, "module?");
				put_u64(o, id);
			}
			PUT(o, "+");
			break;
		case JT_FRAME_USER:
			break;
		case JT_FRAME_KERNEL:
			PUT(o, "[k]");
			break;
		case JT_FRAME_SYMBOL:
			PUT(o, "sym#");
			put_u64(o, id);
			PUT(o, "+");
			break;
		default:
			PUT(o, "?");
			put_hex(o, f->ref);
			PUT(o, "+");
			break;
		}
		put_hex(o, f->off);
	}
}

/* Returns 0 or -ENOMEM. */
static int put_rec(struct out *o, struct mods *mods, const struct jt_rec_hdr *rec,
		   uint64_t start)
{
	room(o, LINE_FIXED);
	put_time(o, rec->ts, start);
	PUT(o, " ");
	switch (rec->type) {
	case JT_REC_METHOD: {
		const struct jt_rec_method *m = (const void *)rec;

		PUT(o, "method id=");
		put_u64(o, m->id);
		PUT(o, " pid=");
		put_u64(o, m->pid);
		PUT(o, " start=");
		put_hex(o, m->start);
		PUT(o, " size=");
		put_hex(o, m->size);
		PUT(o, " load=");
		put_time(o, m->load_ts, start);
		PUT(o, " src=");
		put_str(o, jt_src__name(m->src));
		PUT(o, " agent_id=");
		put_u64(o, m->agent_id);
		PUT(o, " name=");
		put_esc(o, m->name, m->name_len, false);
		break;
	}
	case JT_REC_UNLOAD:
	case JT_REC_ENTER:
	case JT_REC_LEAVE: {
		const struct jt_rec_call *c = (const void *)rec;

		put_str(o, jt_rec__name(rec->type));
		PUT(o, " pid=");
		put_u64(o, c->pid);
		PUT(o, " tid=");
		put_u64(o, c->tid);
		PUT(o, " id=");
		put_u64(o, c->id);
		break;
	}
	case JT_REC_SAMPLE: {
		const struct jt_rec_sample *s = (const void *)rec;

		PUT(o, "sample pid=");
		put_u64(o, s->pid);
		PUT(o, " tid=");
		put_u64(o, s->tid);
		PUT(o, " cpu=");
		put_u64(o, s->cpu);
		put_frames(o, mods, s);
		break;
	}
	case JT_REC_EXEC: {
		const struct jt_rec_exec *e = (const void *)rec;

		PUT(o, "exec pid=");
		put_u64(o, e->pid);
		PUT(o, " comm=");
		put_esc(o, e->comm, strnlen(e->comm, sizeof(e->comm)), true);
		PUT(o, " path=");
		put_esc(o, e->path, e->path_len, false);
		break;
	}
	case JT_REC_EXIT: {
		const struct jt_rec_exit *e = (const void *)rec;

		PUT(o, "exit pid=");
		put_u64(o, e->pid);
		break;
	}
	case JT_REC_DROP: {
		const struct jt_rec_drop *d = (const void *)rec;

		PUT(o, "drop what=");
		put_str(o, jt_drop__name(d->what));
		PUT(o, " count=");
		put_u64(o, d->count);
		break;
	}
	case JT_REC_PROC: {
		const struct jt_rec_proc *p = (const void *)rec;

		PUT(o, "proc pid=");
		put_u64(o, p->pid);
		PUT(o, " comm=");
		put_esc(o, p->comm, strnlen(p->comm, sizeof(p->comm)), true);
		PUT(o, " cmdline=");
		put_esc(o, p->cmdline, p->cmdline_len, false);
		break;
	}
	case JT_REC_MODULE: {
		const struct jt_rec_module *m = (const void *)rec;

		if (mod_add(mods, m->id, m->path, m->path_len))
			return -ENOMEM;
		PUT(o, "module id=");
		put_u64(o, m->id);
		PUT(o, " pid=");
		put_u64(o, m->pid);
		PUT(o, " start=");
		put_hex(o, m->start);
		PUT(o, " end=");
		put_hex(o, m->end);
		PUT(o, " pgoff=");
		put_hex(o, m->pgoff);
		PUT(o, " path=");
		put_esc(o, m->path, m->path_len, false);
		break;
	}
	case JT_REC_SYMBOL: {
		const struct jt_rec_symbol *y = (const void *)rec;

		PUT(o, "symbol id=");
		put_u64(o, y->id);
		PUT(o, " pid=");
		put_u64(o, y->pid);
		PUT(o, " module=");
		put_u64(o, y->module);
		PUT(o, " start=");
		put_hex(o, y->start);
		PUT(o, " size=");
		put_hex(o, y->size);
		PUT(o, " name=");
		put_esc(o, y->name, y->name_len, false);
		break;
	}
	case JT_REC_END: {
		const struct jt_rec_end *e = (const void *)rec;

		PUT(o, "end records=");
		put_u64(o, e->records);
		break;
	}
	default:
		PUT(o, "unknown type=");
		put_u64(o, rec->type);
		PUT(o, " size=");
		put_u64(o, rec->size);
		break;
	}
	PUT(o, "\n");
	return 0;
}

int jt_dump(FILE *out, const char *path, unsigned int flags)
{
	struct out o = { .f = out };
	struct mods mods = { 0 };
	const struct jt_rec_hdr *rec;
	struct jt_log_reader *r;
	uint64_t start;
	int ret = 1;

	r = jt_logr__open_flags(path, flags);
	if (!r)
		return 1;
	o.buf = malloc(OUT_CAP);
	if (!o.buf) {
		jt_err("%s: out of memory", path);
		goto cleanup;
	}
	start = jt_logr__header(r)->start_ns;
	while (!o.err && (rec = jt_logr__next(r))) {
		if (put_rec(&o, &mods, rec, start)) {
			jt_err("%s: out of memory", path);
			goto cleanup;
		}
	}
	out_flush(&o);
	if (!o.err && fflush(out))
		o.err = errno ? errno : EIO;
	if (o.err) {
		jt_err("%s: writing the dump: %s", path, strerror(o.err));
		goto cleanup;
	}

	switch (jt_logr__state(r)) {
	case JT_LOGR_TRUNCATED:
		jt_err("%s: truncated: %s; shown up to the last whole block", path,
		       jt_logr__why(r));
		ret = 0;
		break;
	case JT_LOGR_CORRUPT:
		jt_err("%s: corrupt: %s", path, jt_logr__why(r));
		break;
	default:
		ret = 0;
		break;
	}

cleanup:
	mods_free(&mods);
	free(o.buf);
	jt_logr__close(r);
	return ret;
}
