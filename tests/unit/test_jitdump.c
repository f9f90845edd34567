// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for perf's jitdump format: the parser (user/sources/jitdump.c) on byte buffers, and the
 * jitdump source (user/sources/jitdump_watch.c) through a pipeline, following a file this test process
 * writes and maps executable as runtimes do, its samples named by what the file says.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "jt_log_format.h"
#include "sources/jitdump.h"
#include "sources/jitdump_watch.h"
#include "join/pipeline.h"
#include "base/sink.h"
#include "base/util.h"
#include "unit/capture.h"

#define MS 1000000ULL
#define WINDOW MS
#define EM_X86_64 62

/* ---- jitdump bytes, as a runtime writes them (or, swap set, one of the other order) ---- */

struct jd {
	unsigned char *b;
	size_t n, cap;
	bool swap;
};

static void jd_bytes(struct jd *d, const void *p, size_t n)
{
	if (d->n + n > d->cap) {
		d->cap = 2 * (d->n + n) + 64;
		d->b = realloc(d->b, d->cap);
		assert_non_null(d->b);
	}
	memcpy(d->b + d->n, p, n);
	d->n += n;
}

static void jd_fill(struct jd *d, int c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		jd_bytes(d, &(unsigned char){ (unsigned char)c }, 1);
}

static void jd_u32(struct jd *d, uint32_t v)
{
	if (d->swap)
		v = __builtin_bswap32(v);
	jd_bytes(d, &v, 4);
}

static void jd_u64(struct jd *d, uint64_t v)
{
	if (d->swap)
		v = __builtin_bswap64(v);
	jd_bytes(d, &v, 8);
}

static void jd_free(struct jd *d)
{
	free(d->b);
	*d = (struct jd){ 0 };
}

/* A header of size bytes (40, or more with padding after it). */
static void jd_header_size(struct jd *d, uint32_t size, uint32_t pid, uint64_t ts,
			   uint64_t flags)
{
	jd_u32(d, JT_JITDUMP_MAGIC);
	jd_u32(d, 1);
	jd_u32(d, size);
	jd_u32(d, EM_X86_64);
	jd_u32(d, 0);
	jd_u32(d, pid);
	jd_u64(d, ts);
	jd_u64(d, flags);
	if (size > 40 && size < 4096)
		jd_fill(d, 0, size - 40);
}

static void jd_header(struct jd *d, uint32_t pid, uint64_t ts, uint64_t flags)
{
	jd_header_size(d, 40, pid, ts, flags);
}

static void jd_rec_hdr(struct jd *d, uint32_t type, uint32_t size, uint64_t ts)
{
	jd_u32(d, type);
	jd_u32(d, size);
	jd_u64(d, ts);
}

static size_t load_size(const char *name, size_t code_len)
{
	return JT_JITDUMP_REC_HDR + 40 + strlen(name) + 1 + code_len;
}

/* A code load with code_len code bytes after its name. */
static void jd_load(struct jd *d, uint64_t ts, uint32_t pid, uint64_t addr, uint64_t size,
		    uint64_t index, const char *name, size_t code_len)
{
	jd_rec_hdr(d, JT_JITDUMP_CODE_LOAD, (uint32_t)load_size(name, code_len), ts);
	jd_u32(d, pid);
	jd_u32(d, pid + 1);	/* tid */
	jd_u64(d, addr + 0x40);	/* vma: not what is read */
	jd_u64(d, addr);
	jd_u64(d, size);
	jd_u64(d, index);
	jd_bytes(d, name, strlen(name) + 1);
	jd_fill(d, 0xcc, code_len);
}

static void jd_move(struct jd *d, uint64_t ts, uint32_t pid, uint64_t old_addr,
		    uint64_t new_addr, uint64_t size, uint64_t index)
{
	jd_rec_hdr(d, JT_JITDUMP_CODE_MOVE, JT_JITDUMP_REC_HDR + 48, ts);
	jd_u32(d, pid);
	jd_u32(d, pid + 1);
	jd_u64(d, old_addr + 0x40);	/* vma: not what is read */
	jd_u64(d, old_addr);
	jd_u64(d, new_addr);
	jd_u64(d, size);
	jd_u64(d, index);
}

struct entry {
	uint64_t addr;
	uint32_t line, discrim;
	const char *file;
};

static void jd_debug(struct jd *d, uint64_t ts, uint64_t addr, uint64_t nr_claimed,
		     const struct entry *e, size_t n)
{
	size_t i, size = JT_JITDUMP_REC_HDR + 16;

	for (i = 0; i < n; i++)
		size += 16 + strlen(e[i].file) + 1;
	jd_rec_hdr(d, JT_JITDUMP_CODE_DEBUG_INFO, (uint32_t)size, ts);
	jd_u64(d, addr);
	jd_u64(d, nr_claimed);
	for (i = 0; i < n; i++) {
		jd_u64(d, e[i].addr);
		jd_u32(d, e[i].line);
		jd_u32(d, e[i].discrim);
		jd_bytes(d, e[i].file, strlen(e[i].file) + 1);
	}
}

/* ---- the parser: each input in a heap block of exactly its size, so ASan sees overreads ---- */

static void *exact(const void *p, size_t n)
{
	void *b = malloc(n ? n : 1);

	assert_non_null(b);
	memcpy(b, p, n);
	return b;
}

static int header_of(const struct jd *d, size_t len, struct jt_jitdump_header *h)
{
	void *b = exact(d->b, len);
	int err = jt_jitdump__header(b, len, h);

	free(b);
	return err;
}

static void header_fields_are_read(void **state)
{
	struct jd d = { 0 };
	struct jt_jitdump_header h;

	(void)state;
	jd_header(&d, 4242, 123456789012ULL, 0);
	assert_int_equal(d.n, JT_JITDUMP_HEADER_MIN);
	assert_int_equal(header_of(&d, d.n, &h), 0);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.size, 40);
	assert_int_equal(h.elf_mach, EM_X86_64);
	assert_int_equal(h.pid, 4242);
	assert_int_equal(h.timestamp, 123456789012ULL);
	assert_int_equal(h.flags, 0);
	jd_free(&d);

	/* a larger header (a writer's padding): records start after all of it */
	jd_header_size(&d, 64, 7, 8, JT_JITDUMP_FLAG_ARCH_TS);
	assert_int_equal(header_of(&d, d.n, &h), 0);
	assert_int_equal(h.size, 64);
	assert_int_equal(h.flags, JT_JITDUMP_FLAG_ARCH_TS);
	assert_int_equal(header_of(&d, 40, &h), 0);	/* its fixed part is enough */
	jd_free(&d);
}

static void short_header_asks_for_more(void **state)
{
	struct jd d = { 0 };
	struct jt_jitdump_header h;
	size_t len;

	(void)state;
	jd_header(&d, 1, 2, 0);
	for (len = 0; len < JT_JITDUMP_HEADER_MIN; len++)
		if (header_of(&d, len, &h) != -EAGAIN)
			fail_msg("%zu bytes of a header: not -EAGAIN", len);
	assert_int_equal(header_of(&d, JT_JITDUMP_HEADER_MIN, &h), 0);
	jd_free(&d);
}

