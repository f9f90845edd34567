// SPDX-License-Identifier: GPL-2.0
/*
 * The HotSpot reader (user/host/hotspot.h) over a crafted memory image: vmStructs tables
 * laid out as libjvm.so lays them (entries of pointers to names, offsets, a NULL end),
 * describing objects at offsets unlike any real JVM's, so that only what the tables say can
 * find them: a code heap with its segment map, blobs of each kind, a Method with its
 * ConstMethod, ConstantPool, holder Klass and Symbols; then stacks stepped through
 * compiled and interpreted frames, and values that cannot be, each ending with a reason.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/hotspot.h"

#define BASE 0x100000ULL
#define SIZE (64u << 10)

/* The target's memory: one region; a read that leaves it fails as /proc/PID/mem would. */
struct img {
	uint8_t b[SIZE];
	size_t used;
	unsigned long reads;
};

static int img_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct img *m = ctx;

	m->reads++;
	if (addr < BASE || addr - BASE > SIZE || len > SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, m->b + (addr - BASE), len);
	return 0;
}

static uint64_t img_alloc(struct img *m, size_t len, size_t align)
{
	uint64_t at = (m->used + align - 1) & ~(align - 1);

	assert_true(at + len <= SIZE);
	m->used = at + len;
	return BASE + at;
}

static void *at(struct img *m, uint64_t addr)
{
	return m->b + (addr - BASE);
}

static void w64(struct img *m, uint64_t addr, uint64_t v)
{
	memcpy(at(m, addr), &v, 8);
}

static void w32(struct img *m, uint64_t addr, uint32_t v)
{
	memcpy(at(m, addr), &v, 4);
}

static void w16(struct img *m, uint64_t addr, uint16_t v)
{
	memcpy(at(m, addr), &v, 2);
}

static uint64_t str(struct img *m, const char *s)
{
	uint64_t a = img_alloc(m, strlen(s) + 1, 1);

	memcpy(at(m, a), s, strlen(s) + 1);
	return a;
}

/* A HotSpot Symbol: u2 length at 4, bytes at 6 (this image's layout). */
static uint64_t symbol(struct img *m, const char *s)
{
	uint64_t a = img_alloc(m, 6 + strlen(s), 8);

	w16(m, a + 4, strlen(s));
	memcpy(at(m, a + 6), s, strlen(s));
	return a;
}

/* Layouts of the image's JVM; entries of the tables say each of these. */
enum {
	BLOB_NAME = 8, BLOB_SIZE = 16, BLOB_COMPLETE = 20 /* int16_t */, BLOB_FRAME = 24,
	BLOB_CODE_OFF = 28, BLOB_DATA_OFF = 32, NM_METHOD = 40,
	VS_LOW_B = 0, VS_HIGH_B = 8, VS_LOW = 16, VS_HIGH = 24,
	HEAP_MEMORY = 16, HEAP_SEGMAP = 64, HEAP_LOG2 = 112,
	GA_LEN = 0, GA_DATA = 8, HB_SIZE = 16, HBH_USED = 8,
	M_CONST = 8, CM_CONSTANTS = 8, CM_NAME_INDEX = 34, CM_SIG_INDEX = 36, CP_SIZE = 64,
	CP_HOLDER = 24,
	CP_LENGTH = 16, K_NAME = 16,
	LOG2 = 6, SEGS = 16,
};

struct fld {
	const char *type, *field, *ctype;
	int is_static;
	uint64_t off;
};

struct world {
	struct img m;
	uint64_t syms[JT_HS_SYM_NR];
	uint64_t code;		/* the heap's code memory, SEGS segments */
	uint64_t segmap;
	uint64_t method, method2, cmethod2;
	uint64_t cp;
	char why[256];
};

