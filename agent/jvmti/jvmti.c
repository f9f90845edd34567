// SPDX-License-Identifier: MIT
/*
 * libjitrace-jvmti: HotSpot glue over libjitrace-agent. Compiled methods and generated stubs
 * become code loads, freed methods code unloads, and (with the "calls" option) every method
 * entry and exit an enter/leave.
 *
 *   java -agentpath:/path/libjitrace-jvmti.so[=OPTIONS] ...
 *   jcmd PID JVMTI.agent_load /path/libjitrace-jvmti.so [OPTIONS]
 *
 * OPTIONS, separated by commas: "calls" (every method), "calls=PREFIX[:PREFIX...]" (methods
 * whose full name, e.g. "com.example.Foo.bar(int)", starts with a PREFIX; a trailing '*'
 * is ignored), "verbose".
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

#include "jitrace/agent.h"
#include "scopes.h"

#define JT_API __attribute__((visibility("default")))
#define NAME_LEN 1024
#define MAX_PREFIXES 32

/* Open addressing on a non-zero 64-bit key, linear probing, backward-shift deletion. */
struct slot {
	uint64_t key;
	uint64_t id;		/* libjitrace-agent id; 0: a method the calls filter leaves out */
	uint64_t size;		/* code: bytes; method: unused */
	uint64_t method;	/* code: the jmethodID, 0 for generated stubs */
};

struct table {
	struct slot *v;
	size_t cap;		/* a power of two, or 0 */
	size_t n;
};

/*
 * A JVMTI agent is loaded once into a JVM, so its state is per process by nature: like
 * libjitrace-agent, this glue keeps its state in one global.
 */
static struct {
	jvmtiEnv *jvmti;
	pthread_mutex_t lock;	/* guards code and methods */
	struct table code;	/* code address -> id of the code live there */
	struct table methods;	/* jmethodID -> id for enter/leave */
	bool calls;
	bool verbose;
	bool scopes;		/* inlined scopes and lines are sent with compiled code */
	int nr_prefixes;
	char *prefixes[MAX_PREFIXES];
} jt = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static struct slot *table_find(const struct table *t, uint64_t key)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = hash64(key) & (t->cap - 1); t->v[i].key; i = (i + 1) & (t->cap - 1))
		if (t->v[i].key == key)
			return &t->v[i];
	return NULL;
}

static int table_grow(struct table *t)
{
	size_t cap = t->cap ? 2 * t->cap : 1024, i, j;
	struct slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->v[i].key)
			continue;
		for (j = hash64(t->v[i].key) & (cap - 1); v[j].key; j = (j + 1) & (cap - 1))
			;
		v[j] = t->v[i];
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return 0;
}

/* The slot for key, new (key set, rest zero) or existing; NULL when out of memory. */
static struct slot *table_put(struct table *t, uint64_t key)
{
	struct slot *s = table_find(t, key);
	size_t i;

	if (s)
		return s;
	if (2 * (t->n + 1) > t->cap && table_grow(t))
		return NULL;
	for (i = hash64(key) & (t->cap - 1); t->v[i].key; i = (i + 1) & (t->cap - 1))
		;
	t->v[i] = (struct slot){ .key = key };
	t->n++;
	return &t->v[i];
}

static void table_del(struct table *t, struct slot *s)
{
	size_t mask = t->cap - 1, i = s - t->v, j = i, home;

	t->v[i].key = 0;
	t->n--;
	/* pull later entries of the same run back over the hole */
	for (;;) {
		j = (j + 1) & mask;
		if (!t->v[j].key)
			return;
		home = hash64(t->v[j].key) & mask;
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->v[i] = t->v[j];
			t->v[j].key = 0;
			i = j;
		}
	}
}

static void report(jvmtiError err, const char *what)
{
	char *msg = NULL;

	if (jt.jvmti)
		(*jt.jvmti)->GetErrorName(jt.jvmti, err, &msg);
	fprintf(stderr, "jitrace-jvmti: %s: %s (JVMTI error %d)\n", what, msg ? msg : "?", err);
	if (msg)
		(*jt.jvmti)->Deallocate(jt.jvmti, (unsigned char *)msg);
}

/*
 * Code [addr, addr+size) is live under name: returns its id, 0 for a replay
 * (GenerateEvents) of code we already announced, which is skipped. Other code at the same
 * address means the old code is gone.
 */
static uint64_t code_live(const void *addr, uint64_t size, jmethodID method, const char *name)
{
	struct slot *s;
	uint64_t id;

	pthread_mutex_lock(&jt.lock);
	s = table_find(&jt.code, (uintptr_t)addr);
	if (s && s->size == size && s->method == (uintptr_t)method) {
		pthread_mutex_unlock(&jt.lock);
		return 0;
	}
	if (s)
		jitrace_code_unload(s->id);
	else
		s = table_put(&jt.code, (uintptr_t)addr);
	/* no room to remember it: still named, only its unload will be missed */
	id = jitrace_code_load(addr, size, name);
	if (s) {
		s->id = id;
		s->size = size;
		s->method = (uintptr_t)method;
	}
	pthread_mutex_unlock(&jt.lock);
	return id;
}