static void byte_swapped_header_is_eproto(void **state)
{
	struct jd d = { .swap = true };
	struct jt_jitdump_header h;

	(void)state;
	jd_header(&d, 1, 2, 0);
	assert_memory_equal(d.b, "JiTD", 4);	/* what a big-endian writer's magic reads as */
	assert_int_equal(header_of(&d, d.n, &h), -EPROTO);
	assert_int_equal(header_of(&d, 4, &h), -EPROTO);	/* known from the magic alone */
	jd_free(&d);
}

static void bad_magic_or_version_is_einval(void **state)
{
	struct jd d = { 0 };
	struct jt_jitdump_header h;
	uint32_t v;

	(void)state;
	jd_header(&d, 1, 2, 0);
	memcpy(d.b, "ELF\x7f", 4);
	assert_int_equal(header_of(&d, d.n, &h), -EINVAL);
	assert_int_equal(header_of(&d, 4, &h), -EINVAL);
	jd_free(&d);
	for (v = 0; v < 4; v++) {
		if (v == 1)
			continue;
		jd_header(&d, 1, 2, 0);
		memcpy(d.b + 4, &v, 4);
		assert_int_equal(header_of(&d, d.n, &h), -EINVAL);
		jd_free(&d);
	}
}

static void header_size_out_of_range_is_einval(void **state)
{
	static const uint32_t bad[] = { 0, 16, 39, 4097, 65536, UINT32_MAX };
	struct jd d = { 0 };
	struct jt_jitdump_header h;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		jd_header(&d, 1, 2, 0);
		memcpy(d.b + 8, &bad[i], 4);
		if (header_of(&d, d.n, &h) != -EINVAL)
			fail_msg("header size %u taken", bad[i]);
		jd_free(&d);
	}
	jd_header(&d, 1, 2, 0);
	memcpy(d.b + 8, &(uint32_t){ 4096 }, 4);	/* the largest taken */
	assert_int_equal(header_of(&d, d.n, &h), 0);
	assert_int_equal(h.size, 4096);
	jd_free(&d);
}

static int rec_of(const void *p, size_t len, struct jt_jitdump_rec *r)
{
	char *b = exact(p, len);
	int err = jt_jitdump__rec(b, len, r);
	size_t name_off = r->name ? (size_t)(r->name - b) : 0;
	size_t lines_off = r->lines ? (size_t)(r->lines - b) : 0;

	/* what it points at stays in the bytes given: checked while they are there */
	if (!err && r->name)
		assert_true(r->name >= b && name_off + r->name_len < len && !r->name[r->name_len]);
	if (!err && r->lines)
		assert_true(r->lines >= b && lines_off + r->lines_len <= len);
	free(b);
	/* the caller reads them in its own bytes */
	if (!err && r->name)
		r->name = (const char *)p + name_off;
	if (!err && r->lines)
		r->lines = (const char *)p + lines_off;
	return err;
}

static void code_load_is_parsed(void **state)
{
	struct jd d = { 0 };
	struct jt_jitdump_rec r;

	(void)state;
	jd_load(&d, 5555, 100, 0x7f0012340000ULL, 0x1a0, 77, "LazyCompile:*fib /a.js:1", 0x1a0);
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	assert_int_equal(r.type, JT_JITDUMP_CODE_LOAD);
	assert_int_equal(r.size, d.n);
	assert_int_equal(r.ts, 5555);
	assert_int_equal(r.pid, 100);
	assert_int_equal(r.tid, 101);
	assert_int_equal(r.addr, 0x7f0012340000ULL);
	assert_int_equal(r.code_size, 0x1a0);
	assert_int_equal(r.index, 77);
	assert_int_equal(r.name_len, strlen("LazyCompile:*fib /a.js:1"));
	assert_memory_equal(r.name, "LazyCompile:*fib /a.js:1", r.name_len);
	assert_ptr_equal(r.name, d.b + 56);
	assert_int_equal(r.nr_lines, 0);
	assert_null(r.lines);

	/* the fixed part and the name are enough: the code bytes are not needed */
	assert_int_equal(rec_of(d.b, load_size("LazyCompile:*fib /a.js:1", 0), &r), 0);
	assert_int_equal(r.size, d.n);
	assert_int_equal(r.index, 77);
	jd_free(&d);

	jd_load(&d, 1, 2, 0x1000, 0x10, 3, "", 0);	/* an empty name */
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	assert_int_equal(r.name_len, 0);
	jd_free(&d);
}

static void code_load_without_nul_in_the_bytes_given_is_einval(void **state)
{
	struct jd d = { 0 };
	struct jt_jitdump_rec r;
	size_t named = load_size("Foo.bar", 0);
	uint32_t cut;

	(void)state;
	jd_load(&d, 1, 2, 0x1000, 0x10, 3, "Foo.bar", 64);
	/* the bytes given end just before the NUL, or inside the name */
	assert_int_equal(rec_of(d.b, named - 1, &r), -EINVAL);
	assert_int_equal(rec_of(d.b, named - 4, &r), -EINVAL);
	/* the fixed part itself cut */
	assert_int_equal(rec_of(d.b, JT_JITDUMP_REC_HDR + 39, &r), -EINVAL);
	assert_int_equal(rec_of(d.b, JT_JITDUMP_REC_HDR + 40, &r), -EINVAL);	/* no name byte */
	/* all the bytes are there, but the record's size ends before the NUL */
	cut = (uint32_t)named - 1;
	memcpy(d.b + 4, &cut, 4);
	assert_int_equal(rec_of(d.b, d.n, &r), -EINVAL);
	cut = (uint32_t)named;
	memcpy(d.b + 4, &cut, 4);
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	assert_int_equal(r.size, named);
	/* a name that runs to the end of its record */
	jd_free(&d);
	jd_load(&d, 1, 2, 0x1000, 0x10, 3, "Foo.bar", 0);
	d.b[d.n - 1] = 'x';
	assert_int_equal(rec_of(d.b, d.n, &r), -EINVAL);
	jd_free(&d);
}

static void code_move_is_parsed(void **state)
{
	struct jd d = { 0 };
	struct jt_jitdump_rec r;

	(void)state;
	jd_move(&d, 999, 10, 0x40000, 0x80000, 0x300, 12);
	assert_int_equal(d.n, 64);
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	assert_int_equal(r.type, JT_JITDUMP_CODE_MOVE);
	assert_int_equal(r.size, 64);
	assert_int_equal(r.ts, 999);
	assert_int_equal(r.pid, 10);
	assert_int_equal(r.tid, 11);
	assert_int_equal(r.old_addr, 0x40000);
	assert_int_equal(r.addr, 0x80000);
	assert_int_equal(r.code_size, 0x300);
	assert_int_equal(r.index, 12);
	assert_null(r.name);
	/* its fixed part cut, by the bytes given or by its own size */
	assert_int_equal(rec_of(d.b, 63, &r), -EINVAL);
	memcpy(d.b + 4, &(uint32_t){ 63 }, 4);
	assert_int_equal(rec_of(d.b, d.n, &r), -EINVAL);
	jd_free(&d);
}

