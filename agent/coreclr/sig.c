// SPDX-License-Identifier: MIT
/* Method signature blobs as C# parameter lists, and UTF-16 metadata strings as UTF-8. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sig.h"

#define DEPTH_MAX 16	/* types nest no deeper in real code; a blob that does is refused */

/* ECMA-335 II.23.1.16 element types */
enum {
	ET_VOID = 0x01, ET_BOOLEAN, ET_CHAR, ET_I1, ET_U1, ET_I2, ET_U2, ET_I4, ET_U4, ET_I8,
	ET_U8, ET_R4, ET_R8, ET_STRING, ET_PTR, ET_BYREF, ET_VALUETYPE, ET_CLASS, ET_VAR,
	ET_ARRAY, ET_GENERICINST, ET_TYPEDBYREF,
	ET_I = 0x18, ET_U = 0x19, ET_FNPTR = 0x1b, ET_OBJECT = 0x1c, ET_SZARRAY = 0x1d,
	ET_MVAR = 0x1e, ET_CMOD_REQD = 0x1f, ET_CMOD_OPT = 0x20, ET_SENTINEL = 0x41,
	ET_PINNED = 0x45,
};

#define SIG_GENERIC 0x10	/* calling convention: a generic parameter count follows */

/* C#'s keywords for the primitive types, by element type */
static const char *const keywords[] = {
	[ET_VOID] = "void", [ET_BOOLEAN] = "bool", [ET_CHAR] = "char", [ET_I1] = "sbyte",
	[ET_U1] = "byte", [ET_I2] = "short", [ET_U2] = "ushort", [ET_I4] = "int",
	[ET_U4] = "uint", [ET_I8] = "long", [ET_U8] = "ulong", [ET_R4] = "float",
	[ET_R8] = "double", [ET_STRING] = "string", [ET_TYPEDBYREF] = "TypedReference",
	[ET_I] = "nint", [ET_U] = "nuint", [ET_OBJECT] = "object",
};

struct reader {
	const uint8_t *p, *end;
	jt_clr_sig_type_fn type_name;
	void *ctx;
	char *out;
	size_t len, cap;	/* written, and room (the NUL's byte not counted) */
	bool bad;
};

static void put(struct reader *r, const char *s)
{
	size_t n = strlen(s);

	if (n > r->cap - r->len)
		n = r->cap - r->len;
	memcpy(r->out + r->len, s, n);
	r->len += n;
	r->out[r->len] = 0;
}

static uint8_t byte(struct reader *r)
{
	if (r->p >= r->end) {
		r->bad = true;
		return 0;
	}
	return *r->p++;
}

/* ECMA-335 II.23.2: one, two or four bytes, big-endian, the top bits saying which */
static uint32_t compressed(struct reader *r)
{
	uint32_t b = byte(r);

	if (!(b & 0x80))
		return b;
	if ((b & 0xc0) == 0x80)
		return (b & 0x3f) << 8 | byte(r);
	if ((b & 0xe0) == 0xc0) {
		uint32_t v = (b & 0x1f) << 24;

		v |= (uint32_t)byte(r) << 16;
		v |= (uint32_t)byte(r) << 8;
		return v | byte(r);
	}
	r->bad = true;
	return 0;
}

/* TypeDefOrRefOrSpecEncoded: the table in the two low bits, the row above them */
static uint32_t type_token(struct reader *r)
{
	static const uint32_t tables[] = { 0x02000000, 0x01000000, 0x1b000000, 0 };
	uint32_t v = compressed(r);

	if ((v & 3) == 3)
		r->bad = true;
	return tables[v & 3] | v >> 2;
}

static void put_type_name(struct reader *r, uint32_t token, bool drop_arity)
{
	char name[512];
	char *tick;

	if (!r->type_name || r->type_name(r->ctx, token, name, sizeof(name))) {
		put(r, "?");
		return;
	}
	/* List`1<int>: C# writes List<int> */
	tick = drop_arity ? strrchr(name, '`') : NULL;
	if (tick && tick[1] >= '0' && tick[1] <= '9')
		*tick = 0;
	put(r, name);
}

static void type(struct reader *r, int depth);

/* custom modifiers (modreq, modopt) say nothing C# writes: skipped */
static void skip_mods(struct reader *r)
{
	while (r->p < r->end && (*r->p == ET_CMOD_REQD || *r->p == ET_CMOD_OPT)) {
		r->p++;
		type_token(r);
	}
}

static void array_shape(struct reader *r)
{
	uint32_t rank = compressed(r), n, i;
	char commas[34] = "[";

	for (n = compressed(r), i = 0; i < n && !r->bad; i++)	/* sizes */
		compressed(r);
	for (n = compressed(r), i = 0; i < n && !r->bad; i++)	/* lower bounds */
		compressed(r);
	for (i = 1; i < rank && i < sizeof(commas) - 2; i++)
		commas[i] = ',';
	commas[i] = 0;
	put(r, commas);
	put(r, "]");
}

