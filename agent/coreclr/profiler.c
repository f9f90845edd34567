// SPDX-License-Identifier: MIT
/*
 * CLR profiler module, libjitrace-coreclr.so: tells jitrace (through libjitrace-agent) about
 * every method .NET compiles (JIT, each tier, re-JIT, dynamic methods, ReadyToRun code it
 * uses), unloads of dynamic methods, and, with JITRACE_CORECLR=calls, every method entry and
 * exit. Loaded by the runtime as a COM object:
 *
 *   CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}
 *   CORECLR_PROFILER_PATH=/usr/local/lib/libjitrace-coreclr.so
 *
 * or attached to a running process through the diagnostics socket (AttachProfiler), for code
 * loads. The interfaces are plain C vtables (clr.h). Names come from the metadata:
 * "Ns.Class.Method(int, string)", nested types "Outer+Inner", dynamic methods
 * "dynamicClass.Name(int)".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clr.h"
#include "jitrace/agent.h"
#include "sig.h"

#define JT_CLR_API __attribute__((visibility("default")))
#define JT_CLR_NAME_MAX 1024
#define JT_CLR_CODES_MAX 8	/* code versions kept a method: tiers 0 and 1, instrumented, OSR */
#define JT_CLR_TABLE_MIN 4096
#define JT_CLR_FILTERS_MAX 32
#define JT_CLR_STACK_MAX (1u << 20)
#define JT_CLR_PENDING_MAX 256	/* methods compiled whose code is not published yet */

/* {8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}: the CLSID CORECLR_PROFILER names (README) */
static const GUID clsid_jitrace = { 0x8e2b7a41, 0x5c3d, 0x4f1e,
				    { 0x9a, 0x6b, 0x2d, 0x7c, 0x0e, 0x4f, 0x8a, 0x13 } };
static const GUID iid_iunknown = { 0x00000000, 0x0000, 0x0000,
				   { 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46 } };
static const GUID iid_iclassfactory = { 0x00000001, 0x0000, 0x0000,
					{ 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46 } };
/* ICorProfilerCallback to ICorProfilerCallback11: this object is each of them */
static const GUID iid_callbacks[] = {
	{ 0x176fbed1, 0xa55c, 0x4796, { 0x98, 0xca, 0xa9, 0xda, 0x0e, 0xf8, 0x83, 0xe7 } },
	{ 0x8a8cc829, 0xccf2, 0x49fe, { 0xbb, 0xae, 0x0f, 0x02, 0x22, 0x28, 0x07, 0x1a } },
	{ 0x4fd2ed52, 0x7731, 0x4b8d, { 0x94, 0x69, 0x03, 0xd2, 0xcc, 0x30, 0x86, 0xc5 } },
	{ 0x7b63b2e3, 0x107d, 0x4d48, { 0xb2, 0xf6, 0xf6, 0x1e, 0x22, 0x94, 0x70, 0xd2 } },
	{ 0x8dfba405, 0x8c9f, 0x45f8, { 0xbf, 0xfa, 0x83, 0xb1, 0x4c, 0xef, 0x78, 0xb5 } },
	{ 0xfc13df4b, 0x4448, 0x4f4f, { 0x95, 0x0c, 0xba, 0x8d, 0x19, 0xd0, 0x0c, 0x36 } },
	{ 0xf76a2dba, 0x1d52, 0x4539, { 0x86, 0x6c, 0x2a, 0xa5, 0x18, 0xf9, 0xef, 0xc3 } },
	{ 0x5bed9b15, 0xc079, 0x4d47, { 0xbf, 0xe2, 0x21, 0x5a, 0x14, 0x0c, 0x07, 0xe0 } },
	{ 0x27583ec3, 0xc8f5, 0x482f, { 0x80, 0x52, 0x19, 0x4b, 0x8c, 0xe4, 0x70, 0x5a } },
	{ 0xcec5b60e, 0xc69c, 0x495f, { 0x87, 0xf6, 0x84, 0xd2, 0x8e, 0xe1, 0x6f, 0xfb } },
	{ 0x42350846, 0xaaed, 0x47f7, { 0xb1, 0x28, 0xfd, 0x0c, 0x98, 0x88, 0x1c, 0xde } },
};
static const GUID iid_info9 = { 0x008170db, 0xf8cc, 0x4796,
				{ 0x9a, 0x51, 0xdc, 0x8a, 0xa0, 0xb4, 0x70, 0x12 } };
static const GUID iid_metadata_import = { 0x7dac8207, 0xd3ae, 0x4c75,
					  { 0x9b, 0x67, 0x92, 0x80, 0x1a, 0x49, 0x7d, 0x44 } };

/*
 * One FunctionID: its name, whether its calls are recorded, and the code of each version
 * announced. Enter and leave hooks get a pointer to it (the FunctionIDMapper's client id),
 * so it is never freed while the runtime may still call them: it lives as long as the
 * process, and one that is unloaded is only marked so.
 */
