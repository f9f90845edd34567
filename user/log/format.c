// SPDX-License-Identifier: GPL-2.0
/* The .jtl format's rules in one table: each record type's size, length field and id. */
#include <string.h>
#include <zlib.h>

#include "jt_events.h"
#include "log/format.h"

/* What one known record type is made of; a type missing here is only sized. */
struct rec_rule {
	unsigned short fixed;	/* the fixed part's size; 0: a type this jitrace does not know */
	unsigned short len_at;	/* offset of the __u16 count of what follows it; 0: none */
	unsigned short unit;	/* bytes per unit of that count */
	unsigned short defines;	/* the frame kind of the id it defines; 0: none */
	unsigned short id_at;	/* offset of that id */
};

#define FIXED(st) { sizeof(struct st), 0, 0, 0, 0 }
#define VAR(st, len, unit) { sizeof(struct st), offsetof(struct st, len), unit, 0, 0 }
#define DEF(st, len, kind) { sizeof(struct st), offsetof(struct st, len), 1, kind,	\
			     offsetof(struct st, id) }

static const struct rec_rule rules[JT_REC_MAX] = {
	[JT_REC_METHOD] = DEF(jt_rec_method, name_len, JT_FRAME_METHOD),
	[JT_REC_UNLOAD] = FIXED(jt_rec_call),
	[JT_REC_ENTER] = FIXED(jt_rec_call),
	[JT_REC_LEAVE] = FIXED(jt_rec_call),
	[JT_REC_SAMPLE] = VAR(jt_rec_sample, nr_frames, sizeof(struct jt_frame)),
	[JT_REC_EXEC] = VAR(jt_rec_exec, path_len, 1),
	[JT_REC_EXIT] = FIXED(jt_rec_exit),
	[JT_REC_DROP] = FIXED(jt_rec_drop),
	[JT_REC_PROC] = VAR(jt_rec_proc, cmdline_len, 1),
	[JT_REC_MODULE] = DEF(jt_rec_module, path_len, JT_FRAME_MODULE),
	[JT_REC_END] = FIXED(jt_rec_end),
	[JT_REC_SYMBOL] = DEF(jt_rec_symbol, name_len, JT_FRAME_SYMBOL),
	[JT_REC_LINES] = VAR(jt_rec_lines, nr_lines, sizeof(struct jt_line)),
	[JT_REC_LATE] = FIXED(jt_rec_late),
	[JT_REC_THREAD] = FIXED(jt_rec_thread),
	[JT_REC_OFFCPU] = VAR(jt_rec_offcpu, smp.nr_frames, sizeof(struct jt_frame)),
	[JT_REC_INLINE] = FIXED(jt_rec_inline),	/* its three counts: log/view.c checks them */
	[JT_REC_CALLS] = FIXED(jt_rec_calls),	/* its calls: calls_invalid checks them */
	[JT_REC_CALLSUM] = FIXED(jt_rec_callsum),
	[JT_REC_SPAN] = FIXED(jt_rec_span),
};

