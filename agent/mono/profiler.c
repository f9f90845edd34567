// SPDX-License-Identifier: MIT
/*
 * Mono profiler module: `mono --profile=jitrace[:calls[=PREFIX],...]` tells jitrace (through
 * libjitrace-agent) about every method Mono compiles, every stub it writes, code it frees,
 * and, with `calls`, every method entry and exit.
 *
 * Mono (6.8) looks for mono_profiler_init_jitrace in the executable, then dlopens
 * libmono-profiler-jitrace.so from its own lib directory (/usr/lib) and the dynamic loader's
 * path (LD_LIBRARY_PATH, ld.so.cache). It says nothing when the module is missing.
 * /usr/bin/mono links the runtime statically and exports the mono_* functions, so this module
 * leaves them undefined and links only libjitrace-agent.so, whose stubs jitrace probes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mono/metadata/debug-helpers.h>
#include <mono/metadata/profiler.h>

#include "jitrace/agent.h"

#define JT_MONO_API __attribute__((visibility("default")))
#define JT_MONO_TABLE_MIN 4096	/* slots; a small program JITs about a thousand methods */
#define JT_MONO_NAME_MAX 1024
#define JT_MONO_FILTERS_MAX 32

/* One MonoMethod and the id its enters and leaves carry. */
struct jt_mono_slot {
	_Atomic(uintptr_t) method;	/* 0: empty; set once, never cleared */
	_Atomic(uint64_t) id;		/* 0: freed (or not yet compiled again) */
	const void *code;		/* the code last announced for it (under the lock) */
};

/*
 * Open addressing, insert only, one writer at a time (the lock) and readers without any
 * lock: enter and leave run on every call of every thread. A full table is copied into one
 * twice the size; the old one stays readable until cleanup, since a reader may still be in it.
 */
struct jt_mono_table {
	struct jt_mono_table *retired;	/* the table this one replaced */
	size_t mask, used;
	struct jt_mono_slot slots[];
};

/*
 * Mono hands this to every callback. A runtime loads a profiler once, at start, so there is
 * exactly one, in static storage: the one global of this module.
 */
struct _MonoProfiler {
	MonoProfilerHandle handle;
	pthread_mutex_t lock;	/* writers of the table */
	_Atomic(struct jt_mono_table *) table;
	bool calls;
	char *filters[JT_MONO_FILTERS_MAX];	/* name prefixes whose calls are recorded */
	int nr_filters;
	pthread_key_t stack_key;	/* frees each thread's jt_mono_stack */
	bool stack_key_made;
	_Atomic(uint64_t) misses;	/* calls not recorded: method unknown, or no memory */
};

static struct _MonoProfiler jt_mono = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t slot_of(const struct jt_mono_table *t, uintptr_t method)
{
	/* MonoMethods are 8-byte aligned heap pointers: mix the high bits down */
	return (size_t)(((uint64_t)method * 0x9e3779b97f4a7c15ull) >> 32) & t->mask;
}

static struct jt_mono_table *table_new(size_t nr_slots)
{
	struct jt_mono_table *t = calloc(1, sizeof(*t) + nr_slots * sizeof(t->slots[0]));

	if (!t)
		return NULL;
	t->mask = nr_slots - 1;
	return t;
}

static struct jt_mono_slot *table_find(struct jt_mono_table *t, uintptr_t method)
{
	size_t i = slot_of(t, method);

	for (;;) {
		uintptr_t k = atomic_load_explicit(&t->slots[i].method, memory_order_acquire);

		if (k == method)
			return &t->slots[i];
		if (!k)
			return NULL;
		i = (i + 1) & t->mask;
	}
}

/* Under the lock. The id is stored before the key, so a reader that sees the key sees it. */
static struct jt_mono_slot *table_insert(struct jt_mono_table *t, uintptr_t method, uint64_t id,
					 const void *code)
{
	size_t i = slot_of(t, method);

	while (atomic_load_explicit(&t->slots[i].method, memory_order_relaxed))
		i = (i + 1) & t->mask;
	atomic_store_explicit(&t->slots[i].id, id, memory_order_relaxed);
	t->slots[i].code = code;
	atomic_store_explicit(&t->slots[i].method, method, memory_order_release);
	t->used++;
	return &t->slots[i];
}

