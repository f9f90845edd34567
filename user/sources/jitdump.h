/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's jitdump format (tools/perf/Documentation/jitdump-specification.txt in the kernel's
 * tree): a header, then records each with its own timestamp. Parsing only: bytes in,
 * checked fields out; the file is untrusted and nothing here trusts a size it gives.
 */
#ifndef JT_JITDUMP_H
#define JT_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JT_JITDUMP_MAGIC 0x4A695444u	/* "JiTD" as the writer's u32 */
#define JT_JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define JT_JITDUMP_HEADER_MIN 40
#define JT_JITDUMP_REC_HDR 16
#define JT_JITDUMP_FLAG_ARCH_TS 1ull	/* timestamps are the CPU's (TSC), not CLOCK_MONOTONIC */
/* a record larger than this cannot be a sane one: the file is not followed further */
#define JT_JITDUMP_REC_MAX (256u << 20)

enum jt_jitdump_type {
	JT_JITDUMP_CODE_LOAD = 0,
	JT_JITDUMP_CODE_MOVE = 1,
	JT_JITDUMP_CODE_DEBUG_INFO = 2,
	JT_JITDUMP_CODE_CLOSE = 3,
	JT_JITDUMP_CODE_UNWINDING_INFO = 4,
};

struct jt_jitdump_header {
	uint32_t version;
	uint32_t size;		/* bytes of header: records start here */
	uint32_t elf_mach;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;
};

/* One debug-info entry: code at addr comes from line of file (name not NUL-terminated). */
struct jt_jitdump_line {
	uint64_t addr;
	uint32_t line;
	uint32_t discrim;
	const char *file;
	size_t file_len;
};

/* One record, its strings pointing into the bytes it was parsed from. */
struct jt_jitdump_rec {
	uint32_t type;		/* enum jt_jitdump_type; others are skipped by callers */
	uint32_t size;		/* bytes of the whole record */
	uint64_t ts;
	uint32_t pid, tid;	/* load, move */
	uint64_t addr;		/* load: code address; move: the new one; debug: the code's */
	uint64_t old_addr;	/* move */
	uint64_t code_size;	/* load, move */
	uint64_t index;		/* load, move: the runtime's unique index of this code */
	const char *name;	/* load: not NUL-terminated */
	size_t name_len;
	uint64_t nr_lines;	/* debug info: entries, walk them with jt_jitdump__line */
	const char *lines;	/* the entries' bytes */
	size_t lines_len;
};

/*
 * Parse a file header from its first len bytes. Returns 0; -EAGAIN if more bytes are
 * needed; -EPROTO for another byte order (a file written on another machine); -EINVAL for
 * anything else that is not a version-1 jitdump header.
 */
int jt_jitdump__header(const void *buf, size_t len, struct jt_jitdump_header *h);
/*
 * The size of the record whose first bytes are at buf (len >= JT_JITDUMP_REC_HDR), or 0
 * if its size cannot be right (smaller than its header, or over JT_JITDUMP_REC_MAX).
 */
uint32_t jt_jitdump__rec_size(const void *buf, size_t len);
/*
 * Parse one record from len bytes at buf: the whole record, or for a code load at least
 * its fixed part and name (the code bytes after it are not needed). Returns 0 or -EINVAL
 * (fields that do not fit its size, a name without its NUL).
 */
int jt_jitdump__rec(const void *buf, size_t len, struct jt_jitdump_rec *r);
/*
 * Take the next debug-info entry from *pos into *l; returns false when none is left or the
 * rest cannot be an entry. Start with *pos = 0.
 */
bool jt_jitdump__line(const struct jt_jitdump_rec *r, size_t *pos, struct jt_jitdump_line *l);

#endif
