// SPDX-License-Identifier: GPL-2.0
/*
 * A JVM without -XX:+PreserveFramePointer walked whole by record --unwind cfi (issues 27 and
 * 28): its compiled frames and stubs stepped by their HotSpot frame sizes, its interpreted
 * frames by the interpreter's layout, read through vmStructs from outside; interpreted frames
 * named as the methods they run, in samples and in off-CPU stacks. With the agent from the
 * start and with HotSpot's USDT probes alone. Needs root and openjdk-17.
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
#define BURN_A "Naps.burnA(long)"
#define SLOW "Naps.slow(long)"
#define NAP "Naps.nap(int, long)"
#define MAIN "Naps.main(java.lang.String[])"

static char agent_opt[PATH_MAX + 16];

static int group_setup(void **state)
{
	char *javac[] = { JDK "/bin/javac", "-d", (char *)it_dir(),
			  "tests/runtimes/java/Naps.java", NULL };
	char agent_so[PATH_MAX];

	(void)state;
	if (access(JAVA, X_OK))
		return 0;	/* each test skips, saying why */
	if (!realpath("build/libjitrace-jvmti.so", agent_so)) {
		fprintf(stderr, "itest_hswalk: build/libjitrace-jvmti.so: not built\n");
		return -1;
	}
	snprintf(agent_opt, sizeof(agent_opt), "-agentpath:%s", agent_so);
	if (it_run(javac, NULL, NULL)) {
		fprintf(stderr, "itest_hswalk: javac failed\n");
		return -1;
	}
	return 0;
}

/* The JVM's pid: the process whose method burnA is (one JVM in the log). */
static uint32_t jvm_pid(const struct it_log *log)
{
	size_t i;

	for (i = 1; i < log->nr_methods; i++)
		if (log->methods[i] && it_name_is(log->methods[i], BURN_A))
			return log->methods[i]->pid;
	fail_msg("no method %s in the log", BURN_A);
	return 0;
}

/*
 * Naps under record --unwind cfi (with the agent if agent), no frame pointers in its JIT
 * code; slow() and nap() kept interpreted. The log into log, what jitrace said of the stack
 * copies into *said (it_record_copies).
 */
static void record_naps(bool agent, bool off_cpu, const char *name, struct it_log *log,
			struct it_copies *said)
{
	char *log_path = it_path_dup(name), secs[16];
	char *argv[24];
	int n = 0;

	argv[n++] = IT_JITRACE;
	argv[n++] = "record";
	argv[n++] = "--unwind";
	argv[n++] = "cfi";
	argv[n++] = "-F";
	argv[n++] = "999";
	if (off_cpu)
		argv[n++] = "--off-cpu";
	argv[n++] = "-f";
	argv[n++] = "-o";
	argv[n++] = log_path;
	argv[n++] = "--";
	argv[n++] = JAVA;
	if (agent)
		argv[n++] = agent_opt;
	argv[n++] = "-XX:CompileCommand=quiet";
	argv[n++] = "-XX:CompileCommand=dontinline,Naps::*";
	argv[n++] = "-XX:CompileCommand=exclude,Naps::slow";
	argv[n++] = "-XX:CompileCommand=exclude,Naps::nap";
	argv[n++] = "-cp";
	argv[n++] = (char *)it_dir();
	argv[n++] = "Naps";
	argv[n++] = it_scaled(secs, sizeof(secs), 4);
	argv[n] = NULL;
	it_record_copies(argv, log_path, said);
	it_log_load(log_path, log);
	it_check_promises(log);
	free(log_path);
}

/*
 * At least 95% of burnA's samples (compiled, no frame pointer) reach main through outer, as
 * the issue asks, and most samples leave the kernel's frame-pointer walk out (said: what
 * jitrace said of the copies); the interpreted slow()'s samples are named slow (a method
 * read through vmStructs) and reach main alike.
 */
static void assert_whole_java_stacks(const struct it_log *log, const struct it_copies *said)
{
	static const char *const chain[] = { "Naps.outer(long)", MAIN };
	uint32_t pid = jvm_pid(log);
	uint64_t n, whole;
	size_t i;
	bool vm = false;

	it_count_chains(log, pid, BURN_A, chain, 2, true, &n, &whole);
	print_message("%s samples %llu, reaching main %llu\n", BURN_A, (unsigned long long)n,
		      (unsigned long long)whole);
	assert_true(n >= IT_MIN_SAMPLES);
	it_assert_share_at_least("burnA samples with outer > main above", whole, n, 0.95,
				 "the issue's target");
	it_assert_fp_walk_dropped(said, whole);
	it_count_chains(log, pid, SLOW, chain + 1, 1, true, &n, &whole);
	print_message("%s samples %llu, reaching main %llu\n", SLOW, (unsigned long long)n,
		      (unsigned long long)whole);
	assert_true(n >= 20);
	it_assert_share_at_least("interpreted slow() samples with main above", whole, n, 0.95,
				 "as compiled code's");
	for (i = 1; i < log->nr_methods; i++)
		if (log->methods[i] && it_name_is(log->methods[i], SLOW))
			vm |= log->methods[i]->src == JT_SRC_VMSTRUCTS;
	assert_true(vm);
}

static void need_java(void)
{
	if (access(JAVA, X_OK)) {
		print_message("skipped: %s is not installed\n", JAVA);
		skip();
	}
}

/* HotSpot's USDT probes alone name the compiled code (no agent, no frame pointers). */
static void test_usdt_only_whole_stacks(void **state)
{
	struct it_copies said;
	struct it_log log;

	(void)state;
	need_java();
	record_naps(false, false, "hswalk-usdt.jtl", &log, &said);
	assert_whole_java_stacks(&log, &said);
	it_log_free(&log);
}

/* The agent from the start names the code and the stubs (no frame pointers either). */
static void test_agent_whole_stacks(void **state)
{
	struct it_copies said;
	struct it_log log;

	(void)state;
	need_java();
	record_naps(true, false, "hswalk-agent.jtl", &log, &said);
	assert_whole_java_stacks(&log, &said);
	it_log_free(&log);
}

/*
 * --off-cpu: the napper's waits in Thread.sleep leave the CPU from interpreted frames: at
 * least 90% of them read nap (three times and more) under napper, named through vmStructs.
 */
static void test_offcpu_interpreted_named(void **state)
{
	static const char *const chain[] = { "JVM_Sleep", "java.lang.Thread.sleep(long)", NAP,
					     NAP, NAP, NAP, "Naps.napper()" };
	struct it_copies said;
	struct it_log log;
	uint64_t n, whole, all;
	uint32_t pid;

	(void)state;
	need_java();
	record_naps(false, true, "hswalk-offcpu.jtl", &log, &said);
	pid = jvm_pid(&log);
	it_count_chains_of(&log, JT_REC_OFFCPU, pid, "*", chain, 1, false, &n, &all);
	it_count_chains_of(&log, JT_REC_OFFCPU, pid, "*", chain, 7, false, &n, &whole);
	print_message("waits in JVM_Sleep %llu, under nap x4 < napper %llu\n",
		      (unsigned long long)all, (unsigned long long)whole);
	assert_true(all >= 50);
	it_assert_share_at_least("sleeps of the napper named nap x4 < napper", whole, all, 0.90,
				 "interpreted frames named");
	assert_whole_java_stacks(&log, &said);
	it_log_free(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usdt_only_whole_stacks),
		cmocka_unit_test(test_agent_whole_stacks),
		cmocka_unit_test(test_offcpu_interpreted_named),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
