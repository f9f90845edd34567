// SPDX-License-Identifier: GPL-2.0
/*
 * `jitrace record --calls` through the agents' per-thread buffers (include/jt_callbuf.h):
 * exact counts through nesting, threads that exit and a fork; more threads than the region
 * has slots (the rest through the uprobes); a recording that starts after the process; and
 * the uprobe path kept (--calls-via uprobe). The workload is build/tests/callers.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_callbuf.h"
#include "jt_events.h"
#include "lib.h"

#define CALLERS "build/tests/callers"

/* What callers printed: its pid, its child's, whether each saw its region taken. */
struct run {
	struct it_toy toy;	/* pid and "calls NAME=N" lines */
	pid_t child;
	int taken, child_taken;
};

static void parse(const char *out, struct run *r)
{
	char *text = it_slurp(out), *p;

	memset(r, 0, sizeof(*r));
	it_toy_parse(out, &r->toy);
	r->taken = -1;
	r->child_taken = -1;
	if ((p = strstr(text, "\ntaken ")))
		r->taken = atoi(p + 7);
	if ((p = strstr(text, "child ")))
		sscanf(p, "child %d taken %d", &r->child, &r->child_taken);
	free(text);
}

/*
 * How long a workload waits for jitrace to take its region: 5 s, longer where everything
 * runs slower (JT_TEST_SCALE: a loaded emulated guest took more than 5 s). It stops
 * waiting once taken, so a longer wait costs nothing on a host.
 */
static char *wait_ms(void)
{
	static char buf[24];

	return it_scaled(buf, sizeof(buf), 5000);
}

static uint64_t made(const struct run *r, const char *name)
{
	int i;

	for (i = 0; i < r->toy.nr_calls; i++)
		if (!strcmp(r->toy.names[i], name))
			return r->toy.calls[i];
	fail_msg("callers did not say how many %s calls it made", name);
	return 0;
}

/* Enter and leave records of pid, whatever their method (named or not). */
static uint64_t calls_of(const struct it_log *log, uint32_t pid, uint16_t type)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_call *c = (const void *)log->recs[i];

		n += c->h.type == type && c->pid == pid;
	}
	return n;
}

static void assert_exact(const struct it_log *log, uint32_t pid, const char *name, uint64_t want)
{
	uint64_t in = it_count_calls(log, pid, JT_REC_ENTER, name);
	uint64_t out = it_count_calls(log, pid, JT_REC_LEAVE, name);

	print_message("pid %u %s: %llu entered, %llu left, %llu made\n", pid, name,
		      (unsigned long long)in, (unsigned long long)out, (unsigned long long)want);
	assert_int_equal(in, want);
	assert_int_equal(out, want);
}

/* Threads of pid that entered a method: more than one when the waves ran. */
static int threads_of(const struct it_log *log, uint32_t pid)
{
	uint32_t seen[256];
	int n = 0, k;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_call *c = (const void *)log->recs[i];

		if (c->h.type != JT_REC_ENTER || c->pid != pid)
			continue;
		for (k = 0; k < n && seen[k] != c->tid; k++)
			;
		if (k == n && n < 256)
			seen[n++] = c->tid;
	}
	return n;
}

/*
 * The same program recorded call by call and in summary mode: every method's calls the
 * same in both, and what it made; the summary's log holds no enter or leave at all. The
 * summary's run does not wait for jitrace: it may be gone before its region is read.
 */
