// SPDX-License-Identifier: GPL-2.0
/* `jitrace dump`: every record type's line against a golden file (lines records in their own
 * test); truncated, corrupt logs. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "views/dump.h"
#include "jt_events.h"
#include "log/log.h"
#include "base/util.h"

#define GOLDEN "tests/fixtures/dump/golden.txt"
#define T0 1000000000ULL	/* the header's start_ns: dump's time zero */

struct tmp {
	char dir[256];
	char log[512];		/* the log each test writes */
	char err[512];		/* stderr, captured */
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t || scratch_make(t->dir, sizeof(t->dir), "dump")) {
		free(t);
		return -1;
	}
	snprintf(t->log, sizeof(t->log), "%s/t.jtl", t->dir);
	snprintf(t->err, sizeof(t->err), "%s/stderr.txt", t->dir);
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	scratch_remove(t->dir);
	free(t);
	return 0;
}

/* ---- building records ---- */

union recbuf {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[1024];
};

static void *rec(union recbuf *rb, unsigned type, size_t fixed, size_t var, uint64_t ts)
{
	size_t size = jt_round8(fixed + var);

	memset(rb->b, 0, size);
	rb->h.type = type;
	rb->h.size = size;
	rb->h.ts = T0 + ts;
	return rb;
}

static void add(struct jt_log_writer *w, const union recbuf *rb)
{
	assert_int_equal(jt_logw__append(w, &rb->h), 0);
}

static void add_method(struct jt_log_writer *w, uint64_t ts, uint64_t id, uint64_t start,
		       uint64_t size, int64_t load, unsigned src, uint64_t agent_id,
		       const char *name, size_t name_len)
{
	union recbuf rb;
	struct jt_rec_method *m = rec(&rb, JT_REC_METHOD, sizeof(*m), name_len, ts);

	m->id = id;
	m->pid = 4242;
	m->start = start;
	m->size = size;
	m->load_ts = T0 + load;
	m->src = src;
	m->agent_id = agent_id;
	m->name_len = name_len;
	memcpy(m->name, name, name_len);
	add(w, &rb);
}

static void add_call(struct jt_log_writer *w, unsigned type, uint64_t ts, uint64_t id)
{
	union recbuf rb;
	struct jt_rec_call *c = rec(&rb, type, sizeof(*c), 0, ts);

	c->pid = 4242;
	c->tid = 4243;
	c->id = id;
	add(w, &rb);
}

static void add_sample(struct jt_log_writer *w, uint64_t ts, uint32_t tid, uint32_t cpu,
		       const struct jt_frame *frames, unsigned nr)
{
	union recbuf rb;
	struct jt_rec_sample *s = rec(&rb, JT_REC_SAMPLE, sizeof(*s), nr * sizeof(*frames), ts);

	s->pid = 4242;
	s->tid = tid;
	s->cpu = cpu;
	s->nr_frames = nr;
	if (nr)
		memcpy(s->frames, frames, nr * sizeof(*frames));
	add(w, &rb);
}

/*
 * The log behind the golden file: every record type once, some twice. Not clean: the
 * records are flushed but the writer stops there, as if killed, without the end record.
 * Broken: one more sample, at 5200, whose frames name a module nothing defined and have
 * no kind, as a log that broke its promises may hold.
 */
