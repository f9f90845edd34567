// SPDX-License-Identifier: GPL-2.0
/* Unit tests for checking and decoding ring-buffer records (user/sources/ring_decode.c). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sys/sysmacros.h>

#include "jt_log_format.h"
#include "sources/ring_decode.h"
#include "base/util.h"

/* Room for the largest record of any type, plus slack to make records lie about sizes. */
#define BUF_MAX 8192

struct rec {
	size_t len;
	_Alignas(8) unsigned char b[BUF_MAX];
};

static void put_hdr(struct rec *r, uint16_t type, uint32_t size)
{
	struct jt_ev_hdr *h = (struct jt_ev_hdr *)r->b;

	h->type = type;
	h->flags = 0;
	h->size = size;
	h->ts = 0x1122334455667788ULL;
	h->pid = 4242;
	h->tid = 4243;
	r->len = size;
}

static void build_call(struct rec *r, uint16_t type, uint64_t id)
{
	struct jt_ev_call c = { .id = id };

	memset(r->b, 0xee, sizeof(r->b));
	memcpy(r->b, &c, sizeof(c));
	put_hdr(r, type, sizeof(c));
}

/* A code load as BPF writes it: the name cut to name_len, the size rounded up to 8. */
static void build_code(struct rec *r, uint64_t id, uint64_t start, uint64_t size, uint16_t src,
		       const char *name, size_t name_len)
{
	struct jt_ev_code c = {
		.id = id, .start = start, .size = size, .src = src, .name_len = name_len,
	};

	/* byte by byte: a test may put more name in the buffer than the struct holds */
	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &c, JT_EV_CODE_FIXED);
	memcpy(r->b + JT_EV_CODE_FIXED, name, name_len);
	put_hdr(r, JT_EV_CODE_LOAD, jt_round8(JT_EV_CODE_FIXED + name_len));
}

/* A HotSpot USDT method as BPF writes it: each part in its slot, the whole struct reserved. */
static void build_jcode(struct rec *r, uint64_t id, uint64_t start, uint64_t size,
			const char *cls, const char *meth, const char *sig)
{
	struct jt_ev_jcode j = {
		.id = id, .start = start, .size = size, .class_len = strlen(cls),
		.method_len = strlen(meth), .sig_len = strlen(sig),
	};

	memcpy(j.class_name, cls, j.class_len);
	memcpy(j.method, meth, j.method_len);
	memcpy(j.sig, sig, j.sig_len);
	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &j, sizeof(j));
	put_hdr(r, JT_EV_JAVA_CODE, sizeof(j));
}

static void build_sample(struct rec *r, uint32_t cpu, uint16_t nr_kernel, uint16_t nr_user)
{
	struct jt_ev_sample s = { .cpu = cpu, .nr_user = nr_user, .nr_kernel = nr_kernel };
	unsigned int i;

	memcpy(s.comm, "worker-012345678", JT_COMM_LEN);	/* all 16 bytes: no NUL */
	/* byte by byte: a test may claim more frames than the struct holds */
	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &s, JT_EV_SAMPLE_FIXED);
	for (i = 0; i < (unsigned int)nr_kernel + nr_user; i++) {
		__u64 ip = i < nr_kernel ? 0xffffffff81000000ULL + i : 0x7f0000001000ULL + i;

		memcpy(r->b + JT_EV_SAMPLE_FIXED + 8 * i, &ip, 8);
	}
	put_hdr(r, JT_EV_SAMPLE, JT_EV_SAMPLE_FIXED + 8 * (nr_kernel + nr_user));
}

static void build_exec(struct rec *r, const char *comm, const char *path, size_t path_len)
{
	struct jt_ev_exec e = { .path_len = path_len };

	memcpy(e.comm, comm, strnlen(comm, sizeof(e.comm)));
	memcpy(e.path, path, path_len);
	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &e, sizeof(e));
	put_hdr(r, JT_EV_EXEC, sizeof(e));	/* BPF reserves the whole struct */
}

static void build_proc(struct rec *r, uint16_t type, uint32_t child, uint32_t code,
		       const char *comm)
{
	struct jt_ev_proc p = { .child_pid = child, .exit_code = code };

	memcpy(p.comm, comm, strnlen(comm, sizeof(p.comm)));
	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &p, sizeof(p));
	put_hdr(r, type, sizeof(p));
}

static struct jt_ev_hdr *hdr(struct rec *r)
{
	return (struct jt_ev_hdr *)r->b;
}

static void assert_common(const struct jt_event *ev, uint32_t type)
{
	assert_int_equal(ev->type, type);
	assert_int_equal(ev->ts, 0x1122334455667788ULL);
	assert_int_equal(ev->pid, 4242);
	assert_int_equal(ev->tid, 4243);
}

/* One valid record of every event type, as the BPF programs write them. */
static size_t build_each_type(struct rec *rs, size_t max)
{
	size_t n = 0;

	assert_true(max >= 11);
	build_call(&rs[n++], JT_EV_ENTER, 7);
	build_call(&rs[n++], JT_EV_LEAVE, 7);
	build_call(&rs[n++], JT_EV_CODE_UNLOAD, 7);
	build_code(&rs[n++], 7, 0x7f0000001000, 0x80, JT_SRC_AGENT, "Foo.bar", 7);
	build_code(&rs[n++], 8, 0x7f0000002000, 0x80, JT_SRC_PERFMAP, "", 0);
	build_sample(&rs[n++], 1, 3, 5);
	build_sample(&rs[n++], 0, 0, 0);
	build_exec(&rs[n++], "java", "/usr/bin/java", 13);
	build_proc(&rs[n++], JT_EV_EXIT, 0, 3, "java");
	build_proc(&rs[n++], JT_EV_FORK, 4300, 0, "java");
	build_jcode(&rs[n++], JT_USDT_ID_BIT | 3, 0x7f0000003000, 0x40, "Hot", "a", "(J)J");
	return n;
}

