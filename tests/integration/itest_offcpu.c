// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU time (issue 18): record --off-cpu takes each wait of a traced thread with the
 * stack it left the CPU with, named like a sample's, native, JIT or Java; waits under the
 * threshold are summed, not lost; -p keeps every other process out. Needs root.
 */
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

#define WAITS "build/tests/waits"
#define JDK "/usr/lib/jvm/java-17-openjdk-amd64"
#define JAVA JDK "/bin/java"

/* Whether any frame of s is called name. */
static bool stack_has(const struct it_log *log, const struct jt_rec_sample *s, const char *name)
{
	char buf[512];
	unsigned int i;

	for (i = 0; i < s->nr_frames; i++)
		if (it_frame_name(log, &s->frames[i], buf, sizeof(buf)) == 0 && !strcmp(buf, name))
			return true;
	return false;
}

/* The pid whose exec ran a path ending in tail, and when; fails if none did. */
static uint32_t exec_of(const struct it_log *log, const char *tail, uint64_t *ts)
{
	size_t i, n = strlen(tail);

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_exec *e = (const void *)log->recs[i];

		if (e->h.type == JT_REC_EXEC && e->path_len >= n &&
		    !memcmp(e->path + e->path_len - n, tail, n)) {
			*ts = e->h.ts;
			return e->pid;
		}
	}
	fail_msg("no exec of *%s in the log", tail);
	return 0;
}

/* The first thread of pid the log names name (JT_REC_THREAD), 0 if none. */
static uint32_t thread_named(const struct it_log *log, uint32_t pid, const char *name)
{
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_thread *t = (const void *)log->recs[i];

		if (t->h.type == JT_REC_THREAD && t->pid == pid &&
		    !strncmp(t->comm, name, sizeof(t->comm)))
			return t->tid;
	}
	return 0;
}

/*
 * Off-CPU time of pid (thread tid, 0: any) in waits that began at or after from, with a
 * stack: in all (*all), and in those whose stack holds a[i] (into in[i]; a record counts
 * for the first name it holds). Short waits' sums go to *short_ns.
 */
static void wait_split(const struct it_log *log, uint32_t pid, uint32_t tid, uint64_t from,
		       const char *const *a, unsigned int na, uint64_t *in, uint64_t *all,
		       uint64_t *short_ns)
{
	unsigned int k;
	size_t i;

	*all = 0;
	*short_ns = 0;
	memset(in, 0, na * sizeof(*in));
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_offcpu *o = (const void *)log->recs[i];

		if (o->h.type != JT_REC_OFFCPU || o->smp.pid != pid || (tid && o->smp.tid != tid) ||
		    o->smp.h.ts < from)
			continue;
		if (o->state == JT_OFF_SHORT) {
			assert_int_equal(o->smp.nr_frames, 0);
			*short_ns += o->off_ns;
			continue;
		}
		*all += o->off_ns;
		for (k = 0; k < na; k++)
			if (stack_has(log, &o->smp, a[k])) {
				in[k] += o->off_ns;
				break;
			}
	}
}

/* CPU samples of pid at or after from. */
static uint64_t samples_of(const struct it_log *log, uint32_t pid, uint64_t from)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		n += s->h.type == JT_REC_SAMPLE && s->pid == pid && s->h.ts >= from;
	}
	return n;
}

/*
 * What the program measured: "PREFIX A=NS B=NS" (CLOCK_MONOTONIC around its waits, so with
 * what a busy machine adds before a woken thread runs).
 */