/* The tables, an entry per field; omit: a field left out, to see what the reader says. */
static void tables(struct world *w, uint64_t heaps_var, const char *omit)
{
	const struct fld f[] = {
		{ "CodeBlob", "_name", "const char*", 0, BLOB_NAME },
		{ "CodeBlob", "_size", "int", 0, BLOB_SIZE },
		{ "CodeBlob", "_frame_complete_offset", "int16_t", 0, BLOB_COMPLETE },
		{ "CodeBlob", "_frame_size", "int", 0, BLOB_FRAME },
		{ "CodeBlob", "_code_offset", "int", 0, BLOB_CODE_OFF },
		{ "CodeBlob", "_data_offset", "int", 0, BLOB_DATA_OFF },
		{ "nmethod", "_method", "Method*", 0, NM_METHOD },
		{ "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, heaps_var },
		{ "CodeHeap", "_memory", "VirtualSpace", 0, HEAP_MEMORY },
		{ "CodeHeap", "_segmap", "VirtualSpace", 0, HEAP_SEGMAP },
		{ "CodeHeap", "_log2_segment_size", "int", 0, HEAP_LOG2 },
		{ "VirtualSpace", "_low_boundary", "char*", 0, VS_LOW_B },
		{ "VirtualSpace", "_high_boundary", "char*", 0, VS_HIGH_B },
		{ "VirtualSpace", "_low", "char*", 0, VS_LOW },
		{ "VirtualSpace", "_high", "char*", 0, VS_HIGH },
		{ "GrowableArrayBase", "_len", "int", 0, GA_LEN },
		{ "GrowableArray<int>", "_data", "int*", 0, GA_DATA },
		{ "HeapBlock::Header", "_used", "bool", 0, HBH_USED },
		{ "Method", "_constMethod", "ConstMethod*", 0, M_CONST },
		{ "ConstMethod", "_constants", "ConstantPool*", 0, CM_CONSTANTS },
		{ "ConstMethod", "_name_index", "u2", 0, CM_NAME_INDEX },
		{ "ConstMethod", "_signature_index", "u2", 0, CM_SIG_INDEX },
		{ "ConstantPool", "_pool_holder", "InstanceKlass*", 0, CP_HOLDER },
		{ "ConstantPool", "_length", "int", 0, CP_LENGTH },
		{ "Klass", "_name", "Symbol*", 0, K_NAME },
		{ "Symbol", "_length", "u2", 0, 4 },
		{ "Symbol", "_body", "u1", 0, 6 },
		{ "Thread", "_unrelated", "int", 0, 1234 },	/* skipped */
	};
	/* VMStructEntry as HotSpot lays it: 3 names, isStatic, offset, address */
	const uint64_t s_type = 0, s_field = 8, s_ctype = 16, s_static = 24, s_off = 32,
		       s_addr = 40, s_stride = 48;
	size_t i, n = sizeof(f) / sizeof(f[0]);
	uint64_t t, e, vars;

	t = img_alloc(&w->m, (n + 1) * s_stride, 8);
	for (i = 0, e = t; i < n; i++) {
		char name[128];

		snprintf(name, sizeof(name), "%s::%s", f[i].type, f[i].field);
		if (omit && !strcmp(omit, name))
			continue;
		w64(&w->m, e + s_type, str(&w->m, f[i].type));
		w64(&w->m, e + s_field, str(&w->m, f[i].field));
		w64(&w->m, e + s_ctype, str(&w->m, f[i].ctype));
		w32(&w->m, e + s_static, f[i].is_static);
		w64(&w->m, e + (f[i].is_static ? s_addr : s_off), f[i].off);
		e += s_stride;
	}
	/* the end: an entry of NULL names (calloc'd image) */

	/* VMTypeEntry: name, superclass, 3 ints, size at 32; stride 40 */
	uint64_t types = img_alloc(&w->m, 3 * 40, 8);

	w64(&w->m, types, str(&w->m, "HeapBlock"));
	w64(&w->m, types + 32, HB_SIZE);
	w64(&w->m, types + 40, str(&w->m, "ConstantPool"));
	w64(&w->m, types + 40 + 32, CP_SIZE);

	/* VMIntConstantEntry: name, int value; stride 16 */
	uint64_t ints = img_alloc(&w->m, 3 * 16, 8);

	w64(&w->m, ints, str(&w->m, "frame::interpreter_frame_sender_sp_offset"));
	w32(&w->m, ints + 8, (uint32_t)-1);
	w64(&w->m, ints + 16, str(&w->m, "frame::interpreter_frame_last_sp_offset"));
	w32(&w->m, ints + 24, (uint32_t)-2);

	const uint64_t v[JT_HS_SYM_NR] = {
		[JT_HS_STRUCTS] = t, [JT_HS_STRUCT_TYPE] = s_type, [JT_HS_STRUCT_FIELD] = s_field,
		[JT_HS_STRUCT_TYPESTRING] = s_ctype, [JT_HS_STRUCT_STATIC] = s_static,
		[JT_HS_STRUCT_OFFSET] = s_off, [JT_HS_STRUCT_ADDRESS] = s_addr,
		[JT_HS_STRUCT_STRIDE] = s_stride,
		[JT_HS_TYPES] = types, [JT_HS_TYPE_NAME] = 0, [JT_HS_TYPE_SIZE] = 32,
		[JT_HS_TYPE_STRIDE] = 40,
		[JT_HS_INTS] = ints, [JT_HS_INT_NAME] = 0, [JT_HS_INT_VALUE] = 8,
		[JT_HS_INT_STRIDE] = 16,
	};
	/* each exported variable is a uint64_t (a pointer for the tables) in the image */
	vars = img_alloc(&w->m, 8 * JT_HS_SYM_NR, 8);
	for (i = 0; i < JT_HS_SYM_NR; i++) {
		w->syms[i] = vars + 8 * i;
		w64(&w->m, w->syms[i], v[i]);
	}
}

/* A blob in the block at segment seg of nseg segments; returns the blob's address. */
static uint64_t blob(struct world *w, unsigned int seg, unsigned int nseg, const char *name,
		     int frame, int16_t complete, uint64_t method)
{
	uint64_t block = w->code + ((uint64_t)seg << LOG2), b = block + HB_SIZE;
	unsigned int i;

	for (i = 0; i < nseg; i++)	/* each segment: how far back its block starts */
		((uint8_t *)at(&w->m, w->segmap))[seg + i] = i;
	*(uint8_t *)at(&w->m, block + HBH_USED) = 1;
	w64(&w->m, b + BLOB_NAME, str(&w->m, name));
	w32(&w->m, b + BLOB_SIZE, (nseg << LOG2) - HB_SIZE);
	w16(&w->m, b + BLOB_COMPLETE, complete);
	/* the next field's bytes after a 2-byte one: a 4-byte read would see them */
	w16(&w->m, b + BLOB_COMPLETE + 2, 0x7777);
	w32(&w->m, b + BLOB_FRAME, frame);
	w32(&w->m, b + BLOB_CODE_OFF, 48);
	w32(&w->m, b + BLOB_DATA_OFF, (nseg << LOG2) - HB_SIZE - 8);
	w64(&w->m, b + NM_METHOD, method);
	return b;
}

/* A Method of class klass (as HotSpot spells it: "pkg/Foo") named name, of signature sig. */
static uint64_t method(struct world *w, const char *klass, const char *name, const char *sig,
		       uint64_t *cmethod)
{
	uint64_t m = img_alloc(&w->m, 16, 8), cm = img_alloc(&w->m, 40, 8);
	uint64_t cp = img_alloc(&w->m, CP_SIZE + 5 * 8, 8), k = img_alloc(&w->m, 24, 8);

	w64(&w->m, m + M_CONST, cm);
	w64(&w->m, cm + CM_CONSTANTS, cp);
	w16(&w->m, cm + CM_NAME_INDEX, 3);
	w16(&w->m, cm + CM_SIG_INDEX, 4);
	w64(&w->m, cp + CP_HOLDER, k);
	w32(&w->m, cp + CP_LENGTH, 5);
	w64(&w->m, cp + CP_SIZE + 3 * 8, symbol(&w->m, name));
	w64(&w->m, cp + CP_SIZE + 4 * 8, symbol(&w->m, sig));
	w64(&w->m, k + K_NAME, symbol(&w->m, klass));
	if (cmethod)
		*cmethod = cm;
	w->cp = cp;
	return m;
}

/*
 * The world: one code heap of 16 segments of 64 bytes: an nmethod in 0-3, the
 * interpreter in 4-5, free 6-7, a runtime stub in 8-15 whose frame is never complete.
 */
static struct world *world(const char *omit)
{
	struct world *w = calloc(1, sizeof(*w));
	uint64_t heap, arr, data, heaps_var;

	assert_non_null(w);
	w->m.used = 64;	/* no object at the image's first address */
	w->code = img_alloc(&w->m, SEGS << LOG2, 64);
	w->segmap = img_alloc(&w->m, SEGS, 8);
	heap = img_alloc(&w->m, 128, 8);
	w64(&w->m, heap + HEAP_MEMORY + VS_LOW_B, w->code);
	w64(&w->m, heap + HEAP_MEMORY + VS_LOW, w->code);
	w64(&w->m, heap + HEAP_MEMORY + VS_HIGH, w->code + (SEGS << LOG2));
	w64(&w->m, heap + HEAP_MEMORY + VS_HIGH_B, w->code + (SEGS << LOG2));
	w64(&w->m, heap + HEAP_SEGMAP + VS_LOW, w->segmap);
	w32(&w->m, heap + HEAP_LOG2, LOG2);
	data = img_alloc(&w->m, 8, 8);
	w64(&w->m, data, heap);
	arr = img_alloc(&w->m, 16, 8);
	w32(&w->m, arr + GA_LEN, 1);
	w64(&w->m, arr + GA_DATA, data);
	heaps_var = img_alloc(&w->m, 8, 8);
	w64(&w->m, heaps_var, arr);
	tables(w, heaps_var, omit);

	w->method = method(w, "pkg/sub/Foo", "bar", "(IJ)V", NULL);
	w->method2 = method(w, "pkg/Other", "baz", "([Ljava/lang/String;)I", &w->cmethod2);
	blob(w, 0, 4, "nmethod", 6, 20, w->method);
	blob(w, 4, 2, "Interpreter", 0, -1, 0);
	memset((uint8_t *)at(&w->m, w->segmap) + 6, 0xff, 2);
	blob(w, 8, 8, "_new_array_Java", 2, -1, 0);
	return w;
}

static struct jt_hotspot *open_world(struct world *w)
{
	int err = 0;
	struct jt_hotspot *hs = jt_hotspot__open(img_read, &w->m, w->syms, w->why,
						 sizeof(w->why), &err);

	if (!hs)
		fprintf(stderr, "open: %d %s\n", err, w->why);
	assert_non_null(hs);
	return hs;
}

static void blobs_found_by_the_segment_map_with_frame_sizes_and_kinds(void **state)
{
	struct world *w = world(NULL);
	struct jt_hotspot *hs = open_world(w);
	struct jt_hs_code c;
	uint64_t nm = w->code + HB_SIZE;

	(void)state;
	/* any pc in the nmethod's block, past its header, is the nmethod */
	assert_int_equal(jt_hotspot__code(hs, nm + 48 + 5, &c), 0);
	assert_int_equal(c.kind, JT_HS_NMETHOD);
	assert_int_equal(c.blob, nm);
	assert_int_equal(c.begin, nm + 48);
	assert_int_equal(c.end, nm + (4 << LOG2) - HB_SIZE - 8);
	assert_int_equal(c.frame_size, 6);
	assert_int_equal(c.frame_complete, 20);
	assert_int_equal(c.method, w->method);
	assert_string_equal(c.name, "nmethod");
	assert_int_equal(jt_hotspot__code(hs, w->code + (3 << LOG2) + 63, &c), 0);
	assert_int_equal(c.blob, nm);

	assert_int_equal(jt_hotspot__code(hs, w->code + (5 << LOG2), &c), 0);
	assert_int_equal(c.kind, JT_HS_INTERPRETER);
	assert_int_equal(c.method, 0);

	/* an int16_t -1 read as the 2 bytes it is, not with its neighbour's */
	assert_int_equal(jt_hotspot__code(hs, w->code + (15 << LOG2), &c), 0);
	assert_int_equal(c.kind, JT_HS_STUB);
	assert_int_equal(c.frame_complete, -1);
	assert_int_equal(c.frame_size, 2);
	assert_string_equal(c.name, "_new_array_Java");

	/* free segments, a block's header, outside every heap */
	assert_int_equal(jt_hotspot__code(hs, w->code + (6 << LOG2) + 8, &c), -ENOENT);
	assert_int_equal(jt_hotspot__code(hs, w->code + 4, &c), -ENOENT);
	assert_int_equal(jt_hotspot__code(hs, w->code + (SEGS << LOG2), &c), -ENOENT);
	assert_int_equal(jt_hotspot__code(hs, w->code - 1, &c), -ENOENT);
	/* a block freed, its segment map not yet marked: its header says so */
	*(uint8_t *)at(&w->m, w->code + (8 << LOG2) + HBH_USED) = 0;
	assert_int_equal(jt_hotspot__code(hs, w->code + (15 << LOG2), &c), -ENOENT);
	assert_true(jt_hotspot__in_code_cache(hs, w->code));
	assert_false(jt_hotspot__in_code_cache(hs, w->code + (SEGS << LOG2)));
	jt_hotspot__free(hs);
	free(w);
}

static void a_missing_field_is_named(void **state)
{
	struct world *w = world("CodeBlob::_frame_size");
	int err = 0;

	(void)state;
	assert_null(jt_hotspot__open(img_read, &w->m, w->syms, w->why, sizeof(w->why), &err));
	assert_int_equal(err, -EPROTO);
	assert_string_equal(w->why, "vmStructs has no CodeBlob::_frame_size");
	free(w);
}

static void a_table_without_its_end_stops_at_unreadable_memory(void **state)
{
	struct world *w = world(NULL);
	uint64_t table, stride = 48;
	int err = 0;

	(void)state;
	/* a table of one entry repeated to the end of the image, never a NULL name */
	uint64_t name = str(&w->m, "Foo");

	table = img_alloc(&w->m, 0, 64);
	for (uint64_t e = table; e + stride <= BASE + SIZE; e += stride) {
		w64(&w->m, e, name);
		w64(&w->m, e + 8, name);
	}
	w64(&w->m, w->syms[JT_HS_STRUCTS], table);
	assert_null(jt_hotspot__open(img_read, &w->m, w->syms, w->why, sizeof(w->why), &err));
	assert_int_equal(err, -EFAULT);
	assert_non_null(strstr(w->why, "gHotSpotVMStructs: entry"));
	assert_non_null(strstr(w->why, "unreadable"));
	free(w);
}

static void an_implausible_stride_is_refused(void **state)
{
	struct world *w = world(NULL);
	int err = 0;

	(void)state;
	w64(&w->m, w->syms[JT_HS_STRUCT_STRIDE], 1 << 20);
	assert_null(jt_hotspot__open(img_read, &w->m, w->syms, w->why, sizeof(w->why), &err));
	assert_int_equal(err, -EBADMSG);
	assert_string_equal(w->why, "gHotSpotVMStructEntryArrayStride is 1048576");
	free(w);
}

static void a_segment_map_pointing_before_the_heap_ends_the_lookup(void **state)
{
	struct world *w = world(NULL);
	struct jt_hotspot *hs = open_world(w);
	struct jt_hs_code c;

	(void)state;
	/* segment 9 says its block starts 10 segments back: before segment 0 */
	((uint8_t *)at(&w->m, w->segmap))[9] = 10;
	assert_int_equal(jt_hotspot__code(hs, w->code + (9 << LOG2) + 1, &c), -EBADMSG);
	/* a blob whose size is negative */
	w32(&w->m, w->code + HB_SIZE + BLOB_SIZE, (uint32_t)-5);
	assert_int_equal(jt_hotspot__code(hs, w->code + 100, &c), -EBADMSG);
	jt_hotspot__free(hs);
	free(w);
}

static void methods_named_from_holder_and_constant_pool(void **state)
{
	struct world *w = world(NULL);
	struct jt_hotspot *hs = open_world(w);
	char buf[64];

	(void)state;
	assert_int_equal(jt_hotspot__method_name(hs, w->method, buf, sizeof(buf)), 26);
	assert_string_equal(buf, "pkg.sub.Foo.bar(int, long)");
	assert_int_equal(jt_hotspot__method_name(hs, w->method2, buf, sizeof(buf)), 33);
	assert_string_equal(buf, "pkg.Other.baz(java.lang.String[])");
	/* truncated to the buffer, NUL-terminated */
	assert_true(jt_hotspot__method_name(hs, w->method, buf, 8) > 0);
	assert_string_equal(buf, "pkg.sub");
	jt_hotspot__free(hs);
	free(w);
}

static void a_method_reused_for_another_is_named_anew(void **state)
{
	struct world *w = world(NULL);
	struct jt_hotspot *hs = open_world(w);
	char buf[64];
	unsigned long reads;

	(void)state;
	assert_true(jt_hotspot__method_name(hs, w->method, buf, sizeof(buf)) > 0);
	reads = w->m.reads;
	assert_true(jt_hotspot__method_name(hs, w->method, buf, sizeof(buf)) > 0);
	assert_int_equal(w->m.reads - reads, 1);	/* cached: its ConstMethod only */
	/* the same Method's memory now holds method2's ConstMethod */
	w64(&w->m, w->method + M_CONST, w->cmethod2);
	assert_true(jt_hotspot__method_name(hs, w->method, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "pkg.Other.baz(java.lang.String[])");
	jt_hotspot__free(hs);
	free(w);
}

static void bad_names_are_refused(void **state)
{
	struct world *w = world(NULL);
	struct jt_hotspot *hs = open_world(w);
	uint64_t cm, cp, sym;
	char buf[64];

	(void)state;
	memcpy(&cm, at(&w->m, w->method + M_CONST), 8);
	memcpy(&cp, at(&w->m, cm + CM_CONSTANTS), 8);
	/* a name index past the constant pool's length */
	w16(&w->m, cm + CM_NAME_INDEX, 5);
	assert_int_equal(jt_hotspot__method_name(hs, w->method, buf, sizeof(buf)), -EBADMSG);
	w16(&w->m, cm + CM_NAME_INDEX, 3);
	/* a name with a control byte */
	memcpy(&sym, at(&w->m, cp + CP_SIZE + 3 * 8), 8);
	*(char *)at(&w->m, sym + 6 + 1) = '\n';
	assert_int_equal(jt_hotspot__method_name(hs, w->method, buf, sizeof(buf)), -EBADMSG);
	/* a Method * that is not a pointer, and one to unreadable memory */
	assert_int_equal(jt_hotspot__method_name(hs, 3, buf, sizeof(buf)), -EBADMSG);
	assert_int_equal(jt_hotspot__method_name(hs, 0x7000000000ULL, buf, sizeof(buf)),
			 -EFAULT);
	jt_hotspot__free(hs);
	free(w);
}

/* A stack copy from BASE + 0x8000: reads outside it fail, as beyond a sample's copy. */
struct stack {
	uint64_t base;
	uint64_t w[64];
};

static int stack_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct stack *s = ctx;

	if (addr < s->base || addr - s->base > sizeof(s->w) ||
	    len > sizeof(s->w) - (addr - s->base))
		return -EFAULT;
	memcpy(buf, (uint8_t *)s->w + (addr - s->base), len);
	return 0;
}

static void frames_stepped_by_size_and_by_the_interpreters_layout(void **state)
{
	struct world *w = world(NULL);
	struct jt_hotspot *hs = open_world(w);
	struct stack s = { .base = BASE + 0x8000 };
	uint64_t nm = w->code + HB_SIZE, interp_pc = w->code + (4 << LOG2) + 100, fp, method;
	struct jt_hs_regs r = { .ip = nm + 48 + 30, .sp = s.base, .bp = 0x1234 };
	struct jt_hs_code c;
	struct jt_cfi_rule rule;
	char name[64];

	(void)state;
	/* compiled: 6 words; below the caller's sp, its return address and the saved rbp */
	fp = s.base + 20 * 8;	/* the interpreted caller's fp */
	s.w[4] = fp;
	s.w[5] = interp_pc;
	/* the interpreted frame: sender sp at fp - 8, method at fp - 24 */
	s.w[20 - 1] = s.base + 30 * 8;
	s.w[20 - 3] = w->method;
	s.w[20] = s.base + 40 * 8;	/* its caller's bp */
	s.w[21] = 0x4000;		/* its caller's ip */

	assert_int_equal(jt_hotspot__code(hs, r.ip, &c), 0);
	/* the same as a rule for a walker of rules */
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, r.ip, true, &rule), 0);
	assert_int_equal(rule.cfa_reg, JT_CFI_SP);
	assert_int_equal(rule.cfa_off, 6 * 8);
	assert_true(rule.bp_saved);
	assert_int_equal(rule.bp_off, -16);
	assert_int_equal(rule.ra_off, -8);
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, nm + 48 + 3, true, &rule), -EAGAIN);
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), 0);
	assert_int_equal(r.sp, s.base + 6 * 8);
	assert_int_equal(r.ip, interp_pc);
	assert_int_equal(r.bp, fp);

	assert_int_equal(jt_hotspot__code(hs, r.ip, &c), 0);
	assert_int_equal(c.kind, JT_HS_INTERPRETER);
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, r.ip, true, &rule), -EOPNOTSUPP);
	assert_int_equal(jt_hotspot__interp_method_slot(hs), -3);
	assert_int_equal(jt_hotspot__interp_method(hs, r.bp, stack_read, &s, &method), 0);
	assert_int_equal(jt_hotspot__frame_name(hs, &c, &r, stack_read, &s, name, sizeof(name)),
			 26);
	assert_string_equal(name, "pkg.sub.Foo.bar(int, long)");
	assert_int_equal(method, w->method);
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), 0);
	assert_int_equal(r.ip, 0x4000);
	assert_int_equal(r.sp, s.base + 30 * 8);
	assert_int_equal(r.bp, s.base + 40 * 8);

	/* a sender sp below the frame's own return address is not one */
	r = (struct jt_hs_regs){ .ip = interp_pc, .sp = s.base, .bp = fp };
	s.w[20 - 1] = fp;
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), -EBADMSG);
	/* fp beyond the copy; a method slot holding no pointer */
	r = (struct jt_hs_regs){ .ip = interp_pc, .sp = s.base, .bp = s.base + 4096 };
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), -EFAULT);
	assert_int_equal(jt_hotspot__interp_method(hs, r.bp, stack_read, &s, &method), -EFAULT);
	s.w[20 - 3] = 12345;
	assert_int_equal(jt_hotspot__interp_method(hs, fp, stack_read, &s, &method), -EBADMSG);

	/* in the nmethod's prologue, and in a stub whose frame is never complete */
	r = (struct jt_hs_regs){ .ip = nm + 48 + 3, .sp = s.base };
	assert_int_equal(jt_hotspot__code(hs, r.ip, &c), 0);
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), -EAGAIN);
	r.ip = w->code + (9 << LOG2);
	assert_int_equal(jt_hotspot__code(hs, r.ip, &c), 0);
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), -EAGAIN);
	/* a caller's frame is built, whatever HotSpot marks: the stub made a call */
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, r.ip, false, &rule), 0);
	assert_int_equal(rule.cfa_off, 2 * 8);
	assert_string_equal(jt_hotspot__strerror(-EAGAIN),
			    "in a prologue: the frame is not built yet");
	assert_true(jt_hotspot__frame_name(hs, &c, &r, stack_read, &s, name, sizeof(name)) > 0);
	assert_string_equal(name, "_new_array_Java");
	/*
	 * a leaf in an epilogue's last instructions (pop rbp; cmp rsp, [r15 + d32]; ja; ret):
	 * the frame is down, sp says where; a caller there (it cannot be) keeps the size
	 */
	static const uint8_t epi[] = { 0x5d, 0x49, 0x3b, 0xa7, 0x00, 0x01, 0x00, 0x00,
				       0x0f, 0x87, 0x10, 0x00, 0x00, 0x00, 0xc3 };
	uint64_t epi_at = nm + 48 + 100;

	memcpy(at(&w->m, epi_at), epi, sizeof(epi));
	assert_int_equal(jt_hotspot__code(hs, epi_at, &c), 0);
	r = (struct jt_hs_regs){ .ip = epi_at, .sp = s.base + 4 * 8, .bp = 77 };
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), 0);
	assert_int_equal(r.ip, interp_pc);	/* s.w[4] = fp, the saved rbp; s.w[5] */
	assert_int_equal(r.sp, s.base + 6 * 8);
	assert_int_equal(r.bp, fp);
	r = (struct jt_hs_regs){ .ip = epi_at + 1, .sp = s.base + 5 * 8, .bp = 77 };
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), 0);
	assert_int_equal(r.ip, interp_pc);
	assert_int_equal(r.sp, s.base + 6 * 8);
	assert_int_equal(r.bp, 77);
	r = (struct jt_hs_regs){ .ip = epi_at + sizeof(epi) - 1, .sp = s.base + 5 * 8,
				 .bp = 77 };
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), 0);
	assert_int_equal(r.sp, s.base + 6 * 8);
	r = (struct jt_hs_regs){ .ip = epi_at + 1, .sp = s.base, .bp = 77 };
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, r.ip, false, &rule), 0);
	assert_int_equal(rule.cfa_off, 6 * 8);
	/* JDK 25's: the poll's displacement in a byte; and a short ja */
	static const uint8_t epi25[] = { 0x5d, 0x49, 0x3b, 0x67, 0x28, 0x77, 0x0e, 0xc3 };

	memcpy(at(&w->m, epi_at), epi25, sizeof(epi25));
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, epi_at, true, &rule), 0);
	assert_int_equal(rule.cfa_off, 16);
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, epi_at + 1, true, &rule), 0);
	assert_int_equal(rule.cfa_off, 8);
	/* not an epilogue: a pop rbp before other code */
	*(uint8_t *)at(&w->m, epi_at + 7) = 0x90;
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, epi_at, true, &rule), 0);
	assert_int_equal(rule.cfa_off, 6 * 8);
	/* a method handle intrinsic: a native nmethod without a frame, its return at sp */
	c.kind = JT_HS_NATIVE;
	c.frame_size = 0;
	r = (struct jt_hs_regs){ .ip = nm + 60, .sp = s.base + 5 * 8, .bp = 77 };
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), 0);
	assert_int_equal(r.ip, interp_pc);
	assert_int_equal(r.sp, s.base + 6 * 8);
	assert_int_equal(r.bp, 77);
	assert_int_equal(jt_hotspot__cfi_rule(hs, &c, nm + 60, true, &rule), 0);
	assert_int_equal(rule.cfa_off, 8);
	assert_false(rule.bp_saved);
	/* code without a fixed frame: the walker follows bp */
	c.kind = JT_HS_STUB;
	c.frame_size = 0;
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), -EOPNOTSUPP);
	/* a frame larger than the copy */
	r = (struct jt_hs_regs){ .ip = nm + 48 + 30, .sp = s.base + 60 * 8 };
	assert_int_equal(jt_hotspot__code(hs, r.ip, &c), 0);
	assert_int_equal(jt_hotspot__step(hs, &c, &r, true, stack_read, &s), -EFAULT);
	jt_hotspot__free(hs);
	free(w);
}

