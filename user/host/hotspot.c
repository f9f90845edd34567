// SPDX-License-Identifier: GPL-2.0
/*
 * HotSpot's code cache, frames and method names read from outside the JVM. Every offset
 * comes from the tables libjvm.so exports for its own serviceability agent (vmStructs),
 * read once per process; every pointer and count read from the target is bounded before
 * it is followed, since the target's memory is untrusted and changes under the reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/hotspot.h"
#include "base/util.h"
#include "host/procfs.h"
#include "jt_javaname.h"

const char *const jt_hotspot_sym_names[JT_HS_SYM_NR] = {
	[JT_HS_STRUCTS] = "gHotSpotVMStructs",
	[JT_HS_STRUCT_TYPE] = "gHotSpotVMStructEntryTypeNameOffset",
	[JT_HS_STRUCT_FIELD] = "gHotSpotVMStructEntryFieldNameOffset",
	[JT_HS_STRUCT_TYPESTRING] = "gHotSpotVMStructEntryTypeStringOffset",
	[JT_HS_STRUCT_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[JT_HS_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[JT_HS_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[JT_HS_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[JT_HS_TYPES] = "gHotSpotVMTypes",
	[JT_HS_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
	[JT_HS_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
	[JT_HS_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
	[JT_HS_INTS] = "gHotSpotVMIntConstants",
	[JT_HS_INT_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
	[JT_HS_INT_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
	[JT_HS_INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
};

/* The fields the reader uses, by (type, field) as vmStructs names them. */
enum fld {
	F_BLOB_NAME, F_BLOB_SIZE, F_BLOB_FRAME_COMPLETE, F_BLOB_FRAME_SIZE,
	F_BLOB_CODE_BEGIN, F_BLOB_CODE_END,	/* up to JDK 22 */
	F_BLOB_CODE_OFFSET, F_BLOB_DATA_OFFSET,	/* JDK 23 on: offsets from the blob */
	F_CM_METHOD, F_NM_METHOD,		/* CompiledMethod (to JDK 22), nmethod (23 on) */
	F_CC_HEAPS, F_HEAP_MEMORY, F_HEAP_SEGMAP, F_HEAP_LOG2,
	F_VS_LOW, F_VS_HIGH, F_VS_LOW_BOUNDARY, F_VS_HIGH_BOUNDARY,
	F_GA_LEN, F_GA_DATA, F_HBH_USED,
	F_METHOD_CONST, F_CONST_CONSTANTS, F_CONST_NAME_INDEX, F_CONST_SIG_INDEX,
	F_CP_HOLDER, F_CP_LENGTH, F_KLASS_NAME, F_SYM_LENGTH, F_SYM_BODY,
	F_NR
};

#define OPT 1	/* a field some versions lack */
#define INT 2	/* an integer, read by its width */

static const struct {
	const char *type, *field;
	int flags;
} fields[F_NR] = {
	[F_BLOB_NAME] = { "CodeBlob", "_name", 0 },
	[F_BLOB_SIZE] = { "CodeBlob", "_size", INT },
	[F_BLOB_FRAME_COMPLETE] = { "CodeBlob", "_frame_complete_offset", INT },
	[F_BLOB_FRAME_SIZE] = { "CodeBlob", "_frame_size", INT },
	[F_BLOB_CODE_BEGIN] = { "CodeBlob", "_code_begin", OPT },
	[F_BLOB_CODE_END] = { "CodeBlob", "_code_end", OPT },
	[F_BLOB_CODE_OFFSET] = { "CodeBlob", "_code_offset", OPT | INT },
	[F_BLOB_DATA_OFFSET] = { "CodeBlob", "_data_offset", OPT | INT },
	[F_CM_METHOD] = { "CompiledMethod", "_method", OPT },
	[F_NM_METHOD] = { "nmethod", "_method", OPT },
	[F_CC_HEAPS] = { "CodeCache", "_heaps", 0 },
	[F_HEAP_MEMORY] = { "CodeHeap", "_memory", 0 },
	[F_HEAP_SEGMAP] = { "CodeHeap", "_segmap", 0 },
	[F_HEAP_LOG2] = { "CodeHeap", "_log2_segment_size", INT },
	[F_VS_LOW] = { "VirtualSpace", "_low", 0 },
	[F_VS_HIGH] = { "VirtualSpace", "_high", 0 },
	[F_VS_LOW_BOUNDARY] = { "VirtualSpace", "_low_boundary", 0 },
	[F_VS_HIGH_BOUNDARY] = { "VirtualSpace", "_high_boundary", 0 },
	[F_GA_LEN] = { "GrowableArrayBase", "_len", INT },
	[F_GA_DATA] = { "GrowableArray<int>", "_data", 0 },
	[F_HBH_USED] = { "HeapBlock::Header", "_used", OPT | INT },
	[F_METHOD_CONST] = { "Method", "_constMethod", 0 },
	[F_CONST_CONSTANTS] = { "ConstMethod", "_constants", 0 },
	[F_CONST_NAME_INDEX] = { "ConstMethod", "_name_index", INT },
	[F_CONST_SIG_INDEX] = { "ConstMethod", "_signature_index", INT },
	[F_CP_HOLDER] = { "ConstantPool", "_pool_holder", 0 },
	[F_CP_LENGTH] = { "ConstantPool", "_length", INT },
	[F_KLASS_NAME] = { "Klass", "_name", 0 },
	[F_SYM_LENGTH] = { "Symbol", "_length", INT },
	[F_SYM_BODY] = { "Symbol", "_body", 0 },
};

enum typ { T_HEAPBLOCK, T_CONSTANTPOOL, T_NR };
static const char *const types[T_NR] = { "HeapBlock", "ConstantPool" };

/* Where HotSpot keeps an interpreted frame's Method *, in words from fp (frame_x86.hpp). */
#define X86_METHOD_SLOT -3
#define X86_SENDER_SP_SLOT -1

