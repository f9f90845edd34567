// SPDX-License-Identifier: GPL-2.0
/* Node/V8 traced live through its own perf map (--perf-basic-prof): V8's names, the CPU
 * split of two hot functions, and every sample inside a call named by the code live then,
 * through every tier (interpreter, Sparkplug, TurboFan). Needs root and /usr/bin/node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "lib.h"
#include "rt.h"

#define NODE "/usr/bin/node"
#define HOT_JS "tests/runtimes/node/hot.js"
#define CHURN_JS "tests/runtimes/node/churn.js"

/* Record `node --perf-basic-prof --interpreted-frames-native-stack [flags] hot.js MS`. */
static void record_node(const char *tag, const char *script, const char *ms,
			const char *flags[], struct it_log *log, struct rt_truth *t)
{
	char name[64], *argv[24];
	char *log_path, *out;
	int n = 0;

	snprintf(name, sizeof(name), "%s.jtl", tag);
	log_path = it_path_dup(name);
	snprintf(name, sizeof(name), "%s.out", tag);
	out = it_path_dup(name);
	argv[n++] = IT_JITRACE;
	argv[n++] = "record";
	argv[n++] = "-F";
	argv[n++] = "999";
	argv[n++] = "-o";
	argv[n++] = log_path;
	argv[n++] = "--";
	argv[n++] = NODE;
	argv[n++] = "--perf-basic-prof";
	argv[n++] = "--logfile=/dev/null";	/* else V8 leaves isolate-*-v8.log in the cwd */
	argv[n++] = "--interpreted-frames-native-stack";
	while (flags && *flags)
		argv[n++] = (char *)*flags++;
	argv[n++] = (char *)script;
	argv[n++] = (char *)ms;
	argv[n] = NULL;
	assert_int_equal(it_run(argv, out, NULL), 0);
	rt_truth_parse(out, t);
	it_log_load(log_path, log);
	it_check_promises(log);
	free(log_path);
	free(out);
}

/* A method of pid named exactly as V8 names tier's code of fn: "JS:*hotA /.../hot.js:L:C". */
static bool has_v8_method(const struct it_log *log, uint32_t pid, char tier, const char *fn)
{
	char prefix[64];
	size_t i;

	snprintf(prefix, sizeof(prefix), "JS:%c%s /", tier, fn);
	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		if (m && m->pid == pid && m->src == JT_SRC_PERFMAP &&
		    rt_name_has_prefix(m, prefix) && memmem(m->name, m->name_len,
							    "/tests/runtimes/node/hot.js:", 28))
			return true;
	}
	return false;
}

static void skip_without_node(void)
{
	if (access(NODE, X_OK)) {
		print_message("%s is missing: Node tests skipped\n", NODE);
		skip();
	}
}

/*
 * The default tiers: samples are named by V8's own names, the leaf split is the work split
 * (3:1) within 5 points, and no sample inside a call of one hot function is named by the
 * other, in the first second (interpreter, Sparkplug, on-stack replacement) or later.
 */
static void test_node_split_and_names(void **state)
{
	char ms[16];
	struct rt_truth t;
	struct rt_stats st;
	struct it_log log;

	(void)state;
	skip_without_node();
	record_node("node", HOT_JS, it_scaled(ms, sizeof(ms), 3500), NULL, &log, &t);
	assert_int_equal(t.nr_fns, 2);
	assert_string_equal(t.fns[0], "hotA");
	rt_count(&log, &t, rt_node_fn, true, &st);
	rt_print_stats(&t, &st);
	/* hotA and hotB have TurboFan code of their own: the loop did not inline them */
	assert_true(has_v8_method(&log, t.pid, '*', "hotA"));
	assert_true(has_v8_method(&log, t.pid, '*', "hotB"));
	/* the loop around the calls and V8's own code: under 1 point seen */
	rt_assert_share("leaf samples", &t, st.leaf, 0.02);
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	rt_assert_right(&t, st.right, st.in_span, 0.9, "V8's GC and frameless builtins: 0.5% seen");
	assert_true(st.early_in_span >= 100);
	assert_int_equal(st.early_wrong, 0);
	rt_assert_right(&t, st.early_right, st.early_in_span, 0.85,
			"the first second is interpreter and Sparkplug code too: 2% elsewhere seen");
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	rt_truth_free(&t);
}

/*
 * TurboFan off: the run is Sparkplug (baseline) code, after a first spell in the
 * interpreter. Baseline code calls a builtin for most operations, and the builtins build no
 * frame, so a frame-pointer walk from a sample in one goes from the builtin straight to the
 * hot function's caller (perf sees the same). The samples that show a hot function split 3:1.
 */
