// SPDX-License-Identifier: GPL-2.0
/* Several runtimes at once under one system-wide recording: two Node processes, two BEAM
 * processes and the toy JIT, each named only from its own map (or agent), each with the CPU
 * split its program did. Needs root, /usr/bin/node, /usr/bin/erl and /usr/bin/erlc. */
#include <setjmp.h>
#include <signal.h>
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
#define ERL "/usr/bin/erl"
#define ERLC "/usr/bin/erlc"

enum { NODE_HOT, NODE_HOT2, BEAM_HOT, BEAM_HOT2, NR_RT };

/* hot.beam and hot2.beam, compiled into the scratch directory; NULL when a runtime is
 * missing. */
static int setup(void **state)
{
	char *argv[] = { ERLC, "-o", (char *)it_dir(), "tests/runtimes/erlang/hot.erl",
			 "tests/runtimes/erlang/hot2.erl", NULL };

	*state = NULL;
	if (access(NODE, X_OK) || access(ERL, X_OK) || access(ERLC, X_OK))
		return 0;
	if (it_run(argv, NULL, NULL)) {
		fprintf(stderr, "itest_mixed: %s failed on tests/runtimes/erlang\n", ERLC);
		return -1;
	}
	*state = (void *)it_dir();
	return 0;
}

/* Leaf samples of the toy JIT's pid in hot_a and hot_b; no frame names another runtime's
 * code or another process's. */
static void assert_toy(const struct it_log *log, pid_t pid)
{
	uint64_t a = 0, b = 0;
	char label[80];
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != (uint32_t)pid)
			continue;
		m = it_leaf_method(log, s);
		if (!m)
			continue;
		a += m->name_len == 5 && !memcmp(m->name, "hot_a", 5);
		b += m->name_len == 5 && !memcmp(m->name, "hot_b", 5);
	}
	snprintf(label, sizeof(label), "toy JIT pid %d leaf samples in hot_a (scripted 75%%)", pid);
	/* the toy's own loop around the calls: 1-2 points */
	it_assert_share_near(label, a, a + b, 0.75, 0.02);
}

/* No name of a BEAM or Node program function, whatever the naming. */
static bool any_fn(const struct jt_rec_method *m, char *fn, size_t size)
{
	return rt_node_fn(m, fn, size) || rt_beam_fn(m, fn, size);
}

static void test_runtimes_side_by_side(void **state)
{
	char *log_path = it_path_dup("mixed.jtl"), *err = it_path_dup("mixed.err");
	char *toy_out = it_path_dup("toy.out"), *outs[NR_RT];
	char *rec[] = { IT_JITRACE, "record", "-a", "-F", "999", "-o", log_path, NULL };
	char *cmds[NR_RT][11] = {
		/* --logfile: else V8 leaves isolate-*-v8.log in the cwd */
		{ NODE, "--perf-basic-prof", "--logfile=/dev/null", "tests/runtimes/node/hot.js",
		  "4000", NULL },
		{ NODE, "--perf-basic-prof", "--logfile=/dev/null", "tests/runtimes/node/hot2.js",
		  "4000", NULL },
		{ ERL, "+JPperf", "true", "-noshell", "-pa", (char *)it_dir(), "-run", "hot",
		  "main", "4000" },
		{ ERL, "+JPperf", "true", "-noshell", "-pa", (char *)it_dir(), "-run", "hot2",
		  "main", "4000" },
	};
	char *toy[] = { IT_TOYJIT, "split", "--ms", "3000", NULL };
	/* what each program must never show: its neighbours' functions and naming */
	const char *const not_in[NR_RT][8] = {
		{ "coolC", "coolD", "hot:a/2", "hot:b/2", "hot2:c/2", "hot2:d/2", NULL },
		{ "hotA", "hotB", "hot:a/2", "hot:b/2", "hot2:c/2", "hot2:d/2", NULL },
		{ "hot2:c/2", "hot2:d/2", "hotA", "hotB", "coolC", "coolD", NULL },
		{ "hot:a/2", "hot:b/2", "hotA", "hotB", "coolC", "coolD", NULL },
	};
	const char *bad_prefix[NR_RT] = { "$", "$", "JS:", "JS:" };
	const double share[NR_RT] = { 0.75, 1.0 / 3, 0.75, 1.0 / 3 };
	static struct rt_truth t[NR_RT];
	pid_t rec_pid, pids[NR_RT], toy_pid;
	struct rt_stats st;
	struct it_log log;
	struct it_toy toyt;
	char name[32];
	int k;

	if (!*state) {
		print_message("node, erl or erlc is missing: the side-by-side test is skipped\n");
		skip();
	}
	rec_pid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	for (k = 0; k < NR_RT; k++) {
		snprintf(name, sizeof(name), "mixed%d.out", k);
		outs[k] = it_path_dup(name);
		pids[k] = it_spawn(cmds[k], outs[k], NULL);
	}
	toy_pid = it_spawn(toy, toy_out, NULL);
	for (k = 0; k < NR_RT; k++)
		assert_int_equal(it_wait(pids[k]), 0);
	assert_int_equal(it_wait(toy_pid), 0);
	usleep(300000);		/* past the reorder window: the exits are in */
	kill(rec_pid, SIGINT);
	assert_int_equal(it_wait(rec_pid), 0);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (k = 0; k < NR_RT; k++) {
		bool node = k == NODE_HOT || k == NODE_HOT2;

		rt_truth_parse(outs[k], &t[k]);
		assert_int_equal(t[k].pid, pids[k]);	/* erl exec'd beam.smp in place */
		rt_count(&log, &t[k], node ? rt_node_fn : rt_beam_fn, node, &st);
		rt_print_stats(&t[k], &st);
		/* the program did the split it was written for */
		assert_int_equal(t[k].nr_fns, 2);
		assert_true(t[k].units[0] * 1000 / (t[k].units[0] + t[k].units[1]) ==
			    (uint64_t)(share[k] * 1000));
		/* BEAM: hot:a/2 and hot:b/2 cost slightly different CPU per unit (75-78% seen) */
		rt_assert_share("leaf samples", &t[k], st.leaf, node ? 0.02 : 0.04);
		rt_assert_own_names(&log, pids[k], bad_prefix[k], not_in[k], any_fn);
		assert_int_equal(st.foreign, 0);
		assert_int_equal(st.wrong, 0);
		/* Node: V8's own code (GC, builtins without a frame) takes under 1%; BEAM: its
		 * C code (GC, scheduling, BIFs) 5-15%, more beside the others (85% right seen) */
		rt_assert_right(&t[k], st.right, st.in_span, node ? 0.9 : 0.75,
				node ? "V8's own code takes under 1%" :
				       "BEAM's own code takes up to 15%, more when the CPUs are shared");
	}
	it_toy_parse(toy_out, &toyt);
	assert_int_equal(toyt.pid, toy_pid);
	assert_toy(&log, toy_pid);
	{
		const char *none[] = { "hotA", "hotB", "coolC", "coolD", NULL };

		rt_assert_own_names(&log, toy_pid, "JS:", none, any_fn);
		rt_assert_own_names(&log, toy_pid, "$", none, any_fn);
	}
	print_message("%llu events lost in the whole recording\n",
		      (unsigned long long)it_drops_total(&log));
	for (k = 0; k < NR_RT; k++) {
		rt_truth_free(&t[k]);
		free(outs[k]);
	}
	it_log_free(&log);
	free(log_path);
	free(err);
	free(toy_out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtimes_side_by_side),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_mixed: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, NULL);
}
