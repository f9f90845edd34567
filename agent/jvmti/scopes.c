// SPDX-License-Identifier: MIT
/*
 * libjitrace-jvmti: a compiled method's inlining tree (CompiledMethodLoad's compile_info)
 * and its methods' line tables, as the JT_REC_INLINE payload jitrace logs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopes.h"	/* jvmti.h before jvmticmlr.h, which uses its types */

#include <jvmticmlr.h>

#include "jt_javaname.h"
#include "jt_log_format.h"

#define NAME_LEN 1024

/* A method met in this code's scopes, with what its scopes need of it. */
struct meth {
	jmethodID id;
	uint32_t name;		/* offset into the names */
	uint32_t file;		/* offset into the names, JT_INLINE_NONE: not known */
	jvmtiLineNumberEntry *lines;	/* the JVM's, NULL: none */
	jint nr_lines;
};

struct build {
	jvmtiEnv *jvmti;
	struct meth *meths;
	size_t nr_meths, cap_meths;
	struct jt_inline_range *ranges;
	size_t nr_ranges, cap_ranges;
	struct jt_inline_scope *scopes;
	size_t nr_scopes, cap_scopes;
	uint32_t *index;	/* scope hash: index + 1, 0 empty; 2 * cap_scopes slots */
	char *names;
	size_t names_len, cap_names;
};

bool jt_jvmti_method_name(jvmtiEnv *jvmti, jmethodID method, char *out, size_t cap)
{
	char *csig = NULL, *name = NULL, *sig = NULL;
	jclass klass = NULL;
	bool ok = false;

	if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetMethodName(jvmti, method, &name, &sig, NULL) == JVMTI_ERROR_NONE) {
		jt_java_name(out, cap, csig, strlen(csig), name, strlen(name), sig, strlen(sig));
		ok = true;
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	return ok;
}

/* Room for n elements of each bytes in *v; false when out of memory. */
static bool grow(void *v, size_t *cap, size_t n, size_t each)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (n <= *cap)
		return true;
	while (c < n)
		c *= 2;
	p = realloc(*(void **)v, c * each);
	if (!p)
		return false;
	*(void **)v = p;
	*cap = c;
	return true;
}

/* The offset of s in the names, added if new; JT_INLINE_NONE when out of room. */
static uint32_t name_add(struct build *b, const char *s)
{
	size_t n = strlen(s) + 1, i;

	for (i = 0; i < b->nr_meths; i++) {	/* files repeat: one class, one file */
		uint32_t f = b->meths[i].file;

		if (f != JT_INLINE_NONE && !strcmp(b->names + f, s))
			return f;
	}
	if (b->names_len + n > JT_INLINE_BYTES_MAX || !grow(&b->names, &b->cap_names,
							      b->names_len + n, 1))
		return JT_INLINE_NONE;
	memcpy(b->names + b->names_len, s, n);
	b->names_len += n;
	return b->names_len - n;
}

/* The method id, looked up at first sight; NULL when out of room. */
static struct meth *meth_get(struct build *b, jmethodID id)
{
	char name[NAME_LEN], *file = NULL;
	struct meth *m;
	jclass klass;
	size_t i;

	for (i = 0; i < b->nr_meths; i++)
		if (b->meths[i].id == id)
			return &b->meths[i];
	if (!grow(&b->meths, &b->cap_meths, b->nr_meths + 1, sizeof(*b->meths)))
		return NULL;
	m = &b->meths[b->nr_meths];
	*m = (struct meth){ .id = id, .file = JT_INLINE_NONE };
	if (!jt_jvmti_method_name(b->jvmti, id, name, sizeof(name)))
		snprintf(name, sizeof(name), "[java method %p]", (void *)id);
	m->name = name_add(b, name);
	if (m->name == JT_INLINE_NONE)
		return NULL;
	if ((*b->jvmti)->GetMethodDeclaringClass(b->jvmti, id, &klass) == JVMTI_ERROR_NONE &&
	    (*b->jvmti)->GetSourceFileName(b->jvmti, klass, &file) == JVMTI_ERROR_NONE) {
		m->file = name_add(b, file);
		(*b->jvmti)->Deallocate(b->jvmti, (unsigned char *)file);
	}
	/* native and abstract methods, and classes compiled without -g:lines, have none */
	if ((*b->jvmti)->GetLineNumberTable(b->jvmti, id, &m->nr_lines, &m->lines) !=
	    JVMTI_ERROR_NONE) {
		m->lines = NULL;
		m->nr_lines = 0;
	}
	b->nr_meths++;
	return m;
}

