// SPDX-License-Identifier: GPL-2.0
/*
 * `jitrace record -p` and `-a` on a HotSpot JVM that was running before, with no profiling
 * flags: jitrace attaches it (HotSpot's attach mechanism, in C) for its perf map and follows
 * later code by USDT, so its samples are named and its known split is seen; a JVM with
 * attach disabled is said once and left as it was; --no-attach leaves names off; --jvm-agent
 * loads the JVMTI agent instead. Needs root.
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

#include "jt_events.h"
#include "lib.h"

#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define JAVA JDK "/bin/java"
#define HOT_A "Hot.a(long)"
#define HOT_B "Hot.b(long)"

static int group_setup(void **state)
{
	char *javac[] = { JDK "/bin/javac", "-d", (char *)it_dir(),
			  "tests/runtimes/java/Hot.java", NULL };

	(void)state;
	if (access(JAVA, X_OK))
		return 0;	/* each test skips, saying why */
	if (it_run(javac, NULL, NULL)) {
		fprintf(stderr, "itest_jvmattach: javac failed\n");
		return -1;
	}
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
 * Hot for secs seconds with no profiling flag (only what keeps a() and b() apart, and
 * extra), waited for until it has run a second and two more: its hot code compiled long
 * before recording starts.
 */
static pid_t start_hot(const char *out, const char *extra, const char *secs)
{
	char *argv[] = { JAVA, "-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,Hot::*",
			 "-cp", (char *)it_dir(), "Hot", (char *)secs, NULL, NULL };
	pid_t pid;

	if (extra) {	/* before the class name */
		memmove(&argv[4], &argv[3], 5 * sizeof(argv[0]));
		argv[3] = (char *)extra;
	}
	pid = it_spawn(argv, out, NULL);
	assert_true(it_wait_for_text(out, "hot ready", 30000));
	sleep(2);
	return pid;
}

/*
 * The method a late record names frame f of sample s by (JT_REC_LATE: a map line read after
 * samples met its code), or NULL.
 */
static const struct jt_rec_method *late_method(const struct it_log *log,
					       const struct jt_rec_sample *s,
					       const struct jt_frame *f)
{
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_late *l = (const void *)log->recs[i];

		if (l->h.type == JT_REC_LATE && l->pid == s->pid && f->off - l->start < l->size &&
		    s->h.ts >= l->from_ts && s->h.ts <= l->h.ts)
			return it_method(log, l->method);
	}
	return NULL;
}

/* What a pid's samples were in, by their leaf user frame, named late or not. */
struct leafs {
	uint64_t all, a, b;
	uint64_t named;		/* a method (JIT code) or a symbol (native code) */
	uint64_t late;		/* of them, methods named by a later map line */
	uint64_t java_jit;	/* JIT code with no name: "[java jit]" */
};

static void count_leafs(const struct it_log *log, uint32_t pid, struct leafs *l)
{
	const struct jt_rec_method *m;
	char name[512];
	size_t i;
	unsigned int k;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_frame *f = NULL;

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		l->all++;
		for (k = 0; k < s->nr_frames && !f; k++)
			if (!it_frame_is_kernel(log, &s->frames[k]))
				f = &s->frames[k];
		if (!f)
			continue;
		m = NULL;
		switch (JT_FRAME_KIND(f->ref)) {
		case JT_FRAME_METHOD:
			m = it_method(log, JT_FRAME_ID(f->ref));
			/* fall through */
		case JT_FRAME_SYMBOL:
			l->named++;
			break;
		case JT_FRAME_USER:
			m = late_method(log, s, f);
			l->named += !!m;
			l->late += !!m;
			if (!m && !it_frame_name(log, f, name, sizeof(name)) &&
			    !strcmp(name, "[java jit]"))
				l->java_jit++;
			break;
		}
		l->a += it_name_is(m, HOT_A);
		l->b += it_name_is(m, HOT_B);
	}
	print_message("pid %u: %llu samples: %llu named (%llu of them late; %llu in %s, %llu in "
		      "%s), %llu in [java jit]\n", pid, (unsigned long long)l->all,
		      (unsigned long long)l->named, (unsigned long long)l->late,
		      (unsigned long long)l->a, HOT_A, (unsigned long long)l->b, HOT_B,
		      (unsigned long long)l->java_jit);
}