static void write_every_type(const char *path, bool clean, bool broken_sample)
{
	static const char odd_name[] = "LazyCompile:*run /tmp/a b.js:3\n\t\x01\xff\\end";
	static const char cmdline[] = "java -Xint -jar app.jar";
	static const char exec_path[] = "/usr/lib/jvm/bin/java";
	static const char mod_path[] = "/usr/lib/jvm/lib/server/libjvm.so";
	const struct jt_frame frames[] = {
		{ JT_FRAME_REF(JT_FRAME_KERNEL, 0), 0xffffffff81a00b2cULL },
		{ JT_FRAME_REF(JT_FRAME_METHOD, 1), 0x24 },
		{ JT_FRAME_REF(JT_FRAME_MODULE, 1), 0x5e1234 },
		{ JT_FRAME_REF(JT_FRAME_SYMBOL, 1), 0x3c },
		{ JT_FRAME_REF(JT_FRAME_USER, 0), 0x401a2b },
	};
	/* frames a log that broke its promises may hold: an undefined module, no kind */
	const struct jt_frame broken[] = {
		{ JT_FRAME_REF(JT_FRAME_MODULE, 9), 0x10 },
		{ JT_FRAME_REF(0, 5), 0x20 },
	};
	struct jt_log_header h = { .start_ns = T0, .ncpus = 2, .sample_hz = 99,
				   .flags = JT_LOG_F_CALLS | JT_LOG_F_OFFCPU };
	struct jt_log_writer *w = jt_logw__create(path, &h, false);
	static const char sym_name[] = "JavaCalls::call_helper";
	struct jt_rec_module *mod;
	struct jt_rec_symbol *sym;
	struct jt_rec_drop *drop;
	struct jt_rec_exec *ex;
	struct jt_rec_proc *p;
	union recbuf rb;

	assert_non_null(w);
	p = rec(&rb, JT_REC_PROC, sizeof(*p), strlen(cmdline), 0);
	p->pid = 4242;
	strcpy(p->comm, "java");
	p->cmdline_len = strlen(cmdline);
	memcpy(p->cmdline, cmdline, p->cmdline_len);
	add(w, &rb);

	ex = rec(&rb, JT_REC_EXEC, sizeof(*ex), strlen(exec_path), 1000);
	ex->pid = 4242;
	memcpy(ex->comm, "Web Content,x\\y", 15);	/* more fields follow comm: escaped */
	ex->path_len = strlen(exec_path);
	memcpy(ex->path, exec_path, ex->path_len);
	add(w, &rb);

	mod = rec(&rb, JT_REC_MODULE, sizeof(*mod), strlen(mod_path), 2000);
	mod->id = 1;
	mod->pid = 4242;
	mod->start = 0x7f3a10000000ULL;
	mod->end = 0x7f3a10e00000ULL;
	mod->pgoff = 0;
	mod->path_len = strlen(mod_path);
	memcpy(mod->path, mod_path, mod->path_len);
	add(w, &rb);

	sym = rec(&rb, JT_REC_SYMBOL, sizeof(*sym), strlen(sym_name), 2500);
	sym->id = 1;
	sym->pid = 4242;
	sym->module = 1;
	sym->start = 0x5e1100;
	sym->size = 0x2a0;
	sym->name_len = strlen(sym_name);
	memcpy(sym->name, sym_name, sym->name_len);
	add(w, &rb);

	add_method(w, 3000, 1, 0x7f3a2c001000ULL, 0x180, -500, JT_SRC_AGENT, 17,
		   "Lcom/example/Hot;::spin(I)V", 27);
	add_method(w, 3500, 2, 0x7f3a2c002000ULL, 0x40, 3400, JT_SRC_PERFMAP, 0, odd_name,
		   sizeof(odd_name) - 1);
	add_method(w, 3600, 3, 0x7f3a2c003000ULL, 0x10, 3600, JT_SRC_USDT, 5, "", 0);
	add_call(w, JT_REC_ENTER, 4000, 1);
	add_sample(w, 5000, 4243, 1, frames, JT_ARRAY_SIZE(frames));
	add_sample(w, 5100, 4244, 0, NULL, 0);
	if (broken_sample)
		add_sample(w, 5200, 4244, 0, broken, JT_ARRAY_SIZE(broken));
	add_call(w, JT_REC_LEAVE, 6000, 1);
	add_call(w, JT_REC_UNLOAD, 7000, 1);

	drop = rec(&rb, JT_REC_DROP, sizeof(*drop), 0, 8000);
	drop->what = JT_DROP_REORDER;
	drop->count = 3;
	add(w, &rb);
	drop->what = 99;	/* from a newer jitrace */
	drop->count = 1;
	add(w, &rb);
	drop->what = JT_DROP_CALLS_FULL;	/* one thread's calls lost to its full ring */
	drop->tid = 77;
	drop->count = 1200;
	add(w, &rb);

	rec(&rb, 42, 32, 0, 9000);	/* a record type from a newer jitrace */
	add(w, &rb);

	rec(&rb, JT_REC_EXIT, sizeof(struct jt_rec_exit), 0, 10000);
	((struct jt_rec_exit *)&rb)->pid = 4242;
	add(w, &rb);
	if (clean) {
		assert_int_equal(jt_logw__close(w), 0);
	} else {
		assert_int_equal(jt_logw__flush(w), 0);
		jt_logw__abort(w);
	}
}

