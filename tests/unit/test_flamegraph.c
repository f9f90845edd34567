// SPDX-License-Identifier: GPL-2.0
/* `jitrace flamegraph`: folded stacks and SVG against goldens; escaping, roots, filters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "flamegraph.h"
#include "viewlog.h"

#define GOLDEN_DIR "tests/fixtures/flamegraph/"

static char *flame(struct vl_tmp *t, bool folded, bool annotate, const char *pid)
{
	struct jt_flame_opts o = { .path = t->log, .folded = folded, .annotate = annotate };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	jt_filter__init(&o.filter);
	if (pid)
		assert_int_equal(jt_filter__parse(&o.filter, "--pid", pid), 0);
	vl_write(t->log);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return vl_replace(buf, t->log, "LOG");
}

static void test_folded_matches_golden(void **state)
{
	char *got = flame(*state, true, false, NULL);

	vl_golden(GOLDEN_DIR "folded.txt", got);
	/* root first, a root per process (two have samples), ';' in a name made ':' */
	assert_non_null(strstr(got, "java (100);libjvm.so+0x1234;JavaCalls::call_helper;"
				    "Main.main(String[]);Hot.spin(int) 8\n"));
	assert_non_null(strstr(got, "Util.<clinit>(Ljava/lang/String:)&\"x';[k] 0xffffffff81a00b2c;"
				    "do_syscall_64 3\n"));
	assert_non_null(strstr(got, "java (100);libjvm.so+0x1234;JavaCalls::call_helper;"
				    "Main.main(String[]);Rec.fib(int);Rec.fib(int);Rec.fib(int) 2\n"));
	assert_non_null(strstr(got, "\nnode (200) 1\n"));	/* the sample without frames */
	assert_non_null(strstr(got, "\nnode (200);node+0x5000;JS:~work /app.js:2 4\n"));
	free(got);
}

static void test_folded_sums_to_samples_and_annotates(void **state)
{
	char *got = flame(*state, true, true, NULL), *line, *save = NULL;
	unsigned long total = 0;

	vl_golden(GOLDEN_DIR "folded_annotated.txt", got);
	assert_non_null(strstr(got, ";Hot.spin(int)_[j] 8\n"));
	assert_non_null(strstr(got, ";[k] 0xffffffff81a00b2c_[k];do_syscall_64_[k] 3\n"));
	for (line = strtok_r(got, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		total += strtoul(strrchr(line, ' ') + 1, NULL, 10);
	assert_int_equal(total, 21);
	free(got);
}

static void test_folded_one_process_has_no_process_root(void **state)
{
	char *got = flame(*state, true, false, "200");

	assert_string_equal(got, "node (200) 1\nnode+0x5000;JS:~work /app.js:2 4\n");
	free(got);
}

static void test_svg_matches_golden(void **state)
{
	char *got = flame(*state, false, false, NULL);

	vl_golden(GOLDEN_DIR "flame.svg", got);
	free(got);
}

/* Every name escaped; the viewer's pieces are there; frames carry their counts. */
static void test_svg_escapes_names_and_has_viewer(void **state)
{
	char *got = flame(*state, false, false, NULL);

	assert_true(strncmp(got, "<?xml ", 6) == 0);
	assert_non_null(strstr(got, "<title>Util.&lt;clinit&gt;(Ljava/lang/String;)&amp;&quot;x&apos;"
				    "\n3 samples, 14.29%, jit</title>"));
	assert_null(strstr(got, "<clinit>"));
	assert_non_null(strstr(got, "<title>all\n21 samples, 100.00%, all</title>"));
	assert_non_null(strstr(got, "<title>java (100)\n16 samples, 76.19%, process</title>"));
	assert_non_null(strstr(got, "<title>Hot.spin(int)\n8 samples, 38.10%, jit</title>"));
	assert_non_null(strstr(got, "<title>do_syscall_64\n3 samples, 14.29%, kernel</title>"));
	assert_non_null(strstr(got, "window.onerror"));
	assert_non_null(strstr(got, "id=\"search\""));
	assert_non_null(strstr(got, "id=\"unzoom\""));
	assert_non_null(strstr(got, "data-total=\"21\""));
	free(got);
}

/*
 * Names are cached by reference while stacks are merged: a redefinition, or a definition
 * after a reference was seen unresolved (logs that broke their promises), renames later
 * samples and leaves earlier ones as they were.
 */
static void test_redefined_reference_renames_later_samples(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99 };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	const struct jt_frame one[] = { M(1, 0x4) }, two[] = { M(2, 0x8) };
	struct jt_flame_opts o = { .path = t->log, .folded = true };
	uint64_t ts = VL_MS;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(w);
	vl_proc(w, 0, 7, "toy", "toy");
	vl_method(w, 0, 1, 7, "old_fn");
	vl_samples(w, &ts, 7, 2, one, 1);
	vl_samples(w, &ts, 7, 1, two, 1);	/* method 2 not defined yet */
	vl_method(w, ts, 1, 7, "new_fn");
	vl_method(w, ts, 2, 7, "late_fn");
	vl_samples(w, &ts, 7, 3, one, 1);
	vl_samples(w, &ts, 7, 1, two, 1);
	assert_int_equal(jt_logw__close(w), 0);
	jt_filter__init(&o.filter);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "late_fn 1\nnew_fn 3\nold_fn 2\n0x8 1\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_folded_matches_golden, vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_folded_sums_to_samples_and_annotates,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_folded_one_process_has_no_process_root,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_svg_matches_golden, vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_svg_escapes_names_and_has_viewer, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_redefined_reference_renames_later_samples,
						vl_setup, vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
