// SPDX-License-Identifier: GPL-2.0
/* `jitrace record` on the toy JIT: exact calls, CPU split, re-compilation, late and many
 * processes, perf-map-only names, and the log's promises in every log. Needs root. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "sources/tscclock.h"
#include "../kernelclock.h"
#include "lib.h"

/* Leaf samples of pid in hot_a and hot_b. */
static void count_split(const struct it_log *log, uint32_t pid, uint64_t *a, uint64_t *b)
{
	size_t i;

	*a = *b = 0;
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		m = it_leaf_method(log, s);
		if (m)
			assert_int_equal(m->pid, pid);	/* names never cross processes */
		if (it_name_is(m, "hot_a"))
			(*a)++;
		else if (it_name_is(m, "hot_b"))
			(*b)++;
	}
}

static void assert_split(const struct it_log *log, uint32_t pid, double want)
{
	uint64_t a, b;
	char label[80];

	count_split(log, pid, &a, &b);
	snprintf(label, sizeof(label), "pid %u: leaf samples in hot_a of hot_a and hot_b", pid);
	/* the toy's own loop around the calls: 1-2 points seen */
	it_assert_share_near(label, a, a + b, want, 0.02);
}

static void assert_calls_exact(const struct it_log *log, const struct it_toy *toy)
{
	int i;

	assert_true(toy->done);
	assert_true(toy->nr_calls >= 5);
	for (i = 0; i < toy->nr_calls; i++) {
		uint64_t in = it_count_calls(log, toy->pid, JT_REC_ENTER, toy->names[i]);
		uint64_t out = it_count_calls(log, toy->pid, JT_REC_LEAVE, toy->names[i]);

		print_message("pid %d %s: scripted %llu, entered %llu, left %llu\n", toy->pid,
			      toy->names[i], (unsigned long long)toy->calls[i],
			      (unsigned long long)in, (unsigned long long)out);
		assert_int_equal(in, toy->calls[i]);
		assert_int_equal(out, toy->calls[i]);
	}
}

/* Per thread, every leave closes the innermost open enter. */
static void assert_calls_nest(const struct it_log *log, uint32_t pid)
{
	uint64_t stack[256];
	int depth = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_call *c = (const void *)log->recs[i];

		if (c->pid != pid || (c->h.type != JT_REC_ENTER && c->h.type != JT_REC_LEAVE))
			continue;
		assert_int_equal(c->tid, pid);	/* the toy JIT calls from its main thread */
		if (c->h.type == JT_REC_ENTER) {
			assert_true(depth < 256);
			stack[depth++] = c->id;
		} else {
			assert_true(depth > 0);
			assert_int_equal(stack[--depth], c->id);
		}
	}
	assert_int_equal(depth, 0);
}

/* The whole of a small file, NUL-terminated, into buf. */
static void read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
}

/* The number before " calls, " in record's closing line ("jitrace: 1.2 s: ..."). */
static uint64_t closing_calls(const char *err)
{
	char buf[16384], *line, *p;

	read_text(err, buf, sizeof(buf));
	line = strstr(buf, " s: ");
	assert_non_null(line);
	p = strstr(line, " calls, ");
	assert_non_null(p);
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoull(p, NULL, 10);
}

static void test_calls_are_counted_exactly(void **state)
{
	char *log_path = it_path_dup("calls.jtl"), *out = it_path_dup("calls.out");
	char *err = it_path_dup("calls.err");
	char *argv[] = { IT_JITRACE, "record", "--calls", "-o", log_path, "--",
			 IT_TOYJIT, "calls", NULL };
	uint64_t scripted = 0, enters = 0, said;
	struct it_log log;
	struct it_toy toy;
	size_t i;
	int k;

	(void)state;
	assert_int_equal(it_run(argv, out, err), 0);
	it_toy_parse(out, &toy);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_calls_exact(&log, &toy);
	assert_calls_nest(&log, toy.pid);
	assert_int_equal(it_drops_total(&log), 0);
	/* the closing line counts calls as `report` does: one per enter, not enter + leave */
	for (k = 0; k < toy.nr_calls; k++)
		scripted += toy.calls[k];
	for (i = 0; i < log.n; i++)
		enters += log.recs[i]->type == JT_REC_ENTER;
	said = closing_calls(err);
	print_message("closing line: %llu calls; the toy made %llu, the log has %llu enters\n",
		      (unsigned long long)said, (unsigned long long)scripted,
		      (unsigned long long)enters);
	assert_int_equal(said, scripted);
	assert_int_equal(said, enters);
	it_log_free(&log);
	free(log_path);
	free(out);
	free(err);
}