static void debug_info_entries_are_walked(void **state)
{
	static const struct entry e[] = {
		{ 0x5000, 10, 0, "/src/a.js" },
		{ 0x5010, 11, 2, "/src/a.js" },
		{ 0x5024, 4000000000u, 7, "" },	/* an empty name is an entry still */
	};
	struct jd d = { 0 };
	struct jt_jitdump_rec r;
	struct jt_jitdump_line l;
	size_t pos = 0, i;

	(void)state;
	jd_debug(&d, 77, 0x5000, 3, e, 3);
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	assert_int_equal(r.type, JT_JITDUMP_CODE_DEBUG_INFO);
	assert_int_equal(r.size, d.n);
	assert_int_equal(r.ts, 77);
	assert_int_equal(r.addr, 0x5000);
	assert_int_equal(r.nr_lines, 3);
	assert_ptr_equal(r.lines, d.b + 32);
	assert_int_equal(r.lines_len, d.n - 32);
	for (i = 0; i < 3; i++) {
		assert_true(jt_jitdump__line(&r, &pos, &l));
		assert_int_equal(l.addr, e[i].addr);
		assert_int_equal(l.line, e[i].line);
		assert_int_equal(l.discrim, e[i].discrim);
		assert_int_equal(l.file_len, strlen(e[i].file));
		assert_memory_equal(l.file, e[i].file, l.file_len);
	}
	assert_int_equal(pos, r.lines_len);
	assert_false(jt_jitdump__line(&r, &pos, &l));
	assert_int_equal(pos, r.lines_len);
	/* the whole record is needed: its entries are its last bytes */
	assert_int_equal(rec_of(d.b, d.n - 1, &r), -EINVAL);
	assert_int_equal(rec_of(d.b, JT_JITDUMP_REC_HDR + 15, &r), -EINVAL);
	jd_free(&d);

	/* no entries at all */
	jd_debug(&d, 77, 0x5000, 0, NULL, 0);
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	assert_int_equal(r.lines_len, 0);
	pos = 0;
	assert_false(jt_jitdump__line(&r, &pos, &l));
	jd_free(&d);
}

static void debug_info_walk_stops_at_a_truncated_entry(void **state)
{
	static const struct entry e[] = {
		{ 0x5000, 10, 0, "a.js" },
		{ 0x5010, 11, 0, "b.js" },
	};
	struct jd d = { 0 };
	struct jt_jitdump_rec r;
	struct jt_jitdump_line l;
	size_t pos, good, n;

	(void)state;
	/* the second entry's name without its NUL: it ends the record */
	jd_debug(&d, 1, 0x5000, 2, e, 2);
	good = 16 + strlen("a.js") + 1;
	d.b[d.n - 1] = 's';
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	pos = 0;
	assert_true(jt_jitdump__line(&r, &pos, &l));
	assert_int_equal(l.line, 10);
	assert_int_equal(pos, good);
	assert_false(jt_jitdump__line(&r, &pos, &l));
	assert_int_equal(pos, good);	/* not moved past what is not an entry */
	jd_free(&d);

	/* entries cut short of a name byte, at every length: one entry, then nothing */
	for (n = 0; n < 17; n++) {
		size_t size = JT_JITDUMP_REC_HDR + 16 + good + n;

		jd_debug(&d, 1, 0x5000, 2, e, 2);
		memcpy(d.b + 4, &(uint32_t){ (uint32_t)size }, 4);
		assert_int_equal(rec_of(d.b, size, &r), 0);
		assert_int_equal(r.lines_len, good + n);
		pos = 0;
		assert_true(jt_jitdump__line(&r, &pos, &l));
		assert_false(jt_jitdump__line(&r, &pos, &l));
		assert_int_equal(pos, good);
		jd_free(&d);
	}

	/* nr_entry claims more than there are: the walk goes by the bytes */
	jd_debug(&d, 1, 0x5000, 1000000, e, 2);
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	assert_int_equal(r.nr_lines, 1000000);
	pos = 0;
	assert_true(jt_jitdump__line(&r, &pos, &l));
	assert_true(jt_jitdump__line(&r, &pos, &l));
	assert_int_equal(l.line, 11);
	assert_false(jt_jitdump__line(&r, &pos, &l));
	jd_free(&d);
}

static void close_unwinding_and_unknown_records_are_sized_not_read(void **state)
{
	static const uint32_t types[] = {
		JT_JITDUMP_CODE_CLOSE, JT_JITDUMP_CODE_UNWINDING_INFO, 5, 0x7fffffff,
	};
	struct jd d = { 0 };
	struct jt_jitdump_rec r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t body = types[i] == JT_JITDUMP_CODE_CLOSE ? 0 : 24 + 40;

		jd_rec_hdr(&d, types[i], (uint32_t)(JT_JITDUMP_REC_HDR + body), 31337);
		jd_fill(&d, 0xee, body);
		assert_int_equal(rec_of(d.b, d.n, &r), 0);
		assert_int_equal(r.type, types[i]);
		assert_int_equal(r.size, d.n);
		assert_int_equal(r.ts, 31337);
		assert_null(r.name);
		assert_null(r.lines);
		assert_int_equal(r.addr, 0);
		jd_free(&d);
	}
}

static void record_size_out_of_range_is_zero(void **state)
{
	static const uint32_t bad[] = { 0, 1, 8, 15, JT_JITDUMP_REC_MAX + 1, UINT32_MAX };
	struct jd d = { 0 };
	struct jt_jitdump_rec r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		jd_rec_hdr(&d, JT_JITDUMP_CODE_CLOSE, bad[i], 1);
		jd_fill(&d, 0, 64);
		if (jt_jitdump__rec_size(d.b, d.n) != 0)
			fail_msg("record size %u taken", bad[i]);
		assert_int_equal(rec_of(d.b, d.n, &r), -EINVAL);
		jd_free(&d);
	}
	jd_rec_hdr(&d, JT_JITDUMP_CODE_CLOSE, JT_JITDUMP_REC_HDR, 1);
	assert_int_equal(jt_jitdump__rec_size(d.b, d.n), JT_JITDUMP_REC_HDR);
	assert_int_equal(jt_jitdump__rec_size(d.b, JT_JITDUMP_REC_HDR - 1), 0);	/* too few */
	jd_free(&d);
	jd_rec_hdr(&d, JT_JITDUMP_CODE_CLOSE, JT_JITDUMP_REC_MAX, 1);
	assert_int_equal(jt_jitdump__rec_size(d.b, d.n), JT_JITDUMP_REC_MAX);
	jd_free(&d);
}

