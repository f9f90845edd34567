// SPDX-License-Identifier: GPL-2.0
/* Off-CPU time in the views: `jitrace report` (totals by state, the off-CPU table, each
 * thread's time on and off the CPU, text and JSON) and `jitrace flamegraph --off-cpu`
 * (folded stacks in us, the SVG's total, --diff, the error for a log without any). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cmd/cmds.h"
#include "views/flamegraph.h"
#include "views/report.h"
#include "viewlog.h"

#define REPORT_DIR "tests/fixtures/report/"
#define FLAME_DIR "tests/fixtures/flamegraph/"

/*
 * The off-CPU log, system-wide at 1000 Hz (a sample is 1 ms of CPU), times from its start:
 *   java (100), thread main (101): 5 samples in Hot.spin (10..14 ms); asleep in Lock.await
 *     three times 100 ms (back at 120, 230, 340); preempted 20 ms in Rec.fib, recursive
 *     (420); 12 short waits of 6 ms in all (700). On CPU 5 ms, off 326 ms in 16 waits.
 *   java (100), thread worker (102): 2 samples in Io.read (15..16 ms); blocked 100 ms in
 *     Io.read (400); other (stopped) 10 ms in Main.main (500). On 2 ms, off 110 ms in 2.
 *   node (200), thread 201: 3 samples in JS:~poll (17..19 ms); asleep 50 ms in it (600);
 *     8 short waits of 4 ms (800). On 3 ms, off 54 ms in 9.
 * Every java stack runs from libjvm.so+0x1234 through Main.main; the kernel frames are
 * schedule (the leaf) and io_schedule. In all: 490 ms off CPU in 27 waits, sleep 350 ms
 * (4), blocked 100 (1), preempted 20 (1), other 10 (1), short 10 (20); java 436 ms, node 54.
 * write_offcpu_lock makes each Lock.await wait lock_ms instead of 100 (for --diff).
 */
static void write_offcpu_lock(const char *path, uint64_t lock_ms)
{
	const struct jt_frame spin[] = { M(4, 0x10), M(2, 0x40), F(1, 0x1234) };
	const struct jt_frame read[] = { M(3, 0x8), M(2, 0x40), F(1, 0x1234) };
	const struct jt_frame poll[] = { M(6, 0x4) };
	const struct jt_frame await[] = { S(1, 0x10), M(1, 0x10), M(2, 0x40), F(1, 0x1234) };
	const struct jt_frame io[] = { S(1, 0x10), S(2, 0x8), M(3, 0x8), M(2, 0x40),
				       F(1, 0x1234) };
	const struct jt_frame fib[] = { M(5, 0x8), M(5, 0xc), M(5, 0xc), M(2, 0x60),
					F(1, 0x1234) };
	const struct jt_frame stop[] = { S(1, 0x10), M(2, 0x40), F(1, 0x1234) };
	const struct jt_frame nsleep[] = { S(1, 0x10), M(6, 0x4) };
	struct jt_log_header h = {
		.start_ns = VL_T0, .realtime_offset_ns = 1700000000LL * 1000000000LL,
		.ncpus = 2, .sample_hz = 1000,
		.flags = JT_LOG_F_SYSTEM_WIDE | JT_LOG_F_KSTACK | JT_LOG_F_OFFCPU,
		.hostname = "testhost", .kernel = "6.1.0-test",
	};
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	uint64_t ts = 10 * VL_MS;

	assert_non_null(w);
	vl_proc(w, 0, VL_JVM, "java", "java -jar app.jar");
	vl_proc(w, 0, VL_NODE, "node", "node app.js");
	vl_thread(w, 0, VL_JVM, 101, "main");
	vl_thread(w, 0, VL_JVM, 102, "worker");
	vl_module(w, 0, 1, VL_JVM, "/usr/lib/jvm/lib/server/libjvm.so");
	vl_symbol(w, 0, 1, 0, 0, "schedule");
	vl_symbol(w, 0, 2, 0, 0, "io_schedule");
	vl_method(w, 0, 1, VL_JVM, "Lock.await()");
	vl_method(w, 0, 2, VL_JVM, "Main.main(String[])");
	vl_method(w, 0, 3, VL_JVM, "Io.read()");
	vl_method(w, 0, 4, VL_JVM, "Hot.spin(int)");
	vl_method(w, 0, 5, VL_JVM, "Rec.fib(int)");
	vl_method(w, 0, 6, VL_NODE, "JS:~poll /app.js:5");
	vl_tsamples(w, &ts, VL_JVM, 101, 5, spin, 3);
	vl_tsamples(w, &ts, VL_JVM, 102, 2, read, 3);
	vl_tsamples(w, &ts, VL_NODE, 201, 3, poll, 1);
	vl_offcpu(w, 120 * VL_MS, VL_JVM, 101, lock_ms * VL_MS, JT_OFF_SLEEP, 1, await, 4);
	vl_offcpu(w, 230 * VL_MS, VL_JVM, 101, lock_ms * VL_MS, JT_OFF_SLEEP, 1, await, 4);
	vl_offcpu(w, 340 * VL_MS, VL_JVM, 101, lock_ms * VL_MS, JT_OFF_SLEEP, 1, await, 4);
	vl_offcpu(w, 400 * VL_MS, VL_JVM, 102, 100 * VL_MS, JT_OFF_BLOCKED, 1, io, 5);
	vl_offcpu(w, 420 * VL_MS, VL_JVM, 101, 20 * VL_MS, JT_OFF_PREEMPTED, 1, fib, 5);
	vl_offcpu(w, 500 * VL_MS, VL_JVM, 102, 10 * VL_MS, JT_OFF_OTHER, 1, stop, 3);
	vl_offcpu(w, 600 * VL_MS, VL_NODE, 201, 50 * VL_MS, JT_OFF_SLEEP, 1, nsleep, 2);
	vl_offcpu(w, 700 * VL_MS, VL_JVM, 101, 6 * VL_MS, JT_OFF_SHORT, 12, NULL, 0);
	vl_offcpu(w, 800 * VL_MS, VL_NODE, 201, 4 * VL_MS, JT_OFF_SHORT, 8, NULL, 0);
	assert_int_equal(jt_logw__close(w), 0);
}

