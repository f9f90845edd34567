// SPDX-License-Identifier: GPL-2.0
/* logview: every frame kind named, unknown references kept, redefinition, processes, source
 * lines; the log source that feeds it: filter, drop counts, frame files, lines, truncated and
 * corrupt ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jt_events.h"
#include "log/source.h"
#include "log/view.h"
#include "base/util.h"
#include "viewlog.h"

union buf {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[1024];
};

static void *mk(union buf *rb, unsigned type, size_t fixed, size_t var)
{
	memset(rb, 0, sizeof(*rb));
	rb->h.type = type;
	rb->h.size = jt_round8(fixed + var);
	return rb;
}

static void method(struct jt_lv *lv, uint64_t id, uint32_t pid, const char *name)
{
	union buf rb;
	struct jt_rec_method *m = mk(&rb, JT_REC_METHOD, sizeof(*m), strlen(name));

	m->id = id;
	m->pid = pid;
	m->start = 0x1000 * id;
	m->size = 0x80;
	m->name_len = strlen(name);
	memcpy(m->name, name, m->name_len);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
}

static void symbol(struct jt_lv *lv, uint64_t id, uint64_t module, const char *name)
{
	union buf rb;
	struct jt_rec_symbol *s = mk(&rb, JT_REC_SYMBOL, sizeof(*s), strlen(name));

	s->id = id;
	s->module = module;
	s->name_len = strlen(name);
	memcpy(s->name, name, s->name_len);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
}

static void module(struct jt_lv *lv, uint64_t id, const char *path)
{
	union buf rb;
	struct jt_rec_module *m = mk(&rb, JT_REC_MODULE, sizeof(*m), strlen(path));

	m->id = id;
	m->path_len = strlen(path);
	memcpy(m->path, path, m->path_len);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
}

/* The name and kind lv gives a frame. */
static const char *name_of(struct jt_lv *lv, unsigned kind, uint64_t id, uint64_t off,
			   enum jt_lv_kind *k)
{
	static char buf[128];
	struct jt_frame f = { JT_FRAME_REF(kind, id), off };
	const char *n = jt_lv__frame(lv, &f, buf, sizeof(buf), k);

	assert_non_null(n);
	return n;
}

static void test_every_frame_kind_is_named(void **state)
{
	struct jt_lv *lv = jt_lv__new();
	enum jt_lv_kind k;

	(void)state;
	method(lv, 1, 42, "Hot.spin(int)");
	module(lv, 3, "/usr/lib/jvm/lib/server/libjvm.so");
	symbol(lv, 5, 3, "JavaCalls::call_helper");
	symbol(lv, 6, 0, "do_syscall_64");
	assert_string_equal(name_of(lv, JT_FRAME_METHOD, 1, 0x24, &k), "Hot.spin(int)");
	assert_int_equal(k, JT_LV_JIT);
	assert_string_equal(name_of(lv, JT_FRAME_MODULE, 3, 0x5e1234, &k), "libjvm.so+0x5e1234");
	assert_int_equal(k, JT_LV_NATIVE);
	assert_string_equal(name_of(lv, JT_FRAME_SYMBOL, 5, 0x8, &k), "JavaCalls::call_helper");
	assert_int_equal(k, JT_LV_NATIVE);
	assert_string_equal(name_of(lv, JT_FRAME_SYMBOL, 6, 0x8, &k), "do_syscall_64");
	assert_int_equal(k, JT_LV_KERNEL);
	assert_string_equal(name_of(lv, JT_FRAME_KERNEL, 0, 0xffffffff81a00b2cULL, &k),
			    "[k] 0xffffffff81a00b2c");
	assert_int_equal(k, JT_LV_KERNEL);
	assert_string_equal(name_of(lv, JT_FRAME_USER, 0, 0x401a2b, &k), "0x401a2b");
	assert_int_equal(k, JT_LV_UNKNOWN);
	/* a user address in anonymous executable memory: named by that memory */
	module(lv, 4, "[java jit]");
	assert_string_equal(name_of(lv, JT_FRAME_USER, 4, 0x7f3a40005000ULL, &k), "[java jit]");
	assert_int_equal(k, JT_LV_JIT);
	assert_string_equal(name_of(lv, JT_FRAME_USER, 44, 0x7f3a40005000ULL, &k),
			    "0x7f3a40005000");	/* its memory never defined */
	assert_int_equal(k, JT_LV_UNKNOWN);
	assert_string_equal(jt_lv__kind_name(JT_LV_JIT), "jit");
	assert_string_equal(jt_lv__kind_name(JT_LV_NATIVE), "native");
	assert_string_equal(jt_lv__kind_name(JT_LV_KERNEL), "kernel");
	assert_string_equal(jt_lv__kind_name(JT_LV_UNKNOWN), "unknown");
	assert_string_equal(jt_lv__kind_name(99), "unknown");
	jt_lv__free(lv);
}