static void call_records_decode_their_id(void **state)
{
	static const uint16_t types[] = { JT_EV_ENTER, JT_EV_LEAVE, JT_EV_CODE_UNLOAD };
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;
	size_t i;

	(void)state;
	for (i = 0; i < JT_ARRAY_SIZE(types); i++) {
		build_call(r, types[i], 0xdeadbeefcafeULL);
		assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
		assert_common(ev, types[i]);
		assert_int_equal(ev->id, 0xdeadbeefcafeULL);
		assert_int_equal(jt_decode__ts(r->b), 0x1122334455667788ULL);
	}
	free(r);
}

static void code_load_decodes_range_source_and_name_of_every_source(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;
	uint16_t src;

	(void)state;
	for (src = JT_SRC_AGENT; src < JT_SRC_MAX; src++) {
		build_code(r, 99, 0x7f3a40001000, 0x123, src, "LFoo;::bar(I)V", 14);
		assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
		assert_common(ev, JT_EV_CODE_LOAD);
		assert_int_equal(ev->id, 99);
		assert_int_equal(ev->start, 0x7f3a40001000);
		assert_int_equal(ev->size, 0x123);
		assert_int_equal(ev->src, src);
		assert_int_equal(ev->str_len, 14);
		assert_memory_equal(jt_event__str(ev), "LFoo;::bar(I)V", 15);	/* and its NUL */
	}
	free(r);
}

static void code_load_of_longest_name_is_accepted(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	char name[JT_NAME_MAX];
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;

	(void)state;
	memset(name, 'n', sizeof(name));
	build_code(r, 1, 0x1000, 0x10, JT_SRC_AGENT, name, JT_NAME_MAX - 1);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->str_len, JT_NAME_MAX - 1);
	/* the whole reserved struct, as bpf_ringbuf_reserve(sizeof(*e)) delivers it */
	hdr(r)->size = sizeof(struct jt_ev_code);
	assert_int_equal(jt_decode(r->b, sizeof(struct jt_ev_code), &eb), 0);
	assert_int_equal(ev->str_len, JT_NAME_MAX - 1);
	free(r);
}

static void code_load_ending_at_top_of_address_space_is_accepted(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;

	(void)state;
	build_code(r, 1, UINT64_MAX - 0x100, 0x100, JT_SRC_AGENT, "top", 3);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->start + ev->size, UINT64_MAX);
	free(r);
}

static void sample_decodes_cpu_and_frames(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;
	unsigned int i;

	(void)state;
	build_sample(r, 3, 2, 4);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_common(ev, JT_EV_SAMPLE);
	assert_int_equal(ev->cpu, 3);
	assert_memory_equal(ev->thread, "worker-012345678", JT_COMM_LEN);
	assert_int_equal(ev->nr_kernel, 2);
	assert_int_equal(ev->nr_user, 4);
	for (i = 0; i < 2; i++)
		assert_int_equal(jt_event__ips(ev)[i], 0xffffffff81000000ULL + i);
	for (i = 2; i < 6; i++)
		assert_int_equal(jt_event__ips(ev)[i], 0x7f0000001000ULL + i);
	free(r);
}

static void sample_with_full_stacks_is_accepted(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;

	(void)state;
	build_sample(r, 0, JT_MAX_FRAMES, JT_MAX_FRAMES);
	assert_int_equal(r->len, sizeof(struct jt_ev_sample));
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->nr_kernel, JT_MAX_FRAMES);
	assert_int_equal(ev->nr_user, JT_MAX_FRAMES);
	build_sample(r, 0, 0, 0);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->nr_kernel + ev->nr_user, 0);
	free(r);
}

/* A JT_SAMPLE_USTACK sample: after its ips, the registers and len bytes of stack. */
static void build_sample_copy(struct rec *r, uint16_t nr_user, uint32_t len, uint32_t size)
{
	struct jt_ev_ustack u = { .sp = 0x7ffd00001000, .bp = 0x7ffd00001100, .len = len };
	size_t at, i;

	build_sample(r, 1, 1, nr_user);
	at = r->len;
	memcpy(r->b + at, &u, sizeof(u));
	for (i = 0; i < 1024; i++)
		r->b[at + sizeof(u) + i] = (unsigned char)(i * 7);
	put_hdr(r, JT_EV_SAMPLE, size ? size : at + sizeof(u) + len);
	((struct jt_ev_hdr *)r->b)->flags = JT_SAMPLE_USTACK | JT_SAMPLE_LEAF_XOL;
}