/* The line of bytecode index bci: the entry starting last at or before it; 0: none. */
static uint32_t line_of(const struct meth *m, jint bci)
{
	jlocation best = -1;
	uint32_t line = 0;
	jint i;

	if (bci < 0)	/* before the first bytecode (a synchronized method's entry) */
		bci = 0;
	for (i = 0; i < m->nr_lines; i++) {
		if (m->lines[i].start_location <= bci && m->lines[i].start_location > best) {
			best = m->lines[i].start_location;
			line = m->lines[i].line_number;
		}
	}
	return line;
}

static uint32_t scope_hash(uint32_t name, uint32_t line, uint32_t caller)
{
	uint64_t k = ((uint64_t)name << 32 | line) * 0x9e3779b97f4a7c15ULL ^ caller;

	k ^= k >> 29;
	return (uint32_t)(k * 0xbf58476d1ce4e5b9ULL >> 32);
}

/* Put scope i into the hash of scopes (of 2 * cap_scopes slots). */
static void index_put(struct build *b, uint32_t i)
{
	const struct jt_inline_scope *s = &b->scopes[i];
	size_t mask = 2 * b->cap_scopes - 1, j;

	for (j = scope_hash(s->name, s->line, s->caller) & mask; b->index[j]; j = (j + 1) & mask)
		;
	b->index[j] = i + 1;
}

/* The scope of m at line called from caller, added if new; JT_INLINE_NONE: no room. */
static uint32_t scope_get(struct build *b, const struct meth *m, uint32_t line,
			  uint32_t caller)
{
	size_t mask, j, cap = b->cap_scopes, i;

	if (b->cap_scopes) {
		mask = 2 * b->cap_scopes - 1;
		for (j = scope_hash(m->name, line, caller) & mask; b->index[j];
		     j = (j + 1) & mask) {
			const struct jt_inline_scope *s = &b->scopes[b->index[j] - 1];

			if (s->name == m->name && s->line == line && s->caller == caller)
				return b->index[j] - 1;
		}
	}
	if (b->nr_scopes >= JT_INLINE_SCOPES_MAX ||
	    !grow(&b->scopes, &b->cap_scopes, b->nr_scopes + 1, sizeof(*b->scopes)))
		return JT_INLINE_NONE;
	if (cap != b->cap_scopes) {	/* grown: the hash too */
		uint32_t *index = calloc(2 * b->cap_scopes, sizeof(*index));

		if (!index)
			return JT_INLINE_NONE;
		free(b->index);
		b->index = index;
		for (i = 0; i < b->nr_scopes; i++)
			index_put(b, i);
	}
	b->scopes[b->nr_scopes] = (struct jt_inline_scope){
		.name = m->name, .file = m->file, .line = line, .caller = caller };
	index_put(b, b->nr_scopes);
	return b->nr_scopes++;
}

