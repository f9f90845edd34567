/* SPDX-License-Identifier: MIT */
/*
 * Names of .NET methods from their metadata: a method signature blob (ECMA-335 II.23.2.1)
 * as C# writes the parameters, "(int, string, List<int>[])", and UTF-16 metadata strings as
 * UTF-8. Plain C over bytes: no runtime, so a unit test can drive it.
 */
#ifndef JT_CLR_SIG_H
#define JT_CLR_SIG_H

#include <stddef.h>
#include <stdint.h>

/* The name of a TypeDef, TypeRef or TypeSpec token into buf (cap bytes); 0, or -1 if it has
 * none (written then as "?"). */
typedef int (*jt_clr_sig_type_fn)(void *ctx, uint32_t token, char *buf, size_t cap);

/*
 * The parameters of the method signature sig (len bytes) as "(int, string)" into buf (cap
 * bytes, always NUL-terminated, cut short if it must be). type_name names class and value
 * types (NULL: "?"). Returns 0, or -1 for a blob that is not a method signature (buf then
 * holds "(?)").
 */
int jt_clr_sig__params(const uint8_t *sig, size_t len, jt_clr_sig_type_fn type_name, void *ctx,
		       char *buf, size_t cap);

/* n UTF-16 units (a NUL ends them sooner) as UTF-8 into out (cap bytes, NUL-terminated);
 * an unpaired surrogate becomes U+FFFD. Returns the bytes written, NUL not counted. */
size_t jt_clr_sig__utf8(const uint16_t *in, size_t n, char *out, size_t cap);

#endif
