// SPDX-License-Identifier: GPL-2.0
/* Kernel side of jitrace: agent-stub uprobes, HotSpot USDT probes, the CPU sampler and
 * process lifecycle. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "jt_events.h"

#define PF_KTHREAD 0x00200000

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader between open and load. */
const volatile bool filter_pids = false;	/* only pids in jt_pids (and their children) */
const volatile bool want_kstack = false;
const volatile bool want_mmaps = true;	/* executable mappings as they are made */
const volatile bool want_offcpu = false;	/* the sched_switch program is attached */
const volatile __u64 offcpu_min_ns = 1000000;	/* shorter waits are summed, not stacked */
/* bytes of user stack a sample copies for the collector's CFI unwind; 0: frame pointers only */
const volatile __u32 ustack_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);	/* resized by the loader from --ringbuf */
} jt_rb SEC(".maps");

/*
 * The traced pids when filter_pids is set: one bit a pid up to PID_MAX_LIMIT. A plain
 * load from .bss, where a hash lookup on every enter and leave cost tens of ns.
 */
__u64 jt_pid_bits[JT_PID_LIMIT / 64];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JT_DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} jt_drops SEC(".maps");

/*
 * Sampler scratch: a sample, and room after its ips for a copy of the user stack's top.
 * perf_event programs never nest on a CPU, so one slot per CPU is safe.
 */
struct sample_buf {
	struct jt_ev_sample s;
	__u8 room[sizeof(struct jt_ev_ustack) + JT_USTACK_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_buf);
} jt_sample_buf SEC(".maps");

/*
 * The bytes of user stack a thread's samples copy, less than ustack_bytes: what the
 * collector found its walks need (user/join/ucopy.h), as tid << 32 | bytes at the slot of
 * tid's low bits (a plain load where an LRU hash lookup cost tens of ns a sample). A thread
 * whose slot holds another tid copies ustack_bytes.
 */
__u64 jt_ucopy_slots[JT_UCOPY_SLOTS];

static __always_inline void count_drop(__u32 what)
{
	__u64 *c = bpf_map_lookup_elem(&jt_drops, &what);

	if (c)
		__sync_fetch_and_add(c, 1);
}

static __always_inline bool traced(__u32 pid)
{
	if (!filter_pids)
		return true;
	pid &= JT_PID_LIMIT - 1;
	return jt_pid_bits[pid / 64] & (1ULL << (pid % 64));
}

static __always_inline void set_traced(__u32 pid, bool on)
{
	pid &= JT_PID_LIMIT - 1;
	if (on)
		__sync_fetch_and_or(&jt_pid_bits[pid / 64], 1ULL << (pid % 64));
	else
		__sync_fetch_and_and(&jt_pid_bits[pid / 64], ~(1ULL << (pid % 64)));
}

static __always_inline void fill_hdr_at(struct jt_ev_hdr *h, __u16 type, __u32 size,
					__u64 pid_tgid, __u64 ts, __u16 flags)
{
	h->type = type;
	h->flags = flags;
	h->size = size;
	h->ts = ts;
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
}

static __always_inline void fill_hdr(struct jt_ev_hdr *h, __u16 type, __u32 size,
				     __u64 pid_tgid)
{
	fill_hdr_at(h, type, size, pid_tgid, bpf_ktime_get_ns(), 0);
}

/*
 * Enter, leave, unload: the hot path. Reserve, fill, submit; no wakeup (the reader polls).
 * tsc: the TSC the caller read before the stub, logged as the time (JT_CALL_TSC) in place of
 * bpf_ktime_get_ns(), which costs 40 to 57 ns a hit in this VM; 0: the kernel's clock.
 */
static __always_inline int emit_call(__u16 type, __u64 id, __u64 tsc, __u32 drop)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct jt_ev_call *e;

	if (!traced(pid_tgid >> 32))
		return 0;
	e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);
	if (!e) {
		count_drop(drop);
		return 0;
	}
	fill_hdr_at(&e->h, type, sizeof(*e), pid_tgid, tsc ?: bpf_ktime_get_ns(),
		    tsc ? JT_CALL_TSC : 0);
	e->id = id;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* The agent's stubs jitrace_stub_method_enter/leave(id, tsc): tsc 0 or the caller's TSC. */
SEC("uprobe")
int BPF_KPROBE(jt_enter, __u64 id, __u64 tsc)
{
	return emit_call(JT_EV_ENTER, id, tsc, JT_DROP_RB_CALL);
}

SEC("uprobe")
int BPF_KPROBE(jt_leave, __u64 id, __u64 tsc)
{
	return emit_call(JT_EV_LEAVE, id, tsc, JT_DROP_RB_CALL);
}

/*
 * Agents from before the stubs took a time: jitrace_method_enter/leave(id) themselves are
 * the stubs, and their second argument register holds whatever the caller left there.
 */
SEC("uprobe")
int BPF_KPROBE(jt_enter_id, __u64 id)
{
	return emit_call(JT_EV_ENTER, id, 0, JT_DROP_RB_CALL);
}

SEC("uprobe")
int BPF_KPROBE(jt_leave_id, __u64 id)
{
	return emit_call(JT_EV_LEAVE, id, 0, JT_DROP_RB_CALL);
}

/* The agent's calls region, once a process: the session maps it (user/sources/callbuf.h). */
SEC("uprobe")
int BPF_KPROBE(jt_calls_region, __u64 addr)
{
	return emit_call(JT_EV_CALLS_REGION, addr, 0, JT_DROP_RB_CODE);
}

SEC("uprobe")
int BPF_KPROBE(jt_code_unload, __u64 id)
{
	return emit_call(JT_EV_CODE_UNLOAD, id, 0, JT_DROP_RB_CODE);
}

/*
 * A code record as long as its name, not JT_NAME_MAX: at a runtime's start thousands of
 * methods load at once, and full-size records would fill the ring eight times faster. The
 * record is built on the stack (a per-CPU buffer is not safe here: uprobe programs run
 * with migration, not preemption, disabled, so another task may enter the same program on
 * this CPU) and copied out at its real size. Names too long for the stack take the
 * full-size path.
 */
#define JT_CODE_STACK_NAME 248
struct jt_ev_code_short {
	struct jt_ev_hdr h;
	__u64 id;
	__u64 start;
	__u64 size;
	__u16 src;
	__u16 name_len;
	__u32 pad;
	char name[JT_CODE_STACK_NAME];
};
_Static_assert(__builtin_offsetof(struct jt_ev_code_short, name) == JT_EV_CODE_FIXED,
	       "jt_ev_code_short is jt_ev_code with a shorter name slot");