static void write_offcpu(const char *path)
{
	write_offcpu_lock(path, 100);
}

/*
 * Process 10, sampling off (0 Hz): thread 11 asleep three times 100 ms in Lock.await(),
 * thread 12 blocked once 100 ms in Io.read(), both called from Main.main(): 3:1.
 */
static void write_split(const char *path)
{
	struct jt_log_header h = { .start_ns = VL_T0, .flags = JT_LOG_F_OFFCPU };
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	const struct jt_frame lock[] = { M(1, 0x4), M(3, 0x10) };
	const struct jt_frame io[] = { M(2, 0x8), M(3, 0x20) };

	assert_non_null(w);
	vl_proc(w, 0, 10, "app", "app");
	vl_thread(w, 0, 10, 11, "locker");
	vl_thread(w, 0, 10, 12, "reader");
	vl_method(w, 0, 1, 10, "Lock.await()");
	vl_method(w, 0, 2, 10, "Io.read()");
	vl_method(w, 0, 3, 10, "Main.main()");
	vl_offcpu(w, 100 * VL_MS, 10, 11, 100 * VL_MS, JT_OFF_SLEEP, 1, lock, 2);
	vl_offcpu(w, 150 * VL_MS, 10, 12, 100 * VL_MS, JT_OFF_BLOCKED, 1, io, 2);
	vl_offcpu(w, 200 * VL_MS, 10, 11, 100 * VL_MS, JT_OFF_SLEEP, 1, lock, 2);
	vl_offcpu(w, 300 * VL_MS, 10, 11, 100 * VL_MS, JT_OFF_SLEEP, 1, lock, 2);
	assert_int_equal(jt_logw__close(w), 0);
}

/* ---- report ---- */

/* A filter of --pid, --from and --to (NULL: not given). */
static void set_filter(struct jt_filter *f, const char *pid, const char *from, const char *to)
{
	jt_filter__init(f);
	if (pid)
		assert_int_equal(jt_filter__parse(f, "--pid", pid), 0);
	if (from)
		assert_int_equal(jt_filter__parse(f, "--from", from), 0);
	if (to)
		assert_int_equal(jt_filter__parse(f, "--to", to), 0);
}