static void JNICALL on_compiled_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
				     const void *code_addr, jint map_length,
				     const jvmtiAddrLocationMap *map, const void *compile_info)
{
	char name[NAME_LEN];
	void *scopes = NULL;
	size_t len;
	uint64_t id;

	(void)map_length;
	(void)map;	/* pc to bytecode index of the method alone: compile_info says more */
	if (!jt_jvmti_method_name(jvmti, method, name, sizeof(name)))
		snprintf(name, sizeof(name), "[java method %p]", (void *)method);
	id = code_live(code_addr, code_size, method, name);
	if (!id || !jt.scopes)
		return;
	/* on this thread, after the load: jitrace joins them by id, in order */
	len = jt_jvmti_scopes(jvmti, code_addr, code_size, compile_info, &scopes);
	if (len)
		jitrace_code_inline(id, scopes, len);
	else if (jt.verbose && compile_info)
		fprintf(stderr, "jitrace-jvmti: no inlined scopes for %s\n", name);
	free(scopes);
}

/*
 * HotSpot posts unloads late (from its service thread), possibly after new code was loaded
 * at the same address: an unload for another method than the live one is stale.
 */
static void JNICALL on_compiled_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr)
{
	struct slot *s;

	(void)jvmti;
	pthread_mutex_lock(&jt.lock);
	s = table_find(&jt.code, (uintptr_t)code_addr);
	if (s && s->method == (uintptr_t)method) {
		jitrace_code_unload(s->id);
		table_del(&jt.code, s);
	}
	pthread_mutex_unlock(&jt.lock);
}

static void JNICALL on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				    jint length)
{
	(void)jvmti;
	code_live(address, length, NULL, name);
}

static bool wanted(const char *name)
{
	int i;

	if (!jt.nr_prefixes)
		return true;
	for (i = 0; i < jt.nr_prefixes; i++)
		if (!strncmp(name, jt.prefixes[i], strlen(jt.prefixes[i])))
			return true;
	return false;
}

/*
 * The id enter/leave carry for method, 0 if the filter leaves it out. The first time, the
 * method is named by a code load of size 0: a definition that covers no code.
 */
static uint64_t method_id(jvmtiEnv *jvmti, jmethodID method, bool create)
{
	char name[NAME_LEN];
	struct slot *s;
	uint64_t id;

	pthread_mutex_lock(&jt.lock);
	s = table_find(&jt.methods, (uintptr_t)method);
	id = s ? s->id : 0;
	pthread_mutex_unlock(&jt.lock);
	if (s || !create)
		return id;
	if (!jt_jvmti_method_name(jvmti, method, name, sizeof(name)))
		snprintf(name, sizeof(name), "[java method %p]", (void *)method);
	pthread_mutex_lock(&jt.lock);
	s = table_put(&jt.methods, (uintptr_t)method);
	if (s && !s->id && wanted(name))
		s->id = jitrace_code_load(NULL, 0, name);
	id = s ? s->id : 0;
	pthread_mutex_unlock(&jt.lock);
	return id;
}

static void JNICALL on_method_entry(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
				    jmethodID method)
{
	uint64_t id = method_id(jvmti, method, true);

	(void)jni;
	(void)thread;
	if (id)
		jitrace_method_enter(id);
}

static void JNICALL on_method_exit(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
				   jmethodID method, jboolean by_exception, jvalue value)
{
	/* a frame entered before we attached has no enter: leave it out too */
	uint64_t id = method_id(jvmti, method, false);

	(void)jni;
	(void)thread;
	(void)by_exception;
	(void)value;
	if (id)
		jitrace_method_leave(id);
}

