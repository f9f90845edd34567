// SPDX-License-Identifier: GPL-2.0
/*
 * `jitrace record` on a real HotSpot JVM (openjdk-17): names from the JVMTI agent and from
 * libjvm.so's USDT probes, a known CPU split, exact call counts from both, late attach with
 * jcmd, and whole Java stacks down to named native frames. Needs root.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "lib.h"

#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define JAVA JDK "/bin/java"
#define HOT_A "Hot.a(long)"
#define HOT_B "Hot.b(long)"
#define HOT_OUTER "Hot.outer(long)"
#define HOT_MAIN "Hot.main(java.lang.String[])"
#define CALLS_N 1000

static char agent_so[PATH_MAX];		/* absolute: the JVM resolves it, not us */
static char agent_opt[PATH_MAX + 64];
static char agent_calls_opt[PATH_MAX + 64];
static char *agent_hot_log;		/* recorded once, read by two tests */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The pid of the process whose method is called name, and that method's source. */
static uint32_t pid_of(const struct it_log *log, const char *name, uint16_t *src)
{
	size_t i;

	for (i = 1; i < log->nr_methods; i++) {
		if (it_name_is(log->methods[i], name)) {
			if (src)
				*src = log->methods[i]->src;
			return log->methods[i]->pid;
		}
	}
	fail_msg("no method %s in the log", name);
	return 0;
}

/* Every Java method of Hot (or Calls) in the log came from want. */
static void assert_java_src(const struct it_log *log, const char *prefix, uint16_t want)
{
	size_t i, n = 0;

	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		if (!m || m->name_len < strlen(prefix) || memcmp(m->name, prefix, strlen(prefix)))
			continue;
		assert_int_equal(m->src, want);
		n++;
	}
	assert_true(n > 0);
}

/* Leaf samples of pid in Hot.a and Hot.b between from and to, and all samples there. */
static void count_split(const struct it_log *log, uint32_t pid, uint64_t from, uint64_t to,
			uint64_t *a, uint64_t *b, uint64_t *all)
{
	size_t i;

	*a = *b = *all = 0;
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid || s->h.ts < from || s->h.ts > to)
			continue;
		(*all)++;
		m = it_leaf_method(log, s);
		if (it_name_is(m, HOT_A))
			(*a)++;
		else if (it_name_is(m, HOT_B))
			(*b)++;
	}
}

static void assert_split(const struct it_log *log, uint32_t pid, uint64_t from, uint64_t to)
{
	uint64_t a, b, all;
	char label[96];

	count_split(log, pid, from, to, &a, &b, &all);
	snprintf(label, sizeof(label), "pid %u: leaf samples in %s of %s and %s (work done 75%%)",
		 pid, HOT_A, HOT_A, HOT_B);
	print_message("pid %u: %llu samples in all\n", pid, (unsigned long long)all);
	/* the loop around the calls, inlined into its caller: 74-76% seen */
	it_assert_share_near(label, a, a + b, 0.75, 0.02);
}

