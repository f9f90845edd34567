// SPDX-License-Identifier: GPL-2.0
/* The .jtl writer and reader: round trips, blocks, truncation, corruption, safe creation. */
#define ZLIB_CONST
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "scratch.h"

#include "jt_events.h"
#include "log/log.h"
#include "log/format.h"
#include "base/names.h"
#include "base/util.h"

#define START_NS 5000000000ULL

/* ---- a temporary directory per test ---- */

struct tmp {
	char dir[256];
	char path[512];		/* scratch for tpath() */
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t || scratch_make(t->dir, sizeof(t->dir), "log")) {
		free(t);
		return -1;
	}
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

static const char *tpath(struct tmp *t, const char *name)
{
	snprintf(t->path, sizeof(t->path), "%s/%s", t->dir, name);
	return t->path;
}

static void spit(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* stderr into a file for a while: what was reported, and how often */
struct capture {
	int saved;
	char path[512];
};

static void capture_begin(struct capture *c, struct tmp *t)
{
	int fd;

	snprintf(c->path, sizeof(c->path), "%s/stderr.txt", t->dir);
	fflush(stderr);
	c->saved = dup(2);
	fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(c->saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
}

static char *capture_end(struct capture *c)
{
	size_t len;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	return slurp(c->path, &len);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ---- records ---- */

union recbuf {
	struct jt_rec_hdr h;
	__u64 align;
	unsigned char b[8192];
};

static struct jt_rec_hdr *rec_init(union recbuf *rb, unsigned type, size_t size, uint64_t ts)
{
	size = jt_round8(size);
	memset(rb->b, 0, size);
	rb->h.type = type;
	rb->h.size = size;
	rb->h.ts = ts;
	return &rb->h;
}

static const struct jt_rec_hdr *mk_method(union recbuf *rb, uint64_t ts, uint64_t id,
					  uint32_t pid, uint64_t start, const char *name)
{
	size_t n = strlen(name);
	struct jt_rec_method *m = (void *)rec_init(rb, JT_REC_METHOD, sizeof(*m) + n, ts);

	m->id = id;
	m->start = start;
	m->size = 0x40 + id % 0x400;
	m->load_ts = ts - 100;
	m->agent_id = id * 3;
	m->pid = pid;
	m->src = JT_SRC_AGENT + id % 3;
	m->name_len = n;
	memcpy(m->name, name, n);
	return &m->h;
}

static const struct jt_rec_hdr *mk_call(union recbuf *rb, unsigned type, uint64_t ts,
					uint32_t pid, uint32_t tid, uint64_t id)
{
	struct jt_rec_call *c = (void *)rec_init(rb, type, sizeof(*c), ts);

	c->id = id;
	c->pid = pid;
	c->tid = tid;
	return &c->h;
}

/*
 * A sample of nr frames naming method id (and, from the second frame on, method older
 * when it is not 0), then bare user and kernel addresses: only what the log defined.
 */
static const struct jt_rec_hdr *mk_sample(union recbuf *rb, uint64_t ts, uint32_t pid,
					  unsigned nr, uint64_t seed, uint64_t id, uint64_t older)
{
	struct jt_rec_sample *s = (void *)rec_init(rb, JT_REC_SAMPLE,
						   sizeof(*s) + nr * sizeof(struct jt_frame), ts);
	unsigned i;

	s->pid = pid;
	s->tid = pid + 1;
	s->cpu = seed % 4;
	s->nr_frames = nr;
	for (i = 0; i < nr; i++) {
		if (i == 0 || (i == 1 && older))
			s->frames[i].ref = JT_FRAME_REF(JT_FRAME_METHOD, i ? older : id);
		else
			s->frames[i].ref = JT_FRAME_REF(i % 2 ? JT_FRAME_USER : JT_FRAME_KERNEL, 0);
		s->frames[i].off = (seed * 7 + i * 13) % 4096;
	}
	return &s->h;
}

static const struct jt_rec_hdr *mk_exec(union recbuf *rb, uint64_t ts, uint32_t pid,
					const char *comm, const char *path)
{
	size_t n = strlen(path);
	struct jt_rec_exec *e = (void *)rec_init(rb, JT_REC_EXEC, sizeof(*e) + n, ts);

	e->pid = pid;
	e->path_len = n;
	strncpy(e->comm, comm, sizeof(e->comm));
	memcpy(e->path, path, n);
	return &e->h;
}

static const struct jt_rec_hdr *mk_exit(union recbuf *rb, uint64_t ts, uint32_t pid)
{
	struct jt_rec_exit *e = (void *)rec_init(rb, JT_REC_EXIT, sizeof(*e), ts);

	e->pid = pid;
	return &e->h;
}

static const struct jt_rec_hdr *mk_drop(union recbuf *rb, uint64_t ts, unsigned what,
					uint64_t count)
{
	struct jt_rec_drop *d = (void *)rec_init(rb, JT_REC_DROP, sizeof(*d), ts);

	d->what = what;
	d->count = count;
	return &d->h;
}

static const struct jt_rec_hdr *mk_proc(union recbuf *rb, uint64_t ts, uint32_t pid,
					const char *comm, const char *cmdline)
{
	size_t n = strlen(cmdline);
	struct jt_rec_proc *p = (void *)rec_init(rb, JT_REC_PROC, sizeof(*p) + n, ts);

	p->pid = pid;
	p->cmdline_len = n;
	strncpy(p->comm, comm, sizeof(p->comm));
	memcpy(p->cmdline, cmdline, n);
	return &p->h;
}

static const struct jt_rec_hdr *mk_module(union recbuf *rb, uint64_t ts, uint64_t id,
					  uint32_t pid, const char *path)
{
	size_t n = strlen(path);
	struct jt_rec_module *m = (void *)rec_init(rb, JT_REC_MODULE, sizeof(*m) + n, ts);

	m->id = id;
	m->start = 0x7f0000000000ULL + id * 0x100000;
	m->end = m->start + 0x21000;
	m->pgoff = 0x1000;
	m->pid = pid;
	m->path_len = n;
	memcpy(m->path, path, n);
	return &m->h;
}

static const struct jt_rec_hdr *mk_symbol(union recbuf *rb, uint64_t ts, uint64_t id,
					  uint64_t module, const char *name)
{
	size_t n = strlen(name);
	struct jt_rec_symbol *y = (void *)rec_init(rb, JT_REC_SYMBOL, sizeof(*y) + n, ts);

	y->id = id;
	y->module = module;
	y->start = 0x5e1100;
	y->size = 0x2a0;
	y->pid = module ? 42 : 0;
	y->name_len = n;
	memcpy(y->name, name, n);
	return &y->h;
}

/* A type this reader does not know, as a newer writer might add. */
static const struct jt_rec_hdr *mk_unknown(union recbuf *rb, uint64_t ts, unsigned type,
					   size_t size)
{
	size_t i;

	rec_init(rb, type, size, ts);
	for (i = sizeof(rb->h); i < size; i++)
		rb->b[i] = i * 31 + 7;
	return &rb->h;
}

/*
 * Record number i of a long log, a sound one: in groups of eight, a method definition
 * (id i / 8 + 1), then calls of it and a sample naming it and, from its second frame, the
 * method defined eight groups (64 records) before. ts is START_NS + 10 i.
 */
static const struct jt_rec_hdr *gen(union recbuf *rb, uint64_t i)
{
	char name[64];
	uint64_t ts = START_NS + i * 10, id = i / 8 + 1;
	uint32_t pid = 100 + i % 3;

	switch (i % 8) {
	case 0:
		snprintf(name, sizeof(name), "Lcom/example/App;::work%llu(I)V",
			 (unsigned long long)i);
		return mk_method(rb, ts, id, pid, 0x7f00000000ULL + i * 64, name);
	case 3:
		return mk_sample(rb, ts, pid, i % 9, i, id, id > 8 ? id - 8 : 0);
	case 1:
	case 4:
	case 6:
		return mk_call(rb, JT_REC_ENTER, ts, pid, pid + i % 2, id);
	default:
		return mk_call(rb, JT_REC_LEAVE, ts, pid, pid + i % 2, id);
	}
}

static struct jt_log_header test_header(void)
{
	struct jt_log_header h = {
		.start_ns = START_NS,
		.realtime_offset_ns = -123456789,
		.ncpus = 4,	/* gen()'s samples run on CPUs 0 to 3 */
		.sample_hz = 99,
		.flags = JT_LOG_F_CALLS | JT_LOG_F_KSTACK,
	};

	strcpy(h.hostname, "testhost");
	strcpy(h.kernel, "6.18.0-test");
	return h;
}

static struct jt_log_writer *create(const char *path)
{
	struct jt_log_header h = test_header();
	struct jt_log_writer *w = jt_logw__create(path, &h, false);

	assert_non_null(w);
	return w;
}

/* Write records [from, to) of gen(), then end the block. */
static void write_gen_block(struct jt_log_writer *w, uint64_t from, uint64_t to)
{
	union recbuf rb;
	uint64_t i;

	for (i = from; i < to; i++)
		assert_int_equal(jt_logw__append(w, gen(&rb, i)), 0);
	assert_int_equal(jt_logw__flush(w), 0);
}

/*
 * Read everything, checking that record i is gen(i) byte for byte and that the end
 * record, if any, counts them; returns the records read (not counting the end).
 */
static uint64_t read_gen(struct jt_log_reader *r)
{
	const struct jt_rec_hdr *rec;
	union recbuf rb;
	uint64_t n = 0;

	while ((rec = jt_logr__next(r))) {
		if (rec->type == JT_REC_END) {
			assert_int_equal(((const struct jt_rec_end *)rec)->records, n);
			continue;
		}
		gen(&rb, n);
		assert_int_equal(rec->size, rb.h.size);
		assert_memory_equal(rec, rb.b, rb.h.size);
		n++;
	}
	return n;
}

/* Block offsets in a whole log (the test reads its own files: they are small). */
static size_t block_offsets(const unsigned char *buf, size_t len, size_t *offs, size_t max)
{
	struct jt_log_block b;
	size_t off = JT_LOG_HEADER_SIZE, n = 0;

	while (off + sizeof(b) <= len && n < max) {
		memcpy(&b, buf + off, sizeof(b));
		assert_int_equal(b.magic, JT_LOG_BLOCK_MAGIC);
		offs[n++] = off;
		off += sizeof(b) + b.zsize;
	}
	assert_int_equal(off, len);
	return n;
}

/* ---- tests ---- */

static void round_trip_keeps_every_record_type_byte_for_byte(void **state)
{
	struct tmp *t = *state;
	union recbuf rbs[20];
	const struct jt_rec_hdr *recs[20];
	const struct jt_rec_hdr *rec;
	struct jt_frame frames[5] = {
		{ JT_FRAME_REF(JT_FRAME_KERNEL, 0), 0xffffffff81000010ULL },
		{ JT_FRAME_REF(JT_FRAME_METHOD, 7), 0x24 },
		{ JT_FRAME_REF(JT_FRAME_MODULE, 2), 0x1234 },
		{ JT_FRAME_REF(JT_FRAME_USER, 0), 0x401000 },
		{ JT_FRAME_REF(JT_FRAME_SYMBOL, 3), 0x3c },
	};
	struct jt_log_header h = test_header(), rh;
	struct jt_log_writer *w;
	struct jt_log_reader *r;
	struct jt_rec_sample *s;
	size_t n = 0, i;
	uint64_t ts = START_NS;

	recs[n] = mk_proc(&rbs[n], ts++, 42, "java", "java -jar app.jar --fast"), n++;
	recs[n] = mk_exec(&rbs[n], ts++, 42, "java", "/usr/bin/java"), n++;
	recs[n] = mk_module(&rbs[n], ts++, 2, 42, "/usr/lib/jvm/lib/server/libjvm.so"), n++;
	recs[n] = mk_symbol(&rbs[n], ts++, 3, 2, "JavaCalls::call_helper"), n++;
	recs[n] = mk_symbol(&rbs[n], ts++, 4, 0, "do_syscall_64"), n++;
	recs[n] = mk_method(&rbs[n], ts++, 7, 42, 0x7f0012340000ULL, "Interpreter"), n++;
	recs[n] = mk_call(&rbs[n], JT_REC_ENTER, ts++, 42, 43, 7), n++;
	recs[n] = mk_sample(&rbs[n], ts++, 42, 0, 0, 0, 0), n++;
	s = (void *)rec_init(&rbs[n], JT_REC_SAMPLE, sizeof(*s) + sizeof(frames), ts++);
	s->pid = 42;
	s->tid = 43;
	s->cpu = 1;
	s->nr_frames = JT_ARRAY_SIZE(frames);
	memcpy(s->frames, frames, sizeof(frames));
	recs[n] = &s->h, n++;
	recs[n] = mk_call(&rbs[n], JT_REC_LEAVE, ts++, 42, 43, 7), n++;
	recs[n] = mk_call(&rbs[n], JT_REC_UNLOAD, ts++, 42, 43, 7), n++;
	recs[n] = mk_drop(&rbs[n], ts++, JT_DROP_REORDER, 17), n++;
	recs[n] = mk_unknown(&rbs[n], ts++, 200, 40), n++;
	recs[n] = mk_unknown(&rbs[n], ts++, 0, 16), n++;
	recs[n] = mk_exit(&rbs[n], ts, 42), n++;

	w = jt_logw__create(tpath(t, "all.jtl"), &h, false);
	assert_non_null(w);
	for (i = 0; i < n; i++)
		assert_int_equal(jt_logw__append(w, recs[i]), 0);
	assert_int_equal(jt_logw__records(w), n);
	assert_int_equal(jt_logw__close(w), 0);

	r = jt_logr__open(tpath(t, "all.jtl"));
	assert_non_null(r);
	rh = *jt_logr__header(r);
	assert_int_equal(rh.magic, JT_LOG_MAGIC);
	assert_int_equal(rh.version, JT_LOG_VERSION);
	assert_int_equal(rh.header_size, JT_LOG_HEADER_SIZE);
	jt_logfmt__seal(&h);	/* what the writer makes of it */
	assert_int_equal(rh.hdr_crc32, jt_logfmt__header_crc(&rh));
	assert_memory_equal(&rh, &h, sizeof(h));

	for (i = 0; i < n; i++) {
		rec = jt_logr__next(r);
		assert_non_null(rec);
		assert_int_equal(rec->size, recs[i]->size);
		assert_memory_equal(rec, recs[i], recs[i]->size);
		assert_int_equal(jt_logr__state(r), JT_LOGR_OK);
	}
	rec = jt_logr__next(r);
	assert_non_null(rec);
	assert_int_equal(rec->type, JT_REC_END);
	assert_int_equal(rec->size, sizeof(struct jt_rec_end));
	assert_int_equal(rec->ts, ts);	/* the last record's */
	assert_int_equal(((const struct jt_rec_end *)rec)->records, n);
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	assert_null(jt_logr__next(r));
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	jt_logr__close(r);
}

static void empty_log_has_just_its_end_record(void **state)
{
	struct tmp *t = *state;
	struct jt_log_reader *r;
	const struct jt_rec_hdr *rec;

	assert_int_equal(jt_logw__close(create(tpath(t, "empty.jtl"))), 0);
	r = jt_logr__open(t->path);
	assert_non_null(r);
	rec = jt_logr__next(r);
	assert_non_null(rec);
	assert_int_equal(rec->type, JT_REC_END);
	assert_int_equal(rec->ts, START_NS);
	assert_int_equal(((const struct jt_rec_end *)rec)->records, 0);
	assert_null(jt_logr__next(r));
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	jt_logr__close(r);
}

static void many_records_span_several_whole_blocks(void **state)
{
	struct tmp *t = *state;
	const uint64_t n = 100000;
	union recbuf rb;
	struct jt_log_writer *w;
	struct jt_log_reader *r;
	struct jt_log_block b;
	struct jt_rec_hdr *big;
	const struct jt_rec_hdr *rec;
	unsigned char *buf;
	size_t len, offs[256], nb, i;
	struct stat st;
	uint64_t k;

	w = create(tpath(t, "many.jtl"));
	for (k = 0; k < n; k++)
		assert_int_equal(jt_logw__append(w, gen(&rb, k)), 0);
	assert_int_equal(jt_logw__records(w), n);
	assert_int_equal(jt_logw__flush(w), 0);
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(jt_logw__bytes(w), st.st_size);

	/* the largest record a block holds: whatever is held goes first */
	assert_int_equal(jt_logw__append(w, gen(&rb, n)), 0);
	big = calloc(1, JT_LOG_BLOCK_MAX);
	assert_non_null(big);
	big->type = 99;
	big->size = JT_LOG_BLOCK_MAX;
	big->ts = START_NS + n * 10;
	assert_int_equal(jt_logw__append(w, big), 0);
	assert_int_equal(jt_logw__close(w), 0);

	buf = (unsigned char *)slurp(tpath(t, "many.jtl"), &len);
	nb = block_offsets(buf, len, offs, 256);
	assert_true(nb >= 10);
	for (i = 0; i < nb; i++) {
		memcpy(&b, buf + offs[i], sizeof(b));
		assert_true(b.rawsize <= JT_LOG_BLOCK_MAX);
		if (i + 4 < nb)	/* before the flush and the big record: filled to target */
			assert_true(b.rawsize >= JT_LOG_BLOCK_TARGET);
	}
	memcpy(&b, buf + offs[nb - 2], sizeof(b));
	assert_int_equal(b.rawsize, JT_LOG_BLOCK_MAX);	/* the big record, alone */
	free(buf);

	r = jt_logr__open(t->path);
	assert_non_null(r);
	for (k = 0; k <= n; k++) {
		rec = jt_logr__next(r);
		assert_non_null(rec);
		gen(&rb, k);
		assert_memory_equal(rec, rb.b, rb.h.size);
	}
	rec = jt_logr__next(r);
	assert_non_null(rec);
	assert_memory_equal(rec, big, JT_LOG_BLOCK_MAX);
	rec = jt_logr__next(r);
	assert_non_null(rec);
	assert_int_equal(rec->type, JT_REC_END);
	assert_int_equal(((const struct jt_rec_end *)rec)->records, n + 2);
	assert_null(jt_logr__next(r));
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	jt_logr__close(r);
	free(big);
}

/* A log of four blocks: 300, 300, 300, then 50 records and the end record. */
#define BLK_RECS 300
#define LAST_RECS 50

static unsigned char *four_block_log(struct tmp *t, const char *name, size_t *len,
				     size_t offs[4])
{
	struct jt_log_writer *w = create(tpath(t, name));
	unsigned char *buf;

	write_gen_block(w, 0, BLK_RECS);
	write_gen_block(w, BLK_RECS, 2 * BLK_RECS);
	write_gen_block(w, 2 * BLK_RECS, 3 * BLK_RECS);
	write_gen_block(w, 3 * BLK_RECS, 3 * BLK_RECS + LAST_RECS);
	assert_int_equal(jt_logw__close(w), 0);	/* the end record is a fifth block */
	buf = (unsigned char *)slurp(t->path, len);
	assert_int_equal(block_offsets(buf, *len, offs, 5), 5);
	return buf;
}

/* Cut at every offset: what is read is gen()'s prefix in whole blocks, never CORRUPT. */
static void truncated_file_reads_up_to_last_whole_block(void **state)
{
	struct tmp *t = *state;
	size_t len, offs[5], cut, ncuts = 0, i;
	size_t cuts[8192];
	unsigned char *buf;
	struct jt_log_reader *r;
	struct capture cap;
	char *err;
	int fd;

	buf = four_block_log(t, "whole.jtl", &len, offs);
	/* every offset inside the last two blocks, then some in each earlier block */
	for (cut = len - 1; cut >= offs[3] && ncuts < 8000; cut--)
		cuts[ncuts++] = cut;
	assert_int_equal(cuts[ncuts - 1], offs[3]);
	for (i = 3; i-- > 0;) {	/* descending, for ftruncate() below */
		size_t some[] = { offs[i + 1] - 1, offs[i] + 40, offs[i] + 17, offs[i] + 16,
				  offs[i] + 8, offs[i] + 1, offs[i] };

		memcpy(cuts + ncuts, some, sizeof(some));
		ncuts += JT_ARRAY_SIZE(some);
	}
	cuts[ncuts++] = JT_LOG_HEADER_SIZE;

	spit(tpath(t, "cut.jtl"), buf, len);
	fd = open(t->path, O_WRONLY);
	assert_true(fd >= 0);
	for (i = 0; i < ncuts; i++) {
		uint64_t want = 0;
		size_t b;

		cut = cuts[i];
		for (b = 0; b < 4 && offs[b + 1] <= cut; b++)
			want += b < 3 ? BLK_RECS : LAST_RECS;

		r = jt_logr__open_mem(buf, cut);
		assert_non_null(r);
		assert_int_equal(read_gen(r), want);
		assert_int_equal(jt_logr__state(r), JT_LOGR_TRUNCATED);
		assert_non_null(strstr(jt_logr__why(r), "offset"));
		jt_logr__close(r);

		assert_int_equal(ftruncate(fd, cut), 0);	/* descending: a real cut file */
		r = jt_logr__open(tpath(t, "cut.jtl"));
		assert_non_null(r);
		assert_int_equal(read_gen(r), want);
		assert_int_equal(jt_logr__state(r), JT_LOGR_TRUNCATED);
		jt_logr__close(r);
	}

	/* cut inside the header: refused, with the reason */
	capture_begin(&cap, t);
	assert_null(jt_logr__open_mem(buf, JT_LOG_HEADER_SIZE - 1));
	assert_int_equal(ftruncate(fd, 100), 0);
	assert_null(jt_logr__open(tpath(t, "cut.jtl")));
	err = capture_end(&cap);
	assert_int_equal(count_lines(err), 2);
	assert_non_null(strstr(err, "header cut short"));
	free(err);
	close(fd);
	free(buf);
}

static void flipped_byte_in_middle_block_is_corrupt(void **state)
{
	struct tmp *t = *state;
	size_t len, offs[5], off;
	unsigned char *buf;
	struct jt_log_reader *r;
	struct jt_log_block b;
	uint64_t flips = 0, harmless = 0, n;

	buf = four_block_log(t, "whole.jtl", &len, offs);
	memcpy(&b, buf + offs[1], sizeof(b));
	for (off = offs[1]; off < offs[2]; off++) {
		size_t in = off - offs[1];
		unsigned char mask = 0xff;

		/* a longer zsize may reach past the end, which reads as TRUNCATED: stay near */
		if (in >= offsetof(struct jt_log_block, zsize) + 1 &&
		    in < offsetof(struct jt_log_block, rawsize))
			continue;
		if (in == offsetof(struct jt_log_block, zsize))
			mask = 1;
		buf[off] ^= mask;
		r = jt_logr__open_mem(buf, len);
		assert_non_null(r);
		n = read_gen(r);
		if (n == 3 * BLK_RECS + LAST_RECS && jt_logr__state(r) == JT_LOGR_END) {
			/* deflate has a few bits that change nothing: every byte came out */
			harmless++;
			jt_logr__close(r);
			buf[off] ^= mask;
			continue;
		}
		assert_int_equal(n, BLK_RECS);
		assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
		assert_non_null(strstr(jt_logr__why(r), "offset"));
		jt_logr__close(r);
		buf[off] ^= mask;
		flips++;
	}
	assert_true(flips > 100);
	assert_true(harmless <= 2);

	/* and from a file, with the reason naming the block */
	buf[offs[1] + sizeof(b) + b.zsize / 2] ^= 0x5a;
	spit(tpath(t, "flipped.jtl"), buf, len);
	r = jt_logr__open(t->path);
	assert_non_null(r);
	assert_int_equal(read_gen(r), BLK_RECS);
	assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	assert_non_null(strstr(jt_logr__why(r), "block at offset"));
	jt_logr__close(r);
	free(buf);
}

/* A log of one block holding raw (checked by crc, so only the record checks stand guard). */

/* A block's data as the writer makes it: raw deflate, no zlib wrapper. */
static int raw_deflate(unsigned char *dst, uLongf *dlen, const void *src, size_t len)
{
	z_stream zs = { 0 };
	int ret = deflateInit2(&zs, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);

	if (ret != Z_OK)
		return ret;
	zs.next_in = (Bytef *)src;
	zs.avail_in = len;
	zs.next_out = dst;
	zs.avail_out = *dlen;
	ret = deflate(&zs, Z_FINISH);
	*dlen = zs.total_out;
	deflateEnd(&zs);
	return ret == Z_STREAM_END ? Z_OK : Z_BUF_ERROR;
}

static size_t one_block_log(unsigned char *out, size_t cap, const void *raw, size_t rawsize)
{
	struct jt_log_header h = test_header();
	struct jt_log_block b = { .magic = JT_LOG_BLOCK_MAGIC, .rawsize = rawsize };
	uLongf zlen = cap - sizeof(h) - sizeof(b);

	jt_logfmt__seal(&h);
	assert_int_equal(raw_deflate(out + sizeof(h) + sizeof(b), &zlen, raw, rawsize), Z_OK);
	b.zsize = zlen;
	b.crc32 = crc32(0, raw, rawsize);
	memcpy(out, &h, sizeof(h));
	memcpy(out + sizeof(h), &b, sizeof(b));
	return sizeof(h) + sizeof(b) + zlen;
}

/* The log in file reads good, then is corrupt, saying why. */
static void good_then_corrupt(const unsigned char *file, size_t len,
			      const struct jt_rec_hdr *good, const char *why)
{
	struct jt_log_reader *r = jt_logr__open_mem(file, len);
	const struct jt_rec_hdr *rec;

	assert_non_null(r);
	rec = jt_logr__next(r);
	assert_non_null(rec);
	assert_memory_equal(rec, good, good->size);
	assert_null(jt_logr__next(r));
	assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	assert_non_null(strstr(jt_logr__why(r), why));
	jt_logr__close(r);
}

static void record_whose_lengths_overrun_its_size_is_corrupt(void **state)
{
	static const struct {
		unsigned type, size, len_off, len;
	} bad[] = {
		{ JT_REC_METHOD, 72, offsetof(struct jt_rec_method, name_len), 9 },
		{ JT_REC_METHOD, 56, 0, 0 },
		{ JT_REC_ENTER, 24, 0, 0 },
		{ JT_REC_SAMPLE, 48, offsetof(struct jt_rec_sample, nr_frames), 2 },
		{ JT_REC_EXEC, 48, offsetof(struct jt_rec_exec, path_len), 9 },
		{ JT_REC_EXIT, 16, 0, 0 },
		{ JT_REC_DROP, 24, 0, 0 },
		{ JT_REC_PROC, 40, offsetof(struct jt_rec_proc, cmdline_len), 1 },
		{ JT_REC_MODULE, 64, offsetof(struct jt_rec_module, path_len), 9 },
		{ JT_REC_END, 16, 0, 0 },
		{ 77, 12, 0, 0 },	/* a size below 16, */
		{ 77, 20, 0, 0 },	/* not a multiple of 8, */
		{ 77, 4096, 0, 0 },	/* past the block */
	};
	union recbuf rb, raw;
	unsigned char *file = malloc(1 << 16);
	size_t i, len, rawsize;

	(void)state;
	assert_non_null(file);
	for (i = 0; i < JT_ARRAY_SIZE(bad); i++) {
		/* a good record first, then the bad one: the good one is read */
		const struct jt_rec_hdr *good = mk_drop(&rb, START_NS, JT_DROP_REORDER, 1);

		memcpy(raw.b, good, good->size);
		memset(raw.b + good->size, 0, 128);
		memcpy(raw.b + good->size, &(struct jt_rec_hdr){ .type = bad[i].type,
			.size = bad[i].size, .ts = START_NS }, sizeof(struct jt_rec_hdr));
		if (bad[i].len_off)
			memcpy(raw.b + good->size + bad[i].len_off, &(__u16){ bad[i].len }, 2);
		rawsize = good->size + (bad[i].size > 128 ? 128 : jt_round8(bad[i].size));
		len = one_block_log(file, 1 << 16, raw.b, rawsize);
		good_then_corrupt(file, len, good, "byte 32 of its data");
	}
	free(file);
}

/*
 * One thread's calls in a row are one JT_REC_CALLS of a few bytes a call, read back as the
 * enter and leave records written: times far apart and close, ids up and down, another
 * thread's and a sample cutting runs, a lone call, runs across blocks.
 */
static void runs_of_one_threads_calls_read_back_exactly_in_few_bytes(void **state)
{
	struct tmp *t = *state;
	enum { N = 30000 };
	union recbuf *rbs = malloc(N * sizeof(*rbs));
	const struct jt_rec_hdr *rec;
	struct jt_log_writer *w;
	struct jt_log_reader *r;
	struct jt_log_block b;
	unsigned char *file;
	size_t len, i, n = 0;
	uint64_t ts = START_NS;
	FILE *f;

	assert_non_null(rbs);
	mk_method(&rbs[n++], ts, 1, 42, 0x1000, "a");
	mk_method(&rbs[n++], ts, 300000, 42, 0x2000, "b");
	while (n < N) {
		uint64_t k = n % 97;

		if (k == 13)
			mk_sample(&rbs[n], ts, 42, 1, n, 1, 0);
		else if (k == 50 || k == 51)	/* another thread's, and one alone */
			mk_call(&rbs[n], JT_REC_ENTER, ts, 42, 44 + k, 300000);
		else
			mk_call(&rbs[n], n & 1 ? JT_REC_LEAVE : JT_REC_ENTER, ts, 42, 43,
				n & 2 ? 1 : 300000);
		n++;
		/* mostly tens of ns apart, sometimes none, seconds or weeks */
		ts += k == 7 ? 0 : k == 70 ? 5000000000ULL : k == 71 ? (1ULL << 50) : 20 + k;
	}
	w = create(tpath(t, "runs.jtl"));
	for (i = 0; i < n; i++)
		assert_int_equal(jt_logw__append(w, &rbs[i].h), 0);
	assert_int_equal(jt_logw__records(w), n);
	assert_int_equal(jt_logw__close(w), 0);

	r = jt_logr__open(tpath(t, "runs.jtl"));
	assert_non_null(r);
	for (i = 0; i < n; i++) {
		rec = jt_logr__next(r);
		assert_non_null(rec);
		assert_int_equal(rec->size, rbs[i].h.size);
		assert_memory_equal(rec, rbs[i].b, rbs[i].h.size);
	}
	rec = jt_logr__next(r);
	assert_non_null(rec);
	assert_int_equal(rec->type, JT_REC_END);
	assert_null(jt_logr__next(r));
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	assert_int_equal(jt_logr__stats(r)->records, n + 1);
	jt_logr__close(r);

	/* the calls take a few bytes each before compression, not a record's 32 */
	file = malloc(1 << 20);
	assert_non_null(file);
	f = fopen(tpath(t, "runs.jtl"), "r");
	assert_non_null(f);
	len = fread(file, 1, 1 << 20, f);
	fclose(f);
	memcpy(&b, file + JT_LOG_HEADER_SIZE, sizeof(b));
	assert_int_equal(b.magic, JT_LOG_BLOCK_MAGIC);
	assert_true(len < (1 << 20));
	assert_true(b.rawsize < 8 * N);
	free(file);
	free(rbs);
}

/* An enter larger than a call (a newer writer's, with more after it) is kept whole. */
static void call_records_larger_than_a_call_are_written_whole(void **state)
{
	struct tmp *t = *state;
	union recbuf rbs[4];
	struct jt_rec_call *big;
	const struct jt_rec_hdr *rec;
	struct jt_log_writer *w;
	struct jt_log_reader *r;
	size_t i;

	mk_method(&rbs[0], START_NS, 1, 42, 0x1000, "a");
	mk_call(&rbs[1], JT_REC_ENTER, START_NS + 1, 42, 43, 1);
	big = (void *)rec_init(&rbs[2], JT_REC_ENTER, sizeof(*big) + 8, START_NS + 2);
	big->id = 1;
	big->pid = 42;
	big->tid = 43;
	memset(big + 1, 0xab, 8);
	mk_call(&rbs[3], JT_REC_LEAVE, START_NS + 3, 42, 43, 1);
	w = create(tpath(t, "big.jtl"));
	for (i = 0; i < 4; i++)
		assert_int_equal(jt_logw__append(w, &rbs[i].h), 0);
	assert_int_equal(jt_logw__close(w), 0);
	r = jt_logr__open(tpath(t, "big.jtl"));
	assert_non_null(r);
	for (i = 0; i < 4; i++) {
		rec = jt_logr__next(r);
		assert_non_null(rec);
		assert_int_equal(rec->size, rbs[i].h.size);
		assert_memory_equal(rec, rbs[i].b, rbs[i].h.size);
	}
	jt_logr__close(r);
}

/* A run of calls whose coding does not add up is a malformed record, the rest unread. */
static void run_of_calls_coded_wrong_is_corrupt(void **state)
{
	static const struct {
		unsigned int count, len, size;
		unsigned char bytes[24];
		uint64_t ts;	/* 0: START_NS + 1 */
	} bad[] = {
		{ 0, 0, 32, { 0 }, 0 },				/* no calls */
		{ 1, 2, 32, { 0 }, 0 },				/* len past size */
		{ 1, 2, 48, { 0, 2 }, 0 },				/* padding of 14 */
		{ 2, 2, 40, { 0, 2 }, 0 },				/* the second call missing */
		{ 1, 2, 40, { 0, 0x82 }, 0 },			/* cut inside a varint */
		{ 1, 3, 40, { 0, 2, 0 }, 0 },			/* a byte after the last */
		{ 1, 2, 40, { 0, 2, 0, 5 }, 0 },			/* padding not zero */
		{ 1, 12, 48, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02,
			       2 }, 0 },				/* more than 64 bits */
		{ 1, 12, 48, { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
			       2 }, (1ULL << 63) + 5 },		/* its time wraps */
	};
	union recbuf rb, mb, raw;
	unsigned char *file = malloc(1 << 16);
	const struct jt_rec_hdr *good = mk_method(&mb, START_NS, 2, 42, 0x1000, "m");
	struct jt_log_reader *r;
	const struct jt_rec_hdr *rec;
	struct jt_rec_calls run;
	size_t i, len;

	(void)state;
	assert_non_null(file);
	memcpy(raw.b, good, good->size);
	for (i = 0; i < JT_ARRAY_SIZE(bad); i++) {
		memset(raw.b + good->size, 0, bad[i].size);
		run = (struct jt_rec_calls){
			.h = { .type = JT_REC_CALLS, .size = bad[i].size,
			       .ts = bad[i].ts ? bad[i].ts : START_NS + 1 },
			.pid = 42, .tid = 43, .count = bad[i].count, .len = bad[i].len,
		};
		memcpy(raw.b + good->size, &run, sizeof(run));
		memcpy(raw.b + good->size + sizeof(run), bad[i].bytes, bad[i].size - sizeof(run));
		len = one_block_log(file, 1 << 16, raw.b, good->size + bad[i].size);
		good_then_corrupt(file, len, good, "calls record");
	}
	/* the same well coded reads: enter 2 at START_NS + 1, leave 2 at START_NS + 3 */
	memcpy(raw.b + good->size, &(struct jt_rec_calls){
		.h = { .type = JT_REC_CALLS, .size = 40, .ts = START_NS + 1 },
		.pid = 42, .tid = 43, .count = 2, .len = 4 }, sizeof(run));
	memcpy(raw.b + good->size + sizeof(run), (unsigned char[8]){ 0, 4, 5, 0 }, 8);
	len = one_block_log(file, 1 << 16, raw.b, good->size + 40);
	r = jt_logr__open_mem(file, len);
	assert_non_null(r);
	assert_non_null(jt_logr__next(r));
	rec = jt_logr__next(r);
	assert_non_null(rec);
	assert_memory_equal(rec, mk_call(&rb, JT_REC_ENTER, START_NS + 1, 42, 43, 2), 32);
	rec = jt_logr__next(r);
	assert_non_null(rec);
	assert_memory_equal(rec, mk_call(&rb, JT_REC_LEAVE, START_NS + 3, 42, 43, 2), 32);
	assert_null(jt_logr__next(r));
	assert_int_equal(jt_logr__state(r), JT_LOGR_TRUNCATED);
	jt_logr__close(r);
	free(file);
}

static void file_mode_is_0600(void **state)
{
	struct tmp *t = *state;
	struct stat st;
	mode_t old = umask(0);

	assert_int_equal(jt_logw__close(create(tpath(t, "mode.jtl"))), 0);
	umask(old);
	assert_int_equal(lstat(t->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* path reads as n records of gen(), then stops in state. */
static void assert_reads_gen(const char *path, uint64_t n, enum jt_logr_state state)
{
	struct jt_log_reader *r = jt_logr__open(path);

	assert_non_null(r);
	assert_int_equal(read_gen(r), n);
	assert_int_equal(jt_logr__state(r), state);
	jt_logr__close(r);
}

static void existing_file_is_refused_without_force_and_replaced_with_force(void **state)
{
	struct tmp *t = *state;
	struct jt_log_header h = test_header();
	struct jt_log_writer *w;
	struct capture cap;
	union recbuf rb;
	char *err, *text;
	size_t len;

	spit(tpath(t, "old.jtl"), "old contents\n", 13);
	capture_begin(&cap, t);
	assert_null(jt_logw__create(tpath(t, "old.jtl"), &h, false));
	err = capture_end(&cap);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "old.jtl: already exists"));
	free(err);
	text = slurp(tpath(t, "old.jtl"), &len);
	assert_string_equal(text, "old contents\n");
	free(text);

	w = jt_logw__create(t->path, &h, true);
	assert_non_null(w);
	assert_int_equal(jt_logw__append(w, gen(&rb, 0)), 0);
	assert_int_equal(jt_logw__close(w), 0);
	assert_reads_gen(tpath(t, "old.jtl"), 1, JT_LOGR_END);
}

static void symlink_at_path_is_never_followed(void **state)
{
	struct tmp *t = *state;
	struct jt_log_header h = test_header();
	char target[512], link[512], dangling[512], nowhere[512];
	struct capture cap;
	struct stat st;
	char *text, *err;
	size_t len;

	snprintf(target, sizeof(target), "%s", tpath(t, "precious"));
	snprintf(link, sizeof(link), "%s", tpath(t, "link.jtl"));
	snprintf(dangling, sizeof(dangling), "%s", tpath(t, "dangling.jtl"));
	snprintf(nowhere, sizeof(nowhere), "%s", tpath(t, "nowhere"));
	spit(target, "precious\n", 9);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(symlink(nowhere, dangling), 0);

	capture_begin(&cap, t);
	assert_null(jt_logw__create(link, &h, false));
	assert_null(jt_logw__create(dangling, &h, false));
	err = capture_end(&cap);
	assert_int_equal(count_lines(err), 2);
	free(err);
	assert_int_equal(lstat(nowhere, &st), -1);	/* not created through the link */

	/* force replaces the link itself, never what it points to */
	assert_int_equal(jt_logw__close(jt_logw__create(link, &h, true)), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);

	text = slurp(target, &len);
	assert_string_equal(text, "precious\n");
	free(text);
}

/*
 * record's log: not under its name until placed (a recording that never began leaves the old
 * file as it was); placed, it reads up to its last flushed block if killed; a log closed
 * before it was placed is placed whole.
 */
static void unplaced_log_leaves_its_path_as_it_was(void **state)
{
	struct tmp *t = *state;
	struct jt_log_header h = test_header();
	struct jt_log_writer *w;
	union recbuf rb;
	char *text;
	size_t len;

	spit(tpath(t, "old.jtl"), "old contents\n", 13);
	w = jt_logw__create_unplaced(t->path, &h, true);
	assert_non_null(w);
	write_gen_block(w, 0, 1);
	jt_logw__abort(w);
	text = slurp(tpath(t, "old.jtl"), &len);
	assert_string_equal(text, "old contents\n");
	free(text);

	w = jt_logw__create_unplaced(t->path, &h, true);
	assert_non_null(w);
	write_gen_block(w, 0, 1);
	assert_int_equal(jt_logw__place(w), 0);
	assert_int_equal(jt_logw__append(w, gen(&rb, 1)), 0);	/* held, never flushed */
	jt_logw__abort(w);
	assert_reads_gen(tpath(t, "old.jtl"), 1, JT_LOGR_TRUNCATED);

	w = jt_logw__create_unplaced(tpath(t, "new.jtl"), &h, false);
	assert_non_null(w);
	assert_int_equal(jt_logw__append(w, gen(&rb, 0)), 0);
	assert_int_equal(jt_logw__close(w), 0);
	assert_reads_gen(tpath(t, "new.jtl"), 1, JT_LOGR_END);
}

static void appending_an_invalid_record_fails_and_keeps_the_log(void **state)
{
	static const unsigned sizes[] = { 0, 8, 12, 17, 20, 33 };
	struct tmp *t = *state;
	struct jt_log_writer *w;
	struct jt_log_reader *r;
	struct jt_rec_method *m;
	struct jt_rec_hdr *big;
	struct capture cap;
	union recbuf rb;
	size_t i;
	char *err;

	w = create(tpath(t, "invalid.jtl"));
	assert_int_equal(jt_logw__append(w, gen(&rb, 0)), 0);
	capture_begin(&cap, t);
	for (i = 0; i < JT_ARRAY_SIZE(sizes); i++) {
		mk_call(&rb, JT_REC_ENTER, START_NS, 1, 1, 1);
		rb.h.size = sizes[i];
		assert_int_equal(jt_logw__append(w, &rb.h), -EINVAL);
	}
	m = (void *)mk_method(&rb, START_NS, 1, 1, 0x1000, "name");
	m->name_len = 9;	/* runs past the record */
	assert_int_equal(jt_logw__append(w, &m->h), -EINVAL);
	mk_exit(&rb, START_NS, 1);
	rb.h.size = 16;		/* shorter than an exit record */
	assert_int_equal(jt_logw__append(w, &rb.h), -EINVAL);
	big = calloc(1, JT_LOG_BLOCK_MAX + 8);
	assert_non_null(big);
	big->type = 99;
	big->size = JT_LOG_BLOCK_MAX + 8;
	assert_int_equal(jt_logw__append(w, big), -EINVAL);
	free(big);
	err = capture_end(&cap);
	assert_int_equal(count_lines(err), JT_ARRAY_SIZE(sizes) + 3);
	assert_non_null(strstr(err, "invalid.jtl: enter record (type 3) of 17 bytes refused"));
	free(err);

	/* what was refused is not in the log; the rest is */
	assert_int_equal(jt_logw__append(w, gen(&rb, 1)), 0);
	assert_int_equal(jt_logw__records(w), 2);
	assert_int_equal(jt_logw__close(w), 0);
	r = jt_logr__open(tpath(t, "invalid.jtl"));
	assert_non_null(r);
	assert_int_equal(read_gen(r), 2);
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	jt_logr__close(r);
}

/* RLIMIT_FSIZE stands in for a full disk: the write fails part way (EFBIG). */
static void write_error_is_reported_once_and_fails_every_later_call(void **state)
{
	struct tmp *t = *state;
	struct rlimit old, lim;
	struct jt_log_writer *w;
	struct jt_log_reader *r;
	struct capture cap;
	void (*old_sig)(int);
	union recbuf rb;
	uint64_t x = 88172645463325252ULL, appended = 0;
	size_t j;
	int ret = 0, i;
	char *err;

	w = create(tpath(t, "full.jtl"));
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 3 * JT_LOG_BLOCK_TARGET / 2;
	old_sig = signal(SIGXFSZ, SIG_IGN);
	capture_begin(&cap, t);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	/* incompressible records, so that the second block crosses the limit */
	for (i = 0; i < 10000 && !ret; i++) {
		rec_init(&rb, 100, 4096, START_NS + i);
		for (j = 16; j < 4096; j += 8) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			memcpy(rb.b + j, &x, 8);
		}
		ret = jt_logw__append(w, &rb.h);
		appended += !ret;
	}
	assert_int_equal(ret, -EFBIG);
	assert_int_equal(jt_logw__append(w, gen(&rb, 0)), -EFBIG);
	assert_int_equal(jt_logw__flush(w), -EFBIG);
	assert_int_equal(jt_logw__close(w), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_sig);
	err = capture_end(&cap);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "full.jtl: write: File too large"));
	free(err);

	/* the first block made it; the second, cut short, reads as a truncation */
	r = jt_logr__open(tpath(t, "full.jtl"));
	assert_non_null(r);
	for (i = 0; jt_logr__next(r); i++)
		;
	assert_true(i > 0 && (uint64_t)i < appended);
	assert_int_equal(jt_logr__state(r), JT_LOGR_TRUNCATED);
	jt_logr__close(r);
}