static void sample_decodes_its_stack_copy(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;
	const unsigned char *copy;
	size_t i, at = JT_EV_SAMPLE_FIXED + 8 * 4;

	(void)state;
	build_sample_copy(r, 3, 1024, 0);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_common(ev, JT_EV_SAMPLE);
	assert_true(ev->flags & JT_EVENT_LEAF_XOL);
	assert_int_equal(ev->nr_kernel + ev->nr_user, 4);
	assert_int_equal(jt_event__ips(ev)[3], 0x7f0000001000ULL + 3);
	assert_int_equal(ev->off_sp, 0x7ffd00001000);
	assert_int_equal(ev->off_bp, 0x7ffd00001100);
	assert_int_equal(ev->off_stack_len, 1024);
	assert_true(ev->len >= JT_EVENT_FIXED + 8 * 4 + 1024);
	copy = jt_event__stack(ev);
	for (i = 0; i < 1024; i++)
		assert_int_equal(copy[i], (unsigned char)(i * 7));

	/* a copy longer than the record, or than JT_USTACK_MAX; a record cut in the
	 * registers; a copy with no user frame to start from: refused */
	build_sample_copy(r, 3, 1024, at + sizeof(struct jt_ev_ustack) + 1023);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_sample_copy(r, 3, JT_USTACK_MAX + 8, sizeof(r->b));
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_sample_copy(r, 3, 1024, at + 16);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_sample_copy(r, 0, 512, 0);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);

	/* without the flag the same bytes are a plain sample: no copy */
	build_sample_copy(r, 3, 1024, 0);
	((struct jt_ev_hdr *)r->b)->flags = 0;
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->off_stack_len, 0);
	assert_int_equal(ev->len, JT_EVENT_FIXED + 8 * 4);
	free(r);
}

static void exec_decodes_comm_and_path(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;
	char path[JT_PATH_MAX];

	(void)state;
	build_exec(r, "java", "/usr/lib/jvm/bin/java", 21);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_common(ev, JT_EV_EXEC);
	assert_int_equal(ev->str_len, 21);
	assert_memory_equal(jt_event__str(ev), "/usr/lib/jvm/bin/java", 21);
	assert_memory_equal(ev->comm, "java\0", 5);

	memset(path, 'p', sizeof(path));
	build_exec(r, "0123456789abcdef", path, JT_PATH_MAX - 1);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->str_len, JT_PATH_MAX - 1);
	assert_memory_equal(ev->comm, "0123456789abcdef", JT_COMM_LEN);	/* no NUL */
	free(r);
}

/* The arguments BPF read from the new image's stack become one line, spaces between. */
static void exec_decodes_its_command_line(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	struct jt_ev_exec *e = (struct jt_ev_exec *)r->b;
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;
	static const char args[] = "./blip\0--fast\0x\0";

	(void)state;
	build_exec(r, "blip", "./blip", 6);
	memcpy(e->args, args, sizeof(args) - 1);
	e->args_len = sizeof(args) - 1;
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->str_len, 6);
	assert_string_equal(jt_event__str(ev), "./blip");
	assert_int_equal(ev->args_len, strlen("./blip --fast x"));
	assert_string_equal(jt_event__args(ev), "./blip --fast x");
	assert_true(ev->len <= JT_EVENT_MAX && ev->len % 8 == 0);
	assert_true(JT_EVENT_FIXED + ev->str_len + 1 + ev->args_len + 1 <= ev->len);

	/* a full slot, no NUL at its end */
	memset(e->args, 'a', JT_ARGS_MAX);
	e->args_len = JT_ARGS_MAX;
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->args_len, JT_ARGS_MAX);
	assert_int_equal(strlen(jt_event__args(ev)), JT_ARGS_MAX);
	/* a length past the slot: the line is not trusted, the exec still is */
	e->args_len = JT_ARGS_MAX + 1;
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->args_len, 0);
	assert_string_equal(jt_event__args(ev), "");
	free(r);
}

static void build_mmap(struct rec *r, uint64_t start, uint64_t end, uint64_t pgoff,
		       uint32_t dev, const char *path, uint16_t flags)
{
	struct jt_ev_mmap m = {
		.start = start, .end = end, .pgoff = pgoff, .ino = 1234, .dev = dev,
		.path_len = strlen(path), .flags = flags,
	};

	memcpy(m.path, path, m.path_len);
	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b, &m, sizeof(m));
	put_hdr(r, JT_EV_MMAP, sizeof(m));
}

static void mmap_decodes_range_file_and_path(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;

	(void)state;
	/* the kernel's dev_t 259:3 (major << 20 | minor) is what stat calls makedev(259, 3) */
	build_mmap(r, 0x1000, 0x5000, 0x2000, 259u << 20 | 3, "/usr/bin/blip", 0);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_common(ev, JT_EV_MMAP);
	assert_int_equal(ev->map_start, 0x1000);
	assert_int_equal(ev->map_end, 0x5000);
	assert_int_equal(ev->map_pgoff, 0x2000);
	assert_int_equal(ev->map_ino, 1234);
	assert_int_equal(ev->map_dev, makedev(259, 3));
	assert_string_equal(jt_event__str(ev), "/usr/bin/blip");

	build_mmap(r, 0x7000, 0x9000, 0, 0, "", JT_MMAP_VDSO);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->map_ino, 0);
	assert_string_equal(jt_event__str(ev), "[vdso]");

	/* anonymous executable memory: no file, the empty path */
	build_mmap(r, 0x7f0000000000ULL, 0x7f0000010000ULL, 0, 0, "", JT_MMAP_ANON);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->map_start, 0x7f0000000000ULL);
	assert_int_equal(ev->map_ino, 0);
	assert_string_equal(jt_event__str(ev), "");

	/* an empty range or a path past its slot is refused */
	build_mmap(r, 0x5000, 0x5000, 0, 1, "/x", 0);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_mmap(r, 0x1000, 0x5000, 0, 1, "/x", 0);
	((struct jt_ev_mmap *)r->b)->path_len = JT_PATH_MAX;
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	free(r);
}