static __always_inline int emit_code_long(__u64 pid_tgid, __u64 id, __u64 start, __u64 size,
					  const char *name)
{
	struct jt_ev_code *e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);
	long n;

	if (!e) {
		count_drop(JT_DROP_RB_CODE);
		return 0;
	}
	fill_hdr(&e->h, JT_EV_CODE_LOAD, sizeof(*e), pid_tgid);
	e->id = id;
	e->start = start;
	e->size = size;
	e->src = JT_SRC_AGENT;
	e->pad = 0;
	n = bpf_probe_read_user_str(e->name, sizeof(e->name), name);
	e->name_len = n > 0 ? n - 1 : 0;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(jt_code_load, __u64 id, __u64 start, __u64 size, const char *name)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct jt_ev_code_short e;
	__u32 len, rec;
	__u64 out;
	long n;

	if (!traced(pid_tgid >> 32))
		return 0;
	__builtin_memset(&e, 0, sizeof(e));	/* no stack bytes leak into the padding */
	n = bpf_probe_read_user_str(e.name, sizeof(e.name), name);
	if (n >= (long)sizeof(e.name))		/* maybe cut: read it again, in full */
		return emit_code_long(pid_tgid, id, start, size, name);
	len = n > 0 ? n - 1 : 0;
	rec = JT_EV_CODE_FIXED + ((len + 7) & ~7U);
	fill_hdr(&e.h, JT_EV_CODE_LOAD, rec, pid_tgid);
	e.id = id;
	e.start = start;
	e.size = size;
	e.src = JT_SRC_AGENT;
	e.name_len = len;
	/*
	 * Bounded on the very register passed: 6.1's and 6.12's verifiers do not carry a
	 * bound checked on a copy of rec ("R3 unbounded memory access").
	 */
	out = rec;
	barrier_var(out);
	if (out > sizeof(e))
		out = sizeof(e);	/* cannot happen; tells the verifier */
	barrier_var(out);
	if (bpf_ringbuf_output(&jt_rb, &e, out, BPF_RB_NO_WAKEUP))
		count_drop(JT_DROP_RB_CODE);
	return 0;
}

/*
 * A piece of a code's inlined scopes (include/jt_events.h): a record of fixed size, which
 * any verifier bounds; the agent sends few (one or two a compiled method).
 */
SEC("uprobe")
int BPF_KPROBE(jt_code_inline, __u64 id, const void *data, __u32 off, __u32 len, __u32 total)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct jt_ev_inline *e;
	__u64 n = len;		/* 64 bits: a __u32 size reads as maybe negative to 6.18 */

	if (!traced(pid_tgid >> 32))
		return 0;
	e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);
	if (!e) {
		count_drop(JT_DROP_RB_CODE);
		return 0;
	}
	fill_hdr(&e->h, JT_EV_CODE_INLINE, sizeof(*e), pid_tgid);
	e->id = id;
	e->off = off;
	e->total = total;
	e->pad = 0;
	if (n > JT_INLINE_CHUNK)
		n = JT_INLINE_CHUNK;
	barrier_var(n);
	if (n > JT_INLINE_CHUNK)
		n = JT_INLINE_CHUNK;	/* cannot happen; tells the verifier */
	if (bpf_probe_read_user(e->data, n, data))
		n = 0;		/* the collector drops a payload with a piece missing */
	e->len = n;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/*
 * HotSpot's USDT probes (libjvm.so, provider "hotspot"). A method is known by the Symbol*
 * pointers of its class name, name and signature, which live as long as the JVM; the
 * process's start time is in the key so that a new JVM reusing a pid (and, with class data
 * sharing, the very same addresses) is a new key.
 */
struct jt_jkey {
	__u64 start_time;
	__u64 klass;
	__u64 name;
	__u64 sig;
	__u32 pid;
	__u32 pad;
};

/* Methods whose name was sent for enter/leave: key -> id. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1 << 16);
	__type(key, struct jt_jkey);
	__type(value, __u64);
} jt_jseen SEC(".maps");

/*
 * A method's live compiled code, oldest first: the unload probe names the method but not
 * the code, and of several versions (tiers, OSR) the oldest is nearly always freed first.
 */
#define JT_JLIVE_MAX 4
struct jt_jlive {
	__u64 ids[JT_JLIVE_MAX];
	__u32 n;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1 << 16);
	__type(key, struct jt_jkey);
	__type(value, struct jt_jlive);
} jt_jlive SEC(".maps");

__u64 jt_next_jid;

static __always_inline __u64 new_jid(void)
{
	return JT_USDT_ID_BIT | (__sync_fetch_and_add(&jt_next_jid, 1) + 1);
}

static __always_inline void jkey(struct jt_jkey *k, __u64 pid_tgid, const void *klass,
				 const void *name, const void *sig)
{
	struct task_struct *task = bpf_get_current_task_btf();

	k->start_time = task->group_leader->start_time;
	k->klass = (__u64)klass;
	k->name = (__u64)name;
	k->sig = (__u64)sig;
	k->pid = pid_tgid >> 32;
	k->pad = 0;
}

static __always_inline __u16 read_part(char *dst, __u32 max, const void *src, int len)
{
	__u64 n;

	if (len <= 0)
		return 0;
	/* one register, compared then passed: otherwise clang may hand the helper an
	 * unclamped copy of len, which the verifier refuses */
	n = (__u32)len;
	barrier_var(n);
	if (n > max)
		n = max;
	barrier_var(n);
	if (bpf_probe_read_user(dst, n, src))
		return 0;
	return n;
}

static __always_inline int emit_jcode(__u64 pid_tgid, __u64 id, __u64 start, __u64 size,
				      const void *klass, int klen, const void *name, int nlen,
				      const void *sig, int slen)
{
	struct jt_ev_jcode *e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);

	if (!e) {
		count_drop(JT_DROP_RB_CODE);
		return -1;
	}
	fill_hdr(&e->h, JT_EV_JAVA_CODE, sizeof(*e), pid_tgid);
	e->id = id;
	e->start = start;
	e->size = size;
	e->pad = 0;
	e->class_len = read_part(e->class_name, JT_JCLASS_MAX, klass, klen);
	e->method_len = read_part(e->method, JT_JMETHOD_MAX, name, nlen);
	e->sig_len = read_part(e->sig, JT_JSIG_MAX, sig, slen);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("usdt")
int BPF_USDT(jt_jvm_load, const void *klass, int klen, const void *name, int nlen,
	     const void *sig, int slen, const void *code, int size)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), id = new_jid();
	struct jt_jlive *live, fresh = { .ids = { id }, .n = 1 };
	struct jt_jkey k;
	__u32 i;

	if (!traced(pid_tgid >> 32))
		return 0;
	jkey(&k, pid_tgid, klass, name, sig);
	live = bpf_map_lookup_elem(&jt_jlive, &k);
	if (!live) {
		bpf_map_update_elem(&jt_jlive, &k, &fresh, BPF_ANY);
	} else {
		if (live->n >= JT_JLIVE_MAX) {	/* forget the oldest: overlap replaces it */
			for (i = 0; i + 1 < JT_JLIVE_MAX; i++)
				live->ids[i] = live->ids[i + 1];
			live->n = JT_JLIVE_MAX - 1;
		}
		live->ids[live->n & (JT_JLIVE_MAX - 1)] = id;
		live->n++;
	}
	emit_jcode(pid_tgid, id, (__u64)code, size < 0 ? 0 : size, klass, klen, name, nlen,
		   sig, slen);
	return 0;
}