static void big_endian_log_is_explained(void **state)
{
	struct tmp *t = *state;
	struct jt_log_header h = test_header();
	struct capture cap;
	char *err;

	h.magic = JT_LOG_MAGIC_SWAPPED;
	capture_begin(&cap, t);
	assert_null(jt_logr__open_mem(&h, sizeof(h)));
	h.magic = JT_LOG_MAGIC;
	h.version = JT_LOG_VERSION + 1;
	h.header_size = JT_LOG_HEADER_SIZE;
	assert_null(jt_logr__open_mem(&h, sizeof(h)));
	h.version = 1;
	h.header_size = 128;
	assert_null(jt_logr__open_mem(&h, sizeof(h)));
	assert_null(jt_logr__open(tpath(t, "missing.jtl")));
	err = capture_end(&cap);
	assert_non_null(strstr(err, "written on a big-endian host"));
	assert_non_null(strstr(err, "version 4; this jitrace reads versions 1 to 3"));
	assert_non_null(strstr(err, "header size 128"));
	assert_non_null(strstr(err, "missing.jtl: No such file"));
	assert_int_equal(count_lines(err), 4);
	free(err);
}

/* A file that is no jitrace log is named for what it looks like, when that can be told. */
static void other_files_are_named_for_what_they_are(void **state)
{
	static const unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00 };
	static const unsigned char bin[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07 };
	static const char perf[] = "PERFILE2\x68\0\0\0\0\0\0\0";
	static const char text[] = "#!/bin/sh\n\techo hello\r\n";
	struct tmp *t = *state;
	struct capture cap;
	char *err;

	spit(tpath(t, "perf.data"), perf, sizeof(perf));
	spit(tpath(t, "x.gz"), gz, sizeof(gz));
	spit(tpath(t, "x.sh"), text, sizeof(text) - 1);
	spit(tpath(t, "x.bin"), bin, sizeof(bin));
	capture_begin(&cap, t);
	assert_null(jt_logr__open(tpath(t, "perf.data")));
	assert_null(jt_logr__open(tpath(t, "x.gz")));
	assert_null(jt_logr__open(tpath(t, "x.sh")));
	assert_null(jt_logr__open(tpath(t, "x.bin")));
	err = capture_end(&cap);
	assert_non_null(strstr(err, "perf.data is a perf.data file, not a jitrace log\n"));
	assert_non_null(strstr(err, "x.gz is a gzip file, not a jitrace log\n"));
	assert_non_null(strstr(err, "x.sh is a text file, not a jitrace log\n"));
	assert_non_null(strstr(err, "x.bin is not a jitrace log\n"));
	assert_null(strstr(err, "magic"));
	assert_int_equal(count_lines(err), 4);
	free(err);
}

