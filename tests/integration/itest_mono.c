// SPDX-License-Identifier: GPL-2.0
/* `jitrace record` on real Mono: the profiler module (names, exact calls through exceptions,
 * unloads) and `mono --jitmap` without it. Needs root, /usr/bin/mono and /usr/bin/mcs. */
#include <limits.h>
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

#define IT_MONO "/usr/bin/mono"
#define IT_MCS "/usr/bin/mcs"
#define IT_MONO_MODULE "build/libmono-profiler-jitrace.so"
#define IT_HOT_CS "tests/runtimes/mono/Hot.cs"
#define IT_CALLS 1000
#define IT_DYNAMIC 20

static char *hot_exe;	/* Hot.cs compiled into it_dir() once */

static bool name_starts(const struct jt_rec_method *m, const char *prefix)
{
	size_t n = strlen(prefix);

	return m && m->name_len >= n && !memcmp(m->name, prefix, n);
}

/* The pid Hot.exe printed. */
static pid_t hot_pid(const char *out)
{
	struct it_toy t;

	it_toy_parse(out, &t);
	assert_true(t.pid > 0);
	return t.pid;
}

static void need_mono(void)
{
	if (access(IT_MONO, X_OK) || access(IT_MCS, X_OK)) {
		print_message("skipped: %s or %s not installed (apt-get install mono-runtime "
			      "mono-devel)\n", IT_MONO, IT_MCS);
		skip();
	}
	assert_non_null(hot_exe);
}

/* The leaf split between Big and Small; names from src, or from either of the module's
 * two channels (its stub calls and the perf map it writes) when src is JT_SRC_AGENT. */
static void assert_split(const struct it_log *log, uint32_t pid, uint16_t src)
{
	uint64_t big = 0, small = 0, other = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		m = it_leaf_method(log, s);
		if (m)
			assert_int_equal(m->pid, pid);	/* names never cross processes */
		if (it_name_is(m, "Hot:Big (int)") || it_name_is(m, "Hot:Small (int)")) {
			if (m->src != src && !(src == JT_SRC_AGENT && m->src == JT_SRC_PERFMAP))
				fail_msg("%.*s named by source %u", m->name_len, m->name, m->src);
			if (m->name[4] == 'B')
				big++;
			else
				small++;
		} else {
			other++;
		}
	}
	print_message("pid %u: Hot:Big %llu, Hot:Small %llu, elsewhere %llu\n", pid,
		      (unsigned long long)big, (unsigned long long)small,
		      (unsigned long long)other);
	/* the loop around the calls: 74-76% seen */
	it_assert_share_near("leaf samples in Hot:Big of Big and Small (written 75%)", big,
			     big + small, 0.75, 0.02);
}

/* Per thread of pid, every leave closes the innermost open enter, and none stays open. */
static void assert_calls_nest(const struct it_log *log, uint32_t pid)
{
	struct { uint32_t tid; int depth; uint64_t ids[512]; } th[16];
	int nr_th = 0, k;
	size_t i;

	memset(th, 0, sizeof(th));
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_call *c = (const void *)log->recs[i];

		if (c->pid != pid || (c->h.type != JT_REC_ENTER && c->h.type != JT_REC_LEAVE))
			continue;
		for (k = 0; k < nr_th && th[k].tid != c->tid; k++)
			;
		if (k == nr_th) {
			assert_true(nr_th < 16);
			th[nr_th++].tid = c->tid;
		}
		if (c->h.type == JT_REC_ENTER) {
			assert_true(th[k].depth < 512);
			th[k].ids[th[k].depth++] = c->id;
		} else {
			if (!th[k].depth || th[k].ids[th[k].depth - 1] != c->id) {
				const struct jt_rec_method *m = it_method(log, c->id);

				fail_msg("tid %u leaves %.*s, not its innermost open method",
					 c->tid, m ? m->name_len : 1, m ? m->name : "?");
			}
			th[k].depth--;
		}
	}
	for (k = 0; k < nr_th; k++)
		assert_int_equal(th[k].depth, 0);
}