SEC("usdt")
int BPF_USDT(jt_jvm_unload, const void *klass, int klen, const void *name, int nlen,
	     const void *sig, int slen)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), id;
	struct jt_jlive *live;
	struct jt_jkey k;
	__u32 i;

	if (!traced(pid_tgid >> 32))
		return 0;
	jkey(&k, pid_tgid, klass, name, sig);
	live = bpf_map_lookup_elem(&jt_jlive, &k);
	if (!live || !live->n)
		return 0;
	id = live->ids[0];
	for (i = 0; i + 1 < JT_JLIVE_MAX; i++)
		live->ids[i] = live->ids[i + 1];
	if (--live->n == 0)
		bpf_map_delete_elem(&jt_jlive, &k);
	return emit_call(JT_EV_CODE_UNLOAD, id, 0, JT_DROP_RB_CODE);
}

/* The id of a method for enter/leave, its name sent first the first time it is seen. */
static __always_inline __u64 jvm_method_id(__u64 pid_tgid, const void *klass, int klen,
					   const void *name, int nlen, const void *sig, int slen)
{
	struct jt_jkey k;
	__u64 *seen, id;

	jkey(&k, pid_tgid, klass, name, sig);
	seen = bpf_map_lookup_elem(&jt_jseen, &k);
	if (seen)
		return *seen;
	id = new_jid();
	if (bpf_map_update_elem(&jt_jseen, &k, &id, BPF_NOEXIST)) {
		seen = bpf_map_lookup_elem(&jt_jseen, &k);	/* another thread was first */
		return seen ? *seen : 0;
	}
	if (emit_jcode(pid_tgid, id, 0, 0, klass, klen, name, nlen, sig, slen)) {
		bpf_map_delete_elem(&jt_jseen, &k);	/* try again at the next call */
		return 0;
	}
	return id;
}

/* hotspot:method__entry and method__return: the same arguments, an enter or a leave */
static __always_inline int jvm_call(__u16 type, const void *klass, int klen, const void *name,
				    int nlen, const void *sig, int slen)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), id;

	if (!traced(pid_tgid >> 32))
		return 0;
	id = jvm_method_id(pid_tgid, klass, klen, name, nlen, sig, slen);
	if (!id) {
		count_drop(JT_DROP_RB_CALL);
		return 0;
	}
	return emit_call(type, id, 0, JT_DROP_RB_CALL);
}

SEC("usdt")
int BPF_USDT(jt_jvm_enter, long thread_id, const void *klass, int klen, const void *name,
	     int nlen, const void *sig, int slen)
{
	return jvm_call(JT_EV_ENTER, klass, klen, name, nlen, sig, slen);
}

SEC("usdt")
int BPF_USDT(jt_jvm_return, long thread_id, const void *klass, int klen, const void *name,
	     int nlen, const void *sig, int slen)
{
	return jvm_call(JT_EV_LEAVE, klass, klen, name, nlen, sig, slen);
}

#define UPROBE_TRAMPS_MAX 4	/* trampoline pages looked at; a process has one or two */

/*
 * Where the kernel runs uprobes in user space: the [uprobes] page, where a probed
 * instruction is stepped out of line, and the [uprobes-trampoline] pages, which an
 * optimized probe calls. A sample taken while a uprobe runs has its user leaf in one.
 * The kernel made them itself, not through mmap, so only here are they seen in time.
 */
static __always_inline __u16 leaf_in_uprobes(struct task_struct *task, __u64 ip)
{
	struct uprobes_state *us = &task->mm->uprobes_state;
	struct hlist_node *n;
	__u64 page = ip & ~4095ULL;
	int i;

	if (page == BPF_CORE_READ(us, xol_area, vaddr))
		return JT_SAMPLE_LEAF_XOL;
	/* optimized uprobes (their trampoline pages) came in 6.18; before, only the xol page */
	if (!bpf_core_field_exists(us->head_tramps))
		return 0;
	n = BPF_CORE_READ(us, head_tramps.first);
	for (i = 0; i < UPROBE_TRAMPS_MAX && n; i++) {
		struct uprobe_trampoline *t = container_of(n, struct uprobe_trampoline, node);

		if (page == BPF_CORE_READ(t, vaddr))
			return JT_SAMPLE_LEAF_TRAMP;
		n = BPF_CORE_READ(n, next);
	}
	return 0;
}

/* The current task's user stack into ips; its bytes, at most JT_MAX_FRAMES * 8. */
static __always_inline long take_ustack(void *ctx, void *ips)
{
	long u = bpf_get_stack(ctx, ips, JT_MAX_FRAMES * 8, BPF_F_USER_STACK);

	if (u < 0) {
		count_drop(JT_DROP_STACK);
		u = 0;
	}
	if (u > JT_MAX_FRAMES * 8)
		u = JT_MAX_FRAMES * 8;
	return u;
}

/*
 * The kernel stack (with -g) and then, if user, the user stack of the current task into
 * ips (room for both): the kernel's frame-pointer walk if fp_walk, else leaf alone. *klen
 * and *ulen get their bytes, each at most JT_MAX_FRAMES * 8.
 */
static __always_inline void take_stacks(void *ctx, __u64 *ips, bool user, bool fp_walk,
					__u64 leaf, long *klen, long *ulen)
{
	long k = 0, u = 0;

	if (want_kstack) {
		k = bpf_get_stack(ctx, ips, JT_MAX_FRAMES * 8, 0);
		if (k < 0)
			k = 0;
	}
	if (k > JT_MAX_FRAMES * 8)
		k = JT_MAX_FRAMES * 8;
	if (user && fp_walk) {
		u = take_ustack(ctx, (void *)ips + k);
	} else if (user && leaf) {
		ips[k / 8] = leaf;
		u = 8;
	}
	*klen = k;
	*ulen = u;
}

/*
 * Up to max bytes of user stack from sp into dst. A read that runs past the end of the
 * stack's mapping fails whole, and the end is where the roots are (main, a thread's start):
 * then the pages above sp are probed a byte each for the first that cannot be read, and the
 * stack is copied up to it. Returns the bytes copied.
 */