/* The report of the log at path with these options, the path replaced by LOG. */
static char *report_opts(const char *path, bool json, bool threads, const char *pid,
			 const char *from, const char *to)
{
	struct jt_report_opts o = { .path = path, .json = json, .threads = threads, .top = 20,
				    .procs = 10 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	set_filter(&o.filter, pid, from, to);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_report(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return vl_replace(buf, path, "LOG");
}

static char *report(const char *path)
{
	return report_opts(path, false, false, NULL, NULL, NULL);
}

/*
 * The row of the table whose header line holds head, in the section (a line starting
 * "== ...") that begins with section, that ends with " name" (the rows of a table run to
 * its blank line).
 */
static char *row_in(const char *text, const char *section, const char *head, const char *name)
{
	const char *s = strstr(text, section), *end, *p;
	static char line[512];
	size_t k = strlen(name);

	assert_non_null(s);
	end = strstr(s + 1, "\n== ");
	if (!end)
		end = s + strlen(s);
	p = strstr(s, head);
	if (!p || p > end)
		fail_msg("no table \"%s\" in %s", head, section);
	for (p = strchr(p, '\n') + 1; *p && *p != '\n' && p < end; p = strchr(p, '\n') + 1) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > k && p[n - k - 1] == ' ' && !memcmp(p + n - k, name, k) &&
		    n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			return line;
		}
		if (!nl)
			break;
	}
	fail_msg("no row for %s in %s's %s", name, section, head);
	return NULL;
}

#define OFF_HEAD "    WAIT_MS  WAIT%    INNER_MS   WAITS     CPU_MS  KIND    METHOD (off CPU)\n"
#define WALL_HEAD "    CPU_MS     WAIT_MS   SLEEP_MS BLOCKED_MS PREEMPT_MS   OTHER_MS   SHORT_MS" \
		  "   WAITS   CPU%  THREAD (on and off CPU)\n"

static char *off_row(const char *text, const char *section, const char *name)
{
	return row_in(text, section, OFF_HEAD, name);
}

static char *wall_row(const char *text, const char *section, const char *name)
{
	return row_in(text, section, WALL_HEAD, name);
}

/* Two methods that wait 3:1 under a common caller: their times, shares, waits; no CPU. */
static void test_report_offcpu_splits_3_to_1(void **state)
{
	struct vl_tmp *t = *state;
	char *got;

	write_split(t->log);
	got = report(t->log);
	assert_non_null(strstr(got, "\noff CPU 400.000 ms in 4 waits: sleep 300.000 ms (3), "
				    "blocked 100.000 ms (1), preempted 0.000 ms (0), other 0.000 "
				    "ms (0), short 0.000 ms (0)\non CPU: not sampled (0 Hz)\n"));
	assert_non_null(strstr(got, "\n== all processes: 0 samples, 400.000 ms off CPU\n\n"
				    OFF_HEAD));
	assert_string_equal(off_row(got, "== all processes", "Lock.await()"),
			    "    300.000  75.0%     300.000       3          -  jit     "
			    "Lock.await()");
	assert_string_equal(off_row(got, "== all processes", "Io.read()"),
			    "    100.000  25.0%     100.000       1          -  jit     Io.read()");
	/* the caller: every wait passed through it, none blocked in it */
	assert_string_equal(off_row(got, "== all processes", "Main.main()"),
			    "    400.000 100.0%       0.000       4          -  jit     "
			    "Main.main()");
	/* sorted by wait */
	assert_true(strstr(got, "  Main.main()\n") < strstr(got, "  Lock.await()\n"));
	assert_true(strstr(got, "  Lock.await()\n") < strstr(got, "  Io.read()\n"));
	/* one process without samples still gets its threads' times; no CPU time known */
	assert_non_null(strstr(got, "one process: app (10)\n"));
	assert_string_equal(wall_row(got, "== all processes", "locker (11)"),
			    "         -     300.000    300.000      0.000      0.000      0.000"
			    "      0.000       3      -  locker (11)");
	assert_string_equal(wall_row(got, "== all processes", "reader (12)"),
			    "         -     100.000      0.000    100.000      0.000      0.000"
			    "      0.000       1      -  reader (12)");
	free(got);

	got = report_opts(t->log, true, false, NULL, NULL, NULL);
	assert_non_null(strstr(got, "\"off_cpu_methods\": [\n    {\"name\": \"Main.main()\", "
				    "\"kind\": \"jit\", \"wait_ns\": 400000000, \"wait_pct\": "
				    "100.00, \"inner_ns\": 0, \"waits\": 4, \"cpu_ns\": null},\n   "
				    " {\"name\": \"Lock.await()\", \"kind\": \"jit\", \"wait_ns\": "
				    "300000000, \"wait_pct\": 75.00, \"inner_ns\": 300000000, "
				    "\"waits\": 3, \"cpu_ns\": null},\n    {\"name\": "
				    "\"Io.read()\", \"kind\": \"jit\", \"wait_ns\": 100000000, "
				    "\"wait_pct\": 25.00, \"inner_ns\": 100000000, \"waits\": 1, "
				    "\"cpu_ns\": null}]"));
	assert_non_null(strstr(got, "\"on_cpu_ns\": null, \"off_cpu\": {\"wait_ns\": 400000000, "
				    "\"waits\": 4, \"sleep\": {\"wait_ns\": 300000000, \"waits\": "
				    "3}, \"blocked\": {\"wait_ns\": 100000000, \"waits\": 1}, "));
	free(got);
}

