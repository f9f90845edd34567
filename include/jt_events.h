/* SPDX-License-Identifier: GPL-2.0 */
/* Records the BPF programs write into the ring buffer; shared by bpf/ and user/. */
#ifndef JT_EVENTS_H
#define JT_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define JT_NAME_MAX 512		/* longest method name carried by a code-load event */
#define JT_PATH_MAX 256		/* longest exec or mapped file path */
#define JT_ARGS_MAX 256		/* command line bytes an exec event carries */
#define JT_COMM_LEN 16
#define JT_MAX_FRAMES 127	/* kernel.perf_event_max_stack on this kernel */
#define JT_PID_LIMIT (1 << 22)	/* PID_MAX_LIMIT on 64-bit Linux */
#define JT_UCOPY_SLOTS (1 << 16)	/* threads whose learned stack copies the sampler holds */
/* a slot: tid << 32 | JT_UCOPY_FP_WALK (the kernel's walk too) | the bytes to copy */
#define JT_UCOPY_BYTES 0xffff
#define JT_UCOPY_FP_WALK 0x10000

enum jt_ev_type {
	JT_EV_CODE_LOAD = 1,	/* agent stub or USDT: code [start, start+size) named */
	JT_EV_CODE_UNLOAD,
	JT_EV_ENTER,
	JT_EV_LEAVE,
	JT_EV_SAMPLE,
	JT_EV_EXEC,
	JT_EV_EXIT,
	JT_EV_FORK,
	JT_EV_JAVA_CODE,	/* HotSpot USDT: a method in three parts; decoded as a CODE_LOAD */
	JT_EV_CODE_MOVE,	/* collector only (jitdump): code id now lives at start */
	JT_EV_CODE_LINES,	/* collector only (jitdump): the source lines of code id */
	JT_EV_MMAP,		/* an executable mapping of a file (or the vdso) was made */
	JT_EV_OFFCPU,		/* a thread ran again after time off the CPU */
	JT_EV_CODE_INLINE,	/* agent stub: a piece of code id's inlined scopes */
	/* the agent made its calls region (jt_callbuf.h): a jt_ev_call, id its address; the
	 * session takes it, the pipeline never sees it */
	JT_EV_CALLS_REGION,
	/* collector only (calls regions in summary mode): a jt_ev_callsum, a jt_ev_span */
	JT_EV_CALL_SUM,
	JT_EV_CALL_SPAN,
	JT_EV_MAX,
};

/* Where a method definition came from; also stored in the log. */
enum jt_src {
	JT_SRC_AGENT = 1,	/* libjitrace-agent stub */
	JT_SRC_USDT,		/* runtime USDT probe */
	JT_SRC_PERFMAP,		/* /tmp/perf-PID.map */
	JT_SRC_JITDUMP,		/* jit-PID.dump (perf's jitdump format) */
	JT_SRC_VMSTRUCTS,	/* read from a JVM's memory through its vmStructs (interpreted) */
	JT_SRC_MAX,
};

/*
 * Every count of something lost. Those JT_DROP_BY_BPF says are counted per CPU by the BPF
 * programs (their jt_drops array holds every kind); the rest by the collector. All of them
 * reach the log as drop records.
 */