/* ---- the log's promises: blocks in sequence, time order, ids defined before use ---- */

/* The log of four_block_log() with its blocks (0 to 4, the end record's) in this order. */
static size_t reorder_blocks(const unsigned char *buf, size_t len, const size_t offs[5],
			     const int *order, size_t n, unsigned char *out)
{
	size_t at = JT_LOG_HEADER_SIZE, i, end;

	memcpy(out, buf, JT_LOG_HEADER_SIZE);
	for (i = 0; i < n; i++) {
		end = order[i] < 4 ? offs[order[i] + 1] : len;
		memcpy(out + at, buf + offs[order[i]], end - offs[order[i]]);
		at += end - offs[order[i]];
	}
	return at;
}

/*
 * Read all, checking each record is the gen() record of its time, byte for byte; returns
 * the records read but the end record, and counts gen() samples among them.
 */
static uint64_t read_any_gen(struct jt_log_reader *r, bool *ended)
{
	const struct jt_rec_hdr *rec;
	union recbuf rb;
	uint64_t n = 0;

	*ended = false;
	while ((rec = jt_logr__next(r))) {
		if (rec->type == JT_REC_END) {
			*ended = true;
			continue;
		}
		assert_true(rec->ts >= START_NS && (rec->ts - START_NS) % 10 == 0);
		gen(&rb, (rec->ts - START_NS) / 10);
		assert_memory_equal(rec, rb.b, rb.h.size);
		n++;
	}
	return n;
}

