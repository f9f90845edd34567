// SPDX-License-Identifier: GPL-2.0
/*
 * `jitrace record -p` and `-a` on a HotSpot JVM that was running before, with no profiling
 * flags: jitrace attaches it (HotSpot's attach mechanism, in C) for its perf map and follows
 * later code by USDT, so its samples are named and its known split is seen; a JVM with
 * attach disabled is said once and left as it was; --no-attach leaves names off; --jvm-agent
 * loads the JVMTI agent instead; the perf map file an attach made is removed when no session
 * needs it any more (after SIGKILL too), one that was there is kept. Needs root.
 */
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* One test's JVM, its recording and what came of it. */
struct rec {
	char *out, *err, *log_path;	/* the JVM's output, record's stderr, the log */
	char *text;			/* record's stderr */
	char pids[40];			/* -p's argument */
	struct it_log log;
	pid_t jpid;
};

/*
 * Start Hot for secs seconds, then `jitrace record` with args (NULL-terminated; "PIDS" stands
 * for the JVM's pid, after before_pid if given), -F 999 and -o; load its log, which keeps
 * the log's promises and lost nothing.
 */
static void rec_run(struct rec *r, const char *tag, const char *secs, const char *before_pid,
		    const char *const *args)
{
	char name[32], *argv[24] = { IT_JITRACE, "record", "-F", "999" };
	int n = 4;

	memset(r, 0, sizeof(*r));
	snprintf(name, sizeof(name), "%s.out", tag);
	r->out = it_path_dup(name);
	snprintf(name, sizeof(name), "%s.err", tag);
	r->err = it_path_dup(name);
	snprintf(name, sizeof(name), "%s.jtl", tag);
	r->log_path = it_path_dup(name);
	r->jpid = start_hot(r->out, NULL, secs);
	snprintf(r->pids, sizeof(r->pids), "%s%d", before_pid ?: "", (int)r->jpid);
	for (; *args; args++)
		argv[n++] = strcmp(*args, "PIDS") ? (char *)*args : r->pids;
	argv[n++] = "-o";
	argv[n++] = r->log_path;
	argv[n] = NULL;
	assert_int_equal(it_run(argv, NULL, r->err), 0);
	r->text = it_slurp(r->err);
	print_message("%s", r->text);
	it_log_load(r->log_path, &r->log);
	it_check_promises(&r->log);
	assert_int_equal(it_drops_total(&r->log), 0);
}

/* The JVM ran to its end; everything freed. */
static void rec_end(struct rec *r)
{
	it_log_free(&r->log);
	assert_int_equal(it_wait(r->jpid), 0);
	free(r->text);
	free(r->out);
	free(r->err);
	free(r->log_path);
}

static void test_pid_names_a_jvm_running_with_no_flags(void **state)
{
	static const char *const args[] = { "-p", "PIDS", "-d", "4", NULL };
	struct rec r;

	(void)state;
	need_java();
	rec_run(&r, "p", "12", NULL, args);
	assert_non_null(strstr(r.text, "1 JVM wrote its perf map (Compiler.perfmap) in "));
	assert_null(strstr(r.text, "not attached"));
	assert_named_and_split(&r.log, r.jpid);
	rec_end(&r);
}

static void test_all_names_a_jvm_running_with_no_flags(void **state)
{
	static const char *const args[] = { "-a", "-d", "4", NULL };
	struct rec r;

	(void)state;
	need_java();
	rec_run(&r, "a", "12", NULL, args);
	/* other JVMs of the host may be there too: this one is among those that wrote */
	assert_non_null(strstr(r.text, "wrote"));
	assert_named_and_split(&r.log, r.jpid);
	rec_end(&r);
}

