// SPDX-License-Identifier: GPL-2.0
/* `jitrace report`: text and JSON against goldens, the numbers checked by hand, filters;
 * crafted logs: control bytes, UTF-8, a start time out of range, a very deep stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "views/report.h"
#include "viewlog.h"

#define GOLDEN_DIR "tests/fixtures/report/"

/* The report of the test log with these options, the log's path replaced by LOG. */
static char *report(struct vl_tmp *t, bool json, const char *pid, const char *from,
		    const char *to)
{
	struct jt_report_opts o = { .path = t->log, .json = json, .top = 20, .procs = 10 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	jt_filter__init(&o.filter);
	if (pid)
		assert_int_equal(jt_filter__parse(&o.filter, "--pid", pid), 0);
	if (from)
		assert_int_equal(jt_filter__parse(&o.filter, "--from", from), 0);
	if (to)
		assert_int_equal(jt_filter__parse(&o.filter, "--to", to), 0);
	vl_write(t->log);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_report(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return vl_replace(buf, t->log, "LOG");
}

/* How many times needle is in text. */
static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (; (text = strstr(text, needle)); text += strlen(needle))
		n++;
	return n;
}

/* The line of section (a line starting "== ...") that ends with name. */
static char *row(const char *text, const char *section, const char *name)
{
	const char *s = strstr(text, section), *end, *p;
	static char line[512];

	assert_non_null(s);
	end = strstr(s + 1, "\n== ");
	if (!end)
		end = s + strlen(s);
	for (p = s; p && p < end; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		size_t k = strlen(name);

		if (n >= k && !memcmp(p + n - k, name, k) && n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			return line;
		}
	}
	fail_msg("no row for %s in %s", name, section);
	return NULL;
}

static void test_report_text_matches_golden(void **state)
{
	char *got = report(*state, false, NULL, NULL, NULL);

	vl_golden(GOLDEN_DIR "report.txt", got);
	free(got);
}

static void test_report_json_matches_golden(void **state)
{
	char *got = report(*state, true, NULL, NULL, NULL);

	vl_golden(GOLDEN_DIR "report.json", got);
	free(got);
}

/* Self, total (recursion counted once), offsets, kinds: worked out from vl_write by hand. */
static void test_report_counts_self_total_and_offsets(void **state)
{
	char *got = report(*state, false, NULL, NULL, NULL);
	const char *jvm = "== java (100): 15 samples";

	assert_non_null(strstr(got, "20 samples, 7 calls; lost 3, ringbuf_sample 3\n"));
	assert_non_null(strstr(got, "== all processes: 20 samples\n"));
	assert_string_equal(row(got, jvm, " Hot.spin(int)"),
			    "        8  53.3%         8  53.3%  jit     Hot.spin(int)");
	/* and the source line of each, from the log's lines record */
	assert_non_null(strstr(got, "hot offsets: +0x10 75% Hot.java:12, +0x18 25% "
				    "Hot.java:14\n"));
	assert_string_equal(row(got, jvm, " Main.main(String[])"),
			    "        0   0.0%        13  86.7%  jit     Main.main(String[])");
	assert_string_equal(row(got, jvm, " Rec.fib(int)"),
			    "        2  13.3%         2  13.3%  jit     Rec.fib(int)");
	assert_string_equal(row(got, jvm, " JavaCalls::call_helper"),
			    "        1   6.7%        14  93.3%  native  JavaCalls::call_helper");
	assert_string_equal(row(got, jvm, " libjvm.so+0x1234"),
			    "        0   0.0%        15 100.0%  native  libjvm.so+0x1234");
	assert_string_equal(row(got, jvm, " do_syscall_64"),
			    "        3  20.0%         3  20.0%  kernel  do_syscall_64");
	assert_non_null(row(got, jvm, "  kernel  [k] 0xffffffff81a00b2c"));
	assert_non_null(row(got, jvm, "  unknown 0x401a2b"));
	assert_string_equal(row(got, "== node (200): 5 samples", " JS:~work /app.js:2"),
			    "        4  80.0%         4  80.0%  jit     JS:~work /app.js:2");
	assert_non_null(strstr(got, "   java -jar app.jar\n"));
	free(got);
}

/* Calls: nesting, recursion counted once in inclusive time, unbalanced edges counted. */
static void test_report_calls_inclusive_exclusive(void **state)
{
	char *got = report(*state, false, NULL, NULL, NULL);
	assert_non_null(strstr(got, "calls: 7 entered, 6 left; 1 leaves without an enter, "
				    "1 closed by an outer leave, 1 open at the end\n"));
	/* main: 6..41 ms = 35 ms, minus spin 2 ms and fib 5 ms (one activation: the outer) */
	assert_non_null(strstr(got, "         1       35.000       28.000  35000.000  "
				    "Main.main(String[])\n"));
	assert_non_null(strstr(got, "         2        5.000        5.000   2500.000  "
				    "Rec.fib(int)\n"));
	/* spin entered twice, left once (the second closed by main's leave) */
	assert_non_null(strstr(got, "         2        2.000        2.000   1000.000  "
				    "Hot.spin(int)\n"));
	assert_non_null(strstr(got, "         1        2.000        2.000   2000.000  "
				    "JS:~work /app.js:2\n"));
	free(got);
}

static void test_report_filters_pid_and_time(void **state)
{
	char *got = report(*state, false, "100", "0.0155", "0.030");

	vl_golden(GOLDEN_DIR "report_pid100_15_30ms.txt", got);
	/* 16..29 ms of pid 100: spin_b 2, sys 3, fib 2, lost 1 */
	assert_non_null(strstr(got, "== all processes: 8 samples\n"));
	assert_null(strstr(got, "== node"));
	/* one process: its own tables would be the all-processes ones again */
	assert_null(strstr(got, "== java"));
	assert_non_null(strstr(got, "\none process: java (100)\n   java -jar app.jar\n\n== all"));
	assert_int_equal(count_of(got, "     SELF  SELF%"), 1);
	assert_non_null(strstr(got, "(kept: pid 100, from 0.0155 s to 0.03 s)"));
	free(got);
}

/* ---- crafted logs ---- */

/* The report of the log at path, text or JSON. */
static char *report_of(const char *path, bool json)
{
	struct jt_report_opts o = { .path = path, .json = json };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	jt_filter__init(&o.filter);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_report(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* One process (comm, cmdline) with one method, name, sampled twice. */
static void write_small(const char *path, const struct jt_log_header *h, const char *comm,
			const char *cmdline, const char *name)
{
	struct jt_log_writer *w = jt_logw__create(path, h, true);
	const struct jt_frame f[] = { M(1, 0x10) };
	uint64_t ts = VL_MS;

	assert_non_null(w);
	vl_proc(w, 0, 7, comm, cmdline);
	vl_method(w, 0, 1, 7, name);
	vl_samples(w, &ts, 7, 2, f, 1);
	assert_int_equal(jt_logw__close(w), 0);
}

/*
 * A traced process picks its command line and method names, and the log its host name:
 * none of their control bytes (clear screen, set title, colours) reaches the terminal.
 * They are written as dump writes them, \xHH.
 */
static void test_report_text_escapes_control_bytes(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99,
				   .hostname = "host\x1b[2J", .kernel = "6.1\x07" };
	char path[320], *got;

	snprintf(path, sizeof(path), "%s/e\x1b[31m.jtl", t->dir);
	write_small(path, &h, "ev\x1bil",
		    "evil \x1b[2J\x1b]0;pwned\x07 \x1b[31mred\x7f \\x \xc2\x9b" "1m Straße",
		    "Evil.m\x1b[2J(int)");
	got = report_of(path, false);
	assert_null(strchr(got, '\x1b'));
	assert_null(strchr(got, '\x07'));
	assert_null(strchr(got, '\x7f'));
	/* C0, DEL, backslash and C1 (CSI as UTF-8) escaped; other UTF-8 kept */
	assert_non_null(strstr(got, "   evil \\x1b[2J\\x1b]0;pwned\\x07 \\x1b[31mred\\x7f "
				    "\\x5cx \\xc2\\x9b1m Straße\n"));
	assert_non_null(strstr(got, "  jit     Evil.m?[2J(int)\n"));	/* as stacks.c names it */
	assert_non_null(strstr(got, "/e\\x1b[31m.jtl\n"));
	assert_non_null(strstr(got, " on host\\x1b[2J (6.1\\x07), "));
	free(got);
	unlink(path);
}

/* Report --json keeps UTF-8 names and command lines as they are, as the exports do. */
static void test_report_json_keeps_utf8(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99 };
	char *got;

	write_small(t->log, &h, "java", "java Straße", "Straße.größe(int)");
	got = report_of(t->log, true);
	assert_non_null(strstr(got, "\"name\": \"Straße.größe(int)\""));
	assert_non_null(strstr(got, "\"cmdline\": \"java Straße\""));
	assert_null(strstr(got, "\\u00c3"));
	free(got);
}

/* The start time in the text and JSON reports of a log whose header has these clocks. */
static void check_start(struct vl_tmp *t, uint64_t start_ns, int64_t offset, const char *want)
{
	struct jt_log_header h = { .start_ns = start_ns, .realtime_offset_ns = offset,
				   .sample_hz = 99, .hostname = "h" };
	char text[128], json[128], *got;

	snprintf(text, sizeof(text), "\nrecorded %s on h (", want);
	snprintf(json, sizeof(json), "\"start\": \"%s\"", want);
	write_small(t->log, &h, "toy", "toy", "fn");
	got = report_of(t->log, false);
	assert_non_null(strstr(got, text));
	free(got);
	got = report_of(t->log, true);
	assert_non_null(strstr(got, json));
	free(got);
}

/* Header clocks whose sum overflows are "?", not undefined behaviour; the edges still dates. */
static void test_report_start_out_of_range(void **state)
{
	check_start(*state, VL_T0, INT64_MAX, "?");
	check_start(*state, UINT64_MAX, 0, "?");
	check_start(*state, 0, INT64_MAX, "2262-04-11 23:47:16 UTC");
	check_start(*state, VL_T0, INT64_MIN, "1677-09-21 00:12:48 UTC");
	check_start(*state, 0, -1, "1969-12-31 23:59:59 UTC");	/* rounded down */
}

/* The text of the section that begins with head, up to the next one (malloc'd). */
static char *section(const char *text, const char *head)
{
	const char *s = strstr(text, head), *end;

	assert_non_null(s);
	end = strstr(s + 1, "\n== ");
	return strndup(s, end ? (size_t)(end - s) : strlen(s));
}

/*
 * A hot offset shows its source line only when every sample there agrees on it: one name
 * may be several methods (compiled again, in other processes), each with its own lines or
 * none. Offsets before a method's first entry have none.
 */
static void test_report_lines_where_every_sample_agrees(void **state)
{
	static const struct jt_line first[] = { { .off = 0, .line = 5 }, { .off = 0x10, .line = 6 } };
	static const struct jt_line again[] = { { .off = 0, .line = 5 }, { .off = 0x10, .line = 7 } };
	static const struct jt_line late[] = { { .off = 0x8, .line = 3 } };
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99 };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	const struct jt_frame a4[] = { M(1, 0x4) }, a10[] = { M(1, 0x10) };
	const struct jt_frame b4[] = { M(2, 0x4) }, b10[] = { M(2, 0x10) };
	const struct jt_frame c4[] = { M(3, 0x4) }, d4[] = { M(4, 0x4) };
	uint64_t ts = VL_MS;
	char *got, *sec;

	assert_non_null(w);
	vl_proc(w, 0, 7, "a", "a");
	vl_proc(w, 0, 8, "b", "b");
	vl_method(w, 0, 1, 7, "Dup.run()");
	vl_lines(w, 0, 1, 7, first, 2, "dup.toy", 8);
	vl_method(w, 0, 2, 7, "Dup.run()");		/* compiled again: line 7 at +0x10 */
	vl_lines(w, 0, 2, 7, again, 2, "dup.toy", 8);
	vl_method(w, 0, 3, 8, "Dup.run()");		/* no lines */
	vl_method(w, 0, 4, 8, "Other.go()");
	vl_lines(w, 0, 4, 8, late, 1, "other.toy", 10);
	vl_samples(w, &ts, 7, 3, a4, 1);
	vl_samples(w, &ts, 7, 2, a10, 1);
	vl_samples(w, &ts, 7, 1, b4, 1);
	vl_samples(w, &ts, 7, 1, b10, 1);
	vl_samples(w, &ts, 8, 1, c4, 1);
	vl_samples(w, &ts, 8, 2, d4, 1);
	assert_int_equal(jt_logw__close(w), 0);

	got = report_of(t->log, false);
	sec = section(got, "== a (7)");		/* +0x4: line 5 twice over; +0x10: 6 and 7 */
	assert_non_null(strstr(sec, "hot offsets: +0x4 57% dup.toy:5, +0x10 43%\n"));
	free(sec);
	sec = section(got, "== b (8)");		/* a method without lines, one before them */
	assert_non_null(strstr(sec, "Dup.run()\n                              hot offsets: "
				    "+0x4 100%\n"));
	assert_non_null(strstr(sec, "Other.go()\n                              hot offsets: "
				    "+0x4 100%\n"));
	free(sec);
	sec = section(got, "== all processes");	/* +0x4 now has a sample without lines */
	assert_non_null(strstr(sec, "Dup.run()\n                              hot offsets: "
				    "+0x4 62%, +0x10 38%\n"));
	free(sec);
	assert_null(strstr(got, "other.toy"));
	free(got);

	got = report_of(t->log, true);
	assert_non_null(strstr(got, "\"offsets\": [{\"offset\": 4, \"samples\": 4, \"file\": "
				    "\"dup.toy\", \"line\": 5}, {\"offset\": 16, \"samples\": 3}]"));
	assert_non_null(strstr(got, "\"offsets\": [{\"offset\": 4, \"samples\": 5}, "
				    "{\"offset\": 16, \"samples\": 3}]"));
	free(got);
}