/* Under the lock: a table with room for one more, or NULL if memory ran out. */
static struct jt_mono_table *table_room(struct _MonoProfiler *prof)
{
	struct jt_mono_table *t = atomic_load_explicit(&prof->table, memory_order_relaxed), *n;
	size_t i;

	if (2 * (t->used + 1) <= t->mask + 1)
		return t;
	n = table_new(2 * (t->mask + 1));
	if (!n) {
		fprintf(stderr, "jitrace-mono: out of memory growing the method table to %zu\n",
			2 * (t->mask + 1));
		return NULL;
	}
	for (i = 0; i <= t->mask; i++) {
		uintptr_t k = atomic_load_explicit(&t->slots[i].method, memory_order_relaxed);

		if (k)
			table_insert(n, k, atomic_load_explicit(&t->slots[i].id,
								memory_order_relaxed),
				     t->slots[i].code);
	}
	n->retired = t;
	atomic_store_explicit(&prof->table, n, memory_order_release);
	return n;
}

static uint64_t method_id(struct _MonoProfiler *prof, MonoMethod *method)
{
	struct jt_mono_table *t = atomic_load_explicit(&prof->table, memory_order_acquire);
	struct jt_mono_slot *s;

	if (!t)		/* after cleanup */
		return 0;
	s = table_find(t, (uintptr_t)method);
	return s ? atomic_load_explicit(&s->id, memory_order_relaxed) : 0;
}

/* Mono's full name with signature, `Namespace.Class:Method (int,string)`, into buf. */
static const char *method_name(MonoMethod *method, char *buf, size_t len)
{
	char *name = mono_method_full_name(method, 1);

	snprintf(buf, len, "%s", name ? name : "[unnamed method]");
	mono_free(name);
	return buf;
}

static void on_jit_done(MonoProfiler *prof, MonoMethod *method, MonoJitInfo *jinfo)
{
	const void *code = mono_jit_info_get_code_start(jinfo);
	int size = mono_jit_info_get_code_size(jinfo);
	char name[JT_MONO_NAME_MAX];
	struct jt_mono_table *t;
	struct jt_mono_slot *s;
	uint64_t id;

	if (!code || size <= 0)
		return;
	method_name(method, name, sizeof(name));
	pthread_mutex_lock(&prof->lock);
	t = atomic_load_explicit(&prof->table, memory_order_relaxed);
	if (!t) {	/* after cleanup */
		pthread_mutex_unlock(&prof->lock);
		return;
	}
	s = table_find(t, (uintptr_t)method);
	/* Mono announces an icall's code twice, for the method and again after its wrapper */
	if (s && s->code == code && atomic_load_explicit(&s->id, memory_order_relaxed)) {
		pthread_mutex_unlock(&prof->lock);
		return;
	}
	id = jitrace_code_load(code, (size_t)size, name);
	if (s) {
		/* compiled again (another domain): calls keep the first id while it lives */
		if (!atomic_load_explicit(&s->id, memory_order_relaxed))
			atomic_store_explicit(&s->id, id, memory_order_relaxed);
		s->code = code;
	} else if ((t = table_room(prof))) {
		table_insert(t, (uintptr_t)method, id, code);
	}
	pthread_mutex_unlock(&prof->lock);
}

/* Dynamic methods (DynamicMethod, LCG) are freed with their code: the one unload Mono tells. */
static void on_method_free(MonoProfiler *prof, MonoMethod *method)
{
	struct jt_mono_table *t;
	struct jt_mono_slot *s;
	uint64_t id;

	pthread_mutex_lock(&prof->lock);
	t = atomic_load_explicit(&prof->table, memory_order_relaxed);
	s = t ? table_find(t, (uintptr_t)method) : NULL;
	if (s && (id = atomic_load_explicit(&s->id, memory_order_relaxed))) {
		/* the address may come back as another MonoMethod: it starts again from 0 */
		atomic_store_explicit(&s->id, 0, memory_order_relaxed);
		s->code = NULL;
		jitrace_code_unload(id);
	}
	pthread_mutex_unlock(&prof->lock);
}

