/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unit-test helper: the small log behind the report and flame graph goldens, written with
 * the log writer. Every frame kind (JIT method, ELF symbol, file+offset, bare user address,
 * kernel symbol, bare kernel address), names hostile to XML and to
 * folded stacks, recursion, two processes with samples and a third known only by exec,
 * calls with nesting, recursion and unbalanced edges, and source lines for two methods.
 * Include after <cmocka.h>.
 */
#ifndef JT_TEST_VIEWLOG_H
#define JT_TEST_VIEWLOG_H

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jt_events.h"
#include "log/log.h"
#include "base/util.h"

#define VL_T0 5000000000ULL		/* the header's start_ns */
#define VL_MS 1000000ULL
#define VL_JVM 100
#define VL_NODE 200
#define VL_SH 300

union vl_buf {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[2048];
};

static inline void *vl_rec(union vl_buf *rb, unsigned type, size_t fixed, size_t var, uint64_t ts)
{
	size_t size = jt_round8(fixed + var);

	memset(rb->b, 0, size);
	rb->h.type = type;
	rb->h.size = size;
	rb->h.ts = VL_T0 + ts;
	return rb;
}

static inline void vl_add(struct jt_log_writer *w, const union vl_buf *rb)
{
	assert_int_equal(jt_logw__append(w, &rb->h), 0);
}

static inline void vl_proc(struct jt_log_writer *w, uint64_t ts, uint32_t pid, const char *comm,
		    const char *cmdline)
{
	union vl_buf rb;
	struct jt_rec_proc *p = vl_rec(&rb, JT_REC_PROC, sizeof(*p), strlen(cmdline), ts);

	p->pid = pid;
	strncpy(p->comm, comm, sizeof(p->comm) - 1);
	p->cmdline_len = strlen(cmdline);
	memcpy(p->cmdline, cmdline, p->cmdline_len);
	vl_add(w, &rb);
}

/* The name of thread tid of process pid (JT_REC_THREAD), as of ts. */
static inline void vl_thread(struct jt_log_writer *w, uint64_t ts, uint32_t pid, uint32_t tid,
			     const char *comm)
{
	union vl_buf rb;
	struct jt_rec_thread *t = vl_rec(&rb, JT_REC_THREAD, sizeof(*t), 0, ts);

	t->pid = pid;
	t->tid = tid;
	strncpy(t->comm, comm, sizeof(t->comm));
	vl_add(w, &rb);
}

static inline void vl_exec(struct jt_log_writer *w, uint64_t ts, uint32_t pid, const char *comm,
		    const char *path)
{
	union vl_buf rb;
	struct jt_rec_exec *e = vl_rec(&rb, JT_REC_EXEC, sizeof(*e), strlen(path), ts);

	e->pid = pid;
	strncpy(e->comm, comm, sizeof(e->comm) - 1);
	e->path_len = strlen(path);
	memcpy(e->path, path, e->path_len);
	vl_add(w, &rb);
}

static inline void vl_module(struct jt_log_writer *w, uint64_t ts, uint64_t id, uint32_t pid,
		      const char *path)
{
	union vl_buf rb;
	struct jt_rec_module *m = vl_rec(&rb, JT_REC_MODULE, sizeof(*m), strlen(path), ts);

	m->id = id;
	m->pid = pid;
	m->start = 0x7f0000000000ULL + id * 0x1000000;
	m->end = m->start + 0x800000;
	m->path_len = strlen(path);
	memcpy(m->path, path, m->path_len);
	vl_add(w, &rb);
}

static inline void vl_symbol(struct jt_log_writer *w, uint64_t ts, uint64_t id, uint64_t module,
		      uint32_t pid, const char *name)
{
	union vl_buf rb;
	struct jt_rec_symbol *s = vl_rec(&rb, JT_REC_SYMBOL, sizeof(*s), strlen(name), ts);

	s->id = id;
	s->module = module;
	s->pid = pid;
	s->start = module ? 0x5000 * id : 0xffffffff81000000ULL + 0x100 * id;
	s->size = 0x100;
	s->name_len = strlen(name);
	memcpy(s->name, name, s->name_len);
	vl_add(w, &rb);
}

