/* SPDX-License-Identifier: GPL-2.0 */
/* A running HotSpot JVM's own structures, read from outside: code blobs, frames, method names. */
#ifndef JT_HOTSPOT_H
#define JT_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "host/cfi.h"
#include "host/unwind.h"

/*
 * Read len bytes of the target at addr into buf. Returns 0, or -errno (-EFAULT: not all of
 * it is mapped). The target's memory is untrusted: every value read from it is checked.
 */
typedef int (*jt_hotspot_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * The variables libjvm.so exports to describe itself (HotSpot's vmStructs.cpp), by which
 * the reader finds every offset it uses instead of building them in: each is a pointer to
 * a table, or a uint64_t offset or stride into one.
 */
enum jt_hs_sym {
	JT_HS_STRUCTS,		/* VMStructEntry *gHotSpotVMStructs */
	JT_HS_STRUCT_TYPE,	/* offset of typeName in a VMStructEntry */
	JT_HS_STRUCT_FIELD,	/* fieldName */
	JT_HS_STRUCT_TYPESTRING,	/* typeString: the field's C type, for its width */
	JT_HS_STRUCT_STATIC,	/* isStatic (int32_t) */
	JT_HS_STRUCT_OFFSET,	/* offset (uint64_t), of a non-static field */
	JT_HS_STRUCT_ADDRESS,	/* address (void *), of a static field */
	JT_HS_STRUCT_STRIDE,
	JT_HS_TYPES,		/* VMTypeEntry *gHotSpotVMTypes */
	JT_HS_TYPE_NAME,
	JT_HS_TYPE_SIZE,	/* uint64_t */
	JT_HS_TYPE_STRIDE,
	JT_HS_INTS,		/* VMIntConstantEntry *gHotSpotVMIntConstants */
	JT_HS_INT_NAME,
	JT_HS_INT_VALUE,	/* int32_t */
	JT_HS_INT_STRIDE,
	JT_HS_SYM_NR
};

/* The exported names of the variables above, in their order. */
extern const char *const jt_hotspot_sym_names[JT_HS_SYM_NR];

struct jt_hotspot;

/*
 * Read the vmStructs tables through read/ctx, the variables being at syms[] in the target,
 * and the code cache's heaps. Returns NULL with why (len bytes) saying what was missing or
 * implausible (a field by name, a value read) and *err = -errno (-EPROTO: a field or type
 * the reader needs is not in the tables); reports nothing itself: the caller says it once
 * per process.
 */
struct jt_hotspot *jt_hotspot__open(jt_hotspot_read_fn read, void *ctx,
				    const uint64_t syms[JT_HS_SYM_NR], char *why, size_t len,
				    int *err);
/*
 * The same for process pid under proc_root ("/proc"): libjvm.so found in its maps, its
 * symbols read from the file through PROC_ROOT/PID/map_files (a deleted one too), else
 * PROC_ROOT/PID/root (the process's own view, as in a container), its memory through
 * PROC_ROOT/PID/mem. -ENOENT: no libjvm.so mapped (only then); -ESTALE: its file is gone;
 * -ENOEXEC: not ELF; -EPROTO: without the tables or what the reader needs in them.
 */
struct jt_hotspot *jt_hotspot__open_pid(const char *proc_root, uint32_t pid, char *why,
					size_t len, int *err);
void jt_hotspot__free(struct jt_hotspot *hs);

enum jt_hs_kind {
	JT_HS_NMETHOD,		/* compiled Java code */
	JT_HS_NATIVE,		/* a native method's wrapper (an nmethod too) */
	JT_HS_INTERPRETER,	/* the template interpreter: frames laid out around fp */
	JT_HS_STUB,		/* any other blob: runtime stubs, adapters, the call stub */
};

/* A code blob in the code cache, as read at one moment. */
struct jt_hs_code {
	enum jt_hs_kind kind;
	uint64_t blob;		/* the CodeBlob */
	uint64_t begin, end;	/* its instructions */
	uint32_t frame_size;	/* CodeBlob::_frame_size: words from sp to the caller's sp,
				 * return address included; 0 for blobs without a fixed frame */
	int32_t frame_complete;	/* offset from begin where the frame is built (-1: never) */
	uint64_t method;	/* an nmethod's Method *, else 0 */
	char name[64];		/* CodeBlob::_name: "nmethod", "Interpreter", a stub's name */
};

/* Whether pc is inside the code cache's reserved bounds at all (no read). */
bool jt_hotspot__in_code_cache(const struct jt_hotspot *hs, uint64_t pc);
/*
 * The blob holding pc, read now (code replaced at an address is read as it is now: call it
 * at sample time, or when the code is loaded, while the process lives). Returns 0,
 * -ENOENT (not in a code heap, or in free space), -EFAULT (unreadable) or -EBADMSG (a value
 * that cannot be: the target changed under the read or is not what the tables say).
 */
int jt_hotspot__code(struct jt_hotspot *hs, uint64_t pc, struct jt_hs_code *out);
/*
 * The Method * an interpreted frame runs, fp being its frame pointer: the word at
 * fp + interpreter_frame_method_offset words, read through read/ctx (a sample's stack copy,
 * or the process). Returns 0, -EFAULT, or -EBADMSG (not a plausible Method *).
 */
int jt_hotspot__interp_method(const struct jt_hotspot *hs, uint64_t fp, jt_hotspot_read_fn read,
			      void *ctx, uint64_t *method);
/*
 * The name of Method * method into buf (len bytes, cut to fit, NUL-terminated), as the agent
 * and HotSpot's USDT records name it: "pkg.Class.method(int, long[])" (jt_javaname.h), from
 * its ConstMethod's name and signature in its ConstantPool and the pool holder's name.
 * Returns the name's length, -EFAULT or -EBADMSG. Names are cached per Method * and
 * ConstMethod *.
 */
int jt_hotspot__method_name(struct jt_hotspot *hs, uint64_t method, char *buf, size_t len);

/* The interpreter's method slot it uses, in words from fp (vmStructs', else x86-64's -3). */
int jt_hotspot__interp_method_slot(const struct jt_hotspot *hs);

struct jt_hs_regs {
	uint64_t ip, sp, bp;
};

/*
 * One frame up from regs, whose ip is in code (as jt_hotspot__code read it), the stack read
 * through read/ctx (a sample's copy of it, or the process). leaf says ip is where the thread
 * was stopped, else it is a return address (the frame is built: it made a call, so a stub
 * is stepped by its size even where HotSpot marks its frame never complete).
 * - Compiled code and stubs with a frame size: the caller's sp is sp + frame_size words,
 *   below it the return address and the saved rbp (a leaf at an epilogue's end: see
 *   jt_hotspot__cfi_rule); a native nmethod of no frame (a method handle intrinsic): the
 *   return address at sp.
 * - The interpreter, fp = bp: the caller's bp at fp, its ip at fp + 8, its sp the sender sp
 *   HotSpot keeps at fp - 8 (the sp a compiled caller's frame size counts from).
 * Returns 0 with *regs the caller's, -EOPNOTSUPP for code without a fixed frame (a stub
 * built with frame pointers: follow bp), -EAGAIN where the frame is not yet built (a
 * prologue: where the return address is cannot be known), -EFAULT (outside the stack read)
 * or -EBADMSG (a caller's sp not above this frame's).
 */
int jt_hotspot__step(const struct jt_hotspot *hs, const struct jt_hs_code *code,
		     struct jt_hs_regs *regs, bool leaf, jt_hotspot_read_fn read, void *ctx);

/*
 * The same step as an unwind rule (CFA and where the return address and rbp are), for a
 * walker that follows rules: compiled code and stubs past their prologue (CFA = sp + frame
 * size), a method handle intrinsic (CFA = sp + 8), a leaf in the last instructions of an
 * epilogue (its code read from the process: pop rbp, the return poll, ret; CFA = sp + 16
 * or sp + 8). ip and leaf as for jt_hotspot__step. Returns 0, -EAGAIN in a prologue,
 * -EOPNOTSUPP for the interpreter (its caller's sp is the sender sp it keeps at fp - 8, not
 * a CFA a rule can give: a compiled caller's adapter extended it; use jt_hotspot__step) and
 * for stubs without a frame size (frame pointers), -EBADMSG for a size too small to hold
 * both.
 */
int jt_hotspot__cfi_rule(const struct jt_hotspot *hs, const struct jt_hs_code *code,
			 uint64_t ip, bool leaf, struct jt_cfi_rule *rule);

/*
 * How a walker of copied stacks (host/unwind.h) steps code at ip, as jt_hotspot__code read
 * it, into *u: compiled code and stubs past their prologue by their frame size's rule, the
 * interpreter by frame pointers with the caller's sp its sender sp, a stub without a frame
 * size by frame pointers. ip and leaf as for jt_hotspot__step. Returns 0, or -EAGAIN (a
 * prologue) or -EBADMSG (a size that cannot be) where the frame cannot be stepped: the walk
 * ends there.
 */
int jt_hotspot__unwind_code(const struct jt_hotspot *hs, const struct jt_hs_code *code,
			    uint64_t ip, bool leaf, struct jt_unwind_code *u);

/*
 * The name of the frame at regs in code, into buf: an nmethod's method, an interpreted
 * frame's (its Method * read at regs->bp through read/ctx), else the blob's own name
 * ("StubRoutines (1)"). Returns its length or a negative errno as the calls above.
 */
int jt_hotspot__frame_name(struct jt_hotspot *hs, const struct jt_hs_code *code,
			   const struct jt_hs_regs *regs, jt_hotspot_read_fn read, void *ctx,
			   char *buf, size_t len);

/* Why a walk through HotSpot's frames ended, for the errno a call above returned. */
const char *jt_hotspot__strerror(int err);

/*
 * The JVMs of a host, each read once: opened at the first ask for a pid, kept until
 * forgotten (its exit or exec). A process that is not one (no libjvm.so, or a JVM still
 * starting, whose code heaps are not made yet) is asked again 0.1 s, 0.2 s ... later, 8
 * times in all, then left alone. A zeroed struct with proc_root set is an empty set.
 */
struct jt_hotspots {
	const char *proc_root;	/* "/proc" */
	struct jt_hash procs;	/* pid -> its entry */
};

/*
 * The reader of pid's JVM, or NULL with *err (-ENOENT: no libjvm.so mapped; -EAGAIN: not
 * asked again yet; -EPROTO: a JVM whose tables lack what the reader needs; others as
 * open). why (len bytes) is "" but at the first failure of a process that maps libjvm.so,
 * when it says why: the caller reports it, once.
 */
struct jt_hotspot *jt_hotspots__get(struct jt_hotspots *set, uint32_t pid, uint64_t now_ns,
				    int *err, char *why, size_t len);
void jt_hotspots__forget(struct jt_hotspots *set, uint32_t pid);
void jt_hotspots__fini(struct jt_hotspots *set);

#endif