static int group_setup(void **state)
{
	char *javac[] = { JDK "/bin/javac", "-d", (char *)it_dir(),
			  "tests/runtimes/java/Hot.java", "tests/runtimes/java/Calls.java",
			  "tests/runtimes/java/Unload.java", NULL };

	(void)state;
	if (access(JAVA, X_OK))
		return 0;	/* each test skips, saying why */
	if (!realpath("build/libjitrace-jvmti.so", agent_so)) {
		fprintf(stderr, "itest_hotspot: build/libjitrace-jvmti.so: not built\n");
		return -1;
	}
	snprintf(agent_opt, sizeof(agent_opt), "-agentpath:%s", agent_so);
	snprintf(agent_calls_opt, sizeof(agent_calls_opt), "-agentpath:%s=calls=Calls.*",
		 agent_so);
	if (it_run(javac, NULL, NULL)) {
		fprintf(stderr, "itest_hotspot: javac failed\n");
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	free(agent_hot_log);
	return 0;
}

static void need_java(void)
{
	if (access(JAVA, X_OK)) {
		print_message("skipped: %s is not installed\n", JAVA);
		skip();
	}
}

/* Hot for 3 s under the agent, recorded once for the split and the stack tests. */
static const char *record_agent_hot(void)
{
	char *out, *log_path;

	if (agent_hot_log)
		return agent_hot_log;
	out = it_path_dup("agent_hot.out");
	log_path = it_path_dup("agent_hot.jtl");
	{
		char *argv[] = { IT_JITRACE, "record", "--no-usdt", "-F", "999", "-o", log_path,
				 "--", JAVA, agent_opt, "-XX:+PreserveFramePointer",
				 "-XX:+UseSerialGC", "-XX:CompileCommand=quiet",
				 "-XX:CompileCommand=dontinline,Hot::*", "-cp", (char *)it_dir(),
				 "Hot", "3", NULL };

		assert_int_equal(it_run(argv, out, NULL), 0);
	}
	assert_true(it_wait_for_text(out, "hot done", 0));
	free(out);
	agent_hot_log = log_path;
	return log_path;
}

static void test_agent_names_and_split(void **state)
{
	struct it_log log;
	uint32_t pid;

	(void)state;
	need_java();
	it_log_load(record_agent_hot(), &log);
	it_check_promises(&log);
	pid = pid_of(&log, HOT_A, NULL);
	assert_int_equal(pid_of(&log, HOT_B, NULL), pid);
	assert_java_src(&log, "Hot.", JT_SRC_AGENT);
	assert_split(&log, pid, 0, UINT64_MAX);
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
}

static void test_usdt_names_and_split_without_agent(void **state)
{
	char *log_path = it_path_dup("usdt_hot.jtl"), *out = it_path_dup("usdt_hot.out");
	char *argv[] = { IT_JITRACE, "record", "--no-agent", "-F", "999", "-o", log_path, "--",
			 JAVA, "-XX:+PreserveFramePointer", "-XX:+UseSerialGC",
			 "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,Hot::*", "-cp",
			 (char *)it_dir(), "Hot", "3", NULL };
	struct it_log log;
	uint32_t pid;

	(void)state;
	need_java();
	assert_int_equal(it_run(argv, out, NULL), 0);
	assert_true(it_wait_for_text(out, "hot done", 0));
	it_log_load(log_path, &log);
	it_check_promises(&log);
	pid = pid_of(&log, HOT_A, NULL);
	assert_java_src(&log, "Hot.", JT_SRC_USDT);
	assert_split(&log, pid, 0, UINT64_MAX);
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/*
 * A sampled stack of Hot.a, leaf first: Hot.a, Hot.outer, Hot.main (all JIT code), the call
 * stub, JavaCalls::call_helper in libjvm.so, ..., JavaMain and ThreadJavaMain in libjli.so,
 * start_thread in libc (named from its debug file) and what started it: every frame named,
 * from the leaf to the root.
 */
static bool whole_stack(const struct it_log *log, const struct jt_rec_sample *s)
{
	static const char *const top[] = { HOT_A, HOT_OUTER, HOT_MAIN };
	/* below Hot.main, in this order, other frames allowed between */
	static const char *const below[] = { "call_stub", "JavaCalls::call_helper", "JavaMain",
					     "ThreadJavaMain", "start_thread" };
	const unsigned int nr_below = sizeof(below) / sizeof(below[0]);
	unsigned int i, n = 0, k = 0;
	char name[512];

	for (i = 0; i < s->nr_frames; i++) {
		size_t len = k < nr_below ? strlen(below[k]) : 0;

		if (it_frame_is_kernel(log, &s->frames[i]))
			continue;
		if (it_frame_name(log, &s->frames[i], name, sizeof(name)))
			return false;	/* an unnamed frame */
		if (n < 3) {
			if (strcmp(name, top[n]))
				return false;
		} else if (k < nr_below && !strncmp(name, below[k], len) &&
			   (!name[len] || name[len] == '(')) {
			k++;
		}
		n++;
	}
	return k == nr_below;
}

static void test_whole_java_stacks_to_named_native_frames(void **state)
{
	uint64_t leaf_a = 0, whole = 0;
	struct it_log log;
	uint32_t pid;
	size_t i;

	(void)state;
	need_java();
	it_log_load(record_agent_hot(), &log);
	pid = pid_of(&log, HOT_A, NULL);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		char name[512];
		unsigned int k;

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid ||
		    !it_name_is(it_leaf_method(&log, s), HOT_A))
			continue;
		leaf_a++;
		if (whole_stack(&log, s)) {
			whole++;
			continue;
		}
		if (leaf_a - whole > 3)
			continue;
		print_message("not whole:");	/* the first few, to see why */
		for (k = 0; k < s->nr_frames; k++) {
			it_frame_name(&log, &s->frames[k], name, sizeof(name));
			print_message(" %s |", name);
		}
		print_message("\n");
	}
	print_message("%llu of %llu samples in %s have the whole stack\n",
		      (unsigned long long)whole, (unsigned long long)leaf_a, HOT_A);
	assert_true(leaf_a >= 300);
	it_assert_share_at_least("samples in Hot.a with the whole stack", whole, leaf_a, 0.5,
				 "the rest were taken with an Interpreter frame on the stack: 81-89% seen");
	it_log_free(&log);
}