static inline void vl_method(struct jt_log_writer *w, uint64_t ts, uint64_t id, uint32_t pid,
		      const char *name)
{
	union vl_buf rb;
	struct jt_rec_method *m = vl_rec(&rb, JT_REC_METHOD, sizeof(*m), strlen(name), ts);

	m->id = id;
	m->pid = pid;
	m->start = 0x7f3a2c000000ULL + id * 0x1000;
	m->size = 0x200;
	m->load_ts = VL_T0 + ts;
	m->src = JT_SRC_AGENT;
	m->name_len = strlen(name);
	memcpy(m->name, name, m->name_len);
	vl_add(w, &rb);
}

/*
 * The source lines of method id: n entries (off, line, file index), then names_len bytes of
 * NUL-terminated file names.
 */
static inline void vl_lines(struct jt_log_writer *w, uint64_t ts, uint64_t id, uint32_t pid,
			    const struct jt_line *lines, unsigned n, const char *names,
			    size_t names_len)
{
	union vl_buf rb;
	struct jt_rec_lines *l = vl_rec(&rb, JT_REC_LINES, sizeof(*l),
					n * sizeof(*lines) + names_len, ts);

	l->method = id;
	l->pid = pid;
	l->nr_lines = n;
	l->names_len = names_len;
	memcpy(l->lines, lines, n * sizeof(*lines));
	memcpy((char *)(l->lines + n), names, names_len);
	vl_add(w, &rb);
}

static inline void vl_call(struct jt_log_writer *w, unsigned type, uint64_t ts, uint32_t pid,
		    uint32_t tid, uint64_t id)
{
	union vl_buf rb;
	struct jt_rec_call *c = vl_rec(&rb, type, sizeof(*c), 0, ts);

	c->pid = pid;
	c->tid = tid;
	c->id = id;
	vl_add(w, &rb);
}

/* n samples of one stack, 1 ms apart from ts; *ts advances past them. */
static inline void vl_samples(struct jt_log_writer *w, uint64_t *ts, uint32_t pid, unsigned n,
		       const struct jt_frame *frames, unsigned nr)
{
	union vl_buf rb;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct jt_rec_sample *s = vl_rec(&rb, JT_REC_SAMPLE, sizeof(*s),
						 nr * sizeof(*frames), *ts);

		s->pid = pid;
		s->tid = pid + 1;
		s->nr_frames = nr;
		if (nr)
			memcpy(s->frames, frames, nr * sizeof(*frames));
		vl_add(w, &rb);
		*ts += VL_MS;
	}
}

/* As vl_samples, on thread tid. */
static inline void vl_tsamples(struct jt_log_writer *w, uint64_t *ts, uint32_t pid, uint32_t tid,
			       unsigned n, const struct jt_frame *frames, unsigned nr)
{
	union vl_buf rb;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct jt_rec_sample *s = vl_rec(&rb, JT_REC_SAMPLE, sizeof(*s),
						 nr * sizeof(*frames), *ts);

		s->pid = pid;
		s->tid = tid;
		s->nr_frames = nr;
		if (nr)
			memcpy(s->frames, frames, nr * sizeof(*frames));
		vl_add(w, &rb);
		*ts += VL_MS;
	}
}

/*
 * Thread tid of pid off the CPU for off_ns, back at ts (relative, as every vl_ time), in
 * state (enum jt_off_state) with the stack it left with; count waits (JT_OFF_SHORT: a sum,
 * no frames). Write it in ts order with the rest: the log's time is its return.
 */
static inline void vl_offcpu(struct jt_log_writer *w, uint64_t ts, uint32_t pid, uint32_t tid,
			     uint64_t off_ns, unsigned state, uint32_t count,
			     const struct jt_frame *frames, unsigned nr)
{
	union vl_buf rb;
	struct jt_rec_offcpu *o = vl_rec(&rb, JT_REC_OFFCPU, sizeof(*o), nr * sizeof(*frames), ts);

	o->off_ns = off_ns;
	o->count = count;
	o->state = state;
	o->smp.h.type = JT_REC_SAMPLE;
	o->smp.h.size = o->h.size - offsetof(struct jt_rec_offcpu, smp);
	o->smp.h.ts = o->h.ts - off_ns;
	o->smp.pid = pid;
	o->smp.tid = tid;
	o->smp.nr_frames = nr;
	if (nr)
		memcpy(o->smp.frames, frames, nr * sizeof(*frames));
	vl_add(w, &rb);
}

