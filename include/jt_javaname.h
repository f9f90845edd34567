/* SPDX-License-Identifier: MIT */
/*
 * Java method names as people read them, from the JVM's internal spelling: class
 * "java/lang/String" (or "Ljava/lang/String;"), method "indexOf", signature "(I[J)V" become
 * "java.lang.String.indexOf(int, long[])". Shared by the JVMTI agent and the collector's
 * decoding of HotSpot's USDT records, so both sources name a method the same way.
 */
#ifndef JT_JAVANAME_H
#define JT_JAVANAME_H

#include <stddef.h>
#include <string.h>

struct jt_jname_buf {
	char *p;
	size_t len, cap;	/* cap includes the NUL */
};

static inline void jt_jname__put(struct jt_jname_buf *b, const char *s, size_t n)
{
	if (b->len + 1 >= b->cap)
		return;
	if (n > b->cap - 1 - b->len)
		n = b->cap - 1 - b->len;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* A binary class name with '/' (and a hidden class's '/' too) read as '.'. */
static inline void jt_jname__class(struct jt_jname_buf *b, const char *s, size_t n)
{
	size_t i, start = b->len;

	jt_jname__put(b, s, n);
	for (i = start; i < b->len; i++)
		if (b->p[i] == '/')
			b->p[i] = '.';
}

/* One field descriptor at *s (B, C, ..., Lpkg/Name;, [x); returns bytes consumed, 0 if bad. */
static inline size_t jt_jname__type(struct jt_jname_buf *b, const char *s, size_t n)
{
	static const char *const prim[] = {
		['B' - 'B'] = "byte", ['C' - 'B'] = "char", ['D' - 'B'] = "double",
		['F' - 'B'] = "float", ['I' - 'B'] = "int", ['J' - 'B'] = "long",
		['S' - 'B'] = "short", ['V' - 'B'] = "void", ['Z' - 'B'] = "boolean",
	};
	size_t dims = 0, used, i;
	const char *semi;

	while (dims < n && s[dims] == '[')
		dims++;
	if (dims == n)
		return 0;
	if (s[dims] == 'L') {
		semi = memchr(s + dims, ';', n - dims);
		if (!semi)
			return 0;
		jt_jname__class(b, s + dims + 1, semi - (s + dims + 1));
		used = semi + 1 - s;
	} else if (s[dims] >= 'B' && s[dims] <= 'Z' && prim[s[dims] - 'B']) {
		const char *t = prim[s[dims] - 'B'];

		jt_jname__put(b, t, strlen(t));
		used = dims + 1;
	} else {
		return 0;
	}
	for (i = 0; i < dims; i++)
		jt_jname__put(b, "[]", 2);
	return used;
}

/*
 * Write "Class.method(params)" into out (cap bytes, NUL-terminated, cut to fit) and return
 * its length. cls may be a binary name or a class signature ("L...;"). A signature that
 * does not parse is appended as it is, so nothing is lost.
 */
static inline size_t jt_java_name(char *out, size_t cap, const char *cls, size_t clen,
				  const char *meth, size_t mlen, const char *sig, size_t slen)
{
	struct jt_jname_buf b = { .p = out, .cap = cap };
	size_t i = 1, mark, used;

	if (!cap)
		return 0;
	if (clen >= 2 && cls[0] == 'L' && cls[clen - 1] == ';') {
		cls++;
		clen -= 2;
	}
	jt_jname__class(&b, cls, clen);
	if (clen)
		jt_jname__put(&b, ".", 1);
	jt_jname__put(&b, meth, mlen);
	mark = b.len;
	if (!slen || sig[0] != '(')
		goto raw;
	jt_jname__put(&b, "(", 1);
	while (i < slen && sig[i] != ')') {
		if (i > 1)
			jt_jname__put(&b, ", ", 2);
		used = jt_jname__type(&b, sig + i, slen - i);
		if (!used)
			goto raw;
		i += used;
	}
	if (i >= slen)
		goto raw;
	jt_jname__put(&b, ")", 1);
	b.p[b.len] = 0;
	return b.len;
raw:
	b.len = mark;
	jt_jname__put(&b, sig, slen);
	b.p[b.len] = 0;
	return b.len;
}

#endif
