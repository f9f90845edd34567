/* SPDX-License-Identifier: GPL-2.0 */
/* The .jtl log file: header, compressed blocks and typed records (see README, "The log"). */
#ifndef JT_LOG_FORMAT_H
#define JT_LOG_FORMAT_H

#include <linux/types.h>
#include <stddef.h>

/*
 * File layout, all little-endian:
 *   struct jt_log_header                    (uncompressed, JT_LOG_HEADER_SIZE bytes)
 *   { struct jt_log_block, zsize bytes of raw deflate data (zlib, windowBits -15) }*
 * Each block inflates to rawsize bytes holding whole records; no record spans two blocks,
 * so a file cut anywhere reads up to its last whole block.
 *
 * Version 2 numbers the blocks (seq) and says how many records came before each
 * (first_rec), so that a dropped, repeated or reordered block is found and the records
 * it held are counted. A version 1 block header is the first JT_LOG_BLOCK_V1_SIZE bytes of
 * struct jt_log_block; a reader still reads such logs, without the sequence check.
 *
 * Version 3 seals the header: hdr_crc32 is the zlib crc32 of its JT_LOG_HEADER_SIZE bytes
 * with that field 0, so that any change to it after it was written is found (every
 * single-bit one). Its blocks are version 2's. Before version 3 the field was reserved, 0.
 * In every version the reserved bytes are 0, and the records agree with the header: no
 * enter or leave without JT_LOG_F_CALLS, no off-CPU record without JT_LOG_F_OFFCPU and
 * (version 3 on, ncpus known) no sample on a CPU numbered ncpus or more.
 */
#define JT_LOG_MAGIC 0x314c544aU	  /* "JTL1" */
#define JT_LOG_MAGIC_SWAPPED 0x4a544c31U  /* written on a big-endian host */
#define JT_LOG_BLOCK_MAGIC 0x4b42544aU	  /* "JTBK" */
#define JT_LOG_VERSION 3
#define JT_LOG_VERSION_MIN 1	  /* the oldest version a reader reads */
#define JT_LOG_VERSION_SEALED 3	  /* the first whose header carries its crc32 */
#define JT_LOG_HEADER_SIZE 256
#define JT_LOG_BLOCK_MAX (1U << 20)	  /* largest rawsize a reader accepts */
#define JT_LOG_BLOCK_V1_SIZE 16		  /* version 1's block header: no seq, no first_rec */

/* Header fields' ranges: what a reader accepts (record -F allows up to 100000 Hz). */
#define JT_LOG_HZ_MAX 100000
#define JT_LOG_CPUS_MAX 65536		  /* above any kernel's NR_CPUS; 0: not known */

enum jt_log_flags {
	JT_LOG_F_CALLS = 1 << 0,	/* enter/leave were recorded */
	JT_LOG_F_KSTACK = 1 << 1,	/* samples carry kernel frames */
	JT_LOG_F_SYSTEM_WIDE = 1 << 2,
	JT_LOG_F_LATE = 1 << 3,		/* it holds JT_REC_LATE records (set when it is closed) */
	JT_LOG_F_OFFCPU = 1 << 4,	/* off-CPU time was recorded (JT_REC_OFFCPU) */
	JT_LOG_F_ALL = (1 << 5) - 1,	/* a reader refuses other bits */
};

struct jt_log_header {
	__u32 magic;
	__u16 version;
	__u16 header_size;
	__u64 start_ns;		/* CLOCK_MONOTONIC when recording began: dump's time zero */
	__s64 realtime_offset_ns; /* CLOCK_REALTIME minus CLOCK_MONOTONIC at start */
	__u32 ncpus;		/* CPUs configured: every sample's cpu is below it; 0: not known */
	__u32 sample_hz;	/* 0: no sampling */
	__u32 flags;		/* enum jt_log_flags */
	__u32 hdr_crc32;	/* version 3 on (see above); before, reserved: 0 */
	char hostname[64];
	char kernel[64];	/* uname -r */
	__u8 reserved[88];
};

struct jt_log_block {
	__u32 magic;		/* JT_LOG_BLOCK_MAGIC */
	__u32 zsize;		/* compressed bytes that follow */
	__u32 rawsize;		/* bytes after inflating */
	__u32 crc32;		/* zlib crc32 of the inflated bytes */
	/* version 2 on */
	__u64 seq;		/* the block's place in the file: 0, 1, 2, ... */
	__u64 first_rec;	/* records in the blocks before it */
};