static __always_inline __u32 copy_ustack(void *dst, __u32 max, __u64 sp)
{
	__u64 end = (sp | 4095) + 1, n;	/* the end of sp's page */
	char c;
	int i;

	if (max > JT_OFF_STACK_BYTES)
		max = JT_OFF_STACK_BYTES;
	if (!bpf_probe_read_user(dst, max, (void *)sp))
		return max;
	for (i = 0; i < JT_OFF_STACK_BYTES / 4096 && end < sp + max; i++, end += 4096)
		if (bpf_probe_read_user(&c, 1, (void *)end))
			break;
	n = end - sp;
	if (n > max)
		n = max;
	n &= 2 * JT_OFF_STACK_BYTES - 1;	/* as it is: for the verifier, a bound */
	if (n < 16 || n > JT_OFF_STACK_BYTES || bpf_probe_read_user(dst, n, (void *)sp))
		return 0;
	return n;
}

/*
 * A perf_event program's context begins with the registers the sample interrupted, laid out
 * as x86-64's uapi struct pt_regs: fixed, so read without CO-RE, which would follow the
 * kernel's own struct (its cs a 2-byte member of a union since 6.9, 8 bytes in 6.1).
 */
struct sample_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip, cs,
	      flags, sp, ss;
};

/* A user task's registers where the sample interrupted it, or as it entered the kernel. */
struct uregs {
	__u64 ip, sp, bp;
};

/* The user registers task saved as it entered the kernel; false (u untouched) if none. */
static __always_inline bool task_user_regs(struct task_struct *task, struct uregs *u)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (!regs)
		return false;
	u->ip = BPF_CORE_READ(regs, ip);
	u->sp = BPF_CORE_READ(regs, sp);
	u->bp = BPF_CORE_READ(regs, bp);
	return true;
}

static __always_inline bool user_regs(struct bpf_perf_event_data *ctx,
				      struct task_struct *task, struct uregs *u)
{
	const struct sample_regs *r = (const void *)ctx;

	/* read whole: the context allows no narrower load */
	if (*(volatile __u64 *)&r->cs & 3) {	/* the sample interrupted user code */
		u->ip = r->ip;
		u->sp = r->sp;
		u->bp = r->bp;
		return true;
	}
	return task_user_regs(task, u);
}

/*
 * After a sample's ips (at bytes into its ips): the task's user registers ur and n bytes of
 * the top of its user stack, for the collector to unwind where frame pointers are missing.
 * Returns the bytes added to the record, 0 when nothing could be copied.
 */
static __always_inline __u32 sample_ustack(struct sample_buf *b, const struct uregs *ur,
					   __u32 n, __u64 at)
{
	struct jt_ev_ustack *u;

	if (at > 2 * JT_MAX_FRAMES * 8)
		return 0;
	u = (void *)b->s.ips + at;
	u->sp = ur->sp;
	u->bp = ur->bp;
	if (n > JT_USTACK_MAX)
		n = JT_USTACK_MAX;
	u->len = copy_ustack(u->bytes, n, u->sp);
	u->pad = 0;
	return u->len ? sizeof(*u) + u->len : 0;
}

SEC("perf_event")
int jt_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 zero = 0, pid = pid_tgid >> 32;
	bool user = !(task->flags & PF_KTHREAD), fp_walk = true, regs = false;
	__u32 copy = ustack_bytes, tid = pid_tgid;
	struct uregs ur = {};
	struct sample_buf *b;
	struct jt_ev_sample *s;
	long klen, ulen;
	__u32 size, extra = 0;

	if (!pid || !traced(pid))	/* idle */
		return 0;
	b = bpf_map_lookup_elem(&jt_sample_buf, &zero);
	if (!b)
		return 0;
	s = &b->s;
	if (!user && !want_kstack)
		return 0;	/* a kernel thread has nothing for us without kernel stacks */
	if (copy && user) {
		/* what the collector learned this thread's walks need (user/join/ucopy.h) */
		__u64 slot = jt_ucopy_slots[tid & (JT_UCOPY_SLOTS - 1)];

		if (slot >> 32 == tid) {
			if ((slot & JT_UCOPY_BYTES) < copy)
				copy = slot & JT_UCOPY_BYTES;	/* a bound the verifier sees */
			fp_walk = slot & JT_UCOPY_FP_WALK;
		}
		regs = user_regs(ctx, task, &ur);
	}
	take_stacks(ctx, s->ips, user, fp_walk, ur.ip, &klen, &ulen);
	fill_hdr(&s->h, JT_EV_SAMPLE, 0, pid_tgid);
	if (ulen >= 8 && bpf_core_field_exists(task->mm->uprobes_state))
		s->h.flags = leaf_in_uprobes(task, s->ips[(__u64)klen / 8 < JT_MAX_FRAMES ?
							   (__u64)klen / 8 : JT_MAX_FRAMES]);
	if (ulen >= 8 && fp_walk)
		s->h.flags |= JT_SAMPLE_FP_WALK;
	s->cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(s->comm, sizeof(s->comm));	/* the thread's name */
	s->nr_kernel = (__u64)klen / 8;
	s->nr_user = (__u64)ulen / 8;
	if (regs && ulen >= 8) {
		extra = sample_ustack(b, &ur, copy, (__u64)klen + ulen);
		if (extra)
			s->h.flags |= JT_SAMPLE_USTACK;
	}
	size = JT_EV_SAMPLE_FIXED + klen + ulen + extra;
	if (size > sizeof(*b))
		size = sizeof(*b);
	s->h.size = size;
	if (bpf_ringbuf_output(&jt_rb, b, size, BPF_RB_NO_WAKEUP))
		count_drop(JT_DROP_RB_SAMPLE);
	return 0;
}

/*
 * Executable file mappings, sent as they are made, so that a process that lives 10 ms
 * keeps its native names: the collector reads the file's symbols while it can still open
 * it (through the process while it lives, by path and inode after).
 */
#define VM_EXEC 0x4
#define PATH_DEPTH 32		/* components walked; a deeper file is sent without path */

/*
 * A path walk's scratch: the components found (leaf first) and the path built from them,
 * twice JT_PATH_MAX so that a bounded read at any offset under JT_PATH_MAX stays inside
 * it. Tracing programs do not nest on a CPU, so one slot per CPU is enough.
 */
struct path_walk {
	struct dentry *d;
	struct mount *mnt;
	__u32 n;		/* components in names */
	__u32 off;		/* bytes of b written */
	bool bad;		/* too deep or too long */
	const unsigned char *names[PATH_DEPTH];
	char b[2 * JT_PATH_MAX + 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_walk);
} jt_path_walk SEC(".maps");

/* One step up: a component, or a mount crossed. Stops at the namespace's root. */
/* bpf_loop's context must be on the stack: it holds the way to the scratch. */
struct walk_ctx {
	struct path_walk *w;
};

static long walk_up(__u32 i, struct walk_ctx *c)
{
	struct path_walk *w = c->w;
	struct dentry *d = w->d, *parent = BPF_CORE_READ(d, d_parent);
	struct mount *mnt = w->mnt;

	if (d == BPF_CORE_READ(mnt, mnt.mnt_root) || d == parent) {
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

		if (up == mnt)
			return 1;
		w->d = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = up;
		return 0;
	}
	if (w->n >= PATH_DEPTH) {
		w->bad = true;
		return 1;
	}
	w->names[w->n & (PATH_DEPTH - 1)] = BPF_CORE_READ(d, d_name.name);
	w->n++;
	w->d = parent;
	return 0;
}