/* The world's code for the unwinder: as jt_hotspot__unwind_code says, else frame pointers. */
struct walk_ctx {
	struct jt_hotspot *hs;
	int err;		/* the last jt_hotspot__unwind_code's */
};

static bool walk_find(void *ctx, uint64_t ip, bool leaf, struct jt_unwind_code *code)
{
	struct walk_ctx *x = ctx;
	struct jt_hs_code c;

	if (!jt_hotspot__in_code_cache(x->hs, ip) || jt_hotspot__code(x->hs, ip, &c))
		return true;
	x->err = jt_hotspot__unwind_code(x->hs, &c, ip, leaf, code);
	return !x->err;
}

/*
 * A copied stack walked by host/unwind.c through HotSpot's frames as the recorder walks a
 * sample: a compiled leaf by its frame size, its interpreted caller by frame pointers and its
 * sender sp (not fp + 16: the caller's frame was extended), whose bp, given back, holds its
 * method; a leaf in a prologue ends the walk at once.
 */
static void a_copied_stack_walks_compiled_and_interpreted_frames(void **state)
{
	struct world *w = world(NULL);
	struct walk_ctx x = { .hs = open_world(w) };
	struct stack s = { .base = BASE + 0x8000 };
	uint64_t nm = w->code + HB_SIZE, interp_pc = w->code + (4 << LOG2) + 100;
	uint64_t fp = s.base + 20 * 8, ips[8], bps[8], method;
	struct jt_unwind_regs r = { .ip = nm + 48 + 30, .sp = s.base, .bp = 0x1234 };
	struct jt_unwind_code code = { 0 };
	struct jt_hs_code c;
	enum jt_unwind_end end;
	unsigned int n;

	(void)state;
	s.w[4] = fp;			/* the compiled frame's saved rbp, */
	s.w[5] = interp_pc;		/* its return address: 6 words */
	s.w[20 - 1] = s.base + 30 * 8;	/* the sender sp */
	s.w[20 - 3] = w->method;
	s.w[20] = s.base + 40 * 8;	/* its caller's bp, by frame pointers: the end */
	s.w[21] = 0x4000;
	n = jt_unwind(&r, s.w, s.base, sizeof(s.w), walk_find, &x, ips, bps, 8, &end);
	assert_int_equal(end, JT_UNWIND_OUTERMOST);
	assert_int_equal(n, 3);
	assert_memory_equal(ips, ((uint64_t[]){ nm + 48 + 30, interp_pc, 0x4000 }), 24);
	assert_int_equal(r.sp, s.base + 30 * 8);
	assert_int_equal(r.bp, s.base + 40 * 8);
	assert_int_equal(bps[1], fp);
	assert_int_equal(jt_hotspot__interp_method(x.hs, bps[1], stack_read, &s, &method), 0);
	assert_int_equal(method, w->method);

	/* in the prologue: no step that could be right, the walk ends with the leaf */
	r = (struct jt_unwind_regs){ .ip = nm + 48 + 3, .sp = s.base, .bp = 0x1234 };
	n = jt_unwind(&r, s.w, s.base, sizeof(s.w), walk_find, &x, ips, bps, 8, &end);
	assert_int_equal(end, JT_UNWIND_LOST);
	assert_int_equal(n, 1);
	assert_int_equal(x.err, -EAGAIN);
	/* a stub without a frame size: frame pointers, no rule, no sender sp */
	assert_int_equal(jt_hotspot__code(x.hs, nm + 48 + 30, &c), 0);
	c.kind = JT_HS_STUB;
	c.frame_size = 0;
	assert_int_equal(jt_hotspot__unwind_code(x.hs, &c, nm + 48 + 30, true, &code), 0);
	assert_false(code.has_rule);
	assert_false(code.sender_sp);
	jt_hotspot__free(x.hs);
	free(w);
}