/* Every count of st but those named: zero. */
static void assert_stats(const struct jt_logr_stats *st, const struct jt_logr_stats *want)
{
	int p;

	for (p = 0; p < JT_LOGR_P_MAX; p++)
		assert_int_equal(st->problems[p], want->problems[p]);
	assert_int_equal(st->records, want->records);
	assert_int_equal(st->records_skipped, want->records_skipped);
	assert_int_equal(st->records_missing, want->records_missing);
	assert_int_equal(st->blocks_skipped, want->blocks_skipped);
	assert_int_equal(st->blocks_missing, want->blocks_missing);
}

/*
 * Samples of block 2 (records 600 to 899) whose second frame names a method defined in
 * block 1 (the method of 64 records before): 603 has no frames, 611 ... 659 have two or
 * more. What a reader must skip when block 1 is not there before block 2.
 */
#define BLK2_NAMING_BLK1 7

static void dropped_block_is_an_error_and_salvage_reads_the_rest(void **state)
{
	static const int order[] = { 0, 2, 3, 4 };
	struct tmp *t = *state;
	size_t len, cut_len, offs[5];
	unsigned char *buf, *cut;
	struct jt_log_reader *r;
	struct capture cap;
	char *err;
	bool ended;

	buf = four_block_log(t, "whole.jtl", &len, offs);
	cut = malloc(len);
	assert_non_null(cut);
	cut_len = reorder_blocks(buf, len, offs, order, 4, cut);

	r = jt_logr__open_mem(cut, cut_len);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended), BLK_RECS);
	assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	assert_non_null(strstr(jt_logr__why(r), "block at offset"));
	assert_non_null(strstr(jt_logr__why(r), ": number 2 where 1 was due: 1 block(s) missing"));
	assert_int_equal(jt_logr__stats(r)->problems[JT_LOGR_P_SEQUENCE], 1);
	jt_logr__close(r);

	capture_begin(&cap, t);
	r = jt_logr__open_mem_flags(cut, cut_len, JT_LOGR_SALVAGE);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended),
			 2 * BLK_RECS - BLK2_NAMING_BLK1 + LAST_RECS);
	assert_true(ended);
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	assert_stats(jt_logr__stats(r), &(struct jt_logr_stats){
		.problems[JT_LOGR_P_SEQUENCE] = 1,
		.problems[JT_LOGR_P_UNDEFINED] = BLK2_NAMING_BLK1,
		.records = 2 * BLK_RECS - BLK2_NAMING_BLK1 + LAST_RECS + 1,
		.records_skipped = BLK2_NAMING_BLK1,
		.records_missing = BLK_RECS,
		.blocks_missing = 1,
	});
	jt_logr__close(r);
	err = capture_end(&cap);
	/* each problem, then the sum: one line each */
	assert_int_equal(count_lines(err), 1 + BLK2_NAMING_BLK1 + 1);
	assert_non_null(strstr(err, "<memory>: salvage: block at offset "));
	assert_non_null(strstr(err, ", record 11 at byte "));
	assert_non_null(strstr(err, "sample record: frame 1 names method 69, not defined"));
	assert_non_null(strstr(err, "salvage: read 644 records; skipped 7 records and 0 blocks; "
			       "missing 300 records and 1 blocks; found 1 blocks out of "
			       "sequence, 7 undefined references\n"));
	free(err);
	free(cut);
	free(buf);
}