/* A drop record naming thread tid (0: none, as loggers before per-thread drops wrote). */
static inline void vl_drop_tid(struct jt_log_writer *w, uint64_t ts, unsigned what,
			       uint32_t tid, uint64_t count)
{
	union vl_buf rb;
	struct jt_rec_drop *d = vl_rec(&rb, JT_REC_DROP, sizeof(*d), 0, ts);

	d->what = what;
	d->tid = tid;
	d->count = count;
	vl_add(w, &rb);
}

static inline void vl_drop(struct jt_log_writer *w, uint64_t ts, unsigned what, uint64_t count)
{
	vl_drop_tid(w, ts, what, 0, count);
}

#define M(id, off) { JT_FRAME_REF(JT_FRAME_METHOD, id), off }
#define S(id, off) { JT_FRAME_REF(JT_FRAME_SYMBOL, id), off }
#define F(id, off) { JT_FRAME_REF(JT_FRAME_MODULE, id), off }
#define U(addr) { JT_FRAME_REF(JT_FRAME_USER, 0), addr }
#define K(addr) { JT_FRAME_REF(JT_FRAME_KERNEL, 0), addr }

/*
 * Hot.spin(int) is the hottest method: 8 of 21 samples, 6 of them at +0x10 (Hot.java:12),
 * 2 at +0x18 (Hot.java:14). Rec.fib(int) has lines too: its leaf at +0x8 is Rec.java:8,
 * and so are its recursive calls, whose return address +0xc begins line 9.
 */