static void test_report_offcpu_matches_golden(void **state)
{
	struct vl_tmp *t = *state;
	char *got;

	write_offcpu(t->log);
	got = report(t->log);
	vl_golden(REPORT_DIR "report_offcpu.txt", got);
	free(got);
	got = report_opts(t->log, true, false, NULL, NULL, NULL);
	vl_golden(REPORT_DIR "report_offcpu.json", got);
	free(got);
}

/*
 * A method's wait counts every record whose stack holds it, once however deep the
 * recursion; its inner time only the records where it is the innermost user frame, under
 * the kernel's frames; its CPU time its samples / Hz.
 */
static void test_report_offcpu_inclusive_and_innermost(void **state)
{
	struct vl_tmp *t = *state;
	const char *all = "== all processes";
	char *got;

	write_offcpu(t->log);
	got = report(t->log);
	assert_string_equal(off_row(got, all, "schedule"),
			    "    460.000  93.9%       0.000       6      0.000  kernel  schedule");
	assert_string_equal(off_row(got, all, "Main.main(String[])"),
			    "    430.000  87.8%      10.000       6      7.000  jit     "
			    "Main.main(String[])");
	assert_string_equal(off_row(got, all, "Lock.await()"),
			    "    300.000  61.2%     300.000       3      0.000  jit     "
			    "Lock.await()");
	assert_string_equal(off_row(got, all, "Io.read()"),
			    "    100.000  20.4%     100.000       1      2.000  jit     Io.read()");
	assert_string_equal(off_row(got, all, "io_schedule"),
			    "    100.000  20.4%       0.000       1      0.000  kernel  "
			    "io_schedule");
	/* three frames deep in one wait: 20 ms and one wait, not 60 and three */
	assert_string_equal(off_row(got, all, "Rec.fib(int)"),
			    "     20.000   4.1%      20.000       1      0.000  jit     "
			    "Rec.fib(int)");
	assert_string_equal(off_row(got, all, "JS:~poll /app.js:5"),
			    "     50.000  10.2%      50.000       1      3.000  jit     "
			    "JS:~poll /app.js:5");
	/* per process, against its own waiting */
	assert_string_equal(off_row(got, "== java (100)", "Lock.await()"),
			    "    300.000  68.8%     300.000       3      0.000  jit     "
			    "Lock.await()");
	assert_string_equal(off_row(got, "== node (200)", "schedule"),
			    "     50.000  92.6%       0.000       1      0.000  kernel  schedule");
	/* the hot table is the samples' as ever */
	assert_string_equal(row_in(got, all, "     SELF  SELF%", "Hot.spin(int)"),
			    "        5  50.0%         5  50.0%  jit     Hot.spin(int)");
	free(got);
}