/* The calls of the nested pair in the toy JIT's `calls --nested N:1` run (issue 29's 12,345). */
#define NESTED_CALLS 12345
#define NESTED_ARG "12345:1"

/* The CALLS column of name's line in the report of the log at path. */
static uint64_t report_calls(const char *path, const char *name)
{
	char *rep = it_path_dup("nested.report"), want[80], *text, *p, *line;
	char *argv[] = { IT_JITRACE, "report", (char *)path, NULL };
	uint64_t n;

	assert_int_equal(it_run(argv, rep, NULL), 0);
	text = it_slurp(rep);
	snprintf(want, sizeof(want), "  %s\n", name);
	p = strstr(text, want);
	if (!p)
		fail_msg("no line for %s in the report of %s:\n%s", name, path, text);
	for (line = p; line > text && line[-1] != '\n'; line--)
		;
	n = strtoull(line, NULL, 10);
	free(text);
	free(rep);
	return n;
}

/* Whether this machine keeps time by an invariant TSC: the agent's clock for calls then. */
static bool keeps_time_by_tsc(void)
{
	return jt_tscclock__invariant() && test_kernel_clock_is_tsc();
}

/*
 * Through the stubs' uprobes, where the machine keeps time by the TSC, every enter and leave
 * is timed by the TSC the agent read before its stub (no bpf_ktime_get_ns): jitrace says how
 * many at the end, none of them forged. Elsewhere it says nothing of it.
 */
static void assert_uprobe_calls_timed_by_tsc(const char *err_path, uint64_t calls)
{
	char *text = it_slurp(err_path), want[160];

	snprintf(want, sizeof(want), "jitrace: %llu enters and leaves through the stubs' uprobes "
		 "timed by their callers' TSC (0 of them later than the TSC when read",
		 (unsigned long long)(2 * calls));
	print_message("%s", text);
	if (keeps_time_by_tsc())
		assert_non_null(strstr(text, want));
	else
		assert_null(strstr(text, "timed by their callers' TSC"));
	free(text);
}

/*
 * The toy JIT's nested pair, 12,345 calls each, recorded by `jitrace record HOW` (how[0],
 * how[1] if not NULL): every enter and leave of each in the log (or summed, with
 * --calls-summary), and in the report, exactly; nothing dropped.
 */
static void assert_nested_pair_exact(const char *const how[2])
{
	static const char *const pair[] = { "toy_outer", "toy_inner" };
	char *log_path = it_path_dup("nested.jtl"), *out = it_path_dup("nested.out");
	char *err = it_path_dup("nested.err");
	bool summary = !strcmp(how[0], "--calls-summary");
	uint64_t in, left, sum, incl, excl, rep;
	struct it_log log;
	struct it_toy toy;
	char *argv[16];
	int a = 0, i;
	size_t k;

	argv[a++] = IT_JITRACE;
	argv[a++] = "record";
	argv[a++] = (char *)how[0];
	if (how[1])
		argv[a++] = (char *)how[1];
	argv[a++] = "-F";
	argv[a++] = "0";
	argv[a++] = "-f";
	argv[a++] = "-o";
	argv[a++] = log_path;
	argv[a++] = "--";
	argv[a++] = IT_TOYJIT;
	argv[a++] = "calls";
	argv[a++] = "toy_a=0";		/* the pair alone */
	argv[a++] = "--nested";
	argv[a++] = NESTED_ARG;
	argv[a] = NULL;
	assert_int_equal(it_run(argv, out, err), 0);
	it_toy_parse(out, &toy);
	assert_true(toy.done);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(it_drops_total(&log), 0);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < toy.nr_calls && strcmp(toy.names[i], pair[k]); i++)
			;
		assert_true(i < toy.nr_calls);
		assert_int_equal(toy.calls[i], NESTED_CALLS);	/* as the toy counted them */
		in = it_count_calls(&log, toy.pid, JT_REC_ENTER, pair[k]);
		left = it_count_calls(&log, toy.pid, JT_REC_LEAVE, pair[k]);
		sum = it_summed_calls(&log, toy.pid, pair[k], &incl, &excl);
		print_message("%s%s%s: %s entered %llu, left %llu, summed %llu\n", how[0],
			      how[1] ? " " : "", how[1] ? how[1] : "", pair[k],
			      (unsigned long long)in, (unsigned long long)left,
			      (unsigned long long)sum);
		assert_int_equal(in, summary ? 0 : NESTED_CALLS);
		assert_int_equal(left, summary ? 0 : NESTED_CALLS);
		assert_int_equal(sum, summary ? NESTED_CALLS : 0);
		rep = report_calls(log_path, pair[k]);
		assert_int_equal(rep, NESTED_CALLS);
	}
	/* one source, one clock: through the buffers, the calls made before the collector
	 * took the region came through the uprobes, and the two clocks may cross by the
	 * TSC's conversion error at the handover */
	if (how[1])
		assert_calls_nest(&log, toy.pid);
	if (!strcmp(how[0], "--calls-via"))
		assert_uprobe_calls_timed_by_tsc(err, 2 * NESTED_CALLS);
	it_log_free(&log);
	free(log_path);
	free(out);
	free(err);
}