/* dump into memory; stderr into t->err. Returns dump's result; *out is malloc'd. */
static int dump_flags_to_mem(struct tmp *t, unsigned int flags, char **out)
{
	size_t len;
	FILE *f = open_memstream(out, &len);
	int saved, fd, ret;

	assert_non_null(f);
	fflush(stderr);
	saved = dup(2);
	fd = open(t->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	ret = jt_dump(f, t->log, flags);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fclose(f);
	return ret;
}

static int dump_to_mem(struct tmp *t, char **out)
{
	return dump_flags_to_mem(t, 0, out);
}

static void dump_prints_every_record_type_as_the_golden_file(void **state)
{
	struct tmp *t = *state;
	char *out, *golden, *err;
	size_t len;

	write_every_type(t->log, true, false);
	assert_int_equal(dump_to_mem(t, &out), 0);
	golden = slurp(GOLDEN, &len);
	assert_string_equal(out, golden);
	err = slurp(t->err, &len);
	assert_string_equal(err, "");
	free(err);
	free(golden);
	free(out);
}

static void dump_of_truncated_log_shows_whole_blocks_and_says_so(void **state)
{
	struct tmp *t = *state;
	char *out, *golden, *err, *last;
	struct stat st;
	size_t len;

	write_every_type(t->log, true, false);
	assert_int_equal(stat(t->log, &st), 0);
	assert_int_equal(truncate(t->log, st.st_size - 3), 0);	/* the one block, cut */
	assert_int_equal(dump_to_mem(t, &out), 0);
	assert_string_equal(out, "");
	err = slurp(t->err, &len);
	assert_non_null(strstr(err, "t.jtl: truncated: partial block at offset 256"));
	assert_non_null(strstr(err, "; shown up to the last whole block\n"));
	free(err);
	free(out);

	/* killed after a flush: all but the end record is shown */
	assert_int_equal(unlink(t->log), 0);
	write_every_type(t->log, false, false);
	assert_int_equal(dump_to_mem(t, &out), 0);
	golden = slurp(GOLDEN, &len);
	last = strstr(golden, " end records=");
	assert_non_null(last);
	while (last > golden && last[-1] != '\n')
		last--;
	*last = '\0';
	assert_string_equal(out, golden);
	err = slurp(t->err, &len);
	assert_non_null(strstr(err, "truncated: no end record"));
	free(err);
	free(golden);
	free(out);
}

static void dump_of_corrupt_log_fails_with_the_reason(void **state)
{
	struct tmp *t = *state;
	char *out, *err;
	size_t len;
	int fd;

	write_every_type(t->log, true, false);
	fd = open(t->log, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "XXXX", 4, JT_LOG_HEADER_SIZE), 4);	/* block magic */
	close(fd);
	assert_int_equal(dump_to_mem(t, &out), 1);
	assert_string_equal(out, "");
	err = slurp(t->err, &len);
	assert_non_null(strstr(err, "t.jtl: corrupt: block at offset 256: bad magic"));
	free(err);
	free(out);

	unlink(t->log);
	assert_int_equal(dump_to_mem(t, &out), 1);
	err = slurp(t->err, &len);
	assert_non_null(strstr(err, "t.jtl: No such file or directory"));
	free(err);
	free(out);
}

/*
 * A sample naming a module nothing defined: dump fails there, naming the place; with
 * --salvage it prints the rest (the golden file: the end record counts the sample too)
 * and says what it skipped.
 */