/*
 * Memory that is not what the tables say: random bytes of a world changed, then every call
 * made. None may crash (the sanitizer build checks reads), loop, or read without bound.
 */
static void corrupt_memory_ends_every_call_within_bounds(void **state)
{
	unsigned int seed = 1, iter, opened = 0, found = 0, named = 0;

	(void)state;
	for (iter = 0; iter < 3000; iter++) {
		struct world *w = world(NULL);
		struct stack st = { .base = BASE + 0x8000 };
		struct jt_hotspot *hs;
		struct jt_hs_code c;
		char name[128];
		int err, k, n = 1 + rand_r(&seed) % 8;
		uint64_t method;

		for (k = 0; k < n; k++)
			w->m.b[rand_r(&seed) % w->m.used] ^= 1 << (rand_r(&seed) % 8);
		for (k = 0; k < 64; k++)
			st.w[k] = rand_r(&seed) % 2 ? w->code + rand_r(&seed) % (SEGS << LOG2) :
				  st.base + rand_r(&seed) % 512;
		hs = jt_hotspot__open(img_read, &w->m, w->syms, w->why, sizeof(w->why), &err);
		if (!hs) {
			assert_true(err < 0 && w->why[0]);
			free(w);
			continue;
		}
		opened++;
		for (k = 0; k < SEGS * 4; k++) {
			struct jt_hs_regs r = { w->code + k * 16, st.base + 8 * (k % 8),
						st.base + 8 * (k % 60) };
			unsigned long reads = w->m.reads;

			err = jt_hotspot__code(hs, r.ip, &c);
			/* a window of the segment map, the block: a handful of reads */
			assert_true(w->m.reads - reads <= 8);
			if (err)
				continue;
			found++;
			assert_true(c.begin >= c.blob && c.end >= c.begin);
			if (jt_hotspot__frame_name(hs, &c, &r, stack_read, &st, name,
						   sizeof(name)) > 0)
				named++;
			assert_true(w->m.reads - reads <= 40);
			jt_hotspot__step(hs, &c, &r, k % 2, stack_read, &st);
		}
		jt_hotspot__method_name(hs, w->method, name, sizeof(name));
		jt_hotspot__interp_method(hs, st.base + 64, stack_read, &st, &method);
		jt_hotspot__free(hs);
		free(w);
	}
	print_message("3000 corrupted worlds: %u opened, %u lookups found a blob, %u named\n",
		      opened, found, named);
	assert_true(opened > 0 && found > 0 && named > 0);
}