static void assert_calls_exact(const struct it_log *log, const char *out)
{
	struct it_toy t;
	int i;

	it_toy_parse(out, &t);
	assert_true(t.done);
	assert_int_equal(t.nr_calls, 2);	/* Hot:Work and Hot:Leaf */
	assert_true(it_wait_for_text(out, "thrown 100\n", 0));
	for (i = 0; i < t.nr_calls; i++) {
		uint64_t in = it_count_calls(log, t.pid, JT_REC_ENTER, t.names[i]);
		uint64_t left = it_count_calls(log, t.pid, JT_REC_LEAVE, t.names[i]);

		print_message("%s: called %llu, entered %llu, left %llu\n", t.names[i],
			      (unsigned long long)t.calls[i], (unsigned long long)in,
			      (unsigned long long)left);
		assert_int_equal(t.calls[i], IT_CALLS);
		assert_int_equal(in, t.calls[i]);
		assert_int_equal(left, t.calls[i]);
	}
}

static void test_split_named_by_the_module(void **state)
{
	char *log_path = it_path_dup("split.jtl"), *out = it_path_dup("split.out");
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-o", log_path, "--", IT_MONO,
			 "--profile=jitrace", hot_exe, "split", "2000", NULL };
	struct it_log log;
	pid_t pid;

	(void)state;
	need_mono();
	assert_int_equal(it_run(argv, out, NULL), 0);
	pid = hot_pid(out);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_split(&log, pid, JT_SRC_AGENT);
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/* No module: Mono's own perf map names the same methods. */
static void test_split_named_by_jitmap(void **state)
{
	char *log_path = it_path_dup("jitmap.jtl"), *out = it_path_dup("jitmap.out");
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-o", log_path, "--", IT_MONO,
			 "--jitmap", hot_exe, "split", "2000", NULL };
	struct it_log log;
	pid_t pid;

	(void)state;
	need_mono();
	assert_int_equal(it_run(argv, out, NULL), 0);
	pid = hot_pid(out);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_split(&log, pid, JT_SRC_PERFMAP);
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/* calls=Hot: instruments only the program's class; a tenth of the calls throw through both
 * methods and are caught by their caller. */
static void test_calls_exact_through_exceptions(void **state)
{
	char *log_path = it_path_dup("calls.jtl"), *out = it_path_dup("calls.out");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-o", log_path, "--", IT_MONO,
			 "--profile=jitrace:calls=Hot:", hot_exe, "calls", "1000", NULL };
	struct it_log log;
	size_t i;

	(void)state;
	need_mono();
	assert_int_equal(it_run(argv, out, NULL), 0);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_calls_exact(&log, out);
	assert_calls_nest(&log, hot_pid(out));
	for (i = 0; i < log.n; i++) {	/* the filter let nothing else through */
		const struct jt_rec_call *c = (const void *)log.recs[i];

		if (c->h.type == JT_REC_ENTER)
			assert_true(name_starts(it_method(&log, c->id), "Hot:"));
	}
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/* `calls` alone: every method Mono instruments, runtime wrappers included, still nests. */
static void test_calls_of_every_method_nest(void **state)
{
	char *log_path = it_path_dup("allcalls.jtl"), *out = it_path_dup("allcalls.out");
	char *err = it_path_dup("allcalls.err");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-o", log_path, "--", IT_MONO,
			 "--profile=jitrace:calls", hot_exe, "calls", "1000", NULL };
	struct it_log log;
	uint64_t enters = 0;
	size_t i;

	(void)state;
	need_mono();
	assert_int_equal(it_run(argv, out, err), 0);
	assert_false(it_wait_for_text(err, "jitrace-mono:", 0));	/* no call lost */
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_calls_exact(&log, out);
	assert_calls_nest(&log, hot_pid(out));
	for (i = 0; i < log.n; i++)
		enters += log.recs[i]->type == JT_REC_ENTER;
	print_message("%llu enters in all\n", (unsigned long long)enters);
	assert_true(enters > 2 * IT_CALLS + 100);	/* more than Hot's own */
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
	free(err);
}