struct jt_clr_fn {
	FunctionID fid;
	_Atomic(uint64_t) id;	/* what calls carry: its first code's id; 0 until then */
	bool traced;		/* calls of it are recorded */
	bool unloaded;
	uint8_t nr_codes;
	uint16_t bodies;	/* code bodies announced: tiers, OSR, re-JITs, in their order */
	UINT_PTR starts[JT_CLR_CODES_MAX];
	uint64_t ids[JT_CLR_CODES_MAX];	/* every code load of it, for its unload */
	uint8_t nr_ids;
	char name[];
};

/* FunctionID -> jt_clr_fn: open addressing, one writer at a time, readers without a lock. */
struct jt_clr_slot {
	_Atomic(UINT_PTR) fid;	/* 0: empty */
	_Atomic(struct jt_clr_fn *) fn;
};

struct jt_clr_table {
	struct jt_clr_table *retired;	/* the smaller table this one replaced */
	size_t mask, used;
	struct jt_clr_slot slots[];
};

/* The methods a thread is inside, as recorded (exceptions leave without a leave hook). */
struct jt_clr_frame {
	struct jt_clr_fn *fn;
	uint64_t id;
};

struct jt_clr_stack {
	struct jt_clr_frame *frames;
	size_t depth, cap;
	struct jt_clr_fn *unwinding;	/* ExceptionUnwindFunctionEnter's, until its Leave */
};

typedef void (*jt_clr_slot_fn)(void);

/*
 * The runtime loads a profiler once per process: its one object and its state are this
 * module's one global, as the Mono module's are.
 */
static struct {
	const jt_clr_slot_fn *vtbl;	/* first: this is the COM object the runtime holds */
	jt_clr_slot_fn slots[CB_NR];
	const void *factory_vtbl;	/* the class factory object */
	pthread_once_t once;
	int options_err;		/* the options did not parse: said, and not loaded */
	bool calls;
	char *filters[JT_CLR_FILTERS_MAX];	/* name prefixes whose calls are recorded */
	int nr_filters;
	struct jt_clr_info *info;	/* ICorProfilerInfo9 */
	pthread_mutex_t lock;		/* writers of the table, and the metadata calls */
	_Atomic(struct jt_clr_table *) table;
	pthread_key_t stack_key;	/* frees each thread's jt_clr_stack as it ends */
	_Atomic(bool) shut;		/* Shutdown was called: nothing more is announced */
	struct jt_clr_fn *pending[JT_CLR_PENDING_MAX];	/* compiled, code not published yet */
	size_t nr_pending;
	_Atomic(uint64_t) no_code;	/* methods given up on: their code never showed */
	_Atomic(uint64_t) misses;	/* calls not recorded: no code yet, or no memory */
} clr = { .lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT };

static __thread struct jt_clr_stack *clr_stack __attribute__((tls_model("initial-exec")));