static void dump_of_log_breaking_a_promise_fails_unless_salvaged(void **state)
{
	struct tmp *t = *state;
	char *out, *golden, *err, *want, *end;
	size_t len, golden_len;

	write_every_type(t->log, true, true);
	assert_int_equal(dump_to_mem(t, &out), 1);
	golden = slurp(GOLDEN, &golden_len);
	end = strstr(golden, "5100 sample");
	assert_non_null(end);
	assert_memory_equal(out, golden, end - golden);	/* up to the broken sample */
	assert_non_null(strstr(out, "5100 sample"));
	assert_null(strstr(out, "5200"));
	free(out);
	err = slurp(t->err, &len);
	assert_non_null(strstr(err, "t.jtl: corrupt: block at offset 256, record 10 at byte "));
	assert_non_null(strstr(err, "frame 0 names module 9, not defined before it"));
	assert_non_null(strstr(err, "--salvage"));
	free(err);

	assert_int_equal(dump_flags_to_mem(t, JT_LOGR_SALVAGE, &out), 0);
	end = strstr(golden, "end records=17");
	assert_non_null(end);
	want = calloc(1, golden_len + 8);
	assert_non_null(want);
	memcpy(want, golden, end - golden);
	strcat(want, "end records=18\n");
	assert_string_equal(out, want);
	err = slurp(t->err, &len);
	assert_non_null(strstr(err, "t.jtl: salvage: block at offset 256, record 10 at byte "));
	assert_non_null(strstr(err, "t.jtl: salvage: read 18 records; skipped 1 records and 0 "
			       "blocks; missing 0 records and 0 blocks; found 1 undefined "
			       "references\n"));
	free(err);
	free(want);
	free(golden);
	free(out);
}

/* A lines record of method 1: n entries, claiming names_len bytes of names, have written. */
static void add_lines(struct jt_log_writer *w, uint64_t ts, const struct jt_line *v, unsigned n,
		      const char *names, size_t names_len, size_t have)
{
	union recbuf rb;
	struct jt_rec_lines *l = rec(&rb, JT_REC_LINES, sizeof(*l), n * sizeof(*v) + have, ts);

	l->method = 1;
	l->pid = 4242;
	l->nr_lines = n;
	l->names_len = names_len;
	memcpy(l->lines, v, n * sizeof(*v));
	memcpy((char *)(l->lines + n), names, have);
	add(w, &rb);
}

/*
 * A lines record on one line: its method, its files (escaped as any value followed by
 * more), each entry as offset=file:line, as the record has them (a file number past the
 * names too); names the record claims past its end are said, not read.
 */
static void dump_prints_lines_records(void **state)
{
	static const char names[] = "/src/Hot.java\0a b,c\n.toy";
	const struct jt_line v[] = {
		{ .off = 0x0, .line = 10, .file = 0 }, { .off = 0x1a, .line = 11, .file = 1 },
		{ .off = 0x4a, .line = 12, .file = 5 },
	};
	struct jt_log_header h = { .start_ns = T0, .ncpus = 2, .sample_hz = 99 };
	struct tmp *t = *state;
	struct jt_log_writer *w = jt_logw__create(t->log, &h, false);
	char *out, *err;
	size_t len;

	assert_non_null(w);
	add_method(w, 3000, 1, 0x7f3a2c001000ULL, 0x80, 3000, JT_SRC_JITDUMP, 0, "hot", 3);
	add_lines(w, 3000, v, 3, names, sizeof(names), sizeof(names));
	add_lines(w, 3100, v, 1, "x.toy", 6, 6);
	/* 8 bytes after the entries ("y.toy", NUL and two of padding, so two empty names):
	 * 32 short of what it claims */
	add_lines(w, 3200, v, 2, "y.toy", 40, 6);
	add_lines(w, 3300, v, 0, "", 0, 0);
	assert_int_equal(jt_logw__close(w), 0);
	assert_int_equal(dump_to_mem(t, &out), 0);
	assert_string_equal(out,
		"3000 method id=1 pid=4242 start=0x7f3a2c001000 size=0x80 load=3000 src=jitdump "
		"agent_id=0 name=hot\n"
		"3000 lines method=1 pid=4242 files=/src/Hot.java,a\\x20b\\x2cc\\x0a.toy "
		"lines=0x0=0:10,0x1a=1:11,0x4a=5:12\n"
		"3100 lines method=1 pid=4242 files=x.toy lines=0x0=0:10\n"
		"3200 lines method=1 pid=4242 files=y.toy,, names_past_end=32 "
		"lines=0x0=0:10,0x1a=1:11\n"
		"3300 lines method=1 pid=4242 files= lines=\n"
		"3300 end records=5\n");
	err = slurp(t->err, &len);
	assert_string_equal(err, "");
	free(err);
	free(out);
}