enum jt_drop {
	JT_DROP_RB_CALL,	/* enter/leave: ring buffer full */
	JT_DROP_RB_SAMPLE,	/* sample: ring buffer full */
	JT_DROP_RB_CODE,	/* code load/unload: ring buffer full */
	JT_DROP_RB_PROC,	/* exec/exit/fork/mmap: ring buffer full */
	JT_DROP_STACK,		/* user stack unreadable (the sample is kept without it) */
	JT_DROP_BPF_MAX,
	JT_DROP_REORDER = JT_DROP_BPF_MAX, /* arrived after its reorder window closed */
	JT_DROP_DECODE,		/* malformed ring-buffer record */
	JT_DROP_PERFMAP_LINE,	/* perf map line that could not be parsed */
	/* a frame left unnamed: its address held other code just before, and a perf map
	 * cannot tell when the new code replaced it (the sample is kept) */
	JT_DROP_UNSURE_FRAME,
	/* perf map line not kept: its process holds JT_PERFMAP_METHODS_MAX of them */
	JT_DROP_PERFMAP_CAP,
	JT_DROP_JITDUMP,	/* jitdump record not understood, or a jitdump file refused */
	/* a stack cut where it looped or stopped making sense (the sample is kept, ending in
	 * a JT_FRAME_TRUNCATED frame) */
	JT_DROP_BROKEN_STACK,
	/* counted by the BPF programs too (kinds keep their numbers: logs store them) */
	JT_DROP_RB_OFFCPU,	/* off-CPU record: ring buffer full */
	JT_DROP_OFFCPU_STATE,	/* off-CPU: no room to keep a thread's stack while it waits */
	/* off-CPU: a thread left the CPU again with no return seen since it last left (the
	 * scheduler ran the switch without the program): that wait is lost */
	JT_DROP_OFFCPU_UNPAIRED,
	/* perf map line at new addresses not kept: the recorder's memory bound (--max-memory) */
	JT_DROP_MEMORY_PERFMAP,
	/* code load (agent, USDT, jitdump) at new addresses not kept: the memory bound */
	JT_DROP_MEMORY_CODE,
	/* a method's inlined scopes (agent) not kept until it was defined: the memory bound */
	JT_DROP_MEMORY_SCOPES,
	/* enter/leave: a thread's ring in its process's calls region full (jt_callbuf.h) */
	JT_DROP_CALLS_FULL,
	/* enter/leave: a calls region record or index that made no sense (not delivered) */
	JT_DROP_CALLS_BAD,
	/* an interpreted frame's method not named: the memory bound (the frame stays the
	 * interpreter's) */
	JT_DROP_MEMORY_INTERP,
	JT_DROP_MAX,
};
#define JT_DROP_BY_BPF(what) ((what) < JT_DROP_BPF_MAX || (what) == JT_DROP_RB_OFFCPU ||	\
			      (what) == JT_DROP_OFFCPU_STATE || (what) == JT_DROP_OFFCPU_UNPAIRED)

enum jt_off_state {
	JT_OFF_SLEEP = 1,	/* waiting for an event (TASK_INTERRUPTIBLE): a lock, a read */
	JT_OFF_BLOCKED,		/* uninterruptible (TASK_UNINTERRUPTIBLE): disk I/O, page faults */
	JT_OFF_PREEMPTED,	/* runnable all along, waiting for a CPU */
	JT_OFF_OTHER,		/* stopped, traced, parked, dead */
	JT_OFF_SHORT,		/* a sum of waits each under the threshold */
	JT_OFF_MAX,
};

/* Common prefix of every event. size covers the whole record, header included. */
struct jt_ev_hdr {
	__u16 type;
	__u16 flags;
	__u32 size;
	__u64 ts;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;		/* tgid */
	__u32 tid;
};

/*
 * JT_EV_ENTER, JT_EV_LEAVE, JT_EV_CODE_UNLOAD. h.flags JT_CALL_TSC: h.ts is the x86 TSC the
 * calling thread read before its stub (agent/calls.c), which the collector puts on
 * CLOCK_MONOTONIC by its own calibration, not bpf_ktime_get_ns().
 */
struct jt_ev_call {
	struct jt_ev_hdr h;
	__u64 id;		/* method id, unique within the process */
};

#define JT_CALL_TSC 1

/* JT_EV_CALL_SUM: what thread h.tid's calls of method id added up to since the last one. */
struct jt_ev_callsum {
	struct jt_ev_hdr h;
	__u64 id;
	__u64 calls;
	__u64 incl_ns;		/* outermost activations of a recursive method only */
	__u64 excl_ns;
};

/* JT_EV_CALL_SPAN: one call of method id, from enter_ts to h.ts, self_ns its own time. */
struct jt_ev_span {
	struct jt_ev_hdr h;
	__u64 id;
	__u64 enter_ts;
	__u64 self_ns;
};

/*
 * JT_EV_CODE_LOAD; the name is cut to name_len bytes, record size rounded up to 8 from
 * JT_EV_CODE_FIXED + name_len: the agent's uprobe sends names under 248 bytes at that
 * size (longer ones in the full struct), so that a runtime's burst of loads at start does
 * not fill the ring buffer with empty name slots.
 */
struct jt_ev_code {
	struct jt_ev_hdr h;
	__u64 id;
	__u64 start;
	__u64 size;
	__u16 src;		/* enum jt_src */
	__u16 name_len;		/* bytes of name, no NUL */
	__u32 pad;
	char name[JT_NAME_MAX];
};

/*
 * JT_EV_JAVA_CODE: a HotSpot method as its USDT probes give it (hotspot:compiled__method__load,
 * or the first method__entry/return of a method): class, method and signature in their
 * internal spelling, each in a fixed slot (cut to the slot). jt_decode composes the Java
 * name and delivers it as a JT_EV_CODE_LOAD of source JT_SRC_USDT. size 0: a definition
 * for enter/leave only, covering no code.
 */
#define JT_JCLASS_MAX 256
#define JT_JMETHOD_MAX 96
#define JT_JSIG_MAX 160
#define JT_USDT_ID_BIT (1ULL << 63)	/* USDT ids never meet the agent's, which count from 1 */