static void code_address_wrap_is_rejected(void **state)
{
	struct jd d = { 0 };
	struct jt_jitdump_rec r;

	(void)state;
	jd_load(&d, 1, 2, UINT64_MAX - 0xf, 0x10, 3, "wraps", 0);	/* ends at 2^64: 0 */
	assert_int_equal(rec_of(d.b, d.n, &r), -EINVAL);
	jd_free(&d);
	jd_load(&d, 1, 2, 0x1000, UINT64_MAX, 3, "wraps", 0);
	assert_int_equal(rec_of(d.b, d.n, &r), -EINVAL);
	jd_free(&d);
	jd_load(&d, 1, 2, UINT64_MAX - 0xf, 0xf, 3, "fits", 0);	/* the last byte's end */
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	jd_free(&d);
	jd_move(&d, 1, 2, 0x1000, UINT64_MAX - 0xf, 0x10, 3);
	assert_int_equal(rec_of(d.b, d.n, &r), -EINVAL);
	jd_free(&d);
	jd_move(&d, 1, 2, 0x1000, UINT64_MAX - 0xf, 0xf, 3);
	assert_int_equal(rec_of(d.b, d.n, &r), 0);
	jd_free(&d);
}

/* ---- the source, through a pipeline: this process writes and maps its own jitdump ---- */

#define CODE_SPAN (1u << 20)

struct jfx {
	struct capture cap;
	struct jt_sink sink;
	struct jt_pipeline *pl;
	struct jd d;		/* the file's bytes as written so far and to be written */
	size_t written;		/* of d, in the file */
	int fd;
	void *marker;		/* the file's executable mapping, as runtimes make it */
	unsigned char *code;	/* reserved, no access: addresses no file maps */
	uint64_t t0;		/* CLOCK_MONOTONIC at the start: the file's times near it */
	uint32_t pid;
	char path[64], map_path[64];
};

static int jfx_setup(void **state)
{
	struct jfx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->pid = (uint32_t)getpid();
	f->marker = MAP_FAILED;
	snprintf(f->path, sizeof(f->path), "/tmp/jit-%d.dump", (int)f->pid);
	unlink(f->path);	/* one an earlier process of this pid left */
	f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	assert_true(f->fd >= 0);
	f->code = mmap(NULL, CODE_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	assert_true(f->code != MAP_FAILED);
	f->sink = (struct jt_sink){ capture_record, &f->cap };
	f->t0 = jt_now_ns();
	*state = f;
	return 0;
}

static int jfx_teardown(void **state)
{
	struct jfx *f = *state;
	size_t i;

	jt_pipeline__free(f->pl);
	if (f->marker != MAP_FAILED)
		munmap(f->marker, (size_t)sysconf(_SC_PAGESIZE));
	munmap(f->code, CODE_SPAN);
	close(f->fd);
	unlink(f->path);
	if (f->map_path[0])
		unlink(f->map_path);
	jd_free(&f->d);
	for (i = 0; i < f->cap.n; i++)
		free(f->cap.recs[i]);
	free(f->cap.recs);
	free(f);
	return 0;
}

/* An address n bytes into the reserved span. */
static uint64_t at(const struct jfx *f, uint64_t n)
{
	return (uint64_t)(uintptr_t)f->code + n;
}

/* Write n more of the bytes built (all of them: SIZE_MAX) to the file. */
static void jfx_write(struct jfx *f, size_t n)
{
	if (n > f->d.n - f->written)
		n = f->d.n - f->written;
	assert_int_equal(write(f->fd, f->d.b + f->written, n), (ssize_t)n);
	f->written += n;
}

/* Map the file's first page read-exec, private: what makes /proc/PID/maps show it. */
static void jfx_map(struct jfx *f)
{
	f->marker = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC, MAP_PRIVATE,
			 f->fd, 0);
	assert_true(f->marker != MAP_FAILED);
}

/* The pipeline, told of this process at t0 (its file is read then). */
static void jfx_start(struct jfx *f, bool perfmaps)
{
	struct jt_pipeline_opts o = {
		.window_ns = WINDOW, .max_pending = 1 << 20, .proc_root = "/proc",
		.follow_perfmaps = perfmaps, .follow_jitdumps = true,
	};

	f->pl = jt_pipeline__new(&o, &f->sink);
	assert_non_null(f->pl);
	jt_pipeline__scan(f->pl, f->pid, f->t0);
}

static void tick(struct jfx *f, uint64_t off)
{
	assert_int_equal(jt_pipeline__tick(f->pl, f->t0 + off), 0);
}

static void finish(struct jfx *f)
{
	size_t i;

	assert_int_equal(jt_pipeline__finish(f->pl), 0);
	for (i = 1; i < f->cap.n; i++)
		if (f->cap.recs[i]->ts < f->cap.recs[i - 1]->ts)
			fail_msg("record %zu out of time order", i);
}

/* A ring-buffer sample of this process, one user frame at ip, off after t0. */
static void sample(struct jfx *f, uint64_t off, uint64_t ip)
{
	struct jt_ev_sample s = { .cpu = 0, .nr_user = 1, .ips = { ip } };

	s.h = (struct jt_ev_hdr){ .type = JT_EV_SAMPLE, .size = JT_EV_SAMPLE_FIXED + 8,
				  .ts = f->t0 + off, .pid = f->pid, .tid = f->pid };
	assert_int_equal(jt_pipeline__raw(f->pl, &s, JT_EV_SAMPLE_FIXED + 8), 0);
}

static struct jt_pipeline_stats stats(const struct jfx *f)
{
	struct jt_pipeline_stats st;

	jt_pipeline__stats(f->pl, &st);
	return st;
}

static const struct jt_rec_method *method_def(const struct jfx *f, uint64_t id)
{
	size_t i;

	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_method *m = (const void *)f->cap.recs[i];

		if (m->h.type == JT_REC_METHOD && m->id == id)
			return m;
	}
	return NULL;
}

static const struct jt_rec_sample *nth_sample(const struct jfx *f, size_t n)
{
	size_t i;

	for (i = 0; i < f->cap.n; i++)
		if (f->cap.recs[i]->type == JT_REC_SAMPLE && !n--)
			return (const void *)f->cap.recs[i];
	fail_msg("no sample %zu", n);
	return NULL;
}

static size_t count_type(const struct jfx *f, unsigned int type)
{
	size_t i, n = 0;

	for (i = 0; i < f->cap.n; i++)
		n += f->cap.recs[i]->type == type;
	return n;
}

/* The method the n-th sample's leaf names, NULL if none. */
static const struct jt_rec_method *leaf(const struct jfx *f, size_t n)
{
	const struct jt_rec_sample *s = nth_sample(f, n);

	if (JT_FRAME_KIND(s->frames[0].ref) != JT_FRAME_METHOD)
		return NULL;
	return method_def(f, JT_FRAME_ID(s->frames[0].ref));
}

/* Whether the n-th sample's leaf is named name (NULL: unnamed). */
static bool leaf_is(const struct jfx *f, size_t n, const char *name)
{
	const struct jt_rec_method *m = leaf(f, n);

	if (!m || !name)
		return !m && !name;
	return m->name_len == strlen(name) && !memcmp(m->name, name, m->name_len);
}

static void assert_leaf(const struct jfx *f, size_t n, const char *name)
{
	const struct jt_rec_method *m = leaf(f, n);

	if (!leaf_is(f, n, name))
		fail_msg("sample %zu: leaf %.*s, not %s", n, m ? (int)m->name_len : 6,
			 m ? m->name : "(none)", name ? name : "(none)");
}

/* Method records named name. */
static size_t defs_named(const struct jfx *f, const char *name, const struct jt_rec_method **last)
{
	size_t i, n = 0;

	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_method *m = (const void *)f->cap.recs[i];

		if (m->h.type == JT_REC_METHOD && m->name_len == strlen(name) &&
		    !memcmp(m->name, name, m->name_len)) {
			n++;
			if (last)
				*last = m;
		}
	}
	return n;
}

/* The sum of the drop records of one kind. */
static uint64_t drops(const struct jfx *f, unsigned int what)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_drop *d = (const void *)f->cap.recs[i];

		if (d->h.type == JT_REC_DROP && d->what == what)
			n += d->count;
	}
	return n;
}

static void samples_are_named_by_the_method_live_at_their_time(void **state)
{
	struct jfx *f = *state;
	const struct jt_rec_method *m;
	const struct jt_rec_sample *s;
	struct jt_pipeline_stats st;

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "js:hot", 0x100);
	jd_load(&f->d, f->t0 + 3 * MS, f->pid, at(f, 0x2000), 0x80, 2, "js:late", 0x80);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	st = stats(f);
	assert_int_equal(st.jitdumps, 1);
	assert_int_equal(st.jitdump_records, 2);

	sample(f, MS / 2, at(f, 0x1010));	/* 0: before js:hot was loaded */
	sample(f, 2 * MS, at(f, 0x1010));	/* 1: js:hot */
	sample(f, 2 * MS, at(f, 0x2010));	/* 2: before js:late */
	sample(f, 4 * MS, at(f, 0x2010));	/* 3: js:late */
	sample(f, 4 * MS, at(f, 0x10ff));	/* 4: js:hot's last byte */
	sample(f, 4 * MS, at(f, 0x1100));	/* 5: just past it */
	tick(f, 10 * MS);
	finish(f);

	assert_int_equal(count_type(f, JT_REC_SAMPLE), 6);
	assert_leaf(f, 0, NULL);
	assert_leaf(f, 1, "js:hot");
	assert_leaf(f, 2, NULL);
	assert_leaf(f, 3, "js:late");
	assert_leaf(f, 4, "js:hot");
	assert_leaf(f, 5, NULL);
	s = nth_sample(f, 1);
	assert_int_equal(s->frames[0].off, 0x10);
	m = leaf(f, 1);
	assert_int_equal(m->start, at(f, 0x1000));
	assert_int_equal(m->size, 0x100);
	assert_int_equal(m->load_ts, f->t0 + 1 * MS);	/* the record's own time */
	assert_int_equal(m->src, JT_SRC_JITDUMP);
	assert_int_equal(m->agent_id, JT_JITDUMP_ID_BIT | 1);
	assert_int_equal(m->pid, f->pid);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
	assert_int_equal(drops(f, JT_DROP_REORDER), 0);
}

static void code_move_moves_the_name_to_the_new_address(void **state)
{
	struct jfx *f = *state;
	const struct jt_rec_method *m;

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 7, "Foo::bar", 0x100);
	jd_move(&f->d, f->t0 + 3 * MS, f->pid, at(f, 0x1000), at(f, 0x8000), 0x100, 7);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	assert_int_equal(stats(f).jitdump_records, 2);

	sample(f, 2 * MS, at(f, 0x1020));	/* 0: at the old address, before the move */
	sample(f, 2 * MS, at(f, 0x8020));	/* 1: the new one, before: nothing there */
	sample(f, 4 * MS, at(f, 0x1020));	/* 2: the old one after: nothing there now */
	sample(f, 4 * MS, at(f, 0x8020));	/* 3: the new one after */
	finish(f);

	assert_int_equal(count_type(f, JT_REC_SAMPLE), 4);
	assert_leaf(f, 0, "Foo::bar");
	assert_leaf(f, 1, NULL);
	assert_leaf(f, 2, NULL);
	assert_leaf(f, 3, "Foo::bar");
	m = leaf(f, 3);
	assert_int_equal(m->start, at(f, 0x8000));
	assert_int_equal(m->size, 0x100);
	assert_int_equal(nth_sample(f, 3)->frames[0].off, 0x20);
	assert_int_equal(leaf(f, 0)->start, at(f, 0x1000));
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

/*
 * Code freed and new code written at its address, the second load read only after samples
 * of both sides of the switch arrived: each is named by what ran at its time, none wrong.
 */
static void code_written_over_old_code_names_each_side_of_the_switch(void **state)
{
	struct jfx *f = *state;
	size_t i, wrong = 0, n;

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "old_fn", 0x100);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	assert_int_equal(stats(f).jitdump_records, 1);

	/* samples every 0.5 ms from 1.5 ms to 9.5 ms; the switch is at 5.25 ms */
	for (i = 3; i < 20; i++)
		sample(f, i * MS / 2, at(f, 0x1000 + 8 * i));
	tick(f, 4 * MS + WINDOW);	/* up to 4 ms out, old_fn's */
	jd_load(&f->d, f->t0 + 5 * MS + MS / 4, f->pid, at(f, 0x1000), 0x100, 2, "new_fn", 0x100);
	jfx_write(f, SIZE_MAX);
	tick(f, 5 * MS + WINDOW);	/* read now, in time for what is after it */
	assert_int_equal(stats(f).jitdump_records, 2);
	for (i = 20; i < 24; i++)
		sample(f, i * MS / 2, at(f, 0x1000 + 8 * i));
	finish(f);

	n = count_type(f, JT_REC_SAMPLE);
	assert_int_equal(n, 21);
	for (i = 0; i < n; i++) {
		uint64_t ts = nth_sample(f, i)->h.ts;
		const char *want = ts < f->t0 + 5 * MS + MS / 4 ? "old_fn" : "new_fn";

		if (!leaf_is(f, i, want)) {
			print_message("sample %zu at +%llu ns: not %s\n", i,
				      (unsigned long long)(ts - f->t0), want);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
	assert_int_equal(defs_named(f, "old_fn", NULL), 1);
	assert_int_equal(defs_named(f, "new_fn", NULL), 1);
	assert_int_equal(drops(f, JT_DROP_REORDER), 0);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

static void records_appended_later_are_read_at_the_next_tick(void **state)
{
	struct jfx *f = *state;
	struct jt_pipeline_stats st;
	int i;

	jd_header_size(&f->d, 64, f->pid, f->t0, 0);	/* records start after its padding */
	jfx_write(f, SIZE_MAX);	/* the header alone, as a runtime starts */
	jfx_map(f);
	jfx_start(f, false);
	st = stats(f);
	assert_int_equal(st.jitdumps, 1);
	assert_int_equal(st.jitdump_records, 0);
	for (i = 0; i < 3; i++) {
		uint64_t ts = (uint64_t)(2 * i + 1) * MS;
		char name[16];

		snprintf(name, sizeof(name), "fn%d", i);
		jd_load(&f->d, f->t0 + ts, f->pid, at(f, 0x1000 * (i + 1)), 0x100, i + 1, name,
			0x100);
		jfx_write(f, SIZE_MAX);
		sample(f, ts + MS / 2, at(f, 0x1000 * (i + 1) + 4));
		tick(f, ts + MS / 2);
		assert_int_equal(stats(f).jitdump_records, (uint64_t)i + 1);
	}
	finish(f);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 3);
	assert_leaf(f, 0, "fn0");
	assert_leaf(f, 1, "fn1");
	assert_leaf(f, 2, "fn2");
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

/* A record the runtime has not finished writing is left for a later read, at every cut. */
static void half_written_record_waits_until_it_is_complete(void **state)
{
	struct jfx *f = *state;
	size_t cuts[] = { 6, JT_JITDUMP_REC_HDR, JT_JITDUMP_REC_HDR + 20, 60 }, i, whole;

	jd_header(&f->d, f->pid, f->t0, 0);
	jfx_write(f, 25);	/* the header itself cut */
	jfx_map(f);
	jfx_start(f, false);
	assert_int_equal(stats(f).jitdumps, 1);
	jfx_write(f, SIZE_MAX);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "first", 0x100);
	jfx_write(f, SIZE_MAX);
	tick(f, 1 * MS);
	assert_int_equal(stats(f).jitdump_records, 1);

	whole = load_size("second_method_with_a_long_name", 0x200);
	jd_load(&f->d, f->t0 + 2 * MS, f->pid, at(f, 0x2000), 0x200, 2,
		"second_method_with_a_long_name", 0x200);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		jfx_write(f, cuts[i] - (i ? cuts[i - 1] : 0));
		tick(f, 2 * MS + i * MS / 10);
		if (stats(f).jitdump_records != 1)
			fail_msg("a record cut after %zu of its %zu bytes was taken", cuts[i], whole);
	}
	jfx_write(f, whole - cuts[i - 1] - 1);	/* all but its last code byte */
	tick(f, 3 * MS);
	assert_int_equal(stats(f).jitdump_records, 1);
	sample(f, 3 * MS, at(f, 0x2010));
	jfx_write(f, SIZE_MAX);
	tick(f, 3 * MS);
	assert_int_equal(stats(f).jitdump_records, 2);
	sample(f, 4 * MS, at(f, 0x1010));
	finish(f);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 2);
	assert_leaf(f, 0, "second_method_with_a_long_name");
	assert_leaf(f, 1, "first");
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

/* A code load with more code than one read takes (64 KiB) is taken, and what follows it. */
static void code_load_larger_than_a_read_is_taken(void **state)
{
	struct jfx *f = *state;

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x10000), 200000, 1, "big", 200000);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 2, "after_big", 0x100);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	assert_int_equal(stats(f).jitdump_records, 2);
	sample(f, 2 * MS, at(f, 0x10000 + 150000));
	sample(f, 2 * MS, at(f, 0x1010));
	finish(f);
	assert_leaf(f, 0, "big");
	assert_leaf(f, 1, "after_big");
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

/* A record whose size cannot be right ends that file: counted once, the rest goes on. */
static void absurd_record_size_stops_the_file(struct jfx *f, uint32_t size)
{
	struct jt_pipeline_stats st;

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "before", 0x100);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	assert_int_equal(stats(f).jitdump_records, 1);
	sample(f, 2 * MS, at(f, 0x1010));
	tick(f, 2 * MS);

	jd_rec_hdr(&f->d, JT_JITDUMP_CODE_LOAD, size, f->t0 + 3 * MS);
	jd_fill(&f->d, 0, 56);
	jd_load(&f->d, f->t0 + 3 * MS, f->pid, at(f, 0x2000), 0x100, 2, "after", 0x100);
	jfx_write(f, SIZE_MAX);
	tick(f, 3 * MS);
	st = stats(f);
	assert_int_equal(st.jitdumps, 0);	/* closed */
	assert_int_equal(st.jitdump_records, 1);
	/* not looked at again, however long the run goes on */
	tick(f, 100 * MS);
	tick(f, 1000 * MS);
	tick(f, 3000 * MS);
	st = stats(f);
	assert_int_equal(st.jitdumps, 0);
	assert_int_equal(st.jitdump_records, 1);
	sample(f, 3001 * MS, at(f, 0x1010));	/* what was read still names */
	sample(f, 3001 * MS, at(f, 0x2010));	/* what was after it never does */
	tick(f, 3002 * MS);
	finish(f);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 3);
	assert_leaf(f, 0, "before");
	assert_leaf(f, 1, "before");
	assert_leaf(f, 2, NULL);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 1);
}

static void record_size_under_its_header_stops_the_file(void **state)
{
	absurd_record_size_stops_the_file(*state, 8);
}

static void record_size_over_the_limit_stops_the_file(void **state)
{
	absurd_record_size_stops_the_file(*state, JT_JITDUMP_REC_MAX + 1);
}

/* A file that cannot be read right is not read at all: said once, counted once. */
static void refused_file_names_nothing(struct jfx *f)
{
	struct jt_pipeline_stats st;

	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "never", 0x100);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	sample(f, 2 * MS, at(f, 0x1010));
	tick(f, 2 * MS);
	tick(f, 500 * MS);
	tick(f, 3000 * MS);
	st = stats(f);
	assert_int_equal(st.jitdumps, 0);
	assert_int_equal(st.jitdump_records, 0);
	finish(f);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 1);
	assert_leaf(f, 0, NULL);
	assert_int_equal(defs_named(f, "never", NULL), 0);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 1);
}

static void arch_timestamp_file_is_refused_and_counted(void **state)
{
	struct jfx *f = *state;

	jd_header(&f->d, f->pid, f->t0, JT_JITDUMP_FLAG_ARCH_TS);
	refused_file_names_nothing(f);
}

static void other_byte_order_file_is_refused_and_counted(void **state)
{
	struct jfx *f = *state;

	f->d.swap = true;
	jd_header(&f->d, f->pid, f->t0, 0);
	refused_file_names_nothing(f);
}

/* Times of another clock (far ahead of CLOCK_MONOTONIC's now): refused, counted once. */
static void record_far_ahead_of_now_is_refused_and_counted(void **state)
{
	struct jfx *f = *state;

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "ok", 0x100);
	jd_load(&f->d, f->t0 + 60000 * MS, f->pid, at(f, 0x2000), 0x100, 2, "tsc", 0x100);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	assert_int_equal(stats(f).jitdumps, 0);
	assert_int_equal(stats(f).jitdump_records, 1);
	sample(f, 2 * MS, at(f, 0x1010));
	sample(f, 2 * MS, at(f, 0x2010));
	tick(f, 1000 * MS);
	finish(f);
	assert_leaf(f, 0, "ok");
	assert_leaf(f, 1, NULL);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 1);
}