/* A piece of inlined scopes as BPF writes it: a fixed-size record, len bytes of data. */
static void build_inline(struct rec *r, uint64_t id, uint32_t off, uint32_t len, uint32_t total)
{
	struct jt_ev_inline *in = (struct jt_ev_inline *)r->b;
	uint32_t i;

	memset(r->b, 0, sizeof(r->b));
	in->id = id;
	in->off = off;
	in->len = len;
	in->total = total;
	for (i = 0; i < len && i < JT_INLINE_CHUNK; i++)
		in->data[i] = (unsigned char)(off + i);
	put_hdr(r, JT_EV_CODE_INLINE, sizeof(*in));
}

static void inline_piece_decodes_its_place_and_bytes(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;

	(void)state;
	build_inline(r, 77, 4096, 1000, 5096);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_common(ev, JT_EV_CODE_INLINE);
	assert_int_equal(ev->inl_of, 77);
	assert_int_equal(ev->inl_off, 4096);
	assert_int_equal(ev->inl_total, 5096);
	assert_int_equal(ev->str_len, 1000);
	assert_int_equal(((const unsigned char *)ev->tail)[999], (unsigned char)(4096 + 999));
	assert_true(ev->len >= JT_EVENT_FIXED + 1000 && ev->len % 8 == 0);
	/* a full piece, and the empty one BPF sends when it cannot read the agent's bytes */
	build_inline(r, 77, 0, JT_INLINE_CHUNK, 5096);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	build_inline(r, 77, 0, 0, 5096);
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	/* lies: past its slot, past the payload, a payload past the bound, a short record */
	build_inline(r, 77, 0, JT_INLINE_CHUNK + 1, 8192);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_inline(r, 77, 4096, 1001, 5096);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_inline(r, 77, 5097, 0, 5096);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_inline(r, 77, 0, 16, JT_INLINE_BYTES_MAX + 1);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_inline(r, 77, 0, 16, 16);
	hdr(r)->size = sizeof(struct jt_ev_inline) - 8;
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	free(r);
}

/* An off-CPU record with its stacks and stack copy, a short waits' sum, and lies about both. */
static void offcpu_decodes_its_wait_stacks_and_stack_copy(void **state)
{
	struct jt_ev_offcpu *o = calloc(1, sizeof(*o));
	union jt_event_buf *eb = malloc(sizeof(*eb));
	struct jt_event *ev = &eb->ev;
	const unsigned char *copy;
	unsigned int i;

	(void)state;
	assert_non_null(o);
	assert_non_null(eb);
	o->h = (struct jt_ev_hdr){ .type = JT_EV_OFFCPU, .ts = 5000000, .pid = 42, .tid = 43,
				   .size = JT_EV_OFFCPU_FIXED + 3 * 8 };
	o->off_ns = 3000000;
	o->left_ts = 2000000;
	o->count = 1;
	o->state = JT_OFF_SLEEP;
	o->cpu = 1;
	o->nr_kernel = 1;
	o->nr_user = 2;
	memcpy(o->comm, "waiter", 7);
	o->sp = 0x7ffc00001000ULL;
	o->bp = 0x7ffc00001040ULL;
	o->stack_len = 64;
	for (i = 0; i < 64; i++)
		o->stack[i] = i;
	o->ips[0] = 0xffffffff81000000ULL;
	o->ips[1] = 0x7f0000001000ULL;
	o->ips[2] = 0x7f0000002000ULL;
	assert_int_equal(jt_decode(o, o->h.size, eb), 0);
	assert_int_equal(ev->type, JT_EV_OFFCPU);
	assert_int_equal(ev->ts, 5000000);
	assert_int_equal(ev->off_ns, 3000000);
	assert_int_equal(ev->off_left_ts, 2000000);
	assert_int_equal(ev->off_count, 1);
	assert_int_equal(ev->off_state, JT_OFF_SLEEP);
	assert_int_equal(ev->nr_kernel, 1);
	assert_int_equal(ev->nr_user, 2);
	assert_int_equal(ev->off_sp, 0x7ffc00001000ULL);
	assert_int_equal(ev->off_bp, 0x7ffc00001040ULL);
	assert_int_equal(ev->off_stack_len, 64);
	assert_string_equal(ev->thread, "waiter");
	assert_int_equal(jt_event__ips(ev)[2], 0x7f0000002000ULL);
	copy = jt_event__stack(ev);
	for (i = 0; i < 64; i++)
		assert_int_equal(copy[i], i);
	assert_true(ev->len >= JT_EVENT_FIXED + 3 * 8 + 64);

	/* lies: a stack copy past its slot, frames past the record, left after it came back */
	o->stack_len = JT_OFF_STACK_BYTES + 8;
	assert_int_equal(jt_decode(o, o->h.size, eb), -EINVAL);
	o->stack_len = 64;
	assert_int_equal(jt_decode(o, o->h.size - 8, eb), -EINVAL);
	o->left_ts = o->h.ts + 1;
	assert_int_equal(jt_decode(o, o->h.size, eb), -EINVAL);
	o->left_ts = 2000000;
	o->state = JT_OFF_MAX;
	assert_int_equal(jt_decode(o, o->h.size, eb), -EINVAL);

	/* a sum of short waits: the fixed part before the stack copy, no frames */
	o->state = JT_OFF_SHORT;
	o->count = 250;
	o->nr_kernel = o->nr_user = 0;
	o->stack_len = 0;
	o->h.size = JT_EV_OFFCPU_SHORT;
	assert_int_equal(jt_decode(o, o->h.size, eb), 0);
	assert_int_equal(ev->off_count, 250);
	assert_int_equal(ev->off_state, JT_OFF_SHORT);
	assert_int_equal(ev->nr_user + ev->nr_kernel + ev->off_stack_len, 0);
	o->nr_user = 1;		/* frames a short record cannot hold */
	assert_int_equal(jt_decode(o, o->h.size, eb), -EINVAL);
	o->nr_user = 0;
	o->count = 0;		/* no wait at all */
	assert_int_equal(jt_decode(o, o->h.size, eb), -EINVAL);
	free(eb);
	free(o);
}