struct jt_ev_jcode {
	struct jt_ev_hdr h;
	__u64 id;
	__u64 start;
	__u64 size;
	__u16 class_len;	/* bytes used in each slot */
	__u16 method_len;
	__u16 sig_len;
	__u16 pad;
	char class_name[JT_JCLASS_MAX];	/* "java/lang/String" */
	char method[JT_JMETHOD_MAX];		/* "indexOf" */
	char sig[JT_JSIG_MAX];			/* "(II)I" */
};

/*
 * JT_EV_SAMPLE: ips holds nr_kernel kernel frames then nr_user user frames, leaf first.
 * h.flags says when the user leaf is in a page the kernel runs uprobes from.
 */
#define JT_SAMPLE_LEAF_XOL 1	/* [uprobes]: a probed instruction stepped out of line */
#define JT_SAMPLE_LEAF_TRAMP 2	/* [uprobes-trampoline]: an optimized probe's call */
/* a copy of the user stack's top follows the ips: struct jt_ev_ustack (record --unwind cfi) */
#define JT_SAMPLE_USTACK 4
/*
 * the user ips are the kernel's frame-pointer walk; without it, with a copy, the leaf alone
 * (a thread whose copy's walks do not need it, user/join/ucopy.h)
 */
#define JT_SAMPLE_FP_WALK 8

struct jt_ev_sample {
	struct jt_ev_hdr h;
	__u32 cpu;
	__u16 nr_user;
	__u16 nr_kernel;
	char comm[JT_COMM_LEN];	/* the thread's name, as the kernel has it: maybe no NUL */
	__u64 ips[2 * JT_MAX_FRAMES];
};

/*
 * After a JT_SAMPLE_USTACK sample's ips: the user registers it was taken with and len bytes
 * of its user stack from sp, for the collector to unwind by the code's CFI (frames are what
 * the log keeps, never these bytes). At most JT_USTACK_MAX bytes.
 */
#define JT_USTACK_MAX 8192
#define JT_USTACK_MIN 512

struct jt_ev_ustack {
	__u64 sp, bp;
	__u32 len;
	__u32 pad;
	__u8 bytes[];
};

/* JT_EV_EXEC: the new image's path as exec was given it, and its first arguments */
struct jt_ev_exec {
	struct jt_ev_hdr h;
	char comm[JT_COMM_LEN];
	__u16 path_len;
	__u16 args_len;		/* bytes of args: the arguments, each NUL-terminated */
	__u16 pad[2];
	char path[JT_PATH_MAX];
	char args[JT_ARGS_MAX];
};

/*
 * JT_EV_MMAP: [start, end) of the process now maps the file (dev, ino) from file offset
 * pgoff, executable; sent for each such mapping at exec and for each mmap after it, and
 * for anonymous memory mmap or mprotect made executable (JT_MMAP_ANON). path
 * is the file's path from the root of the process's mount namespace, or empty when it was
 * too long or too deep to walk.
 */
#define JT_MMAP_VDSO 1		/* the kernel's vdso: no file, path "[vdso]" */
#define JT_MMAP_ANON 2		/* anonymous executable memory (JIT code): no file, no path */


struct jt_ev_mmap {
	struct jt_ev_hdr h;
	__u64 start;
	__u64 end;
	__u64 pgoff;		/* bytes */
	__u64 ino;
	__u32 dev;		/* the kernel's dev_t: major << 20 | minor */
	__u16 path_len;		/* bytes of path, no NUL; 0: not known */
	__u16 flags;		/* JT_MMAP_* */
	char path[JT_PATH_MAX];
};

/*
 * JT_EV_OFFCPU: thread h.tid ran again at h.ts after off_ns off the CPU, having left at
 * left_ts with the stack in ips (nr_kernel kernel frames, then nr_user user frames, leaf
 * first, as the kernel walks frame pointers). state is how it left (enum jt_off_state).
 * sp, bp and stack_len bytes of its user stack from sp, copied when it left, let the
 * collector unwind what frame pointers cannot (C libraries built without them) by their
 * DWARF CFI. A sum of waits each under the threshold comes as state JT_OFF_SHORT, count
 * waits, no frames, no stack, left_ts the first one's start, in JT_EV_OFFCPU_SHORT bytes.
 */
#define JT_OFF_STACK_BYTES 8192