/* Announce what was compiled or generated before we were listening. */
static void replay(jvmtiEnv *jvmti)
{
	jvmtiError err;

	err = (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	if (err != JVMTI_ERROR_NONE)
		report(err, "replaying generated code");
	err = (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	if (err != JVMTI_ERROR_NONE)
		report(err, "replaying compiled methods");
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jni;
	(void)thread;
	replay(jvmti);
}

static int parse_options(const char *options)
{
	char *copy, *opt, *save = NULL;
	int err = 0;

	if (!options || !*options)
		return 0;
	copy = strdup(options);
	if (!copy)
		return -ENOMEM;
	for (opt = strtok_r(copy, ",", &save); opt && !err; opt = strtok_r(NULL, ",", &save)) {
		if (!strcmp(opt, "verbose")) {
			jt.verbose = true;
		} else if (!strcmp(opt, "calls")) {
			jt.calls = true;
		} else if (!strncmp(opt, "calls=", 6)) {
			char *p, *psave = NULL;

			jt.calls = true;
			for (p = strtok_r(opt + 6, ":", &psave); p; p = strtok_r(NULL, ":", &psave)) {
				size_t n = strlen(p);

				if (jt.nr_prefixes == MAX_PREFIXES) {
					fprintf(stderr, "jitrace-jvmti: more than %d prefixes in "
						"'%s'\n", MAX_PREFIXES, options);
					err = -EINVAL;
					break;
				}
				if (n && p[n - 1] == '*')
					p[n - 1] = 0;
				jt.prefixes[jt.nr_prefixes] = strdup(p);
				if (!jt.prefixes[jt.nr_prefixes]) {
					err = -ENOMEM;
					break;
				}
				jt.nr_prefixes++;
			}
		} else {
			fprintf(stderr, "jitrace-jvmti: unknown option '%s' in '%s' (options: "
				"calls, calls=PREFIX[:PREFIX...], verbose)\n", opt, options);
			err = -EINVAL;
		}
	}
	free(copy);
	return err;
}

static int enable(jvmtiEnv *jvmti, jvmtiEvent ev, const char *what)
{
	jvmtiError err = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, ev, NULL);

	if (err != JVMTI_ERROR_NONE) {
		report(err, what);
		return -1;
	}
	return 0;
}

static jint start(JavaVM *vm, const char *options, bool live)
{
	jvmtiCapabilities caps = { 0 };
	jvmtiEventCallbacks cb = { 0 };
	jvmtiEnv *jvmti;
	jvmtiError err;
	jint rc;

	if (jt.jvmti) {
		fprintf(stderr, "jitrace-jvmti: already loaded in this JVM\n");
		return 0;
	}
	if (parse_options(options))
		return JNI_ERR;
	rc = (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2);
	if (rc != JNI_OK) {
		fprintf(stderr, "jitrace-jvmti: no JVMTI 1.2 environment (GetEnv: %d)\n", (int)rc);
		return JNI_ERR;
	}
	jt.jvmti = jvmti;
	caps.can_generate_compiled_method_load_events = 1;
	if (jt.calls) {
		/* the JVM runs methods with these events in the interpreter */
		caps.can_generate_method_entry_events = 1;
		caps.can_generate_method_exit_events = 1;
	}
	err = (*jvmti)->AddCapabilities(jvmti, &caps);
	if (err != JVMTI_ERROR_NONE) {
		report(err, jt.calls ? "asking for compiled-code and method entry/exit events"
				     : "asking for compiled-code events");
		return JNI_ERR;
	}
	/* inlined frames need line tables; without them, names alone */
	caps = (jvmtiCapabilities){ .can_get_line_numbers = 1, .can_get_source_file_name = 1 };
	err = (*jvmti)->AddCapabilities(jvmti, &caps);
	jt.scopes = err == JVMTI_ERROR_NONE;
	if (!jt.scopes)
		report(err, "asking for line numbers (inlined frames are off)");
	cb.CompiledMethodLoad = on_compiled_load;
	cb.CompiledMethodUnload = on_compiled_unload;
	cb.DynamicCodeGenerated = on_dynamic_code;
	cb.VMInit = on_vm_init;
	cb.MethodEntry = on_method_entry;
	cb.MethodExit = on_method_exit;
	err = (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb));
	if (err != JVMTI_ERROR_NONE) {
		report(err, "setting event callbacks");
		return JNI_ERR;
	}
	if (enable(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD, "enabling CompiledMethodLoad") ||
	    enable(jvmti, JVMTI_EVENT_COMPILED_METHOD_UNLOAD, "enabling CompiledMethodUnload") ||
	    enable(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, "enabling DynamicCodeGenerated"))
		return JNI_ERR;
	if (jt.calls && (enable(jvmti, JVMTI_EVENT_METHOD_ENTRY, "enabling MethodEntry") ||
			 enable(jvmti, JVMTI_EVENT_METHOD_EXIT, "enabling MethodExit")))
		return JNI_ERR;
	if (live)
		replay(jvmti);
	else if (enable(jvmti, JVMTI_EVENT_VM_INIT, "enabling VMInit"))
		return JNI_ERR;
	if (jt.verbose)
		fprintf(stderr, "jitrace-jvmti: %s, calls %s\n", live ? "attached" : "loaded",
			jt.calls ? (jt.nr_prefixes ? "of the listed prefixes" : "of every method")
				 : "off");
	return JNI_OK;
}

JT_API jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return start(vm, options, false);
}

JT_API jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return start(vm, options, true);
}
