// SPDX-License-Identifier: GPL-2.0
/* logview: every frame kind named, unknown references kept, redefinition, processes; the log
 * source that feeds it: filter, drop counts, frame files, truncated and corrupt ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jt_events.h"
#include "logsrc.h"
#include "logview.h"
#include "util.h"
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

	/* records that define nothing are taken and ignored */
	mk(&rb, JT_REC_SAMPLE, sizeof(struct jt_rec_sample), 0);
	assert_int_equal(jt_lv__add(lv, &rb.h), 0);
	assert_null(jt_lv__proc(lv, 0));
	jt_lv__free(lv);
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
	assert_int_equal(records, 48);		/* the end record included */
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
		cmocka_unit_test_setup_teardown(test_source_filters_samples_and_calls_only,
						vl_setup, vl_teardown),
		cmocka_unit_test_setup_teardown(test_source_accepts_truncated_and_refuses_corrupt,
						vl_setup, vl_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