static void exit_and_fork_decode_their_fields(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;

	(void)state;
	build_proc(r, JT_EV_EXIT, 0, 137, "node");
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_common(ev, JT_EV_EXIT);
	assert_int_equal(ev->exit_code, 137);
	assert_string_equal(ev->comm, "node");

	build_proc(r, JT_EV_FORK, 5151, 0, "beam.smp");
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_common(ev, JT_EV_FORK);
	assert_int_equal(ev->child_pid, 5151);
	assert_string_equal(ev->comm, "beam.smp");
	free(r);
}

static void buffer_shorter_than_header_is_rejected(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	size_t len;

	(void)state;
	build_call(r, JT_EV_ENTER, 1);
	hdr(r)->size = 8;	/* even claiming to be short */
	for (len = 0; len < sizeof(struct jt_ev_hdr); len++)
		assert_int_equal(jt_decode(r->b, len, &eb), -EINVAL);
	free(r);
}

/* Every valid record cut short of its size is rejected, however it was cut. */
static void truncated_records_are_rejected(void **state)
{
	struct rec *rs = malloc(11 * sizeof(*rs));
	union jt_event_buf eb;
	size_t i, n, len;

	(void)state;
	n = build_each_type(rs, 11);
	for (i = 0; i < n; i++) {
		for (len = 0; len < rs[i].len; len++)
			assert_int_equal(jt_decode(rs[i].b, len, &eb), -EINVAL);
		assert_int_equal(jt_decode(rs[i].b, rs[i].len, &eb), 0);
	}
	free(rs);
}

static void size_beyond_buffer_is_rejected(void **state)
{
	struct rec *rs = malloc(11 * sizeof(*rs));
	union jt_event_buf eb;
	size_t i, n;

	(void)state;
	n = build_each_type(rs, 11);
	for (i = 0; i < n; i++) {
		hdr(&rs[i])->size = rs[i].len + 8;
		assert_int_equal(jt_decode(rs[i].b, rs[i].len, &eb), -EINVAL);
		hdr(&rs[i])->size = UINT32_MAX;
		assert_int_equal(jt_decode(rs[i].b, rs[i].len, &eb), -EINVAL);
	}
	free(rs);
}

/* A record whose own size is too small for its type, however big the buffer around it. */
static void size_too_small_for_type_is_rejected(void **state)
{
	struct rec *rs = malloc(11 * sizeof(*rs));
	union jt_event_buf eb;
	size_t i, n;
	uint32_t size;

	(void)state;
	n = build_each_type(rs, 11);
	for (i = 0; i < n; i++) {
		uint32_t need = rs[i].len;

		/* names and paths may end the record before the rounding */
		if (hdr(&rs[i])->type == JT_EV_CODE_LOAD)
			need = JT_EV_CODE_FIXED + ((struct jt_ev_code *)rs[i].b)->name_len;
		else if (hdr(&rs[i])->type == JT_EV_EXEC)
			need = JT_EV_EXEC_FIXED + ((struct jt_ev_exec *)rs[i].b)->path_len;
		for (size = 0; size < need; size++) {
			hdr(&rs[i])->size = size;
			assert_int_equal(jt_decode(rs[i].b, BUF_MAX, &eb), -EINVAL);
		}
	}
	free(rs);
}

static void name_len_past_record_size_is_rejected(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	struct jt_ev_code *c = (struct jt_ev_code *)r->b;
	union jt_event_buf eb;

	(void)state;
	build_code(r, 1, 0x1000, 0x10, JT_SRC_AGENT, "abcdefgh", 8);	/* size FIXED + 8 */
	c->name_len = 9;
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	assert_int_equal(jt_decode(r->b, BUF_MAX, &eb), -EINVAL);
	c->name_len = 8;
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	free(r);
}

/* Longer than any name BPF can write, even when the record's size would hold it. */
static void name_len_over_name_max_is_rejected(void **state)
{
	static const uint16_t lens[] = { JT_NAME_MAX + 1, 1000, UINT16_MAX };
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	char *name = calloc(1, UINT16_MAX);
	size_t i;

	(void)state;
	for (i = 0; i < JT_ARRAY_SIZE(lens); i++) {
		size_t fit = lens[i] < BUF_MAX - JT_EV_CODE_FIXED ? lens[i] : 0;

		build_code(r, 1, 0x1000, 0x10, JT_SRC_AGENT, name, fit);
		((struct jt_ev_code *)r->b)->name_len = lens[i];
		if (fit)
			assert_int_equal(r->len, jt_round8(JT_EV_CODE_FIXED + lens[i]));
		assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	}
	free(name);
	free(r);
}