static const char *const nested_buffers[2] = { "--calls", NULL };
static const char *const nested_uprobes[2] = { "--calls-via", "uprobe" };
static const char *const nested_summed[2] = { "--calls-summary", NULL };

/* One test a path: its state the options naming it (nested_buffers, ...). */
static void test_nested_pair_exact(void **state)
{
	assert_nested_pair_exact(*state);
}

/* A command that cannot be run fails the recording, says why, and never says "recording". */
static void test_command_that_cannot_run_fails(void **state)
{
	char *log_path = it_path_dup("noexec.jtl"), *err = it_path_dup("noexec.err");
	char *argv[] = { IT_JITRACE, "record", "-f", "-o", log_path, "--", "/nonexistent/cmd",
			 NULL };
	char buf[16384];
	int status;

	(void)state;
	status = it_run(argv, NULL, err);
	read_text(err, buf, sizeof(buf));
	print_message("exit status %d, stderr:\n%s", status, buf);
	assert_int_not_equal(status, 0);
	assert_non_null(strstr(buf, "jitrace: cannot run /nonexistent/cmd: "
				    "No such file or directory\n"));
	assert_null(strstr(buf, "jitrace: recording"));
	free(log_path);
	free(err);
}

/* -d stops a command that still runs with SIGTERM, and says so. */
static void test_duration_says_it_stops_the_command(void **state)
{
	char *log_path = it_path_dup("dur.jtl"), *err = it_path_dup("dur.err");
	char *argv[] = { IT_JITRACE, "record", "-F", "0", "-d", "1", "-f", "-o", log_path, "--",
			 "sleep", "10", NULL };
	char buf[16384], *said;

	(void)state;
	assert_int_equal(it_run(argv, NULL, err), 0);
	read_text(err, buf, sizeof(buf));
	print_message("%s", buf);
	said = strstr(buf, "jitrace: 1 s are up: stopping sleep (pid ");
	assert_non_null(said);
	assert_non_null(strstr(said, ") with SIGTERM\n"));
	free(log_path);
	free(err);
}

static void test_samples_split_as_scripted(void **state)
{
	char *log_path = it_path_dup("split.jtl"), *out = it_path_dup("split.out");
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-o", log_path, "--",
			 IT_TOYJIT, "split", "--ms", "2000", NULL };
	struct it_log log;
	struct it_toy toy;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	it_toy_parse(out, &toy);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_split(&log, toy.pid, 0.75);
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

static void test_recompiled_address_names_the_live_code(void **state)
{
	char *log_path = it_path_dup("recompile.jtl"), *out = it_path_dup("recompile.out");
	char *argv[] = { IT_JITRACE, "record", "-F", "999", "-o", log_path, "--",
			 IT_TOYJIT, "recompile", "--ms", "1000", NULL };
	uint64_t old_before = 0, new_after = 0, wrong = 0;
	struct it_log log;
	struct it_toy toy;
	size_t i;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	it_toy_parse(out, &toy);
	assert_true(toy.switch_begin && toy.switch_end > toy.switch_begin);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != (uint32_t)toy.pid)
			continue;
		m = it_leaf_method(&log, s);
		if (!it_name_is(m, "old_fn") && !it_name_is(m, "new_fn"))
			continue;
		/* the toy JIT's clock is the BPF clock: CLOCK_MONOTONIC */
		if (s->h.ts < toy.switch_begin) {
			if (it_name_is(m, "old_fn"))
				old_before++;
			else
				wrong++;
		} else if (s->h.ts > toy.switch_end) {
			if (it_name_is(m, "new_fn"))
				new_after++;
			else
				wrong++;
		}
	}
	print_message("old_fn before the switch %llu, new_fn after %llu, misattributed %llu\n",
		      (unsigned long long)old_before, (unsigned long long)new_after,
		      (unsigned long long)wrong);
	assert_true(old_before >= 300);
	assert_true(new_after >= 300);
	assert_int_equal(wrong, 0);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/*
 * System-wide: processes started after recording began are traced (names and calls), run
 * side by side without names crossing, and keep their names after they exit. Ctrl-C
 * (SIGINT) ends the recording cleanly.
 */