#define MAX_TABLE 100000	/* entries in a vmStructs table: JDK 17 has about 2,000 */
#define MAX_STRIDE 4096
#define MAX_HEAPS 16		/* a segmented code cache has 3 */
#define MAX_HOPS 65536		/* segment map hops for one lookup */
#define MAX_BLOB_HEADER 1024	/* the CodeBlob fields read lie within this many bytes */
#define MAX_FRAME_WORDS (1 << 17)	/* 1 MiB: no Java frame is larger */
#define NAME_CACHE 1024		/* method names kept per process, direct-mapped */
#define SEGMAP_WINDOW 512
#define BLOB_NAMES 64		/* blob names kept by their pointer, direct-mapped */

struct heap {
	uint64_t addr;		/* the CodeHeap */
	uint64_t low, high;	/* its committed code memory, [low, high) */
	uint64_t reserved_high;
	uint64_t segmap;	/* one byte per segment */
	unsigned int log2;
};

struct blob_name {
	uint64_t ptr;
	char name[64];
};

struct name_slot {
	uint64_t method, cmethod;
	char *name;
};

struct jt_hotspot {
	jt_hotspot_read_fn read;
	void *ctx;
	int mem_fd;		/* owned when opened by pid, else -1 */
	int *mem_ctx;		/* read's context then, owned too */
	uint64_t off[F_NR];
	bool has[F_NR];
	int width[F_NR];	/* of integer fields: bytes, negative when signed */
	uint64_t type_size[T_NR];
	int method_slot;	/* of an interpreted frame, in words from fp */
	int sender_slot;	/* the sender's sp, likewise */
	int last_sp_slot;	/* 0 until read */
	uint64_t blob_read;	/* bytes of a CodeBlob header to read */
	struct heap heaps[MAX_HEAPS];
	unsigned int nr_heaps;
	uint64_t cc_low, cc_high;	/* every heap's reserved memory within */
	struct name_slot *names;
	struct blob_name blob_names[BLOB_NAMES];
};

static int rd(const struct jt_hotspot *hs, uint64_t addr, void *buf, size_t len)
{
	if (!addr || addr + len < addr)
		return -EFAULT;
	return hs->read(hs->ctx, addr, buf, len);
}

static int rd_u64(struct jt_hotspot *hs, uint64_t addr, uint64_t *v)
{
	return rd(hs, addr, v, sizeof(*v));
}

/* A user-space pointer of x86-64 (47 bits), aligned to align. */
static bool plausible(uint64_t p, uint64_t align)
{
	return p >= 4096 && p < (1ULL << 47) && !(p & (align - 1));
}

/*
 * A NUL-terminated string of at most len - 1 bytes at addr, read page by page so that a
 * short string at the end of a mapping reads. -EBADMSG: longer than that.
 */
static int rd_str(struct jt_hotspot *hs, uint64_t addr, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len - 1) {
		size_t n = 4096 - ((addr + got) & 4095);
		char *nul;
		int err;

		if (n > len - 1 - got)
			n = len - 1 - got;
		err = rd(hs, addr + got, buf + got, n);
		if (err)
			return err;
		nul = memchr(buf + got, 0, n);
		if (nul)
			return nul - buf;
		got += n;
	}
	buf[len - 1] = 0;
	return -EBADMSG;
}

/* The variables that describe one table: where it is, and its entries' offsets. */
static int rd_desc(struct jt_hotspot *hs, const uint64_t *syms, int first, int nr, uint64_t *v,
		   char *why, size_t len)
{
	int i, err;

	for (i = 0; i < nr; i++) {
		err = rd_u64(hs, syms[first + i], &v[i]);
		if (err) {
			snprintf(why, len, "%s at 0x%llx unreadable",
				 jt_hotspot_sym_names[first + i],
				 (unsigned long long)syms[first + i]);
			return err;
		}
		/* v[0] is the table; the rest offsets into an entry, the last its stride */
		if (i && (v[i] > MAX_STRIDE || (i == nr - 1 && v[i] < 8))) {
			snprintf(why, len, "%s is %llu", jt_hotspot_sym_names[first + i],
				 (unsigned long long)v[i]);
			return -EBADMSG;
		}
	}
	if (!plausible(v[0], 8)) {
		snprintf(why, len, "%s points to 0x%llx", jt_hotspot_sym_names[first],
			 (unsigned long long)v[0]);
		return -EBADMSG;
	}
	return 0;
}

/*
 * Walk one table entry by entry until the entry whose name is NULL, calling fn with the
 * entry's bytes (stride of them) for each. An entry's strings are read by fn as needed.
 */
typedef int (*entry_fn)(struct jt_hotspot *hs, const uint8_t *e, const uint64_t *desc);

static int walk_table(struct jt_hotspot *hs, const uint64_t *desc, int nr, entry_fn fn,
		      const char *table, char *why, size_t len)
{
	uint64_t stride = desc[nr - 1], name_off = desc[1];
	uint8_t e[MAX_STRIDE];
	int i, err;

	if (name_off + 8 > stride) {
		snprintf(why, len, "%s: name at %llu past an entry of %llu bytes", table,
			 (unsigned long long)name_off, (unsigned long long)stride);
		return -EBADMSG;
	}
	for (i = 0; i < MAX_TABLE; i++) {
		uint64_t name;

		err = rd(hs, desc[0] + i * stride, e, stride);
		if (err) {
			snprintf(why, len, "%s: entry %d unreadable", table, i);
			return err;
		}
		memcpy(&name, e + name_off, 8);
		if (!name)
			return 0;
		err = fn(hs, e, desc);
		if (err) {
			snprintf(why, len, "%s: entry %d: %s", table, i,
				 err == -EFAULT ? "a name unreadable" : "offsets past its end");
			return err;
		}
	}
	snprintf(why, len, "%s: no end within %d entries", table, MAX_TABLE);
	return -EBADMSG;
}

static uint64_t entry_u64(const uint8_t *e, uint64_t off)
{
	uint64_t v;

	memcpy(&v, e + off, 8);
	return v;
}

/*
 * The string an entry points to at offset off: 1, or 0 when it is longer than len (no name
 * the reader wants is), or a negative errno.
 */
static int entry_str(struct jt_hotspot *hs, const uint8_t *e, uint64_t off, char *buf,
		     size_t len)
{
	int err = rd_str(hs, entry_u64(e, off), buf, len);

	if (err == -EBADMSG)
		return 0;
	return err < 0 ? err : 1;
}