static void test_jvm_agent_is_loaded_only_when_asked(void **state)
{
	static const char *const args[] = { "--jvm-agent", "-p", "PIDS", "-d", "4", NULL };
	uint64_t from_agent = 0;
	struct rec r;
	size_t i;

	(void)state;
	need_java();
	rec_run(&r, "g", "12", NULL, args);
	assert_non_null(strstr(r.text, "libjitrace-jvmti.so loaded into 1 JVM in "));
	for (i = 1; i < r.log.nr_methods; i++) {
		const struct jt_rec_method *m = r.log.methods[i];

		from_agent += m && m->pid == (uint32_t)r.jpid && m->src == JT_SRC_AGENT &&
			      (it_name_is(m, HOT_A) || it_name_is(m, HOT_B));
	}
	assert_true(from_agent >= 2);	/* its replay of what was compiled before */
	assert_named_and_split(&r.log, r.jpid);
	rec_end(&r);
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
	static const char *const args[] = { "-p", "PIDS", "-d", "4", NULL };
	char *dout = it_path_dup("d_off.out"), *dtext, want[160], before[24];
	struct leafs l;
	struct rec r;
	pid_t dpid;

	(void)state;
	need_java();
	dpid = start_hot(dout, "-XX:+DisableAttachMechanism", "10");
	snprintf(before, sizeof(before), "%d,", (int)dpid);
	rec_run(&r, "d", "8", before, args);
	snprintf(want, sizeof(want), "pid %d: JVM not attached: it was started with "
		 "-XX:+DisableAttachMechanism; its JIT frames stay [java jit]", (int)dpid);
	assert_int_equal(occurrences(r.text, want), 1);
	assert_int_equal(occurrences(r.text, "not attached"), 1);
	assert_non_null(strstr(r.text, "1 JVM wrote its perf map"));
	/* the other JVM is named as if alone */
	assert_named_and_split(&r.log, r.jpid);
	/* this one's code stays unnamed JIT code, counted as such */
	count_leafs(&r.log, dpid, &l);
	it_assert_share_at_least("samples of the JVM with attach disabled in [java jit]",
				 l.java_jit, l.all, 0.9, "its hot code was compiled before");
	rec_end(&r);
	assert_int_equal(it_wait(dpid), 0);
	/* never signalled: no thread dump in its output, and it ran to its end */
	dtext = it_slurp(dout);
	assert_null(strstr(dtext, "Full thread dump"));
	assert_non_null(strstr(dtext, "hot done"));
	free(dtext);
	free(dout);
}

static void test_no_attach_leaves_a_running_jvm_unnamed(void **state)
{
	static const char *const args[] = { "--no-attach", "-p", "PIDS", "-d", "3", NULL };
	struct leafs l;
	struct rec r;

	(void)state;
	need_java();
	rec_run(&r, "n", "10", NULL, args);
	assert_null(strstr(r.text, "JVM"));
	/* as before attaching existed: its hot code, compiled before, has no name */
	count_leafs(&r.log, r.jpid, &l);
	it_assert_share_at_least("samples of a JVM not attached in [java jit]", l.java_jit,
				 l.all, 0.9, "its hot code was compiled before (99.6% seen)");
	rec_end(&r);
}

/* Whether the JVM pid (in jitrace's namespace, as here) has a perf map in /tmp. */
static bool map_there(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	return !lstat(path, &st);
}

/* A JVM for a map test: Hot for secs seconds, with no map in /tmp (an earlier process's of
 * the same pid removed), its pid in pid_s. */
static pid_t map_jvm(const char *tag, const char *secs, char *pid_s, size_t cap)
{
	char name[32], path[64], *out;
	pid_t pid;

	snprintf(name, sizeof(name), "%s.out", tag);
	out = it_path_dup(name);
	pid = start_hot(out, NULL, secs);
	free(out);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	snprintf(pid_s, cap, "%d", (int)pid);
	return pid;
}

/* `record -p PID -d secs` started, and waited for until the JVM wrote its map. */
static pid_t map_record(const char *tag, const char *pid_s, const char *secs)
{
	char name[32], *err, *log_path;
	char *argv[] = { IT_JITRACE, "record", "-p", (char *)pid_s, "-d", (char *)secs, "-F",
			 "99", "-o", NULL, NULL };
	pid_t rpid;

	snprintf(name, sizeof(name), "%s.jtl", tag);
	log_path = it_path_dup(name);
	snprintf(name, sizeof(name), "%s.err", tag);
	err = it_path_dup(name);
	argv[9] = log_path;
	rpid = it_spawn(argv, NULL, err);
	assert_true(it_wait_for_text(err, "1 JVM wrote its perf map", 20000));
	free(err);
	free(log_path);
	return rpid;
}

static void test_map_the_attach_made_is_removed_at_the_end(void **state)
{
	char pid_s[16];
	pid_t pid, rpid;

	(void)state;
	need_java();
	pid = map_jvm("m_end", "10", pid_s, sizeof(pid_s));
	assert_false(map_there(pid));
	rpid = map_record("m_end", pid_s, "2");
	assert_true(map_there(pid));	/* written by the attach while recording */
	assert_int_equal(it_wait(rpid), 0);
	assert_false(map_there(pid));
	assert_int_equal(it_shares_left("jvm", pid), 0);
	assert_int_equal(it_wait(pid), 0);
}