/* One pc's chain, outermost first into the scopes; false when out of room. */
static bool add_pc(struct build *b, const PCStackInfo *pc, uint32_t off)
{
	uint32_t scope = JT_INLINE_NONE;
	jint j = pc->numstackframes - 1, last = 0;

	if (pc->numstackframes <= 0)
		return true;
	/* a deeper chain than a reader follows loses its innermost scopes */
	if (pc->numstackframes > JT_INLINE_DEPTH_MAX)
		last = pc->numstackframes - JT_INLINE_DEPTH_MAX;
	for (; j >= last; j--) {
		struct meth *m = meth_get(b, pc->methods[j]);

		if (!m)
			return false;
		scope = scope_get(b, m, line_of(m, pc->bcis[j]), scope);
		if (scope == JT_INLINE_NONE)
			return false;
	}
	/* a chain that ends where the one before ends covers the one before's code too */
	if (b->nr_ranges && b->ranges[b->nr_ranges - 1].scope == scope) {
		b->ranges[b->nr_ranges - 1].off = off;
		return true;
	}
	if (b->nr_ranges >= JT_INLINE_RANGES_MAX ||
	    !grow(&b->ranges, &b->cap_ranges, b->nr_ranges + 1, sizeof(*b->ranges)))
		return false;
	b->ranges[b->nr_ranges++] = (struct jt_inline_range){ .off = off, .scope = scope };
	return true;
}

static int cmp_pc(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const PCStackInfo *)a)->pc;
	uintptr_t y = (uintptr_t)((const PCStackInfo *)b)->pc;

	return x < y ? -1 : x > y;
}

static const jvmtiCompiledMethodLoadInlineRecord *inline_record(const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;

	for (; h; h = h->next)
		if (h->kind == JVMTI_CMLR_INLINE_INFO)
			return (const void *)h;
	return NULL;
}

size_t jt_jvmti_scopes(jvmtiEnv *jvmti, const void *code, size_t size,
		       const void *compile_info, void **out)
{
	const jvmtiCompiledMethodLoadInlineRecord *r = inline_record(compile_info);
	struct build b = { .jvmti = jvmti };
	struct jt_inline_head head;
	PCStackInfo *pcs = NULL;
	size_t total = 0, i;
	bool ok = true;
	char *p;

	*out = NULL;
	if (!r || r->numpcs <= 0 || !r->pcinfo)
		return 0;
	/* HotSpot gives them in pc order; a copy sorted makes sure of it */
	pcs = malloc(r->numpcs * sizeof(*pcs));
	if (!pcs)
		return 0;
	memcpy(pcs, r->pcinfo, r->numpcs * sizeof(*pcs));
	qsort(pcs, r->numpcs, sizeof(*pcs), cmp_pc);
	for (i = 0; ok && i < (size_t)r->numpcs; i++) {
		uintptr_t pc = (uintptr_t)pcs[i].pc, start = (uintptr_t)code;

		if (pc >= start && pc - start <= size)
			ok = add_pc(&b, &pcs[i], pc - start);
	}
	if (ok && b.nr_ranges) {
		total = sizeof(head) + b.nr_ranges * sizeof(*b.ranges) +
			b.nr_scopes * sizeof(*b.scopes) + b.names_len;
		p = total <= JT_INLINE_BYTES_MAX ? malloc(total) : NULL;
		if (p) {
			head = (struct jt_inline_head){ .nr_ranges = b.nr_ranges,
							.nr_scopes = b.nr_scopes,
							.names_len = b.names_len };
			*out = p;
			memcpy(p, &head, sizeof(head));
			p += sizeof(head);
			memcpy(p, b.ranges, b.nr_ranges * sizeof(*b.ranges));
			p += b.nr_ranges * sizeof(*b.ranges);
			memcpy(p, b.scopes, b.nr_scopes * sizeof(*b.scopes));
			p += b.nr_scopes * sizeof(*b.scopes);
			memcpy(p, b.names, b.names_len);
		} else {
			total = 0;
		}
	}
	for (i = 0; i < b.nr_meths; i++)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)b.meths[i].lines);
	free(pcs);
	free(b.meths);
	free(b.ranges);
	free(b.scopes);
	free(b.index);
	free(b.names);
	return total;
}