static void type(struct reader *r, int depth)
{
	uint8_t et;
	char num[16];
	uint32_t n, i;

	if (depth > DEPTH_MAX) {
		r->bad = true;
		return;
	}
	skip_mods(r);
	et = byte(r);
	if (r->bad)
		return;
	if (et < sizeof(keywords) / sizeof(keywords[0]) && keywords[et]) {
		put(r, keywords[et]);
		return;
	}
	switch (et) {
	case ET_PTR:
		type(r, depth + 1);
		put(r, "*");
		break;
	case ET_BYREF:
		put(r, "ref ");
		type(r, depth + 1);
		break;
	case ET_VALUETYPE:
	case ET_CLASS:
		put_type_name(r, type_token(r), false);
		break;
	case ET_VAR:
	case ET_MVAR:
		snprintf(num, sizeof(num), et == ET_VAR ? "!%u" : "!!%u", compressed(r));
		put(r, num);
		break;
	case ET_ARRAY:
		type(r, depth + 1);
		array_shape(r);
		break;
	case ET_SZARRAY:
		type(r, depth + 1);
		put(r, "[]");
		break;
	case ET_GENERICINST:
		et = byte(r);
		if (et != ET_CLASS && et != ET_VALUETYPE) {
			r->bad = true;
			return;
		}
		put_type_name(r, type_token(r), true);
		put(r, "<");
		for (n = compressed(r), i = 0; i < n && !r->bad; i++) {
			if (i)
				put(r, ", ");
			type(r, depth + 1);
		}
		put(r, ">");
		break;
	case ET_FNPTR: {
		/* a whole method signature: read past it, write only that it is one */
		size_t len = r->len;
		uint32_t count;

		if (byte(r) & SIG_GENERIC)
			compressed(r);
		count = compressed(r);
		for (i = 0; i <= count && !r->bad; i++)	/* the return type, then each */
			type(r, depth + 1);
		r->len = len;
		r->out[len] = 0;
		put(r, "fnptr");
		break;
	}
	case ET_PINNED:
		type(r, depth + 1);
		break;
	default:
		r->bad = true;
	}
}

int jt_clr_sig__params(const uint8_t *sig, size_t len, jt_clr_sig_type_fn type_name, void *ctx,
		       char *buf, size_t cap)
{
	struct reader r = { .p = sig, .end = sig + len, .type_name = type_name, .ctx = ctx,
			    .out = buf, .cap = cap ? cap - 1 : 0 };
	uint32_t count, i;

	if (!cap)
		return -1;
	buf[0] = 0;
	if (byte(&r) & SIG_GENERIC)
		compressed(&r);
	count = compressed(&r);
	type(&r, 0);	/* the return type, not written */
	r.len = 0;
	buf[0] = 0;
	put(&r, "(");
	for (i = 0; i < count && !r.bad; i++) {
		if (r.p < r.end && *r.p == ET_SENTINEL) {	/* varargs: the fixed ones end */
			r.p++;
			put(&r, i ? ", ..." : "...");
			break;
		}
		if (i)
			put(&r, ", ");
		type(&r, 0);
	}
	put(&r, ")");
	if (!r.bad)
		return 0;
	snprintf(buf, cap, "(?)");
	return -1;
}

size_t jt_clr_sig__utf8(const uint16_t *in, size_t n, char *out, size_t cap)
{
	size_t i, len = 0;

	if (!cap)
		return 0;
	for (i = 0; i < n && in[i]; i++) {
		uint32_t c = in[i];
		char b[4];
		int k, w;

		if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && in[i + 1] >= 0xdc00 &&
		    in[i + 1] <= 0xdfff) {
			c = 0x10000 + ((c - 0xd800) << 10) + (in[i + 1] - 0xdc00);
			i++;
		} else if (c >= 0xd800 && c <= 0xdfff) {
			c = 0xfffd;
		}
		if (c < 0x80) {
			b[0] = (char)c;
			w = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xc0 | c >> 6);
			b[1] = (char)(0x80 | (c & 0x3f));
			w = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xe0 | c >> 12);
			b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (char)(0x80 | (c & 0x3f));
			w = 3;
		} else {
			b[0] = (char)(0xf0 | c >> 18);
			b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[3] = (char)(0x80 | (c & 0x3f));
			w = 4;
		}
		if (len + w >= cap)
			break;	/* never half a character */
		for (k = 0; k < w; k++)
			out[len++] = b[k];
	}
	out[len] = 0;
	return len;
}