/* A reference the log never defined is shown (by its address), never dropped. */
static void test_unknown_references_are_kept(void **state)
{
	struct jt_lv *lv = jt_lv__new();
	enum jt_lv_kind k;

	(void)state;
	assert_string_equal(name_of(lv, JT_FRAME_METHOD, 7, 0x30, &k), "0x30");
	assert_int_equal(k, JT_LV_UNKNOWN);
	assert_string_equal(name_of(lv, JT_FRAME_MODULE, 8, 0x40, &k), "0x40");
	assert_int_equal(k, JT_LV_UNKNOWN);
	assert_string_equal(name_of(lv, JT_FRAME_SYMBOL, 9, 0x50, &k), "0x50");
	assert_int_equal(k, JT_LV_UNKNOWN);
	assert_string_equal(name_of(lv, 0, 1, 0x60, &k), "0x60");	/* no kind at all */
	assert_int_equal(k, JT_LV_UNKNOWN);
	assert_null(jt_lv__method(lv, 7));
	assert_null(jt_lv__proc(lv, 1));
	jt_lv__free(lv);
}

/* A long file name is cut to the buffer, never overflowing it, offset still shown. */
static void test_long_module_name_is_cut(void **state)
{
	struct jt_lv *lv = jt_lv__new();
	char path[400], buf[64];
	struct jt_frame f = { JT_FRAME_REF(JT_FRAME_MODULE, 1), 0xabc };
	enum jt_lv_kind k;
	const char *n;

	(void)state;
	memset(path, 'x', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	path[0] = '/';
	module(lv, 1, path);
	n = jt_lv__frame(lv, &f, buf, sizeof(buf), &k);
	assert_true(strlen(n) < sizeof(buf));
	assert_non_null(strstr(n, "+0xabc"));
	jt_lv__free(lv);
}

static void test_redefinition_replaces(void **state)
{
	struct jt_lv *lv = jt_lv__new();
	enum jt_lv_kind k;

	(void)state;
	method(lv, 1, 42, "old_fn");
	method(lv, 1, 42, "new_fn");
	assert_string_equal(name_of(lv, JT_FRAME_METHOD, 1, 0, &k), "new_fn");
	assert_string_equal(jt_lv__method(lv, 1)->name, "new_fn");
	assert_int_equal(jt_lv__method(lv, 1)->pid, 42);
	symbol(lv, 2, 0, "a");
	symbol(lv, 2, 0, "b");
	assert_string_equal(name_of(lv, JT_FRAME_SYMBOL, 2, 0, &k), "b");
	module(lv, 3, "/lib/one.so");
	module(lv, 3, "/lib/two.so");
	assert_string_equal(name_of(lv, JT_FRAME_MODULE, 3, 0x10, &k), "two.so+0x10");
	jt_lv__free(lv);
}

/* A process is named by exec (its path) until a proc record gives comm and cmdline; a
 * later exec renames it. */
static void test_procs_from_proc_and_exec(void **state)
{
	struct jt_lv *lv = jt_lv__new();
	const struct jt_lv_proc *p;
	union buf rb;
	struct jt_rec_exec *e = mk(&rb, JT_REC_EXEC, sizeof(*e), 7);
	struct jt_rec_proc *pr;

	(void)state;
	e->pid = 77;
	memcpy(e->comm, "sh", 2);
	e->path_len = 7;
	memcpy(e->path, "/bin/sh", 7);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	p = jt_lv__proc(lv, 77);
	assert_non_null(p);
	assert_string_equal(p->comm, "sh");
	assert_string_equal(p->cmdline, "/bin/sh");

	pr = mk(&rb, JT_REC_PROC, sizeof(*pr), 17);
	pr->pid = 77;
	memcpy(pr->comm, "java-with-a-long-name", 16);	/* 16 bytes, no NUL: cut to 15 */
	pr->cmdline_len = 17;
	memcpy(pr->cmdline, "java -jar app.jar", 17);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	p = jt_lv__proc(lv, 77);
	assert_string_equal(p->comm, "java-with-a-lon");
	assert_string_equal(p->cmdline, "java -jar app.jar");
	assert_int_equal(p->pid, 77);

	e = mk(&rb, JT_REC_EXEC, sizeof(*e), 9);
	e->pid = 77;
	memcpy(e->comm, "node", 4);
	e->path_len = 9;
	memcpy(e->path, "/bin/node", 9);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	assert_string_equal(jt_lv__proc(lv, 77)->comm, "node");
	assert_string_equal(jt_lv__proc(lv, 77)->cmdline, "/bin/node");

	/* defined again after its exit, /proc gone: an empty record keeps the name it had */
	pr = mk(&rb, JT_REC_PROC, sizeof(*pr), 0);
	pr->pid = 77;
	pr->cmdline_len = 0;
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	assert_string_equal(jt_lv__proc(lv, 77)->comm, "node");
	assert_string_equal(jt_lv__proc(lv, 77)->cmdline, "/bin/node");

	/* records that define nothing are taken and ignored */
	mk(&rb, JT_REC_SAMPLE, sizeof(struct jt_rec_sample), 0);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	assert_null(jt_lv__proc(lv, 0));
	jt_lv__free(lv);
}

/* A lines record for method id of pid: n entries, then names (names_len bytes, NULs in). */
static void lines(struct jt_lv *lv, uint64_t id, uint32_t pid, const struct jt_line *v,
		  unsigned n, const char *names, size_t names_len)
{
	union buf rb;
	struct jt_rec_lines *l = mk(&rb, JT_REC_LINES, sizeof(*l), n * sizeof(*v) + names_len);

	l->method = id;
	l->pid = pid;
	l->nr_lines = n;
	l->names_len = names_len;
	memcpy(l->lines, v, n * sizeof(*v));
	memcpy((char *)(l->lines + n), names, names_len);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
}

/* The line of byte off of method id as "file:line", or "-" if it has none. */
static const char *line_at(const struct jt_lv *lv, uint64_t id, uint64_t off)
{
	static char buf[128];
	uint32_t file, line;

	if (!jt_lv__line(lv, id, off, &file, &line))
		return "-";
	snprintf(buf, sizeof(buf), "%s:%u", jt_lv__file(lv, file), line);
	return buf;
}

#define NAMES(s) s, sizeof(s)	/* a names literal with its last NUL */

/*
 * Each entry covers from its offset to the next one's, the last to the method's end (0x80
 * here); before the first, past the end, at an entry naming no file or line 0: nothing.
 * Entries a crafted log leaves unsorted are sorted; names are shared over the log.
 */
static void test_lines_found_by_offset(void **state)
{
	const struct jt_line v[] = {	/* out of order on purpose */
		{ .off = 0x40, .line = 30, .file = 1 }, { .off = 0x8, .line = 12, .file = 0 },
		{ .off = 0x20, .line = 14, .file = 0 }, { .off = 0x30, .line = 0, .file = 0 },
		{ .off = 0x38, .line = 20, .file = 7 }, { .off = 0x50, .line = 9, .file = 0 },
	};
	const struct jt_line w[] = { { .off = 0, .line = 5, .file = 0 } };
	struct jt_lv *lv = jt_lv__new();
	uint32_t file, line, file2;

	(void)state;
	assert_false(jt_lv__has_lines(lv));
	method(lv, 1, 42, "Hot.spin(int)");
	method(lv, 2, 42, "Other.run()");
	assert_false(jt_lv__line(lv, 1, 0x10, &file, &line));
	lines(lv, 1, 42, v, JT_ARRAY_SIZE(v), NAMES("/src/Hot.java\0/src/Lib.java"));
	assert_true(jt_lv__has_lines(lv));
	assert_true(jt_lv__method_has_lines(lv, 1));
	assert_false(jt_lv__method_has_lines(lv, 2));
	assert_string_equal(line_at(lv, 1, 0x0), "-");		/* before the first entry */
	assert_string_equal(line_at(lv, 1, 0x7), "-");
	assert_string_equal(line_at(lv, 1, 0x8), "/src/Hot.java:12");
	assert_string_equal(line_at(lv, 1, 0x1f), "/src/Hot.java:12");
	assert_string_equal(line_at(lv, 1, 0x20), "/src/Hot.java:14");
	assert_string_equal(line_at(lv, 1, 0x2f), "/src/Hot.java:14");
	assert_string_equal(line_at(lv, 1, 0x30), "-");		/* line 0 */
	assert_string_equal(line_at(lv, 1, 0x38), "-");		/* file 7 of 2 */
	assert_string_equal(line_at(lv, 1, 0x40), "/src/Lib.java:30");
	assert_string_equal(line_at(lv, 1, 0x50), "/src/Hot.java:9");
	assert_string_equal(line_at(lv, 1, 0x7f), "/src/Hot.java:9");	/* to the end */
	assert_string_equal(line_at(lv, 1, 0x80), "-");		/* past it */
	assert_string_equal(line_at(lv, 2, 0x10), "-");		/* no lines */
	assert_string_equal(line_at(lv, 9, 0x10), "-");		/* no method */
	assert_true(jt_lv__line(lv, 1, 0x8, &file, &line));
	assert_int_equal(jt_lv__first_line(lv, 1, file), 9);	/* Hot.java: 12, 14, 9 */
	assert_int_equal(jt_lv__first_line(lv, 2, file), 0);
	assert_string_equal(jt_lv__file(lv, 99), "?");

	/* another method naming the same file gets the same file number */
	lines(lv, 2, 42, w, 1, NAMES("/src/Hot.java"));
	assert_true(jt_lv__line(lv, 2, 0x10, &file2, &line));
	assert_int_equal(file2, file);
	assert_int_equal(line, 5);
	jt_lv__free(lv);
}

/*
 * A frame's line: the leaf's where it ran; a caller's (a return address) at the byte
 * before, its call. Only method frames have lines. The user leaf comes after kernel frames.
 */
static void test_frame_line_of_leaf_and_caller(void **state)
{
	const struct jt_line v[] = { { .off = 0, .line = 3 }, { .off = 0x10, .line = 4 } };
	struct jt_lv *lv = jt_lv__new();
	struct jt_frame leaf = M(1, 0x10), sym = S(5, 0x10), at0 = M(1, 0);
	uint32_t file, line;
	union buf rb;
	struct jt_rec_sample *smp;

	(void)state;
	method(lv, 1, 42, "Main.main()");
	lines(lv, 1, 42, v, 2, NAMES("Main.java"));
	assert_true(jt_lv__frame_line(lv, &leaf, false, &file, &line));
	assert_int_equal(line, 4);
	assert_true(jt_lv__frame_line(lv, &leaf, true, &file, &line));
	assert_int_equal(line, 3);			/* the call ends at 0x10 */
	assert_true(jt_lv__frame_line(lv, &at0, true, &file, &line));
	assert_int_equal(line, 3);
	symbol(lv, 5, 0, "do_syscall_64");
	assert_false(jt_lv__frame_line(lv, &sym, false, &file, &line));

	smp = mk(&rb, JT_REC_SAMPLE, sizeof(*smp), 4 * sizeof(struct jt_frame));
	smp->nr_frames = 4;
	smp->frames[0] = (struct jt_frame)K(0xffffffff81a00b2cULL);
	smp->frames[1] = sym;				/* a kernel symbol */
	smp->frames[2] = leaf;
	smp->frames[3] = (struct jt_frame)M(1, 0x20);
	assert_int_equal(jt_lv__user_leaf(lv, smp), 2);
	smp->nr_frames = 2;
	assert_int_equal(jt_lv__user_leaf(lv, smp), 2);	/* all the kernel's */
	smp->frames[0] = leaf;
	assert_int_equal(jt_lv__user_leaf(lv, smp), 0);
	jt_lv__free(lv);
}

/*
 * Lines a log should not hold are not used: of a method not defined, or of another
 * process, names running past the record. A method defined again loses its lines; lines
 * again replace the first. File names are kept as the log has them.
 */
static void test_lines_refused_replaced_and_cleaned(void **state)
{
	const struct jt_line one[] = { { .off = 0, .line = 7 } };
	const struct jt_line two[] = { { .off = 0, .line = 8 } };
	struct jt_lv *lv = jt_lv__new();
	struct jt_rec_lines *l;
	union buf rb;

	(void)state;
	lines(lv, 1, 42, one, 1, NAMES("a.toy"));		/* not defined yet */
	assert_false(jt_lv__has_lines(lv));
	method(lv, 1, 42, "f");
	lines(lv, 1, 43, one, 1, NAMES("a.toy"));		/* another pid's */
	assert_string_equal(line_at(lv, 1, 0), "-");
	l = mk(&rb, JT_REC_LINES, sizeof(*l), sizeof(one) + 8);	/* names past its size */
	l->method = 1;
	l->pid = 42;
	l->nr_lines = 1;
	l->names_len = 9;
	memcpy(l->lines, one, sizeof(one));
	memcpy((char *)(l->lines + 1), "a.toy\0\0", 8);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	assert_string_equal(line_at(lv, 1, 0), "-");
	l->names_len = 8;					/* now it fits */
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	assert_string_equal(line_at(lv, 1, 0), "a.toy:7");

	lines(lv, 1, 42, two, 1, NAMES("b.toy"));		/* replaced */
	assert_string_equal(line_at(lv, 1, 0), "b.toy:8");
	method(lv, 1, 42, "f again");				/* defined again: no lines */
	assert_string_equal(line_at(lv, 1, 0), "-");
	assert_false(jt_lv__method_has_lines(lv, 1));

	/* a control character and a byte that is not UTF-8; the last name without its NUL */
	lines(lv, 1, 42, one, 1, "x\x1b[2J\xff.toy", 10);
	assert_string_equal(line_at(lv, 1, 0), "x\x1b[2J\xff.toy:7");
	jt_lv__free(lv);
}

/* The log's lines reach the source's logview: Hot.spin(int)'s +0x10 is Hot.java:12. */
static void test_source_keeps_lines(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_logsrc src;

	vl_write(t->log);
	assert_int_equal(jt_logsrc__open(&src, t->log, NULL), 0);
	while (jt_logsrc__next(&src, NULL))
		;
	assert_int_equal(jt_logsrc__finish(&src, "read"), 0);
	assert_string_equal(line_at(src.lv, 1, 0x10), "Hot.java:12");
	assert_string_equal(line_at(src.lv, 1, 0x18), "Hot.java:14");
	assert_string_equal(line_at(src.lv, 5, 0x8), "Rec.java:8");
	assert_string_equal(line_at(src.lv, 2, 0x40), "-");
	jt_logsrc__close(&src);
}

/*
 * The source hands out every record, definitions taken in first: those of a process the
 * filter leaves out too, as frames may name them. Only its samples and calls are kept.
 */
static void test_source_filters_samples_and_calls_only(void **state)
{
	struct vl_tmp *t = *state;
	unsigned int records = 0, samples = 0, calls = 0;
	char buf[JT_LOGSRC_NAME_CAP];
	const struct jt_rec_hdr *rec;
	const struct jt_frame work = F(2, 0x5000), jit = M(4, 0x20);
	struct jt_logsrc src;
	struct jt_filter f;
	enum jt_lv_kind kind;
	const char *file;
	bool kept;

	vl_write(t->log);
	jt_filter__init(&f);
	assert_int_equal(jt_filter__parse(&f, "--pid", "200"), 0);	/* node */
	assert_int_equal(jt_logsrc__open(&src, t->log, &f), 0);
	while ((rec = jt_logsrc__next(&src, &kept))) {
		records++;
		if (!kept)
			continue;
		if (rec->type == JT_REC_SAMPLE) {
			assert_int_equal(((const struct jt_rec_sample *)rec)->pid, VL_NODE);
			samples++;
		} else {
			assert_int_equal(((const struct jt_rec_call *)rec)->pid, VL_NODE);
			calls++;
		}
	}
	assert_int_equal(jt_logsrc__finish(&src, "read"), 0);
	assert_int_equal(records, 50);		/* the end record and two lines records included */
	assert_int_equal(samples, 5);
	assert_int_equal(calls, 2);
	assert_int_equal(src.filtered, 15 + 11);	/* java's samples and calls */
	assert_int_equal(src.drops[JT_DROP_RB_SAMPLE], 3);
	assert_int_equal(jt_logsrc__dropped(&src), 3);
	assert_int_equal(src.last_ts, VL_T0 + 50 * VL_MS);
	assert_int_equal(jt_logsrc__rel(&src, src.last_ts), 50 * VL_MS);
	assert_string_equal(jt_lv__method(src.lv, 1)->name, "Hot.spin(int)");	/* java's */
	assert_string_equal(jt_logsrc__frame(&src, &work, buf, &file, &kind), "node+0x5000");
	assert_string_equal(file, "node");
	assert_string_equal(jt_logsrc__frame(&src, &jit, buf, &file, &kind),
			    "JS:~work /app.js:2");
	assert_string_equal(file, "[jit]");
	assert_string_equal(jt_logsrc__method(&src, 99, buf), "[unknown method 99]");
	jt_logsrc__close(&src);
}

/* A log cut short is read up to its last whole block; a damaged one is an error. */
static void test_source_accepts_truncated_and_refuses_corrupt(void **state)
{
	struct vl_tmp *t = *state;
	struct jt_logsrc src;
	struct stat st;
	FILE *f;

	vl_write(t->log);
	assert_int_equal(stat(t->log, &st), 0);
	assert_int_equal(truncate(t->log, st.st_size - 3), 0);
	assert_int_equal(jt_logsrc__open(&src, t->log, NULL), 0);
	while (jt_logsrc__next(&src, NULL))
		;
	assert_int_equal(jt_logsrc__finish(&src, "read"), 0);
	jt_logsrc__close(&src);

	f = fopen(t->log, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, JT_LOG_HEADER_SIZE, SEEK_SET), 0);
	assert_int_equal(fwrite("XXXX", 1, 4, f), 4);	/* the block's magic */
	assert_int_equal(fclose(f), 0);
	assert_int_equal(jt_logsrc__open(&src, t->log, NULL), 0);
	assert_null(jt_logsrc__next(&src, NULL));
	assert_int_equal(jt_logsrc__finish(&src, "read"), -1);
	jt_logsrc__close(&src);

	assert_int_equal(unlink(t->log), 0);
	assert_int_equal(jt_logsrc__open(&src, t->log, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_frame_kind_is_named),
		cmocka_unit_test(test_unknown_references_are_kept),
		cmocka_unit_test(test_long_module_name_is_cut),
		cmocka_unit_test(test_redefinition_replaces),
		cmocka_unit_test(test_procs_from_proc_and_exec),
		cmocka_unit_test(test_lines_found_by_offset),
		cmocka_unit_test(test_frame_line_of_leaf_and_caller),
		cmocka_unit_test(test_lines_refused_replaced_and_cleaned),
		cmocka_unit_test_setup_teardown(test_source_keeps_lines, vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_source_filters_samples_and_calls_only,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_source_accepts_truncated_and_refuses_corrupt,
						vl_setup, vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