/* Fields at an offset of a record, which a buffer need not hold aligned. */
static unsigned int u16_at(const struct jt_rec_hdr *rec, size_t off)
{
	__u16 v;

	memcpy(&v, (const char *)rec + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const struct jt_rec_hdr *rec, size_t off)
{
	__u64 v;

	memcpy(&v, (const char *)rec + off, sizeof(v));
	return v;
}

static const struct rec_rule *rule_of(unsigned int type)
{
	return type < JT_REC_MAX && rules[type].fixed ? &rules[type] : NULL;
}

/* One LEB128 varint of at most 64 bits from [*p, end): false if cut short or too long. */
static bool get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	unsigned int shift;
	uint64_t x = 0;

	for (shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;

		/* the tenth byte holds the 64th bit alone */
		if (shift == 63 && b > 1)
			return false;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

bool jt_logfmt__call_get(const unsigned char **p, const unsigned char *end,
			 struct jt_rec_call *c)
{
	uint64_t dts, did;

	if (!get_varint(p, end, &dts) || !get_varint(p, end, &did) ||
	    c->h.ts + (dts >> 1) < c->h.ts)
		return false;
	c->h.type = dts & 1 ? JT_REC_LEAVE : JT_REC_ENTER;
	c->h.ts += dts >> 1;
	c->id += (did >> 1) ^ -(did & 1);	/* zigzag: the id may go down as well as up */
	return true;
}

unsigned char *jt_logfmt__call_put(unsigned char *p, const struct jt_rec_call *prev,
				   const struct jt_rec_call *c)
{
	uint64_t did = c->id - prev->id;

	p = put_varint(p, (c->h.ts - prev->h.ts) << 1 | (c->h.type == JT_REC_LEAVE));
	return put_varint(p, did << 1 ^ -(did >> 63));
}

void jt_logfmt__calls_first(const struct jt_rec_calls *run, struct jt_rec_call *c)
{
	*c = (struct jt_rec_call){
		.h = { .size = sizeof(*c), .ts = run->h.ts }, .pid = run->pid, .tid = run->tid,
	};
}

/* Why a JT_REC_CALLS whose fixed part is within size is not one readers can give, or NULL. */
static const char *calls_invalid(const struct jt_rec_calls *run, size_t size)
{
	const unsigned char *p = (const unsigned char *)(run + 1), *end = p + run->len;
	struct jt_rec_call c;
	uint32_t i;

	if (!run->count)
		return "a run of no calls";
	if (run->len > size - sizeof(*run) || size - sizeof(*run) - run->len >= 8)
		return "its calls' length is not its size's";
	jt_logfmt__calls_first(run, &c);
	for (i = 0; i < run->count; i++)
		if (!jt_logfmt__call_get(&p, end, &c))
			return "a call cut short or past 64 bits";
	if (p != end)
		return "bytes after its last call";
	for (end = (const unsigned char *)run + size; p < end; p++)
		if (*p)
			return "padding not zero";
	return NULL;
}

const char *jt_logfmt__invalid(const struct jt_rec_hdr *rec, size_t avail)
{
	const struct rec_rule *t;
	size_t size, var = 0;

	if (avail < sizeof(*rec))
		return "record header cut short";
	size = rec->size;
	if (size < sizeof(*rec))
		return "size below 16";
	if (size % 8)
		return "size not a multiple of 8";
	if (size > avail)
		return "size runs past the end of its block";
	t = rule_of(rec->type);
	if (!t)
		return NULL;	/* a newer writer's type: its size is all we can check */
	if (size < t->fixed)
		return "shorter than its type's fixed part";
	/* the fixed part is there: its length field can be read */
	if (t->len_at)
		var = (size_t)u16_at(rec, t->len_at) * t->unit;
	if (size - t->fixed < var)
		return "its length field runs past its size";
	if (rec->type == JT_REC_OFFCPU) {	/* its sample says what it is */
		const struct jt_rec_offcpu *o = (const void *)rec;

		if (o->smp.h.type != JT_REC_SAMPLE || o->smp.h.size != size -
		    offsetof(struct jt_rec_offcpu, smp))
			return "its sample's type or size is not a sample's";
		if (o->smp.h.ts > rec->ts)
			return "it left the CPU after it came back";
		if (!o->state || o->state >= JT_OFF_MAX)
			return "its state is of no known kind";
	}
	if (rec->type == JT_REC_CALLS)
		return calls_invalid((const void *)rec, size);
	return NULL;
}

uint64_t jt_logfmt__defines(const struct jt_rec_hdr *rec, unsigned int *kind)
{
	const struct rec_rule *t = rule_of(rec->type);

	*kind = t ? t->defines : 0;
	return *kind ? u64_at(rec, t->id_at) : 0;
}

uint32_t jt_logfmt__header_crc(const struct jt_log_header *h)
{
	struct jt_log_header c = *h;

	c.hdr_crc32 = 0;
	return crc32(0, (const unsigned char *)&c, sizeof(c));
}

/* A name field: what follows its first NUL zeroed, its last byte a NUL. */
static void zero_pad(char *s, size_t cap)
{
	size_t n = strnlen(s, cap - 1);

	memset(s + n, 0, cap - n);
}

void jt_logfmt__seal(struct jt_log_header *h)
{
	h->magic = JT_LOG_MAGIC;
	h->version = JT_LOG_VERSION;
	h->header_size = JT_LOG_HEADER_SIZE;
	zero_pad(h->hostname, sizeof(h->hostname));
	zero_pad(h->kernel, sizeof(h->kernel));
	memset(h->reserved, 0, sizeof(h->reserved));
	h->hdr_crc32 = jt_logfmt__header_crc(h);
}

const char *jt_logfmt__referenced(unsigned int kind)
{
	unsigned int type;

	for (type = 0; kind && type < JT_REC_MAX; type++)
		if (rules[type].defines == kind)
			return jt_rec__name(type);
	return NULL;
}
