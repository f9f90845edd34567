// SPDX-License-Identifier: GPL-2.0
/*
 * Inlined frames and source lines from HotSpot (openjdk-17) through the JVMTI agent: a
 * method C2 inlines into its caller is shown under it, marked inlined, in folded stacks,
 * the report (with Inline.java:LINE) and pprof (`go tool pprof -lines`). Needs root.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_log_format.h"
#include "lib.h"

#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define JAVA JDK "/bin/java"
#define GO "/usr/bin/go"
#define OUTER "Inline.outer(long)"
#define MIX "Inline.mix(long)"
/* tests/runtimes/java/Inline.java: mix's body, outer's */
#define MIX_FIRST 8
#define MIX_LAST 16
#define OUTER_FIRST 18
#define OUTER_LAST 22

static char agent_opt[PATH_MAX + 64];
static char *log_path;		/* recorded once, read by every test */

static int group_setup(void **state)
{
	char *javac[] = { JDK "/bin/javac", "-d", (char *)it_dir(),
			  "tests/runtimes/java/Inline.java", NULL };
	char agent_so[PATH_MAX];

	(void)state;
	if (access(JAVA, X_OK))
		return 0;	/* each test skips, saying why */
	if (!realpath("build/libjitrace-jvmti.so", agent_so)) {
		fprintf(stderr, "itest_inline: build/libjitrace-jvmti.so: not built\n");
		return -1;
	}
	snprintf(agent_opt, sizeof(agent_opt), "-agentpath:%s", agent_so);
	if (it_run(javac, NULL, NULL)) {
		fprintf(stderr, "itest_inline: javac failed\n");
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	free(log_path);
	return 0;
}

static void need_java(void)
{
	if (access(JAVA, X_OK)) {
		print_message("skipped: %s is not installed\n", JAVA);
		skip();
	}
}

/*
 * Inline for 3 s under the agent from the start, outer kept its own compiled method (mix
 * is inlined into it by C2, as it would be anyway).
 */
static const char *record_inline(void)
{
	char secs[16], *out;

	if (log_path)
		return log_path;
	out = it_path_dup("inline.out");
	log_path = it_path_dup("inline.jtl");
	{
		char *argv[] = { IT_JITRACE, "record", "--no-usdt", "-F", "999", "-o", log_path,
				 "--", JAVA, agent_opt, "-XX:+PreserveFramePointer",
				 "-XX:+UseSerialGC", "-XX:CompileCommand=quiet",
				 "-XX:CompileCommand=dontinline,Inline::outer", "-cp",
				 (char *)it_dir(), "Inline", it_scaled(secs, sizeof(secs), 3),
				 NULL };

		assert_int_equal(it_run(argv, out, NULL), 0);
	}
	assert_true(it_wait_for_text(out, "inline done", 0));
	free(out);
	return log_path;
}

/* Run argv into a file of the scratch directory and return what it printed. */
static char *output_of(char *const argv[], const char *name)
{
	char *out = it_path_dup(name), *text;

	assert_int_equal(it_run(argv, out, NULL), 0);
	text = it_slurp(out);
	free(out);
	return text;
}

/* The log holds scopes for outer's code, each right after outer's definition. */
static void test_log_has_outer_scopes(void **state)
{
	struct it_log log;
	size_t i, n = 0;

	(void)state;
	need_java();
	it_log_load(record_inline(), &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_inline *r = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		if (r->h.type != JT_REC_INLINE)
			continue;
		m = it_method(&log, r->method);
		assert_non_null(m);
		n += it_name_is(m, OUTER);
	}
	print_message("%zu inline records of %s\n", n, OUTER);
	assert_true(n >= 1);
	it_log_free(&log);
}

/* At least half of outer's samples are in mix, under it, marked inlined. */
static void test_folded_shows_mix_inlined_under_outer(void **state)
{
	char *argv[] = { IT_JITRACE, "flamegraph", "--folded", (char *)record_inline(), NULL };
	char *text, *line, *save = NULL;
	uint64_t outer = 0, in_mix = 0;

	(void)state;
	need_java();
	text = output_of(argv, "inline.folded");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *sp = strrchr(line, ' ');
		uint64_t n = sp ? strtoull(sp + 1, NULL, 10) : 0;

		if (!strstr(line, OUTER ";") && !strstr(line, OUTER " "))
			continue;
		outer += n;
		if (strstr(line, OUTER ";" MIX "_[i]"))
			in_mix += n;
	}
	free(text);
	/* mix does nearly all of outer's work: 85% seen; the loop's own code is outer's */
	it_assert_share_at_least("samples of " OUTER " in " MIX "_[i] under it", in_mix, outer,
				 0.5, "the acceptance's floor: half");
}