/* Append "/component", the root's side first. */
static long walk_write(__u32 i, struct walk_ctx *c)
{
	struct path_walk *w = c->w;
	__u32 off = w->off;
	long r;

	if (i >= w->n)
		return 1;
	if (off >= JT_PATH_MAX - 1) {
		w->bad = true;
		return 1;
	}
	/* the masks are for the verifier, which does not carry the bound above */
	barrier_var(off);
	off &= JT_PATH_MAX - 1;
	w->b[off++] = '/';
	barrier_var(off);
	off &= 2 * JT_PATH_MAX - 1;
	r = bpf_probe_read_kernel_str(&w->b[off], JT_PATH_MAX,
				      w->names[(w->n - 1 - i) & (PATH_DEPTH - 1)]);
	if (r <= 1) {
		w->bad = true;
		return 1;
	}
	w->off = off + r - 1;
	return 0;
}

/*
 * f's path from the root of its mount namespace into out (JT_PATH_MAX bytes). Returns its
 * length, or 0 when it is too long or too deep to send.
 */
static __always_inline __u32 file_path(struct file *f, char *out)
{
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	struct path_walk *w;
	struct walk_ctx c;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&jt_path_walk, &zero);
	if (!w)
		return 0;
	c.w = w;
	w->d = BPF_CORE_READ(f, f_path.dentry);
	w->mnt = (void *)vm - bpf_core_field_offset(struct mount, mnt);
	w->n = 0;
	w->off = 0;
	w->bad = false;
	if (bpf_loop(PATH_DEPTH + 16, walk_up, &c, 0) == PATH_DEPTH + 16 || w->bad)
		return 0;
	bpf_loop(PATH_DEPTH, walk_write, &c, 0);
	if (w->bad || !w->off || w->off >= JT_PATH_MAX)
		return 0;
	bpf_probe_read_kernel(out, JT_PATH_MAX, w->b);
	return w->off;
}

/* Send vma (a file's, or the vdso when flags say so). */
static __noinline void emit_mmap(__u64 pid_tgid, struct vm_area_struct *vma, __u16 flags)
{
	struct jt_ev_mmap *e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (!e) {
		count_drop(JT_DROP_RB_PROC);
		return;
	}
	fill_hdr(&e->h, JT_EV_MMAP, sizeof(*e), pid_tgid);
	e->start = BPF_CORE_READ(vma, vm_start);
	e->end = BPF_CORE_READ(vma, vm_end);
	e->pgoff = f ? BPF_CORE_READ(vma, vm_pgoff) << 12 : 0;
	e->flags = flags;
	if (f) {
		struct inode *ino = BPF_CORE_READ(f, f_inode);

		e->ino = BPF_CORE_READ(ino, i_ino);
		e->dev = BPF_CORE_READ(ino, i_sb, s_dev);
		e->path_len = file_path(f, e->path);
	} else {
		e->ino = 0;
		e->dev = 0;
		e->path_len = 0;
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

struct mmap_ctx {
	__u64 pid_tgid;
	__u64 addr;
};

static long mmap_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct mmap_ctx *mc = data;

	if ((vma->vm_flags & VM_EXEC) && vma->vm_start <= mc->addr)
		emit_mmap(mc->pid_tgid, vma, vma->vm_file ? 0 : JT_MMAP_ANON);
	return 0;
}

/*
 * Anonymous memory made executable by mprotect (how V8 and others flip their code pages
 * between writable and executable): [start, end) sent once while it stays the same, not
 * at every flip.
 */
#define PROT_EXEC 0x4

struct anon_key {
	__u32 pid;
	__u32 pad;
	__u64 start;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct anon_key);
	__type(value, __u64);		/* end */
} jt_anon_seen SEC(".maps");

struct anon_ctx {
	__u64 pid_tgid;
	__u64 start, end;
};

/*
 * Whether name, a file's dentry name, is a memfd's ("memfd:NAME"): memory of its process
 * alone, made executable the same way (.NET maps its "doublemapper" memfd PROT_NONE, then
 * mprotects its code RX).
 */
static __always_inline bool memfd_name(const unsigned char *name)
{
	char head[6];

	if (bpf_probe_read_kernel(head, sizeof(head), name))
		return false;
	return head[0] == 'm' && head[1] == 'e' && head[2] == 'm' && head[3] == 'f' &&
	       head[4] == 'd' && head[5] == ':';
}