static void test_summary_counts_equal_the_per_call_log(void **state)
{
	static const char *const names[] = { "callers_main", "callers_inner", "callers_thread" };
	char *each_path = it_path_dup("each.jtl"), *sum_path = it_path_dup("sum.jtl");
	char *each_out = it_path_dup("each.out"), *sum_out = it_path_dup("sum.out");
	char *each_argv[] = { IT_JITRACE, "record", "--calls", "-F", "0", "-o", each_path, "--",
			      CALLERS, "--wait-taken", wait_ms(), "--pairs", "10000", "--threads",
			      "4", "--waves", "3", "--fork", NULL };
	/* no waiting: summed from the first call (the agent reads what the listener wants),
	 * and the sums of a process gone before its region is read come before its exit */
	char *sum_argv[] = { IT_JITRACE, "record", "--calls-summary", "-F", "0", "-o", sum_path,
			     "--", CALLERS, "--pairs", "10000", "--threads", "4", "--waves", "3",
			     "--fork", NULL };
	struct it_log each, sum;
	struct run re, rs;
	uint64_t n_each, n_sum, incl, excl;
	size_t k;

	(void)state;
	assert_int_equal(it_run(each_argv, each_out, NULL), 0);
	assert_int_equal(it_run(sum_argv, sum_out, NULL), 0);
	parse(each_out, &re);
	parse(sum_out, &rs);
	it_log_load(each_path, &each);
	it_log_load(sum_path, &sum);
	it_check_promises(&sum);
	assert_int_equal(it_drops_total(&sum), 0);
	for (k = 0; k < 3; k++) {
		n_each = it_count_calls(&each, re.toy.pid, JT_REC_ENTER, names[k]);
		n_sum = it_summed_calls(&sum, rs.toy.pid, names[k], &incl, &excl);
		print_message("%s: %llu calls one by one, %llu summed (%llu ns, %llu ns own), "
			      "%llu made\n", names[k], (unsigned long long)n_each,
			      (unsigned long long)n_sum, (unsigned long long)incl,
			      (unsigned long long)excl, (unsigned long long)made(&rs, names[k]));
		assert_int_equal(n_sum, made(&rs, names[k]));
		assert_int_equal(n_sum, n_each);
		assert_true(incl > 0 && excl > 0 && excl <= incl);
	}
	assert_int_equal(it_summed_calls(&sum, rs.child, "callers_child", &incl, &excl),
			 made(&rs, "callers_child"));
	assert_int_equal(calls_of(&sum, rs.toy.pid, JT_REC_ENTER), 0);
	assert_int_equal(calls_of(&sum, rs.toy.pid, JT_REC_LEAVE), 0);
	it_log_free(&each);
	it_log_free(&sum);
	free(each_path);
	free(sum_path);
	free(each_out);
	free(sum_out);
}

/*
 * --calls-min: callers_main's slow calls (3 ms, sleeping before their inner call) are spans,
 * whole and timed; every call is a span or summed, none lost, none one by one besides.
 */
static void test_long_calls_are_logged_alone(void **state)
{
	char *path = it_path_dup("min.jtl"), *out = it_path_dup("min.out");
	char *argv[] = { IT_JITRACE, "record", "--calls-min", "1000", "-F", "0", "-o", path, "--",
			 CALLERS, "--wait-taken", wait_ms(), "--wait-sum", "--pairs", "1000",
			 "--slow", "5", NULL };
	struct it_log log;
	struct run r;
	uint64_t spans = 0, incl, excl, n_main;
	size_t i;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	parse(out, &r);
	assert_int_equal(r.taken, 1);
	it_log_load(path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_span *sp = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		if (sp->h.type != JT_REC_SPAN || sp->pid != (uint32_t)r.toy.pid)
			continue;
		m = it_method(&log, sp->id);
		assert_non_null(m);
		assert_int_equal(m->name_len, strlen("callers_main"));
		assert_memory_equal(m->name, "callers_main", m->name_len);
		/* 1 ms at least, its own time less than that by the inner call */
		assert_true(sp->h.ts - sp->enter_ts >= 1000000);
		assert_true(sp->self_ns <= sp->h.ts - sp->enter_ts);
		spans++;
	}
	n_main = it_summed_calls(&log, r.toy.pid, "callers_main", &incl, &excl);
	print_message("callers_main: %llu spans, %llu summed, %llu made\n",
		      (unsigned long long)spans, (unsigned long long)n_main,
		      (unsigned long long)made(&r, "callers_main"));
	assert_true(spans >= 5);
	assert_int_equal(spans + n_main, made(&r, "callers_main"));
	assert_int_equal(it_summed_calls(&log, r.toy.pid, "callers_inner", &incl, &excl),
			 made(&r, "callers_inner"));
	assert_int_equal(calls_of(&log, r.toy.pid, JT_REC_ENTER), 0);
	it_log_free(&log);
	free(path);
	free(out);
}