static inline void vl_write(const char *path)
{
	static const struct jt_line spin_lines[] = {
		{ .off = 0x0, .line = 10 }, { .off = 0x10, .line = 12 }, { .off = 0x18, .line = 14 },
	};
	static const struct jt_line fib_lines[] = {
		{ .off = 0x0, .line = 7 }, { .off = 0x8, .line = 8 }, { .off = 0xc, .line = 9 },
	};
	const struct jt_frame base[] = { S(1, 0x8), F(1, 0x1234) };	/* call_helper, libjvm */
	const struct jt_frame spin_a[] = { M(1, 0x10), M(2, 0x40), S(1, 0x8), F(1, 0x1234) };
	const struct jt_frame spin_b[] = { M(1, 0x18), M(2, 0x40), S(1, 0x8), F(1, 0x1234) };
	const struct jt_frame sys[] = { S(2, 0x20), K(0xffffffff81a00b2cULL), M(3, 0x4),
					M(2, 0x50), S(1, 0x8), F(1, 0x1234) };
	const struct jt_frame fib[] = { M(5, 0x8), M(5, 0xc), M(5, 0xc), M(2, 0x60), S(1, 0x8),
					F(1, 0x1234) };
	const struct jt_frame lost[] = { U(0x401a2b), F(1, 0x1234) };
	const struct jt_frame work[] = { M(4, 0x20), F(2, 0x5000) };
	struct jt_log_header h = {
		.start_ns = VL_T0, .realtime_offset_ns = 1700000000LL * 1000000000LL,
		.ncpus = 2, .sample_hz = 1000, .flags = JT_LOG_F_CALLS | JT_LOG_F_KSTACK,
		.hostname = "testhost", .kernel = "6.1.0-test",
	};
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	uint64_t ts = 10 * VL_MS;

	assert_non_null(w);
	vl_proc(w, 0, VL_JVM, "java", "java -jar app.jar");
	vl_proc(w, 0, VL_NODE, "node", "node app.js");
	vl_exec(w, 1000, VL_SH, "sh", "/bin/sh");
	vl_module(w, 2000, 1, VL_JVM, "/usr/lib/jvm/lib/server/libjvm.so");
	vl_module(w, 2000, 2, VL_NODE, "/usr/bin/node");
	vl_symbol(w, 3000, 1, 1, VL_JVM, "JavaCalls::call_helper");
	vl_symbol(w, 3000, 2, 0, 0, "do_syscall_64");
	vl_method(w, 4000, 1, VL_JVM, "Hot.spin(int)");
	vl_lines(w, 4000, 1, VL_JVM, spin_lines, 3, "Hot.java", sizeof("Hot.java"));
	vl_method(w, 4000, 2, VL_JVM, "Main.main(String[])");
	vl_method(w, 4000, 3, VL_JVM, "Util.<clinit>(Ljava/lang/String;)&\"x'");
	vl_method(w, 4000, 4, VL_NODE, "JS:~work /app.js:2");
	vl_method(w, 4000, 5, VL_JVM, "Rec.fib(int)");
	vl_lines(w, 4000, 5, VL_JVM, fib_lines, 3, "Rec.java", sizeof("Rec.java"));

	/* calls on thread 101: one leave from before the log, nesting, recursion, a leave
	 * that closes an activation that never left, and one still open at the end */
	vl_call(w, JT_REC_LEAVE, 5 * VL_MS, VL_JVM, 101, 1);
	vl_call(w, JT_REC_ENTER, 6 * VL_MS, VL_JVM, 101, 2);
	vl_call(w, JT_REC_ENTER, 7 * VL_MS, VL_JVM, 101, 1);
	vl_call(w, JT_REC_LEAVE, 9 * VL_MS, VL_JVM, 101, 1);		/* spin 2 ms */

	vl_samples(w, &ts, VL_JVM, 6, spin_a, 4);			/* 10..15 ms */
	vl_samples(w, &ts, VL_JVM, 2, spin_b, 4);			/* 16..17 */
	vl_samples(w, &ts, VL_JVM, 3, sys, 6);				/* 18..20 */

	vl_call(w, JT_REC_ENTER, 21 * VL_MS, VL_JVM, 101, 5);
	vl_call(w, JT_REC_ENTER, 22 * VL_MS, VL_JVM, 101, 5);
	vl_call(w, JT_REC_LEAVE, 25 * VL_MS, VL_JVM, 101, 5);		/* inner fib 3 ms */
	vl_call(w, JT_REC_LEAVE, 26 * VL_MS, VL_JVM, 101, 5);		/* outer fib 5 ms */
	ts = 27 * VL_MS;
	vl_samples(w, &ts, VL_JVM, 2, fib, 6);				/* 27..28 */
	vl_samples(w, &ts, VL_JVM, 1, lost, 2);				/* 29 */
	ts += VL_MS;	/* 30: a sample naming an undefined method was here; the reader
			 * refuses such logs now (test_log, test_dump) */
	vl_samples(w, &ts, VL_JVM, 1, base, 2);				/* 31 */
	vl_samples(w, &ts, VL_NODE, 4, work, 2);			/* 32..35 */
	vl_samples(w, &ts, VL_NODE, 1, NULL, 0);			/* 36: no frames */

	vl_call(w, JT_REC_ENTER, 40 * VL_MS, VL_JVM, 101, 1);
	vl_call(w, JT_REC_LEAVE, 41 * VL_MS, VL_JVM, 101, 2);		/* main 35 ms; spin unclosed */
	vl_call(w, JT_REC_ENTER, 42 * VL_MS, VL_NODE, 201, 4);
	vl_call(w, JT_REC_LEAVE, 44 * VL_MS, VL_NODE, 201, 4);		/* work 2 ms */
	vl_call(w, JT_REC_ENTER, 45 * VL_MS, VL_JVM, 101, 3);		/* open at the end */
	vl_drop(w, 50 * VL_MS, JT_DROP_RB_SAMPLE, 3);
	vl_drop(w, 50 * VL_MS, JT_DROP_REORDER, 0);
	assert_int_equal(jt_logw__close(w), 0);
}

/* ---- scratch files and goldens ---- */

struct vl_tmp {
	char dir[256];
	char log[300];
};

static inline int vl_setup(void **state)
{
	const char *base = getenv("TMPDIR");
	struct vl_tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "%s/jt_test_views.XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->log, sizeof(t->log), "%s/v.jtl", t->dir);
	*state = t;
	return 0;
}

static inline int vl_teardown(void **state)
{
	struct vl_tmp *t = *state;
	struct dirent *de;
	DIR *d = opendir(t->dir);

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(t->dir);
	free(t);
	return 0;
}

