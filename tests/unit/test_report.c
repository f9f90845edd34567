// SPDX-License-Identifier: GPL-2.0
/* `jitrace report`: text and JSON against goldens, the numbers checked by hand, filters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report.h"
#include "viewlog.h"

#define GOLDEN_DIR "tests/fixtures/report/"

/* The report of the test log with these options, the log's path replaced by LOG. */
static char *report(struct vl_tmp *t, bool json, const char *pid, const char *from,
		    const char *to)
{
	struct jt_report_opts o = { .path = t->log, .json = json, .top = 20, .procs = 10 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	jt_filter__init(&o.filter);
	if (pid)
		assert_int_equal(jt_filter__parse(&o.filter, "--pid", pid), 0);
	if (from)
		assert_int_equal(jt_filter__parse(&o.filter, "--from", from), 0);
	if (to)
		assert_int_equal(jt_filter__parse(&o.filter, "--to", to), 0);
	vl_write(t->log);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_report(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return vl_replace(buf, t->log, "LOG");
}

/* The line of section (a line starting "== ...") that ends with name. */
static char *row(const char *text, const char *section, const char *name)
{
	const char *s = strstr(text, section), *end, *p;
	static char line[512];

	assert_non_null(s);
	end = strstr(s + 1, "\n== ");
	if (!end)
		end = s + strlen(s);
	for (p = s; p && p < end; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		size_t k = strlen(name);

		if (n >= k && !memcmp(p + n - k, name, k) && n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			return line;
		}
	}
	fail_msg("no row for %s in %s", name, section);
	return NULL;
}

static void test_report_text_matches_golden(void **state)
{
	char *got = report(*state, false, NULL, NULL, NULL);

	vl_golden(GOLDEN_DIR "report.txt", got);
	free(got);
}

static void test_report_json_matches_golden(void **state)
{
	char *got = report(*state, true, NULL, NULL, NULL);

	vl_golden(GOLDEN_DIR "report.json", got);
	free(got);
}

/* Self, total (recursion counted once), offsets, kinds: worked out from vl_write by hand. */
static void test_report_counts_self_total_and_offsets(void **state)
{
	char *got = report(*state, false, NULL, NULL, NULL);
	const char *jvm = "== java (100): 16 samples";

	assert_non_null(strstr(got, "21 samples, 7 calls; lost 3, ringbuf_sample 3\n"));
	assert_non_null(strstr(got, "== all processes: 21 samples\n"));
	assert_string_equal(row(got, jvm, " Hot.spin(int)"),
			    "        8  50.0%         8  50.0%  jit     Hot.spin(int)");
	assert_non_null(strstr(got, "hot offsets: +0x10 75%, +0x18 25%\n"));
	assert_string_equal(row(got, jvm, " Main.main(String[])"),
			    "        0   0.0%        14  87.5%  jit     Main.main(String[])");
	assert_string_equal(row(got, jvm, " Rec.fib(int)"),
			    "        2  12.5%         2  12.5%  jit     Rec.fib(int)");
	assert_string_equal(row(got, jvm, " JavaCalls::call_helper"),
			    "        1   6.2%        15  93.8%  native  JavaCalls::call_helper");
	assert_string_equal(row(got, jvm, " libjvm.so+0x1234"),
			    "        0   0.0%        16 100.0%  native  libjvm.so+0x1234");
	assert_string_equal(row(got, jvm, " do_syscall_64"),
			    "        3  18.8%         3  18.8%  kernel  do_syscall_64");
	assert_non_null(row(got, jvm, "  kernel  [k] 0xffffffff81a00b2c"));
	assert_non_null(row(got, jvm, "  unknown 0x401a2b"));
	assert_non_null(row(got, jvm, "  unknown 0x5"));	/* method 99: never defined */
	assert_string_equal(row(got, "== node (200): 5 samples", " JS:~work /app.js:2"),
			    "        4  80.0%         4  80.0%  jit     JS:~work /app.js:2");
	assert_non_null(strstr(got, "   java -jar app.jar\n"));
	free(got);
}

/* Calls: nesting, recursion counted once in inclusive time, unbalanced edges counted. */
static void test_report_calls_inclusive_exclusive(void **state)
{
	char *got = report(*state, false, NULL, NULL, NULL);
	assert_non_null(strstr(got, "calls: 7 entered, 6 left; 1 leaves without an enter, "
				    "1 closed by an outer leave, 1 open at the end\n"));
	/* main: 6..41 ms = 35 ms, minus spin 2 ms and fib 5 ms (one activation: the outer) */
	assert_non_null(strstr(got, "         1       35.000       28.000  35000.000  "
				    "Main.main(String[])\n"));
	assert_non_null(strstr(got, "         2        5.000        5.000   2500.000  "
				    "Rec.fib(int)\n"));
	/* spin entered twice, left once (the second closed by main's leave) */
	assert_non_null(strstr(got, "         2        2.000        2.000   1000.000  "
				    "Hot.spin(int)\n"));
	assert_non_null(strstr(got, "         1        2.000        2.000   2000.000  "
				    "JS:~work /app.js:2\n"));
	free(got);
}

static void test_report_filters_pid_and_time(void **state)
{
	char *got = report(*state, false, "100", "0.0155", "0.030");

	vl_golden(GOLDEN_DIR "report_pid100_15_30ms.txt", got);
	/* 16..29 ms of pid 100: spin_b 2, sys 3, fib 2, lost 1 */
	assert_non_null(strstr(got, "== all processes: 8 samples\n"));
	assert_null(strstr(got, "== node"));
	assert_non_null(strstr(got, "(kept: pid 100, from 0.0155 s to 0.03 s)"));
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_text_matches_golden, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_json_matches_golden, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_counts_self_total_and_offsets,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_calls_inclusive_exclusive, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_filters_pid_and_time, vl_setup,
						vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