static void path_len_too_long_is_rejected(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	struct jt_ev_exec *e = (struct jt_ev_exec *)r->b;
	union jt_event_buf eb;

	(void)state;
	build_exec(r, "sh", "/bin/sh", 7);
	e->path_len = JT_PATH_MAX + 1;	/* past the reserved record */
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	/* past JT_PATH_MAX though the record claims to hold it */
	hdr(r)->size = jt_round8(JT_EV_EXEC_FIXED + 1000);
	e->path_len = 1000;
	assert_int_equal(jt_decode(r->b, hdr(r)->size, &eb), -EINVAL);
	e->path_len = UINT16_MAX;
	assert_int_equal(jt_decode(r->b, BUF_MAX, &eb), -EINVAL);
	/* the same record with a path that fits its size is fine */
	hdr(r)->size = sizeof(*e);
	e->path_len = 7;
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	/* a short record whose path_len reaches past its size */
	hdr(r)->size = JT_EV_EXEC_FIXED + 8;
	e->path_len = 9;
	assert_int_equal(jt_decode(r->b, BUF_MAX, &eb), -EINVAL);
	free(r);
}

static void frame_counts_over_max_frames_are_rejected(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	struct jt_ev_sample *s = (struct jt_ev_sample *)r->b;
	union jt_event_buf eb;

	(void)state;
	/* the size covers the frames claimed: only the count limit can reject them */
	build_sample(r, 0, JT_MAX_FRAMES + 1, 0);
	assert_true(r->len <= BUF_MAX);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_sample(r, 0, 0, JT_MAX_FRAMES + 1);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_sample(r, 0, 3, 2);
	s->nr_user = UINT16_MAX;
	assert_int_equal(jt_decode(r->b, BUF_MAX, &eb), -EINVAL);
	s->nr_user = 2;
	s->nr_kernel = UINT16_MAX;
	assert_int_equal(jt_decode(r->b, BUF_MAX, &eb), -EINVAL);
	free(r);
}

static void frame_counts_past_record_size_are_rejected(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	struct jt_ev_sample *s = (struct jt_ev_sample *)r->b;
	union jt_event_buf eb;

	(void)state;
	build_sample(r, 0, 2, 10);
	s->nr_user = 11;
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	assert_int_equal(jt_decode(r->b, BUF_MAX, &eb), -EINVAL);	/* size, not len, bounds */
	s->nr_user = 10;
	s->nr_kernel = 3;
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	s->nr_kernel = 2;
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	free(r);
}

static void unknown_type_is_rejected(void **state)
{
	static const uint16_t types[] = { 0, JT_EV_MAX, JT_EV_MAX + 1, 0x100, UINT16_MAX };
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	size_t i;

	(void)state;
	for (i = 0; i < JT_ARRAY_SIZE(types); i++) {
		build_proc(r, JT_EV_EXIT, 0, 0, "x");
		hdr(r)->type = types[i];
		assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	}
	free(r);
}

static void code_load_of_unknown_source_is_rejected(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;

	(void)state;
	build_code(r, 1, 0x1000, 0x10, 0, "x", 1);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_code(r, 1, 0x1000, 0x10, JT_SRC_MAX, "x", 1);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	free(r);
}

static void code_range_that_wraps_is_rejected(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;

	(void)state;
	build_code(r, 1, UINT64_MAX - 0x10, 0x11, JT_SRC_AGENT, "wrap", 4);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_code(r, 1, UINT64_MAX, UINT64_MAX, JT_SRC_PERFMAP, "wrap", 4);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_code(r, 1, 0x7f0000000000, UINT64_MAX - 0x1000, JT_SRC_USDT, "wrap", 4);
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	free(r);
}

/*
 * Guarded memory: a record copied so that it ends exactly where a PROT_NONE page begins.
 * Any read past len faults.
 */
struct guard {
	unsigned char *map;
	size_t page;
	void *exact;		/* under ASan: the record, exactly its size */
};

static int guard_setup(void **state)
{
	struct guard *g = calloc(1, sizeof(*g));
	size_t span;

	if (!g)
		return -1;
	g->page = sysconf(_SC_PAGESIZE);
	span = 3 * g->page;	/* two readable pages (records up to 2 pages), one guard */
	g->map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED ||
	    mprotect(g->map + 2 * g->page, g->page, PROT_NONE)) {
		free(g);
		return -1;
	}
	*state = g;
	return 0;
}

static int guard_teardown(void **state)
{
	struct guard *g = *state;

	munmap(g->map, 3 * g->page);
	free(g->exact);
	free(g);
	return 0;
}

/*
 * The record as the ring buffer hands it over: 8-byte aligned, ending as close to the guard
 * page as that allows (a read past the rounded-up length faults). Under AddressSanitizer it
 * is an exact-size heap copy instead, so a read even one byte past len is caught.
 */
static const void *at_guard(struct guard *g, const void *bytes, size_t len)
{
	unsigned char *dst;

	assert_true(len <= 2 * g->page);
#ifdef __SANITIZE_ADDRESS__
	free(g->exact);
	g->exact = malloc(len ? len : 1);
	assert_non_null(g->exact);
	dst = g->exact;
#else
	dst = g->map + 2 * g->page - ((len + 7) & ~(size_t)7);
#endif
	memcpy(dst, bytes, len);
	return dst;
}