static void assert_calls(const struct it_log *log, uint32_t pid, const char *name, uint64_t n)
{
	uint64_t in = it_count_calls(log, pid, JT_REC_ENTER, name);
	uint64_t out = it_count_calls(log, pid, JT_REC_LEAVE, name);

	print_message("%s: called %llu, entered %llu, left %llu\n", name, (unsigned long long)n,
		      (unsigned long long)in, (unsigned long long)out);
	assert_int_equal(in, n);
	assert_int_equal(out, n);
}

static void test_agent_counts_calls_exactly(void **state)
{
	char *log_path = it_path_dup("agent_calls.jtl"), *out = it_path_dup("agent_calls.out");
	char *argv[] = { IT_JITRACE, "record", "--calls", "--no-usdt", "-o", log_path, "--", JAVA,
			 agent_calls_opt, "-XX:+UseSerialGC", "-cp", (char *)it_dir(), "Calls",
			 "1000", NULL };
	struct it_log log;
	uint32_t pid;
	size_t i;

	(void)state;
	need_java();
	assert_int_equal(it_run(argv, out, NULL), 0);
	assert_true(it_wait_for_text(out, "calls done 1000", 0));
	it_log_load(log_path, &log);
	it_check_promises(&log);
	pid = pid_of(&log, "Calls.target(int)", NULL);
	assert_java_src(&log, "Calls.", JT_SRC_AGENT);
	assert_calls(&log, pid, "Calls.target(int)", CALLS_N);
	assert_calls(&log, pid, "Calls.main(java.lang.String[])", 1);
	for (i = 0; i < log.n; i++) {	/* the filter kept every other method out */
		const struct jt_rec_call *c = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		if (c->h.type != JT_REC_ENTER)
			continue;
		m = it_method(&log, c->id);
		assert_non_null(m);
		assert_true(m->name_len > 6 && !memcmp(m->name, "Calls.", 6));
	}
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

static void test_usdt_counts_calls_exactly_without_agent(void **state)
{
	char *log_path = it_path_dup("usdt_calls.jtl"), *out = it_path_dup("usdt_calls.out");
	char *argv[] = { IT_JITRACE, "record", "--calls", "--no-agent", "-o", log_path, "--", JAVA,
			 "-XX:+DTraceMethodProbes", "-XX:+UseSerialGC", "-cp", (char *)it_dir(),
			 "Calls", "1000", NULL };
	struct it_log log;
	uint32_t pid;

	(void)state;
	need_java();
	assert_int_equal(it_run(argv, out, NULL), 0);
	assert_true(it_wait_for_text(out, "calls done 1000", 0));
	it_log_load(log_path, &log);
	it_check_promises(&log);
	pid = pid_of(&log, "Calls.target(int)", NULL);
	assert_java_src(&log, "Calls.", JT_SRC_USDT);
	assert_calls(&log, pid, "Calls.target(int)", CALLS_N);
	assert_calls(&log, pid, "Calls.main(java.lang.String[])", 1);
	/* and the JDK's own methods, named the same way */
	assert_true(it_count_calls(&log, pid, JT_REC_ENTER, "java.lang.String.hashCode()") > 0);
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/*
 * A JVM that compiled Hot.a before anything listened: recording starts, then jcmd loads the
 * agent, whose replay names the code that was already there.
 */
static void test_late_attach_names_code_compiled_before(void **state)
{
	char *log_path = it_path_dup("attach.jtl"), *out = it_path_dup("attach.out");
	char *err = it_path_dup("attach.err"), *jout = it_path_dup("attach.jcmd");
	char *java[] = { JAVA, "-XX:+PreserveFramePointer", "-XX:+UseSerialGC",
			 "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,Hot::*", "-cp",
			 (char *)it_dir(), "Hot", "7", NULL };
	char pid_arg[16];
	/* --no-attach: jitrace would name that code itself (Compiler.perfmap) */
	char *rec[] = { IT_JITRACE, "record", "--no-usdt", "--no-attach", "-p", pid_arg, "-F",
			"999", "-d", "4", "-o", log_path, NULL };
	char *jcmd[] = { JDK "/bin/jcmd", pid_arg, "JVMTI.agent_load", agent_so, NULL };
	uint64_t t_attach, t_named, a, b, all, unnamed_before = 0, before = 0;
	const struct jt_rec_method *hot_a = NULL;
	pid_t jpid, rpid;
	struct it_log log;
	size_t i;

	(void)state;
	need_java();
	jpid = it_spawn(java, out, NULL);
	assert_true(it_wait_for_text(out, "hot ready", 30000));	/* a second of running */
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)jpid);
	rpid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	usleep(700000);		/* samples of the unnamed code first */
	t_attach = now_ns();
	assert_int_equal(it_run(jcmd, jout, NULL), 0);
	t_named = now_ns();
	assert_int_equal(it_wait(rpid), 0);
	assert_int_equal(it_wait(jpid), 0);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 1; i < log.nr_methods; i++)
		if (it_name_is(log.methods[i], HOT_A) && log.methods[i]->pid == (uint32_t)jpid)
			hot_a = log.methods[i];
	assert_non_null(hot_a);
	assert_int_equal(hot_a->src, JT_SRC_AGENT);
	assert_true(hot_a->load_ts >= t_attach);	/* named by the replay */
	/* before the attach, samples fell in that very code but had no name */
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		unsigned int k;

		if (s->h.type != JT_REC_SAMPLE || s->pid != (uint32_t)jpid || s->h.ts >= t_attach)
			continue;
		before++;
		assert_null(it_leaf_method(&log, s));
		for (k = 0; k < s->nr_frames; k++)
			if (JT_FRAME_KIND(s->frames[k].ref) == JT_FRAME_USER &&
			    s->frames[k].off - hot_a->start < hot_a->size) {
				unnamed_before++;
				break;
			}
	}
	print_message("before the attach: %llu samples, %llu of them in %s's code, unnamed\n",
		      (unsigned long long)before, (unsigned long long)unnamed_before, HOT_A);
	assert_true(unnamed_before >= 100);
	count_split(&log, jpid, t_named + 100000000ULL, UINT64_MAX, &a, &b, &all);
	/* the process's time, named: the rest is the JVM's own threads (GC, compiler) */
	it_assert_share_at_least("samples after the attach in Hot.a or Hot.b", a + b, all, 0.7,
				 "the JVM's GC and compiler threads take the rest");
	assert_split(&log, jpid, t_named + 100000000ULL, UINT64_MAX);
	it_log_free(&log);
	free(log_path);
	free(out);
	free(err);
	free(jout);
}