/* Dynamic methods are freed while the program runs: each is unloaded, after its last leave. */
static void test_dynamic_methods_unload(void **state)
{
	char *log_path = it_path_dup("unload.jtl"), *out = it_path_dup("unload.out");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-o", log_path, "--", IT_MONO,
			 "--profile=jitrace:calls=(wrapper dynamic-method) object:Dyn", hot_exe,
			 "unload", "20", NULL };
	bool entered[IT_DYNAMIC] = { 0 }, unloaded[IT_DYNAMIC] = { 0 };
	struct it_log log;
	size_t i;
	int k;

	(void)state;
	need_mono();
	assert_int_equal(it_run(argv, out, NULL), 0);
	assert_true(it_wait_for_text(out, "dynamic 20\n", 0));
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_call *c = (const void *)log.recs[i];
		const struct jt_rec_method *m;
		char name[64];

		if (c->h.type != JT_REC_ENTER && c->h.type != JT_REC_UNLOAD)
			continue;
		m = it_method(&log, c->id);
		for (k = 0; k < IT_DYNAMIC; k++) {
			snprintf(name, sizeof(name), "(wrapper dynamic-method) object:Dyn%d (int)",
				 k);
			if (!it_name_is(m, name))
				continue;
			if (c->h.type == JT_REC_ENTER) {
				assert_false(unloaded[k]);	/* no call after its unload */
				entered[k] = true;
			} else {
				assert_true(entered[k]);
				assert_false(unloaded[k]);
				unloaded[k] = true;
			}
		}
	}
	for (k = 0; k < IT_DYNAMIC; k++) {
		if (!unloaded[k])
			fail_msg("Dyn%d (int) was never unloaded", k);
	}
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/* A mistyped option stops Mono at once, saying why, rather than tracing less in silence. */
static void test_unknown_option_stops_mono(void **state)
{
	char *err = it_path_dup("badopt.err");
	char *argv[] = { IT_MONO, "--profile=jitrace:cals", hot_exe, "calls", "1", NULL };

	(void)state;
	need_mono();
	assert_int_equal(it_run(argv, "/dev/null", err), 1);
	assert_true(it_wait_for_text(err, "jitrace-mono: unknown option 'cals'", 0));
	free(err);
}

/* Compile Hot.cs once, and let Mono find the module beside jitrace as a user would. */
static int setup(void **state)
{
	char build[PATH_MAX];
	char *out, *argv[] = { IT_MCS, "-optimize+", NULL, IT_HOT_CS, NULL };

	(void)state;
	if (access(IT_MONO, X_OK) || access(IT_MCS, X_OK))
		return 0;	/* each test says why it skips */
	if (access(IT_MONO_MODULE, R_OK) || !realpath("build", build)) {
		fprintf(stderr, "itest_mono: %s missing: run make first\n", IT_MONO_MODULE);
		return -1;
	}
	setenv("LD_LIBRARY_PATH", build, 1);
	hot_exe = it_path_dup("Hot.exe");
	if (asprintf(&out, "-out:%s", hot_exe) < 0)
		return -1;
	argv[2] = out;
	if (it_run(argv, "/dev/null", NULL) != 0) {
		fprintf(stderr, "itest_mono: %s did not compile %s\n", IT_MCS, IT_HOT_CS);
		free(out);
		return -1;
	}
	free(out);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(hot_exe);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_named_by_the_module),
		cmocka_unit_test(test_split_named_by_jitmap),
		cmocka_unit_test(test_calls_exact_through_exceptions),
		cmocka_unit_test(test_calls_of_every_method_nest),
		cmocka_unit_test(test_dynamic_methods_unload),
		cmocka_unit_test(test_unknown_option_stops_mono),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_mono: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