static const char *code_buffer_kind(MonoProfilerCodeBufferType type)
{
	switch (type) {
	case MONO_PROFILER_CODE_BUFFER_METHOD_TRAMPOLINE:
		return "method trampoline";
	case MONO_PROFILER_CODE_BUFFER_UNBOX_TRAMPOLINE:
		return "unbox trampoline";
	case MONO_PROFILER_CODE_BUFFER_IMT_TRAMPOLINE:
		return "IMT trampoline";
	case MONO_PROFILER_CODE_BUFFER_GENERICS_TRAMPOLINE:
		return "generics trampoline";
	case MONO_PROFILER_CODE_BUFFER_SPECIFIC_TRAMPOLINE:
		return "trampoline";
	case MONO_PROFILER_CODE_BUFFER_HELPER:
		return "helper";
	case MONO_PROFILER_CODE_BUFFER_MONITOR:
		return "monitor";
	case MONO_PROFILER_CODE_BUFFER_DELEGATE_INVOKE:
		return "delegate invoke";
	case MONO_PROFILER_CODE_BUFFER_EXCEPTION_HANDLING:
		return "exception handling";
	default:
		return "code";
	}
}

/* Trampolines and helpers, named `[mono] KIND[: WHAT]`: samples in them are not unnamed. */
static void on_code_buffer(MonoProfiler *prof, const mono_byte *buffer, uint64_t size,
			   MonoProfilerCodeBufferType type, const void *data)
{
	char name[JT_MONO_NAME_MAX + 64], method[JT_MONO_NAME_MAX];
	const char *kind = code_buffer_kind(type);

	(void)prof;
	/* a method's own code: on_jit_done has it, with its jit info */
	if (type == MONO_PROFILER_CODE_BUFFER_METHOD || !buffer || !size)
		return;
	if (type == MONO_PROFILER_CODE_BUFFER_SPECIFIC_TRAMPOLINE && data)
		snprintf(name, sizeof(name), "[mono] %s: %s", kind, (const char *)data);
	else if (type == MONO_PROFILER_CODE_BUFFER_UNBOX_TRAMPOLINE && data)
		snprintf(name, sizeof(name), "[mono] %s: %s", kind,
			 method_name((MonoMethod *)data, method, sizeof(method)));
	else
		snprintf(name, sizeof(name), "[mono] %s", kind);
	jitrace_code_load(buffer, (size_t)size, name);
}

/* Called once per method as Mono compiles it: which calls of it to instrument. */
static MonoProfilerCallInstrumentationFlags on_call_filter(MonoProfiler *prof,
							   MonoMethod *method)
{
	char name[JT_MONO_NAME_MAX];
	int i;

	if (prof->nr_filters) {
		method_name(method, name, sizeof(name));
		for (i = 0; i < prof->nr_filters; i++)
			if (!strncmp(name, prof->filters[i], strlen(prof->filters[i])))
				break;
		if (i == prof->nr_filters)
			return MONO_PROFILER_CALL_INSTRUMENTATION_NONE;
	}
	/* every way out of a method, so that enters and leaves pair up */
	return MONO_PROFILER_CALL_INSTRUMENTATION_ENTER | MONO_PROFILER_CALL_INSTRUMENTATION_LEAVE |
	       MONO_PROFILER_CALL_INSTRUMENTATION_TAIL_CALL |
	       MONO_PROFILER_CALL_INSTRUMENTATION_EXCEPTION_LEAVE;
}

/*
 * The methods each thread is inside, by id, as this module recorded them. Mono does not
 * pair its events: it raises exception_leave for each frame an exception unwinds, asking
 * the filter again at that moment, also for frames whose code has no enter instrumentation
 * (Mono 6.8 instruments little of mscorlib, whatever the filter says). A leave is recorded
 * only for the innermost open enter of its method, so that what jitrace sees nests.
 * Each frame keeps its MonoMethod too: an ordinary leave is of the innermost frame, found
 * without looking the method up again.
 */
struct jt_mono_frame {
	uintptr_t method;
	uint64_t id;
};

struct jt_mono_stack {
	struct jt_mono_frame *frames;
	size_t depth, cap;
};

#define JT_MONO_STACK_MAX (1u << 20)	/* deeper calls are not recorded */

static __thread struct jt_mono_stack *jt_mono_stack
	__attribute__((tls_model("initial-exec")));

static void stack_free(void *stack)
{
	struct jt_mono_stack *st = stack;

	free(st->frames);
	free(st);
}

/* This thread's stack, made on its first call; NULL if memory ran out. */
static struct jt_mono_stack *stack_new(struct _MonoProfiler *prof)
{
	struct jt_mono_stack *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	/* the key's destructor frees it when the thread ends */
	if (pthread_setspecific(prof->stack_key, st)) {
		free(st);
		return NULL;
	}
	jt_mono_stack = st;
	return st;
}

/* Room for one more frame; false if memory ran out or the stack is too deep to record. */
static __attribute__((noinline)) bool stack_grow(struct jt_mono_stack *st)
{
	size_t cap = st->cap ? 2 * st->cap : 256;
	struct jt_mono_frame *frames;

	if (cap > JT_MONO_STACK_MAX || !(frames = realloc(st->frames, cap * sizeof(*frames))))
		return false;
	st->frames = frames;
	st->cap = cap;
	return true;
}

/*
 * Mono compiles a method (jit_done) before it can run, so a call of an unknown method should
 * not happen; if it does, it is not recorded rather than recorded as a wrong method.
 * This and on_leave run on every instrumented call: one table lookup, one push, one stub.
 */
static void on_enter_id(struct _MonoProfiler *prof, MonoMethod *method)
{
	uint64_t id = method_id(prof, method);
	struct jt_mono_stack *st = jt_mono_stack;

	if (__builtin_expect(!st, 0) && id)	/* a thread's first call */
		st = stack_new(prof);
	if (!id || !st || (st->depth == st->cap && !stack_grow(st))) {
		atomic_fetch_add_explicit(&prof->misses, 1, memory_order_relaxed);
		return;
	}
	st->frames[st->depth].method = (uintptr_t)method;
	st->frames[st->depth++].id = id;
	jitrace_method_enter(id);
}

/* A leave that is not of the innermost frame: an exception, or a method never entered. */
static __attribute__((noinline)) void leave_search(struct _MonoProfiler *prof,
						   struct jt_mono_stack *st, MonoMethod *method)
{
	uint64_t id = method_id(prof, method);
	size_t i;

	if (!id)
		return;
	for (i = st->depth; i > 0; i--)
		if (st->frames[i - 1].id == id)
			break;
	if (!i)		/* never entered as far as we know: nothing to close */
		return;
	/* frames above it were left without a word from Mono: they cannot outlive it */
	while (st->depth > i)
		jitrace_method_leave(st->frames[--st->depth].id);
	st->depth--;
	jitrace_method_leave(id);
}

static void on_leave_id(struct _MonoProfiler *prof, MonoMethod *method)
{
	struct jt_mono_stack *st = jt_mono_stack;
	struct jt_mono_frame *top;

	if (!st || !st->depth)
		return;
	top = &st->frames[st->depth - 1];
	/* its id is the one method_id gives now: a method being left cannot have been freed */
	if (__builtin_expect(top->method == (uintptr_t)method, 1)) {
		st->depth--;
		jitrace_method_leave(top->id);
		return;
	}
	leave_search(prof, st, method);
}

static void on_enter(MonoProfiler *prof, MonoMethod *method, MonoProfilerCallContext *ctx)
{
	(void)ctx;
	on_enter_id(prof, method);
}

static void on_leave(MonoProfiler *prof, MonoMethod *method, MonoProfilerCallContext *ctx)
{
	(void)ctx;
	on_leave_id(prof, method);
}

/* method leaves by jumping to target, whose own enter follows */
static void on_tail_call(MonoProfiler *prof, MonoMethod *method, MonoMethod *target)
{
	(void)target;
	on_leave_id(prof, method);
}

static void on_exception_leave(MonoProfiler *prof, MonoMethod *method, MonoObject *exc)
{
	(void)exc;
	on_leave_id(prof, method);
}

static void on_cleanup(MonoProfiler *prof)
{
	struct jt_mono_table *t = atomic_load_explicit(&prof->table, memory_order_relaxed);
	uint64_t misses = atomic_load_explicit(&prof->misses, memory_order_relaxed);
	int i;

	if (misses)
		fprintf(stderr, "jitrace-mono: %llu calls not recorded (method not announced "
			"by Mono, or out of memory)\n", (unsigned long long)misses);
	pthread_mutex_lock(&prof->lock);
	atomic_store_explicit(&prof->table, NULL, memory_order_release);
	pthread_mutex_unlock(&prof->lock);
	while (t) {
		struct jt_mono_table *older = t->retired;

		free(t);
		t = older;
	}
	for (i = 0; i < prof->nr_filters; i++)
		free(prof->filters[i]);
	prof->nr_filters = 0;
	/* other threads' stacks go with their threads, by the key's destructor */
	if (prof->stack_key_made && jt_mono_stack) {
		pthread_setspecific(prof->stack_key, NULL);
		stack_free(jt_mono_stack);
		jt_mono_stack = NULL;
	}
}

/* `calls` or `calls=PREFIX`, comma-separated; false (after saying why) on anything else. */
static bool parse_options(struct _MonoProfiler *prof, const char *desc)
{
	const char *p = strchr(desc, ':');

	if (!p)
		return true;
	for (p++; *p;) {
		size_t len = strcspn(p, ",");

		if (len == 5 && !strncmp(p, "calls", 5)) {
			prof->calls = true;
		} else if (len > 6 && !strncmp(p, "calls=", 6)) {
			if (prof->nr_filters == JT_MONO_FILTERS_MAX) {
				fprintf(stderr, "jitrace-mono: more than %d calls= filters in "
					"--profile=%s\n", JT_MONO_FILTERS_MAX, desc);
				return false;
			}
			prof->filters[prof->nr_filters] = strndup(p + 6, len - 6);
			if (!prof->filters[prof->nr_filters]) {
				fprintf(stderr, "jitrace-mono: out of memory\n");
				return false;
			}
			prof->nr_filters++;
			prof->calls = true;
		} else if (len) {
			fprintf(stderr, "jitrace-mono: unknown option '%.*s' in --profile=%s "
				"(options: calls, calls=NAME_PREFIX)\n", (int)len, p, desc);
			return false;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return true;
}

JT_MONO_API void mono_profiler_init_jitrace(const char *desc);

JT_MONO_API void mono_profiler_init_jitrace(const char *desc)
{
	struct _MonoProfiler *prof = &jt_mono;
	struct jt_mono_table *t;

	if (!parse_options(prof, desc ? desc : "jitrace")) {
		on_cleanup(prof);
		/* like Mono's own profilers: a mistyped option must not trace silently less */
		exit(1);
	}
	t = table_new(JT_MONO_TABLE_MIN);
	if (!t) {
		fprintf(stderr, "jitrace-mono: out of memory; not tracing\n");
		on_cleanup(prof);
		return;
	}
	atomic_store_explicit(&prof->table, t, memory_order_release);
	prof->handle = mono_profiler_create(prof);
	mono_profiler_set_cleanup_callback(prof->handle, on_cleanup);
	mono_profiler_set_jit_done_callback(prof->handle, on_jit_done);
	mono_profiler_set_jit_code_buffer_callback(prof->handle, on_code_buffer);
	mono_profiler_set_method_free_callback(prof->handle, on_method_free);
	if (!prof->calls)
		return;
	if (pthread_key_create(&prof->stack_key, stack_free)) {
		fprintf(stderr, "jitrace-mono: no thread key for call stacks; not recording calls\n");
		return;
	}
	prof->stack_key_made = true;
	mono_profiler_set_call_instrumentation_filter_callback(prof->handle, on_call_filter);
	mono_profiler_set_method_enter_callback(prof->handle, on_enter);
	mono_profiler_set_method_leave_callback(prof->handle, on_leave);
	mono_profiler_set_method_tail_call_callback(prof->handle, on_tail_call);
	mono_profiler_set_method_exception_leave_callback(prof->handle, on_exception_leave);
}