enum jt_rec_type {
	JT_REC_METHOD = 1,	/* definition of a method; precedes every reference to it */
	JT_REC_UNLOAD,
	JT_REC_ENTER,
	JT_REC_LEAVE,
	JT_REC_SAMPLE,
	JT_REC_EXEC,
	JT_REC_EXIT,
	JT_REC_DROP,
	JT_REC_PROC,		/* a process's identity; precedes its first sample or method */
	JT_REC_MODULE,		/* a mapped file; precedes every frame that names it */
	JT_REC_END,		/* written last by a clean stop */
	JT_REC_SYMBOL,		/* a native or kernel symbol; precedes every frame that names it */
	JT_REC_LINES,		/* a method's source lines; follows its JT_REC_METHOD */
	JT_REC_LATE,		/* a method named after samples met it; follows its JT_REC_METHOD */
	JT_REC_THREAD,		/* a thread's name; precedes its first sample named so */
	JT_REC_OFFCPU,		/* a thread's time off the CPU, with the stack it left with */
	JT_REC_INLINE,		/* a method's inlined scopes and lines; follows its JT_REC_METHOD */
	JT_REC_CALLS,		/* a run of one thread's enters and leaves, delta-coded */
	JT_REC_CALLSUM,		/* a thread's calls of a method summed (--calls-summary) */
	JT_REC_SPAN,		/* one call, at its leave, with its enter (--calls-min) */
	JT_REC_MAX,
};

/* Every record starts with this; size includes it and is a multiple of 8. */
struct jt_rec_hdr {
	__u16 type;
	__u16 reserved;
	__u32 size;
	__u64 ts;		/* CLOCK_MONOTONIC ns; nondecreasing through the file */
};

struct jt_rec_method {
	struct jt_rec_hdr h;
	__u64 id;		/* unique in the log, from 1 */
	__u64 start;
	__u64 size;
	__u64 load_ts;		/* when the code became live (may precede h.ts) */
	__u64 agent_id;		/* the runtime's own id (agent, USDT), 0 if none */
	__u32 pid;
	__u16 src;		/* enum jt_src */
	__u16 name_len;
	char name[];		/* name_len bytes, no NUL, then zero padding */
};

/* JT_REC_UNLOAD, JT_REC_ENTER, JT_REC_LEAVE */
struct jt_rec_call {
	struct jt_rec_hdr h;
	__u64 id;		/* method id */
	__u32 pid;
	__u32 tid;
};

/*
 * JT_REC_CALLS: enters and leaves of one thread that follow each other in the log, in one
 * record; a reader gives them one by one as JT_REC_ENTER and JT_REC_LEAVE records (a reader
 * older than it skips it). h.ts is the first call's time. Each call is two LEB128 varints:
 * (its ts - the call before's) << 1, | 1 for a leave; then (its id - the call before's id)
 * zigzag-coded; for the first call the one before is h.ts and id 0. len bytes of them,
 * then fewer than 8 zero bytes up to size.
 */
struct jt_rec_calls {
	struct jt_rec_hdr h;
	__u32 pid;
	__u32 tid;
	__u32 count;		/* calls, at least 1 (the writer makes a lone one an enter or leave) */
	__u32 len;		/* bytes of varints after this fixed part */
};

/* Bytes one call takes at most in a JT_REC_CALLS: two varints of 64 bits. */
#define JT_CALLS_CALL_MAX 20

/*
 * JT_REC_CALLSUM: calls of method id by thread tid that left since the last such record of
 * theirs, summed in the traced process; h.ts is when they were read, after every one of
 * them. Times in ns; a recursive method's inclusive time counts its outermost activations.
 */
struct jt_rec_callsum {
	struct jt_rec_hdr h;
	__u64 id;
	__u32 pid;
	__u32 tid;
	__u64 calls;
	__u64 incl_ns;
	__u64 excl_ns;
};

/*
 * JT_REC_SPAN: one call of method id by thread tid that took --calls-min or more, written
 * at its leave (h.ts) so that the log stays in time order: it entered at enter_ts
 * (<= h.ts), and self_ns of it was its own, not its callees'.
 */