static void test_calls_through_buffers_are_exact(void **state)
{
	char *log_path = it_path_dup("buffers.jtl"), *out = it_path_dup("buffers.out");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-F", "0", "-o", log_path, "--",
			 CALLERS, "--wait-taken", wait_ms(), "--pairs", "10000", "--threads", "4",
			 "--waves", "3", "--fork", NULL };
	struct it_log log;
	struct run r;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	parse(out, &r);
	/* the workload saw its region drained before its first call, and its child's */
	assert_int_equal(r.taken, 1);
	assert_int_equal(r.child_taken, 1);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	assert_exact(&log, r.toy.pid, "callers_main", made(&r, "callers_main"));
	assert_exact(&log, r.toy.pid, "callers_inner", made(&r, "callers_inner"));
	assert_exact(&log, r.toy.pid, "callers_thread", made(&r, "callers_thread"));
	assert_exact(&log, r.child, "callers_child", made(&r, "callers_child"));
	assert_int_equal(calls_of(&log, r.toy.pid, JT_REC_ENTER),
			 made(&r, "callers_main") * 2 + made(&r, "callers_thread"));
	assert_int_equal(threads_of(&log, r.toy.pid), 1 + 3 * 4);	/* main + 3 waves of 4 */
	it_log_free(&log);
	free(log_path);
	free(out);
}

/* Calls of kind calls_full the drop records say thread tid lost (0: those naming none). */
static uint64_t full_of(const struct it_log *log, uint32_t tid)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_drop *d = (const void *)log->recs[i];

		if (d->h.type == JT_REC_DROP && d->what == JT_DROP_CALLS_FULL && d->tid == tid)
			n += d->count;
	}
	return n;
}

/* callers --stall's lines: the burst thread and what it lost, the quiet one and its 0. */
static void stall_lines(const char *out, int *burst, unsigned long long *burst_lost, int *quiet,
			unsigned long long *quiet_lost)
{
	char *text = it_slurp(out), *p = strstr(text, "stall ");

	assert_non_null(p);
	assert_int_equal(sscanf(p, "stall %d lost %llu\nstall %d lost %llu", burst, burst_lost,
				quiet, quiet_lost), 4);
	free(text);
}

/*
 * A thread that overflows its ring while the collector is stopped (callers --stall) is
 * named in the drop records with exactly what it lost, the thread beside it that fit in
 * its ring is not, and report's lost line says it.
 */
static void test_a_full_ring_is_lost_by_its_thread(void **state)
{
	char *log_path = it_path_dup("full.jtl"), *out = it_path_dup("full.out");
	char *rep = it_path_dup("full.report");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-F", "0", "-o", log_path, "--",
			 CALLERS, "--wait-taken", wait_ms(), "--pairs", "1000", "--stall", "200000",
			 NULL };
	char *report[] = { IT_JITRACE, "report", log_path, NULL };
	unsigned long long burst_lost = 0, quiet_lost = 1;
	int burst = 0, quiet = 0;
	char want[128], *text;
	struct it_log log;
	struct run r;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	parse(out, &r);
	stall_lines(out, &burst, &burst_lost, &quiet, &quiet_lost);
	assert_int_equal(quiet_lost, 0);
	/* 400,000 records into a ring of 262,144 nobody drains */
	assert_int_equal(burst_lost, 2 * 200000 - JT_CALLBUF_RECS);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	print_message("tid %d lost %llu (log: %llu), tid %d (log: %llu), unnamed %llu, all %llu\n",
		      burst, burst_lost, (unsigned long long)full_of(&log, burst), quiet,
		      (unsigned long long)full_of(&log, quiet),
		      (unsigned long long)full_of(&log, 0),
		      (unsigned long long)it_drops_of(&log, JT_DROP_CALLS_FULL));
	assert_int_equal(full_of(&log, burst), burst_lost);
	assert_int_equal(full_of(&log, quiet), 0);
	assert_int_equal(it_drops_of(&log, JT_DROP_CALLS_FULL), burst_lost);
	assert_int_equal(it_drops_total(&log), burst_lost);
	assert_int_equal(it_count_calls(&log, r.toy.pid, JT_REC_ENTER, "callers_burst") +
			 it_count_calls(&log, r.toy.pid, JT_REC_LEAVE, "callers_burst"),
			 2 * made(&r, "callers_burst") - burst_lost);
	assert_exact(&log, r.toy.pid, "callers_quiet", made(&r, "callers_quiet"));
	assert_exact(&log, r.toy.pid, "callers_main", made(&r, "callers_main"));
	it_log_free(&log);

	assert_int_equal(it_run(report, rep, NULL), 0);
	text = it_slurp(rep);
	snprintf(want, sizeof(want), "calls_full %llu (tid %d: %llu)\n", burst_lost, burst,
		 burst_lost);
	assert_non_null(strstr(text, want));
	free(text);
	free(rep);
	free(log_path);
	free(out);
}