static void repeated_block_is_an_error_and_salvage_skips_it(void **state)
{
	static const int order[] = { 0, 1, 1, 2, 3, 4 };
	struct tmp *t = *state;
	size_t len, cut_len, offs[5];
	unsigned char *buf, *rep;
	struct jt_log_reader *r;
	struct capture cap;
	bool ended;

	buf = four_block_log(t, "whole.jtl", &len, offs);
	rep = malloc(2 * len);
	assert_non_null(rep);
	cut_len = reorder_blocks(buf, len, offs, order, 6, rep);

	r = jt_logr__open_mem(rep, cut_len);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended), 2 * BLK_RECS);
	assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	assert_non_null(strstr(jt_logr__why(r), "number 1 where 2 was due: a repeated or "
			       "out-of-order block"));
	jt_logr__close(r);

	capture_begin(&cap, t);
	r = jt_logr__open_mem_flags(rep, cut_len, JT_LOGR_SALVAGE);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended), 3 * BLK_RECS + LAST_RECS);	/* all once */
	assert_true(ended);
	assert_stats(jt_logr__stats(r), &(struct jt_logr_stats){
		.problems[JT_LOGR_P_SEQUENCE] = 1,
		.records = 3 * BLK_RECS + LAST_RECS + 1,
		.records_skipped = BLK_RECS,
		.blocks_skipped = 1,
	});
	jt_logr__close(r);
	free(capture_end(&cap));
	free(rep);
	free(buf);
}