static int report_view(FILE *out, void *arg)
{
	return jt_report(out, arg);
}

/* A sample 50,000 frames deep is added up without recursion: fine on a 1 MiB stack. */
static void test_report_deep_stack_on_small_stack(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_report_opts o = { .path = t->log };
	char out[320], *got;

	vl_write_deep(t->log);
	jt_filter__init(&o.filter);
	snprintf(out, sizeof(out), "%s/deep.txt", t->dir);
	assert_int_equal(vl_on_small_stack(report_view, &o, out), 0);
	got = report_of(t->log, false);	/* and its numbers: each method once in total */
	assert_string_equal(row(got, "== all processes: 1 samples", " a()"),
			    "        1 100.0%         1 100.0%  jit     a()");
	assert_string_equal(row(got, "== all processes: 1 samples", " b()"),
			    "        0   0.0%         1 100.0%  jit     b()");
	free(got);
}

/* Samples kept with frames unnamed or stacks cut are not counted lost, but said. */
static void test_report_says_kept_apart_from_lost(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99 };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	struct jt_frame f[] = { U(0x7f0000001000), { JT_FRAME_REF(JT_FRAME_TRUNCATED, 0), 126 } };
	uint64_t ts = VL_T0 + VL_MS;
	char *got;

	assert_non_null(w);
	vl_proc(w, 0, 7, "app", "app");
	vl_samples(w, &ts, 7, 2, f, 2);
	vl_drop(w, ts, JT_DROP_RB_SAMPLE, 2);
	vl_drop(w, ts, JT_DROP_UNSURE_FRAME, 1);
	vl_drop(w, ts, JT_DROP_BROKEN_STACK, 2);
	assert_int_equal(jt_logw__close(w), 0);
	got = report_of(t->log, false);
	assert_non_null(strstr(got, "2 samples, 0 calls; lost 2, ringbuf_sample 2; kept, cut or "
				    "unnamed: unsure_frame 1, broken_stack 2\n"));
	assert_non_null(strstr(got, "[truncated]"));
	free(got);
}