/*
 * Code freed by class unloading is unloaded in the log, from the agent (by address) and
 * from USDT (by method, oldest version first), and no sample names it afterwards.
 */
static void assert_unloads(const char *name, const char *const mode[], uint16_t src)
{
	char *log_path = it_path_dup(name), *out = it_path_dup("unload.out");
	char *argv[24] = { IT_JITRACE, "record" };
	uint8_t *gone;
	uint64_t hot_unloads = 0, late = 0;
	struct it_log log;
	int k = 2;
	size_t i;

	while (*mode)
		argv[k++] = (char *)*mode++;
	argv[k++] = "-F";
	argv[k++] = "999";
	argv[k++] = "-o";
	argv[k++] = log_path;
	argv[k++] = "--";
	argv[k++] = JAVA;
	argv[k++] = src == JT_SRC_AGENT ? agent_opt : "-Xshare:auto";
	argv[k++] = "-XX:+UseSerialGC";
	argv[k++] = "-XX:CompileCommand=quiet";
	argv[k++] = "-XX:CompileCommand=dontinline,Hot::*";
	argv[k++] = "-cp";
	argv[k++] = (char *)it_dir();
	argv[k++] = "Unload";
	assert_true(k < 22);
	argv[k++] = (char *)it_dir();
	argv[k] = NULL;
	assert_int_equal(it_run(argv, out, NULL), 0);
	assert_true(it_wait_for_text(out, "unload done", 0));
	it_log_load(log_path, &log);
	it_check_promises(&log);
	gone = calloc(log.nr_methods + 1, 1);
	assert_non_null(gone);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_call *u = (const void *)log.recs[i];
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		const struct jt_rec_method *m;
		unsigned int f;

		if (u->h.type == JT_REC_UNLOAD) {
			m = it_method(&log, u->id);
			assert_non_null(m);
			if (m->name_len > 4 && !memcmp(m->name, "Hot.", 4)) {
				assert_int_equal(m->src, src);
				hot_unloads++;
			}
			gone[u->id] = 1;
		} else if (s->h.type == JT_REC_SAMPLE) {
			for (f = 0; f < s->nr_frames; f++)
				if (JT_FRAME_KIND(s->frames[f].ref) == JT_FRAME_METHOD &&
				    gone[JT_FRAME_ID(s->frames[f].ref)])
					late++;
		}
	}
	print_message("%s: %llu unloads of Hot's methods, %llu frames named by unloaded code\n",
		      name, (unsigned long long)hot_unloads, (unsigned long long)late);
	assert_true(hot_unloads >= 4);	/* a, b, outer of at least two rounds; more tiers */
	assert_int_equal(late, 0);
	free(gone);
	it_log_free(&log);
	free(log_path);
	free(out);
}

static void test_unloaded_code_is_unloaded_in_the_log(void **state)
{
	static const char *const agent[] = { "--no-usdt", NULL };
	static const char *const usdt[] = { "--no-agent", NULL };

	(void)state;
	need_java();
	assert_unloads("unload_agent.jtl", agent, JT_SRC_AGENT);
	assert_unloads("unload_usdt.jtl", usdt, JT_SRC_USDT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_names_and_split),
		cmocka_unit_test(test_whole_java_stacks_to_named_native_frames),
		cmocka_unit_test(test_usdt_names_and_split_without_agent),
		cmocka_unit_test(test_agent_counts_calls_exactly),
		cmocka_unit_test(test_usdt_counts_calls_exactly_without_agent),
		cmocka_unit_test(test_late_attach_names_code_compiled_before),
		cmocka_unit_test(test_unloaded_code_is_unloaded_in_the_log),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_hotspot: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
