// SPDX-License-Identifier: GPL-2.0
/* Erlang/BEAM traced live through its own perf map (+JPperf true): BEAM's names, the CPU
 * split of two hot functions run by a scheduler thread, and every sample inside a call named
 * by the code live then. Needs root, /usr/bin/erl and /usr/bin/erlc. */
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

/* In a call of a hot function BEAM's own C code (GC, scheduling, BIFs) takes the rest: 5-15%
 * of the samples alone on this machine, more beside other runtimes (85% right seen). */
#define BEAM_OWN "the rest is BEAM's own code, up to 15% seen, more when the CPUs are shared"
#define ERL "/usr/bin/erl"
#define ERLC "/usr/bin/erlc"
#define HOT_ERL "tests/runtimes/erlang/hot.erl"

/* hot.beam, compiled into the scratch directory; NULL when Erlang is missing. */
static int compile_hot(void **state)
{
	char *argv[] = { ERLC, "-o", (char *)it_dir(), HOT_ERL, NULL };

	*state = NULL;
	if (access(ERL, X_OK) || access(ERLC, X_OK))
		return 0;
	if (it_run(argv, NULL, NULL)) {
		fprintf(stderr, "itest_beam: %s %s failed\n", ERLC, HOT_ERL);
		return -1;
	}
	*state = (void *)it_dir();
	return 0;
}

/*
 * `erl +JPperf true -noshell -pa DIR -run hot main MS`: names as BEAM writes them
 * ("$hot:a/2"), the leaf split is the work split (3:1) within 5 points, and no sample
 * inside a call of one hot function is named by the other. The schedulers are threads of
 * their own: samples come from them, not from the main thread.
 */
static void test_beam_split_and_names(void **state)
{
	char *log_path = it_path_dup("beam.jtl"), *out = it_path_dup("beam.out");
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-o", log_path, "--", ERL,
			 "+JPperf", "true", "-noshell", "-pa", (char *)it_dir(), "-run", "hot",
			 "main", "3500", NULL };
	struct rt_truth t;
	struct rt_stats st;
	struct it_log log;
	uint64_t on_main = 0;
	size_t i;

	if (!*state) {
		print_message("%s or %s is missing: BEAM tests skipped\n", ERL, ERLC);
		skip();
	}
	assert_int_equal(it_run(argv, out, NULL), 0);
	rt_truth_parse(out, &t);
	assert_int_equal(t.nr_fns, 2);
	assert_string_equal(t.fns[0], "hot:a/2");
	it_log_load(log_path, &log);
	it_check_promises(&log);
	rt_count(&log, &t, rt_beam_fn, false, &st);
	rt_print_stats(&t, &st);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != (uint32_t)t.pid)
			continue;
		m = it_leaf_method(&log, s);
		if (m && m->name_len == 8 && !memcmp(m->name, "$hot:a/2", 8))
			on_main += s->tid == s->pid;
	}
	assert_int_equal(on_main, 0);
	/* hot:a/2 and hot:b/2 cost slightly different CPU per unit of work: 75-78% seen */
	rt_assert_share("leaf samples", &t, st.leaf, 0.04);
	assert_int_equal(st.foreign, 0);
	assert_int_equal(st.wrong, 0);
	rt_assert_right(&t, st.right, st.in_span, 0.75, BEAM_OWN);
	assert_true(st.early_in_span >= 100);
	assert_int_equal(st.early_wrong, 0);
	rt_assert_right(&t, st.early_right, st.early_in_span, 0.75, BEAM_OWN);
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	rt_truth_free(&t);
	free(log_path);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_beam_split_and_names),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_beam: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, compile_hot, NULL);
}