static void swapped_blocks_are_an_error_and_salvage_keeps_the_sound_records(void **state)
{
	static const int order[] = { 0, 2, 1, 3, 4 };
	struct tmp *t = *state;
	size_t len, cut_len, offs[5];
	unsigned char *buf, *sw;
	struct jt_log_reader *r;
	struct capture cap;
	char why[64];
	bool ended;

	buf = four_block_log(t, "whole.jtl", &len, offs);
	sw = malloc(len);
	assert_non_null(sw);
	cut_len = reorder_blocks(buf, len, offs, order, 5, sw);

	r = jt_logr__open_mem(sw, cut_len);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended), BLK_RECS);
	assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	snprintf(why, sizeof(why), "block at offset %zu: number 2 where 1", offs[1]);
	assert_non_null(strstr(jt_logr__why(r), why));
	jt_logr__close(r);

	/* block 2 is read in block 1's place, then block 1 comes too late and is skipped */
	capture_begin(&cap, t);
	r = jt_logr__open_mem_flags(sw, cut_len, JT_LOGR_SALVAGE);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended), 2 * BLK_RECS - BLK2_NAMING_BLK1 + LAST_RECS);
	assert_true(ended);
	assert_stats(jt_logr__stats(r), &(struct jt_logr_stats){
		.problems[JT_LOGR_P_SEQUENCE] = 2,
		.problems[JT_LOGR_P_UNDEFINED] = BLK2_NAMING_BLK1,
		.records = 2 * BLK_RECS - BLK2_NAMING_BLK1 + LAST_RECS + 1,
		.records_skipped = BLK2_NAMING_BLK1 + BLK_RECS,
		.records_missing = BLK_RECS,
		.blocks_skipped = 1,
		.blocks_missing = 1,
	});
	jt_logr__close(r);
	free(capture_end(&cap));
	free(sw);
	free(buf);
}

/* Records laid out in one block by hand: what the writer would refuse to order for us. */
struct hand {
	union recbuf raw;
	size_t len;
};

static void hand_add(struct hand *h, const struct jt_rec_hdr *rec)
{
	assert_true(h->len + rec->size <= sizeof(h->raw.b));
	memcpy(h->raw.b + h->len, rec, rec->size);
	h->len += rec->size;
}

/*
 * Read a one-block log of h strictly, expecting ok records then a stop naming problem p at
 * the given record index; then salvaging, expecting all but that record.
 */
static void check_one_bad_record(struct tmp *t, const struct hand *h, unsigned ok,
				 unsigned total, enum jt_logr_problem p, const char *why)
{
	unsigned char file[1 << 14];
	struct jt_log_reader *r;
	struct capture cap;
	char where[64], *err;
	size_t len = one_block_log(file, sizeof(file), h->raw.b, h->len);
	unsigned n = 0;

	r = jt_logr__open_mem(file, len);
	assert_non_null(r);
	while (jt_logr__next(r))
		n++;
	assert_int_equal(n, ok);
	assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	snprintf(where, sizeof(where), "block at offset %d, record %u at byte ",
		 JT_LOG_HEADER_SIZE, ok);
	assert_non_null(strstr(jt_logr__why(r), where));
	assert_non_null(strstr(jt_logr__why(r), why));
	assert_int_equal(jt_logr__stats(r)->problems[p], 1);
	jt_logr__close(r);

	capture_begin(&cap, t);
	r = jt_logr__open_mem_flags(file, len, JT_LOGR_SALVAGE);
	assert_non_null(r);
	n = 0;
	while (jt_logr__next(r))
		n++;
	assert_int_equal(n, total - 1);
	assert_int_equal(jt_logr__state(r), JT_LOGR_TRUNCATED);	/* no end record */
	assert_int_equal(jt_logr__stats(r)->problems[p], 1);
	assert_int_equal(jt_logr__stats(r)->records_skipped, 1);
	assert_int_equal(jt_logr__stats(r)->records, total - 1);
	jt_logr__close(r);
	err = capture_end(&cap);
	assert_int_equal(count_lines(err), 2);	/* the problem, the sum */
	assert_non_null(strstr(err, why));
	free(err);
}

static void record_going_back_in_time_is_an_error_and_salvage_skips_it(void **state)
{
	struct hand h = { .len = 0 };
	union recbuf rb;

	hand_add(&h, mk_method(&rb, START_NS + 100, 1, 42, 0x1000, "a"));
	hand_add(&h, mk_call(&rb, JT_REC_ENTER, START_NS + 200, 42, 43, 1));
	hand_add(&h, mk_sample(&rb, START_NS + 150, 42, 1, 0, 1, 0));	/* 50 ns back */
	hand_add(&h, mk_call(&rb, JT_REC_LEAVE, START_NS + 200, 42, 43, 1));	/* same ts: fine */
	check_one_bad_record(*state, &h, 2, 4, JT_LOGR_P_TIME,
			     "sample record: ts 5000000150 goes back 50 ns");
}

static void references_to_undefined_ids_are_errors_and_salvage_skips_them(void **state)
{
	union recbuf rb;
	struct hand h;
	struct jt_rec_sample *s;

	/* a sample naming method 2, defined only after it */
	h.len = 0;
	hand_add(&h, mk_method(&rb, START_NS, 1, 42, 0x1000, "a"));
	hand_add(&h, mk_sample(&rb, START_NS + 1, 42, 2, 0, 1, 2));
	hand_add(&h, mk_method(&rb, START_NS + 2, 2, 42, 0x2000, "b"));
	hand_add(&h, mk_sample(&rb, START_NS + 3, 42, 2, 0, 1, 2));
	check_one_bad_record(*state, &h, 1, 4, JT_LOGR_P_UNDEFINED,
			     "sample record: frame 1 names method 2, not defined before it");

	/* module and symbol frames, a symbol in an undefined module */
	h.len = 0;
	hand_add(&h, mk_module(&rb, START_NS, 1, 42, "/lib/libc.so.6"));
	hand_add(&h, mk_symbol(&rb, START_NS, 1, 1, "memcpy"));
	hand_add(&h, mk_symbol(&rb, START_NS, 2, 0, "do_syscall_64"));	/* kernel */
	hand_add(&h, mk_symbol(&rb, START_NS, 3, 7, "orphan"));
	s = (void *)mk_sample(&rb, START_NS, 42, 3, 0, 0, 0);
	s->frames[0].ref = JT_FRAME_REF(JT_FRAME_SYMBOL, 2);
	s->frames[1].ref = JT_FRAME_REF(JT_FRAME_SYMBOL, 1);
	s->frames[2].ref = JT_FRAME_REF(JT_FRAME_MODULE, 1);
	hand_add(&h, &s->h);
	check_one_bad_record(*state, &h, 3, 5, JT_LOGR_P_UNDEFINED,
			     "symbol record: symbol 3 lies in module 7, not defined");

	/* an enter, a leave and an unload of a method nothing defined */
	h.len = 0;
	hand_add(&h, mk_method(&rb, START_NS, 1, 42, 0x1000, "a"));
	hand_add(&h, mk_call(&rb, JT_REC_ENTER, START_NS, 42, 43, 1));
	hand_add(&h, mk_call(&rb, JT_REC_LEAVE, START_NS, 42, 43, 9));
	hand_add(&h, mk_call(&rb, JT_REC_UNLOAD, START_NS, 42, 43, 1));
	check_one_bad_record(*state, &h, 2, 4, JT_LOGR_P_UNDEFINED,
			     "leave record: method 9 is not defined before it");

	/* a method defined twice: the first stands */
	h.len = 0;
	hand_add(&h, mk_method(&rb, START_NS, 1, 42, 0x1000, "a"));
	hand_add(&h, mk_method(&rb, START_NS, 1, 42, 0x2000, "a again"));
	hand_add(&h, mk_call(&rb, JT_REC_ENTER, START_NS, 42, 43, 1));
	check_one_bad_record(*state, &h, 1, 3, JT_LOGR_P_REDEFINED,
			     "method record: method 1 defined again");

	/* a frame of no known kind */
	h.len = 0;
	hand_add(&h, mk_method(&rb, START_NS, 1, 42, 0x1000, "a"));
	s = (void *)mk_sample(&rb, START_NS, 42, 2, 0, 1, 0);
	s->frames[1].ref = JT_FRAME_REF(9, 1);
	hand_add(&h, &s->h);
	check_one_bad_record(*state, &h, 1, 2, JT_LOGR_P_RECORD,
			     "frame 1 is of no known kind (9)");

	/* a user address in anonymous memory: its module defined first, or it is undefined */
	h.len = 0;
	hand_add(&h, mk_module(&rb, START_NS, 1, 42, "[java jit]"));
	s = (void *)mk_sample(&rb, START_NS, 42, 2, 0, 0, 0);
	s->frames[0] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 1), 0x7f0000001000ULL };
	s->frames[1] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 0), 0x401000 };
	hand_add(&h, &s->h);
	s = (void *)mk_sample(&rb, START_NS, 42, 1, 0, 0, 0);
	s->frames[0] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 2), 0x7f0000001000ULL };
	hand_add(&h, &s->h);
	check_one_bad_record(*state, &h, 2, 3, JT_LOGR_P_UNDEFINED,
			     "sample record: frame 0 names module 2, not defined before it");
}

/* The header at buf given the crc32 of what it now holds, as a writer would have sealed it. */
static void reseal(unsigned char *buf)
{
	struct jt_log_header h;

	memcpy(&h, buf, sizeof(h));
	h.hdr_crc32 = jt_logfmt__header_crc(&h);
	memcpy(buf, &h, sizeof(h));
}