static void test_late_and_concurrent_processes(void **state)
{
	char *log_path = it_path_dup("late.jtl"), *err = it_path_dup("late.err");
	char *outs[3] = { it_path_dup("late0.out"), it_path_dup("late1.out"),
			  it_path_dup("late2.out") };
	char *rec[] = { IT_JITRACE, "record", "-a", "--calls", "-F", "999", "-o", log_path, NULL };
	char *calls[] = { IT_TOYJIT, "calls", NULL };
	char *split[] = { IT_TOYJIT, "split", "--ms", "1500", NULL };
	struct it_toy toys[3];
	pid_t rec_pid, pids[3];
	struct it_log log;
	bool exited[3] = { 0 };
	size_t i;
	int k;

	(void)state;
	rec_pid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	pids[0] = it_spawn(calls, outs[0], NULL);
	pids[1] = it_spawn(split, outs[1], NULL);
	pids[2] = it_spawn(split, outs[2], NULL);
	for (k = 0; k < 3; k++)
		assert_int_equal(it_wait(pids[k]), 0);
	usleep(300000);		/* past the reorder window: the exits are in */
	kill(rec_pid, SIGINT);
	assert_int_equal(it_wait(rec_pid), 0);
	for (k = 0; k < 3; k++)
		it_toy_parse(outs[k], &toys[k]);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_calls_exact(&log, &toys[0]);
	assert_split(&log, toys[1].pid, 0.75);
	assert_split(&log, toys[2].pid, 0.75);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_exit *e = (const void *)log.recs[i];

		if (e->h.type != JT_REC_EXIT)
			continue;
		for (k = 0; k < 3; k++)
			exited[k] |= e->pid == (uint32_t)toys[k].pid;
	}
	for (k = 0; k < 3; k++) {
		assert_true(exited[k]);
		free(outs[k]);
	}
	assert_int_equal(it_drops_total(&log), 0);
	it_log_free(&log);
	free(log_path);
	free(err);
}

/* Without the agent's probes, names come from the perf map, followed as it grows. */
static void test_perf_map_names_without_agent(void **state)
{
	char *log_path = it_path_dup("perfmap.jtl"), *out = it_path_dup("perfmap.out");
	char *argv[] = { IT_JITRACE, "record", "--no-agent", "-F", "999", "-o", log_path, "--",
			 IT_TOYJIT, "split", "--ms", "1500", NULL };
	struct it_log log;
	struct it_toy toy;
	size_t i;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	it_toy_parse(out, &toy);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 1; i < log.nr_methods; i++)
		if (log.methods[i])
			assert_int_equal(log.methods[i]->src, JT_SRC_PERFMAP);
	assert_split(&log, toy.pid, 0.75);
	it_log_free(&log);
	free(log_path);
	free(out);
}

/* -p: a process that was running before recording began, and only it, is traced, with names
 * from the map it wrote before we started. */
static void test_pid_filter_traces_only_that_process(void **state)
{
	char *log_path = it_path_dup("pid.jtl"), *outs[2] = { it_path_dup("pid0.out"),
							      it_path_dup("pid1.out") };
	char *split[] = { IT_TOYJIT, "split", "--ms", "2500", NULL };
	char pid_arg[16];
	char *rec[] = { IT_JITRACE, "record", "-p", pid_arg, "-F", "999", "-d", "1.5", "-o",
			log_path, NULL };
	struct it_toy toys[2];
	pid_t pids[2];
	struct it_log log;
	size_t i, others = 0;
	int k;

	(void)state;
	for (k = 0; k < 2; k++)
		pids[k] = it_spawn(split, outs[k], NULL);
	for (k = 0; k < 2; k++)	/* both have written their maps */
		assert_true(it_wait_for_text(outs[k], "split ratio", 10000));
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)pids[0]);
	assert_int_equal(it_run(rec, NULL, NULL), 0);
	for (k = 0; k < 2; k++) {
		assert_int_equal(it_wait(pids[k]), 0);
		it_toy_parse(outs[k], &toys[k]);
	}
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];

		if (s->h.type == JT_REC_SAMPLE && s->pid != (uint32_t)pids[0])
			others++;
	}
	assert_int_equal(others, 0);
	assert_split(&log, pids[0], 0.75);
	it_log_free(&log);
	free(log_path);
	free(outs[0]);
	free(outs[1]);
}