static bool guid_eq(const GUID *a, const GUID *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* ---- options: JITRACE_CORECLR=calls, calls=PREFIX, comma-separated ---- */

static int parse_options(const char *opts)
{
	const char *p = opts;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == 5 && !strncmp(p, "calls", 5)) {
			clr.calls = true;
		} else if (len > 6 && !strncmp(p, "calls=", 6)) {
			if (clr.nr_filters == JT_CLR_FILTERS_MAX) {
				fprintf(stderr, "jitrace-coreclr: more than %d calls= filters in "
					"JITRACE_CORECLR=%s\n", JT_CLR_FILTERS_MAX, opts);
				return -1;
			}
			clr.filters[clr.nr_filters] = strndup(p + 6, len - 6);
			if (!clr.filters[clr.nr_filters]) {
				fprintf(stderr, "jitrace-coreclr: out of memory\n");
				return -1;
			}
			clr.nr_filters++;
			clr.calls = true;
		} else if (len) {
			fprintf(stderr, "jitrace-coreclr: unknown option '%.*s' in "
				"JITRACE_CORECLR=%s (options: calls, calls=NAME_PREFIX); not "
				"loaded\n", (int)len, p, opts);
			return -1;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

static void options_once(void)
{
	const char *opts = getenv("JITRACE_CORECLR");

	clr.options_err = opts ? parse_options(opts) : 0;
	if (clr.options_err) {	/* not loaded: nothing of them is kept */
		while (clr.nr_filters)
			free(clr.filters[--clr.nr_filters]);
		clr.calls = false;
	}
}

static bool traced_name(const char *name)
{
	int i;

	if (!clr.calls)
		return false;
	for (i = 0; i < clr.nr_filters; i++)
		if (!strncmp(name, clr.filters[i], strlen(clr.filters[i])))
			return true;
	return !clr.nr_filters;
}

/* ---- names from the metadata ---- */

/* A type's name, "Ns.Outer+Inner", from its TypeDef (nested types through their enclosers). */
static int typedef_name(struct jt_clr_import *md, mdToken td, char *buf, size_t cap, int depth)
{
	WCHAR w[512];
	ULONG len = 0;
	DWORD flags = 0;
	mdToken extends, outer = 0;
	size_t n = 0;

	if (md->vtbl->GetTypeDefProps(md, td, w, 512, &len, &flags, &extends) < 0)
		return -1;
	if ((flags & TD_VISIBILITY_MASK) >= TD_NESTED_PUBLIC && depth < 8 &&
	    md->vtbl->GetNestedClassProps(md, td, &outer) >= 0 && outer &&
	    !typedef_name(md, outer, buf, cap, depth + 1)) {
		n = strlen(buf);
		if (n + 1 < cap)
			buf[n++] = '+';
	}
	jt_clr_sig__utf8(w, len, buf + n, cap - n);
	return 0;
}

/* jt_clr_sig_type_fn over a module's metadata */
static int token_name(void *ctx, uint32_t token, char *buf, size_t cap)
{
	struct jt_clr_import *md = ctx;
	WCHAR w[512];
	ULONG len = 0;
	mdToken scope;

	if (!md)
		return -1;
	switch (token >> 24) {
	case 0x02:
		return typedef_name(md, token, buf, cap, 0);
	case 0x01:
		if (md->vtbl->GetTypeRefProps(md, token, &scope, w, 512, &len) < 0)
			return -1;
		jt_clr_sig__utf8(w, len, buf, cap);
		return 0;
	default:
		return -1;	/* a TypeSpec: generic instances come inline instead */
	}
}

/* "Ns.Class.Method(int, string)" of a method with metadata into buf. */
static int method_name(FunctionID fid, char *buf, size_t cap)
{
	struct jt_clr_import *md = NULL;
	const uint8_t *sig = NULL;
	char method[512], params[512];
	ULONG len = 0, sig_len = 0, rva;
	DWORD attr, impl;
	mdToken token, type = 0;
	WCHAR w[512];
	size_t n;

	if (clr.info->vtbl->GetTokenAndMetaDataFromFunction(clr.info, fid, &iid_metadata_import,
							     (void **)&md, &token) < 0 || !md)
		return -1;
	if (md->vtbl->GetMethodProps(md, token, &type, w, 512, &len, &attr, &sig, &sig_len, &rva,
				     &impl) < 0) {
		md->vtbl->Release(md);
		return -1;
	}
	jt_clr_sig__utf8(w, len, method, sizeof(method));
	jt_clr_sig__params(sig, sig_len, token_name, md, params, sizeof(params));
	buf[0] = 0;
	if (type && (type & 0xffffff) && !typedef_name(md, type, buf, cap, 0)) {
		n = strlen(buf);
		if (n + 1 < cap)
			buf[n++] = '.';
		buf[n] = 0;
	}
	n = strlen(buf);
	snprintf(buf + n, cap - n, "%s%s", method, params);
	md->vtbl->Release(md);
	return 0;
}

/* "dynamicClass.Name(int)" of a method without metadata (DynamicMethod, IL stubs). */
static int dynamic_name(FunctionID fid, char *buf, size_t cap)
{
	const uint8_t *sig = NULL;
	char name[512], params[512];
	ULONG sig_len = 0, len = 0;
	ModuleID module;
	WCHAR w[512];

	if (clr.info->vtbl->GetDynamicFunctionInfo(clr.info, fid, &module, &sig, &sig_len, 512,
						    &len, w) < 0)
		return -1;
	jt_clr_sig__utf8(w, len, name, sizeof(name));
	/* its class and value types are the dynamic resolver's tokens: written "?" */
	if (!sig || jt_clr_sig__params(sig, sig_len, NULL, NULL, params, sizeof(params)))
		params[0] = 0;
	snprintf(buf, cap, "dynamicClass.%s%s", name[0] ? name : "[unnamed]", params);
	return 0;
}

/* ---- the method table ---- */

static size_t slot_of(const struct jt_clr_table *t, UINT_PTR fid)
{
	/* FunctionIDs are MethodDesc pointers: mix the high bits down */
	return (size_t)(((uint64_t)fid * 0x9e3779b97f4a7c15ull) >> 32) & t->mask;
}

static struct jt_clr_table *table_new(size_t nr_slots)
{
	struct jt_clr_table *t = calloc(1, sizeof(*t) + nr_slots * sizeof(t->slots[0]));

	if (t)
		t->mask = nr_slots - 1;
	return t;
}

static struct jt_clr_slot *table_find(struct jt_clr_table *t, UINT_PTR fid)
{
	size_t i = slot_of(t, fid);

	for (;;) {
		UINT_PTR k = atomic_load_explicit(&t->slots[i].fid, memory_order_acquire);

		if (k == fid)
			return &t->slots[i];
		if (!k)
			return NULL;
		i = (i + 1) & t->mask;
	}
}

static struct jt_clr_fn *lookup(FunctionID fid)
{
	struct jt_clr_table *t = atomic_load_explicit(&clr.table, memory_order_acquire);
	struct jt_clr_slot *s = t ? table_find(t, fid) : NULL;

	return s ? atomic_load_explicit(&s->fn, memory_order_acquire) : NULL;
}

/* Under the lock. The value is stored before the key: a reader that sees the key sees it. */
static void table_insert(struct jt_clr_table *t, UINT_PTR fid, struct jt_clr_fn *fn)
{
	size_t i = slot_of(t, fid);

	while (atomic_load_explicit(&t->slots[i].fid, memory_order_relaxed))
		i = (i + 1) & t->mask;
	atomic_store_explicit(&t->slots[i].fn, fn, memory_order_relaxed);
	atomic_store_explicit(&t->slots[i].fid, fid, memory_order_release);
	t->used++;
}

/* Under the lock: a table with room for one more, or NULL if memory ran out. The old one
 * stays readable (a reader may be in it) until the process ends. */
static struct jt_clr_table *table_room(void)
{
	struct jt_clr_table *t = atomic_load_explicit(&clr.table, memory_order_relaxed), *n;
	size_t i;

	if (2 * (t->used + 1) <= t->mask + 1)
		return t;
	n = table_new(2 * (t->mask + 1));
	if (!n) {
		fprintf(stderr, "jitrace-coreclr: out of memory growing the method table to %zu\n",
			2 * (t->mask + 1));
		return NULL;
	}
	for (i = 0; i <= t->mask; i++) {
		UINT_PTR k = atomic_load_explicit(&t->slots[i].fid, memory_order_relaxed);

		if (k)
			table_insert(n, k, atomic_load_explicit(&t->slots[i].fn,
								memory_order_relaxed));
	}
	n->retired = t;
	atomic_store_explicit(&clr.table, n, memory_order_release);
	return n;
}

/* Under the lock: fid's entry, made (and named) on first sight; NULL if memory ran out. A
 * dynamic method's FunctionID may come back for another method after an unload: a new
 * entry replaces the unloaded one. */
static struct jt_clr_fn *fn_get(FunctionID fid, bool dynamic)
{
	struct jt_clr_table *t = atomic_load_explicit(&clr.table, memory_order_relaxed);
	struct jt_clr_slot *s = t ? table_find(t, fid) : NULL;
	struct jt_clr_fn *fn = s ? atomic_load_explicit(&s->fn, memory_order_relaxed) : NULL;
	char name[JT_CLR_NAME_MAX];
	BOOL is_dynamic = dynamic;

	if (!t || (fn && !fn->unloaded))
		return fn;
	if (!dynamic &&
	    clr.info->vtbl->IsFunctionDynamic(clr.info, fid, &is_dynamic) < 0)
		is_dynamic = false;
	if ((is_dynamic ? dynamic_name : method_name)(fid, name, sizeof(name)))
		snprintf(name, sizeof(name), "[.NET method %#lx]", (unsigned long)fid);
	fn = calloc(1, sizeof(*fn) + strlen(name) + 1);
	if (!fn)
		return NULL;
	fn->fid = fid;
	fn->traced = traced_name(name);
	strcpy(fn->name, name);
	if (s) {
		atomic_store_explicit(&s->fn, fn, memory_order_release);
		return fn;
	}
	t = table_room();
	if (!t) {
		free(fn);
		return NULL;
	}
	table_insert(t, fid, fn);
	return fn;
}

/* ---- code loads ---- */

/* Under the lock: the code at start (its hot and cold parts), unless announced already. */
static void announce_code(struct jt_clr_fn *fn, UINT_PTR start)
{
	char body[JT_CLR_NAME_MAX + 16];
	COR_PRF_CODE_INFO parts[4];
	ULONG32 n = 0, i;

	for (i = 0; i < fn->nr_codes; i++)
		if (fn->starts[i] == start)
			return;
	if (clr.info->vtbl->GetCodeInfo4(clr.info, start, 4, &n, parts) < 0 || !n) {
		parts[0] = (COR_PRF_CODE_INFO){ start, 0 };
		n = 0;
	}
	if (fn->nr_codes < JT_CLR_CODES_MAX)
		fn->starts[fn->nr_codes++] = start;
	/*
	 * Each body of a method is its own code (tier 0, tier 1, OSR, instrumented, a re-JIT),
	 * and its hot offsets are its own: a later body is named apart by its ordinal, as the
	 * profiler API says which body it is but not its tier (the runtime's own maps say
	 * "[QuickJitted]", "[OptimizedTier1]", ...).
	 */
	if (++fn->bodies > 1)
		snprintf(body, sizeof(body), "%s[code %u]", fn->name, (unsigned int)fn->bodies);
	for (i = 0; i < n && i < 4; i++) {
		uint64_t id;

		if (!parts[i].size)
			continue;
		id = jitrace_code_load((const void *)parts[i].startAddress, parts[i].size,
				       fn->bodies > 1 ? body : fn->name);
		if (fn->nr_ids < JT_CLR_CODES_MAX)
			fn->ids[fn->nr_ids++] = id;
		if (!atomic_load_explicit(&fn->id, memory_order_relaxed))
			atomic_store_explicit(&fn->id, id, memory_order_release);
	}
}

/*
 * Under the lock: every code version of fn (of re-JIT version rejit) not announced yet.
 * False if the runtime shows none yet: a dynamic method's code is published only after its
 * DynamicMethodJITCompilationFinished.
 */
static bool find_code(struct jt_clr_fn *fn, ReJITID rejit)
{
	UINT_PTR starts[JT_CLR_CODES_MAX];
	COR_PRF_CODE_INFO parts[4];
	ULONG32 n = 0, i;

	if (clr.info->vtbl->GetNativeCodeStartAddresses(clr.info, fn->fid, rejit,
							JT_CLR_CODES_MAX, &n, starts) >= 0 && n) {
		for (i = 0; i < n && i < JT_CLR_CODES_MAX; i++)
			announce_code(fn, starts[i]);
		return true;
	}
	n = 0;
	if (clr.info->vtbl->GetCodeInfo2(clr.info, fn->fid, 4, &n, parts) >= 0 && n) {
		announce_code(fn, parts[0].startAddress);	/* ReadyToRun code, or dynamic */
		return true;
	}
	return false;
}

/* Under the lock: the methods compiled before their code was published, looked at again. */
static void retry_pending(void)
{
	size_t i = 0;

	while (i < clr.nr_pending) {
		if (!clr.pending[i]->unloaded && !find_code(clr.pending[i], 0))
			i++;
		else
			clr.pending[i] = clr.pending[--clr.nr_pending];
	}
}

/* Under the lock: fn waits for its code. The oldest is dropped when too many wait (a
 * compilation the runtime threw away never gets code). */
static void pending_add(struct jt_clr_fn *fn)
{
	if (clr.nr_pending == JT_CLR_PENDING_MAX) {
		memmove(clr.pending, clr.pending + 1, --clr.nr_pending * sizeof(clr.pending[0]));
		atomic_fetch_add_explicit(&clr.no_code, 1, memory_order_relaxed);
	}
	clr.pending[clr.nr_pending++] = fn;
}

/* fid's code (of re-JIT version rejit), compiled now: announced, or once it is published. */
static void announce(FunctionID fid, ReJITID rejit, bool dynamic)
{
	struct jt_clr_fn *fn;

	if (atomic_load_explicit(&clr.shut, memory_order_relaxed))
		return;
	pthread_mutex_lock(&clr.lock);
	retry_pending();
	fn = fn_get(fid, dynamic);
	if (fn && !find_code(fn, rejit))
		pending_add(fn);
	pthread_mutex_unlock(&clr.lock);
}

/* A method called before its code was announced (a dynamic method's first call, another
 * thread's call racing its compilation): its code is published by now. */
static __attribute__((noinline)) uint64_t late_id(struct jt_clr_fn *fn)
{
	pthread_mutex_lock(&clr.lock);
	retry_pending();
	if (!atomic_load_explicit(&fn->id, memory_order_relaxed) && !fn->unloaded)
		find_code(fn, 0);
	pthread_mutex_unlock(&clr.lock);
	return atomic_load_explicit(&fn->id, memory_order_acquire);
}

/* ---- enter and leave ---- */

static void stack_free(void *stack)
{
	struct jt_clr_stack *st = stack;

	free(st->frames);
	free(st);
}

/* This thread's stack, made on its first call; NULL if memory ran out. */
static struct jt_clr_stack *stack_get(void)
{
	struct jt_clr_stack *st = clr_stack;

	if (__builtin_expect(st != NULL, 1))
		return st;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	if (pthread_setspecific(clr.stack_key, st)) {
		free(st);
		return NULL;
	}
	clr_stack = st;
	return st;
}

static __attribute__((noinline)) bool stack_grow(struct jt_clr_stack *st)
{
	size_t cap = st->cap ? 2 * st->cap : 256;
	struct jt_clr_frame *frames;

	if (cap > JT_CLR_STACK_MAX || !(frames = realloc(st->frames, cap * sizeof(*frames))))
		return false;
	st->frames = frames;
	st->cap = cap;
	return true;
}

/*
 * The runtime calls these from its ELT stubs, which saved the registers: plain C functions.
 * The client id is the jt_clr_fn the mapper returned. A method can run before its
 * JITCompilationFinished (another thread's first call): that call is counted, not recorded.
 */
static void on_enter(UINT_PTR client, COR_PRF_ELT_INFO info)
{
	struct jt_clr_fn *fn = (struct jt_clr_fn *)client;
	uint64_t id = atomic_load_explicit(&fn->id, memory_order_acquire);
	struct jt_clr_stack *st = stack_get();

	(void)info;
	if (__builtin_expect(!id, 0))
		id = late_id(fn);
	if (!id || !st || (st->depth == st->cap && !stack_grow(st))) {
		atomic_fetch_add_explicit(&clr.misses, 1, memory_order_relaxed);
		return;
	}
	st->frames[st->depth].fn = fn;
	st->frames[st->depth++].id = id;
	jitrace_method_enter(id);
}

/* Leave fn's innermost open frame and every frame above it (left without a word). */
static void leave_through(struct jt_clr_stack *st, struct jt_clr_fn *fn)
{
	size_t i;

	for (i = st->depth; i > 0 && st->frames[i - 1].fn != fn; i--)
		;
	if (!i)		/* never entered as far as we know: nothing to close */
		return;
	while (st->depth >= i)
		jitrace_method_leave(st->frames[--st->depth].id);
}

static void on_leave(UINT_PTR client, COR_PRF_ELT_INFO info)
{
	struct jt_clr_fn *fn = (struct jt_clr_fn *)client;
	struct jt_clr_stack *st = clr_stack;

	(void)info;
	if (!st || !st->depth)
		return;
	if (__builtin_expect(st->frames[st->depth - 1].fn == fn, 1)) {
		st->depth--;
		jitrace_method_leave(st->frames[st->depth].id);
		return;
	}
	leave_through(st, fn);
}

/* ---- the callbacks ---- */

/*
 * The slots jitrace does not use all point at one function that takes only the object and
 * says S_OK: on x86-64 and AArch64 the caller passes and removes the arguments, so a callee
 * may ignore the ones after its first. Every slot with an out parameter is implemented.
 */
static HRESULT on_nothing(void *self)
{
	(void)self;
	return S_OK;
}

static ULONG on_add_ref(void *self)
{
	(void)self;
	return 1;	/* static storage: never freed, whatever the count */
}

static HRESULT on_query_interface(void *self, const GUID *iid, void **out)
{
	size_t i;

	*out = NULL;
	if (guid_eq(iid, &iid_iunknown)) {
		*out = self;
		return S_OK;
	}
	for (i = 0; i < sizeof(iid_callbacks) / sizeof(iid_callbacks[0]); i++) {
		if (guid_eq(iid, &iid_callbacks[i])) {
			*out = self;
			return S_OK;
		}
	}
	return E_NOINTERFACE;
}

/* As a notification profiler it can load beside another profiler; calls need the main
 * profiler's place (enter and leave hooks are the main profiler's alone). */
static HRESULT on_load_as_notification_only(void *self, BOOL *only)
{
	(void)self;
	pthread_once(&clr.once, options_once);
	*only = !clr.calls;
	return S_OK;
}

static UINT_PTR on_map_function(FunctionID fid, void *data, BOOL *hook)
{
	struct jt_clr_fn *fn;

	(void)data;
	pthread_mutex_lock(&clr.lock);
	fn = fn_get(fid, false);
	pthread_mutex_unlock(&clr.lock);
	*hook = fn && fn->traced;
	return fn ? (UINT_PTR)fn : fid;	/* never 0: corprof.idl says the runtime needs that */
}

/*
 * Whether the runtime writes /tmp/perf-PID.map itself (DOTNET_PerfMapEnabled, or the older
 * COMPlus_ name, 1: map and jitdump, 3: map; its numbers are hex): then the module must not
 * write it too. Whoever opens it second would cut the other's lines (NUL bytes where the
 * runtime's offset ran past the module's truncation) and every method would be named twice.
 */
static bool runtime_writes_map(void)
{
	static const char *const vars[] = { "DOTNET_PerfMapEnabled", "COMPlus_PerfMapEnabled" };
	unsigned long v;
	const char *s;
	char *end;
	int i;

	for (i = 0; i < 2; i++) {
		s = getenv(vars[i]);
		if (!s || !*s)
			continue;
		v = strtoul(s, &end, 16);
		return !*end && (v == 1 || v == 3);
	}
	return false;
}

static HRESULT init(void *unk, bool attach)
{
	DWORD low = COR_PRF_MONITOR_JIT_COMPILATION, high = 0;
	struct jt_clr_table *t;
	HRESULT hr;

	pthread_once(&clr.once, options_once);
	if (clr.options_err)
		return E_FAIL;
	if (runtime_writes_map())
		jitrace_perfmap_off();
	hr = ((struct jt_clr_info *)unk)->vtbl->QueryInterface(unk, &iid_info9, (void **)&clr.info);
	if (hr < 0 || !clr.info) {
		fprintf(stderr, "jitrace-coreclr: this runtime has no ICorProfilerInfo9 (.NET Core "
			"3.0 or later is needed); not loaded\n");
		return E_FAIL;
	}
	t = table_new(JT_CLR_TABLE_MIN);
	if (!t) {
		fprintf(stderr, "jitrace-coreclr: out of memory; not loaded\n");
		return E_FAIL;
	}
	atomic_store_explicit(&clr.table, t, memory_order_release);
	/* dynamic methods are freed with their code: the one unload the runtime tells */
	high |= COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS;
	if (!attach)
		low |= COR_PRF_MONITOR_CACHE_SEARCHES;	/* ReadyToRun code as it is used */
	if (clr.calls && attach) {
		fprintf(stderr, "jitrace-coreclr: calls are recorded only when the module is "
			"loaded at start-up; attached for code loads\n");
	} else if (clr.calls && pthread_key_create(&clr.stack_key, stack_free)) {
		fprintf(stderr, "jitrace-coreclr: no thread key for call stacks; not recording "
			"calls\n");
	} else if (clr.calls) {
		low |= COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_MONITOR_EXCEPTIONS |
		       COR_PRF_ENABLE_FRAME_INFO;
		/* a traced method must not be inlined (it would have no hooks of its own):
		 * none at all without a filter, else each one as the JIT asks */
		if (!clr.nr_filters)
			low |= COR_PRF_DISABLE_INLINING;
	}
	hr = clr.info->vtbl->SetEventMask2(clr.info, low, high);
	if (hr < 0) {
		fprintf(stderr, "jitrace-coreclr: the runtime refused events %#x/%#x (HRESULT "
			"%#x); not loaded\n", low, high, (unsigned int)hr);
		return E_FAIL;
	}
	if (!(low & COR_PRF_MONITOR_ENTERLEAVE))
		return S_OK;
	/* the hooks only once the mask asks for them (else CORPROF_E_INCONSISTENT_WITH_FLAGS) */
	hr = clr.info->vtbl->SetFunctionIDMapper2(clr.info, on_map_function, NULL);
	if (hr >= 0)
		hr = clr.info->vtbl->SetEnterLeaveFunctionHooks3WithInfo(clr.info, on_enter,
									 on_leave, on_leave);
	if (hr < 0) {
		fprintf(stderr, "jitrace-coreclr: the runtime refused the enter and leave hooks "
			"(HRESULT %#x); not recording calls\n", (unsigned int)hr);
		low &= ~(DWORD)(COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_DISABLE_INLINING);
		clr.info->vtbl->SetEventMask2(clr.info, low, high);
	}
	return S_OK;
}

static HRESULT on_initialize(void *self, void *info)
{
	(void)self;
	return init(info, false);
}

static HRESULT on_initialize_for_attach(void *self, void *info, void *data, uint32_t len)
{
	(void)self;
	(void)data;
	(void)len;
	return init(info, true);
}

/* Attached to a running process: the code compiled before, as if compiled now. */
static HRESULT on_profiler_attach_complete(void *self)
{
	struct jt_clr_function_enum *e = NULL;
	COR_PRF_FUNCTION f[64];
	ULONG n, i;

	(void)self;
	if (clr.info->vtbl->EnumJITedFunctions2(clr.info, (void **)&e) < 0 || !e)
		return S_OK;
	while (e->vtbl->Next(e, 64, f, &n) >= 0 && n) {
		for (i = 0; i < n; i++)
			announce(f[i].functionId, f[i].reJitId, false);
	}
	e->vtbl->Release(e);
	return S_OK;
}

static HRESULT on_shutdown(void *self)
{
	uint64_t misses = atomic_load_explicit(&clr.misses, memory_order_relaxed);

	(void)self;
	atomic_store_explicit(&clr.shut, true, memory_order_relaxed);
	if (misses)
		fprintf(stderr, "jitrace-coreclr: %llu calls not recorded (a method running "
			"before its compilation was reported, or out of memory)\n",
			(unsigned long long)misses);
	if (atomic_load_explicit(&clr.no_code, memory_order_relaxed))
		fprintf(stderr, "jitrace-coreclr: %llu compiled methods never showed their code; "
			"not named\n", (unsigned long long)atomic_load_explicit(
				&clr.no_code, memory_order_relaxed));
	return S_OK;
}

static HRESULT on_jit_compilation_finished(void *self, FunctionID fid, HRESULT status,
					   BOOL safe)
{
	(void)self;
	(void)safe;
	if (status >= 0)
		announce(fid, 0, false);
	return S_OK;
}

static HRESULT on_rejit_compilation_finished(void *self, FunctionID fid, ReJITID rejit,
					     HRESULT status, BOOL safe)
{
	(void)self;
	(void)safe;
	if (status >= 0)
		announce(fid, rejit, false);
	return S_OK;
}

static HRESULT on_dynamic_method_jit_compilation_finished(void *self, FunctionID fid,
							  HRESULT status, BOOL safe)
{
	(void)self;
	(void)safe;
	if (status >= 0)
		announce(fid, 0, true);
	return S_OK;
}

static HRESULT on_jit_cached_function_search_started(void *self, FunctionID fid, BOOL *use)
{
	(void)self;
	(void)fid;
	*use = 1;	/* ReadyToRun code is welcome */
	return S_OK;
}

static HRESULT on_jit_cached_function_search_finished(void *self, FunctionID fid, int result)
{
	(void)self;
	if (result == COR_PRF_CACHED_FUNCTION_FOUND)
		announce(fid, 0, false);
	return S_OK;
}

static HRESULT on_jit_inlining(void *self, FunctionID caller, FunctionID callee, BOOL *inline_it)
{
	struct jt_clr_fn *fn;

	(void)self;
	(void)caller;
	pthread_mutex_lock(&clr.lock);
	fn = fn_get(callee, false);
	pthread_mutex_unlock(&clr.lock);
	if (fn && fn->traced)
		*inline_it = 0;		/* inlined, it would have no enter and leave */
	return S_OK;
}

static HRESULT on_dynamic_method_unloaded(void *self, FunctionID fid)
{
	struct jt_clr_fn *fn;
	uint8_t i;

	(void)self;
	pthread_mutex_lock(&clr.lock);
	fn = lookup(fid);
	if (fn && !fn->unloaded) {
		fn->unloaded = true;
		for (i = 0; i < fn->nr_ids; i++)
			jitrace_code_unload(fn->ids[i]);
	}
	pthread_mutex_unlock(&clr.lock);
	return S_OK;
}

/*
 * An exception unwinds frames without their leave hooks: the runtime says which function
 * the unwinding is in (UnwindFunctionEnter) and when its frame is gone (UnwindFunctionLeave);
 * and where it is caught, every frame above the catcher's is gone too.
 */
static HRESULT on_exception_unwind_function_enter(void *self, FunctionID fid)
{
	struct jt_clr_stack *st = clr_stack;

	(void)self;
	if (st)
		st->unwinding = lookup(fid);
	return S_OK;
}

static HRESULT on_exception_unwind_function_leave(void *self)
{
	struct jt_clr_stack *st = clr_stack;

	(void)self;
	if (st && st->unwinding) {
		leave_through(st, st->unwinding);
		st->unwinding = NULL;
	}
	return S_OK;
}

static HRESULT on_exception_catcher_enter(void *self, FunctionID fid, UINT_PTR object)
{
	struct jt_clr_stack *st = clr_stack;
	struct jt_clr_fn *fn = lookup(fid);
	size_t i;

	(void)self;
	(void)object;
	if (!st || !fn)
		return S_OK;
	st->unwinding = NULL;
	for (i = st->depth; i > 0 && st->frames[i - 1].fn != fn; i--)
		;
	while (i && st->depth > i)	/* the catcher itself stays */
		jitrace_method_leave(st->frames[--st->depth].id);
	return S_OK;
}

/* ---- the class factory and the entry point ---- */

static HRESULT factory_query_interface(void *self, const GUID *iid, void **out)
{
	*out = NULL;
	if (!guid_eq(iid, &iid_iunknown) && !guid_eq(iid, &iid_iclassfactory))
		return E_NOINTERFACE;
	*out = self;
	return S_OK;
}

static HRESULT factory_create_instance(void *self, void *outer, const GUID *iid, void **out)
{
	(void)self;
	*out = NULL;
	if (outer)
		return CLASS_E_NOAGGREGATION;
	return on_query_interface(&clr, iid, out);
}

static HRESULT factory_lock_server(void *self, BOOL lock)
{
	(void)self;
	(void)lock;
	return S_OK;
}

#define SLOT(fn) ((jt_clr_slot_fn)(fn))

static const jt_clr_slot_fn factory_slots[] = {
	SLOT(factory_query_interface), SLOT(on_add_ref), SLOT(on_add_ref),
	SLOT(factory_create_instance), SLOT(factory_lock_server),
};

static void fill_slots(void)
{
	static const struct { int slot; jt_clr_slot_fn fn; } used[] = {
		{ CB_QUERY_INTERFACE, SLOT(on_query_interface) },
		{ CB_ADD_REF, SLOT(on_add_ref) },
		{ CB_RELEASE, SLOT(on_add_ref) },
		{ CB_INITIALIZE, SLOT(on_initialize) },
		{ CB_SHUTDOWN, SLOT(on_shutdown) },
		{ CB_JIT_COMPILATION_FINISHED, SLOT(on_jit_compilation_finished) },
		{ CB_JIT_CACHED_FUNCTION_SEARCH_STARTED,
		  SLOT(on_jit_cached_function_search_started) },
		{ CB_JIT_CACHED_FUNCTION_SEARCH_FINISHED,
		  SLOT(on_jit_cached_function_search_finished) },
		{ CB_JIT_INLINING, SLOT(on_jit_inlining) },
		{ CB_EXCEPTION_UNWIND_FUNCTION_ENTER, SLOT(on_exception_unwind_function_enter) },
		{ CB_EXCEPTION_UNWIND_FUNCTION_LEAVE, SLOT(on_exception_unwind_function_leave) },
		{ CB_EXCEPTION_CATCHER_ENTER, SLOT(on_exception_catcher_enter) },
		{ CB_INITIALIZE_FOR_ATTACH, SLOT(on_initialize_for_attach) },
		{ CB_PROFILER_ATTACH_COMPLETE, SLOT(on_profiler_attach_complete) },
		{ CB_REJIT_COMPILATION_FINISHED, SLOT(on_rejit_compilation_finished) },
		{ CB_DYNAMIC_METHOD_JIT_COMPILATION_FINISHED,
		  SLOT(on_dynamic_method_jit_compilation_finished) },
		{ CB_DYNAMIC_METHOD_UNLOADED, SLOT(on_dynamic_method_unloaded) },
		{ CB_LOAD_AS_NOTIFICATION_ONLY, SLOT(on_load_as_notification_only) },
	};
	size_t i;

	for (i = 0; i < CB_NR; i++)
		clr.slots[i] = SLOT(on_nothing);
	for (i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		clr.slots[used[i].slot] = used[i].fn;
	clr.vtbl = clr.slots;
	clr.factory_vtbl = factory_slots;
}

static pthread_once_t slots_once = PTHREAD_ONCE_INIT;

JT_CLR_API HRESULT DllGetClassObject(const GUID *clsid, const GUID *iid, void **out);
JT_CLR_API HRESULT DllCanUnloadNow(void);

/* What the runtime calls first, with the CLSID CORECLR_PROFILER named. */
JT_CLR_API HRESULT DllGetClassObject(const GUID *clsid, const GUID *iid, void **out)
{
	*out = NULL;
	if (!guid_eq(clsid, &clsid_jitrace))
		return CLASS_E_CLASSNOTAVAILABLE;
	pthread_once(&slots_once, fill_slots);
	return factory_query_interface(&clr.factory_vtbl, iid, out);
}

/* The runtime never unloads a profiler it initialized. */
JT_CLR_API HRESULT DllCanUnloadNow(void)
{
	return S_FALSE;
}