static long anon_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct anon_ctx *ac = data;
	struct anon_key k = { .pid = ac->pid_tgid >> 32, .start = ac->start };
	struct file *f = vma->vm_file;
	/* read once: the test below and the record's path both want it */
	const unsigned char *name = f ? BPF_CORE_READ(f, f_path.dentry, d_name.name) : NULL;
	__u64 *end;
	struct jt_ev_mmap *e;

	if (f && !memfd_name(name))
		return 0;
	end = bpf_map_lookup_elem(&jt_anon_seen, &k);
	if (end && *end == ac->end)
		return 0;
	bpf_map_update_elem(&jt_anon_seen, &k, &ac->end, BPF_ANY);
	e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);
	if (!e) {
		count_drop(JT_DROP_RB_PROC);
		return 0;
	}
	fill_hdr(&e->h, JT_EV_MMAP, sizeof(*e), ac->pid_tgid);
	e->start = ac->start;
	e->end = ac->end;
	e->pgoff = 0;
	e->ino = 0;
	e->dev = 0;
	e->path_len = 0;
	e->flags = JT_MMAP_ANON;
	if (f) {
		/* a memfd by its name, as /proc/PID/maps shows it ("/memfd:doublemapper"): it
		 * says whose JIT memory it is; no inode, nothing to read symbols from */
		long n = bpf_probe_read_kernel_str(e->path + 1, JT_PATH_MAX - 1, name);

		if (n > 1) {
			e->path[0] = '/';
			e->path_len = n;	/* the slash and the name, no NUL */
			e->flags = 0;
		}
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/*
 * mprotect(start, len, prot) and pkey_mprotect(start, len, prot, pkey) alike, once they
 * succeeded: the arguments are still in the saved user registers.
 */
static __always_inline void anon_protect(struct pt_regs *regs, __u64 pid_tgid)
{
	struct anon_ctx ac = { .pid_tgid = pid_tgid };
	__u64 len = BPF_CORE_READ(regs, si);

	if (!(BPF_CORE_READ(regs, dx) & PROT_EXEC) || !len)
		return;
	ac.start = BPF_CORE_READ(regs, di);
	ac.end = ac.start + ((len + 4095) & ~4095ULL);
	bpf_find_vma(bpf_get_current_task_btf(), ac.start, anon_found, &ac, 0);
}

/* x86-64 system call numbers (orig_ax) of the calls that make code executable */
#define NR_MMAP 9
#define NR_MPROTECT 10
#define NR_PKEY_MPROTECT 329

/*
 * After each mmap that made an executable mapping of a file, send it (looked up, so what is
 * sent is what the kernel made); after mprotect and pkey_mprotect (how V8 and others flip
 * their code pages), anonymous memory made executable. A BTF tracepoint: it attaches
 * without tracefs, which a fresh host or a container often does not mount. Every system
 * call of the host passes here; the pid filter and the call number are all it reads of the
 * others (bench_syscalls measures what that costs).
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(jt_maps, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct mmap_ctx mc;
	long nr;

	if (!traced(pid_tgid >> 32))
		return 0;
	nr = BPF_CORE_READ(regs, orig_ax);
	if (nr == NR_MMAP) {
		if (ret < 0 && ret > -4096)
			return 0;
		mc.pid_tgid = pid_tgid;
		mc.addr = ret;
		bpf_find_vma(bpf_get_current_task_btf(), mc.addr, mmap_found, &mc, 0);
	} else if ((nr == NR_MPROTECT || nr == NR_PKEY_MPROTECT) && !ret) {
		anon_protect(regs, pid_tgid);
	}
	return 0;
}

/*
 * The new image's executable mappings: the program, its interpreter, the vdso. Found by
 * address with bpf_find_vma (5.17), not with the VMA iterator kfuncs (6.7), so that
 * Debian 12's 6.1 names a process that lives 10 ms too. The program's code is every
 * executable mapping from mm->start_code to mm->end_code: a program may have several
 * executable segments, its text not the first (node's first is two pages of .init and
 * .plt, its 26 MB of text the next, a page further), so the walk goes on past the first,
 * over the unmapped pages between them. The interpreter's code is the first executable
 * mapping from its base (AT_BASE); the vdso is at mm->context.vdso.
 */
#define AT_BASE 7
#define AUXV_PAIRS 24		/* AT_BASE comes within the first ten the kernel writes */
#define EXEC_WALK 16		/* mappings and unmapped pages walked from a base */
#define EXEC_PAGE 4096

struct exec_walk {
	__u64 pid_tgid;
	__u64 next;		/* the end of the mapping just looked at */
	__u16 flags;		/* JT_MMAP_VDSO for the vdso, else 0 */
	bool done;		/* an executable mapping was found */
};

static long exec_vma_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct exec_walk *w = data;

	w->next = vma->vm_end;
	if (!(vma->vm_flags & VM_EXEC))
		return 0;
	if (w->flags == JT_MMAP_VDSO || vma->vm_file)
		emit_mmap(w->pid_tgid, vma, w->flags);
	w->done = true;
	return 0;
}

/* A walk of executable mappings from addr (bpf_loop's context: on the stack). */
struct exec_loop {
	struct exec_walk w;
	__u64 addr, end;
};

/*
 * One step: the mapping at c->addr, or the next page if nothing is mapped there (bpf_find_vma
 * finds only a mapping that holds the address). 1 ends the walk: the first executable
 * mapping found if end is 0, else one that reaches end, or nothing more before end.
 */
static long exec_step(__u64 i, void *ctx)
{
	struct exec_loop *c = ctx;

	if (!c->addr)
		return 1;
	c->w.next = 0;
	/* the task is current: sched_process_exec runs in the new image's task */
	if (bpf_find_vma(bpf_get_current_task_btf(), c->addr, exec_vma_found, &c->w, 0)) {
		if (c->addr >= c->end)
			return 1;
		c->addr = (c->addr & ~(__u64)(EXEC_PAGE - 1)) + EXEC_PAGE;
		return 0;
	}
	if (!c->w.next || (c->w.done && c->w.next >= c->end))
		return 1;
	c->addr = c->w.next;
	return 0;
}

/*
 * The executable mappings from addr: the first one only if end is 0, else every one that
 * starts before end. A loop by bpf_loop: unrolled, three walks of 16 steps grew past the
 * 6.12 verifier's million instructions ("BPF program is too large").
 */
static __always_inline void emit_exec_map(__u64 pid_tgid, __u64 addr, __u64 end, __u16 flags)
{
	struct exec_loop c = { .w = { .pid_tgid = pid_tgid, .flags = flags }, .addr = addr,
			       .end = end };

	bpf_loop(EXEC_WALK, exec_step, &c, 0);
}

static __always_inline __u64 interp_base(struct mm_struct *mm)
{
	unsigned long *auxv = (void *)mm + bpf_core_field_offset(struct mm_struct, saved_auxv);
	__u64 pair[2];
	int i;

	for (i = 0; i < AUXV_PAIRS; i++) {
		if (bpf_probe_read_kernel(pair, sizeof(pair), auxv + 2 * i) || !pair[0])
			return 0;
		if (pair[0] == AT_BASE)
			return pair[1];
	}
	return 0;
}

static __always_inline void emit_exec_maps(struct task_struct *task, __u64 pid_tgid)
{
	struct mm_struct *mm = task->mm;

	if (!mm)
		return;
	emit_exec_map(pid_tgid, BPF_CORE_READ(mm, start_code), BPF_CORE_READ(mm, end_code), 0);
	emit_exec_map(pid_tgid, interp_base(mm), 0, 0);
	emit_exec_map(pid_tgid, (__u64)BPF_CORE_READ(mm, context.vdso), 0, JT_MMAP_VDSO);
}

/* The new image's first arguments, NUL-separated, from its own stack. */
static __always_inline __u16 exec_args(struct task_struct *task, char *out)
{
	unsigned long a = BPF_CORE_READ(task, mm, arg_start);
	unsigned long z = BPF_CORE_READ(task, mm, arg_end);
	__u32 n;

	if (z <= a)
		return 0;
	n = z - a > JT_ARGS_MAX ? JT_ARGS_MAX : z - a;
	if (bpf_probe_read_user(out, n & (JT_ARGS_MAX * 2 - 1), (void *)a))
		return 0;
	return n;
}