/* Replace every occurrence of what in s (malloc'd) by with; returns the new string. */
static inline char *vl_replace(char *s, const char *what, const char *with)
{
	size_t wl = strlen(what), nl = strlen(with), n = 0;
	char *p, *hit, *out, *o;

	for (p = strstr(s, what); p; p = strstr(p + wl, what))
		n++;
	out = malloc(strlen(s) + n * nl + 1);
	assert_non_null(out);
	o = out;
	for (p = s; (hit = strstr(p, what)); p = hit + wl) {
		memcpy(o, p, hit - p);
		o += hit - p;
		memcpy(o, with, nl);
		o += nl;
	}
	strcpy(o, p);
	free(s);
	return out;
}

/*
 * Compare got with the golden file; JT_UPDATE_GOLDEN=1 rewrites the golden instead (then
 * read the diff before committing it).
 */
static inline void vl_golden(const char *golden, const char *got)
{
	FILE *f;
	char *want;
	long len;

	if (getenv("JT_UPDATE_GOLDEN")) {
		f = fopen(golden, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(got, 1, strlen(got), f), strlen(got));
		assert_int_equal(fclose(f), 0);
		return;
	}
	f = fopen(golden, "r");
	if (!f)
		fail_msg("%s: missing (JT_UPDATE_GOLDEN=1 writes it)", golden);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	want = malloc(len + 1);
	assert_non_null(want);
	assert_int_equal(fread(want, 1, len, f), len);
	want[len] = '\0';
	fclose(f);
	if (strcmp(want, got)) {
		fprintf(stderr, "---- %s differs; got:\n%s\n----\n", golden, got);
		fail_msg("%s differs from the output", golden);
	}
	free(want);
}

/* ---- a stack as deep as a crafted log's: views must not recurse per frame ---- */

#define VL_DEEP 50000		/* frames in one sample (a record holds up to 65534) */
#define VL_SMALL_STACK (1U << 20)	/* recursion per frame needs several times this */

/* A log with one sample of VL_DEEP frames alternating a() (the leaf) and b(), pid 7. */
static inline void vl_write_deep(const char *path)
{
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99 };
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	size_t size = sizeof(struct jt_rec_sample) + VL_DEEP * sizeof(struct jt_frame);
	struct jt_rec_sample *smp = calloc(1, size);
	unsigned i;

	assert_non_null(w);
	assert_non_null(smp);
	vl_proc(w, 0, 7, "deep", "deep");
	vl_method(w, 0, 1, 7, "a()");
	vl_method(w, 0, 2, 7, "b()");
	smp->h = (struct jt_rec_hdr){ .type = JT_REC_SAMPLE, .size = size, .ts = VL_T0 + VL_MS };
	smp->pid = 7;
	smp->tid = 8;
	smp->nr_frames = VL_DEEP;
	for (i = 0; i < VL_DEEP; i++)	/* leaf first: the root is b() */
		smp->frames[i] = (struct jt_frame)M(1 + (i & 1), 0);
	assert_int_equal(jt_logw__append(w, &smp->h), 0);
	assert_int_equal(jt_logw__close(w), 0);
	free(smp);
}

struct vl_small_run {
	int (*view)(FILE *out, void *arg);
	void *arg;
	FILE *out;
	int ret;
};

static inline void *vl_small_thread(void *p)
{
	struct vl_small_run *r = p;

	r->ret = r->view(r->out, r->arg);
	return NULL;
}

/*
 * Run view(out, arg) into outpath in a child, on a thread with a small stack: recursion
 * per frame overflows it and kills the child instead of the test. Returns the child's
 * status (0: written; 128 + signal if it died).
 */
static inline int vl_on_small_stack(int (*view)(FILE *out, void *arg), void *arg,
				    const char *outpath)
{
	struct vl_small_run r = { .view = view, .arg = arg };
	pthread_attr_t attr;
	pthread_t th;
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		r.out = fopen(outpath, "w");
		if (!r.out || pthread_attr_init(&attr) ||
		    pthread_attr_setstacksize(&attr, VL_SMALL_STACK) ||
		    pthread_create(&th, &attr, vl_small_thread, &r) || pthread_join(th, NULL))
			_exit(2);
		_exit(r.ret || fclose(r.out) ? 3 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif
