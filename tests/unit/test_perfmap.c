// SPDX-License-Identifier: GPL-2.0
/* Unit tests for perf map parsing and for safe following of map files (user/sources/perfmap.c). */
#ifndef _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/perfmap_watch.h"
#include "sources/perfmap.h"
#include "sources/safeopen.h"
#include "base/util.h"

#define FIXTURES "tests/fixtures/perfmap/"

struct rec {
	uint64_t start;
	uint64_t size;
	size_t name_len;
	char name[96];	/* first bytes of the name, NUL-terminated */
};

/* What the callback saw: every entry counted, the first JT_ARRAY_SIZE(r) kept. */
struct got {
	size_t n;
	struct rec r[64];
};

static void record(void *ctx, const struct jt_perfmap_entry *e)
{
	struct got *g = ctx;

	if (g->n < JT_ARRAY_SIZE(g->r)) {
		struct rec *r = &g->r[g->n];
		size_t len = e->name_len < sizeof(r->name) - 1 ? e->name_len : sizeof(r->name) - 1;

		r->start = e->start;
		r->size = e->size;
		r->name_len = e->name_len;
		memcpy(r->name, e->name, len);
		r->name[len] = '\0';
	}
	g->n++;
}

static void assert_entry(const struct got *g, size_t i, uint64_t start, uint64_t size,
			 const char *name)
{
	assert_true(i < g->n && i < JT_ARRAY_SIZE(g->r));
	assert_int_equal(g->r[i].start, start);
	assert_int_equal(g->r[i].size, size);
	assert_int_equal(g->r[i].name_len, strlen(name));
	assert_string_equal(g->r[i].name, name);
}

static void assert_same_entries(const struct got *a, const struct got *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n && i < JT_ARRAY_SIZE(a->r); i++) {
		assert_int_equal(a->r[i].start, b->r[i].start);
		assert_int_equal(a->r[i].size, b->r[i].size);
		assert_int_equal(a->r[i].name_len, b->r[i].name_len);
		assert_string_equal(a->r[i].name, b->r[i].name);
	}
}