struct jt_ev_offcpu {
	struct jt_ev_hdr h;
	__u64 off_ns;
	__u64 left_ts;
	__u32 count;
	__u16 state;
	__u16 flags;		/* JT_SAMPLE_LEAF_* of the user leaf */
	__u32 cpu;		/* the CPU it left */
	__u16 nr_user;
	__u16 nr_kernel;
	char comm[JT_COMM_LEN];	/* the thread's name when it left */
	__u64 sp, bp;		/* its user registers when it left (ip: its first user frame) */
	__u32 stack_len;	/* bytes of stack copied from sp */
	__u32 pad;
	__u8 stack[JT_OFF_STACK_BYTES];
	__u64 ips[2 * JT_MAX_FRAMES];
};

/* JT_EV_EXIT (h.pid is the process that exited) and JT_EV_FORK (h.pid is the parent) */
struct jt_ev_proc {
	struct jt_ev_hdr h;
	__u32 child_pid;	/* fork only */
	__u32 exit_code;	/* exit only */
	char comm[JT_COMM_LEN];
};

/*
 * Arguments of the jt_storm program, run with BPF_PROG_TEST_RUN by benchmarks and tests:
 * it writes count enter/leave events for pid into the ring buffer as fast as it can and
 * reports how many it could not reserve.
 */
struct jt_storm_args {
	__u64 count;		/* in: events to produce */
	__u64 dropped;		/* out: reserves that failed (also counted in jt_drops) */
	__u32 pid;		/* in: pid to put in the events */
	__u32 pad;
};

/*
 * JT_EV_CODE_INLINE: bytes [off, off + len) of the total-byte payload of a JT_REC_INLINE
 * (include/jt_log_format.h: struct jt_inline_head, then ranges, scopes, names) for the
 * code the agent loaded as id. An agent sends the pieces of one payload in order, on the
 * thread that loaded the code, right after its load: the collector joins them by id.
 */
#define JT_INLINE_CHUNK 4096
struct jt_ev_inline {
	struct jt_ev_hdr h;
	__u64 id;
	__u32 off;
	__u32 total;
	__u32 len;
	__u32 pad;
	__u8 data[JT_INLINE_CHUNK];
};

#define JT_EV_CODE_FIXED (sizeof(struct jt_ev_code) - JT_NAME_MAX)
#define JT_EV_SAMPLE_FIXED (sizeof(struct jt_ev_sample) - 2 * JT_MAX_FRAMES * 8)
#define JT_EV_EXEC_FIXED (sizeof(struct jt_ev_exec) - JT_PATH_MAX - JT_ARGS_MAX)
#define JT_EV_MMAP_FIXED (sizeof(struct jt_ev_mmap) - JT_PATH_MAX)
#define JT_EV_OFFCPU_FIXED (sizeof(struct jt_ev_offcpu) - 2 * JT_MAX_FRAMES * 8)
#define JT_EV_OFFCPU_SHORT 96	/* offsetof(struct jt_ev_offcpu, stack) */

_Static_assert(sizeof(struct jt_ev_hdr) == 24, "jt_ev_hdr layout");
_Static_assert(sizeof(struct jt_ev_call) == 32, "jt_ev_call layout");
_Static_assert(sizeof(struct jt_ev_code) == 56 + JT_NAME_MAX, "jt_ev_code layout");
_Static_assert(sizeof(struct jt_ev_jcode) == 56 + JT_JCLASS_MAX + JT_JMETHOD_MAX + JT_JSIG_MAX,
	       "jt_ev_jcode layout");
_Static_assert(sizeof(struct jt_ev_sample) == 48 + 16 * JT_MAX_FRAMES, "jt_ev_sample layout");
_Static_assert(sizeof(struct jt_ev_exec) == 48 + JT_PATH_MAX + JT_ARGS_MAX, "jt_ev_exec layout");
_Static_assert(sizeof(struct jt_ev_mmap) == 64 + JT_PATH_MAX, "jt_ev_mmap layout");
_Static_assert(sizeof(struct jt_ev_proc) == 48, "jt_ev_proc layout");
_Static_assert(__builtin_offsetof(struct jt_ev_offcpu, stack) == JT_EV_OFFCPU_SHORT,
	       "jt_ev_offcpu short layout");
_Static_assert(sizeof(struct jt_ev_offcpu) == 96 + JT_OFF_STACK_BYTES + 16 * JT_MAX_FRAMES,
	       "jt_ev_offcpu layout");
_Static_assert(sizeof(struct jt_ev_inline) == 48 + JT_INLINE_CHUNK, "jt_ev_inline layout");
_Static_assert(sizeof(struct jt_ev_ustack) == 24, "jt_ev_ustack layout");
_Static_assert(JT_USTACK_MAX <= JT_OFF_STACK_BYTES, "a sample's copy fits a collector event");
_Static_assert(sizeof(struct jt_storm_args) == 24, "jt_storm_args layout");

#endif