/* Time by state in the header, short waits in every total; each section's share of it. */
static void test_report_offcpu_states_and_short_waits(void **state)
{
	struct vl_tmp *t = *state;
	char *got;

	write_offcpu(t->log);
	got = report(t->log);
	assert_non_null(strstr(got, ", 1000 Hz, system-wide, kernel stacks, off-CPU\n"
				    "10 samples, 0 calls; lost 0\n"
				    "off CPU 490.000 ms in 27 waits: sleep 350.000 ms (4), blocked "
				    "100.000 ms (1), preempted 20.000 ms (1), other 10.000 ms (1), "
				    "short 10.000 ms (20)\non CPU 10.000 ms: 10 samples at 1000 "
				    "Hz\n"));
	assert_non_null(strstr(got, "\n== all processes: 10 samples, 490.000 ms off CPU\n"));
	assert_non_null(strstr(got, "\n== java (100): 7 samples (70.0%), 436.000 ms off CPU "
				    "(89.0%)\n"));
	assert_non_null(strstr(got, "\n== node (200): 3 samples (30.0%), 54.000 ms off CPU "
				    "(11.0%)\n"));
	free(got);
	got = report_opts(t->log, true, false, NULL, NULL, NULL);
	assert_non_null(strstr(got, "\"all\": {\"samples\": 10, "));
	assert_non_null(strstr(got, "\"on_cpu_ns\": 10000000, \"off_cpu\": {\"wait_ns\": "
				    "490000000, \"waits\": 27, \"sleep\": {\"wait_ns\": 350000000, "
				    "\"waits\": 4}, \"blocked\": {\"wait_ns\": 100000000, "
				    "\"waits\": 1}, \"preempted\": {\"wait_ns\": 20000000, "
				    "\"waits\": 1}, \"other\": {\"wait_ns\": 10000000, \"waits\": "
				    "1}, \"short\": {\"wait_ns\": 10000000, \"waits\": 20}}"));
	free(got);
}

/* Each thread's time on the CPU (samples / Hz) and off it by state, short waits included. */
static void test_report_offcpu_threads_on_and_off_cpu(void **state)
{
	struct vl_tmp *t = *state;
	const char *head = "== thread main (101) of java (100): 5 samples (50.0%), 326.000 ms "
			   "off CPU (66.5%)\n";
	char *got;

	write_offcpu(t->log);
	got = report(t->log);
	assert_string_equal(wall_row(got, "== java (100)", "main (101)"),
			    "     5.000     326.000    300.000      0.000     20.000      0.000"
			    "      6.000      16   1.5%  main (101)");
	assert_string_equal(wall_row(got, "== java (100)", "worker (102)"),
			    "     2.000     110.000      0.000    100.000      0.000     10.000"
			    "      0.000       2   1.8%  worker (102)");
	assert_string_equal(wall_row(got, "== node (200)", "201"),
			    "     3.000      54.000     50.000      0.000      0.000      0.000"
			    "      4.000       9   5.3%  201");
	/* the longest first */
	assert_true(strstr(got, "  main (101)\n") < strstr(got, "  worker (102)\n"));
	assert_null(strstr(got, "== thread"));
	free(got);

	/* --threads: each thread's section says its time off the CPU, and has its table */
	got = report_opts(t->log, false, true, NULL, NULL, NULL);
	assert_non_null(strstr(got, head));
	assert_string_equal(off_row(got, head, "Lock.await()"),
			    "    300.000  92.0%     300.000       3      0.000  jit     "
			    "Lock.await()");
	assert_string_equal(off_row(got, head, "Main.main(String[])"),
			    "    320.000  98.2%       0.000       4      5.000  jit     "
			    "Main.main(String[])");
	assert_non_null(strstr(got, "== thread worker (102) of java (100): 2 samples (20.0%), "
				    "110.000 ms off CPU (22.4%)\n"));
	free(got);

	got = report_opts(t->log, true, false, NULL, NULL, NULL);
	assert_non_null(strstr(got, "\"thread_times\": [\n   {\"tid\": 101, \"name\": \"main\", "
				    "\"samples\": 5, \"on_cpu_ns\": 5000000, \"off_cpu\": "
				    "{\"wait_ns\": 326000000, \"waits\": 16, \"sleep\": "
				    "{\"wait_ns\": 300000000, \"waits\": 3}, \"blocked\": "
				    "{\"wait_ns\": 0, \"waits\": 0}, \"preempted\": {\"wait_ns\": "
				    "20000000, \"waits\": 1}, \"other\": {\"wait_ns\": 0, "
				    "\"waits\": 0}, \"short\": {\"wait_ns\": 6000000, \"waits\": "
				    "12}}}"));
	free(got);
}