/* Kernel frames come only with -g, and then leaf first, before the user frames. */
static unsigned long count_kernel_samples(const char *log_path, bool kstack)
{
	struct it_log log;
	unsigned long with_kernel = 0, kframes = 0, named = 0;
	size_t i;
	unsigned int k;

	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_int_equal(!!(log.hdr.flags & JT_LOG_F_KSTACK), kstack);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		bool user_seen = false;

		if (s->h.type != JT_REC_SAMPLE)
			continue;
		for (k = 0; k < s->nr_frames; k++) {
			bool kernel = it_frame_is_kernel(&log, &s->frames[k]);

			assert_false(kernel && user_seen);	/* kernel frames first */
			user_seen |= !kernel;
			kframes += kernel;
			named += kernel && JT_FRAME_KIND(s->frames[k].ref) == JT_FRAME_SYMBOL;
		}
		with_kernel += s->nr_frames && it_frame_is_kernel(&log, &s->frames[0]);
	}
	it_log_free(&log);
	/* kernel frames are named from /proc/kallsyms */
	print_message("%lu of %lu kernel frames named\n", named, kframes);
	if (kframes)	/* none without -g */
		it_assert_share_at_least("kernel frames named", named, kframes, 0.9,
					 "kallsyms names all but frames in modules loaded since");
	return with_kernel;
}

static void test_kernel_frames_only_with_g(void **state)
{
	char *with = it_path_dup("kstack.jtl"), *without = it_path_dup("nokstack.jtl");
	/* dd spends its time in read and write: most samples are in the kernel */
	char *rec_g[] = { IT_JITRACE, "record", "-g", "-F", "999", "-o", with, "--", "/bin/dd",
			  "if=/dev/zero", "of=/dev/null", "bs=64k", "count=300000", NULL };
	char *rec[] = { IT_JITRACE, "record", "-F", "999", "-o", without, "--", "/bin/dd",
			"if=/dev/zero", "of=/dev/null", "bs=64k", "count=300000", NULL };
	unsigned long n;

	(void)state;
	assert_int_equal(it_run(rec_g, NULL, "/dev/null"), 0);
	n = count_kernel_samples(with, true);
	print_message("-g: %lu samples with kernel frames\n", n);
	assert_true(n >= 50);
	assert_int_equal(it_run(rec, NULL, "/dev/null"), 0);
	assert_int_equal(count_kernel_samples(without, false), 0);
	free(with);
	free(without);
}

/* The status line is refreshed in place on a terminal and absent otherwise. */
static void test_status_line_only_on_a_terminal(void **state)
{
	char *log_path = it_path_dup("status.jtl"), *tty = it_path_dup("status.tty");
	char *plain = it_path_dup("status.err"), *cmd;
	char *script[] = { "/usr/bin/script", "-qec", NULL, tty, NULL };
	char *rec[] = { IT_JITRACE, "record", "-d", "2.5", "-f", "-o", log_path, NULL };
	char buf[16384];
	size_t n;
	FILE *f;

	(void)state;
	assert_true(asprintf(&cmd, "%s record -d 2.5 -f -o %s", IT_JITRACE, log_path) > 0);
	script[2] = cmd;
	assert_int_equal(it_run(script, "/dev/null", NULL), 0);	/* stderr is a pty */
	f = fopen(tty, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	assert_non_null(strstr(buf, "\r\033[Kjitrace: "));	/* rewritten in place */
	assert_non_null(strstr(buf, " events/s, "));
	assert_int_equal(it_run(rec, NULL, plain), 0);		/* stderr is a file */
	assert_false(it_wait_for_text(plain, "events/s", 0));
	assert_true(it_wait_for_text(plain, "jitrace: recording", 0));
	free(cmd);
	free(log_path);
	free(tty);
	free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls_are_counted_exactly),
		{ "test_nested_pair_exact_through_buffers", test_nested_pair_exact, NULL, NULL,
		  (void *)nested_buffers },
		{ "test_nested_pair_exact_through_uprobes", test_nested_pair_exact, NULL, NULL,
		  (void *)nested_uprobes },
		{ "test_nested_pair_exact_summed", test_nested_pair_exact, NULL, NULL,
		  (void *)nested_summed },
		cmocka_unit_test(test_command_that_cannot_run_fails),
		cmocka_unit_test(test_duration_says_it_stops_the_command),
		cmocka_unit_test(test_samples_split_as_scripted),
		cmocka_unit_test(test_recompiled_address_names_the_live_code),
		cmocka_unit_test(test_late_and_concurrent_processes),
		cmocka_unit_test(test_perf_map_names_without_agent),
		cmocka_unit_test(test_pid_filter_traces_only_that_process),
		cmocka_unit_test(test_kernel_frames_only_with_g),
		cmocka_unit_test(test_status_line_only_on_a_terminal),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_record: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
