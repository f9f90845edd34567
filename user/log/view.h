/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a log has defined so far, for the commands that read logs (each through the log
 * source, log/source.h, which feeds it): methods, symbols, modules and processes by id, and a
 * printable name and kind for every frame. Feed it each record in file order; the log's
 * promise that every definition precedes its references means a frame can be named as
 * soon as it is read.
 */
#ifndef JT_LOGVIEW_H
#define JT_LOGVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
 * Take in one record: definitions (method, symbol, module, proc, exec, thread) and source
 * lines are kept, other records are ignored. A lines record whose method is not defined (or
 * is another process's), or whose names run past its size, is ignored; a method's new
 * definition forgets its lines. Returns 0 or -ENOMEM (reported).
 */
int jt_lv__add(struct jt_lv *lv, const struct jt_rec_hdr *rec);

/*
 * A frame's name and kind. The name is either kept by lv (valid until jt_lv__free) or, for
 * a frame named by file+offset or address, formatted into buf (cap >= 64 bytes; longer
 * file names are cut). Never NULL: a frame is never dropped.
 *   JIT method           its name                 "Hot.spin(int)"
 *   ELF / kernel symbol  the symbol               "JavaCalls::call_helper", "do_syscall_64"
 *   file + offset        base name + offset       "libjvm.so+0x5e1234"
 *   a kernel mapping     its name                 "[uprobes-trampoline]", "[vdso]"
 *   anonymous code       its mapping's name       "[java jit]", "[anon exec]"
 *   a cut stack's end    "[truncated]"
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
/* The latest name of thread tid (JT_REC_THREAD), NUL-terminated, or NULL if none was said. */
const char *jt_lv__thread(const struct jt_lv *lv, uint32_t tid);

/*
 * Source lines (JT_REC_LINES, from a jitdump's debug info, or JT_REC_INLINE's scopes): kept
 * only for the methods that have them. Files are numbered once over the whole log; their names are as the log has
 * them (a traced process chose them: escape them for text, as for a terminal or XML).
 */
bool jt_lv__has_lines(const struct jt_lv *lv);	/* any method has had lines */
bool jt_lv__method_has_lines(const struct jt_lv *lv, uint64_t id);
/*
 * The source line of byte off of method id: the entry with the greatest offset at or below
 * off (binary search), if off is inside the method. false when it has no lines there (off
 * before its first entry or past its end, an entry naming no file or line 0).
 */
bool jt_lv__line(const struct jt_lv *lv, uint64_t id, uint64_t off, uint32_t *file,
		 uint32_t *line);
/*
 * The same for a frame (false unless it is a method's). A caller's frame holds a return
 * address, just after its call: caller looks up the byte before it, the call's own line.
 * A method with inlined scopes gives its innermost scope's line there.
 */
bool jt_lv__frame_line(const struct jt_lv *lv, const struct jt_frame *f, bool caller,
		       uint32_t *file, uint32_t *line);
/*
 * Inlined scopes (JT_REC_INLINE, from a runtime's agent): the chain of methods whose code
 * byte off of method id is, innermost first, the method itself last, at most max into out.
 * Returns how many, 0 when the method has none there. A chain of one is the method alone
 * (its line).
 */
#define JT_LV_DEPTH_MAX JT_INLINE_DEPTH_MAX
#define JT_LV_INLINED "_[i]"	/* how views mark an inlined frame, as async-profiler does */

struct jt_lv_scope {
	const char *name;	/* the method's, kept by lv; NUL-terminated */
	uint32_t file;		/* for jt_lv__file */
	uint32_t line;		/* 0: not known */
};

unsigned int jt_lv__scopes(const struct jt_lv *lv, uint64_t id, uint64_t off,
			   struct jt_lv_scope *out, unsigned int max);
/*
 * Whether views expand the inlined scopes of smp's frames: real stacks (255 frames at most)
 * always; a crafted record of thousands of frames not, so that 64 scopes a frame cannot
 * make it millions of nodes.
 */
#define JT_LV_EXPAND_FRAMES 512
static inline bool jt_lv__expands(const struct jt_rec_sample *smp)
{
	return smp->nr_frames <= JT_LV_EXPAND_FRAMES;
}

/* Whether a frame's name is an inlined scope's, as jt_lv__inlined_name made it. */
static inline bool jt_lv__is_inlined(const char *name, size_t len)
{
	size_t n = sizeof(JT_LV_INLINED) - 1;

	return len >= n && !memcmp(name + len - n, JT_LV_INLINED, n);
}

/* An inlined scope's name as views show it: name JT_LV_INLINED into buf (cut to cap). */
const char *jt_lv__inlined_name(const char *name, char *buf, size_t cap);
/* The same for a frame (0 unless it is a method's); a caller's, as jt_lv__frame_line. */
unsigned int jt_lv__frame_scopes(const struct jt_lv *lv, const struct jt_frame *f, bool caller,
				 struct jt_lv_scope *out, unsigned int max);
/*
 * A frame's own line, given its n scopes sc (jt_lv__frame_scopes): with inlined ones, its
 * outermost scope's (where its own code calls or runs the inlined piece); else its line as
 * jt_lv__frame_line gives it. false when not known.
 */
bool jt_lv__own_line(const struct jt_lv *lv, const struct jt_frame *f, bool caller,
		     const struct jt_lv_scope *sc, unsigned int n, uint32_t *file, uint32_t *line);
/* The name of file number file (from jt_lv__line), "?" if there is none such. */
const char *jt_lv__file(const struct jt_lv *lv, uint32_t file);
/* The lowest line of method id's code in file, 0 if none. */
uint32_t jt_lv__first_line(const struct jt_lv *lv, uint64_t id, uint32_t file);
/*
 * The index of the sample's first user frame, where the process ran (frames before it are
 * the kernel's); each later frame is a caller. nr_frames when all are the kernel's.
 */
unsigned int jt_lv__user_leaf(const struct jt_lv *lv, const struct jt_rec_sample *smp);

/* "jit", "native", "kernel", "unknown" */
const char *jt_lv__kind_name(enum jt_lv_kind kind);

#endif