/* --pid and --from/--to keep off-CPU records by process and by when the thread ran again. */
static void test_report_offcpu_filters(void **state)
{
	struct vl_tmp *t = *state;
	char *got;

	write_offcpu(t->log);
	got = report_opts(t->log, false, false, "200", NULL, NULL);
	assert_non_null(strstr(got, "\noff CPU 54.000 ms in 9 waits: sleep 50.000 ms (1), "
				    "blocked 0.000 ms (0), preempted 0.000 ms (0), other 0.000 ms "
				    "(0), short 4.000 ms (8)\non CPU 3.000 ms: 3 samples at 1000 "
				    "Hz\n"));
	assert_null(strstr(got, "java"));
	assert_null(strstr(got, "Lock.await()"));
	free(got);

	/* back at 230, 340 (Lock.await), 400 (Io.read) and 420 ms (Rec.fib); no samples */
	got = report_opts(t->log, false, false, NULL, "0.2", "0.45");
	assert_non_null(strstr(got, "\noff CPU 320.000 ms in 4 waits: sleep 200.000 ms (2), "
				    "blocked 100.000 ms (1), preempted 20.000 ms (1), other 0.000 "
				    "ms (0), short 0.000 ms (0)\non CPU 0.000 ms: 0 samples at "
				    "1000 Hz\n"));
	assert_string_equal(off_row(got, "== all processes", "Lock.await()"),
			    "    200.000  62.5%     200.000       2      0.000  jit     "
			    "Lock.await()");
	assert_string_equal(wall_row(got, "== all processes", "main (101)"),
			    "     0.000     220.000    200.000      0.000     20.000      0.000"
			    "      0.000       3   0.0%  main (101)");
	assert_null(strstr(got, "node"));
	free(got);
}

/*
 * Without off-CPU records nothing is added (the goldens of test_report hold the rest); a
 * log that recorded off-CPU time and has no waits says so with zeros.
 */
static void test_report_offcpu_only_when_recorded(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99, .flags = JT_LOG_F_OFFCPU };
	struct jt_log_writer *w;
	char *got;

	vl_write(t->log);
	got = report(t->log);
	assert_null(strstr(got, "off CPU"));
	assert_null(strstr(got, "off-CPU"));
	assert_null(strstr(got, "WAIT_MS"));
	free(got);
	got = report_opts(t->log, true, true, NULL, NULL, NULL);
	assert_null(strstr(got, "off_cpu"));
	assert_null(strstr(got, "thread_times"));
	free(got);

	w = jt_logw__create(t->log, &h, true);
	assert_non_null(w);
	assert_int_equal(jt_logw__close(w), 0);
	got = report(t->log);
	assert_non_null(strstr(got, ", 99 Hz, off-CPU\n0 samples, 0 calls; lost 0\noff CPU "
				    "0.000 ms in 0 waits: sleep 0.000 ms (0), "));
	free(got);
}

/* ---- flame graph ---- */

static char *flame_opts(const char *path, bool folded, bool off, const char *pid,
			const char *from, const char *to)
{
	struct jt_flame_opts o = { .path = path, .folded = folded, .off_cpu = off };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	set_filter(&o.filter, pid, from, to);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return vl_replace(buf, path, "LOG");
}

/* The sum of a folded text's counts. */
static unsigned long folded_sum(const char *text)
{
	unsigned long total = 0;
	const char *p;

	for (p = text; *p; p = strchr(p, '\n') + 1) {
		const char *nl = strchr(p, '\n'), *sp;

		assert_non_null(nl);
		for (sp = nl; sp > p && sp[-1] != ' '; sp--)
			;
		total += strtoul(sp, NULL, 10);
	}
	return total;
}

/* Waits in us, root first; short waits as one frame under their process: all 490 ms. */
static void test_flame_offcpu_folded_matches_golden(void **state)
{
	struct vl_tmp *t = *state;
	char *got;

	write_offcpu(t->log);
	got = flame_opts(t->log, true, true, NULL, NULL, NULL);
	vl_golden(FLAME_DIR "folded_offcpu.txt", got);
	assert_non_null(strstr(got, "java (100);libjvm.so+0x1234;Main.main(String[]);"
				    "Lock.await();schedule 300000\n"));
	assert_non_null(strstr(got, "java (100);libjvm.so+0x1234;Main.main(String[]);"
				    "Rec.fib(int);Rec.fib(int);Rec.fib(int) 20000\n"));
	assert_non_null(strstr(got, "\njava (100);[short waits] 6000\n"));
	assert_non_null(strstr(got, "\nnode (200);[short waits] 4000\n"));
	assert_int_equal(folded_sum(got), 490000);
	free(got);

	/* the same log's CPU samples, as ever */
	got = flame_opts(t->log, true, false, NULL, NULL, NULL);
	assert_string_equal(got, "java (100);libjvm.so+0x1234;Main.main(String[]);Hot.spin(int) 5\n"
				 "java (100);libjvm.so+0x1234;Main.main(String[]);Io.read() 2\n"
				 "node (200);JS:~poll /app.js:5 3\n");
	free(got);
}