/* BTF tracepoints attach without tracefs, which this kind of host may not mount. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(jt_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct jt_ev_exec *e;
	long n;

	if (!traced(pid_tgid >> 32))
		return 0;
	e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);
	if (!e) {
		count_drop(JT_DROP_RB_PROC);
		return 0;
	}
	fill_hdr(&e->h, JT_EV_EXEC, sizeof(*e), pid_tgid);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	n = bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename));
	e->path_len = n > 0 ? n - 1 : 0;
	e->args_len = exec_args(task, e->args);
	e->pad[0] = e->pad[1] = 0;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	if (want_mmaps)
		emit_exec_maps(task, pid_tgid);
	return 0;
}

/*
 * Off-CPU time. When a traced thread leaves the CPU the time and how it left go into its
 * task storage (allocated on its first switch, freed with it), with its kernel stack (-g);
 * when it runs again, a wait of offcpu_min_ns or more is sent with its stacks. The time of
 * shorter waits is summed per thread in jt_off_short (no stack is taken for them) and sent
 * whenever the sum reaches the threshold, when the thread exits, and at the end
 * (jt_off_flush), so none is lost. Kernel threads are left out.
 *
 * The user stack (a frame-pointer walk and a copy of the stack's top, for the collector to
 * unwind by CFI) is what costs, so it is taken only for the waits that are sent. A thread
 * asleep (TASK_INTERRUPTIBLE) is in a system call, whose user registers and stack stay as
 * they were until it returns: its user stack is taken then, at sys_exit, or when it leaves
 * the CPU again first, if its user registers are still the ones it left with. Other waits
 * (preemption, disk I/O, page faults) take it as they leave.
 */
#define TASK_INTERRUPTIBLE 0x1
#define TASK_UNINTERRUPTIBLE 0x2

/* A thread's off-CPU state: the record it is building, and how far it got. */
struct off_task {
	struct jt_ev_offcpu ev;
	__u64 user_ip;		/* its user registers when it left: ev.sp, ev.bp and this */
	bool off;		/* it is off the CPU now, since ev.left_ts */
	bool user_later;	/* the user stack is to be taken when it returns to user */
	bool pending;		/* ev is a whole wait but for the user stack: send it then */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_task);
} jt_off_task SEC(".maps");

struct off_short {
	__u64 first_ts;		/* when the first wait summed began */
	__u64 ns;
	__u32 count;
	__u32 pid;
	char comm[JT_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);		/* tid */
	__type(value, struct off_short);
} jt_off_short SEC(".maps");

static __always_inline __u16 off_state(bool preempt, unsigned int prev_state)
{
	if (preempt || !prev_state)
		return JT_OFF_PREEMPTED;
	if (prev_state & TASK_INTERRUPTIBLE)
		return JT_OFF_SLEEP;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		return JT_OFF_BLOCKED;
	return JT_OFF_OTHER;
}

/* The top of the user stack, for the collector to unwind by CFI. */
static __always_inline void off_copy_stack(struct jt_ev_offcpu *ev, __u64 sp)
{
	ev->stack_len = copy_ustack(ev->stack, JT_OFF_STACK_BYTES, sp);
}

/*
 * The current thread's user stack into ev, after its kernel frames: a frame-pointer walk
 * and a copy of the stack's top, if its user registers are still those it left with.
 */
static __always_inline void off_user_stack(void *ctx, struct off_task *st,
					   struct task_struct *task)
{
	__u64 k = st->ev.nr_kernel;
	struct uregs ur;
	long u;

	if (k > JT_MAX_FRAMES)
		k = JT_MAX_FRAMES;
	st->ev.nr_user = 0;
	st->ev.stack_len = 0;
	if (!task_user_regs(task, &ur) || ur.ip != st->user_ip || ur.sp != st->ev.sp) {
		count_drop(JT_DROP_STACK);	/* it ran user code since: kept without it */
		return;
	}
	u = take_ustack(ctx, (void *)st->ev.ips + k * 8);
	st->ev.nr_user = (__u64)u / 8;
	off_copy_stack(&st->ev, st->ev.sp);
}

static __always_inline void off_send(struct off_task *st)
{
	__u32 size = JT_EV_OFFCPU_FIXED + ((__u32)st->ev.nr_kernel + st->ev.nr_user) * 8;

	if (size > sizeof(st->ev))
		size = sizeof(st->ev);
	st->ev.h.size = size;
	if (bpf_ringbuf_output(&jt_rb, &st->ev, size, BPF_RB_NO_WAKEUP))
		count_drop(JT_DROP_RB_OFFCPU);
	st->pending = false;
}

static __always_inline void off_leave(void *ctx, struct task_struct *prev, __u16 state,
				      __u64 now)
{
	struct uregs ur = {};
	struct off_task *st;
	long k = 0, u;

	st = bpf_task_storage_get(&jt_off_task, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count_drop(JT_DROP_OFFCPU_STATE);
		return;
	}
	if (st->pending) {	/* a wait that ended; still in its system call */
		off_user_stack(ctx, st, prev);
		off_send(st);
	}
	if (st->off)	/* it ran again unseen: that wait is lost, and counted */
		count_drop(JT_DROP_OFFCPU_UNPAIRED);
	task_user_regs(prev, &ur);	/* none: all 0 */
	st->user_ip = ur.ip;
	st->ev.sp = ur.sp;
	st->ev.bp = ur.bp;
	st->user_later = state == JT_OFF_SLEEP;
	/* asleep: the user stack later */
	take_stacks(ctx, st->ev.ips, !st->user_later, true, 0, &k, &u);
	st->ev.nr_kernel = (__u64)k / 8;
	st->ev.nr_user = (__u64)u / 8;
	st->ev.stack_len = 0;
	if (!st->user_later)
		off_copy_stack(&st->ev, st->ev.sp);
	st->ev.left_ts = now;
	st->off = true;
	st->ev.state = state;
	st->ev.cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(st->ev.comm, sizeof(st->ev.comm));	/* prev is current */
}