/* The guard itself works: a child that reads one byte past the span dies of SIGSEGV. */
static void guard_page_faults_on_access(void **state)
{
	struct guard *g = *state;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		volatile unsigned char *p = g->map + 2 * g->page;

		signal(SIGSEGV, SIG_DFL);
		(void)*p;
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSEGV);
}

static void decode_never_reads_past_len(void **state)
{
	struct guard *g = *state;
	struct rec *rs = malloc(11 * sizeof(*rs));
	union jt_event_buf eb;
	size_t i, n, len;

	n = build_each_type(rs, 11);
	for (i = 0; i < n; i++) {
		/* whole records, then every truncation of them */
		assert_int_equal(jt_decode(at_guard(g, rs[i].b, rs[i].len), rs[i].len, &eb), 0);
		for (len = 0; len < rs[i].len; len++)
			assert_int_equal(jt_decode(at_guard(g, rs[i].b, len), len, &eb), -EINVAL);
	}
	free(rs);
}

/* Records whose inner counts lie: the decoder must check before it follows them. */
static void decode_of_lying_records_never_reads_past_len(void **state)
{
	struct guard *g = *state;
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	size_t len;

	build_code(r, 1, 0x1000, 0x10, JT_SRC_AGENT, "abc", 3);
	((struct jt_ev_code *)r->b)->name_len = JT_NAME_MAX - 1;
	for (len = sizeof(struct jt_ev_hdr); len <= r->len; len++) {
		hdr(r)->size = len;
		assert_int_equal(jt_decode(at_guard(g, r->b, len), len, &eb), -EINVAL);
	}

	build_sample(r, 0, 1, 1);
	((struct jt_ev_sample *)r->b)->nr_user = JT_MAX_FRAMES;
	for (len = sizeof(struct jt_ev_hdr); len <= r->len; len++) {
		hdr(r)->size = len;
		assert_int_equal(jt_decode(at_guard(g, r->b, len), len, &eb), -EINVAL);
	}

	build_exec(r, "sh", "/bin/sh", 7);
	((struct jt_ev_exec *)r->b)->path_len = JT_PATH_MAX - 1;
	for (len = sizeof(struct jt_ev_hdr); len < JT_EV_EXEC_FIXED + JT_PATH_MAX - 1; len++) {
		hdr(r)->size = len;
		assert_int_equal(jt_decode(at_guard(g, r->b, len), len, &eb), -EINVAL);
	}
	free(r);
}

/* A decoded event is whole in itself: its name, path and frames lie inside its len, and a
 * name or path ends in a NUL there. */
static void decoded_events_hold_their_strings_and_frames(void **state)
{
	struct guard *g = *state;
	struct rec *rs = malloc(11 * sizeof(*rs));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;
	size_t i, n;

	n = build_each_type(rs, 11);
	for (i = 0; i < n; i++) {
		const unsigned char *p = at_guard(g, rs[i].b, rs[i].len);
		const char *end;

		memset(&eb, 0x5a, sizeof(eb));
		assert_int_equal(jt_decode(p, rs[i].len, &eb), 0);
		assert_int_equal(ev->len % 8, 0);
		assert_true(ev->len >= JT_EVENT_FIXED && ev->len <= JT_EVENT_MAX);
		end = (const char *)ev + ev->len;
		if (ev->type == JT_EV_CODE_LOAD || ev->type == JT_EV_EXEC) {
			assert_true(jt_event__str(ev) + ev->str_len < end);
			assert_int_equal(jt_event__str(ev)[ev->str_len], 0);
		}
		if (ev->type == JT_EV_SAMPLE)
			assert_true((const char *)(jt_event__ips(ev) + ev->nr_kernel +
						   ev->nr_user) <= end);
	}
	free(rs);
}

/* HotSpot's internal spelling becomes the Java one, from USDT parts and JVMTI signatures. */
static void java_code_decodes_as_usdt_code_load_with_java_name(void **state)
{
	static const char *const cases[][4] = {
		{ "java/lang/String", "hashCode", "()I", "java.lang.String.hashCode()" },
		{ "Hot", "spin", "(I[J)V", "Hot.spin(int, long[])" },
		{ "com/example/Foo", "bar", "(Ljava/lang/String;[[DZBCFS)Ljava/lang/Object;",
		  "com.example.Foo.bar(java.lang.String, double[][], boolean, byte, char, float, "
		  "short)" },
		{ "java/lang/invoke/LambdaForm$MH/0x0000000800c0c000", "invoke",
		  "(Ljava/lang/Object;)V",
		  "java.lang.invoke.LambdaForm$MH.0x0000000800c0c000.invoke(java.lang.Object)" },
		{ "Ljava/util/HashMap;", "get", "(Ljava/lang/Object;)Ljava/lang/Object;",
		  "java.util.HashMap.get(java.lang.Object)" },
		{ "Hot", "<init>", "()V", "Hot.<init>()" },
		/* a signature that does not parse is kept as it came */
		{ "X", "m", "(Q)V", "X.m(Q)V" },
		{ "X", "m", "(I", "X.m(I" },
		{ "X", "m", "(L;[)V", "X.m(L;[)V" },
	};
	struct rec *r = malloc(sizeof(*r));
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build_jcode(r, JT_USDT_ID_BIT | 5, 0x7f0000004000, 0x120, cases[i][0], cases[i][1],
			    cases[i][2]);
		assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
		assert_common(ev, JT_EV_CODE_LOAD);
		assert_int_equal(ev->src, JT_SRC_USDT);
		assert_int_equal(ev->id, JT_USDT_ID_BIT | 5);
		assert_int_equal(ev->start, 0x7f0000004000);
		assert_int_equal(ev->size, 0x120);
		assert_int_equal(ev->str_len, strlen(cases[i][3]));
		assert_memory_equal(jt_event__str(ev), cases[i][3], ev->str_len);
	}
	/* size 0: a name for calls that covers no code */
	build_jcode(r, JT_USDT_ID_BIT | 6, 0, 0, "Calls", "target", "(I)I");
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->size, 0);
	assert_string_equal(jt_event__str(ev), "Calls.target(int)");
	free(r);
}

