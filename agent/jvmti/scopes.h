/* SPDX-License-Identifier: MIT */
/* What libjitrace-jvmti's two files share: method names, and a method's inlined scopes. */
#ifndef JT_JVMTI_SCOPES_H
#define JT_JVMTI_SCOPES_H

#include <stdbool.h>
#include <stddef.h>

#include <jvmti.h>

/* "pkg.Class.method(params)" for method into out; false if the JVM cannot say. */
bool jt_jvmti_method_name(jvmtiEnv *jvmti, jmethodID method, char *out, size_t cap);

/*
 * The JT_REC_INLINE payload (include/jt_log_format.h) of code [code, code + size) from
 * CompiledMethodLoad's compile_info: each pc's chain of inlined methods with their source
 * lines. Returns its size and a malloc'd copy in *out, or 0 (nothing in *out) when
 * compile_info has no inlining record or the payload would pass JT_INLINE_BYTES_MAX.
 */
size_t jt_jvmti_scopes(jvmtiEnv *jvmti, const void *code, size_t size,
		       const void *compile_info, void **out);

#endif