/* Every Inline.java:N on the hot offsets line after the row of name lies in [lo, hi]. */
static unsigned int lines_in(const char *report, const char *name, int lo, int hi)
{
	const char *row = strstr(report, name), *end, *p;
	unsigned int n = 0;

	assert_non_null(row);
	row = strchr(row, '\n');
	assert_non_null(row);
	end = strchr(row + 1, '\n');
	for (p = strstr(row, "Inline.java:"); p && (!end || p < end);
	     p = strstr(p + 1, "Inline.java:")) {
		int line = atoi(p + strlen("Inline.java:"));

		if (line < lo || line > hi)
			fail_msg("%s: hot offset at Inline.java:%d, outside %d-%d", name, line, lo,
				 hi);
		n++;
	}
	return n;
}

/* The report charges mix (inlined) with self samples and shows its lines in Inline.java. */
static void test_report_shows_inline_java_lines(void **state)
{
	char *argv[] = { IT_JITRACE, "report", (char *)record_inline(), NULL };
	char *text;

	(void)state;
	need_java();
	text = output_of(argv, "inline.report");
	print_message("%.*s", 900, text);
	assert_true(lines_in(text, "jit     " MIX "_[i]\n", MIX_FIRST, MIX_LAST) >= 1);
	assert_true(lines_in(text, "jit     " OUTER "\n", OUTER_FIRST, OUTER_LAST) >= 1);
	free(text);
}

/* `go tool pprof -lines` shows mix inlined, at its lines, and outer at its own. */
static void test_pprof_lines_show_both(void **state)
{
	char *pb = it_path_dup("inline.pb.gz"), *text, *p;
	char *exp[] = { IT_JITRACE, "export", "--format", "pprof", "-f", "-o", pb,
			(char *)record_inline(), NULL };
	char *top[] = { GO, "tool", "pprof", "-lines", "-top", pb, NULL };
	char *line, *save = NULL;
	int mix = 0, outer = 0, n;

	(void)state;
	need_java();
	if (access(GO, X_OK)) {
		free(pb);
		print_message("skipped: %s (golang-go) is not installed\n", GO);
		skip();
	}
	assert_int_equal(it_run(exp, NULL, NULL), 0);
	setenv("HOME", it_dir(), 0);	/* go wants a cache directory */
	text = output_of(top, "inline.top");
	print_message("%.*s", 1200, text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if ((p = strstr(line, MIX " Inline.java:"))) {
			n = atoi(p + strlen(MIX " Inline.java:"));
			if (n < MIX_FIRST || n > MIX_LAST)
				fail_msg("%s: outside mix's lines", line);
			mix += strstr(p, "(inline)") != NULL;
		} else if ((p = strstr(line, OUTER " Inline.java:"))) {
			n = atoi(p + strlen(OUTER " Inline.java:"));
			if (n < OUTER_FIRST || n > OUTER_LAST)
				fail_msg("%s: outside outer's lines", line);
			outer++;
		}
	}
	assert_true(mix >= 1);
	assert_true(outer >= 1);
	free(text);
	free(pb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_has_outer_scopes),
		cmocka_unit_test(test_folded_shows_mix_inlined_under_outer),
		cmocka_unit_test(test_report_shows_inline_java_lines),
		cmocka_unit_test(test_pprof_lines_show_both),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_inline: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