struct jt_rec_span {
	struct jt_rec_hdr h;
	__u64 id;
	__u32 pid;
	__u32 tid;
	__u64 enter_ts;
	__u64 self_ns;
};

/*
 * A frame: the top byte of ref says what the rest means.
 *   JT_FRAME_METHOD  ref id = method id,  off = offset into the method
 *   JT_FRAME_MODULE  ref id = module id,  off = offset into the file
 *   JT_FRAME_USER    off = a user address nothing names; ref id 0, or the JT_REC_MODULE
 *                    of the anonymous executable memory it lies in (a runtime's JIT code:
 *                    path "[java jit]", any other process's "[anon exec]"), by which
 *                    views name it
 *   JT_FRAME_KERNEL  off = a kernel address nothing names
 *   JT_FRAME_SYMBOL  ref id = symbol id,  off = offset into the symbol (an ELF symbol of a
 *                    module, or a kernel symbol from /proc/kallsyms)
 *   JT_FRAME_TRUNCATED  the stack was cut here, its outermost frame: what came after it
 *                    looped or made no sense (off = the frames cut), or could not be
 *                    unwound (a rule not followed, the copy of the stack ended: off 0)
 * A frame is never dropped: what cannot be named stays MODULE (file + offset), USER or
 * KERNEL.
 */
enum jt_frame_kind {
	JT_FRAME_METHOD = 1,
	JT_FRAME_MODULE,
	JT_FRAME_USER,
	JT_FRAME_KERNEL,
	JT_FRAME_SYMBOL,
	JT_FRAME_TRUNCATED,
};
#define JT_FRAME_KIND(ref) ((unsigned)((ref) >> 56))
#define JT_FRAME_ID(ref) ((ref) & ((1ULL << 56) - 1))
#define JT_FRAME_REF(kind, id) (((__u64)(kind) << 56) | (id))

struct jt_frame {
	__u64 ref;
	__u64 off;
};

struct jt_rec_sample {
	struct jt_rec_hdr h;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u16 nr_frames;	/* leaf first: kernel frames, then user frames */
	__u16 reserved;
	struct jt_frame frames[];
};

struct jt_rec_exec {
	struct jt_rec_hdr h;
	__u32 pid;
	__u16 path_len;
	__u16 reserved;
	char comm[16];
	char path[];		/* path_len bytes, then zero padding */
};

struct jt_rec_exit {
	struct jt_rec_hdr h;
	__u32 pid;
	__u32 reserved;
};

struct jt_rec_drop {
	struct jt_rec_hdr h;
	__u32 what;		/* enum jt_drop (include/jt_events.h) */
	/*
	 * The thread that lost them (calls_full: its calls region's ring was full), 0: not
	 * said. Reserved and 0 before; readers from before never read it and sum the counts
	 * of every record of a kind, so a kind's total is still what they give.
	 */
	__u32 tid;
	__u64 count;		/* lost since the previous drop record of the same kind and tid:
				 * a kind's records, every tid's, sum to its total */
};

struct jt_rec_proc {
	struct jt_rec_hdr h;
	__u32 pid;
	__u16 cmdline_len;
	__u16 reserved;
	char comm[16];
	char cmdline[];		/* arguments joined by spaces, then zero padding */
};

struct jt_rec_module {
	struct jt_rec_hdr h;
	__u64 id;		/* unique in the log, from 1 */
	__u64 start;		/* mapping as seen in /proc/PID/maps */
	__u64 end;
	__u64 pgoff;
	__u32 pid;
	__u16 path_len;
	__u16 reserved;
	char path[];
};

/*
 * JT_REC_SYMBOL. module is the id of the JT_REC_MODULE the symbol lies in and start is
 * the symbol's offset into that file, so module + start + frame off is the frame's file
 * offset. module 0 is the kernel; start is then the symbol's address.
 */
struct jt_rec_symbol {
	struct jt_rec_hdr h;
	__u64 id;		/* unique in the log, from 1 */
	__u64 module;		/* JT_REC_MODULE id; 0 for the kernel */
	__u64 start;
	__u64 size;		/* 0 if the symbol table gives none */
	__u32 pid;		/* the process the module belongs to; 0 for the kernel */
	__u16 name_len;
	__u16 reserved;
	char name[];		/* name_len bytes, no NUL, then zero padding */
};