static void test_map_the_attach_made_is_removed_after_sigkill(void **state)
{
	char pid_s[16];
	pid_t pid, rpid;

	(void)state;
	need_java();
	pid = map_jvm("m_kill", "10", pid_s, sizeof(pid_s));
	rpid = map_record("m_kill", pid_s, "30");
	assert_true(map_there(pid));
	assert_int_equal(kill(rpid, SIGKILL), 0);
	assert_int_equal(it_wait(rpid), 128 + SIGKILL);
	sleep(1);
	assert_false(map_there(pid));	/* the guard, left alone, removed it */
	assert_int_equal(it_shares_left("jvm", pid), 0);
	assert_int_equal(it_wait(pid), 0);
}

/* Two sessions on one JVM, overlapping: the first to end leaves the map, the last removes it. */
static void test_map_is_kept_for_an_overlapping_session(void **state)
{
	char pid_s[16];
	pid_t pid, apid, bpid;

	(void)state;
	need_java();
	pid = map_jvm("m_two", "14", pid_s, sizeof(pid_s));
	apid = map_record("m_two_a", pid_s, "3");
	bpid = map_record("m_two_b", pid_s, "7");
	assert_int_equal(it_wait(apid), 0);
	assert_true(map_there(pid));	/* the second session still needs it */
	assert_int_equal(it_shares_left("jvm", pid), 1);
	assert_int_equal(it_wait(bpid), 0);
	assert_false(map_there(pid));
	assert_int_equal(it_shares_left("jvm", pid), 0);
	assert_int_equal(it_wait(pid), 0);
}

/* A map written before any session (jcmd Compiler.perfmap by hand) is the JVM's: kept. */
static void test_map_that_was_there_is_kept(void **state)
{
	char pid_s[16], path[64], *jout = it_path_dup("m_kept.jcmd");
	char *jcmd[] = { JDK "/bin/jcmd", pid_s, "Compiler.perfmap", NULL };
	pid_t pid, rpid;

	(void)state;
	need_java();
	pid = map_jvm("m_kept", "10", pid_s, sizeof(pid_s));
	assert_int_equal(it_run(jcmd, jout, NULL), 0);
	assert_true(map_there(pid));
	rpid = map_record("m_kept", pid_s, "2");
	assert_int_equal(it_wait(rpid), 0);
	assert_true(map_there(pid));
	assert_int_equal(it_shares_left("jvm", pid), 0);
	assert_int_equal(it_wait(pid), 0);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);	/* the test's own, from jcmd */
	free(jout);
}

/* A map the JVM writes as it exits (-XX:+DumpPerfMapAtExit), while a recording that made
 * one holds it, is the JVM's: kept. */
static void test_map_a_jvm_writes_at_exit_is_kept(void **state)
{
	char pid_s[16], path[64];
	pid_t pid, rpid;

	(void)state;
	need_java();
	/* diagnostic in JDK 17: unlocked first, which start_hot's one extra cannot say */
	setenv("JAVA_TOOL_OPTIONS", "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit", 1);
	pid = map_jvm("m_exit", "4", pid_s, sizeof(pid_s));
	unsetenv("JAVA_TOOL_OPTIONS");
	rpid = map_record("m_exit", pid_s, "8");
	assert_int_equal(it_wait(pid), 0);	/* during the recording */
	assert_int_equal(it_wait(rpid), 0);
	assert_true(map_there(pid));
	assert_int_equal(it_shares_left("jvm", pid), 0);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);	/* the test's own JVM's */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid_names_a_jvm_running_with_no_flags),
		cmocka_unit_test(test_all_names_a_jvm_running_with_no_flags),
		cmocka_unit_test(test_jvm_with_attach_disabled_is_said_once_and_left_alone),
		cmocka_unit_test(test_no_attach_leaves_a_running_jvm_unnamed),
		cmocka_unit_test(test_jvm_agent_is_loaded_only_when_asked),
		cmocka_unit_test(test_map_the_attach_made_is_removed_at_the_end),
		cmocka_unit_test(test_map_the_attach_made_is_removed_after_sigkill),
		cmocka_unit_test(test_map_is_kept_for_an_overlapping_session),
		cmocka_unit_test(test_map_that_was_there_is_kept),
		cmocka_unit_test(test_map_a_jvm_writes_at_exit_is_kept),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_jvmattach: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