static __always_inline void off_send_short(struct off_short *sh, __u32 tid, __u64 now)
{
	struct jt_ev_offcpu *e = bpf_ringbuf_reserve(&jt_rb, JT_EV_OFFCPU_SHORT, 0);

	if (!e) {
		count_drop(JT_DROP_RB_OFFCPU);
		return;
	}
	e->h.type = JT_EV_OFFCPU;
	e->h.flags = 0;
	e->h.size = JT_EV_OFFCPU_SHORT;
	e->h.ts = now;
	e->h.pid = sh->pid;
	e->h.tid = tid;
	e->off_ns = sh->ns;
	e->left_ts = sh->first_ts;
	e->count = sh->count;
	e->state = JT_OFF_SHORT;
	e->flags = 0;
	e->cpu = bpf_get_smp_processor_id();
	e->nr_user = 0;
	e->nr_kernel = 0;
	e->sp = 0;
	e->bp = 0;
	e->stack_len = 0;
	e->pad = 0;
	__builtin_memcpy(e->comm, sh->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	sh->ns = 0;
	sh->count = 0;
}

static __always_inline void off_add_short(struct jt_ev_offcpu *ev, __u32 pid, __u32 tid,
					  __u64 ns, __u64 now)
{
	struct off_short *sh = bpf_map_lookup_elem(&jt_off_short, &tid);

	if (!sh) {
		struct off_short n = { .pid = pid };

		if (bpf_map_update_elem(&jt_off_short, &tid, &n, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&jt_off_short, &tid)) {
			count_drop(JT_DROP_OFFCPU_STATE);
			return;
		}
		sh = bpf_map_lookup_elem(&jt_off_short, &tid);
		if (!sh)
			return;
	}
	if (!sh->count) {
		sh->first_ts = ev->left_ts;
		sh->pid = pid;
	}
	sh->ns += ns;
	sh->count++;
	__builtin_memcpy(sh->comm, ev->comm, sizeof(sh->comm));
	if (sh->ns >= offcpu_min_ns)
		off_send_short(sh, tid, now);
}

static __always_inline void off_return(struct task_struct *next, __u64 now)
{
	struct off_task *st = bpf_task_storage_get(&jt_off_task, next, 0, 0);
	__u64 ns;

	if (!st || !st->off)
		return;
	st->off = false;
	ns = now - st->ev.left_ts;
	if (ns < offcpu_min_ns) {
		off_add_short(&st->ev, next->tgid, next->pid, ns, now);
		return;
	}
	st->ev.h.type = JT_EV_OFFCPU;
	st->ev.h.flags = 0;
	st->ev.h.ts = now;
	st->ev.h.pid = next->tgid;
	st->ev.h.tid = next->pid;
	st->ev.off_ns = ns;
	st->ev.count = 1;
	st->ev.flags = 0;
	if (st->user_later)
		st->pending = true;	/* sent with its user stack at sys_exit */
	else
		off_send(st);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(jt_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	/* the pid filter first: nothing else is read for a thread not traced */
	if (prev->pid && traced(prev->tgid) && !(prev->flags & PF_KTHREAD))
		off_leave(ctx, prev, off_state(preempt, prev_state), now);
	if (next->pid && traced(next->tgid) && !(next->flags & PF_KTHREAD))
		off_return(next, now);
	return 0;
}

/* A system call returns to user: a wait it ended is sent, with its user stack taken now. */
SEC("tp_btf/sys_exit")
int BPF_PROG(jt_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	struct off_task *st;

	if (!traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	task = bpf_get_current_task_btf();
	st = bpf_task_storage_get(&jt_off_task, task, 0, 0);
	if (!st || !st->pending)
		return 0;
	off_user_stack(ctx, st, task);
	off_send(st);
	return 0;
}

/* A thread ends: a wait waiting for its user stack is sent without, what it summed too. */
static __always_inline void off_thread_exit(struct task_struct *task, __u32 tid)
{
	struct off_task *st;
	struct off_short *sh;

	if (!want_offcpu)
		return;
	st = bpf_task_storage_get(&jt_off_task, task, 0, 0);
	if (st && st->pending) {
		st->ev.nr_user = 0;
		st->ev.stack_len = 0;
		off_send(st);
	}
	sh = bpf_map_lookup_elem(&jt_off_short, &tid);
	if (!sh)
		return;
	if (sh->count)
		off_send_short(sh, tid, bpf_ktime_get_ns());
	bpf_map_delete_elem(&jt_off_short, &tid);
}

static long off_flush_one(struct bpf_map *map, __u32 *tid, struct off_short *sh, void *data)
{
	if (sh->count)
		off_send_short(sh, *tid, bpf_ktime_get_ns());
	return 0;
}

/* The end of a recording: every sum of short waits not yet sent is sent. */
SEC("syscall")
int jt_off_flush(void *ctx)
{
	bpf_for_each_map_elem(&jt_off_short, off_flush_one, NULL, 0);
	return 0;
}

static __always_inline int emit_proc(__u16 type, __u64 pid_tgid, __u32 child, __u32 code)
{
	struct jt_ev_proc *e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);

	if (!e) {
		count_drop(JT_DROP_RB_PROC);
		return 0;
	}
	fill_hdr(&e->h, type, sizeof(*e), pid_tgid);
	e->child_pid = child;
	e->exit_code = code;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline int on_exit(struct task_struct *task, bool group_dead)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32;

	if (!traced(pid))
		return 0;
	off_thread_exit(task, (__u32)pid_tgid);
	/* the process ends with its last thread, whichever it is (the leader may go first) */
	if (!group_dead)
		return 0;
	emit_proc(JT_EV_EXIT, pid_tgid, 0, task->exit_code >> 8);
	if (filter_pids)
		set_traced(pid, false);
	return 0;
}

/* Kernels whose sched_process_exit says whether the thread was its group's last (6.16) */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(jt_exit, struct task_struct *p, bool group_dead)
{
	return on_exit(bpf_get_current_task_btf(), group_dead);
}

/*
 * Older kernels (6.1, 6.12) pass the task alone. do_exit() counts the thread out of
 * signal->live before the tracepoint, so 0 there means the group is gone; two last
 * threads racing may both see it, so the first to claim the process in jt_exited says so.
 * The loader picks one of the two programs by the tracepoint's arguments in the kernel's BTF.
 */
struct exit_key {
	__u64 start_time;	/* the group leader's: a pid reused is another key */
	__u32 pid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct exit_key);
	__type(value, __u8);
} jt_exited SEC(".maps");

SEC("tp_btf/sched_process_exit")
int BPF_PROG(jt_exit_task, struct task_struct *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct exit_key k = { .pid = task->tgid };
	bool last = !BPF_CORE_READ(task, signal, live.counter);
	__u8 one = 1;

	if (last && traced(k.pid)) {
		k.start_time = BPF_CORE_READ(task, group_leader, start_time);
		last = !bpf_map_update_elem(&jt_exited, &k, &one, BPF_NOEXIST);
	}
	return on_exit(task, last);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(jt_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid, cpid = child->tgid;

	if ((__u32)child->pid != cpid || !traced(ppid))	/* a new thread, or not ours */
		return 0;
	if (filter_pids)
		set_traced(cpid, true);
	return emit_proc(JT_EV_FORK, bpf_get_current_pid_tgid(), cpid, 0);
}

/* Event generator for benchmarks and the overflow test: see struct jt_storm_args. */
struct storm_ctx {
	struct jt_storm_args *args;
	__u64 dropped;
};

static long storm_one(__u64 i, struct storm_ctx *sc)
{
	struct jt_ev_call *e = bpf_ringbuf_reserve(&jt_rb, sizeof(*e), 0);

	if (!e) {
		count_drop(JT_DROP_RB_CALL);
		sc->dropped++;
		return 0;
	}
	e->h.type = (i & 1) ? JT_EV_LEAVE : JT_EV_ENTER;
	e->h.flags = 0;
	e->h.size = sizeof(*e);
	e->h.ts = bpf_ktime_get_ns();
	e->h.pid = sc->args->pid;
	e->h.tid = sc->args->pid;
	e->id = ((i >> 1) & 63) + 1;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("syscall")
int jt_storm(struct jt_storm_args *args)
{
	struct storm_ctx sc = { .args = args };

	bpf_loop(args->count, storm_one, &sc, 0);
	args->dropped = sc.dropped;
	return 0;
}
