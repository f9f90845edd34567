/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a log has defined so far, for the commands that read logs (each through the log
 * source, logsrc.h, which feeds it): methods, symbols, modules and processes by id, and a
 * printable name and kind for every frame. Feed it each record in file order; the log's
 * promise that every definition precedes its references means a frame can be named as
 * soon as it is read.
 */
#ifndef JT_LOGVIEW_H
#define JT_LOGVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "jt_log_format.h"

enum jt_lv_kind {
	JT_LV_JIT,		/* a JIT-compiled method, named by the join */
	JT_LV_NATIVE,		/* code in a mapped file: ELF symbol or file+offset */
	JT_LV_KERNEL,
	JT_LV_UNKNOWN,		/* a user address nothing names, or a broken reference */
};

struct jt_lv_proc {
	uint32_t pid;
	char comm[16];		/* NUL-terminated */
	char *cmdline;		/* NUL-terminated, "" if unknown */
};

struct jt_lv_method {
	uint64_t id;
	uint32_t pid;
	uint64_t start, size;
	char *name;		/* NUL-terminated */
};

struct jt_lv;

struct jt_lv *jt_lv__new(void);
void jt_lv__free(struct jt_lv *lv);

/*
 * Take in one record: definitions (method, symbol, module, proc, exec) are kept, other
 * records are ignored. Returns 0 or -ENOMEM (reported).
 */
int jt_lv__add(struct jt_lv *lv, const struct jt_rec_hdr *rec);

/*
 * A frame's name and kind. The name is either kept by lv (valid until jt_lv__free) or, for
 * a frame named by file+offset or address, formatted into buf (cap >= 64 bytes; longer
 * file names are cut). Never NULL: a frame is never dropped.
 *   JIT method           its name                 "Hot.spin(int)"
 *   ELF / kernel symbol  the symbol               "JavaCalls::call_helper", "do_syscall_64"
 *   file + offset        base name + offset       "libjvm.so+0x5e1234"
 *   bare address         the address              "0x401a2b", "[k] 0xffffffff81a00b2c"
 */
const char *jt_lv__frame(const struct jt_lv *lv, const struct jt_frame *f, char *buf,
			 size_t cap, enum jt_lv_kind *kind);

/*
 * The base name of the file a native frame lies in (a module, or a symbol's module), or
 * NULL. *len (len may be NULL) gets its length as the log has it, which a crafted log may
 * make longer than the string.
 */
const char *jt_lv__frame_file(const struct jt_lv *lv, const struct jt_frame *f, size_t *len);

/* The method with that id, the process with that pid, or NULL. */
const struct jt_lv_method *jt_lv__method(const struct jt_lv *lv, uint64_t id);
const struct jt_lv_proc *jt_lv__proc(const struct jt_lv *lv, uint32_t pid);

/* "jit", "native", "kernel", "unknown" */
const char *jt_lv__kind_name(enum jt_lv_kind kind);

#endif