/* Fields out of range under a right crc32: a writer's mistake, not damage. */
static void header_fields_out_of_range_are_errors_and_salvage_reads_on(void **state)
{
	static const struct {
		size_t off, size;
		uint32_t val;
		const char *why;
	} bad[] = {
		{ offsetof(struct jt_log_header, header_size), 2, 300,
		  "header, offset 6: header size 300, expected 256" },
		{ offsetof(struct jt_log_header, flags), 4, 0x23,
		  "header, offset 32: flags 0x23, unknown bits 0x20" },
		{ offsetof(struct jt_log_header, ncpus), 4, 1U << 20,
		  "header, offset 24: 1048576 CPUs, above 65536" },
		{ offsetof(struct jt_log_header, sample_hz), 4, 1000000,
		  "header, offset 28: sampling at 1000000 Hz, above 100000" },
	};
	struct tmp *t = *state;
	size_t len, offs[5], i;
	unsigned char *buf;
	struct jt_log_reader *r;
	struct capture cap;
	char *err;
	bool ended;

	buf = four_block_log(t, "whole.jtl", &len, offs);
	for (i = 0; i < JT_ARRAY_SIZE(bad); i++) {
		unsigned char saved[4];

		memcpy(saved, buf + bad[i].off, bad[i].size);
		memcpy(buf + bad[i].off, &bad[i].val, bad[i].size);	/* little-endian */
		reseal(buf);

		capture_begin(&cap, t);
		assert_null(jt_logr__open_mem(buf, len));
		err = capture_end(&cap);
		assert_int_equal(count_lines(err), 1);
		assert_non_null(strstr(err, bad[i].why));
		free(err);

		capture_begin(&cap, t);
		r = jt_logr__open_mem_flags(buf, len, JT_LOGR_SALVAGE);
		assert_non_null(r);
		assert_int_equal(read_any_gen(r, &ended), 3 * BLK_RECS + LAST_RECS);
		assert_true(ended);
		assert_stats(jt_logr__stats(r), &(struct jt_logr_stats){
			.problems[JT_LOGR_P_HEADER] = 1,
			.records = 3 * BLK_RECS + LAST_RECS + 1,
		});
		/* what is out of range is not passed on */
		assert_true((jt_logr__header(r)->flags & ~JT_LOG_F_ALL) == 0);
		assert_true(jt_logr__header(r)->ncpus <= JT_LOG_CPUS_MAX);
		assert_true(jt_logr__header(r)->sample_hz <= JT_LOG_HZ_MAX);
		jt_logr__close(r);
		err = capture_end(&cap);
		assert_int_equal(count_lines(err), 2);
		assert_non_null(strstr(err, bad[i].why));
		free(err);
		memcpy(buf + bad[i].off, saved, bad[i].size);
		reseal(buf);
	}
	free(buf);
}

/* A version 1 copy of a log: no crc32 in its header, its blocks' without seq and first_rec. */
static size_t to_version_1(const unsigned char *buf, size_t len, unsigned char *out)
{
	struct jt_log_block b;
	struct jt_log_header h;
	size_t in = JT_LOG_HEADER_SIZE, at = JT_LOG_HEADER_SIZE;

	memcpy(&h, buf, sizeof(h));
	h.version = 1;
	h.hdr_crc32 = 0;
	memcpy(out, &h, sizeof(h));
	while (in < len) {
		memcpy(&b, buf + in, sizeof(b));
		memcpy(out + at, &b, JT_LOG_BLOCK_V1_SIZE);
		memcpy(out + at + JT_LOG_BLOCK_V1_SIZE, buf + in + sizeof(b), b.zsize);
		in += sizeof(b) + b.zsize;
		at += JT_LOG_BLOCK_V1_SIZE + b.zsize;
	}
	return at;
}

static void version_1_log_reads_without_the_sequence_check(void **state)
{
	static const int repeated[] = { 0, 1, 1, 2, 3, 4 }, last_dropped[] = { 0, 1, 2, 4 };
	struct tmp *t = *state;
	size_t len, offs[5], v1_len, cut_len;
	unsigned char *buf, *v1, *cut;
	struct jt_log_reader *r;
	struct capture cap;
	uint64_t n;
	bool ended;

	buf = four_block_log(t, "whole.jtl", &len, offs);
	v1 = malloc(2 * len);	/* room for a repeated block */
	cut = malloc(2 * len);
	assert_true(v1 && cut);
	v1_len = to_version_1(buf, len, v1);
	spit(tpath(t, "v1.jtl"), v1, v1_len);
	r = jt_logr__open(t->path);
	assert_non_null(r);
	assert_int_equal(jt_logr__header(r)->version, 1);
	assert_int_equal(read_gen(r), 3 * BLK_RECS + LAST_RECS);
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	jt_logr__close(r);

	/* a repeated block is not seen as such, but its records go back in time */
	cut_len = reorder_blocks(buf, len, offs, repeated, 6, cut);
	cut_len = to_version_1(cut, cut_len, v1);
	r = jt_logr__open_mem(v1, cut_len);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended), 2 * BLK_RECS);
	assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	assert_non_null(strstr(jt_logr__why(r), "enter record: ts 5000003000 goes back"));
	jt_logr__close(r);
	capture_begin(&cap, t);
	r = jt_logr__open_mem_flags(v1, cut_len, JT_LOGR_SALVAGE);
	assert_non_null(r);
	n = read_any_gen(r, &ended);
	free(capture_end(&cap));
	/*
	 * all but the repeat's last record, 599 again: as late as the one before it, it keeps
	 * time order; only a version 2 log tells a repeated block from new records
	 */
	assert_int_equal(n, 3 * BLK_RECS + LAST_RECS + 1);
	assert_true(ended);
	/* the end record counts 950 records where 1250 came: said too */
	assert_stats(jt_logr__stats(r), &(struct jt_logr_stats){
		.problems[JT_LOGR_P_TIME] = BLK_RECS - 1,
		.problems[JT_LOGR_P_END] = 1,
		.records = 3 * BLK_RECS + LAST_RECS + 2,
		.records_skipped = BLK_RECS - 1,
	});
	jt_logr__close(r);

	/* the last block of records dropped: only the end record's count tells */
	cut_len = reorder_blocks(buf, len, offs, last_dropped, 4, cut);
	cut_len = to_version_1(cut, cut_len, v1);
	r = jt_logr__open_mem(v1, cut_len);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended), 3 * BLK_RECS);
	assert_false(ended);
	assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	assert_non_null(strstr(jt_logr__why(r), "end record: the end record counts 950 records "
			       "before it, 900 found"));
	jt_logr__close(r);
	free(cut);
	free(v1);
	free(buf);
}

/* Drain r; true if it read to the end record (the log was taken as sound). */
static bool reads_to_the_end(struct jt_log_reader *r)
{
	while (jt_logr__next(r))
		;
	return jt_logr__state(r) == JT_LOGR_END;
}

/*
 * A real log, by the writer, with a late name (so its header was written twice): each of
 * the 2048 bits of its header flipped alone is refused. Magic bits: not a jitrace log;
 * version bits: another version, or (3 to 2 or 1) a crc32 where those have reserved zeros;
 * header_size bits: out of range; every other bit, the crc32 field's own included: the
 * checksum. No bit is left that cannot matter.
 */
static void every_single_bit_flip_of_a_header_is_refused(void **state)
{
	struct tmp *t = *state;
	struct jt_log_writer *w = create(tpath(t, "flip.jtl"));
	struct jt_rec_late *l;
	union recbuf rb;
	struct jt_log_reader *r;
	struct capture cap;
	unsigned char *buf;
	unsigned int bit, taken = 0, first = 0;
	size_t len;
	char *err;
	uint64_t i;

	for (i = 0; i < 40; i++)
		assert_int_equal(jt_logw__append(w, gen(&rb, i)), 0);
	l = (void *)rec_init(&rb, JT_REC_LATE, sizeof(*l), START_NS + 400);
	l->method = 1;
	l->pid = 100;
	l->start = 0x7f00000000ULL;
	l->size = 64;
	l->from_ts = START_NS;
	assert_int_equal(jt_logw__append(w, &rb.h), 0);
	assert_int_equal(jt_logw__close(w), 0);
	buf = (unsigned char *)slurp(tpath(t, "flip.jtl"), &len);

	r = jt_logr__open_mem(buf, len);	/* as written: sound, late names flagged */
	assert_non_null(r);
	assert_true(jt_logr__header(r)->flags & JT_LOG_F_LATE);
	assert_true(reads_to_the_end(r));
	jt_logr__close(r);

	capture_begin(&cap, t);
	for (bit = 0; bit < 8 * JT_LOG_HEADER_SIZE; bit++) {
		buf[bit / 8] ^= 1U << bit % 8;
		r = jt_logr__open_mem(buf, len);
		if (r && reads_to_the_end(r) && !taken++)
			first = bit;
		jt_logr__close(r);
		buf[bit / 8] ^= 1U << bit % 8;
	}
	err = capture_end(&cap);
	if (taken)
		fail_msg("%u header bits flipped read as sound, the first bit %u (byte %u)", taken,
			 first, first / 8);
	/* one line each, and what a flip in a field the header's ranges allow says */
	assert_int_equal(count_lines(err), 8 * JT_LOG_HEADER_SIZE);
	free(err);

	buf[offsetof(struct jt_log_header, ncpus)] ^= 0x80;	/* 4 CPUs read as 132 */
	spit(tpath(t, "flip.jtl"), buf, len);
	capture_begin(&cap, t);
	r = jt_logr__open(t->path);
	err = capture_end(&cap);
	assert_null(r);
	if (!strstr(err, "flip.jtl: header, offset 36: checksum 0x") ||
	    !strstr(err, ": changed since it was written"))
		fail_msg("said: %s", err);
	free(err);
	free(buf);
}

/* Logs of the version before still read: a version 2 log its own writer wrote. */
static void version_2_log_still_reads(void **state)
{
	static const unsigned int types[] = {
		JT_REC_PROC, JT_REC_METHOD, JT_REC_ENTER, JT_REC_SAMPLE, JT_REC_LEAVE,
		JT_REC_ENTER, JT_REC_SAMPLE, JT_REC_LEAVE, JT_REC_ENTER, JT_REC_SAMPLE,
		JT_REC_LEAVE, JT_REC_END,
	};
	struct jt_log_reader *r = jt_logr__open("tests/fixtures/log/v2.jtl");
	const struct jt_log_header *h;
	const struct jt_rec_hdr *rec;
	size_t n = 0;

	(void)state;
	assert_non_null(r);
	h = jt_logr__header(r);
	assert_int_equal(h->version, 2);
	assert_int_equal(h->hdr_crc32, 0);
	assert_int_equal(h->ncpus, 2);
	assert_int_equal(h->flags, JT_LOG_F_CALLS | JT_LOG_F_SYSTEM_WIDE);
	assert_string_equal(h->hostname, "v2host");
	while ((rec = jt_logr__next(r))) {
		assert_true(n < JT_ARRAY_SIZE(types));
		assert_int_equal(rec->type, types[n++]);
	}
	assert_int_equal(n, JT_ARRAY_SIZE(types));
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	jt_logr__close(r);
}

