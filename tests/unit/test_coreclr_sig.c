// SPDX-License-Identifier: GPL-2.0
/*
 * The CLR profiler module's names: method signature blobs (ECMA-335 II.23.2.1) as C#
 * parameter lists, malformed blobs refused, and UTF-16 metadata strings as UTF-8. The module
 * is not in libjt.a: agent/coreclr/build.mk links its one pure-C file in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sig.h"

/* TypeDef 5 is Ns.Foo, TypeRef 3 is System.Collections.Generic.List`1, TypeRef 7 unknown */
static int names(void *ctx, uint32_t token, char *buf, size_t cap)
{
	(void)ctx;
	if (token == 0x02000005)
		return snprintf(buf, cap, "Ns.Foo"), 0;
	if (token == 0x01000003)
		return snprintf(buf, cap, "System.Collections.Generic.List`1"), 0;
	return -1;
}

static const char *params(const uint8_t *sig, size_t len)
{
	static char buf[256];

	if (jt_clr_sig__params(sig, len, names, NULL, buf, sizeof(buf)))
		return NULL;
	return buf;
}

#define P(...) params((const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

static void test_primitives_as_csharp_writes_them(void **state)
{
	(void)state;
	/* static long M(int, string) */
	assert_string_equal(P(0x00, 2, 0x0a, 0x08, 0x0e), "(int, string)");
	/* instance void M() */
	assert_string_equal(P(0x20, 0, 0x01), "()");
	assert_string_equal(P(0x00, 6, 0x01, 0x02, 0x03, 0x0c, 0x0d, 0x1c, 0x18),
			    "(bool, char, float, double, object, nint)");
}

static void test_classes_arrays_refs_and_generics(void **state)
{
	(void)state;
	/* (Ns.Foo, List<int>, string[], int[,], ref int, void*), the List by its full name */
	assert_string_equal(P(0x00, 6, 0x01,
			      0x12, 5 << 2,			/* class TypeDef 5 */
			      0x15, 0x12, 3 << 2 | 1, 1, 0x08,	/* List`1<int> */
			      0x1d, 0x0e,			/* string[] */
			      0x14, 0x08, 2, 0, 0,		/* int[,] */
			      0x10, 0x08,			/* ref int */
			      0x0f, 0x01),			/* void* */
			    "(Ns.Foo, System.Collections.Generic.List<int>, string[], int[,], "
			    "ref int, void*)");
	/* generic method <T>(T, !0): MVAR and VAR */
	assert_string_equal(P(0x10, 1, 2, 0x01, 0x1e, 0, 0x13, 0), "(!!0, !0)");
	/* a type nothing names, and a modreq before an int: ?, int */
	assert_string_equal(P(0x00, 2, 0x01, 0x11, 7 << 2 | 1, 0x1f, 3 << 2 | 1, 0x08),
			    "(?, int)");
	/* varargs: the fixed ones, then ... */
	assert_string_equal(P(0x05, 2, 0x01, 0x08, 0x41, 0x0e), "(int, ...)");
}

static void test_no_type_names_written_as_question_marks(void **state)
{
	static const uint8_t sig[] = { 0x00, 1, 0x01, 0x12, 5 << 2 };
	char buf[32];

	(void)state;
	assert_int_equal(jt_clr_sig__params(sig, sizeof(sig), NULL, NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "(?)");
}

static void test_malformed_blobs_refused(void **state)
{
	char buf[64];
	uint8_t deep[64];
	size_t i;

	(void)state;
	assert_int_equal(jt_clr_sig__params((const uint8_t *)"", 0, names, NULL, buf,
					    sizeof(buf)), -1);
	assert_string_equal(buf, "(?)");
	assert_null(P(0x00, 2, 0x01, 0x08));		/* a parameter missing */
	assert_null(P(0x00, 1, 0x01, 0x99));		/* no such element type */
	assert_null(P(0x00, 0x81, 0x01, 0x01));		/* 257 parameters in three bytes */
	assert_null(P(0x00, 1, 0x01, 0x12, 0x03));	/* a token of table 3 */
	assert_null(P(0x00, 1, 0x01, 0x15, 0x08, 0x04)); /* a generic instance of int */
	/* types nested deeper than any real one: string[][][]... */
	deep[0] = 0x00;
	deep[1] = 1;
	deep[2] = 0x01;
	for (i = 3; i < sizeof(deep) - 1; i++)
		deep[i] = 0x1d;
	deep[i] = 0x0e;
	assert_int_equal(jt_clr_sig__params(deep, sizeof(deep), names, NULL, buf, sizeof(buf)),
			 -1);
}

static void test_a_small_buffer_is_cut_and_terminated(void **state)
{
	static const uint8_t sig[] = { 0x00, 3, 0x01, 0x08, 0x08, 0x08 };
	char buf[8];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(jt_clr_sig__params(sig, sizeof(sig), names, NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "(int, i");
	assert_int_equal(jt_clr_sig__params(sig, sizeof(sig), names, NULL, buf, 0), -1);
}

static void test_utf16_to_utf8(void **state)
{
	static const uint16_t ascii[] = { 'M', 'a', 'i', 'n' };
	static const uint16_t mixed[] = { 0xe9, 0x20ac, 0xd83d, 0xde00, 0xdc00, 'x', 0, 'y' };
	char out[32];

	(void)state;
	assert_int_equal(jt_clr_sig__utf8(ascii, 4, out, sizeof(out)), 4);
	assert_string_equal(out, "Main");
	/* é, €, U+1F600, a lone low surrogate, x; the NUL ends it */
	assert_int_equal(jt_clr_sig__utf8(mixed, 8, out, sizeof(out)), 2 + 3 + 4 + 3 + 1);
	assert_string_equal(out, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdx");
	/* never half a character: room for é and 2 bytes of € gives é alone */
	assert_int_equal(jt_clr_sig__utf8(mixed, 8, out, 5), 2);
	assert_string_equal(out, "\xc3\xa9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_primitives_as_csharp_writes_them),
		cmocka_unit_test(test_classes_arrays_refs_and_generics),
		cmocka_unit_test(test_no_type_names_written_as_question_marks),
		cmocka_unit_test(test_malformed_blobs_refused),
		cmocka_unit_test(test_a_small_buffer_is_cut_and_terminated),
		cmocka_unit_test(test_utf16_to_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