/* An inline record of method 1: its ranges, scopes and names_len bytes of names. */
static void add_inline(struct jt_log_writer *w, uint64_t ts, const struct jt_inline_range *rg,
		       unsigned nr, const struct jt_inline_scope *sc, unsigned ns,
		       const char *names, size_t names_len)
{
	union recbuf rb;
	struct jt_rec_inline *r = rec(&rb, JT_REC_INLINE, sizeof(*r),
				      nr * sizeof(*rg) + ns * sizeof(*sc) + names_len, ts);
	char *p = (char *)(r + 1);

	r->method = 1;
	r->pid = 4242;
	r->head = (struct jt_inline_head){ .nr_ranges = nr, .nr_scopes = ns,
					   .names_len = names_len };
	memcpy(p, rg, nr * sizeof(*rg));
	memcpy(p + nr * sizeof(*rg), sc, ns * sizeof(*sc));
	memcpy(p + nr * sizeof(*rg) + ns * sizeof(*sc), names, names_len);
	add(w, &rb);
}

/*
 * An inline record on one line: each range's end and chain, innermost first; a crafted
 * chain that loops is cut where a reader stops following it, names outside the record
 * are "?", and counts past the record's end are said, not read.
 */
static void dump_prints_inline_records(void **state)
{
	static const char names[] = "Hot.run()\0Hot.java\0Hot.mix(long)";
	const struct jt_inline_range rg[] = { { 0x10, 0 }, { 0x40, 2 } };
	const struct jt_inline_scope sc[] = {
		{ .name = 0, .file = 10, .line = 5, .caller = JT_INLINE_NONE },
		{ .name = 0, .file = 10, .line = 6, .caller = JT_INLINE_NONE },
		{ .name = 19, .file = 10, .line = 9, .caller = 1 },
	};
	const struct jt_inline_scope loop[] = {
		{ .name = 0, .file = 999, .line = 1, .caller = 0 },
	};
	struct jt_log_header h = { .start_ns = T0, .ncpus = 2, .sample_hz = 99 };
	struct tmp *t = *state;
	struct jt_log_writer *w = jt_logw__create(t->log, &h, false);
	union recbuf rb;
	struct jt_rec_inline *r;
	char *out, *err, want[4096];
	size_t len, n;
	int i;

	assert_non_null(w);
	add_method(w, 3000, 1, 0x7f3a2c001000ULL, 0x80, 3000, JT_SRC_AGENT, 5, "run", 3);
	add_inline(w, 3000, rg, 2, sc, 3, names, sizeof(names));
	add_inline(w, 3100, rg, 1, loop, 1, "L", 2);
	r = rec(&rb, JT_REC_INLINE, sizeof(*r), 0, 3200);
	r->method = 1;
	r->pid = 4242;
	r->head.nr_ranges = 1000;
	add(w, &rb);
	assert_int_equal(jt_logw__close(w), 0);
	assert_int_equal(dump_to_mem(t, &out), 0);
	n = snprintf(want, sizeof(want),
		     "3000 method id=1 pid=4242 start=0x7f3a2c001000 size=0x80 load=3000 "
		     "src=agent agent_id=5 name=run\n"
		     "3000 inline method=1 pid=4242 ranges=2 scopes=3 "
		     "at=0x10:Hot.run()@Hot.java:5,0x40:Hot.mix(long)@Hot.java:9<Hot.run()@Hot.java:6\n"
		     "3100 inline method=1 pid=4242 ranges=1 scopes=1 at=0x10:L@?:1");
	for (i = 1; i < JT_INLINE_DEPTH_MAX; i++)
		n += snprintf(want + n, sizeof(want) - n, "<L@?:1");
	snprintf(want + n, sizeof(want) - n,
		 "\n3200 inline method=1 pid=4242 ranges=1000 scopes=0 past_end\n"
		 "3200 end records=4\n");
	assert_string_equal(out, want);
	err = slurp(t->err, &len);
	assert_string_equal(err, "");
	free(err);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tmp_teardown)
		T(dump_prints_every_record_type_as_the_golden_file),
		T(dump_of_truncated_log_shows_whole_blocks_and_says_so),
		T(dump_of_corrupt_log_fails_with_the_reason),
		T(dump_of_log_breaking_a_promise_fails_unless_salvaged),
		T(dump_prints_lines_records),
		T(dump_prints_inline_records),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