static void measured(const char *out, const char *fmt, uint64_t *a, uint64_t *b)
{
	char *text = it_slurp(out), *line;
	unsigned long long x, y;

	*a = *b = 0;
	for (line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (sscanf(line, fmt, &x, &y) == 2) {
			*a = x;
			*b = y;
		}
	free(text);
	if (!*a || !*b)
		fail_msg("%s: no line like \"%s\"", out, fmt);
}

/*
 * jitrace's split of the off-CPU time between two functions, a of a + b, is the program's
 * own (ta of ta + tb) within 5 points (the bound), and each function's time within
 * 5% of what the program measured: waits are timed, not sampled, so there is no chance
 * error; what the program adds is the CPU its calls take.
 */
/*
 * Waits a and b (ns) against what the program measured of them, ta and tb: each within 5%,
 * less what unseen returns lost (each at most one wait, of at most longest ns; see the
 * README), and so their split.
 */
static void assert_time_split(const char *what, uint64_t a, uint64_t b, uint64_t ta,
			      uint64_t tb, uint64_t unpaired, uint64_t longest)
{
	double got = a + b ? (double)a / (a + b) : 0, want = (double)ta / (ta + tb);
	double lost = (double)unpaired * longest, slack = 0.05 + lost / (ta + tb);

	print_message("%s: %.1f ms of %.1f ms = %.1f%%; the program measured %.1f ms of %.1f ms "
		      "= %.1f%%; unseen returns %llu\n", what, a / 1e6, (a + b) / 1e6, 100 * got,
		      ta / 1e6, (ta + tb) / 1e6, 100 * want, (unsigned long long)unpaired);
	if (got < want - slack || got > want + slack)
		fail_msg("%s: %.1f%%, want %.1f%% +- %.1f", what, 100 * got, 100 * want,
			 100 * slack);
	if (a < 0.95 * ta - lost || a > 1.05 * ta || b < 0.95 * tb - lost || b > 1.05 * tb)
		fail_msg("%s: %.1f and %.1f ms, the program measured %.1f and %.1f ms", what,
			 a / 1e6, b / 1e6, ta / 1e6, tb / 1e6);
}

/*
 * A native program whose wait_long() and wait_short() sleep 30 and 10 ms in turn: its
 * waiting splits 3:1 between them, every wait is named by one of them (the leaf is in the
 * C library, built without frame pointers: its caller is found by its unwind tables), and
 * it is on the CPU next to never.
 */
static void test_native_waits_split_and_named(void **state)
{
	char *log_path = it_path_dup("waits.jtl"), *rep = it_path_dup("waits.txt");
	char *out = it_path_dup("waits.out"), rounds[16];
	char *argv[] = { IT_JITRACE, "record", "--off-cpu", "-F", "999", "-f", "-o", log_path,
			 "--", WAITS, it_scaled(rounds, sizeof(rounds), 40), NULL };
	char *rargv[] = { IT_JITRACE, "report", log_path, NULL };
	static const char *const fns[] = { "wait_long", "wait_short" };
	uint64_t in[2], all, short_ns, from, samples, t_long, t_short;
	struct it_log log;
	uint32_t pid;
	char *text;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	measured(out, "waited wait_long=%llu wait_short=%llu", &t_long, &t_short);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_true(log.hdr.flags & JT_LOG_F_OFFCPU);
	pid = exec_of(&log, WAITS, &from);
	wait_split(&log, pid, 0, from, fns, 2, in, &all, &short_ns);
	/* what the program waited, but for what is lost and counted (below): each unseen
	 * return at most one wait, wait_long's 30 ms */
	assert_true(all + it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED) * 30000000.0 >=
		    0.95 * (t_long + t_short));
	/* its longest wait: wait_long's 30 ms */
	assert_time_split("waits in wait_long of wait_long and wait_short", in[0], in[1], t_long,
			  t_short, it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED), 30000000);
	print_message("named %.1f ms of %.1f ms\n", (in[0] + in[1]) / 1e6, all / 1e6);
	assert_true(in[0] + in[1] >= all * 0.99);
	samples = samples_of(&log, pid, from);
	print_message("%llu CPU samples at 999 Hz: %.1f ms on the CPU\n",
		      (unsigned long long)samples, samples / 999.0 * 1e3);
	/* on the CPU for less than 2% of the time it waited */
	assert_true(samples / 999.0 < 0.02 * all / 1e9);
	/*
	 * Nothing lost but, rarely, a return to the CPU the program did not see (about one in
	 * a few thousand switches, counted as offcpu_unpaired; see the README): at most 2 of
	 * these 80 waits, which the 5% bounds above take.
	 */
	print_message("offcpu_unpaired %llu\n",
		      (unsigned long long)it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED));
	assert_true(it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED) <= 2);
	assert_int_equal(it_drops_total(&log) - it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED), 0);
	assert_int_equal(it_run(rargv, rep, NULL), 0);
	text = it_slurp(rep);
	assert_non_null(strstr(text, "wait_long"));
	assert_non_null(strstr(text, "wait_short"));
	free(text);
	it_log_free(&log);
	free(out);
	free(rep);
	free(log_path);
}

/*
 * With -g, a wait's kernel frames (from the scheduler down to the system call's entry)
 * come first and its user frames after them, whole: the user stack is taken when the call
 * returns and put after the kernel frames taken as the thread left.
 */
static void test_kernel_stack_then_user_stack(void **state)
{
	char *log_path = it_path_dup("waits-g.jtl");
	char *argv[] = { IT_JITRACE, "record", "--off-cpu", "-g", "-f", "-o", log_path, "--",
			 WAITS, "10", NULL };
	uint64_t from, whole = 0, waits = 0, unpaired;
	char name[256];
	struct it_log log;
	uint32_t pid;
	size_t i;

	(void)state;
	assert_int_equal(it_run(argv, NULL, NULL), 0);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	pid = exec_of(&log, WAITS, &from);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_offcpu *o = (const void *)log.recs[i];
		unsigned int k, first_user;

		if (o->h.type != JT_REC_OFFCPU || o->smp.pid != pid || o->smp.h.ts < from ||
		    !stack_has(&log, &o->smp, "wait_long"))
			continue;
		waits++;
		for (k = 0; k < o->smp.nr_frames && it_frame_is_kernel(&log, &o->smp.frames[k]); k++)
			;
		first_user = k;
		for (; k < o->smp.nr_frames && !it_frame_is_kernel(&log, &o->smp.frames[k]); k++)
			;
		assert_int_equal(k, o->smp.nr_frames);	/* no kernel frame among the user's */
		assert_true(first_user > 0);
		it_frame_name(&log, &o->smp.frames[0], name, sizeof(name));
		assert_string_equal(name, "__schedule");	/* not the tracing above it */
		it_frame_name(&log, &o->smp.frames[first_user], name, sizeof(name));
		whole += !strcmp(name, "clock_nanosleep") &&
			 stack_has(&log, &o->smp, "main");
	}
	unpaired = it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED);
	print_message("%llu waits in wait_long, %llu with the user stack whole; "
		      "offcpu_unpaired %llu\n", (unsigned long long)waits,
		      (unsigned long long)whole, (unsigned long long)unpaired);
	/* each of its 10 waits recorded, or counted unseen (a return the program did not
	 * see: about one switch in a few thousand, see the README) */
	assert_true(waits <= 10 && waits + unpaired >= 10);
	assert_true(unpaired <= 2);
	assert_int_equal(whole, waits);
	it_log_free(&log);
	free(log_path);
}

/* A toy JIT method that blocks (calls a sleep it was handed): its wait is its JIT name's. */
static void test_toy_jit_waits_named(void **state)
{
	char *log_path = it_path_dup("block.jtl"), *out = it_path_dup("block.out");
	char *argv[] = { IT_JITRACE, "record", "--off-cpu", "-f", "-o", log_path, "--",
			 IT_TOYJIT, "block", "--ms", "1200", NULL };
	static const char *const fns[] = { "wait_a", "wait_b" };
	uint64_t in[2], all, short_ns, t_a, t_b;
	struct it_toy toy;
	struct it_log log;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	it_toy_parse(out, &toy);
	measured(out, "blocked wait_a=%llu wait_b=%llu", &t_a, &t_b);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	wait_split(&log, toy.pid, 0, 0, fns, 2, in, &all, &short_ns);
	assert_true(in[0] + in[1] >= 1000000000ULL);	/* 30 rounds of 40 ms */
	/* its longest wait: wait_a's 30 ms; unseen returns are rare (see the native test) */
	assert_true(it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED) <= 2);
	assert_time_split("waits in wait_a of wait_a and wait_b", in[0], in[1], t_a, t_b,
			  it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED), 30000000);
	it_log_free(&log);
	free(out);
	free(log_path);
}

/*
 * A JVM thread blocked on a monitor another thread holds: its waiting is named by the Java
 * method that blocked, through the JVM's and the C library's frames (with the agent and
 * -XX:+PreserveFramePointer), in the log and in report's off-CPU table.
 */
static void test_java_monitor_wait_named(void **state)
{
	char *log_path = it_path_dup("monitor.jtl"), *out = it_path_dup("monitor.out");
	char *rep = it_path_dup("monitor.txt"), agent[4200], *text;
	char *javac[] = { JDK "/bin/javac", "-d", (char *)it_dir(),
			  "tests/runtimes/java/Monitor.java", NULL };
	char *rargv[] = { IT_JITRACE, "report", log_path, NULL };
	static const char *const fns[] = { "Monitor.contend(long)" };
	char so[4096];
	uint64_t in[1], all, short_ns;
	struct it_log log;
	uint32_t pid, tid;

	(void)state;
	if (access(JAVA, X_OK)) {
		print_message("skipped: %s is not installed\n", JAVA);
		skip();
	}
	assert_non_null(realpath("build/libjitrace-jvmti.so", so));
	snprintf(agent, sizeof(agent), "-agentpath:%s", so);
	assert_int_equal(it_run(javac, NULL, NULL), 0);
	{
		char *argv[] = { IT_JITRACE, "record", "--off-cpu", "-f", "-o", log_path, "--",
				 JAVA, agent, "-XX:+PreserveFramePointer",
				 "-XX:CompileCommand=quiet",
				 "-XX:CompileCommand=dontinline,Monitor::*", "-cp",
				 (char *)it_dir(), "Monitor", "2", NULL };

		assert_int_equal(it_run(argv, out, NULL), 0);
	}
	assert_true(it_wait_for_text(out, "monitor done", 0));
	it_log_load(log_path, &log);
	it_check_promises(&log);
	pid = exec_of(&log, "/java", &(uint64_t){ 0 });
	tid = thread_named(&log, pid, "waiter");
	assert_true(tid != 0);
	wait_split(&log, pid, tid, 0, fns, 1, in, &all, &short_ns);
	print_message("waiter %u: %.1f ms of %.1f ms waiting in Monitor.contend(long)\n", tid,
		      in[0] / 1e6, all / 1e6);
	assert_true(all >= 1000000000ULL);	/* blocked most of 2 s */
	/* what is not named so: its first waits, before contend was compiled */
	assert_true(in[0] >= 0.9 * all);
	assert_int_equal(it_run(rargv, rep, NULL), 0);
	text = it_slurp(rep);
	assert_non_null(strstr(text, "Monitor.contend(long)"));
	free(text);
	it_log_free(&log);
	free(rep);
	free(out);
	free(log_path);
}

/*
 * Waits under --off-cpu-min are summed per thread, not lost: a program that sleeps 200 and
 * 100 us in turn has all its waiting in short sums, the number of waits exact.
 */
static void test_short_waits_are_summed(void **state)
{
	char *log_path = it_path_dup("short.jtl"), *out = it_path_dup("short.out"), *text, *at;
	char *argv[] = { IT_JITRACE, "record", "--off-cpu-min", "1000", "-f", "-o", log_path,
			 "--", WAITS, "1500", "200", "100", NULL };
	uint64_t from, short_ns = 0, long_ns = 0, waits = 0, wall, unpaired, first = UINT64_MAX;
	long switches = -1;
	struct it_log log;
	uint32_t pid;
	size_t i;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	text = it_slurp(out);
	at = strstr(text, "switches ");
	assert_non_null(at);
	switches = atol(at + 9);
	free(text);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	pid = exec_of(&log, WAITS, &from);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_offcpu *o = (const void *)log.recs[i];

		if (o->h.type != JT_REC_OFFCPU || o->smp.pid != pid)
			continue;
		if (o->state == JT_OFF_SHORT)
			short_ns += o->off_ns;
		else
			long_ns += o->off_ns;
		waits += o->count;
		if (o->smp.h.ts < first)
			first = o->smp.h.ts;
	}
	/* from the first wait's start (its fork: the waits before its exec count too) */
	wall = log.recs[log.n - 1]->ts - first;
	print_message("%llu waits: %.1f ms in short sums, %.1f ms in long waits, %.1f ms wall\n",
		      (unsigned long long)waits, short_ns / 1e6, long_ns / 1e6, wall / 1e6);
	/*
	 * every time the program left the CPU (getrusage: since its fork, up to its last line)
	 * is a wait, or a return the BPF program did not see, counted; give or take two before
	 * it was traced and its exec, and three at its exit
	 */
	unpaired = it_drops_of(&log, JT_DROP_OFFCPU_UNPAIRED);
	print_message("%ld switches; offcpu_unpaired %llu\n", switches,
		      (unsigned long long)unpaired);
	assert_true(switches >= 2900);	/* 3000 sleeps: nearly all leave the CPU */
	assert_true(waits + unpaired + 2 >= (uint64_t)switches &&
		    waits + unpaired <= (uint64_t)switches + 3);
	/* unseen returns are rare: up to 4 in 3,000 switches seen here; at most 1 in 100 */
	assert_true(unpaired * 100 <= (uint64_t)switches);
	/* at least what was asked to sleep, and no more than the time that passed */
	assert_true(short_ns + long_ns >= 1500 * 300000ULL);
	assert_true(short_ns + long_ns <= wall);
	assert_true(short_ns > long_ns);
	it_log_free(&log);
	free(out);
	free(log_path);
}

/*
 * --off-cpu with -p: another process switching all the while is never recorded, not even
 * its short waits.
 */
static void test_pid_filter_keeps_others_out(void **state)
{
	char *log_path = it_path_dup("pid.jtl"), pidarg[16];
	char *other[] = { WAITS, "400", "1000", "1000", NULL };
	char *traced[] = { WAITS, "400", "3000", "1000", NULL };
	uint64_t ours = 0, theirs = 0;
	pid_t o, t;
	struct it_log log;
	size_t i;

	(void)state;
	o = it_spawn(other, NULL, NULL);
	t = it_spawn(traced, NULL, NULL);
	assert_true(o > 0 && t > 0);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)t);
	{
		char *argv[] = { IT_JITRACE, "record", "--off-cpu", "-p", pidarg, "-d", "1", "-f",
				 "-o", log_path, NULL };

		assert_int_equal(it_run(argv, NULL, NULL), 0);
	}
	kill(o, SIGKILL);
	kill(t, SIGKILL);
	it_wait(o);
	it_wait(t);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_offcpu *r = (const void *)log.recs[i];

		if (r->h.type != JT_REC_OFFCPU)
			continue;
		ours += r->smp.pid == (uint32_t)t;
		theirs += r->smp.pid != (uint32_t)t;
	}
	print_message("%llu records of the traced process, %llu of others\n",
		      (unsigned long long)ours, (unsigned long long)theirs);
	assert_true(ours >= 100);	/* 1 s of 4 ms rounds: two waits each */
	assert_int_equal(theirs, 0);
	it_log_free(&log);
	free(log_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_waits_split_and_named),
		cmocka_unit_test(test_kernel_stack_then_user_stack),
		cmocka_unit_test(test_toy_jit_waits_named),
		cmocka_unit_test(test_java_monitor_wait_named),
		cmocka_unit_test(test_short_waits_are_summed),
		cmocka_unit_test(test_pid_filter_keeps_others_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