static void test_node_baseline_frames_named(void **state)
{
	const char *flags[] = { "--no-opt", NULL };
	struct rt_truth t;
	struct rt_stats st;
	struct it_log log;

	(void)state;
	skip_without_node();
	record_node("baseline", HOT_JS, "5000", flags, &log, &t);
	assert_int_equal(t.nr_fns, 2);
	assert_string_equal(t.fns[0], "hotA");
	rt_count(&log, &t, rt_node_fn, true, &st);
	rt_print_stats(&t, &st);
	assert_true(has_v8_method(&log, t.pid, '^', "hotA"));
	assert_false(has_v8_method(&log, t.pid, '*', "hotA"));
	/* hotA and hotB call frameless builtins in different shares: up to 2 points seen */
	rt_assert_share("innermost JS function", &t, st.attr, 0.04);
	assert_int_equal(st.foreign, 0);
	/* a sample in a builtin shows the caller instead (see below), never the other one */
	assert_int_equal(st.wrong, 0);
	rt_assert_right(&t, st.right, st.in_span, 0.15,
			"samples in frameless builtins show the caller: 27% right seen");
	it_assert_share_at_least("samples in calls named by a JS function", st.right + st.other,
				 st.in_span, 0.95, "all but 1 of 4826 seen");
	it_log_free(&log);
	rt_truth_free(&t);
}

/*
 * Interpreter only: a sample's leaf is a bytecode handler (named from the map too), the hot
 * function is the interpreter frame under it (--interpreted-frames-native-stack gives each
 * function its own copy of the interpreter entry). Handlers that build no frame of their own
 * hide that frame from a frame-pointer walk, so a share of samples show only the caller.
 */
static void test_node_interpreted_frames_named(void **state)
{
	const char *flags[] = { "--no-opt", "--no-sparkplug", NULL };
	struct rt_truth t;
	struct rt_stats st;
	struct it_log log;

	(void)state;
	skip_without_node();
	record_node("interp", HOT_JS, "5000", flags, &log, &t);
	assert_int_equal(t.nr_fns, 2);
	assert_string_equal(t.fns[0], "hotA");
	rt_count(&log, &t, rt_node_fn, true, &st);
	rt_print_stats(&t, &st);
	assert_true(has_v8_method(&log, t.pid, '~', "hotA"));
	assert_false(has_v8_method(&log, t.pid, '^', "hotA"));
	/* hotA and hotB run frameless handlers in different shares: up to 2 points seen */
	rt_assert_share("innermost JS function", &t, st.attr, 0.04);
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	rt_assert_right(&t, st.right, st.in_span, 0.3,
			"samples in frameless handlers show the caller: 51% right seen");
	it_assert_share_at_least("samples in calls named by a JS function", st.right + st.other,
				 st.in_span, 0.95, "all of 4977 seen");
	it_log_free(&log);
	rt_truth_free(&t);
}

/*
 * Code freed and compiled again at the same addresses: a new function every 20 ms, the dead
 * ones collected every 8, so new code lands where dead code of another name was. A map line
 * is known only to have been written between the read before the one that found it and
 * that one, which on a busy collector (loading node's symbols, starved of CPU) can be
 * 200 ms apart: a sample at reused code in that span is left unnamed and counted, never
 * named by the other function (unit test: test_pipeline's
 * perfmap_code_replacing_other_code_names_no_sample_before_it_is_read).
 */
static void test_node_reused_code_named_by_time(void **state)
{
	const char *flags[] = { "--expose-gc", NULL };
	struct rt_truth t;
	struct rt_stats st;
	struct it_log log;

	(void)state;
	skip_without_node();
	record_node("churn", CHURN_JS, "3500", flags, &log, &t);
	rt_count(&log, &t, rt_node_fn, true, &st);
	rt_print_stats(&t, &st);
	print_message("%d functions, one after another\n", t.nr_fns);
	assert_true(t.nr_fns >= 50);
	assert_true(st.reused >= 20);	/* the test did put new code on dead code */
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	print_message("%llu frames left unnamed: code that replaced other code, not yet read\n",
		      (unsigned long long)it_drops_of(&log, JT_DROP_UNSURE_FRAME));
	/* half of a new function's 20 ms can precede the read that finds its line, and reads
	 * space out when the collector is short of CPU */
	rt_assert_right(&t, st.right, st.in_span, 0.35,
			"reused code is unnamed until its line is read: 66-75% right seen, "
			"52% with both CPUs busy");
	it_assert_share_at_least("samples in calls named by a JS function", st.right + st.other,
				 st.in_span, 0.95, "all but 8 of 2847 seen");
	it_log_free(&log);
	rt_truth_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_split_and_names),
		cmocka_unit_test(test_node_baseline_frames_named),
		cmocka_unit_test(test_node_interpreted_frames_named),
		cmocka_unit_test(test_node_reused_code_named_by_time),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_node: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