/*
 * .NET 10 under DOTNET_PerfMapEnabled=2 alone: a stub's record, then one claiming 65,622
 * bytes (a 64 KiB stub block) of which it wrote only part, and the runtime closes and unmaps
 * the file. The file is found all the same (its /tmp/jit-PID.dump, written since the
 * process started), what came before the cut names its code, and the cut is said and
 * counted once the file has stopped growing for a second and nobody holds it open.
 */
static void record_cut_short_by_its_writer_is_said_and_counted(void **state)
{
	struct jfx *f = *state;
	const char *block = "stub ReportStubBlock<Unknown>";

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x110, 1,
		"stub InitThreadManagerPerfMapData<JIT_CopiedWriteBarriers>", 0x110);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x10000), 65536, 2, block, 65536);
	assert_int_equal(load_size(block, 65536), 65622);
	jfx_write(f, f->d.n - 65536 + 32854);	/* as the runtime left it: 33,281 bytes */
	close(f->fd);		/* and no mapping of it: not announced, as .NET leaves it */
	f->fd = -1;
	jfx_start(f, false);
	sample(f, 2 * MS, at(f, 0x1010));
	tick(f, 2 * MS);
	assert_int_equal(stats(f).jitdump_records, 1);
	assert_int_equal(stats(f).jitdumps, 1);		/* not said yet: it may still grow */
	tick(f, 500 * MS);
	assert_int_equal(stats(f).lost[JT_DROP_JITDUMP], 0);
	tick(f, 1500 * MS);
	assert_int_equal(stats(f).jitdumps, 0);		/* said, and let go */
	sample(f, 1600 * MS, at(f, 0x1010));
	sample(f, 1600 * MS, at(f, 0x10010));
	tick(f, 3000 * MS);
	finish(f);
	assert_leaf(f, 0, "stub InitThreadManagerPerfMapData<JIT_CopiedWriteBarriers>");
	assert_leaf(f, 1, "stub InitThreadManagerPerfMapData<JIT_CopiedWriteBarriers>");
	assert_leaf(f, 2, NULL);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 1);
}

/* The same cut in a file its writer still holds open is a record being written: it waits. */
static void record_unfinished_in_a_file_still_open_waits(void **state)
{
	struct jfx *f = *state;

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "first", 0x100);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x2000), 0x100, 2, "second", 0x100);
	jfx_write(f, f->d.n - 0x80);
	jfx_map(f);
	jfx_start(f, false);
	tick(f, 3000 * MS);
	assert_int_equal(stats(f).jitdumps, 1);
	jfx_write(f, SIZE_MAX);
	tick(f, 3001 * MS);
	assert_int_equal(stats(f).jitdump_records, 2);
	finish(f);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

/* A file nothing announced whose header names another pid is another's: not read, not said. */
static void unannounced_file_of_another_pid_is_left_alone(void **state)
{
	struct jfx *f = *state;

	jd_header(&f->d, f->pid + 1, f->t0, 0);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "not_mine", 0x100);
	jfx_write(f, SIZE_MAX);
	close(f->fd);
	f->fd = -1;
	jfx_start(f, false);
	sample(f, 2 * MS, at(f, 0x1010));
	tick(f, 3000 * MS);
	finish(f);
	assert_int_equal(stats(f).jitdump_records, 0);
	assert_leaf(f, 0, NULL);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

static void write_perf_map(struct jfx *f, const char *mode, const char *lines)
{
	FILE *m;

	snprintf(f->map_path, sizeof(f->map_path), "/tmp/perf-%d.map", (int)f->pid);
	if (*mode == 'w')
		unlink(f->map_path);
	m = fopen(f->map_path, mode);
	assert_non_null(m);
	fputs(lines, m);
	assert_int_equal(fclose(m), 0);
}

/*
 * A runtime writing both a perf map and a jitdump of the same code (BEAM's +JPperf true,
 * .NET's PerfMapEnabled=1): its code is named from the perf map, as before jitdumps were
 * read (BEAM's map says "$mod:fun/1", its jitdump "mod:fun/1"), and its jitdump is not
 * read: each method is defined once, from the map, and a line only the map has names too.
 */
static void perfmap_and_jitdump_of_the_same_code_name_from_the_perf_map(void **state)
{
	struct jfx *f = *state;
	static const char *const names[] = { "LazyCompile:*a x.js:1", "LazyCompile:*b x.js:2",
					     "LazyCompile:*c x.js:3", "LazyCompile:*d x.js:4" };
	const struct jt_rec_method *m = NULL;
	struct jt_pipeline_stats st;
	char lines[256];
	size_t i;

	snprintf(lines, sizeof(lines), "%llx 100 %s\n%llx 80 %s\n%llx 40 only_in_map\n",
		 (unsigned long long)at(f, 0x1000), names[0],
		 (unsigned long long)at(f, 0x2000), names[1],
		 (unsigned long long)at(f, 0x4000));
	write_perf_map(f, "w", lines);
	jd_header(&f->d, f->pid, f->t0 - 10 * MS, 0);
	jd_load(&f->d, f->t0 - 5 * MS, f->pid, at(f, 0x1000), 0x100, 1, names[0], 0x100);
	jd_load(&f->d, f->t0 - 5 * MS, f->pid, at(f, 0x2000), 0x80, 2, names[1], 0x80);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, true);
	sample(f, 1 * MS, at(f, 0x1010));
	sample(f, 1 * MS, at(f, 0x2010));
	sample(f, 1 * MS, at(f, 0x4010));
	tick(f, 3 * MS);
	/* c written over a, and d somewhere new: both files say so */
	snprintf(lines, sizeof(lines), "%llx 100 %s\n%llx 40 %s\n",
		 (unsigned long long)at(f, 0x1000), names[2],
		 (unsigned long long)at(f, 0x3000), names[3]);
	write_perf_map(f, "a", lines);
	jd_load(&f->d, f->t0 + 4 * MS, f->pid, at(f, 0x1000), 0x100, 3, names[2], 0x100);
	jd_load(&f->d, f->t0 + 4 * MS, f->pid, at(f, 0x3000), 0x40, 4, names[3], 0x40);
	jfx_write(f, SIZE_MAX);
	tick(f, 4 * MS);
	sample(f, 5000 * MS, at(f, 0x1020));	/* well after the read: spans are real time */
	sample(f, 5000 * MS, at(f, 0x2020));
	sample(f, 5000 * MS, at(f, 0x3020));
	tick(f, 5200 * MS);
	st = stats(f);
	assert_int_equal(st.maps, 1);
	assert_int_equal(st.jitdumps, 0);	/* not read */
	assert_int_equal(st.jitdump_records, 0);
	finish(f);

	assert_int_equal(count_type(f, JT_REC_SAMPLE), 6);
	assert_leaf(f, 0, names[0]);
	assert_leaf(f, 1, names[1]);
	assert_leaf(f, 2, "only_in_map");
	assert_leaf(f, 3, names[2]);
	assert_leaf(f, 4, names[1]);
	assert_leaf(f, 5, names[3]);
	for (i = 0; i < 4; i++) {
		if (defs_named(f, names[i], &m) != 1)
			fail_msg("%s defined %zu times", names[i], defs_named(f, names[i], NULL));
		assert_int_equal(m->src, JT_SRC_PERFMAP);
	}
	assert_int_equal(count_type(f, JT_REC_METHOD), 5);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