/*
 * The width of an integer field by its C type as vmStructs spells it (JDK 23 made some
 * int fields int16_t), negative when signed; 0: not an integer type the reader knows.
 */
static int int_width(const char *t)
{
	static const struct {
		const char *name;
		int width;
	} w[] = {
		{ "int", -4 }, { "int32_t", -4 }, { "jint", -4 }, { "uint32_t", 4 }, { "u4", 4 },
		{ "juint", 4 }, { "int16_t", -2 }, { "short", -2 }, { "jshort", -2 }, { "u2", 2 },
		{ "uint16_t", 2 }, { "u1", 1 }, { "uint8_t", 1 }, { "bool", 1 }, { "int8_t", -1 },
		{ "size_t", 8 }, { "uint64_t", 8 }, { "intptr_t", -8 }, { "int64_t", -8 },
	};
	size_t i;

	for (i = 0; i < JT_ARRAY_SIZE(w); i++)
		if (!strcmp(t, w[i].name))
			return w[i].width;
	return 0;
}

/* desc: table, typeName, fieldName, typeString, isStatic, offset, address, stride */
static int on_struct(struct jt_hotspot *hs, const uint8_t *e, const uint64_t *desc)
{
	char type[64], field[64], ctype[64];
	int i, err;
	int32_t is_static;

	err = entry_str(hs, e, desc[1], type, sizeof(type));
	if (err <= 0)
		return err;
	for (i = 0; i < F_NR; i++)
		if (!strcmp(type, fields[i].type))
			break;
	if (i == F_NR)
		return 0;
	if (desc[2] + 8 > desc[7] || desc[3] + 8 > desc[7] || desc[4] + 4 > desc[7] ||
	    desc[5] + 8 > desc[7] || desc[6] + 8 > desc[7])
		return -EBADMSG;
	err = entry_str(hs, e, desc[2], field, sizeof(field));
	if (err <= 0)
		return err;
	memcpy(&is_static, e + desc[4], 4);
	for (; i < F_NR; i++) {
		if (strcmp(type, fields[i].type) || strcmp(field, fields[i].field))
			continue;
		ctype[0] = 0;
		if (entry_u64(e, desc[3])) {
			err = entry_str(hs, e, desc[3], ctype, sizeof(ctype));
			if (err < 0)
				return err;
		}
		hs->off[i] = entry_u64(e, is_static ? desc[6] : desc[5]);
		hs->width[i] = int_width(ctype);
		hs->has[i] = true;
	}
	return 0;
}

/* desc: table, typeName, size, stride */
static int on_type(struct jt_hotspot *hs, const uint8_t *e, const uint64_t *desc)
{
	char name[64];
	int i, err;

	if (desc[2] + 8 > desc[3])
		return -EBADMSG;
	err = entry_str(hs, e, desc[1], name, sizeof(name));
	if (err <= 0)
		return err;
	for (i = 0; i < T_NR; i++)
		if (!strcmp(name, types[i]))
			hs->type_size[i] = entry_u64(e, desc[2]);
	return 0;
}

/* desc: table, name, value, stride */
static int on_int(struct jt_hotspot *hs, const uint8_t *e, const uint64_t *desc)
{
	char name[80];
	int32_t v;
	int err;

	if (desc[2] + 4 > desc[3])
		return -EBADMSG;
	err = entry_str(hs, e, desc[1], name, sizeof(name));
	if (err <= 0)
		return err;
	memcpy(&v, e + desc[2], 4);
	/*
	 * x86-64 exports the slots next to the method's, not its own (frame_x86.hpp:
	 * sender sp, then last sp, then the method, each a word further down)
	 */
	if (!strcmp(name, "frame::interpreter_frame_sender_sp_offset"))
		hs->sender_slot = v;
	else if (!strcmp(name, "frame::interpreter_frame_last_sp_offset"))
		hs->last_sp_slot = v;
	return 0;
}