/* root/rel: a directory, or a file holding text. */
static void tree_put(const char *root, const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (!text) {
		assert_int_equal(mkdir(path, 0700), 0);
		return;
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A /proc tree: pid 42 maps no libjvm.so, 43 one that is not ELF, 45 one deleted. */
static void proc_tree(char *root)
{
	assert_non_null(mkdtemp(root));
	tree_put(root, "42", NULL);
	tree_put(root, "42/maps",
		 "55d0c0a00000-55d0c0a01000 r-xp 00000000 08:01 1234 /usr/bin/python3\n");
	tree_put(root, "43", NULL);
	tree_put(root, "43/maps",
		 "7f0000000000-7f0000001000 r-xp 00000000 08:01 99 /lib/server/libjvm.so\n");
	tree_put(root, "43/root", NULL);
	tree_put(root, "43/root/lib", NULL);
	tree_put(root, "43/root/lib/server", NULL);
	tree_put(root, "43/root/lib/server/libjvm.so", "not an ELF file\n");
	tree_put(root, "45", NULL);
	tree_put(root, "45/maps", "7f0000000000-7f0000001000 r-xp 00000000 08:01 99 "
				  "/lib/server/libjvm.so (deleted)\n");
}

static void proc_tree_remove(const char *root)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void processes_without_a_readable_jvm_are_said_once(void **state)
{
	char root[] = "/tmp/jt-hotspot-XXXXXX", why[128];
	struct jt_hotspots set = { .proc_root = root };
	uint64_t t = 1000000000ULL;
	int err = 0, i;

	(void)state;
	proc_tree(root);
	assert_null(jt_hotspot__open_pid(root, 42, why, sizeof(why), &err));
	assert_int_equal(err, -ENOENT);
	assert_string_equal(why, "no libjvm.so mapped");
	assert_null(jt_hotspot__open_pid(root, 44, why, sizeof(why), &err));
	assert_int_equal(err, -ENOENT);

	/* not a JVM: never said */
	assert_null(jt_hotspots__get(&set, 42, t, &err, why, sizeof(why)));
	assert_int_equal(err, -ENOENT);
	assert_string_equal(why, "");
	/* a JVM whose libjvm.so is gone (no map_files in this tree): said, not taken for none */
	assert_null(jt_hotspots__get(&set, 45, t, &err, why, sizeof(why)));
	assert_int_equal(err, -ESTALE);
	assert_non_null(strstr(why, "/45/root/lib/server/libjvm.so (deleted): "));
	/* a JVM that cannot be read: said at its first failure only */
	assert_null(jt_hotspots__get(&set, 43, t, &err, why, sizeof(why)));
	assert_int_equal(err, -ENOEXEC);
	assert_string_equal(why, "libjvm.so: not ELF");
	assert_null(jt_hotspots__get(&set, 43, t + 1000, &err, why, sizeof(why)));
	assert_int_equal(err, -EAGAIN);	/* not tried again so soon */
	assert_string_equal(why, "");
	for (i = 0; i < 20; i++) {	/* tried again later and later, then left */
		t += 30000000000ULL;
		assert_null(jt_hotspots__get(&set, 43, t, &err, why, sizeof(why)));
		assert_int_equal(err, -ENOEXEC);
		assert_string_equal(why, "");
	}
	/* forgotten (its exec): a new process, said again */
	jt_hotspots__forget(&set, 43);
	assert_null(jt_hotspots__get(&set, 43, t, &err, why, sizeof(why)));
	assert_string_equal(why, "libjvm.so: not ELF");
	jt_hotspots__fini(&set);
	proc_tree_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(blobs_found_by_the_segment_map_with_frame_sizes_and_kinds),
		cmocka_unit_test(a_missing_field_is_named),
		cmocka_unit_test(a_table_without_its_end_stops_at_unreadable_memory),
		cmocka_unit_test(an_implausible_stride_is_refused),
		cmocka_unit_test(a_segment_map_pointing_before_the_heap_ends_the_lookup),
		cmocka_unit_test(methods_named_from_holder_and_constant_pool),
		cmocka_unit_test(a_method_reused_for_another_is_named_anew),
		cmocka_unit_test(bad_names_are_refused),
		cmocka_unit_test(frames_stepped_by_size_and_by_the_interpreters_layout),
		cmocka_unit_test(a_copied_stack_walks_compiled_and_interpreted_frames),
		cmocka_unit_test(corrupt_memory_ends_every_call_within_bounds),
		cmocka_unit_test(processes_without_a_readable_jvm_are_said_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
