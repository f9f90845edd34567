// SPDX-License-Identifier: GPL-2.0
/* `jitrace dump`: each record of a .jtl log as one line of text. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "views/dump.h"
#include "log/format.h"
#include "log/source.h"
#include "base/util.h"

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

/* " key=value", each value as the put_ of its kind writes it */
#define U64(o, key, v) (PUT(o, " " key "="), put_u64(o, v))
#define HEX(o, key, v) (PUT(o, " " key "="), put_hex(o, v))
#define STR(o, key, s) (PUT(o, " " key "="), put_str(o, s))
#define ESC(o, key, s, n, sep) (PUT(o, " " key "="), put_esc(o, s, n, sep))

static void put_frames(struct out *o, const struct jt_lv *lv, const struct jt_rec_sample *s)
{
	const char *base;
	size_t len;
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
			base = jt_lv__frame_file(lv, f, &len);
			if (base) {
				put_esc(o, base, len, true);
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

/*
 * " method=ID pid=PID files=A,B lines=OFF=FILE:LINE,...": FILE the index into files. Names
 * that run past the record (the reader checks only the entries) are cut there and the
 * bytes missing said: " names_past_end=N".
 */
static void put_lines(struct out *o, const struct jt_rec_lines *l)
{
	size_t fixed = sizeof(*l) + (size_t)l->nr_lines * sizeof(struct jt_line);
	size_t room_names = l->h.size > fixed ? l->h.size - fixed : 0;
	size_t len = l->names_len < room_names ? l->names_len : room_names;
	const char *names = (const char *)(l->lines + l->nr_lines), *end = names + len;
	unsigned int i;

	U64(o, "method", l->method);
	U64(o, "pid", l->pid);
	PUT(o, " files=");
	for (i = 0; names < end; i++) {
		const char *nul = memchr(names, '\0', end - names);
		size_t n = nul ? (size_t)(nul - names) : (size_t)(end - names);

		if (i)
			PUT(o, ",");
		put_esc(o, names, n, true);
		names = nul ? nul + 1 : end;
	}
	if (l->names_len > len)
		U64(o, "names_past_end", l->names_len - len);
	PUT(o, " lines=");
	for (i = 0; i < l->nr_lines && fixed <= l->h.size; i++) {
		room(o, LINE_FIXED);
		if (i)
			PUT(o, ",");
		put_hex(o, l->lines[i].off);
		PUT(o, "=");
		put_u64(o, l->lines[i].file);
		PUT(o, ":");
		put_u64(o, l->lines[i].line);
	}
}

/* A scope's name or file from an inline record's names (len bytes), escaped; "?" if outside. */
static void put_scope_str(struct out *o, const char *names, uint32_t len, uint32_t at)
{
	if (at >= len) {
		PUT(o, "?");
		return;
	}
	put_esc(o, names + at, strnlen(names + at, len - at), true);
}

/*
 * " method=ID pid=PID ranges=N scopes=N at=OFF:NAME@FILE:LINE<NAME@FILE:LINE...,..." each
 * range's end and its chain, innermost first; a record whose counts run past its size is
 * said " past_end" and its entries not shown.
 */
static void put_inline(struct out *o, const struct jt_rec_inline *r)
{
	const struct jt_inline_head *h = &r->head;
	const struct jt_inline_range *ranges = (const void *)(r + 1);
	const struct jt_inline_scope *scopes;
	uint64_t need = sizeof(*r) + (uint64_t)h->nr_ranges * sizeof(*ranges) +
			(uint64_t)h->nr_scopes * sizeof(*scopes) + h->names_len;
	uint32_t i, at, depth;
	const char *names;

	U64(o, "method", r->method);
	U64(o, "pid", r->pid);
	U64(o, "ranges", h->nr_ranges);
	U64(o, "scopes", h->nr_scopes);
	if (need > r->h.size) {
		PUT(o, " past_end");
		return;
	}
	scopes = (const void *)(ranges + h->nr_ranges);
	names = (const char *)(scopes + h->nr_scopes);
	PUT(o, " at=");
	for (i = 0; i < h->nr_ranges; i++) {
		if (i)
			PUT(o, ",");
		room(o, LINE_FIXED);
		put_hex(o, ranges[i].off);
		PUT(o, ":");
		/* as deep as a reader follows: a crafted record's chain may loop */
		for (at = ranges[i].scope, depth = 0;
		     at < h->nr_scopes && depth < JT_INLINE_DEPTH_MAX;
		     at = scopes[at].caller, depth++) {
			if (depth)
				PUT(o, "<");
			put_scope_str(o, names, h->names_len, scopes[at].name);
			PUT(o, "@");
			put_scope_str(o, names, h->names_len, scopes[at].file);
			PUT(o, ":");
			put_u64(o, scopes[at].line);
		}
	}
}

/* TIME TYPE key=value ...: the type by its name (log/format.h), "unknown" for a newer one's. */
static void put_rec(struct out *o, const struct jt_lv *lv, const struct jt_rec_hdr *rec,
		    uint64_t start)
{
	room(o, LINE_FIXED);
	put_time(o, rec->ts, start);
	PUT(o, " ");
	put_str(o, jt_rec__name(rec->type));
	switch (rec->type) {
	case JT_REC_METHOD: {
		const struct jt_rec_method *m = (const void *)rec;

		U64(o, "id", m->id);
		U64(o, "pid", m->pid);
		HEX(o, "start", m->start);
		HEX(o, "size", m->size);
		PUT(o, " load=");
		put_time(o, m->load_ts, start);
		STR(o, "src", jt_src__name(m->src));
		U64(o, "agent_id", m->agent_id);
		ESC(o, "name", m->name, m->name_len, false);
		break;
	}
	case JT_REC_UNLOAD:
	case JT_REC_ENTER:
	case JT_REC_LEAVE: {
		const struct jt_rec_call *c = (const void *)rec;

		U64(o, "pid", c->pid);
		U64(o, "tid", c->tid);
		U64(o, "id", c->id);
		break;
	}
	case JT_REC_CALLSUM: {
		const struct jt_rec_callsum *c = (const void *)rec;

		U64(o, "pid", c->pid);
		U64(o, "tid", c->tid);
		U64(o, "id", c->id);
		U64(o, "calls", c->calls);
		U64(o, "incl_ns", c->incl_ns);
		U64(o, "excl_ns", c->excl_ns);
		break;
	}
	case JT_REC_SPAN: {
		const struct jt_rec_span *c = (const void *)rec;

		U64(o, "pid", c->pid);
		U64(o, "tid", c->tid);
		U64(o, "id", c->id);
		PUT(o, " enter=");
		put_time(o, c->enter_ts, start);
		U64(o, "self_ns", c->self_ns);
		break;
	}
	case JT_REC_SAMPLE: {
		const struct jt_rec_sample *s = (const void *)rec;

		U64(o, "pid", s->pid);
		U64(o, "tid", s->tid);
		U64(o, "cpu", s->cpu);
		put_frames(o, lv, s);
		break;
	}
	case JT_REC_OFFCPU: {
		const struct jt_rec_offcpu *f = (const void *)rec;

		U64(o, "pid", f->smp.pid);
		U64(o, "tid", f->smp.tid);
		U64(o, "cpu", f->smp.cpu);
		STR(o, "state", jt_off_state__name(f->state));
		U64(o, "off_ns", f->off_ns);
		U64(o, "count", f->count);
		U64(o, "left", f->smp.h.ts > start ? f->smp.h.ts - start : 0);
		put_frames(o, lv, &f->smp);
		break;
	}
	case JT_REC_EXEC: {
		const struct jt_rec_exec *e = (const void *)rec;

		U64(o, "pid", e->pid);
		ESC(o, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)), true);
		ESC(o, "path", e->path, e->path_len, false);
		break;
	}
	case JT_REC_EXIT: {
		const struct jt_rec_exit *e = (const void *)rec;

		U64(o, "pid", e->pid);
		break;
	}
	case JT_REC_DROP: {
		const struct jt_rec_drop *d = (const void *)rec;

		STR(o, "what", jt_drop__name(d->what));
		if (d->tid)	/* said by loggers since per-thread drops only */
			U64(o, "tid", d->tid);
		U64(o, "count", d->count);
		break;
	}
	case JT_REC_PROC: {
		const struct jt_rec_proc *p = (const void *)rec;

		U64(o, "pid", p->pid);
		ESC(o, "comm", p->comm, strnlen(p->comm, sizeof(p->comm)), true);
		ESC(o, "cmdline", p->cmdline, p->cmdline_len, false);
		break;
	}
	case JT_REC_MODULE: {
		const struct jt_rec_module *m = (const void *)rec;

		U64(o, "id", m->id);
		U64(o, "pid", m->pid);
		HEX(o, "start", m->start);
		HEX(o, "end", m->end);
		HEX(o, "pgoff", m->pgoff);
		ESC(o, "path", m->path, m->path_len, false);
		break;
	}
	case JT_REC_SYMBOL: {
		const struct jt_rec_symbol *y = (const void *)rec;

		U64(o, "id", y->id);
		U64(o, "pid", y->pid);
		U64(o, "module", y->module);
		HEX(o, "start", y->start);
		HEX(o, "size", y->size);
		ESC(o, "name", y->name, y->name_len, false);
		break;
	}
	case JT_REC_LINES:
		put_lines(o, (const void *)rec);
		break;
	case JT_REC_INLINE:
		put_inline(o, (const void *)rec);
		break;
	case JT_REC_THREAD: {
		const struct jt_rec_thread *t = (const void *)rec;

		U64(o, "pid", t->pid);
		U64(o, "tid", t->tid);
		ESC(o, "comm", t->comm, strnlen(t->comm, sizeof(t->comm)), true);
		break;
	}
	case JT_REC_LATE: {
		const struct jt_rec_late *l = (const void *)rec;

		U64(o, "method", l->method);
		U64(o, "pid", l->pid);
		HEX(o, "start", l->start);
		HEX(o, "size", l->size);
		PUT(o, " from=");
		put_time(o, l->from_ts, start);
		break;
	}
	case JT_REC_END: {
		const struct jt_rec_end *e = (const void *)rec;

		U64(o, "records", e->records);
		break;
	}
	default:
		U64(o, "type", rec->type);
		U64(o, "size", rec->size);
		break;
	}
	PUT(o, "\n");
}