/* A record weighs its own off_ns / 1000, and the weights add up. */
static void test_flame_offcpu_weighs_each_wait_in_us(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .flags = JT_LOG_F_OFFCPU };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	const struct jt_frame f[] = { M(1, 0x4) };
	char *got;

	assert_non_null(w);
	vl_proc(w, 0, 7, "toy", "toy");
	vl_method(w, 0, 1, 7, "wait()");
	vl_offcpu(w, 10 * VL_MS, 7, 8, 1000999, JT_OFF_SLEEP, 1, f, 1);
	vl_offcpu(w, 20 * VL_MS, 7, 8, 2000500, JT_OFF_SLEEP, 1, f, 1);
	vl_offcpu(w, 30 * VL_MS, 7, 8, 999, JT_OFF_SLEEP, 1, f, 1);
	vl_offcpu(w, 40 * VL_MS, 7, 8, 7000, JT_OFF_SHORT, 3, NULL, 0);
	assert_int_equal(jt_logw__close(w), 0);
	got = flame_opts(t->log, true, true, NULL, NULL, NULL);
	/* 1000 + 2000 + 0 us; one process: no root of its own */
	assert_string_equal(got, "wait() 3000\n[short waits] 7\n");
	free(got);
}

/* The SVG: its total, title, subtitle by state and tooltips in ms; short waits named. */
static void test_flame_offcpu_svg_total(void **state)
{
	struct vl_tmp *t = *state;
	char *got;

	write_offcpu(t->log);
	got = flame_opts(t->log, false, true, NULL, NULL, NULL);
	vl_golden(FLAME_DIR "flame_offcpu.svg", got);
	assert_non_null(strstr(got, " data-total=\"490000\" "));
	assert_non_null(strstr(got, ">Off-CPU time: LOG</text>"));
	assert_non_null(strstr(got, ">490.000 ms off CPU in 27 waits (sleep 350.000 ms, blocked "
				    "100.000 ms, preempted 20.000 ms, other 10.000 ms, short "
				    "10.000 ms), 0 lost; "));
	assert_non_null(strstr(got, "<title>all\n490.000 ms, 100.00%, all</title>"));
	assert_non_null(strstr(got, "<title>java (100)\n436.000 ms, 88.98%, process</title>"));
	assert_non_null(strstr(got, "<title>Lock.await()\n300.000 ms, 61.22%, jit</title>"));
	assert_non_null(strstr(got, "<title>[short waits]\n6.000 ms, 1.22%, waits too short to "
				    "record their stacks</title>"));
	assert_null(strstr(got, "samples"));
	free(got);
}

static void test_flame_offcpu_filters(void **state)
{
	struct vl_tmp *t = *state;
	char *got;

	write_offcpu(t->log);
	got = flame_opts(t->log, true, true, "200", NULL, NULL);
	assert_string_equal(got, "node (200);JS:~poll /app.js:5;schedule 50000\n"
				 "node (200);[short waits] 4000\n");
	free(got);
	got = flame_opts(t->log, true, true, NULL, "0.2", "0.45");
	assert_string_equal(got, "java (100);libjvm.so+0x1234;Main.main(String[]);Io.read();"
				 "io_schedule;schedule 100000\n"
				 "java (100);libjvm.so+0x1234;Main.main(String[]);Lock.await();"
				 "schedule 200000\n"
				 "java (100);libjvm.so+0x1234;Main.main(String[]);Rec.fib(int);"
				 "Rec.fib(int);Rec.fib(int) 20000\n");
	free(got);
}