/* Integer field f at b (bytes already read) by its width and sign. */
static int64_t int_at(const uint8_t *p, int w)
{
	uint64_t v = 0;
	int n = w < 0 ? -w : w;

	memcpy(&v, p, n);	/* little-endian: the low bytes */
	if (w < 0 && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ULL << (8 * n);
	return (int64_t)v;
}

static int64_t get_int(const struct jt_hotspot *hs, const uint8_t *b, enum fld f)
{
	return int_at(b + hs->off[f], hs->width[f]);
}

/* Integer field f of the object at base, read from the target. */
static int rd_int(struct jt_hotspot *hs, uint64_t base, enum fld f, int64_t *v)
{
	uint8_t b[8];
	int w = hs->width[f], err;

	err = rd(hs, base + hs->off[f], b, w < 0 ? -w : w);
	if (err)
		return err;
	*v = int_at(b, w);
	return 0;
}

static int read_heaps(struct jt_hotspot *hs, char *why, size_t len)
{
	uint64_t arr, data;
	int64_t n;
	unsigned int i;
	int err;

	err = rd_u64(hs, hs->off[F_CC_HEAPS], &arr);
	if (!err)
		err = rd_int(hs, arr, F_GA_LEN, &n);
	if (!err)
		err = rd_u64(hs, arr + hs->off[F_GA_DATA], &data);
	if (err) {
		snprintf(why, len, "CodeCache::_heaps at 0x%llx unreadable",
			 (unsigned long long)hs->off[F_CC_HEAPS]);
		return err;
	}
	if (n <= 0 || n > MAX_HEAPS) {
		snprintf(why, len, "CodeCache::_heaps holds %lld heaps", (long long)n);
		return -EBADMSG;
	}
	hs->cc_low = UINT64_MAX;
	for (i = 0; i < (unsigned int)n; i++) {
		struct heap *h = &hs->heaps[i];
		uint64_t mem, seg;
		int64_t log2;

		err = rd_u64(hs, data + 8 * i, &h->addr);
		mem = h->addr + hs->off[F_HEAP_MEMORY];
		seg = h->addr + hs->off[F_HEAP_SEGMAP];
		if (!err)
			err = rd_u64(hs, mem + hs->off[F_VS_LOW_BOUNDARY], &h->low);
		if (!err)
			err = rd_u64(hs, mem + hs->off[F_VS_HIGH], &h->high);
		if (!err)
			err = rd_u64(hs, mem + hs->off[F_VS_HIGH_BOUNDARY], &h->reserved_high);
		if (!err)
			err = rd_u64(hs, seg + hs->off[F_VS_LOW], &h->segmap);
		if (!err)
			err = rd_int(hs, h->addr, F_HEAP_LOG2, &log2);
		if (err) {
			snprintf(why, len, "code heap %u at 0x%llx unreadable", i,
				 (unsigned long long)h->addr);
			return err;
		}
		if (log2 < 4 || log2 > 16 || !plausible(h->low, 8) || h->high < h->low ||
		    h->reserved_high < h->high || !plausible(h->segmap, 1)) {
			snprintf(why, len, "code heap %u: memory 0x%llx-0x%llx, segments of 2^%lld",
				 i, (unsigned long long)h->low, (unsigned long long)h->high,
				 (long long)log2);
			return -EBADMSG;
		}
		h->log2 = log2;
		if (h->low < hs->cc_low)
			hs->cc_low = h->low;
		if (h->reserved_high > hs->cc_high)
			hs->cc_high = h->reserved_high;
	}
	hs->nr_heaps = n;
	return 0;
}

static int check_layout(struct jt_hotspot *hs, char *why, size_t len)
{
	int i;

	for (i = 0; i < F_NR; i++) {
		if (!hs->has[i] && !(fields[i].flags & OPT)) {
			snprintf(why, len, "vmStructs has no %s::%s", fields[i].type,
				 fields[i].field);
			return -EPROTO;
		}
		if (hs->has[i] && (fields[i].flags & INT) && !hs->width[i]) {
			snprintf(why, len, "%s::%s is of a type the reader does not know",
				 fields[i].type, fields[i].field);
			return -EPROTO;
		}
	}
	if (!(hs->has[F_BLOB_CODE_BEGIN] && hs->has[F_BLOB_CODE_END]) &&
	    !(hs->has[F_BLOB_CODE_OFFSET] && hs->has[F_BLOB_DATA_OFFSET])) {
		snprintf(why, len, "vmStructs has neither CodeBlob::_code_begin nor _code_offset");
		return -EPROTO;
	}
	if (!hs->has[F_CM_METHOD] && !hs->has[F_NM_METHOD]) {
		snprintf(why, len, "vmStructs has no nmethod's _method");
		return -EPROTO;
	}
	for (i = 0; i < T_NR; i++)
		if (!hs->type_size[i] || hs->type_size[i] > MAX_STRIDE) {
			snprintf(why, len, "vmTypes gives %s a size of %llu", types[i],
				 (unsigned long long)hs->type_size[i]);
			return -EPROTO;
		}
	if (hs->has[F_HBH_USED] &&
	    hs->off[F_HBH_USED] + abs(hs->width[F_HBH_USED]) > hs->type_size[T_HEAPBLOCK]) {
		snprintf(why, len, "HeapBlock::Header::_used at %llu of a %llu-byte HeapBlock",
			 (unsigned long long)hs->off[F_HBH_USED],
			 (unsigned long long)hs->type_size[T_HEAPBLOCK]);
		return -EBADMSG;
	}
	for (i = F_BLOB_NAME; i <= F_NM_METHOD; i++)
		if (hs->has[i] && hs->off[i] + 8 > MAX_BLOB_HEADER) {
			snprintf(why, len, "%s::%s at offset %llu", fields[i].type,
				 fields[i].field, (unsigned long long)hs->off[i]);
			return -EBADMSG;
		}
		else if (hs->has[i] && hs->off[i] + 8 > hs->blob_read)
			hs->blob_read = hs->off[i] + 8;
	if (hs->method_slot > -1 || hs->method_slot < -32 || hs->sender_slot > -1 ||
	    hs->sender_slot < -32) {
		snprintf(why, len, "interpreter's method and sender sp at fp%+d, fp%+d words",
			 hs->method_slot, hs->sender_slot);
		return -EBADMSG;
	}
	return 0;
}

struct jt_hotspot *jt_hotspot__open(jt_hotspot_read_fn read, void *ctx,
				    const uint64_t syms[JT_HS_SYM_NR], char *why, size_t len,
				    int *err)
{
	struct jt_hotspot *hs = calloc(1, sizeof(*hs));
	uint64_t sd[8], td[4], id[4];
	int e;

	if (!hs) {
		snprintf(why, len, "out of memory");
		*err = -ENOMEM;
		return NULL;
	}
	hs->read = read;
	hs->ctx = ctx;
	hs->mem_fd = -1;
	hs->sender_slot = X86_SENDER_SP_SLOT;
	e = rd_desc(hs, syms, JT_HS_STRUCTS, 8, sd, why, len);
	if (!e)
		e = rd_desc(hs, syms, JT_HS_TYPES, 4, td, why, len);
	if (!e)
		e = rd_desc(hs, syms, JT_HS_INTS, 4, id, why, len);
	if (!e)
		e = walk_table(hs, sd, 8, on_struct, "gHotSpotVMStructs", why, len);
	if (!e)
		e = walk_table(hs, td, 4, on_type, "gHotSpotVMTypes", why, len);
	if (!e)
		e = walk_table(hs, id, 4, on_int, "gHotSpotVMIntConstants", why, len);
	if (!e) {
		if (hs->last_sp_slot)
			hs->method_slot = hs->last_sp_slot - 1;
		else
			hs->method_slot = hs->sender_slot + (X86_METHOD_SLOT - X86_SENDER_SP_SLOT);
		e = check_layout(hs, why, len);
	}
	if (!e)
		e = read_heaps(hs, why, len);
	if (!e) {
		hs->names = calloc(NAME_CACHE, sizeof(*hs->names));
		if (!hs->names) {
			snprintf(why, len, "out of memory");
			e = -ENOMEM;
		}
	}
	if (e) {
		*err = e;
		free(hs);
		return NULL;
	}
	return hs;
}

void jt_hotspot__free(struct jt_hotspot *hs)
{
	size_t i;

	if (!hs)
		return;
	for (i = 0; hs->names && i < NAME_CACHE; i++)
		free(hs->names[i].name);
	free(hs->names);
	if (hs->mem_fd >= 0)
		close(hs->mem_fd);
	free(hs->mem_ctx);
	free(hs);
}

int jt_hotspot__interp_method_slot(const struct jt_hotspot *hs)
{
	return hs->method_slot;
}

bool jt_hotspot__in_code_cache(const struct jt_hotspot *hs, uint64_t pc)
{
	return pc >= hs->cc_low && pc < hs->cc_high;
}

/*
 * The first segment of the block holding segment idx: each byte of the segment map says
 * how many segments back to step (0: a block's first; 0xff: free), read a window at a time.
 */
static int block_start(struct jt_hotspot *hs, const struct heap *h, uint64_t idx, uint64_t *out)
{
	uint8_t win[SEGMAP_WINDOW];
	uint64_t win_lo = 1, win_hi = 0;	/* empty */
	unsigned int hops;
	int err;

	for (hops = 0; hops < MAX_HOPS; hops++) {
		uint8_t b;

		if (idx < win_lo || idx > win_hi) {
			win_hi = idx;
			win_lo = idx >= SEGMAP_WINDOW - 1 ? idx - (SEGMAP_WINDOW - 1) : 0;
			err = rd(hs, h->segmap + win_lo, win, win_hi - win_lo + 1);
			if (err)
				return err;
		}
		b = win[idx - win_lo];
		if (b == 0xff)
			return -ENOENT;
		if (!b) {
			*out = idx;
			return 0;
		}
		if (b > idx)
			return -EBADMSG;
		idx -= b;
	}
	return -EBADMSG;
}

static uint64_t blob_u64(const uint8_t *b, uint64_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/*
 * A blob's name by its pointer: blobs point to string literals of libjvm.so ("nmethod",
 * each stub's), so a name read once saves a read for every later lookup of its kind.
 */
static int blob_name(struct jt_hotspot *hs, uint64_t ptr, char *name, size_t len)
{
	struct blob_name *slot = &hs->blob_names[(ptr >> 3) % BLOB_NAMES];
	int err;

	if (slot->ptr != ptr) {
		err = rd_str(hs, ptr, slot->name, sizeof(slot->name));
		if (err < 0) {
			slot->ptr = 0;
			return err == -EFAULT ? err : -EBADMSG;
		}
		slot->ptr = ptr;
	}
	snprintf(name, len, "%s", slot->name);
	return 0;
}

/* The blob in the block at block, holding pc: the block's header and the blob's, one read. */
static int read_blob(struct jt_hotspot *hs, uint64_t block, uint64_t pc, struct jt_hs_code *out)
{
	uint64_t hb = hs->type_size[T_HEAPBLOCK], blob = block + hb;
	uint8_t buf[MAX_STRIDE + MAX_BLOB_HEADER], *b = buf + hb;
	int64_t size, frame, complete;
	uint64_t begin, end;
	int err;

	err = rd(hs, block, buf, hb + hs->blob_read);
	if (err)
		return err;
	if (hs->has[F_HBH_USED] && !get_int(hs, buf, F_HBH_USED))
		return -ENOENT;	/* a free block the segment map has not caught up with */
	size = get_int(hs, b, F_BLOB_SIZE);
	frame = get_int(hs, b, F_BLOB_FRAME_SIZE);
	complete = get_int(hs, b, F_BLOB_FRAME_COMPLETE);
	if (size <= 0 || size > INT32_MAX || frame < 0 || frame > MAX_FRAME_WORDS ||
	    complete < -1 || complete > size)
		return -EBADMSG;
	if (pc < blob || pc >= blob + size)
		return -ENOENT;	/* in a block's header, or its slack after the blob */
	if (hs->has[F_BLOB_CODE_BEGIN]) {
		begin = blob_u64(b, hs->off[F_BLOB_CODE_BEGIN]);
		end = blob_u64(b, hs->off[F_BLOB_CODE_END]);
	} else {
		int64_t co = get_int(hs, b, F_BLOB_CODE_OFFSET);
		int64_t dof = get_int(hs, b, F_BLOB_DATA_OFFSET);

		if (co < 0 || dof < co)
			return -EBADMSG;
		begin = blob + co;
		end = blob + dof;
	}
	if (begin < blob || end < begin || end > blob + size)
		return -EBADMSG;
	*out = (struct jt_hs_code){ .blob = blob, .begin = begin, .end = end,
				    .frame_size = frame, .frame_complete = complete };
	err = blob_name(hs, blob_u64(b, hs->off[F_BLOB_NAME]), out->name, sizeof(out->name));
	if (err)
		return err;
	if (!strcmp(out->name, "Interpreter"))
		out->kind = JT_HS_INTERPRETER;
	else if (!strcmp(out->name, "nmethod"))
		out->kind = JT_HS_NMETHOD;
	else if (!strcmp(out->name, "native nmethod"))
		out->kind = JT_HS_NATIVE;
	else
		out->kind = JT_HS_STUB;
	if (out->kind == JT_HS_NMETHOD || out->kind == JT_HS_NATIVE)
		out->method = blob_u64(b, hs->off[hs->has[F_NM_METHOD] ? F_NM_METHOD :
						  F_CM_METHOD]);
	return 0;
}

int jt_hotspot__code(struct jt_hotspot *hs, uint64_t pc, struct jt_hs_code *out)
{
	unsigned int i;

	for (i = 0; i < hs->nr_heaps; i++) {
		struct heap *h = &hs->heaps[i];
		uint64_t idx;
		int err;

		if (pc < h->low || pc >= h->reserved_high)
			continue;
		if (pc >= h->high) {	/* the heap grew since it was read */
			uint64_t high;

			err = rd_u64(hs, h->addr + hs->off[F_HEAP_MEMORY] + hs->off[F_VS_HIGH],
				     &high);
			if (err)
				return err;
			if (high < h->low || high > h->reserved_high)
				return -EBADMSG;
			h->high = high;
			if (pc >= high)
				return -ENOENT;
		}
		err = block_start(hs, h, (pc - h->low) >> h->log2, &idx);
		if (err)
			return err;
		return read_blob(hs, h->low + (idx << h->log2), pc, out);
	}
	return -ENOENT;
}

int jt_hotspot__interp_method(const struct jt_hotspot *hs, uint64_t fp, jt_hotspot_read_fn read,
			      void *ctx, uint64_t *method)
{
	int err;

	if (!plausible(fp, 8))
		return -EBADMSG;
	err = read(ctx, fp + (int64_t)hs->method_slot * 8, method, 8);
	if (err)
		return err;
	return plausible(*method, 8) ? 0 : -EBADMSG;
}

/*
 * Whether code's frame is built at ip: a caller's always is; a leaf's once past the offset
 * HotSpot marks (never, for blobs it marks none: HotSpot's own walks refuse those too).
 */
static bool frame_built(const struct jt_hs_code *code, uint64_t ip, bool leaf)
{
	return !leaf ||
	       (code->frame_complete >= 0 && ip >= code->begin + code->frame_complete);
}

/*
 * Whether the instructions at ip are an epilogue's last ones, after the frame was taken
 * down: [pop rbp], [the return poll: cmp rsp, [r15 + d]; ja], ret. These are what HotSpot's
 * compilers emit on x86-64 (C1 and C2 alike, seen in JDK 17's and 25's code); the size no
 * longer applies there.
 * *rbp_at_sp: the pop is still to come (the saved rbp at sp, the return address above it).
 */
static bool in_epilogue(const uint8_t *b, size_t n, bool *rbp_at_sp)
{
	size_t i = 0;

	*rbp_at_sp = n > 0 && b[0] == 0x5d;	/* pop rbp */
	i += *rbp_at_sp;
	if (i + 7 <= n && b[i] == 0x49 && b[i + 1] == 0x3b && b[i + 2] == 0xa7)
		i += 7;				/* cmp rsp, [r15 + d32] (JDK 17) */
	else if (i + 4 <= n && b[i] == 0x49 && b[i + 1] == 0x3b && b[i + 2] == 0x67)
		i += 4;				/* cmp rsp, [r15 + d8] (JDK 25) */
	if (i + 6 <= n && b[i] == 0x0f && b[i + 1] == 0x87)
		i += 6;				/* ja rel32 */
	else if (i + 2 <= n && b[i] == 0x77)
		i += 2;				/* ja rel8 */
	return i < n && b[i] == 0xc3;		/* ret */
}

int jt_hotspot__cfi_rule(const struct jt_hotspot *hs, const struct jt_hs_code *code,
			 uint64_t ip, bool leaf, struct jt_cfi_rule *rule)
{
	size_t n = code->end > ip && code->end - ip < 16 ? code->end - ip : 16;
	uint8_t b[16];
	bool rbp_at_sp;

	if (code->kind == JT_HS_INTERPRETER)
		return -EOPNOTSUPP;
	if (code->kind == JT_HS_NATIVE && !code->frame_size) {
		*rule = (struct jt_cfi_rule){ .cfa_reg = JT_CFI_SP, .cfa_off = 8, .ra_off = -8 };
		return 0;
	}
	if (!code->frame_size)
		return -EOPNOTSUPP;
	/* a leaf's code, read now: where the frame is already taken down, sp says where */
	if (leaf && ip >= code->begin && ip < code->end && !rd(hs, ip, b, n) &&
	    in_epilogue(b, n, &rbp_at_sp)) {
		*rule = (struct jt_cfi_rule){ .cfa_reg = JT_CFI_SP, .cfa_off = rbp_at_sp ? 16 : 8,
					      .bp_saved = rbp_at_sp, .bp_off = -16,
					      .ra_off = -8 };
		return 0;
	}
	if (!frame_built(code, ip, leaf))
		return -EAGAIN;
	if (code->frame_size < 2)
		return -EBADMSG;
	/* the return address, then the saved rbp, just below the caller's sp */
	*rule = (struct jt_cfi_rule){ .cfa_reg = JT_CFI_SP, .cfa_off = code->frame_size * 8,
				      .bp_saved = true, .bp_off = -16, .ra_off = -8 };
	return 0;
}

int jt_hotspot__unwind_code(const struct jt_hotspot *hs, const struct jt_hs_code *code,
			    uint64_t ip, bool leaf, struct jt_unwind_code *u)
{
	int err;

	if (code->kind == JT_HS_INTERPRETER) {
		u->sender_sp = true;
		u->sender_sp_off = hs->sender_slot * 8;
		return 0;
	}
	err = jt_hotspot__cfi_rule(hs, code, ip, leaf, &u->rule);
	u->has_rule = !err;
	return err == -EOPNOTSUPP ? 0 : err;	/* no frame size: frame pointers */
}

int jt_hotspot__step(const struct jt_hotspot *hs, const struct jt_hs_code *code,
		     struct jt_hs_regs *regs, bool leaf, jt_hotspot_read_fn read, void *ctx)
{
	struct jt_cfi_rule rule;
	uint64_t w[2], sp, ra, bp = regs->bp;
	int err;

	if (code->kind == JT_HS_INTERPRETER) {
		uint64_t fp = regs->bp;

		if (fp < regs->sp || !plausible(fp, 8))
			return -EBADMSG;
		/* fp - 8: the sender sp; fp: the caller's bp; fp + 8: the return address */
		err = read(ctx, fp + (int64_t)hs->sender_slot * 8, &sp, 8);
		if (!err)
			err = read(ctx, fp, w, 16);
		if (err)
			return err;
		if (sp < fp + 16)	/* below the return address: not a sender's sp */
			return -EBADMSG;
		*regs = (struct jt_hs_regs){ .ip = w[1], .sp = sp, .bp = w[0] };
		return 0;
	}
	err = jt_hotspot__cfi_rule(hs, code, regs->ip, leaf, &rule);
	if (err)
		return err;
	sp = regs->sp + rule.cfa_off;
	if (sp < regs->sp)
		return -EBADMSG;
	err = read(ctx, sp + rule.ra_off, &ra, 8);
	if (!err && rule.bp_saved)
		err = read(ctx, sp + rule.bp_off, &bp, 8);
	if (err)
		return err;
	*regs = (struct jt_hs_regs){ .ip = ra, .sp = sp, .bp = bp };
	return 0;
}

/* Symbol sym's bytes, as HotSpot spells them ("pkg/Foo", "(IJ)V"); control bytes are no name. */
static int rd_symbol(struct jt_hotspot *hs, uint64_t sym, char *buf, size_t len)
{
	int64_t n;
	size_t i;
	int err;

	if (!plausible(sym, 1))
		return -EBADMSG;
	err = rd_int(hs, sym, F_SYM_LENGTH, &n);
	if (err)
		return err;
	if (n <= 0 || n > 65535)
		return -EBADMSG;
	if ((size_t)n > len - 1)
		n = len - 1;
	err = rd(hs, sym + hs->off[F_SYM_BODY], buf, n);
	if (err)
		return err;
	for (i = 0; i < (size_t)n; i++)
		if ((unsigned char)buf[i] < 0x20)
			return -EBADMSG;
	buf[n] = 0;
	return n;
}

/* A symbol of the constant pool cp by index (checked against its length). */
static int rd_cp_symbol(struct jt_hotspot *hs, uint64_t cp, int64_t index, uint64_t *sym)
{
	int64_t cp_len;
	int err;

	err = rd_int(hs, cp, F_CP_LENGTH, &cp_len);
	if (err)
		return err;
	if (index <= 0 || index >= cp_len)
		return -EBADMSG;
	return rd_u64(hs, cp + hs->type_size[T_CONSTANTPOOL] + (uint64_t)index * 8, sym);
}

/*
 * The method of ConstMethod cmethod named as the agent and HotSpot's USDT records name it
 * (jt_javaname.h), so that one method has one name whichever source saw it.
 */
static int build_name(struct jt_hotspot *hs, uint64_t cmethod, char *buf, size_t len)
{
	char klass[512], meth[256], sig[512];
	uint64_t cp, holder, klass_sym, name_sym, sig_sym;
	int64_t name_index, sig_index;
	int kn, mn, sn, err;

	err = rd_u64(hs, cmethod + hs->off[F_CONST_CONSTANTS], &cp);
	if (!err && !plausible(cp, 8))
		err = -EBADMSG;
	if (!err)
		err = rd_int(hs, cmethod, F_CONST_NAME_INDEX, &name_index);
	if (!err)
		err = rd_int(hs, cmethod, F_CONST_SIG_INDEX, &sig_index);
	if (!err)
		err = rd_u64(hs, cp + hs->off[F_CP_HOLDER], &holder);
	if (!err && !plausible(holder, 8))
		err = -EBADMSG;
	if (!err)
		err = rd_u64(hs, holder + hs->off[F_KLASS_NAME], &klass_sym);
	if (!err)
		err = rd_cp_symbol(hs, cp, name_index, &name_sym);
	if (!err)
		err = rd_cp_symbol(hs, cp, sig_index, &sig_sym);
	if (err)
		return err;
	kn = rd_symbol(hs, klass_sym, klass, sizeof(klass));
	if (kn < 0)
		return kn;
	mn = rd_symbol(hs, name_sym, meth, sizeof(meth));
	if (mn < 0)
		return mn;
	sn = rd_symbol(hs, sig_sym, sig, sizeof(sig));
	if (sn < 0)
		return sn;
	return jt_java_name(buf, len, klass, kn, meth, mn, sig, sn);
}

int jt_hotspot__method_name(struct jt_hotspot *hs, uint64_t method, char *buf, size_t len)
{
	struct name_slot *slot = &hs->names[(method >> 3) % NAME_CACHE];
	uint64_t cmethod;
	char name[512];
	int n, err;

	if (!len)
		return -EINVAL;
	if (!plausible(method, 8))
		return -EBADMSG;
	/* a freed Method's memory may hold another: its ConstMethod tells them apart */
	err = rd_u64(hs, method + hs->off[F_METHOD_CONST], &cmethod);
	if (err)
		return err;
	if (!plausible(cmethod, 8))
		return -EBADMSG;
	if (slot->name && slot->method == method && slot->cmethod == cmethod)
		return snprintf(buf, len, "%s", slot->name);
	n = build_name(hs, cmethod, name, sizeof(name));
	if (n < 0)
		return n;
	free(slot->name);
	*slot = (struct name_slot){ method, cmethod, strdup(name) };
	if (!slot->name)
		return -ENOMEM;
	return snprintf(buf, len, "%s", name);
}

/* Reading a live process: /proc/PID/mem, at any address, one pread each. */
static int read_mem_fd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	int fd = *(int *)ctx;
	ssize_t n;

	if (addr > INT64_MAX - len)
		return -EFAULT;
	n = pread(fd, buf, len, addr);
	if (n < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The exported symbols' addresses in the process: libjvm.so's load bias added to each. */
static int find_syms(int fd, uint64_t map_start, uint64_t map_pgoff, uint64_t syms[JT_HS_SYM_NR],
		     char *why, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint64_t bias = 0;
	bool have_bias = false;
	size_t i, n, found = 0;
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(why, len, "libjvm.so: not ELF");
		elf_end(elf);
		return -ENOEXEC;
	}
	if (elf_getphdrnum(elf, &n))
		n = 0;
	for (i = 0; i < n; i++) {	/* the segment mapped executable at map_start */
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if ((ph.p_offset & ~4095ULL) == map_pgoff) {
			bias = map_start - (ph.p_vaddr & ~4095ULL);
			have_bias = true;
			break;
		}
	}
	while (have_bias && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			int k;

			if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || strncmp(name, "gHotSpotVM", 10))
				continue;
			for (k = 0; k < JT_HS_SYM_NR; k++)
				if (!syms[k] && !strcmp(name, jt_hotspot_sym_names[k])) {
					syms[k] = bias + sym.st_value;
					found++;
				}
		}
	}
	elf_end(elf);
	if (!have_bias) {
		snprintf(why, len, "libjvm.so: no executable segment at file offset 0x%llx",
			 (unsigned long long)map_pgoff);
		err = -ENOEXEC;
	} else if (found < JT_HS_SYM_NR) {
		for (i = 0; i < JT_HS_SYM_NR && syms[i]; i++)
			;
		snprintf(why, len, "libjvm.so exports no %s", jt_hotspot_sym_names[i]);
		err = -EPROTO;
	} else {
		err = 0;
	}
	return err;
}