/*
 * Drop records that name threads: the lost line says each thread's share after its kind's
 * total (the most lost first, eight at most, the rest summed), JSON lists them all; the
 * totals are every record's, named or not.
 */
static void test_report_says_which_threads_lost_calls(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99, .flags = JT_LOG_F_CALLS };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	struct jt_frame f[] = { U(0x7f0000001000) };
	uint64_t ts = VL_T0 + VL_MS;
	char *got;

	assert_non_null(w);
	vl_proc(w, 0, 7, "app", "app");
	vl_samples(w, &ts, 7, 2, f, 1);
	vl_drop_tid(w, ts, JT_DROP_CALLS_FULL, 78, 34);
	vl_drop_tid(w, ts, JT_DROP_CALLS_FULL, 77, 700);
	vl_drop_tid(w, ts, JT_DROP_RB_SAMPLE, 77, 5);
	vl_drop_tid(w, ts + 1, JT_DROP_CALLS_FULL, 77, 500);
	vl_drop(w, ts + 2, JT_DROP_CALLS_FULL, 6);	/* no thread said */
	assert_int_equal(jt_logw__close(w), 0);
	got = report_of(t->log, false);
	assert_non_null(strstr(got, "; lost 1245, ringbuf_sample 5 (tid 77: 5), calls_full 1240 "
				    "(tid 77: 1200, tid 78: 34)\n"));
	free(got);
	got = report_of(t->log, true);
	assert_non_null(strstr(got, "\"calls_full\": 1240"));
	assert_non_null(strstr(got, "\"lost_by_thread\": [{\"what\": \"ringbuf_sample\", "
				    "\"tid\": 77, \"count\": 5}, {\"what\": \"calls_full\", "
				    "\"tid\": 77, \"count\": 1200}, {\"what\": \"calls_full\", "
				    "\"tid\": 78, \"count\": 34}]"));
	free(got);
}

/*
 * Calls summed in the process and calls logged alone for their length count as the
 * method's calls, in the totals and, said apart, in the text's and the JSON's call lines.
 */
static void test_report_counts_summed_calls_and_spans(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99, .flags = JT_LOG_F_CALLS };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	struct jt_rec_callsum *cs;
	struct jt_rec_span *sp;
	union vl_buf rb;
	char *got;

	assert_non_null(w);
	vl_proc(w, 0, 7, "app", "app");
	vl_method(w, 0, 1, 7, "Hot.spin()");
	cs = vl_rec(&rb, JT_REC_CALLSUM, sizeof(*cs), 0, 2 * VL_MS);
	*cs = (struct jt_rec_callsum){ .h = cs->h, .id = 1, .pid = 7, .tid = 8, .calls = 1000,
				       .incl_ns = 5 * VL_MS, .excl_ns = 4 * VL_MS };
	vl_add(w, &rb);
	sp = vl_rec(&rb, JT_REC_SPAN, sizeof(*sp), 0, 9 * VL_MS);
	*sp = (struct jt_rec_span){ .h = sp->h, .id = 1, .pid = 7, .tid = 8,
				    .enter_ts = VL_T0 + 3 * VL_MS, .self_ns = 6 * VL_MS };
	vl_add(w, &rb);
	assert_int_equal(jt_logw__close(w), 0);
	got = report_of(t->log, false);
	assert_non_null(strstr(got, "calls summed in the process: 1000; logged alone for their "
				    "length: 1\n"));
	free(got);
	got = report_of(t->log, true);
	assert_non_null(strstr(got, "\"summed_in_process\": 1000, \"logged_for_length\": 1}"));
	/* 1000 summed (5 ms, 4 ms own) and the 6 ms span (6 ms own) */
	assert_non_null(strstr(got, "\"calls\": 1001, \"incl_ns\": 11000000, "
				    "\"excl_ns\": 10000000"));
	free(got);
}