/* Whole contents of a fixture; the caller frees it. */
static char *read_fixture(const char *name, size_t *len)
{
	char path[256];
	struct stat st;
	char *buf;
	FILE *fp;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(fstat(fileno(fp), &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	*len = fread(buf, 1, (size_t)st.st_size, fp);
	assert_int_equal(*len, (size_t)st.st_size);
	fclose(fp);
	return buf;
}

/* Feed a whole fixture to a new parser; returns its bad line count. */
static uint64_t parse_fixture(const char *name, struct got *g)
{
	struct jt_perfmap_parser *p = jt_perfmap_parser__new();
	size_t len, n;
	uint64_t bad;
	char *buf;

	assert_non_null(p);
	buf = read_fixture(name, &len);
	n = jt_perfmap_parser__feed(p, buf, len, record, g);
	assert_int_equal(n, g->n);
	bad = jt_perfmap_parser__bad_lines(p);
	free(buf);
	jt_perfmap_parser__free(p);
	return bad;
}

static uint64_t parse_string(const char *s, struct got *g)
{
	struct jt_perfmap_parser *p = jt_perfmap_parser__new();
	uint64_t bad;
	size_t n;

	assert_non_null(p);
	n = jt_perfmap_parser__feed(p, s, strlen(s), record, g);
	assert_int_equal(n, g->n);
	bad = jt_perfmap_parser__bad_lines(p);
	jt_perfmap_parser__free(p);
	return bad;
}

static void test_parser_reads_plain_lines(void **state)
{
	struct got g = { 0 };

	(void)state;
	assert_int_equal(parse_fixture("plain.map", &g), 0);
	assert_int_equal(g.n, 3);
	assert_entry(&g, 0, 0x7f3a5c001000, 0x40, "jit_add");
	assert_entry(&g, 1, 0x7f3a5c001040, 0x1c0, "jit_loop_body");
	assert_entry(&g, 2, 0x7f3a5c001200, 0x8, "stub");
}

static void test_parser_accepts_0x_prefixed_start_and_size(void **state)
{
	struct got g = { 0 };

	(void)state;
	assert_int_equal(parse_fixture("erlang.map", &g), 0);
	assert_int_equal(g.n, 4);
	assert_entry(&g, 0, 0x7f8625a7b650, 0xf8, "$hot:fib/1");
	assert_entry(&g, 1, 0x7f8625a7b748, 0x1b0, "$hot:main/0");
	assert_entry(&g, 2, 0x7f8625a7b8f8, 0x20, "$global::call_bif_shared");
	assert_entry(&g, 3, 0x7f8625a7b918, 0xc8, "$erlang:apply/3");
}

static void test_parser_keeps_spaces_inside_names_and_strips_trailing_ones(void **state)
{
	struct got g = { 0 };

	(void)state;
	assert_int_equal(parse_fixture("node.map", &g), 0);
	assert_int_equal(g.n, 4);
	assert_entry(&g, 0, 0x7f80437e3b80, 0x378, "JS:~work /path/hot.js:2:14");
	assert_entry(&g, 1, 0x7f80437e4000, 0x2a0,
		     "JS:*fib file:///srv/app/lib/math util.js:10:3");
	assert_entry(&g, 2, 0x7f80437e42a0, 0x40, "Builtin:InterpreterEntryTrampoline");
	/* fields separated by runs of spaces and tabs */
	assert_entry(&g, 3, 0x7f80437e42e0, 0x90, "RegExp:[a-z]+ (?:x)");
}

static void test_parser_names_hotspot_methods_as_its_probes_do(void **state)
{
	struct got g = { 0 };

	(void)state;
	assert_int_equal(parse_fixture("hotspot.map", &g), 0);
	assert_int_equal(g.n, 10);
	/* HotSpot's own map (Compiler.perfmap): the return type goes */
	assert_entry(&g, 0, 0x7f7810ec71c0, 0x270,
		     "jdk.internal.misc.Unsafe.getReferenceVolatile(java.lang.Object, long)");
	assert_entry(&g, 1, 0x7f7810ec7620, 0x158, "Hot.a(long)");
	assert_entry(&g, 2, 0x7f7810ec89a0, 0x148, "Hot.main(java.lang.String[])");
	assert_entry(&g, 3, 0x7f7810ec8e40, 0x1c8, "java.lang.Object.<init>()");
	assert_entry(&g, 4, 0x7f7810ec9000, 0x100, "Hot.table(java.lang.String[][])");
	/* its stubs stay as they are */
	assert_entry(&g, 5, 0x7f7809400100, 0x60, "I2C/C2I adapters");
	assert_entry(&g, 6, 0x7f7809400200, 0x40, "throw_div0_exception Runtime1 stub");
	assert_entry(&g, 7, 0x7f7809400300, 0x20, "StubRoutines (1)");
	assert_entry(&g, 8, 0x7f7809400400, 0x20, "Interpreter");
	/* another writer's line of the same look is not HotSpot's: kept whole */
	assert_entry(&g, 9, 0x7f7809400500, 0x20, "long Hot.b(long)");
}

static void test_parser_counts_malformed_lines_and_ignores_blank_ones(void **state)
{
	struct got g = { 0 };

	(void)state;
	assert_int_equal(parse_fixture("garbage.map", &g), 11);
	assert_int_equal(g.n, 2);
	assert_entry(&g, 0, 0x7f0000001000, 0x10, "good_one");
	assert_entry(&g, 1, 0x7f0000001020, 0x20, "good_two");
}

static void test_parser_gives_same_entries_for_input_split_at_every_byte(void **state)
{
	const char in[] = "7f0000001000 10 first\n"
			  "0x7f0000001010 0X20 second name\r\n"
			  "\n"
			  "bad line\n"
			  "7f0000001030\t8\tthird  \n"
			  "7f0000001040 8 unfinished";
	const size_t len = sizeof(in) - 1;
	struct jt_perfmap_parser *p;
	struct got whole = { 0 };
	size_t cut, i;

	(void)state;
	p = jt_perfmap_parser__new();
	assert_non_null(p);
	jt_perfmap_parser__feed(p, in, len, record, &whole);
	assert_int_equal(whole.n, 3);
	assert_int_equal(jt_perfmap_parser__bad_lines(p), 1);
	assert_entry(&whole, 1, 0x7f0000001010, 0x20, "second name");
	jt_perfmap_parser__free(p);

	for (cut = 0; cut <= len; cut++) {
		struct got split = { 0 };
		size_t n;

		p = jt_perfmap_parser__new();
		assert_non_null(p);
		n = jt_perfmap_parser__feed(p, in, cut, record, &split);
		n += jt_perfmap_parser__feed(p, in + cut, len - cut, record, &split);
		assert_int_equal(n, whole.n);
		assert_int_equal(jt_perfmap_parser__bad_lines(p), 1);
		assert_same_entries(&whole, &split);
		jt_perfmap_parser__free(p);
	}

	/* and one byte per feed */
	{
		struct got bytes = { 0 };

		p = jt_perfmap_parser__new();
		assert_non_null(p);
		for (i = 0; i < len; i++)
			jt_perfmap_parser__feed(p, in + i, 1, record, &bytes);
		assert_int_equal(jt_perfmap_parser__bad_lines(p), 1);
		assert_same_entries(&whole, &bytes);
		/* the unfinished line is parsed once its newline arrives */
		assert_int_equal(jt_perfmap_parser__feed(p, "\n", 1, record, &bytes), 1);
		assert_entry(&bytes, 3, 0x7f0000001040, 0x8, "unfinished");
		jt_perfmap_parser__free(p);
	}
}

static void test_parser_strips_crlf_line_endings(void **state)
{
	struct got g = { 0 };

	(void)state;
	assert_int_equal(parse_string("1000 10 dos_name\r\n2000 20 spaced name \r\n\r\n", &g), 0);
	assert_int_equal(g.n, 2);
	assert_entry(&g, 0, 0x1000, 0x10, "dos_name");
	assert_entry(&g, 1, 0x2000, 0x20, "spaced name");
}

/* "1 1 nnn...\n" whose line (without the newline) is len bytes long. */
static char *line_of_length(size_t len)
{
	char *s = malloc(len + 2);

	assert_non_null(s);
	assert_true(len > 4);
	memcpy(s, "1 1 ", 4);
	memset(s + 4, 'n', len - 4);
	s[len] = '\n';
	s[len + 1] = '\0';
	return s;
}

static void test_parser_skips_over_long_line_and_parses_the_next(void **state)
{
	char *longest = line_of_length(JT_PERFMAP_LINE_MAX);
	char *too_long = line_of_length(JT_PERFMAP_LINE_MAX + 1);
	struct jt_perfmap_parser *p;
	struct got g = { 0 };
	size_t i;

	(void)state;
	p = jt_perfmap_parser__new();
	assert_non_null(p);

	/* the limit itself is allowed */
	assert_int_equal(jt_perfmap_parser__feed(p, longest, strlen(longest), record, &g), 1);
	assert_int_equal(g.r[0].name_len, JT_PERFMAP_LINE_MAX - 4);

	/* one byte more, all in one feed */
	assert_int_equal(jt_perfmap_parser__feed(p, too_long, strlen(too_long), record, &g), 0);
	assert_int_equal(jt_perfmap_parser__bad_lines(p), 1);
	assert_int_equal(jt_perfmap_parser__feed(p, "2 2 after\n", 10, record, &g), 1);
	assert_entry(&g, 1, 2, 2, "after");

	/* the same line in small feeds: counted once, skipped up to its late newline */
	for (i = 0; i < JT_PERFMAP_LINE_MAX + 1; i += 100) {
		size_t n = JT_PERFMAP_LINE_MAX + 1 - i < 100 ? JT_PERFMAP_LINE_MAX + 1 - i : 100;

		assert_int_equal(jt_perfmap_parser__feed(p, too_long + i, n, record, &g), 0);
	}
	assert_int_equal(jt_perfmap_parser__bad_lines(p), 2);
	assert_int_equal(jt_perfmap_parser__feed(p, "\n3 3 next\n", 10, record, &g), 1);
	assert_entry(&g, 2, 3, 3, "next");

	/* a kept partial line that reaches the limit, then one byte more */
	assert_int_equal(jt_perfmap_parser__feed(p, "4 4 ", 4, record, &g), 0);
	assert_int_equal(jt_perfmap_parser__feed(p, longest + 4, JT_PERFMAP_LINE_MAX - 4, record,
						 &g), 0);
	assert_int_equal(jt_perfmap_parser__bad_lines(p), 2);
	assert_int_equal(jt_perfmap_parser__feed(p, "n", 1, record, &g), 0);
	assert_int_equal(jt_perfmap_parser__bad_lines(p), 3);
	assert_int_equal(jt_perfmap_parser__feed(p, "nn\n5 5 last\n", 12, record, &g), 1);
	assert_entry(&g, 3, 5, 5, "last");
	assert_int_equal(jt_perfmap_parser__bad_lines(p), 3);

	jt_perfmap_parser__free(p);
	free(longest);
	free(too_long);
}

static void test_parser_rejects_values_that_overflow(void **state)
{
	const char *in = "10000000000000000 1 start_17_digits\n"
			 "1 10000000000000000 size_17_digits\n"
			 "0x10000000000000000 1 prefixed_17_digits\n"
			 "ffffffffffffffff 1 end_past_2_64\n"
			 "fffffffffffffff0 10 end_is_2_64\n"
			 "1 ffffffffffffffff end_wraps\n"
			 "fffffffffffffff0 f ends_at_max\n"
			 "00000000000000000000001 1 leading_zeros\n";
	struct got g = { 0 };

	(void)state;
	assert_int_equal(parse_string(in, &g), 6);
	assert_int_equal(g.n, 2);
	assert_entry(&g, 0, 0xfffffffffffffff0, 0xf, "ends_at_max");
	assert_entry(&g, 1, 1, 1, "leading_zeros");
}

static void test_parser_reset_forgets_partial_line(void **state)
{
	struct jt_perfmap_parser *p = jt_perfmap_parser__new();
	struct got g = { 0 };

	(void)state;
	assert_non_null(p);
	assert_int_equal(jt_perfmap_parser__feed(p, "1000 1", 6, record, &g), 0);
	jt_perfmap_parser__reset(p);
	assert_int_equal(jt_perfmap_parser__feed(p, "2000 20 fresh\n", 14, record, &g), 1);
	assert_entry(&g, 0, 0x2000, 0x20, "fresh");
	assert_int_equal(jt_perfmap_parser__bad_lines(p), 0);
	jt_perfmap_parser__free(p);
}

/* ---- files ---- */

struct tmp {
	char dir[64];
	char pid_map[64];	/* /tmp/perf-PID.map written by a test, removed in teardown */
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	strcpy(t->dir, "/tmp/jt_test_perfmap.XXXXXX");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;
	struct dirent *de;
	DIR *d;

	if (t->pid_map[0])
		unlink(t->pid_map);
	d = opendir(t->dir);
	if (d) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	rmdir(t->dir);
	free(t);
	return 0;
}

static void tmp_path(const struct tmp *t, const char *name, char *buf, size_t len)
{
	assert_true((size_t)snprintf(buf, len, "%s/%s", t->dir, name) < len);
}

static void write_file(const char *path, int flags, const char *data)
{
	size_t len = strlen(data);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void test_file_follows_appends_partial_lines_and_rewrites(void **state)
{
	struct tmp *t = *state;
	struct jt_perfmap_file *f;
	struct got g = { 0 };
	char path[128];

	tmp_path(t, "perf-1.map", path, sizeof(path));
	write_file(path, O_TRUNC, "1000 10 a\n2000 20 b\n");
	f = jt_perfmap_file__open(path, getuid());
	assert_non_null(f);
	assert_int_equal(jt_perfmap_file__poll(f, record, &g), 2);
	assert_entry(&g, 1, 0x2000, 0x20, "b");

	write_file(path, O_APPEND, "3000 30 c\n4000 4");
	assert_int_equal(jt_perfmap_file__poll(f, record, &g), 1);
	assert_entry(&g, 2, 0x3000, 0x30, "c");
	write_file(path, O_APPEND, "0 d\n");
	assert_int_equal(jt_perfmap_file__poll(f, record, &g), 1);
	assert_entry(&g, 3, 0x4000, 0x40, "d");
	assert_int_equal(jt_perfmap_file__poll(f, record, &g), 0);

	/* rewritten shorter while a partial line is pending: that line must not leak in */
	write_file(path, O_APPEND, "5000 5");
	assert_int_equal(jt_perfmap_file__poll(f, record, &g), 0);
	write_file(path, O_TRUNC, "9000 90 z\n");
	assert_int_equal(jt_perfmap_file__poll(f, record, &g), 1);
	assert_entry(&g, 4, 0x9000, 0x90, "z");
	assert_int_equal(jt_perfmap_file__bad_lines(f), 0);
	assert_int_equal(g.n, 5);
	jt_perfmap_file__free(f);
}

static void test_file_poll_reads_at_most_read_max_bytes(void **state)
{
	/* fixed-width lines: "%012x 10 f%07u\n" */
	const size_t line_len = 12 + 1 + 2 + 1 + 8 + 1;
	const size_t lines = (JT_PERFMAP_READ_MAX + JT_PERFMAP_READ_MAX / 2) / line_len;
	struct tmp *t = *state;
	struct jt_perfmap_file *f;
	struct got g = { 0 };
	char path[128];
	char *data;
	size_t i;
	int n1, n2;

	data = malloc(lines * line_len + 1);
	assert_non_null(data);
	for (i = 0; i < lines; i++)
		snprintf(data + i * line_len, line_len + 1, "%012zx 10 f%07zu\n", 0x10000 + i * 16,
			 i);
	tmp_path(t, "big.map", path, sizeof(path));
	write_file(path, O_TRUNC, data);
	free(data);

	f = jt_perfmap_file__open(path, getuid());
	assert_non_null(f);
	n1 = jt_perfmap_file__poll(f, record, &g);
	assert_false(jt_perfmap_file__at_end(f));	/* cut short: more is waiting */
	n2 = jt_perfmap_file__poll(f, record, &g);
	assert_true(jt_perfmap_file__at_end(f));
	assert_int_equal(n1, JT_PERFMAP_READ_MAX / line_len);
	assert_int_equal((size_t)n1 + (size_t)n2, lines);
	assert_int_equal(g.n, lines);
	assert_int_equal(jt_perfmap_file__bad_lines(f), 0);
	assert_entry(&g, 1, 0x10010, 0x10, "f0000001");
	jt_perfmap_file__free(f);
}

/* The earliest and latest time mapwatch gave the lines of one poll, and the latest time
 * it said they were read by. */
struct times {
	size_t n;
	uint64_t min, max, hi;
};

static int on_timed(void *ctx, const struct jt_event *ev)
{
	struct times *t = ctx;
	uint64_t lo = ev->ts, hi = ev->latest_ts;

	if (!t->n++ || lo < t->min)
		t->min = lo;
	if (lo > t->max)
		t->max = lo;
	if (hi > t->hi)
		t->hi = hi;
	return 0;
}

/* What the ring buffer says when pid exec'd a new program at ts. */
static void see_exec(struct jt_mapwatch *mw, uint32_t pid, uint64_t ts)
{
	union jt_event_buf b = { .ev = { .ts = ts, .len = JT_EVENT_FIXED,
					 .type = JT_EV_EXEC, .pid = pid, .tid = pid } };

	jt_mapwatch__see(mw, &b.ev);
}

/* The test's clock: a read takes 1 ns past the poll's time. */
static uint64_t clock_now;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return clock_now + 1;
}

/*
 * A map larger than one poll's budget (a process with a big map when recording begins,
 * e.g. Node's after loading many functions): the lines the first poll left unread were in
 * the file already, so they are as old as the program, not as the first poll. Only a poll
 * that read to the end dates what comes after it.
 */
static void test_mapwatch_times_lines_left_by_a_cut_short_poll_as_before_it(void **state)
{
	const size_t line_len = 12 + 1 + 2 + 1 + 8 + 1, lines = 2 * JT_PERFMAP_READ_MAX / line_len;
	struct tmp *t = *state;
	struct times got = { 0 };
	struct jt_mapwatch *mw;
	char *data;
	size_t i;

	data = malloc(lines * line_len + 1);
	assert_non_null(data);
	for (i = 0; i < lines; i++)
		snprintf(data + i * line_len, line_len + 1, "%012zx 10 f%07zu\n", 0x10000 + i * 16,
			 i);
	snprintf(t->pid_map, sizeof(t->pid_map), "/tmp/perf-%d.map", (int)getpid());
	unlink(t->pid_map);
	write_file(t->pid_map, O_EXCL, data);
	free(data);

	mw = jt_mapwatch__new(fake_clock, NULL);
	assert_non_null(mw);
	see_exec(mw, getpid(), 5);	/* the program began at 5 */
	clock_now = 100;
	/* opens it: reads the budget's worth */
	jt_mapwatch__poll(mw, 100, 0, UINT64_MAX, on_timed, &got);
	assert_int_equal(got.n, JT_PERFMAP_READ_MAX / line_len);
	assert_int_equal(got.max, 5);
	got = (struct times){ 0 };
	clock_now = 200;
	/* the rest, there since before 100 */
	jt_mapwatch__poll(mw, 200, 0, UINT64_MAX, on_timed, &got);
	clock_now = 300;
	jt_mapwatch__poll(mw, 300, 0, UINT64_MAX, on_timed, &got);
	assert_int_equal(got.n, lines - JT_PERFMAP_READ_MAX / line_len);
	assert_int_equal(got.min, 5);
	assert_int_equal(got.max, 5);
	got = (struct times){ 0 };
	write_file(t->pid_map, O_APPEND, "7f0000001000 20 late\n");
	clock_now = 400;
	/* written after the read at 300 reached the end */
	jt_mapwatch__poll(mw, 400, 0, UINT64_MAX, on_timed, &got);
	assert_int_equal(got.n, 1);
	assert_int_equal(got.min, 300);
	assert_int_equal(got.hi, 401);		/* and before the read at 400 that found it */
	jt_mapwatch__free(mw);
}

/* A clock that moves 1 ns each time it is read. */
static uint64_t ticks;

static uint64_t ticking_clock(void *ctx)
{
	(void)ctx;
	return ++ticks;
}

struct starts {
	size_t n;
	uint64_t v[4096];
};

static int on_start(void *ctx, const struct jt_event *ev)
{
	struct starts *s = ctx;

	if (s->n < JT_ARRAY_SIZE(s->v))
		s->v[s->n++] = ev->start;
	return 0;
}

/*
 * A poll stops once its time is up, after the line it is at (the loop, signals and -d must
 * not wait for a map): each takes a few lines, and the next goes on from the line after,
 * mid-chunk, so that every line of the map comes once, in order.
 */
static void test_mapwatch_poll_stops_in_time_and_goes_on_from_the_next_line(void **state)
{
	const size_t lines = 3000;
	struct tmp *t = *state;
	struct starts *got = calloc(1, sizeof(*got));
	struct jt_mapwatch *mw;
	char line[64];
	size_t i, before, polls = 0, most = 0;
	int fd;

	assert_non_null(got);
	snprintf(t->pid_map, sizeof(t->pid_map), "/tmp/perf-%d.map", (int)getpid());
	unlink(t->pid_map);
	fd = open(t->pid_map, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	for (i = 0; i < lines; i++) {
		int n = snprintf(line, sizeof(line), "%x 10 f%zu\n", (unsigned int)(0x10000 + i * 16), i);

		assert_int_equal(write(fd, line, n), n);
	}
	close(fd);
	mw = jt_mapwatch__new(ticking_clock, NULL);
	assert_non_null(mw);
	see_exec(mw, getpid(), 5);
	while (got->n < lines && polls < 10 * lines) {
		before = got->n;
		/* each line read reads the clock once: about 20 lines a poll */
		jt_mapwatch__poll(mw, 100 + polls, 0, ticks + 20, on_start, got);
		most = got->n - before > most ? got->n - before : most;
		polls++;
	}
	print_message("%zu lines in %zu polls, at most %zu a poll\n", got->n, polls, most);
	assert_int_equal(got->n, lines);
	assert_true(most <= 20 && polls >= lines / 20);
	for (i = 0; i < lines; i++)
		assert_int_equal(got->v[i], 0x10000 + i * 16);
	jt_mapwatch__free(mw);
	free(got);
}

static void test_file_open_refuses_symlinks(void **state)
{
	struct tmp *t = *state;
	char real[128], link[128], via_dir[160];
	struct jt_perfmap_file *f;

	tmp_path(t, "real.map", real, sizeof(real));
	write_file(real, O_TRUNC, "1000 10 a\n");
	f = jt_perfmap_file__open(real, getuid());
	assert_non_null(f);
	jt_perfmap_file__free(f);

	tmp_path(t, "link.map", link, sizeof(link));
	assert_int_equal(symlink(real, link), 0);
	errno = 0;
	assert_null(jt_perfmap_file__open(link, getuid()));
	assert_int_equal(errno, ELOOP);

	/* a symlink anywhere on the path, not only the last component */
	tmp_path(t, "dirlink", link, sizeof(link));
	assert_int_equal(symlink(".", link), 0);
	snprintf(via_dir, sizeof(via_dir), "%s/real.map", link);
	errno = 0;
	assert_null(jt_perfmap_file__open(via_dir, getuid()));
	assert_int_equal(errno, ELOOP);
}

static void test_file_open_refuses_fifo_without_blocking(void **state)
{
	struct tmp *t = *state;
	char path[128];

	tmp_path(t, "fifo.map", path, sizeof(path));
	assert_int_equal(mkfifo(path, 0644), 0);
	alarm(10);	/* a blocking open would hang: let SIGALRM fail the run instead */
	errno = 0;
	assert_null(jt_perfmap_file__open(path, getuid()));
	alarm(0);
	assert_int_equal(errno, EINVAL);
}

static void test_file_open_refuses_directory_and_missing_file(void **state)
{
	struct tmp *t = *state;
	char path[128];

	errno = 0;
	assert_null(jt_perfmap_file__open(t->dir, getuid()));
	assert_int_equal(errno, EINVAL);
	tmp_path(t, "missing.map", path, sizeof(path));
	errno = 0;
	assert_null(jt_perfmap_file__open(path, getuid()));
	assert_int_equal(errno, ENOENT);
}

static void test_file_open_refuses_file_owned_by_another_uid(void **state)
{
	struct tmp *t = *state;
	struct jt_perfmap_file *f;
	char path[128];

	if (geteuid() != 0) {
		print_message("skipped: giving a file to another uid needs root (chown)\n");
		skip();
	}
	tmp_path(t, "owned.map", path, sizeof(path));
	write_file(path, O_TRUNC, "1000 10 a\n");
	assert_int_equal(chown(path, 12345, 12345), 0);

	errno = 0;
	assert_null(jt_perfmap_file__open(path, 54321));
	assert_int_equal(errno, EPERM);
	f = jt_perfmap_file__open(path, 12345);
	assert_non_null(f);
	jt_perfmap_file__free(f);

	/* root-owned maps are accepted for any process */
	assert_int_equal(chown(path, 0, 0), 0);
	f = jt_perfmap_file__open(path, 54321);
	assert_non_null(f);
	jt_perfmap_file__free(f);
}

static void test_file_open_pid_opens_own_map_and_refuses_planted_symlink(void **state)
{
	struct tmp *t = *state;
	struct jt_perfmap_file *f;
	struct got g = { 0 };
	char real[128];

	snprintf(t->pid_map, sizeof(t->pid_map), "/tmp/perf-%d.map", (int)getpid());
	unlink(t->pid_map);
	write_file(t->pid_map, O_EXCL, "7f0000002000 40 own_map_entry\n");
	f = jt_perfmap_file__open_pid(getpid(), getuid());
	assert_non_null(f);
	assert_int_equal(jt_perfmap_file__poll(f, record, &g), 1);
	assert_entry(&g, 0, 0x7f0000002000, 0x40, "own_map_entry");
	jt_perfmap_file__free(f);

	unlink(t->pid_map);
	errno = 0;
	assert_null(jt_perfmap_file__open_pid(getpid(), getuid()));
	assert_int_equal(errno, ENOENT);

	tmp_path(t, "real.map", real, sizeof(real));
	write_file(real, O_TRUNC, "1000 10 a\n");
	assert_int_equal(symlink(real, t->pid_map), 0);
	errno = 0;
	assert_null(jt_perfmap_file__open_pid(getpid(), getuid()));
	assert_int_equal(errno, ELOOP);

	errno = 0;
	assert_null(jt_perfmap_file__open_pid(0, getuid()));
	assert_int_equal(errno, EINVAL);
}

/*
 * A map last written before its process began is an earlier process's of the same pid
 * (pids are reused, maps never removed): not read until the process writes it.
 */
static void test_file_open_pid_refuses_a_map_older_than_its_process(void **state)
{
	struct tmp *t = *state;
	struct jt_perfmap_file *f;
	struct timespec old[2] = { { 946684800, 0 }, { 946684800, 0 } };	/* 2000-01-01 */

	snprintf(t->pid_map, sizeof(t->pid_map), "/tmp/perf-%d.map", (int)getpid());
	unlink(t->pid_map);
	write_file(t->pid_map, O_EXCL, "7f0000002000 40 someone_elses\n");
	assert_int_equal(utimensat(AT_FDCWD, t->pid_map, old, 0), 0);
	errno = 0;
	assert_null(jt_perfmap_file__open_pid(getpid(), getuid()));
	assert_int_equal(errno, ESTALE);
	/* written now, by this process: its own */
	write_file(t->pid_map, O_TRUNC, "7f0000002000 40 own_map_entry\n");
	f = jt_perfmap_file__open_pid(getpid(), getuid());
	assert_non_null(f);
	jt_perfmap_file__free(f);
}

/*
 * A map written as its process ended is read where the process had it, once /proc no
 * longer leads there: a process of jitrace's own root, and a map written since it began.
 */
static void test_map_of_a_process_gone_is_found_where_it_was(void **state)
{
	struct tmp *t = *state;
	struct jt_perfmap_file *f;
	struct jt_mapsite site;
	struct timespec old[2] = { { 946684800, 0 }, { 946684800, 0 } };

	assert_int_equal(jt_safeopen__mapsite(getpid(), &site), 0);
	assert_true(site.host);
	assert_int_equal(site.nstgid, getpid());
	assert_true(site.started > 0);
	snprintf(t->pid_map, sizeof(t->pid_map), "/tmp/perf-%d.map", (int)getpid());
	unlink(t->pid_map);
	write_file(t->pid_map, O_EXCL, "7f0000002000 40 at_exit\n");
	f = jt_perfmap_file__open_gone(&site, getuid());
	assert_non_null(f);
	jt_perfmap_file__free(f);
	assert_int_equal(utimensat(AT_FDCWD, t->pid_map, old, 0), 0);
	errno = 0;
	assert_null(jt_perfmap_file__open_gone(&site, getuid()));
	assert_int_equal(errno, ESTALE);
	site.host = false;	/* another root: gone with it */
	errno = 0;
	assert_null(jt_perfmap_file__open_gone(&site, getuid()));
	assert_int_equal(errno, EXDEV);
}

static void test_perfmap_path_names_map_inside_process_root(void **state)
{
	char want[64], buf[64];

	(void)state;
	snprintf(want, sizeof(want), "/proc/%d/root/tmp/perf-%d.map", (int)getpid(),
		 (int)getpid());
	assert_int_equal(jt_perfmap__path(getpid(), buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
	assert_int_equal(jt_perfmap__path(getpid(), buf, strlen(want)), -ENAMETOOLONG);
	assert_int_equal(jt_perfmap__path(-1, buf, sizeof(buf)), -EINVAL);
}

/*
 * Child side of the namespace test: a new pid and mount namespace whose first process
 * (NStgid 1) writes /tmp/perf-1.map on a private tmpfs, reports its outer pid on
 * `ready` (or -1 if namespaces are unavailable) and lives until `done` closes.
 */
static void __attribute__((noreturn)) ns_child(int ready, int done)
{
	int gc_ready[2];
	pid_t gc = -1;
	char c;

	if (unshare(CLONE_NEWNS | CLONE_NEWPID) ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k") || pipe(gc_ready))
		goto out;
	gc = fork();
	if (gc == 0) {
		int fd = open("/tmp/perf-1.map", O_WRONLY | O_CREAT | O_EXCL, 0644);
		const char line[] = "7f0000003000 30 ns_only_entry\n";

		if (fd < 0 || write(fd, line, sizeof(line) - 1) != sizeof(line) - 1)
			_exit(1);
		close(fd);
		close(gc_ready[0]);
		close(gc_ready[1]);	/* tells the parent the map is there */
		if (read(done, &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(gc_ready[1]);
	if (gc < 0 || read(gc_ready[0], &c, 1) != 0)
		gc = -1;
out:
	if (write(ready, &gc, sizeof(gc)) != sizeof(gc))
		_exit(1);
	if (gc > 0)
		waitpid(gc, NULL, 0);
	_exit(0);
}

static void test_file_open_pid_uses_nstgid_inside_process_root(void **state)
{
	int ready[2], done[2], poll_n = -1, path_ok = 0;
	struct jt_perfmap_file *f = NULL;
	char want[64], buf[64];
	struct got g = { 0 };
	pid_t child, gc = -1;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: pid and mount namespaces need root\n");
		skip();
	}
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(done), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(ready[0]);
		close(done[1]);
		ns_child(ready[1], done[0]);
	}
	close(ready[1]);
	close(done[0]);
	if (read(ready[0], &gc, sizeof(gc)) != sizeof(gc))
		gc = -1;
	if (gc > 0) {
		snprintf(want, sizeof(want), "/proc/%d/root/tmp/perf-1.map", (int)gc);
		path_ok = jt_perfmap__path(gc, buf, sizeof(buf)) == 0 && !strcmp(buf, want);
		f = jt_perfmap_file__open_pid(gc, getuid());
		if (f)
			poll_n = jt_perfmap_file__poll(f, record, &g);
		jt_perfmap_file__free(f);
	}
	/* let both children go before asserting, so a failure leaves nothing behind */
	close(done[1]);
	close(ready[0]);
	waitpid(child, NULL, 0);

	if (gc <= 0) {
		print_message("skipped: cannot create pid and mount namespaces here\n");
		skip();
	}
	assert_true(path_ok);
	assert_int_equal(poll_n, 1);
	assert_entry(&g, 0, 0x7f0000003000, 0x30, "ns_only_entry");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parser_reads_plain_lines),
		cmocka_unit_test(test_parser_accepts_0x_prefixed_start_and_size),
		cmocka_unit_test(test_parser_keeps_spaces_inside_names_and_strips_trailing_ones),
		cmocka_unit_test(test_parser_names_hotspot_methods_as_its_probes_do),
		cmocka_unit_test(test_parser_counts_malformed_lines_and_ignores_blank_ones),
		cmocka_unit_test(test_parser_gives_same_entries_for_input_split_at_every_byte),
		cmocka_unit_test(test_parser_strips_crlf_line_endings),
		cmocka_unit_test(test_parser_skips_over_long_line_and_parses_the_next),
		cmocka_unit_test(test_parser_rejects_values_that_overflow),
		cmocka_unit_test(test_parser_reset_forgets_partial_line),
		cmocka_unit_test_setup_teardown(test_file_follows_appends_partial_lines_and_rewrites,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_file_poll_reads_at_most_read_max_bytes,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(
			test_mapwatch_times_lines_left_by_a_cut_short_poll_as_before_it, tmp_setup,
			tmp_teardown),
		cmocka_unit_test_setup_teardown(
			test_mapwatch_poll_stops_in_time_and_goes_on_from_the_next_line, tmp_setup,
			tmp_teardown),
		cmocka_unit_test_setup_teardown(test_file_open_refuses_symlinks, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_file_open_refuses_fifo_without_blocking,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_file_open_refuses_directory_and_missing_file,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_file_open_refuses_file_owned_by_another_uid,
						tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(
			test_file_open_pid_refuses_a_map_older_than_its_process, tmp_setup,
			tmp_teardown),
		cmocka_unit_test_setup_teardown(
			test_map_of_a_process_gone_is_found_where_it_was, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(
			test_file_open_pid_opens_own_map_and_refuses_planted_symlink, tmp_setup,
			tmp_teardown),
		cmocka_unit_test(test_perfmap_path_names_map_inside_process_root),
		cmocka_unit_test(test_file_open_pid_uses_nstgid_inside_process_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