/* libjvm.so, or what was: a JDK upgraded under a running JVM leaves it " (deleted)". */
static bool is_libjvm(const char *path)
{
	const char *base = strrchr(path, '/');

	return base && (!strcmp(base, "/libjvm.so") || !strcmp(base, "/libjvm.so (deleted)"));
}

/*
 * The file mapped at vma: through map_files (root's way, which reaches a deleted file too),
 * else by its path in the process's own root (as a container sees it).
 */
static int open_mapped(const char *proc_root, uint32_t pid, const struct jt_vma *vma, char *why,
		       size_t len)
{
	char path[4096 + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%u/map_files/%llx-%llx", proc_root, pid,
		 (unsigned long long)vma->start, (unsigned long long)vma->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "%s/%u/root%s", proc_root, pid, vma->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(why, len, "%s: %s", path, strerror(errno));
	/* -ENOENT is for a process without libjvm.so: this one has it, gone */
	return errno == ENOENT ? -ESTALE : -errno;
}

struct jt_hotspot *jt_hotspot__open_pid(const char *proc_root, uint32_t pid, char *why,
					size_t len, int *err)
{
	uint64_t syms[JT_HS_SYM_NR] = { 0 };
	struct jt_vmas vm = { 0 };
	struct jt_hotspot *hs = NULL;
	char path[4096 + 64];
	int fd = -1, mem_fd, *ctx;
	size_t i;

	*err = jt_procfs__read_maps(proc_root, pid, &vm);
	if (*err) {
		snprintf(why, len, "%s/%u/maps: %s", proc_root, pid, strerror(-*err));
		return NULL;
	}
	for (i = 0; i < vm.n && !is_libjvm(vm.v[i].path); i++)
		;
	if (i == vm.n) {
		snprintf(why, len, "no libjvm.so mapped");
		*err = -ENOENT;
		goto out;
	}
	elf_version(EV_CURRENT);
	fd = open_mapped(proc_root, pid, &vm.v[i], why, len);
	if (fd < 0) {
		*err = fd;
		goto out;
	}
	*err = find_syms(fd, vm.v[i].start, vm.v[i].pgoff, syms, why, len);
	if (*err)
		goto out;
	snprintf(path, sizeof(path), "%s/%u/mem", proc_root, pid);
	mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (mem_fd < 0) {
		*err = -errno;
		snprintf(why, len, "%s: %s", path, strerror(errno));
		goto out;
	}
	/* the fd lives in the reader: its context is a pointer to it, set once it exists */
	ctx = malloc(sizeof(*ctx));
	if (!ctx) {
		close(mem_fd);
		*err = -ENOMEM;
		snprintf(why, len, "out of memory");
		goto out;
	}
	*ctx = mem_fd;
	hs = jt_hotspot__open(read_mem_fd, ctx, syms, why, len, err);
	if (!hs) {
		free(ctx);
		close(mem_fd);
		goto out;
	}
	hs->mem_fd = mem_fd;
	hs->mem_ctx = ctx;
out:
	if (fd >= 0)
		close(fd);
	jt_vmas__free(&vm);
	return hs;
}

int jt_hotspot__frame_name(struct jt_hotspot *hs, const struct jt_hs_code *code,
			   const struct jt_hs_regs *regs, jt_hotspot_read_fn read, void *ctx,
			   char *buf, size_t len)
{
	uint64_t method = code->method;
	int err;

	if (!len)
		return -EINVAL;
	if (code->kind == JT_HS_INTERPRETER) {
		err = jt_hotspot__interp_method(hs, regs->bp, read, ctx, &method);
		if (err)
			return err;
	}
	if (method)
		return jt_hotspot__method_name(hs, method, buf, len);
	return snprintf(buf, len, "%s", code->name);
}

const char *jt_hotspot__strerror(int err)
{
	switch (err) {
	case 0:
		return "no error";
	case -ENOENT:
		return "not in HotSpot's code";
	case -EFAULT:
		return "unreadable memory";
	case -EBADMSG:
		return "a value HotSpot cannot have";
	case -EAGAIN:
		return "in a prologue: the frame is not built yet";
	case -EOPNOTSUPP:
		return "code without a fixed frame";
	case -ENOMEM:
		return "out of memory";
	default:
		return "cannot read";
	}
}

#define RETRY_FIRST_NS 100000000ULL	/* 0.1 s: a JVM maps libjvm.so and makes its heaps */
#define RETRIES 8

struct hs_proc {
	struct jt_hotspot *hs;
	uint64_t retry_at;
	unsigned int tries;
	int err;
};

struct jt_hotspot *jt_hotspots__get(struct jt_hotspots *set, uint32_t pid, uint64_t now_ns,
				    int *err, char *why, size_t len)
{
	struct hs_proc *p = jt_hash__get_new(&set->procs, pid, sizeof(*p), NULL);
	char scratch[256];

	if (len)
		why[0] = 0;
	if (!p) {
		*err = -ENOMEM;
		snprintf(why, len, "out of memory");
		return NULL;
	}
	if (p->hs) {
		*err = 0;
		return p->hs;
	}
	if (p->tries && (p->tries >= RETRIES || now_ns < p->retry_at)) {
		*err = p->tries >= RETRIES ? p->err : -EAGAIN;
		return NULL;
	}
	p->hs = jt_hotspot__open_pid(set->proc_root, pid, scratch, sizeof(scratch), &p->err);
	if (p->hs) {
		*err = 0;
		return p->hs;
	}
	/* a JVM that cannot be read is said at its first failure; a process without one never */
	if (!p->tries && p->err != -ENOENT)
		snprintf(why, len, "%s", scratch);
	p->retry_at = now_ns + (RETRY_FIRST_NS << p->tries);
	p->tries++;
	*err = p->err;
	return NULL;
}

void jt_hotspots__forget(struct jt_hotspots *set, uint32_t pid)
{
	struct hs_proc *p = jt_hash__del(&set->procs, pid);

	if (p)
		jt_hotspot__free(p->hs);
	free(p);
}

void jt_hotspots__fini(struct jt_hotspots *set)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&set->procs, &pos, &key, &val)) {
		struct hs_proc *p = val;

		jt_hotspot__free(p->hs);
		free(p);
	}
	jt_hash__fini(&set->procs);
}