/* jt_cmd_NAME(args..., NULL) with stderr captured into *err (malloc'd). */
static int run_cmd(int (*cmd)(int, char **), struct vl_tmp *t, char **err, ...)
{
	char *argv[16], path[320];
	int argc = 0, ret, saved, fd;
	va_list ap;
	FILE *f;
	long n;

	va_start(ap, err);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	snprintf(path, sizeof(path), "%s/stderr.txt", t->dir);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	ret = cmd(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*err = calloc(1, n + 1);
	assert_non_null(*err);
	assert_int_equal(fread(*err, 1, n, f), n);
	fclose(f);
	return ret;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	fclose(f);
	return buf;
}

/*
 * The command: --off-cpu writes what the view does; a log that recorded no off-CPU time is
 * an error naming it and saying how to record one, and leaves no file behind.
 */
static void test_flame_offcpu_command_and_error(void **state)
{
	struct vl_tmp *t = *state;
	char out[320], want[512], *err, *got;

	snprintf(out, sizeof(out), "%s/wait.folded", t->dir);
	write_offcpu(t->log);
	assert_int_equal(run_cmd(jt_cmd_flamegraph, t, &err, "flamegraph", "--off-cpu",
				 "--folded", "-o", out, t->log, NULL), 0);
	free(err);
	got = slurp(out);
	assert_int_equal(folded_sum(got), 490000);
	assert_non_null(strstr(got, "\njava (100);[short waits] 6000\n"));
	free(got);
	unlink(out);

	vl_write(t->log);	/* samples and calls, no off-CPU time */
	snprintf(want, sizeof(want), "jitrace: %s: no off-CPU time in this log: record it with "
		 "'jitrace record --off-cpu'\n", t->log);
	assert_int_equal(run_cmd(jt_cmd_flamegraph, t, &err, "flamegraph", "--off-cpu",
				 "--folded", "-o", out, t->log, NULL), 1);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(access(out, F_OK), -1);
	snprintf(out, sizeof(out), "%s/wait.svg", t->dir);
	assert_int_equal(run_cmd(jt_cmd_flamegraph, t, &err, "flamegraph", "--off-cpu", "-o",
				 out, t->log, NULL), 1);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(access(out, F_OK), -1);
}

/*
 * --diff --off-cpu: each frame's share of its log's off-CPU time against the base's. Lock
 * waits 600 of 790 ms in the new log (75.95%), 300 of 490 in the base (61.22%). A base without off-CPU time
 * is refused; --folded still has no --diff form.
 */
static void test_flame_offcpu_diff(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_flame_opts o = { .base = t->log, .off_cpu = true };
	char nw[320], want[512], *buf = NULL, *err;
	size_t len = 0;
	FILE *f;

	snprintf(nw, sizeof(nw), "%s/new.jtl", t->dir);
	write_offcpu(t->log);
	write_offcpu_lock(nw, 200);
	o.path = nw;
	jt_filter__init(&o.filter);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_flamegraph(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(buf, "<title>Lock.await()\n600.000 ms, 75.95%, jit; base: "
				    "300.000 ms, 61.22%; change: +14.72 points</title>"));
	assert_non_null(strstr(buf, "<title>[short waits]\n6.000 ms, 0.76%, waits too short to "
				    "record their stacks; base: 6.000 ms, 1.22%; change: -0.46 "
				    "points</title>"));
	assert_non_null(strstr(buf, "base 490.000 ms; shares of each log's off-CPU time"));
	assert_non_null(strstr(buf, " data-total=\"790000\" "));
	free(buf);

	vl_write(t->log);	/* the base now has none */
	snprintf(want, sizeof(want), "jitrace: %s: no off-CPU time in this log: record it with "
		 "'jitrace record --off-cpu'\n", t->log);
	assert_int_equal(run_cmd(jt_cmd_flamegraph, t, &err, "flamegraph", "--off-cpu", "--diff",
				 "-o", "-", t->log, nw, NULL), 1);
	assert_string_equal(err, want);
	free(err);
	assert_int_equal(run_cmd(jt_cmd_flamegraph, t, &err, "flamegraph", "--off-cpu", "--diff",
				 "--folded", t->log, nw, NULL), 2);
	assert_non_null(strstr(err, "--diff draws an SVG: it has no --folded form"));
	free(err);
	unlink(nw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_offcpu_splits_3_to_1, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_offcpu_matches_golden, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_offcpu_inclusive_and_innermost,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_offcpu_states_and_short_waits,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_offcpu_threads_on_and_off_cpu,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_offcpu_filters, vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_offcpu_only_when_recorded, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_flame_offcpu_folded_matches_golden, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_flame_offcpu_weighs_each_wait_in_us,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_flame_offcpu_svg_total, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_flame_offcpu_filters, vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_flame_offcpu_command_and_error, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_flame_offcpu_diff, vl_setup, vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