/* The known split, and at least 90% of the JVM's samples named. */
static void assert_named_and_split(const struct it_log *log, uint32_t pid)
{
	struct leafs l;
	char label[128];

	count_leafs(log, pid, &l);
	snprintf(label, sizeof(label), "pid %u: samples named", pid);
	it_assert_share_at_least(label, l.named, l.all, 0.9,
				 "the acceptance's floor (99% seen)");
	snprintf(label, sizeof(label), "pid %u: leaf samples in %s of %s and %s (work done 75%%)",
		 pid, HOT_A, HOT_A, HOT_B);
	/* the loop around the calls, inlined into its caller: 74-76% seen in itest_hotspot */
	it_assert_share_near(label, l.a, l.a + l.b, 0.75, 0.02);
}

/* Record as argv says (its stderr to err), the JVM out running meanwhile, and load its log. */
static void record(char *const argv[], const char *err, const char *log_path, struct it_log *log)
{
	assert_int_equal(it_run(argv, NULL, err), 0);
	it_log_load(log_path, log);
	it_check_promises(log);
	assert_int_equal(it_drops_total(log), 0);
}

static void test_pid_names_a_jvm_running_with_no_flags(void **state)
{
	char *out = it_path_dup("p.out"), *err = it_path_dup("p.err"), *log_path =
		it_path_dup("p.jtl"), *text;
	char pid_arg[16];
	char *argv[] = { IT_JITRACE, "record", "-p", pid_arg, "-F", "999", "-d", "4", "-o",
			 log_path, NULL };
	struct it_log log;
	pid_t jpid;

	(void)state;
	need_java();
	jpid = start_hot(out, NULL, "12");
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)jpid);
	record(argv, err, log_path, &log);
	text = it_slurp(err);
	print_message("%s", text);
	assert_non_null(strstr(text, "1 JVM wrote its perf map (Compiler.perfmap) in "));
	assert_null(strstr(text, "not attached"));
	assert_named_and_split(&log, jpid);
	it_log_free(&log);
	assert_int_equal(it_wait(jpid), 0);
	free(text);
	free(out);
	free(err);
	free(log_path);
}

static void test_all_names_a_jvm_running_with_no_flags(void **state)
{
	char *out = it_path_dup("a.out"), *err = it_path_dup("a.err"), *log_path =
		it_path_dup("a.jtl"), *text;
	char *argv[] = { IT_JITRACE, "record", "-a", "-F", "999", "-d", "4", "-o", log_path, NULL };
	struct it_log log;
	pid_t jpid;

	(void)state;
	need_java();
	jpid = start_hot(out, NULL, "12");
	record(argv, err, log_path, &log);
	text = it_slurp(err);
	print_message("%s", text);
	/* other JVMs of the host may be there too: this one is among those that wrote */
	assert_non_null(strstr(text, "wrote"));
	assert_named_and_split(&log, jpid);
	it_log_free(&log);
	assert_int_equal(it_wait(jpid), 0);
	free(text);
	free(out);
	free(err);
	free(log_path);
}

static void test_jvm_agent_is_loaded_only_when_asked(void **state)
{
	char *out = it_path_dup("g.out"), *err = it_path_dup("g.err"), *log_path =
		it_path_dup("g.jtl"), *text;
	char pid_arg[16];
	char *argv[] = { IT_JITRACE, "record", "--jvm-agent", "-p", pid_arg, "-F", "999", "-d",
			 "4", "-o", log_path, NULL };
	uint64_t from_agent = 0;
	struct it_log log;
	pid_t jpid;
	size_t i;

	(void)state;
	need_java();
	jpid = start_hot(out, NULL, "12");
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)jpid);
	record(argv, err, log_path, &log);
	text = it_slurp(err);
	print_message("%s", text);
	assert_non_null(strstr(text, "libjitrace-jvmti.so loaded into 1 JVM in "));
	for (i = 1; i < log.nr_methods; i++)
		from_agent += log.methods[i] && log.methods[i]->pid == (uint32_t)jpid &&
			      log.methods[i]->src == JT_SRC_AGENT &&
			      (it_name_is(log.methods[i], HOT_A) || it_name_is(log.methods[i], HOT_B));
	assert_true(from_agent >= 2);	/* its replay of what was compiled before */
	assert_named_and_split(&log, jpid);
	it_log_free(&log);
	assert_int_equal(it_wait(jpid), 0);
	free(text);
	free(out);
	free(err);
	free(log_path);
}

/* The number of times needle is in hay. */
static int occurrences(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

static void test_jvm_with_attach_disabled_is_said_once_and_left_alone(void **state)
{
	char *out = it_path_dup("d_ok.out"), *dout = it_path_dup("d_off.out");
	char *err = it_path_dup("d.err"), *log_path = it_path_dup("d.jtl"), *text, *dtext;
	char pids[40], want[160];
	char *argv[] = { IT_JITRACE, "record", "-p", pids, "-F", "999", "-d", "4", "-o",
			 log_path, NULL };
	struct it_log log;
	struct leafs l;
	pid_t jpid, dpid;

	(void)state;
	need_java();
	dpid = start_hot(dout, "-XX:+DisableAttachMechanism", "10");
	jpid = start_hot(out, NULL, "8");
	snprintf(pids, sizeof(pids), "%d,%d", (int)jpid, (int)dpid);
	record(argv, err, log_path, &log);
	text = it_slurp(err);
	print_message("%s", text);
	snprintf(want, sizeof(want), "pid %d: JVM not attached: it was started with "
		 "-XX:+DisableAttachMechanism; its JIT frames stay [java jit]", (int)dpid);
	assert_int_equal(occurrences(text, want), 1);
	assert_int_equal(occurrences(text, "not attached"), 1);
	assert_non_null(strstr(text, "1 JVM wrote its perf map"));
	/* the other JVM is named as if alone */
	assert_named_and_split(&log, jpid);
	/* this one's code stays unnamed JIT code, counted as such */
	count_leafs(&log, dpid, &l);
	it_assert_share_at_least("samples of the JVM with attach disabled in [java jit]",
				 l.java_jit, l.all, 0.9, "its hot code was compiled before");
	it_log_free(&log);
	assert_int_equal(it_wait(jpid), 0);
	assert_int_equal(it_wait(dpid), 0);
	/* never signalled: no thread dump in its output, and it ran to its end */
	dtext = it_slurp(dout);
	assert_null(strstr(dtext, "Full thread dump"));
	assert_non_null(strstr(dtext, "hot done"));
	free(dtext);
	free(text);
	free(out);
	free(dout);
	free(err);
	free(log_path);
}

static void test_no_attach_leaves_a_running_jvm_unnamed(void **state)
{
	char *out = it_path_dup("n.out"), *err = it_path_dup("n.err"), *log_path =
		it_path_dup("n.jtl"), *text;
	char pid_arg[16];
	char *argv[] = { IT_JITRACE, "record", "--no-attach", "-p", pid_arg, "-F", "999", "-d",
			 "3", "-o", log_path, NULL };
	struct it_log log;
	struct leafs l;
	pid_t jpid;

	(void)state;
	need_java();
	jpid = start_hot(out, NULL, "10");
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)jpid);
	record(argv, err, log_path, &log);
	text = it_slurp(err);
	assert_null(strstr(text, "JVM"));
	/* as before attaching existed: its hot code, compiled before, has no name */
	count_leafs(&log, jpid, &l);
	it_assert_share_at_least("samples of a JVM not attached in [java jit]", l.java_jit,
				 l.all, 0.9, "its hot code was compiled before (99.6% seen)");
	it_log_free(&log);
	assert_int_equal(it_wait(jpid), 0);
	free(text);
	free(out);
	free(err);
	free(log_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid_names_a_jvm_running_with_no_flags),
		cmocka_unit_test(test_all_names_a_jvm_running_with_no_flags),
		cmocka_unit_test(test_jvm_with_attach_disabled_is_said_once_and_left_alone),
		cmocka_unit_test(test_no_attach_leaves_a_running_jvm_unnamed),
		cmocka_unit_test(test_jvm_agent_is_loaded_only_when_asked),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_jvmattach: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