static void java_code_with_full_slots_is_cut_to_name_max(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	struct jt_ev_jcode *j = (struct jt_ev_jcode *)r->b;
	union jt_event_buf eb;
	struct jt_event *ev = &eb.ev;

	(void)state;
	build_jcode(r, 1, 0x1000, 0x10, "", "", "");
	memset(j->class_name, 'c', JT_JCLASS_MAX);
	memset(j->method, 'm', JT_JMETHOD_MAX);
	memset(j->sig, 'I', JT_JSIG_MAX);
	j->sig[0] = '(';
	j->class_len = JT_JCLASS_MAX;
	j->method_len = JT_JMETHOD_MAX;
	j->sig_len = JT_JSIG_MAX;
	assert_int_equal(jt_decode(r->b, r->len, &eb), 0);
	assert_int_equal(ev->str_len, JT_NAME_MAX - 1);
	assert_int_equal(jt_event__str(ev)[ev->str_len], 0);
	assert_memory_equal(jt_event__str(ev) + JT_JCLASS_MAX, ".mmm", 4);
	free(r);
}

static void java_code_with_lying_lengths_is_rejected(void **state)
{
	struct rec *r = malloc(sizeof(*r));
	struct jt_ev_jcode *j = (struct jt_ev_jcode *)r->b;
	union jt_event_buf eb;

	(void)state;
	build_jcode(r, 1, 0x1000, 0x10, "Hot", "a", "(J)J");
	j->class_len = JT_JCLASS_MAX + 1;
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_jcode(r, 1, 0x1000, 0x10, "Hot", "a", "(J)J");
	j->method_len = JT_JMETHOD_MAX + 1;
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_jcode(r, 1, 0x1000, 0x10, "Hot", "a", "(J)J");
	j->sig_len = JT_JSIG_MAX + 1;
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	build_jcode(r, 1, UINT64_MAX - 8, 0x10, "Hot", "a", "(J)J");	/* wraps */
	assert_int_equal(jt_decode(r->b, r->len, &eb), -EINVAL);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(call_records_decode_their_id),
		cmocka_unit_test(code_load_decodes_range_source_and_name_of_every_source),
		cmocka_unit_test(code_load_of_longest_name_is_accepted),
		cmocka_unit_test(code_load_ending_at_top_of_address_space_is_accepted),
		cmocka_unit_test(sample_decodes_cpu_and_frames),
		cmocka_unit_test(sample_with_full_stacks_is_accepted),
		cmocka_unit_test(sample_decodes_its_stack_copy),
		cmocka_unit_test(exec_decodes_comm_and_path),
		cmocka_unit_test(exec_decodes_its_command_line),
		cmocka_unit_test(mmap_decodes_range_file_and_path),
		cmocka_unit_test(inline_piece_decodes_its_place_and_bytes),
		cmocka_unit_test(offcpu_decodes_its_wait_stacks_and_stack_copy),
		cmocka_unit_test(exit_and_fork_decode_their_fields),
		cmocka_unit_test(buffer_shorter_than_header_is_rejected),
		cmocka_unit_test(truncated_records_are_rejected),
		cmocka_unit_test(size_beyond_buffer_is_rejected),
		cmocka_unit_test(size_too_small_for_type_is_rejected),
		cmocka_unit_test(name_len_past_record_size_is_rejected),
		cmocka_unit_test(name_len_over_name_max_is_rejected),
		cmocka_unit_test(path_len_too_long_is_rejected),
		cmocka_unit_test(frame_counts_over_max_frames_are_rejected),
		cmocka_unit_test(frame_counts_past_record_size_are_rejected),
		cmocka_unit_test(unknown_type_is_rejected),
		cmocka_unit_test(code_load_of_unknown_source_is_rejected),
		cmocka_unit_test(code_range_that_wraps_is_rejected),
		cmocka_unit_test(java_code_decodes_as_usdt_code_load_with_java_name),
		cmocka_unit_test(java_code_with_full_slots_is_cut_to_name_max),
		cmocka_unit_test(java_code_with_lying_lengths_is_rejected),
		cmocka_unit_test_setup_teardown(guard_page_faults_on_access, guard_setup,
						guard_teardown),
		cmocka_unit_test_setup_teardown(decode_never_reads_past_len, guard_setup,
						guard_teardown),
		cmocka_unit_test_setup_teardown(decode_of_lying_records_never_reads_past_len,
						guard_setup, guard_teardown),
		cmocka_unit_test_setup_teardown(decoded_events_hold_their_strings_and_frames,
						guard_setup, guard_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