/*
 * JT_REC_LINES: where a method's code comes from in its source (a jitdump's debug info),
 * right after the method's definition. nr_lines entries sorted by off: the code from off
 * to the next entry's off (the last: to the method's end) comes from line of the file
 * whose name is the file-th of the names_len bytes of NUL-terminated names that follow the
 * entries. Readers of an older jitrace skip it.
 */
#define JT_LINES_MAX 4096		/* entries a record holds at most */
#define JT_LINES_NAMES_MAX 16384	/* bytes of file names */

struct jt_line {
	__u32 off;		/* from the method's start */
	__u32 line;		/* from 1 */
	__u32 file;		/* index of its file's name, from 0 */
	__u32 reserved;
};

struct jt_rec_lines {
	struct jt_rec_hdr h;
	__u64 method;		/* JT_REC_METHOD id */
	__u32 pid;
	__u16 nr_lines;
	__u16 names_len;
	struct jt_line lines[];	/* then the names, then zero padding */
};

struct jt_rec_end {
	struct jt_rec_hdr h;
	__u64 records;		/* records written before this one */
};

_Static_assert(sizeof(struct jt_log_header) == JT_LOG_HEADER_SIZE, "jt_log_header layout");
_Static_assert(sizeof(struct jt_log_block) == 32, "jt_log_block layout");
_Static_assert(offsetof(struct jt_log_block, seq) == JT_LOG_BLOCK_V1_SIZE, "jt_log_block v1");
_Static_assert(sizeof(struct jt_rec_calls) == 32, "jt_rec_calls layout");
_Static_assert(sizeof(struct jt_rec_hdr) == 16, "jt_rec_hdr layout");
_Static_assert(sizeof(struct jt_rec_method) == 64, "jt_rec_method layout");
_Static_assert(sizeof(struct jt_rec_call) == 32, "jt_rec_call layout");
_Static_assert(sizeof(struct jt_rec_callsum) == 56, "jt_rec_callsum layout");
_Static_assert(sizeof(struct jt_rec_span) == 48, "jt_rec_span layout");
/* readers take the id, pid and tid of these as of a jt_rec_call */
_Static_assert(offsetof(struct jt_rec_callsum, tid) == offsetof(struct jt_rec_call, tid) &&
	       offsetof(struct jt_rec_span, tid) == offsetof(struct jt_rec_call, tid),
	       "jt_rec_callsum, jt_rec_span heads");
_Static_assert(sizeof(struct jt_frame) == 16, "jt_frame layout");
_Static_assert(sizeof(struct jt_rec_sample) == 32, "jt_rec_sample layout");
_Static_assert(sizeof(struct jt_rec_exec) == 40, "jt_rec_exec layout");
_Static_assert(sizeof(struct jt_rec_exit) == 24, "jt_rec_exit layout");
_Static_assert(sizeof(struct jt_rec_drop) == 32, "jt_rec_drop layout");
_Static_assert(sizeof(struct jt_rec_proc) == 40, "jt_rec_proc layout");
_Static_assert(sizeof(struct jt_rec_module) == 56, "jt_rec_module layout");
_Static_assert(sizeof(struct jt_rec_symbol) == 56, "jt_rec_symbol layout");
_Static_assert(sizeof(struct jt_rec_end) == 24, "jt_rec_end layout");
_Static_assert(sizeof(struct jt_line) == 16, "jt_line layout");
_Static_assert(sizeof(struct jt_rec_lines) == 32, "jt_rec_lines layout");

/*
 * JT_REC_LATE: a method named late. Its perf-map line appeared only after samples had met
 * its code unnamed, and nothing else was known at [start, start + size) of pid from
 * from_ts until the line was read (this record's time, included: a sample of that very
 * time may be written before the line). Those samples' bare user frames (JT_FRAME_USER)
 * in that range and time are that method's: a reader names them by it.
 * A writer that writes one sets JT_LOG_F_LATE in the header when it closes the log, so
 * that a reader knows to look ahead for them.
 */
/*
 * JT_REC_THREAD: the name (comm) of thread tid of process pid, written before the first
 * sample of the thread and again whenever the name changes (pthread_setname_np, prctl).
 */