/* Where pid's last exec record is in the log (the first is the command's), 0 if none. */
static size_t exec_at(const struct it_log *log, uint32_t pid)
{
	size_t i, at = 0;

	for (i = 0; i < log->n; i++)
		if (log->recs[i]->type == JT_REC_EXEC &&
		    ((const struct jt_rec_exec *)log->recs[i])->pid == pid)
			at = i;
	return at;
}

/*
 * The enters, leaves and summed calls of pid's method name before (after: false) the
 * record at `at` in the log: a callsum counts its calls.
 */
static uint64_t calls_by_time(const struct it_log *log, uint32_t pid, const char *name,
			      size_t at, bool before)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_call *c = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if ((c->h.type != JT_REC_ENTER && c->h.type != JT_REC_LEAVE &&
		     c->h.type != JT_REC_CALLSUM) || c->pid != pid || (i < at) != before)
			continue;
		m = it_method(log, c->id);
		if (m && it_name_is(m, name))
			n += c->h.type == JT_REC_CALLSUM ?
			     ((const struct jt_rec_callsum *)c)->calls : 1;
	}
	return n;
}

/*
 * JITRACE_CALLS_RING asks the agent for rings of that many records: the burst that
 * overflows the default ring (200,000 records while the collector is stopped) fits in one
 * of 262,144, and every call is in the log.
 */
static void test_a_bigger_ring_asked_by_the_environment(void **state)
{
	char *log_path = it_path_dup("ring.jtl"), *out = it_path_dup("ring.out");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-F", "0", "-o", log_path, "--",
			 CALLERS, "--wait-taken", wait_ms(), "--pairs", "1000", "--stall", "200000",
			 NULL };
	unsigned long long lost = 1, quiet_lost = 1;
	int tid, quiet;
	struct it_log log;
	struct run r;

	(void)state;
	assert_int_equal(setenv("JITRACE_CALLS_RING", "1048576", 1), 0);
	assert_int_equal(it_run(argv, out, NULL), 0);
	unsetenv("JITRACE_CALLS_RING");
	parse(out, &r);
	stall_lines(out, &tid, &lost, &quiet, &quiet_lost);
	assert_int_equal(lost, 0);	/* callers reads its ring's size from its region */
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	assert_exact(&log, r.toy.pid, "callers_burst", made(&r, "callers_burst"));
	assert_exact(&log, r.toy.pid, "callers_quiet", made(&r, "callers_quiet"));
	it_log_free(&log);
	free(log_path);
	free(out);
}

/*
 * A process that execs while recorded: its old region goes with the old image (jitrace
 * drains what it held), the new image's agent makes a new one under the same pid and hands
 * it over; the calls of both sides are exact, the old ones before the exec, the new after.
 */
static void test_an_exec_keeps_both_sides_exact(void **state)
{
	char *log_path = it_path_dup("exec.jtl"), *out = it_path_dup("exec.out");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-F", "0", "-o", log_path, "--",
			 CALLERS, "--wait-taken", wait_ms(), "--pairs", "10000", "--threads", "2",
			 "--waves", "1", "--exec", NULL };
	uint64_t execed;
	size_t at;
	struct it_log log;
	struct run r;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	parse(out, &r);
	assert_int_equal(r.taken, 1);
	assert_true(r.toy.done);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	at = exec_at(&log, r.toy.pid);
	assert_true(at != 0);
	assert_exact(&log, r.toy.pid, "callers_main", made(&r, "callers_main"));
	assert_exact(&log, r.toy.pid, "callers_inner", made(&r, "callers_inner"));
	assert_exact(&log, r.toy.pid, "callers_thread", made(&r, "callers_thread"));
	execed = made(&r, "callers_execed");
	assert_int_equal(execed, 2 * 10000);
	assert_exact(&log, r.toy.pid, "callers_execed", execed);
	assert_int_equal(calls_by_time(&log, r.toy.pid, "callers_main", at, true),
			 2 * made(&r, "callers_main"));
	assert_int_equal(calls_by_time(&log, r.toy.pid, "callers_execed", at, false),
			 2 * execed);
	/* the new image's calls through its own region: every enter is one of its methods' */
	assert_int_equal(calls_of(&log, r.toy.pid, JT_REC_ENTER),
			 2 * made(&r, "callers_main") + made(&r, "callers_thread") + execed);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/*
 * Every callsum of pid before its exit record (none after it, under a process of no name),
 * each of a method the log defined for pid by its name (not an "[unknown method N]").
 */
static void assert_sums_before_exit(const struct it_log *log, uint32_t pid)
{
	bool exited = false;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_callsum *c = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if (c->h.type == JT_REC_EXIT && ((const struct jt_rec_exit *)c)->pid == pid)
			exited = true;
		if (c->h.type != JT_REC_CALLSUM || c->pid != pid)
			continue;
		m = it_method(log, c->id);
		if (exited || !m || m->start == 0)
			fail_msg("callsum of tid %u (%llu calls) at record %zu: %s", c->tid,
				 (unsigned long long)c->calls, i,
				 exited ? "after its process's exit" : "of a method never loaded");
	}
	assert_true(exited);
}

/*
 * The same in summary mode: the old image's sums are read at its exec and logged before
 * it, named by its own methods (read later, they were named by the new image's methods of
 * the same agent ids); the new image's before its exit. With --late-read each image stops
 * jitrace in the middle of one read of the ring, runs its threads and lets it go right
 * before its exec or exit: jitrace reads the exited threads' sums before the exec's or
 * exit's record, and timed them when it read them, after it, they went after it (named by
 * the new image, or under a process of no name). The window is long: what the stopped
 * jitrace reads late is not lost to it.
 */
static void test_an_exec_in_summary_mode_names_both_sides(void **state)
{
	char *log_path = it_path_dup("execsum.jtl"), *out = it_path_dup("execsum.out");
	char *argv[] = { IT_JITRACE, "record", "--calls-summary", "-F", "0", "--window", "2000",
			 "-o", log_path, "--", CALLERS, "--wait-taken", wait_ms(), "--wait-sum",
			 "--pairs", "3000", "--threads", "2", "--waves", "1", "--exec",
			 "--late-read", "50000", NULL };
	static const char *const before[] = { "callers_main", "callers_inner", "callers_thread" };
	uint64_t incl, excl;
	size_t at;
	struct it_log log;
	struct run r;
	int k;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	parse(out, &r);
	assert_int_equal(r.taken, 1);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	at = exec_at(&log, r.toy.pid);
	assert_true(at != 0);
	for (k = 0; k < 3; k++) {
		print_message("%s: %llu summed before the exec, %llu made\n", before[k],
			      (unsigned long long)calls_by_time(&log, r.toy.pid, before[k], at, true),
			      (unsigned long long)made(&r, before[k]));
		assert_int_equal(calls_by_time(&log, r.toy.pid, before[k], at, true),
				 made(&r, before[k]));
		assert_int_equal(it_summed_calls(&log, r.toy.pid, before[k], &incl, &excl),
				 made(&r, before[k]));
	}
	assert_int_equal(calls_by_time(&log, r.toy.pid, "callers_execed", at, false),
			 made(&r, "callers_execed"));
	assert_int_equal(it_summed_calls(&log, r.toy.pid, "callers_execed", &incl, &excl),
			 made(&r, "callers_execed"));
	assert_int_equal(incl, excl);	/* it calls nothing: main's time is not in it */
	assert_sums_before_exit(&log, r.toy.pid);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/*
 * 80 threads at once: 64 slots, the rest through the stubs' uprobes. Exact where nothing
 * was lost; where something was, the loss counted covers what is missing.
 */
static void test_more_threads_than_slots(void **state)
{
	char *log_path = it_path_dup("crowd.jtl"), *out = it_path_dup("crowd.out");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-F", "0", "-o", log_path, "--",
			 CALLERS, "--wait-taken", wait_ms(), "--pairs", "2000", "--crowd", "80",
			 NULL };
	uint64_t want, in, out_n, lost;
	struct it_log log;
	struct run r;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	parse(out, &r);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	want = made(&r, "callers_thread");
	in = it_count_calls(&log, r.toy.pid, JT_REC_ENTER, "callers_thread");
	out_n = it_count_calls(&log, r.toy.pid, JT_REC_LEAVE, "callers_thread");
	lost = it_drops_total(&log);
	print_message("%llu made, %llu entered, %llu left, %llu lost (%llu full, %llu ring, "
		      "%llu reorder)\n", (unsigned long long)want, (unsigned long long)in,
		      (unsigned long long)out_n, (unsigned long long)lost,
		      (unsigned long long)it_drops_of(&log, JT_DROP_CALLS_FULL),
		      (unsigned long long)it_drops_of(&log, JT_DROP_RB_CALL),
		      (unsigned long long)it_drops_of(&log, JT_DROP_REORDER));
	assert_true(in <= want && out_n <= want);
	assert_true(2 * want <= in + out_n + lost);
	if (!lost) {
		assert_int_equal(in, want);
		assert_int_equal(out_n, want);
	}
	assert_true(threads_of(&log, r.toy.pid) > 64);	/* both ways were taken */
	it_log_free(&log);
	free(log_path);
	free(out);
}