/* Past eight threads the lost line sums the rest; a log naming none has no list. */
static void test_report_sums_threads_past_eight(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99, .flags = JT_LOG_F_CALLS };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	struct jt_frame f[] = { U(0x7f0000001000) };
	uint64_t ts = VL_T0 + VL_MS;
	uint32_t tid;
	char *got;

	assert_non_null(w);
	vl_proc(w, 0, 7, "app", "app");
	vl_samples(w, &ts, 7, 2, f, 1);
	for (tid = 100; tid < 110; tid++)	/* tid 100 lost 1 ... tid 109 lost 10 */
		vl_drop_tid(w, ts, JT_DROP_CALLS_FULL, tid, tid - 99);
	assert_int_equal(jt_logw__close(w), 0);
	got = report_of(t->log, false);
	assert_non_null(strstr(got, "calls_full 55 (tid 109: 10, tid 108: 9, tid 107: 8, "
				    "tid 106: 7, tid 105: 6, tid 104: 5, tid 103: 4, tid 102: 3, "
				    "2 more threads: 3)\n"));
	free(got);
}

/*
 * --threads: process 7 "app" with thread 8 (named "app", then renamed "worker-a"), 10
 * "worker-b" and 11 never named; process 9 "other" with one thread. Thread 8's stack
 * recurses (rec twice): its total counts once.
 */