struct jt_rec_thread {
	struct jt_rec_hdr h;
	__u32 pid;
	__u32 tid;
	char comm[16];		/* NUL-padded; 16 bytes without a NUL are all name */
};

struct jt_rec_late {
	struct jt_rec_hdr h;
	__u64 method;		/* JT_REC_METHOD id */
	__u64 start;
	__u64 size;
	__u64 from_ts;
	__u32 pid;
	__u32 reserved;
};

/*
 * JT_REC_OFFCPU: thread tid was off the CPU for off_ns and ran again at h.ts. smp is the
 * stack it left with, as a sample record: smp.h.type is JT_REC_SAMPLE, smp.h.size the
 * sample's own size (this record's less 32) and smp.h.ts when it left. Its frames are named
 * as of h.ts: a thread returns into the code its stack holds, so that code was live all
 * along. Waits shorter than the recording's threshold are not recorded one by one: their
 * time is summed per thread into a record of state JT_OFF_SHORT with count waits and no
 * frames, smp.h.ts then the first one's start.
 */
struct jt_rec_offcpu {
	struct jt_rec_hdr h;
	__u64 off_ns;		/* time off the CPU */
	__u32 count;		/* waits it stands for: 1, or the short waits summed */
	__u16 state;		/* enum jt_off_state (include/jt_events.h) */
	__u16 reserved;
	struct jt_rec_sample smp;	/* the stack it left with; frames follow */
};

_Static_assert(sizeof(struct jt_rec_thread) == 40, "jt_rec_thread layout");
_Static_assert(sizeof(struct jt_rec_late) == 56, "jt_rec_late layout");
_Static_assert(sizeof(struct jt_rec_offcpu) == 64, "jt_rec_offcpu layout");

/*
 * JT_REC_INLINE: what a compiler inlined into a method's code, and the source line of every
 * scope (HotSpot's JVMTI CompiledMethodLoad compile_info with each method's line table),
 * right after the method's definition, like JT_REC_LINES. nr_ranges entries sorted by off,
 * each the end of one scope chain's code: bytes from the entry before's off (the first: 0)
 * up to off, exclusive, are its (a compiler records a chain at the end of the instructions
 * it describes: HotSpot's PcDesc of a call is at its return address). Past the last entry
 * nothing is known. An entry's scope is the innermost; each scope names its caller's scope
 * (a lower index; JT_INLINE_NONE for the compiled method itself, the outermost). Names and
 * files are byte offsets into names_len bytes of NUL-terminated strings after the scopes.
 * Readers of an older jitrace skip it.
 */
#define JT_INLINE_NONE 0xffffffffU
#define JT_INLINE_RANGES_MAX 65535	/* entries a record holds at most */
#define JT_INLINE_SCOPES_MAX 65535
#define JT_INLINE_BYTES_MAX (256U << 10)	/* of payload after the fixed part */
#define JT_INLINE_DEPTH_MAX 64		/* scopes a reader follows from one entry */

struct jt_inline_range {
	__u32 off;		/* from the method's start: where the chain's code ends */
	__u32 scope;		/* its innermost scope */
};

struct jt_inline_scope {
	__u32 name;		/* offset of the method's name in the names */
	__u32 file;		/* offset of its source file's name; JT_INLINE_NONE: not known */
	__u32 line;		/* from 1; 0: not known */
	__u32 caller;		/* the scope it was inlined into; JT_INLINE_NONE: outermost */
};

/* The payload: what a runtime's agent hands over, as is, after the fixed part. */
struct jt_inline_head {
	__u32 nr_ranges;
	__u32 nr_scopes;
	__u32 names_len;
	__u32 reserved;
};

struct jt_rec_inline {
	struct jt_rec_hdr h;
	__u64 method;		/* JT_REC_METHOD id */
	__u32 pid;
	__u32 reserved;
	struct jt_inline_head head;
	/* then nr_ranges struct jt_inline_range, nr_scopes struct jt_inline_scope, the names
	 * and zero padding */
};

_Static_assert(sizeof(struct jt_inline_range) == 8, "jt_inline_range layout");
_Static_assert(sizeof(struct jt_inline_scope) == 16, "jt_inline_scope layout");
_Static_assert(sizeof(struct jt_inline_head) == 16, "jt_inline_head layout");
_Static_assert(sizeof(struct jt_rec_inline) == 48, "jt_rec_inline layout");

#endif