int jt_dump(FILE *out, const char *path, unsigned int flags)
{
	struct jt_filter every;

	jt_filter__init(&every);
	every.salvage = flags & JT_LOGR_SALVAGE;
	return jt_dump_filtered(out, path, &every);
}

int jt_dump_filtered(FILE *out, const char *path, const struct jt_filter *filter)
{
	struct out o = { .f = out };
	const struct jt_rec_hdr *rec;
	struct jt_logsrc src;
	bool kept;
	int ret = 1;

	if (jt_logsrc__open(&src, path, filter))
		return 1;
	o.buf = malloc(OUT_CAP);
	if (!o.buf) {
		jt_err("%s: out of memory", path);
		goto cleanup;
	}
	while (!o.err && (rec = jt_logsrc__next(&src, &kept))) {
		/* samples, enters and leaves the filter leaves out are not shown */
		if (!kept && (rec->type == JT_REC_SAMPLE || rec->type == JT_REC_OFFCPU ||
			      rec->type == JT_REC_ENTER || rec->type == JT_REC_LEAVE ||
			      rec->type == JT_REC_CALLSUM || rec->type == JT_REC_SPAN))
			continue;
		put_rec(&o, src.lv, rec, src.hdr->start_ns);
	}
	out_flush(&o);
	if (!o.err && fflush(out))
		o.err = errno ? errno : EIO;
	if (o.err) {
		jt_err("%s: writing the dump: %s", path, strerror(o.err));
		goto cleanup;
	}
	if (!jt_logsrc__finish(&src, "shown"))
		ret = 0;
cleanup:
	free(o.buf);
	jt_logsrc__close(&src);
	return ret;
}