static char *threads_report(const char *path, bool threads, bool json)
{
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 1000 };
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	struct jt_report_opts o = { .path = path, .json = json, .threads = threads };
	const struct jt_frame fa[] = { M(1, 0x10), M(3, 0x4), M(3, 0x8) };
	const struct jt_frame fb[] = { M(2, 0x20) };
	const struct jt_frame fo[] = { U(0x401000) };
	uint64_t ts = VL_MS;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_non_null(w);
	vl_proc(w, 0, 7, "app", "app --threads");
	vl_proc(w, 0, 9, "other", "other");
	vl_method(w, 0, 1, 7, "work_a");
	vl_method(w, 0, 2, 7, "work_b");
	vl_method(w, 0, 3, 7, "rec");
	vl_thread(w, 0, 7, 8, "app");
	vl_thread(w, 0, 7, 10, "worker-b");
	vl_thread(w, 0, 9, 9, "other");
	vl_tsamples(w, &ts, 7, 10, 2, fb, 1);
	vl_thread(w, ts, 7, 8, "worker-a");	/* renamed before its first sample */
	vl_tsamples(w, &ts, 7, 8, 3, fa, 3);
	vl_tsamples(w, &ts, 7, 11, 1, fb, 1);
	vl_tsamples(w, &ts, 9, 9, 1, fo, 1);
	assert_int_equal(jt_logw__close(w), 0);

	jt_filter__init(&o.filter);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(jt_report(f, &o), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_report_threads_by_name(void **state)
{
	struct vl_tmp *t = *state;
	const char *a = "== thread worker-a (8) of app (7): 3 samples (42.9%)\n";
	const char *b = "== thread worker-b (10) of app (7): 2 samples (28.6%)\n";
	const char *u = "== thread 11 of app (7): 1 samples (14.3%)\n";
	const char *o = "== thread other (9) of other (9): 1 samples (14.3%)\n";
	char *got = threads_report(t->log, true, false);

	/* each after its process's table, the busiest first; the unnamed one by tid */
	assert_non_null(strstr(got, a));
	assert_non_null(strstr(got, b));
	assert_non_null(strstr(got, u));
	assert_non_null(strstr(got, o));
	assert_true(strstr(got, "== app (7): 6 samples") < strstr(got, a));
	assert_true(strstr(got, a) < strstr(got, b));
	assert_true(strstr(got, b) < strstr(got, u));
	assert_true(strstr(got, u) < strstr(got, "== other (9)"));
	assert_true(strstr(got, "== other (9)") < strstr(got, o));
	assert_null(strstr(got, "thread app (8)"));	/* the latest name only */
	/* the thread's own methods, against its own samples; recursion counted once */
	assert_string_equal(row(got, a, " work_a"),
			    "        3 100.0%         3 100.0%  jit     work_a");
	assert_string_equal(row(got, a, " rec"),
			    "        0   0.0%         3 100.0%  jit     rec");
	assert_string_equal(row(got, b, " work_b"),
			    "        2 100.0%         2 100.0%  jit     work_b");
	assert_non_null(strstr(got, "hot offsets: +0x10 100%\n"));
	free(got);

	got = threads_report(t->log, false, false);	/* not asked for: not shown */
	assert_null(strstr(got, "== thread"));
	assert_null(strstr(got, "worker-a"));
	free(got);

	got = threads_report(t->log, true, true);
	assert_non_null(strstr(got, ", \"threads\": [\n   {\"tid\": 8, \"name\": \"worker-a\", "
				    "\"samples\": 3, \"calls\": 0, \"methods\": [\n    "
				    "{\"name\": \"work_a\", \"kind\": \"jit\", \"self\": 3, "));
	assert_non_null(strstr(got, "{\"tid\": 11, \"name\": \"\", \"samples\": 1, "));
	assert_non_null(strstr(got, "{\"tid\": 9, \"name\": \"other\", \"samples\": 1, "));
	free(got);
	got = threads_report(t->log, false, true);
	assert_null(strstr(got, "\"threads\""));
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_says_kept_apart_from_lost, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_threads_by_name, vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_text_matches_golden, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_json_matches_golden, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_counts_self_total_and_offsets,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_calls_inclusive_exclusive, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_filters_pid_and_time, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_text_escapes_control_bytes, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_says_which_threads_lost_calls, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_counts_summed_calls_and_spans, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_sums_threads_past_eight, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_json_keeps_utf8, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_start_out_of_range, vl_setup,
						vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_lines_where_every_sample_agrees,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_report_deep_stack_on_small_stack, vl_setup,
						vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