/* The lines record of the n-th method defined, or NULL: it must follow the definition. */
static const struct jt_rec_lines *lines_after(const struct jfx *f, const char *name)
{
	size_t i;

	for (i = 0; i + 1 < f->cap.n; i++) {
		const struct jt_rec_method *m = (const void *)f->cap.recs[i];
		const struct jt_rec_lines *l = (const void *)f->cap.recs[i + 1];

		if (m->h.type != JT_REC_METHOD || m->name_len != strlen(name) ||
		    memcmp(m->name, name, m->name_len))
			continue;
		if (l->h.type != JT_REC_LINES)
			return NULL;
		assert_int_equal(l->method, m->id);
		assert_int_equal(l->pid, f->pid);
		return l;
	}
	return NULL;
}

/* The name of file index k in a lines record. */
static const char *line_file(const struct jt_rec_lines *l, uint32_t k)
{
	const char *p = (const char *)(l->lines + l->nr_lines), *end = p + l->names_len;

	while (k--) {
		p += strlen(p) + 1;
		assert_true(p < end);
	}
	return p;
}

/*
 * Debug info before a load gives the method's source lines, right after its definition:
 * sorted by offset, entries before the code left out, "\xff" meaning the file before.
 */
static void debug_info_gives_the_method_its_source_lines(void **state)
{
	struct jfx *f = *state;
	const struct entry e[] = {
		{ at(f, 0x1040), 12, 0, "app.js" }, { at(f, 0x1000), 10, 0, "lib/util.js" },
		{ at(f, 0x1080), 14, 0, "\xff" }, { at(f, 0x0ff0), 9, 0, "before.js" },
	};
	const struct jt_rec_lines *l;

	jd_header(&f->d, f->pid, f->t0, 0);
	jd_debug(&f->d, f->t0 + 1 * MS, at(f, 0x1000), 4, e, 4);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x100, 1, "js:hot", 0x100);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x2000), 0x100, 2, "js:bare", 0x100);
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	sample(f, 2 * MS, at(f, 0x1050));
	sample(f, 2 * MS, at(f, 0x2050));
	tick(f, 10 * MS);
	finish(f);

	l = lines_after(f, "js:hot");
	assert_non_null(l);
	assert_int_equal(l->nr_lines, 3);
	assert_int_equal(l->lines[0].off, 0x00);
	assert_int_equal(l->lines[0].line, 10);
	assert_string_equal(line_file(l, l->lines[0].file), "lib/util.js");
	assert_int_equal(l->lines[1].off, 0x40);
	assert_int_equal(l->lines[1].line, 12);
	assert_string_equal(line_file(l, l->lines[1].file), "app.js");
	assert_int_equal(l->lines[2].off, 0x80);
	assert_int_equal(l->lines[2].line, 14);
	/* "\xff": the file of the entry before it in the record */
	assert_string_equal(line_file(l, l->lines[2].file), "lib/util.js");
	assert_null(lines_after(f, "js:bare"));
	assert_int_equal(count_type(f, JT_REC_LINES), 1);
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

/* A debug-info record larger than one read (64 KiB) is not an error: its lines are kept. */
static void large_debug_info_is_taken_not_counted(void **state)
{
	struct jfx *f = *state;
	struct entry *e = calloc(2000, sizeof(*e));
	const struct jt_rec_lines *l;
	size_t i;

	assert_non_null(e);
	for (i = 0; i < 2000; i++)
		e[i] = (struct entry){ at(f, 0x1000 + i), (uint32_t)(i + 1), 0,
				       "/home/user/src/project/module/SomeVeryLongClassName.java" };
	jd_header(&f->d, f->pid, f->t0, 0);
	jd_debug(&f->d, f->t0 + 1 * MS, at(f, 0x1000), 2000, e, 2000);
	jd_load(&f->d, f->t0 + 1 * MS, f->pid, at(f, 0x1000), 0x1000, 1, "Big.method", 16);
	free(e);
	assert_true(f->d.n > (64u << 10));
	jfx_write(f, SIZE_MAX);
	jfx_map(f);
	jfx_start(f, false);
	sample(f, 2 * MS, at(f, 0x1050));
	tick(f, 10 * MS);
	finish(f);
	assert_leaf(f, 0, "Big.method");
	l = lines_after(f, "Big.method");
	assert_non_null(l);
	assert_int_equal(l->nr_lines, 2000);
	assert_int_equal(l->names_len, strlen(line_file(l, 0)) + 1);	/* one file, once */
	assert_int_equal(drops(f, JT_DROP_JITDUMP), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_fields_are_read),
		cmocka_unit_test(short_header_asks_for_more),
		cmocka_unit_test(byte_swapped_header_is_eproto),
		cmocka_unit_test(bad_magic_or_version_is_einval),
		cmocka_unit_test(header_size_out_of_range_is_einval),
		cmocka_unit_test(code_load_is_parsed),
		cmocka_unit_test(code_load_without_nul_in_the_bytes_given_is_einval),
		cmocka_unit_test(code_move_is_parsed),
		cmocka_unit_test(debug_info_entries_are_walked),
		cmocka_unit_test(debug_info_walk_stops_at_a_truncated_entry),
		cmocka_unit_test(close_unwinding_and_unknown_records_are_sized_not_read),
		cmocka_unit_test(record_size_out_of_range_is_zero),
		cmocka_unit_test(code_address_wrap_is_rejected),
#define T(fn) cmocka_unit_test_setup_teardown(fn, jfx_setup, jfx_teardown)
		T(samples_are_named_by_the_method_live_at_their_time),
		T(code_move_moves_the_name_to_the_new_address),
		T(code_written_over_old_code_names_each_side_of_the_switch),
		T(records_appended_later_are_read_at_the_next_tick),
		T(half_written_record_waits_until_it_is_complete),
		T(code_load_larger_than_a_read_is_taken),
		T(record_size_under_its_header_stops_the_file),
		T(record_size_over_the_limit_stops_the_file),
		T(arch_timestamp_file_is_refused_and_counted),
		T(other_byte_order_file_is_refused_and_counted),
		T(record_far_ahead_of_now_is_refused_and_counted),
		T(record_cut_short_by_its_writer_is_said_and_counted),
		T(record_unfinished_in_a_file_still_open_waits),
		T(unannounced_file_of_another_pid_is_left_alone),
		T(perfmap_and_jitdump_of_the_same_code_name_from_the_perf_map),
		T(debug_info_gives_the_method_its_source_lines),
		T(large_debug_info_is_taken_not_counted),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