/* Reserved bytes are zero, a crc32 or not: a version 2 header's included. */
static void reserved_header_bytes_must_be_zero(void **state)
{
	struct tmp *t = *state;
	size_t len, offs[5];
	unsigned char *buf, *v1;
	struct jt_log_reader *r;
	struct capture cap;
	char *err;
	bool ended;

	buf = four_block_log(t, "whole.jtl", &len, offs);
	buf[offsetof(struct jt_log_header, reserved) + 87] = 0x40;
	reseal(buf);
	capture_begin(&cap, t);
	r = jt_logr__open_mem(buf, len);
	err = capture_end(&cap);
	assert_null(r);
	assert_non_null(strstr(err, "header, offset 255: reserved byte 0x40, not 0"));
	free(err);
	capture_begin(&cap, t);
	r = jt_logr__open_mem_flags(buf, len, JT_LOGR_SALVAGE);
	assert_non_null(r);
	assert_int_equal(read_any_gen(r, &ended), 3 * BLK_RECS + LAST_RECS);
	assert_true(ended);
	assert_int_equal(jt_logr__stats(r)->problems[JT_LOGR_P_HEADER], 1);
	jt_logr__close(r);
	free(capture_end(&cap));

	/* what was reserved before version 3 is 0 in a version 1 or 2 header */
	buf[offsetof(struct jt_log_header, reserved) + 87] = 0;
	v1 = malloc(len);
	assert_non_null(v1);
	len = to_version_1(buf, len, v1);
	v1[offsetof(struct jt_log_header, hdr_crc32) + 3] = 0x01;
	capture_begin(&cap, t);
	r = jt_logr__open_mem(v1, len);
	err = capture_end(&cap);
	assert_null(r);
	assert_non_null(strstr(err, "header, offset 36: reserved field 0x01000000, not 0 in a "
			       "version 1 log"));
	free(err);
	free(v1);
	free(buf);
}

/*
 * Records that contradict the header: enters under a header whose flags say no calls were
 * recorded, a sample on a CPU past its count. Refused, naming the file and the field;
 * salvaging, said once a field and read on.
 */
static void records_contradicting_the_header_name_its_field(void **state)
{
	static const struct {
		uint32_t flags, ncpus;
		const char *why;
	} cases[] = {
		{ JT_LOG_F_KSTACK, 4, "c.jtl: corrupt: header, offset 32: flags 0x2 say calls were "
		  "not recorded, yet it holds enter records (block at offset 256, record 1 at "
		  "byte 96 of its data)" },
		{ JT_LOG_F_CALLS, 3, "c.jtl: corrupt: header, offset 24: ncpus 3, yet a sample ran "
		  "on cpu 3 (block at offset 256, record 3 at byte " },
	};
	struct tmp *t = *state;
	struct jt_log_header h = test_header();
	struct jt_log_writer *w;
	struct jt_log_reader *r;
	struct capture cap;
	union recbuf rb;
	char said[1024];
	uint64_t i;
	size_t k;
	bool ended;

	for (k = 0; k < JT_ARRAY_SIZE(cases); k++) {
		h.flags = cases[k].flags;
		h.ncpus = cases[k].ncpus;
		unlink(tpath(t, "c.jtl"));
		w = jt_logw__create(t->path, &h, false);
		assert_non_null(w);
		for (i = 0; i < 100; i++)
			assert_int_equal(jt_logw__append(w, gen(&rb, i)), 0);
		assert_int_equal(jt_logw__close(w), 0);

		r = jt_logr__open(t->path);
		assert_non_null(r);
		assert_false(reads_to_the_end(r));
		assert_int_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
		snprintf(said, sizeof(said), "%s: corrupt: %s", t->path, jt_logr__why(r));
		if (!strstr(said, cases[k].why))
			fail_msg("case %zu said: %s", k, said);
		jt_logr__close(r);

		capture_begin(&cap, t);
		r = jt_logr__open_flags(t->path, JT_LOGR_SALVAGE);
		assert_non_null(r);
		assert_int_equal(read_any_gen(r, &ended), 100);
		assert_true(ended);
		assert_int_equal(jt_logr__stats(r)->problems[JT_LOGR_P_HEADER], 1);
		jt_logr__close(r);
		free(capture_end(&cap));
	}
}

/* ---- garbage in, never a crash ---- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Read all; every record returned must be within bounds and as long as it claims. */
static void drain_checked_flags(const void *buf, size_t len, unsigned int flags)
{
	struct jt_log_reader *r = jt_logr__open_mem_flags(buf, len, flags);
	const struct jt_rec_hdr *rec;
	unsigned sum = 0;
	size_t i;

	if (!r)
		return;
	while ((rec = jt_logr__next(r))) {
		assert_true(rec->size >= 16 && rec->size % 8 == 0);
		assert_null(jt_logfmt__invalid(rec, rec->size));
		for (i = 0; i < rec->size; i++)	/* touch it all: valgrind sees overruns */
			sum += ((const unsigned char *)rec)[i];
	}
	assert_true(jt_logr__state(r) != JT_LOGR_OK);
	/* salvaging stops only where no next block can be found, or at the end */
	if (flags & JT_LOGR_SALVAGE)
		assert_int_not_equal(jt_logr__state(r), JT_LOGR_CORRUPT);
	jt_logr__close(r);
	(void)sum;
}

/* Strictly, and salvaging what is sound. */
static void drain_checked(const void *buf, size_t len)
{
	drain_checked_flags(buf, len, 0);
	drain_checked_flags(buf, len, JT_LOGR_SALVAGE);
}

/* A word of a random block: often a plausible record header, else a number of any size. */
static uint64_t random_word(uint64_t *s)
{
	uint64_t v = rnd(s);

	if (v % 4)
		return v % (1ULL << (rnd(s) % 33));
	v = 1 + v % (JT_REC_MAX + 1);		/* a type, sometimes unknown */
	return v | (uint64_t)(rnd(s) % 8 ? 8 * (rnd(s) % 16) : rnd(s) % 140) << 32;
}

static void open_mem_survives_garbage_and_mutated_logs(void **state)
{
	struct tmp *t = *state;
	const size_t cap_len = 1 << 16, fill = 8192;
	unsigned char *buf = malloc(cap_len), *raw = malloc(fill), *valid;
	size_t len, vlen, offs[5], i, j;
	uint64_t s = 0x9e3779b97f4a7c15ULL, v;
	struct capture cap;

	assert_true(buf && raw);
	valid = four_block_log(t, "valid.jtl", &vlen, offs);
	capture_begin(&cap, t);	/* thousands of refusals, reported: not for the console */

	for (i = 0; i < 4000; i++) {
		for (j = 0; j < fill; j += 8) {
			v = rnd(&s);
			memcpy(buf + j, &v, 8);
		}
		len = rnd(&s) % (i % 10 ? 700 : fill);
		switch (i % 4) {
		case 0:		/* bytes */
			break;
		case 1:		/* a good header, then bytes */
			one_block_log(buf, cap_len, "", 0);
			len = JT_LOG_HEADER_SIZE + len % 64;
			break;
		case 2:		/* a good header and block header with any sizes, then bytes */
			len = one_block_log(buf, cap_len, "", 0) + rnd(&s) % 700;
			memcpy(buf + JT_LOG_HEADER_SIZE + 4, &(__u32){ rnd(&s) % 1000 }, 4);
			memcpy(buf + JT_LOG_HEADER_SIZE + 8, &(__u32){ rnd(&s) % (1U << 22) }, 4);
			break;
		case 3:		/* a good block of records with any types, sizes and lengths */
			len = 8 * (rnd(&s) % (fill / 8));
			for (j = 0; j < len; j += 8) {
				v = random_word(&s);
				memcpy(raw + j, &v, 8);
			}
			len = one_block_log(buf, cap_len, raw, len);
			break;
		}
		drain_checked(buf, len);
	}

	for (i = 0; i < 2000; i++) {
		unsigned k, nmut = 1 + rnd(&s) % 4;

		len = i % 3 ? vlen : rnd(&s) % vlen;
		memcpy(buf, valid, len);
		for (k = 0; k < nmut && len; k++) {
			/* half of them where it hurts most: the headers */
			size_t at = offs[rnd(&s) % 5] + rnd(&s) % 24;

			at = (k % 2 ? rnd(&s) : at) % len;
			buf[at] = k % 3 ? buf[at] ^ 1U << rnd(&s) % 8 : rnd(&s);
		}
		drain_checked(buf, len);
	}
	drain_checked(NULL, 0);
	drain_checked(valid, 0);
	free(capture_end(&cap));

	free(valid);
	free(raw);
	free(buf);
}

/*
 * What record's status line says was lost: the drop kinds whose samples were kept (a stack
 * cut, a frame unnamed) are not, as report says ("lost 0; kept, cut or unnamed: ...").
 */
static void kept_drop_kinds_are_not_counted_lost(void **state)
{
	uint64_t counts[JT_DROP_MAX] = { 0 };

	(void)state;
	counts[JT_DROP_BROKEN_STACK] = 2148;
	counts[JT_DROP_UNSURE_FRAME] = 7;
	assert_int_equal(jt_drop__lost(counts, JT_DROP_MAX), 0);
	counts[JT_DROP_RB_SAMPLE] = 3;
	counts[JT_DROP_REORDER] = 2;
	assert_int_equal(jt_drop__lost(counts, JT_DROP_MAX), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tmp_teardown)
		T(round_trip_keeps_every_record_type_byte_for_byte),
		T(empty_log_has_just_its_end_record),
		T(many_records_span_several_whole_blocks),
		T(truncated_file_reads_up_to_last_whole_block),
		T(flipped_byte_in_middle_block_is_corrupt),
		T(record_whose_lengths_overrun_its_size_is_corrupt),
		T(runs_of_one_threads_calls_read_back_exactly_in_few_bytes),
		T(run_of_calls_coded_wrong_is_corrupt),
		T(call_records_larger_than_a_call_are_written_whole),
		T(file_mode_is_0600),
		T(existing_file_is_refused_without_force_and_replaced_with_force),
		T(symlink_at_path_is_never_followed),
		T(unplaced_log_leaves_its_path_as_it_was),
		T(appending_an_invalid_record_fails_and_keeps_the_log),
		T(write_error_is_reported_once_and_fails_every_later_call),
		T(big_endian_log_is_explained),
		T(other_files_are_named_for_what_they_are),
		T(dropped_block_is_an_error_and_salvage_reads_the_rest),
		T(repeated_block_is_an_error_and_salvage_skips_it),
		T(swapped_blocks_are_an_error_and_salvage_keeps_the_sound_records),
		T(record_going_back_in_time_is_an_error_and_salvage_skips_it),
		T(references_to_undefined_ids_are_errors_and_salvage_skips_them),
		T(header_fields_out_of_range_are_errors_and_salvage_reads_on),
		T(version_1_log_reads_without_the_sequence_check),
		T(open_mem_survives_garbage_and_mutated_logs),
		T(every_single_bit_flip_of_a_header_is_refused),
		T(reserved_header_bytes_must_be_zero),
		T(records_contradicting_the_header_name_its_field),
		cmocka_unit_test(version_2_log_still_reads),
		cmocka_unit_test(kept_drop_kinds_are_not_counted_lost),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