/*
 * A recording started after the process finds its region in its maps: every call made
 * after it took the region is there, and every call of a child it forks then. (Methods
 * loaded before the recording are known by address only, so the calls are counted by
 * process, not by name.)
 */
static void test_a_late_collector_finds_the_region(void **state)
{
	char *log_path = it_path_dup("late.jtl"), *out = it_path_dup("late.out");
	char *err = it_path_dup("late.err");
	char *prog[] = { CALLERS, "--wait-taken", "30000", "--pairs", "10000", "--threads", "2",
			 "--waves", "2", "--fork", NULL };
	char pid_arg[16], secs[24];
	/* the workload's whole run within the recording: longer where it runs slower */
	char *rec[] = { IT_JITRACE, "record", "--calls", "-F", "0", "-d",
			it_scaled(secs, sizeof(secs), 3), "-p", pid_arg, "-o", log_path, NULL };
	struct it_log log;
	struct run r;
	pid_t p;

	(void)state;
	p = it_spawn(prog, out, NULL);
	assert_true(it_wait_for_text(out, "pid ", 5000));
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)p);
	assert_int_equal(it_run(rec, NULL, err), 0);
	assert_int_equal(it_wait(p), 0);
	parse(out, &r);
	assert_int_equal(r.toy.pid, p);
	assert_int_equal(r.taken, 1);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	assert_int_equal(calls_of(&log, p, JT_REC_ENTER),
			 made(&r, "callers_main") * 2 + made(&r, "callers_thread"));
	assert_int_equal(calls_of(&log, p, JT_REC_LEAVE),
			 made(&r, "callers_main") * 2 + made(&r, "callers_thread"));
	/* its child wrote into a region of its own from its first call, taken when announced */
	assert_int_equal(r.child_taken, 1);
	assert_int_equal(calls_of(&log, r.child, JT_REC_ENTER),
			 made(&r, "callers_child") + made(&r, "callers_forkload"));
	assert_int_equal(calls_of(&log, r.child, JT_REC_LEAVE),
			 made(&r, "callers_child") + made(&r, "callers_forkload"));
	it_log_free(&log);
	free(log_path);
	free(out);
	free(err);
}

/*
 * --calls-via uprobe: the region is left alone, every call goes through the stubs. The
 * forked child calls the stubs its parent hit: where the kernel optimized those uprobes
 * (6.18), the child's copy of the stubs calls into a trampoline page it was not given, so
 * the agent has it call the twins (agent/stubs.S); before, the child died of SIGSEGV.
 */
static void test_the_uprobe_path_is_kept(void **state)
{
	char *log_path = it_path_dup("uprobe.jtl"), *out = it_path_dup("uprobe.out");
	char *argv[] = { IT_JITRACE, "record", "--calls-via", "uprobe", "-F", "0", "-o",
			 log_path, "--", CALLERS, "--wait-taken", "300", "--pairs", "2000",
			 "--threads", "2", "--waves", "1", "--fork", NULL };
	struct it_log log;
	struct run r;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	parse(out, &r);
	assert_int_equal(r.taken, 0);	/* no collector took its region */
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	assert_exact(&log, r.toy.pid, "callers_main", made(&r, "callers_main"));
	assert_exact(&log, r.toy.pid, "callers_thread", made(&r, "callers_thread"));
	assert_exact(&log, r.child, "callers_child", made(&r, "callers_child"));
	assert_exact(&log, r.child, "callers_forkload", made(&r, "callers_forkload"));
	it_log_free(&log);
	free(log_path);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls_through_buffers_are_exact),
		cmocka_unit_test(test_more_threads_than_slots),
		cmocka_unit_test(test_a_full_ring_is_lost_by_its_thread),
		cmocka_unit_test(test_a_bigger_ring_asked_by_the_environment),
		cmocka_unit_test(test_an_exec_keeps_both_sides_exact),
		cmocka_unit_test(test_an_exec_in_summary_mode_names_both_sides),
		cmocka_unit_test(test_a_late_collector_finds_the_region),
		cmocka_unit_test(test_the_uprobe_path_is_kept),
		cmocka_unit_test(test_summary_counts_equal_the_per_call_log),
		cmocka_unit_test(test_long_calls_are_logged_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
