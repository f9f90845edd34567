// SPDX-License-Identifier: GPL-2.0
/* `jitrace flamegraph`: folded stacks and SVG against goldens; escaping, roots, filters;
 * source lines in tooltips; stacks as deep as a record holds, drawn on a small stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "views/flamegraph.h"
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
	assert_int_equal(total, 20);
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
				    "\n3 samples, 15.00%, jit</title>"));
	assert_null(strstr(got, "<clinit>"));
	assert_non_null(strstr(got, "<title>all\n20 samples, 100.00%, all</title>"));
	assert_non_null(strstr(got, "<title>java (100)\n15 samples, 75.00%, process</title>"));
	assert_non_null(strstr(got, "<title>Hot.spin(int)\n8 samples, 40.00%, jit, "
				    "Hot.java:12 in 6 of them</title>"));
	assert_non_null(strstr(got, "<title>do_syscall_64\n3 samples, 15.00%, kernel</title>"));
	assert_non_null(strstr(got, "window.onerror"));
	assert_non_null(strstr(got, "id=\"search\""));
	assert_non_null(strstr(got, "id=\"unzoom\""));
	assert_non_null(strstr(got, "data-total=\"20\""));
	free(got);
}

/*
 * A log that breaks its promises (a reference before its definition, a method defined
 * twice) is refused, not drawn; with --salvage the records at fault are skipped and the
 * rest drawn: the late sample and the second definition go, the later samples keep the
 * first name.
 */
static void test_broken_references_refused_or_salvaged(void **state)
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
	vl_method(w, ts, 1, 7, "new_fn");	/* method 1 again */
	vl_method(w, ts, 2, 7, "late_fn");
	vl_samples(w, &ts, 7, 3, one, 1);
	vl_samples(w, &ts, 7, 1, two, 1);
	assert_int_equal(jt_logw__close(w), 0);
	jt_filter__init(&o.filter);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 1);
	assert_int_equal(fclose(f), 0);
	free(buf);
	buf = NULL;
	o.filter.salvage = true;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "late_fn 1\nold_fn 5\n");
	free(buf);
}

/*
 * A JIT frame with source lines says in its tooltip the line most of its samples were at
 * and how many: the leaf where it ran, a caller at its call (the byte before the return
 * address: +0x20 is c.toy:5, +0x30 c.toy:6); a tie goes to the lower line. Frames without
 * lines say nothing more, file names are escaped (controls as \xHH, then for XML), and
 * folded stacks stay as they were.
 */
static void test_svg_tooltips_show_source_lines(void **state)
{
	static const struct jt_line leaf_lines[] = { { .off = 0, .line = 1 },
						     { .off = 0x10, .line = 2 } };
	static const struct jt_line caller_lines[] = { { .off = 0, .line = 5 },
						       { .off = 0x20, .line = 6 } };
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99 };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	const struct jt_frame at1[] = { M(1, 0x4), M(2, 0x20) };
	const struct jt_frame at2[] = { M(1, 0x14), M(2, 0x20) };
	const struct jt_frame at2_6[] = { M(1, 0x14), M(2, 0x30) };
	const struct jt_frame bare[] = { M(3, 0x4), M(2, 0x30) };
	struct jt_flame_opts o = { .path = t->log };
	uint64_t ts = VL_MS;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(w);
	vl_proc(w, 0, 7, "toy", "toy");
	vl_method(w, 0, 1, 7, "leaf()");
	vl_lines(w, 0, 1, 7, leaf_lines, 2, "l.toy", 6);
	vl_method(w, 0, 2, 7, "caller()");
	vl_lines(w, 0, 2, 7, caller_lines, 2, "c<&>\x1b.toy", 10);
	vl_method(w, 0, 3, 7, "bare()");
	vl_samples(w, &ts, 7, 3, at1, 2);
	vl_samples(w, &ts, 7, 2, at2, 2);
	vl_samples(w, &ts, 7, 1, at2_6, 2);
	vl_samples(w, &ts, 7, 1, bare, 2);
	assert_int_equal(jt_logw__close(w), 0);
	jt_filter__init(&o.filter);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(buf, "<title>caller()\n7 samples, 100.00%, jit, "
				    "c&lt;&amp;&gt;\\x1b.toy:5 in 5 of them</title>"));
	assert_non_null(strstr(buf, "<title>leaf()\n6 samples, 85.71%, jit, l.toy:1 in 3 of them"
				    "</title>"));
	assert_non_null(strstr(buf, "<title>bare()\n1 sample, 14.29%, jit</title>"));
	free(buf);

	buf = NULL;
	o.folded = true;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "caller();bare() 1\ncaller();leaf() 6\n");
	free(buf);
}

/* ---- a stack as deep as the crafted log: no recursion per frame ---- */

static int flame_view(FILE *out, void *arg)
{
	return jt_flamegraph(out, arg);
}

/* Draw the deep log into outpath on a small stack (vl_on_small_stack). */
static int flame_deep(const char *log, const char *outpath, bool folded)
{
	struct jt_flame_opts o = { .path = log, .folded = folded };

	jt_filter__init(&o.filter);
	return vl_on_small_stack(flame_view, &o, outpath);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (s = strstr(s, what); s; s = strstr(s + 1, what))
		n++;
	return n;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_folded_deep_stack_on_small_stack(void **state)
{
	struct vl_tmp *t = *state;
	char out[320], *got;

	vl_write_deep(t->log);
	snprintf(out, sizeof(out), "%s/deep.folded", t->dir);
	assert_int_equal(flame_deep(t->log, out, true), 0);
	got = read_all(out);
	/* one line: every frame, root first, and the one sample */
	assert_int_equal(count(got, "\n"), 1);
	assert_int_equal(count(got, ";"), VL_DEEP - 1);
	assert_true(strncmp(got, "b();a();b();", 12) == 0);
	assert_non_null(strstr(got, ";b();a() 1\n"));
	free(got);
}

static void test_svg_deep_stack_on_small_stack(void **state)
{
	struct vl_tmp *t = *state;
	char out[320], *got;

	vl_write_deep(t->log);
	snprintf(out, sizeof(out), "%s/deep.svg", t->dir);
	assert_int_equal(flame_deep(t->log, out, false), 0);
	got = read_all(out);
	/* "all" and every frame, the deepest on the top level, and the image tall enough */
	assert_int_equal(count(got, "<g class=\"f\""), VL_DEEP + 1);
	assert_non_null(strstr(got, "data-n=\"1\" data-d=\"50000\"><title>a()\n"));
	assert_non_null(strstr(got, "height=\"800088\""));	/* 44 + 50001 * 16 + 28 */
	assert_non_null(strstr(got, "</g>\n</svg>\n"));
	free(got);
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
		cmocka_unit_test_setup_teardown(test_broken_references_refused_or_salvaged,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_svg_tooltips_show_source_lines, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_folded_deep_stack_on_small_stack, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_svg_deep_stack_on_small_stack, vl_setup,
						vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
