// SPDX-License-Identifier: GPL-2.0
/* Integration tests of a clean start: what record and the demo say on a host as it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib.h"

/* Lines of text (NUL-terminated) that contain needle. */
static int lines_with(const char *text, const char *needle)
{
	const char *p = text;
	int n = 0;

	while ((p = strstr(p, needle))) {
		n++;
		p = strchr(p, '\n');
		if (!p)
			break;
	}
	return n;
}

/* Fail, printing what was said, if text holds what a clean start never says. */
static void assert_clean(const char *what, const char *text)
{
	static const char *const never[] = { "warning", "libbpf", "cannot read", "Permission",
					     "perf-1.map", "tracepoint", "No such file" };
	size_t i;

	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		if (lines_with(text, never[i])) {
			print_error("%s says \"%s\":\n%s\n", what, never[i], text);
			fail();
		}
	}
}

/*
 * record -a on a host as it is (in CI: no tracefs, debugfs or bpffs mounted) prints one
 * line of what it records, its status and summary, and nothing about other processes.
 */
static void test_record_all_starts_with_one_clean_line(void **state)
{
	char *log = it_path_dup("start.jtl"), *err = it_path_dup("start.err");
	char *argv[] = { IT_JITRACE, "record", "-a", "-F", "99", "-d", "1", "-f", "-o", log,
			 NULL };
	char *text;

	(void)state;
	assert_int_equal(it_run(argv, NULL, err), 0);
	text = it_slurp(err);
	assert_clean("record -a", text);
	assert_int_equal(lines_with(text, "jitrace: recording all processes"), 1);
	free(text);
	free(log);
	free(err);
}

/* A report's and a flame graph's process headings: never "[pid N]" for a process whose
 * name the log holds. Two toy JITs start together while the whole host is recorded. */
static void test_processes_started_together_are_named(void **state)
{
	char *log = it_path_dup("together.jtl"), *rep = it_path_dup("together.txt");
	char *folded = it_path_dup("together.folded"), *err = it_path_dup("together.err");
	char *rec[] = { IT_JITRACE, "record", "-a", "--calls", "-F", "999", "-d", "2", "-f",
			"-o", log, NULL };
	char *a[] = { IT_TOYJIT, "split", "--ms", "500", NULL };
	char *b[] = { IT_TOYJIT, "split", "--ms", "500", "--ratio", "1:1", NULL };
	char *report[] = { IT_JITRACE, "report", log, NULL };
	char *flame[] = { IT_JITRACE, "flamegraph", "--folded", log, NULL };
	int round, unnamed = 0, toys = 0;

	(void)state;
	for (round = 0; round < 3; round++) {
		pid_t r = it_spawn(rec, NULL, err), pa, pb;
		char want[64], *text;

		assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
		pa = it_spawn(a, "/dev/null", NULL);
		pb = it_spawn(b, "/dev/null", NULL);
		assert_int_equal(it_wait(pa), 0);
		assert_int_equal(it_wait(pb), 0);
		assert_int_equal(it_wait(r), 0);
		assert_int_equal(it_run(report, rep, NULL), 0);
		text = it_slurp(rep);
		unnamed += lines_with(text, "== [pid ");
		snprintf(want, sizeof(want), "== toyjit (%d)", (int)pa);
		toys += lines_with(text, want);
		snprintf(want, sizeof(want), "== toyjit (%d)", (int)pb);
		toys += lines_with(text, want);
		free(text);
		assert_int_equal(it_run(flame, folded, NULL), 0);
		text = it_slurp(folded);
		unnamed += lines_with(text, "[pid ");
		free(text);
	}
	print_message("3 rounds: %d of 6 toy JITs headed by name, %d processes unnamed\n", toys,
		      unnamed);
	assert_int_equal(toys, 6);
	assert_int_equal(unnamed, 0);
	free(log);
	free(rep);
	free(folded);
	free(err);
}

/* make demo's recording and views, as a new user sees them: no warning, every process named. */
static void test_demo_shows_no_warning(void **state)
{
	char *out = it_path_dup("demo.out");
	char *argv[] = { "/bin/bash", "-c", "exec bash scripts/demo.sh build 2>&1", NULL };
	char *text;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	text = it_slurp(out);
	assert_clean("make demo", text);
	assert_int_equal(lines_with(text, "[pid "), 0);
	/* the two split toys run 1.5 s of CPU each; the calls toy, a few ms, may have no sample */
	assert_true(lines_with(text, "== toyjit (") >= 2);
	free(text);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_all_starts_with_one_clean_line),
		cmocka_unit_test(test_processes_started_together_are_named),
		cmocka_unit_test(test_demo_shows_no_warning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
