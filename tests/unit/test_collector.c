// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the join of events into log records (user/join/: collector.c, livecode.c,
 * frames.c; user/host/procfs.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "join/collector.h"
#include "host/elfsyms.h"
#include "host/procfs.h"
#include "jt_events.h"
#include "jt_log_format.h"
#include "base/membound.h"
#include "join/methods.h"
#include "base/sink.h"
#include "base/util.h"
#include "unit/capture.h"

/* tests/fixtures/proc/4242 is a copy of a real process's /proc files. */
#define PROC_ROOT "tests/fixtures/proc"
#define PID 4242
#define OTHER_PID 5000		/* no /proc entry in the fixture tree */
#define JIT 0x7f3a40000000ULL	/* the fixture's anonymous rwxp mapping: JIT code lives here */
#define LIBC_X 0x7fd98fa0b000ULL	/* libc's r-xp mapping, file offset 0x26000 */
#define LIBC_X_END 0x7fd98fb61000ULL
#define LIBC_PGOFF 0x26000ULL
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define BIN_X 0x55d0c4a02000ULL	/* the binary's r-xp mapping, file offset 0x2000 */
#define BIN_PGOFF 0x2000ULL
#define BIN "/usr/bin/jitapp"
#define KADDR 0xffffffff81a01234ULL


struct fx {
	struct capture cap;
	struct jt_sink sink;
	struct jt_collector *c;
};

static int fx_setup(void **state)
{
	struct jt_collector_opts o = { .proc_root = PROC_ROOT };
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->sink = (struct jt_sink){ capture_record, &f->cap };
	f->c = jt_collector__new(&o, &f->sink);
	if (!f->c) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	size_t i;

	jt_collector__free(f->c);
	for (i = 0; i < f->cap.n; i++)
		free(f->cap.recs[i]);
	free(f->cap.recs);
	free(f);
	return 0;
}

/* ---- events ---- */

/* Events are flat (user/base/event.h): each is built in a buffer of its own, tail included. */
typedef union jt_event_buf evbuf;

static evbuf ev_base(uint64_t ts, uint16_t type, uint32_t pid, uint32_t tid)
{
	evbuf b;

	memset(&b, 0, sizeof(b));
	b.ev = (struct jt_event){ .ts = ts, .len = JT_EVENT_FIXED, .type = type, .pid = pid,
				  .tid = tid };
	return b;
}

static void put_str(evbuf *b, const char *s)
{
	b->ev.str_len = strlen(s);
	memcpy(b->ev.tail, s, b->ev.str_len);
	b->ev.len = jt_event__size(b->ev.str_len + 1);
}

static evbuf ev_load(uint64_t ts, uint32_t pid, uint64_t id, uint64_t start,
		     uint64_t size, uint32_t src, const char *name)
{
	evbuf b = ev_base(ts, JT_EV_CODE_LOAD, pid, pid);

	b.ev.id = id;
	b.ev.start = start;
	b.ev.size = size;
	b.ev.src = src;
	put_str(&b, name);
	return b;
}

static evbuf ev_call(uint32_t type, uint64_t ts, uint32_t pid, uint32_t tid, uint64_t id)
{
	evbuf b = ev_base(ts, type, pid, tid);

	b.ev.id = id;
	return b;
}

static evbuf ev_sample(uint64_t ts, uint32_t pid, uint16_t nr_kernel, uint16_t nr_user,
		       const __u64 *ips)
{
	evbuf b = ev_base(ts, JT_EV_SAMPLE, pid, pid + 1);

	b.ev.cpu = 1;
	b.ev.nr_kernel = nr_kernel;
	b.ev.nr_user = nr_user;
	memcpy(b.ev.tail, ips, 8 * ((size_t)nr_kernel + nr_user));
	b.ev.len = jt_event__size(8 * ((size_t)nr_kernel + nr_user));
	return b;
}

/* Thread pid + 1 of pid ran again at ts after off_ns off the CPU, with these frames. */
static evbuf ev_offcpu(uint64_t ts, uint32_t pid, uint64_t off_ns, uint16_t state,
		       uint32_t count, uint16_t nr_user, const __u64 *ips)
{
	evbuf b = ev_sample(ts, pid, 0, nr_user, ips);

	b.ev.type = JT_EV_OFFCPU;
	b.ev.off_ns = off_ns;
	b.ev.off_left_ts = ts - off_ns;
	b.ev.off_count = count;
	b.ev.off_state = state;
	return b;
}

/* comm: JT_COMM_LEN bytes, as the ring buffer carries it */
static evbuf ev_exec(uint64_t ts, uint32_t pid, const char *comm, const char *path)
{
	evbuf b = ev_base(ts, JT_EV_EXEC, pid, pid);

	memcpy(b.ev.comm, comm, JT_COMM_LEN);
	put_str(&b, path);
	return b;
}

static evbuf ev_exit(uint64_t ts, uint32_t pid)
{
	evbuf b = ev_base(ts, JT_EV_EXIT, pid, pid);

	memcpy(b.ev.comm, "jitapp", 7);
	return b;
}

static evbuf ev_fork(uint64_t ts, uint32_t pid, uint32_t child)
{
	evbuf b = ev_base(ts, JT_EV_FORK, pid, pid);

	b.ev.child_pid = child;
	memcpy(b.ev.comm, "jitapp", 7);
	return b;
}

static void send(struct fx *f, evbuf b)
{
	assert_int_equal(jt_collector__event(f->c, &b.ev), 0);
}

/* A sample with one user frame, the leaf. */
static void sample_at(struct fx *f, uint64_t ts, uint32_t pid, uint64_t ip)
{
	__u64 ips[1] = { ip };

	send(f, ev_sample(ts, pid, 0, 1, ips));
}

/* ---- reading what was written ---- */

static size_t count_type(const struct fx *f, unsigned int type)
{
	size_t i, n = 0;

	for (i = 0; i < f->cap.n; i++)
		n += f->cap.recs[i]->type == type;
	return n;
}

/* Index of the k-th record of a type (k from 0), or SIZE_MAX. */
static size_t nth_index(const struct fx *f, unsigned int type, size_t k)
{
	size_t i;

	for (i = 0; i < f->cap.n; i++)
		if (f->cap.recs[i]->type == type && k-- == 0)
			return i;
	return SIZE_MAX;
}

static const struct jt_rec_sample *nth_sample(const struct fx *f, size_t k)
{
	size_t i = nth_index(f, JT_REC_SAMPLE, k);

	assert_true(i != SIZE_MAX);
	return (const struct jt_rec_sample *)f->cap.recs[i];
}

static size_t method_def_index(const struct fx *f, uint64_t id)
{
	size_t i, found = SIZE_MAX;

	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_method *m = (const void *)f->cap.recs[i];

		if (m->h.type == JT_REC_METHOD && m->id == id) {
			assert_true(found == SIZE_MAX);	/* defined once */
			found = i;
		}
	}
	assert_true(found != SIZE_MAX);
	return found;
}

static const struct jt_rec_method *method_def(const struct fx *f, uint64_t id)
{
	return (const void *)f->cap.recs[method_def_index(f, id)];
}

static const struct jt_rec_module *module_def(const struct fx *f, uint64_t id)
{
	size_t i;

	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_module *m = (const void *)f->cap.recs[i];

		if (m->h.type == JT_REC_MODULE && m->id == id)
			return m;
	}
	fail_msg("module %llu is not defined", (unsigned long long)id);
	return NULL;
}

static void assert_method_named_at(const struct fx *f, uint64_t id, const char *name, int line)
{
	const struct jt_rec_method *m = method_def(f, id);

	if (m->name_len != strlen(name) || memcmp(m->name, name, m->name_len))
		fail_msg("line %d: method %llu is \"%.*s\", not \"%s\"", line,
			 (unsigned long long)id, (int)m->name_len, m->name, name);
}
#define assert_method_named(f, id, name) assert_method_named_at(f, id, name, __LINE__)

/* The method a frame names (asserting it names one); line is the caller's. */
static uint64_t frame_method_at(const struct jt_frame *fr, int line)
{
	if (JT_FRAME_KIND(fr->ref) != JT_FRAME_METHOD)
		fail_msg("line %d: frame of kind %u at 0x%llx where a method was expected", line,
			 JT_FRAME_KIND(fr->ref), (unsigned long long)fr->off);
	return JT_FRAME_ID(fr->ref);
}
#define frame_method(fr) frame_method_at(fr, __LINE__)

static bool proc_known(const uint32_t *procs, size_t n, uint32_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (procs[i] == pid)
			return true;
	return false;
}

/*
 * The log's promises, checked on everything a test made the collector write: timestamps
 * never go back; every method, module and symbol is defined once, by a process already described,
 * before anything refers to it, and only that process refers to it; kernel frames lead.
 */
static void assert_log_promises(const struct fx *f)
{
	enum { MAXID = 1 << 16 };
	uint32_t *method_pid = calloc(MAXID, sizeof(*method_pid));
	uint32_t *module_pid = calloc(MAXID, sizeof(*module_pid));
	uint32_t *symbol_pid = calloc(MAXID, sizeof(*symbol_pid));	/* ~0: the kernel's */
	uint32_t procs[64];
	size_t nprocs = 0, i, j;
	uint64_t ts = 0;

	assert_non_null(method_pid);
	assert_non_null(module_pid);
	assert_non_null(symbol_pid);
	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_hdr *h = f->cap.recs[i];

		if (h->ts < ts)
			fail_msg("record %zu (type %u) has ts %llu after %llu", i, h->type,
				 (unsigned long long)h->ts, (unsigned long long)ts);
		ts = h->ts;
		assert_int_equal(h->size % 8, 0);
		switch (h->type) {
		case JT_REC_PROC: {
			const struct jt_rec_proc *p = (const void *)h;

			if (!proc_known(procs, nprocs, p->pid)) {
				assert_true(nprocs < JT_ARRAY_SIZE(procs));
				procs[nprocs++] = p->pid;
			}
			break;
		}
		case JT_REC_METHOD: {
			const struct jt_rec_method *m = (const void *)h;

			assert_true(m->id > 0 && m->id < MAXID);
			if (method_pid[m->id])
				fail_msg("method %llu defined twice", (unsigned long long)m->id);
			if (!proc_known(procs, nprocs, m->pid))
				fail_msg("method %llu of pid %u before its proc record",
					 (unsigned long long)m->id, m->pid);
			method_pid[m->id] = m->pid;
			break;
		}
		case JT_REC_MODULE: {
			const struct jt_rec_module *m = (const void *)h;

			assert_true(m->id > 0 && m->id < MAXID);
			assert_int_equal(module_pid[m->id], 0);
			assert_true(proc_known(procs, nprocs, m->pid));
			module_pid[m->id] = m->pid;
			break;
		}
		case JT_REC_SYMBOL: {
			const struct jt_rec_symbol *y = (const void *)h;

			assert_true(y->id > 0 && y->id < MAXID);
			assert_int_equal(symbol_pid[y->id], 0);
			/* a native symbol lies in a module of its own process */
			if (y->module)
				assert_int_equal(module_pid[y->module], y->pid);
			symbol_pid[y->id] = y->module ? y->pid : UINT32_MAX;
			break;
		}
		case JT_REC_LATE: {
			const struct jt_rec_late *l = (const void *)h;

			assert_true(l->method > 0 && l->method < MAXID);
			assert_int_equal(method_pid[l->method], l->pid);
			assert_true(l->from_ts <= l->h.ts);
			break;
		}
		case JT_REC_ENTER:
		case JT_REC_LEAVE:
		case JT_REC_UNLOAD: {
			const struct jt_rec_call *c = (const void *)h;

			assert_true(c->id > 0 && c->id < MAXID);
			if (method_pid[c->id] != c->pid)
				fail_msg("record %zu (type %u) refers to method %llu of pid %u "
					 "before its definition", i, h->type,
					 (unsigned long long)c->id, c->pid);
			break;
		}
		case JT_REC_SAMPLE: {
			const struct jt_rec_sample *s = (const void *)h;
			bool user = false;

			assert_int_equal(h->size, sizeof(*s) + s->nr_frames * sizeof(*s->frames));
			assert_true(proc_known(procs, nprocs, s->pid));
			for (j = 0; j < s->nr_frames; j++) {
				const struct jt_frame *fr = &s->frames[j];
				uint64_t id = JT_FRAME_ID(fr->ref);

				switch (JT_FRAME_KIND(fr->ref)) {
				case JT_FRAME_KERNEL:
					assert_false(user);
					break;
				case JT_FRAME_METHOD:
					user = true;
					assert_true(id > 0 && id < MAXID);
					if (method_pid[id] != s->pid)
						fail_msg("sample %zu frame %zu: method %llu not "
							 "defined for pid %u", i, j,
							 (unsigned long long)id, s->pid);
					break;
				case JT_FRAME_MODULE:
					user = true;
					assert_true(id > 0 && id < MAXID);
					assert_int_equal(module_pid[id], s->pid);
					break;
				case JT_FRAME_USER:
					user = true;
					break;
				case JT_FRAME_TRUNCATED:	/* the outermost */
					assert_int_equal(j, s->nr_frames - 1);
					break;
				case JT_FRAME_SYMBOL:
					assert_true(id > 0 && id < MAXID);
					if (symbol_pid[id] == UINT32_MAX) {	/* the kernel's */
						assert_false(user);
						break;
					}
					user = true;
					assert_int_equal(symbol_pid[id], s->pid);
					break;
				default:
					fail_msg("sample %zu frame %zu: kind %u", i, j,
						 JT_FRAME_KIND(fr->ref));
				}
			}
			break;
		}
		default:
			break;
		}
	}
	free(method_pid);
	free(module_pid);
	free(symbol_pid);
}

/* ---- tests ---- */

static void sample_in_loaded_method_is_named_after_its_definition(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_method *m;
	const struct jt_rec_sample *s;
	struct jt_collector_stats st;

	send(f, ev_load(100, PID, 11, JIT + 0x1000, 0x100, JT_SRC_AGENT, "Foo.hot(I)I"));
	assert_int_equal(f->cap.n, 0);	/* nothing refers to it yet */
	sample_at(f, 200, PID, JIT + 0x1010);
	assert_int_equal(f->cap.n, 3);
	assert_int_equal(f->cap.recs[0]->type, JT_REC_PROC);
	assert_int_equal(f->cap.recs[1]->type, JT_REC_METHOD);
	assert_int_equal(f->cap.recs[2]->type, JT_REC_SAMPLE);
	m = (const void *)f->cap.recs[1];
	assert_int_equal(m->h.ts, 200);
	assert_int_equal(m->start, JIT + 0x1000);
	assert_int_equal(m->size, 0x100);
	assert_int_equal(m->load_ts, 100);
	assert_int_equal(m->agent_id, 11);
	assert_int_equal(m->pid, PID);
	assert_int_equal(m->src, JT_SRC_AGENT);
	assert_method_named(f, m->id, "Foo.hot(I)I");
	s = nth_sample(f, 0);
	assert_int_equal(s->h.ts, 200);
	assert_int_equal(s->pid, PID);
	assert_int_equal(s->tid, PID + 1);
	assert_int_equal(s->cpu, 1);
	assert_int_equal(s->nr_frames, 1);
	assert_int_equal(frame_method(&s->frames[0]), m->id);
	assert_int_equal(s->frames[0].off, 0x10);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.methods, 1);
	assert_int_equal(st.events, 2);
	assert_log_promises(f);
}

static void proc_record_carries_comm_and_command_line(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_proc *p;
	const char *want = "/usr/bin/jitapp --threads 4";

	sample_at(f, 10, PID, 0x10000);
	assert_int_equal(f->cap.recs[0]->type, JT_REC_PROC);
	p = (const void *)f->cap.recs[0];
	assert_int_equal(p->pid, PID);
	assert_int_equal(p->h.ts, 10);
	assert_string_equal(p->comm, "jitapp");
	assert_int_equal(p->cmdline_len, strlen(want));
	assert_memory_equal(p->cmdline, want, strlen(want));
	assert_int_equal(p->h.size, jt_round8(sizeof(*p) + strlen(want)));
	/* one proc record however many samples */
	sample_at(f, 11, PID, 0x10000);
	assert_int_equal(count_type(f, JT_REC_PROC), 1);
	assert_log_promises(f);
}

/*
 * A process runs on in the kernel after its exit record: a sample then defines it again,
 * with /proc gone (OTHER_PID has no /proc entry). The sampled thread's name stands for it.
 */
static void sample_after_exit_names_the_process_by_its_main_thread(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_proc *p;
	__u64 none[1] = { 0 };
	evbuf b;

	send(f, ev_exec(10, OTHER_PID, "toyjit\0\0\0\0\0\0\0\0\0", "/usr/bin/toyjit"));
	sample_at(f, 11, OTHER_PID, 0x10000);
	send(f, ev_exit(12, OTHER_PID));
	b = ev_sample(13, OTHER_PID, 0, 0, none);	/* its mm gone: no user frame */
	memcpy(b.ev.thread, "toyjit", 7);
	send(f, b);
	assert_int_equal(count_type(f, JT_REC_PROC), 2);
	p = (const void *)f->cap.recs[nth_index(f, JT_REC_PROC, 1)];
	assert_int_equal(p->h.ts, 13);
	assert_string_equal(p->comm, "toyjit");
	assert_log_promises(f);
}

static void frame_in_libc_is_a_module_frame_with_file_offset(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_module *mod;
	const struct jt_rec_sample *s;
	size_t mi;

	sample_at(f, 50, PID, LIBC_X + 0x1234);
	assert_int_equal(f->cap.n, 3);
	assert_int_equal(f->cap.recs[0]->type, JT_REC_PROC);
	mi = nth_index(f, JT_REC_MODULE, 0);
	assert_int_equal(mi, 1);
	s = nth_sample(f, 0);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_MODULE);
	assert_int_equal(s->frames[0].off, 0x1234 + LIBC_PGOFF);
	mod = module_def(f, JT_FRAME_ID(s->frames[0].ref));
	assert_int_equal(mod->h.ts, 50);
	assert_int_equal(mod->start, LIBC_X);
	assert_int_equal(mod->end, LIBC_X_END);
	assert_int_equal(mod->pgoff, LIBC_PGOFF);
	assert_int_equal(mod->pid, PID);
	assert_int_equal(mod->path_len, strlen(LIBC));
	assert_memory_equal(mod->path, LIBC, strlen(LIBC));
	assert_log_promises(f);
}

static void frames_in_one_module_share_one_module_record(void **state)
{
	struct fx *f = *state;
	__u64 ips[3] = { LIBC_X + 0x10, BIN_X + 0x400, LIBC_X + 0x2000 };
	const struct jt_rec_sample *s;
	uint64_t libc_id, bin_id;

	send(f, ev_sample(60, PID, 0, 3, ips));
	sample_at(f, 61, PID, LIBC_X + 0x99);
	assert_int_equal(count_type(f, JT_REC_MODULE), 2);
	s = nth_sample(f, 0);
	libc_id = JT_FRAME_ID(s->frames[0].ref);
	bin_id = JT_FRAME_ID(s->frames[1].ref);
	assert_int_not_equal(libc_id, bin_id);
	assert_int_equal(JT_FRAME_ID(s->frames[2].ref), libc_id);
	assert_int_equal(s->frames[1].off, 0x400 + BIN_PGOFF);
	assert_memory_equal(module_def(f, bin_id)->path, BIN, strlen(BIN));
	assert_int_equal(JT_FRAME_ID(nth_sample(f, 1)->frames[0].ref), libc_id);
	assert_log_promises(f);
}

/*
 * An address nothing names stays a user frame (a perf-map line read later may name it);
 * in anonymous executable memory (the fixture's JIT region) it says so, by a module named
 * for that memory, so that views show "[anon exec]", never a bare address.
 */
/*
 * An off-CPU record: its stack joined like a sample's, as of when the thread ran again, in a
 * sample record whose time is when it left; a sum of short waits has no frames.
 */
static void offcpu_record_joins_its_stack_and_keeps_its_times(void **state)
{
	struct fx *f = *state;
	__u64 ips[2] = { LIBC_X + 0x10, JIT + 0x1010 };
	const struct jt_rec_offcpu *o;
	size_t i;

	send(f, ev_load(1, PID, 1, JIT + 0x1000, 0x100, JT_SRC_AGENT, "Lock.await()"));
	send(f, ev_offcpu(100, PID, 40, JT_OFF_SLEEP, 1, 2, ips));
	send(f, ev_offcpu(200, PID, 7000, JT_OFF_SHORT, 12, 0, ips));
	assert_int_equal(count_type(f, JT_REC_OFFCPU), 2);
	i = nth_index(f, JT_REC_OFFCPU, 0);
	o = (const void *)f->cap.recs[i];
	assert_int_equal(o->h.ts, 100);
	assert_int_equal(o->h.size, offsetof(struct jt_rec_offcpu, smp) + o->smp.h.size);
	assert_int_equal(o->smp.h.type, JT_REC_SAMPLE);
	assert_int_equal(o->smp.h.ts, 60);
	assert_int_equal(o->off_ns, 40);
	assert_int_equal(o->count, 1);
	assert_int_equal(o->state, JT_OFF_SLEEP);
	assert_int_equal(o->smp.pid, PID);
	assert_int_equal(o->smp.tid, PID + 1);
	assert_int_equal(o->smp.nr_frames, 2);
	assert_int_equal(JT_FRAME_KIND(o->smp.frames[0].ref), JT_FRAME_MODULE);
	assert_int_equal(JT_FRAME_KIND(o->smp.frames[1].ref), JT_FRAME_METHOD);
	assert_int_equal(o->smp.frames[1].off, 0x10);
	o = (const void *)f->cap.recs[nth_index(f, JT_REC_OFFCPU, 1)];
	assert_int_equal(o->state, JT_OFF_SHORT);
	assert_int_equal(o->count, 12);
	assert_int_equal(o->off_ns, 7000);
	assert_int_equal(o->smp.nr_frames, 0);
	assert_log_promises(f);
}

/*
 * A leaf nothing names stays an address; so does a caller in anonymous executable memory.
 * A caller in no executable mapping of a process whose mappings are known is where a
 * frame-pointer walk went astray: the stack is cut there, and counted.
 */
static void unknown_address_is_a_user_frame(void **state)
{
	struct fx *f = *state;
	/* unmapped leaf, anonymous executable, unmapped, a mapping that is not executable */
	__u64 ips[4] = { 0x10000, JIT + 0x5000, 0x20000, LIBC_X_END + 0x10 };
	const struct jt_rec_module *m;
	const struct jt_rec_sample *s;
	struct jt_collector_stats st;
	size_t i;

	send(f, ev_load(1, PID, 1, JIT + 0x1000, 0x100, JT_SRC_AGENT, "elsewhere"));
	send(f, ev_sample(70, PID, 0, 4, ips));
	s = nth_sample(f, 0);
	assert_int_equal(s->nr_frames, 3);	/* the leaf, the JIT caller, [truncated] */
	for (i = 0; i < 2; i++) {
		assert_int_equal(JT_FRAME_KIND(s->frames[i].ref), JT_FRAME_USER);
		assert_int_equal(s->frames[i].off, ips[i]);
	}
	assert_int_equal(JT_FRAME_ID(s->frames[0].ref), 0);
	assert_int_equal(JT_FRAME_KIND(s->frames[2].ref), JT_FRAME_TRUNCATED);
	assert_int_equal(s->frames[2].off, 2);
	assert_int_equal(count_type(f, JT_REC_METHOD), 0);
	assert_int_equal(count_type(f, JT_REC_MODULE), 1);
	m = (const void *)f->cap.recs[nth_index(f, JT_REC_MODULE, 0)];
	assert_int_equal(JT_FRAME_ID(s->frames[1].ref), m->id);
	assert_int_equal(m->start, JIT);
	assert_int_equal(m->path_len, strlen("[anon exec]"));
	assert_memory_equal(m->path, "[anon exec]", m->path_len);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.broken_stacks, 1);
	/* the walk goes astray at once, from the leaf */
	ips[0] = JIT + 0x5000;
	ips[1] = LIBC_X_END + 0x10;
	send(f, ev_sample(71, PID, 0, 2, ips));
	s = nth_sample(f, 1);
	assert_int_equal(s->nr_frames, 2);
	assert_int_equal(JT_FRAME_KIND(s->frames[1].ref), JT_FRAME_TRUNCATED);
	assert_int_equal(s->frames[1].off, 1);
	/* a process with no /proc entry at all: nothing is known of it, nothing is cut */
	ips[0] = LIBC_X + 0x10;
	ips[1] = 0x20000;
	send(f, ev_sample(72, OTHER_PID, 0, 2, ips));
	s = nth_sample(f, 2);
	assert_int_equal(s->nr_frames, 2);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_USER);
	assert_int_equal(JT_FRAME_KIND(s->frames[1].ref), JT_FRAME_USER);
	assert_int_equal(s->frames[1].off, 0x20000);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.broken_stacks, 2);
	assert_log_promises(f);
}

/*
 * The kernel's special mappings name their frames ([uprobes] holds the instructions a
 * uprobe steps out of line, and --calls recordings sample there; [vsyscall]): a module
 * frame, never an unknown address.
 */
static void special_mappings_name_their_frames(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_sample *s;
	const struct jt_rec_module *m;

	sample_at(f, 72, PID, 0x7ffff7ff0010ULL);
	sample_at(f, 73, PID, 0xffffffffff600400ULL);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 2);
	s = nth_sample(f, 0);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_MODULE);
	m = module_def(f, JT_FRAME_ID(s->frames[0].ref));
	assert_int_equal(m->path_len, 9);
	assert_memory_equal(m->path, "[uprobes]", 9);
	assert_int_equal(s->frames[0].off, 0x10);
	s = nth_sample(f, 1);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_MODULE);
	m = module_def(f, JT_FRAME_ID(s->frames[0].ref));
	assert_int_equal(m->path_len, 10);
	assert_memory_equal(m->path, "[vsyscall]", 10);
	assert_int_equal(s->frames[0].off, 0x400);
	assert_log_promises(f);
}

static void kernel_frames_come_first(void **state)
{
	struct fx *f = *state;
	__u64 ips[4] = { KADDR, KADDR + 0x100, JIT + 0x1008, LIBC_X + 0x40 };
	const struct jt_rec_sample *s;

	send(f, ev_load(1, PID, 1, JIT + 0x1000, 0x100, JT_SRC_AGENT, "m"));
	send(f, ev_sample(80, PID, 2, 2, ips));
	s = nth_sample(f, 0);
	assert_int_equal(s->nr_frames, 4);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_KERNEL);
	assert_int_equal(s->frames[0].off, KADDR);
	assert_int_equal(JT_FRAME_KIND(s->frames[1].ref), JT_FRAME_KERNEL);
	assert_int_equal(s->frames[1].off, KADDR + 0x100);
	frame_method(&s->frames[2]);
	assert_int_equal(s->frames[2].off, 8);
	assert_int_equal(JT_FRAME_KIND(s->frames[3].ref), JT_FRAME_MODULE);
	/* kernel frames alone */
	send(f, ev_sample(81, PID, 2, 0, ips));
	s = nth_sample(f, 1);
	assert_int_equal(s->nr_frames, 2);
	assert_int_equal(JT_FRAME_KIND(s->frames[1].ref), JT_FRAME_KERNEL);
	assert_log_promises(f);
}

/* A caller's frame holds a return address, which may be the first byte after the call. */
static void return_address_just_past_a_method_names_that_method(void **state)
{
	struct fx *f = *state;
	__u64 ips[3] = { 0x10000, JIT + 0x1100, JIT + 0x1000 };
	const struct jt_rec_sample *s;
	uint64_t a;

	send(f, ev_load(1, PID, 1, JIT + 0x1000, 0x100, JT_SRC_AGENT, "A"));
	send(f, ev_load(2, PID, 2, JIT + 0x1100, 0x100, JT_SRC_AGENT, "B"));	/* adjacent */
	send(f, ev_sample(90, PID, 0, 3, ips));
	s = nth_sample(f, 0);
	a = frame_method(&s->frames[1]);
	assert_method_named(f, a, "A");		/* not B, though B starts there */
	assert_int_equal(s->frames[1].off, 0x100);
	/* a caller frame at a method's first byte was called from something before it */
	assert_int_equal(JT_FRAME_KIND(s->frames[2].ref), JT_FRAME_USER);
	/* the leaf is the instruction itself: at B's start it is B */
	sample_at(f, 91, PID, JIT + 0x1100);
	assert_method_named(f, frame_method(&nth_sample(f, 1)->frames[0]), "B");
	assert_int_equal(nth_sample(f, 1)->frames[0].off, 0);
	assert_log_promises(f);
}

static void return_address_just_past_a_mapping_names_that_module(void **state)
{
	struct fx *f = *state;
	__u64 ips[2] = { LIBC_X_END, LIBC_X_END };
	const struct jt_rec_sample *s;

	send(f, ev_sample(95, PID, 0, 2, ips));
	s = nth_sample(f, 0);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_USER);	/* r--p */
	assert_int_equal(JT_FRAME_KIND(s->frames[1].ref), JT_FRAME_MODULE);
	assert_int_equal(s->frames[1].off, LIBC_X_END - LIBC_X + LIBC_PGOFF);
	assert_log_promises(f);
}

/* Promise 3: a sample names the code live at its time, not what was last put there. */
static void address_reuse_names_the_code_live_at_each_sample(void **state)
{
	struct fx *f = *state;
	const uint64_t x = JIT + 0x2000;
	const struct jt_rec_call *u;
	uint64_t a, b;

	send(f, ev_load(100, PID, 1, x, 0x80, JT_SRC_AGENT, "A"));
	sample_at(f, 110, PID, x + 8);
	send(f, ev_call(JT_EV_CODE_UNLOAD, 120, PID, PID, 1));
	send(f, ev_load(130, PID, 2, x, 0x80, JT_SRC_AGENT, "B"));
	sample_at(f, 140, PID, x + 8);
	a = frame_method(&nth_sample(f, 0)->frames[0]);
	b = frame_method(&nth_sample(f, 1)->frames[0]);
	assert_int_not_equal(a, b);
	assert_method_named(f, a, "A");
	assert_method_named(f, b, "B");
	assert_int_equal(method_def(f, b)->load_ts, 130);
	assert_int_equal(count_type(f, JT_REC_UNLOAD), 1);
	u = (const void *)f->cap.recs[nth_index(f, JT_REC_UNLOAD, 0)];
	assert_int_equal(u->id, a);
	assert_int_equal(u->h.ts, 120);
	assert_int_equal(u->pid, PID);
	assert_true(nth_index(f, JT_REC_UNLOAD, 0) < method_def_index(f, b));
	assert_log_promises(f);
}

/* The runtime may reuse memory without telling us it freed it first. */
static void code_loaded_over_live_code_replaces_it(void **state)
{
	struct fx *f = *state;
	const uint64_t x = JIT + 0x3000;
	uint64_t a, b;

	send(f, ev_load(100, PID, 1, x, 0x100, JT_SRC_AGENT, "A"));
	sample_at(f, 110, PID, x + 0x40);
	send(f, ev_load(120, PID, 2, x + 0x20, 0x40, JT_SRC_AGENT, "B"));
	sample_at(f, 130, PID, x + 0x40);
	sample_at(f, 131, PID, x + 0x10);	/* A's old range, outside B: nothing now */
	a = frame_method(&nth_sample(f, 0)->frames[0]);
	b = frame_method(&nth_sample(f, 1)->frames[0]);
	assert_method_named(f, a, "A");
	assert_method_named(f, b, "B");
	assert_int_equal(nth_sample(f, 1)->frames[0].off, 0x20);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 2)->frames[0].ref), JT_FRAME_USER);
	assert_log_promises(f);
}

/* A collector made with o in place of the fixture's. */
/* ---- inlined scopes from the agent, in pieces ---- */

/* A JT_REC_INLINE payload: one range ending at end, in one scope of name at line. */
static size_t inline_payload(unsigned char *buf, uint32_t end, const char *name, uint32_t line)
{
	struct jt_inline_head h = { .nr_ranges = 1, .nr_scopes = 1,
				    .names_len = strlen(name) + 1 };
	struct jt_inline_range r = { .off = end, .scope = 0 };
	struct jt_inline_scope sc = { .name = 0, .file = JT_INLINE_NONE, .line = line,
				      .caller = JT_INLINE_NONE };
	size_t n = 0;

	memcpy(buf + n, &h, sizeof(h));
	n += sizeof(h);
	memcpy(buf + n, &r, sizeof(r));
	n += sizeof(r);
	memcpy(buf + n, &sc, sizeof(sc));
	n += sizeof(sc);
	memcpy(buf + n, name, h.names_len);
	return n + h.names_len;
}

static evbuf ev_inline(uint64_t ts, uint32_t pid, uint64_t id, const unsigned char *payload,
		       uint32_t off, uint32_t len, uint32_t total)
{
	evbuf b = ev_base(ts, JT_EV_CODE_INLINE, pid, pid);

	b.ev.inl_of = id;
	b.ev.inl_off = off;
	b.ev.inl_total = total;
	b.ev.str_len = len;
	memcpy(b.ev.tail, payload + off, len);
	b.ev.len = jt_event__size(len + 1);
	return b;
}

/* The payload of the k-th inline record, checked to follow its method's definition. */
static const struct jt_rec_inline *nth_inline(const struct fx *f, size_t k, uint64_t method)
{
	size_t i = nth_index(f, JT_REC_INLINE, k);
	const struct jt_rec_inline *r;

	assert_true(i != SIZE_MAX);
	r = (const void *)f->cap.recs[i];
	assert_int_equal(r->method, method);
	assert_int_equal(r->pid, PID);
	assert_true(i > method_def_index(f, method));
	return r;
}

/*
 * An agent's payload in two pieces (the second longer than the first) is joined and
 * written whole right after its method's definition, before the sample that needed it.
 */
static void inline_pieces_are_joined_after_the_method_definition(void **state)
{
	struct fx *f = *state;
	unsigned char payload[128];
	size_t n = inline_payload(payload, 0x80, "Mix.mix(long)", 9);
	const struct jt_rec_inline *r;
	const struct jt_rec_method *m;

	send(f, ev_load(100, PID, 11, JIT + 0x1000, 0x100, JT_SRC_AGENT, "Outer.run()"));
	send(f, ev_inline(101, PID, 11, payload, 0, 20, n));
	send(f, ev_inline(102, PID, 11, payload, 20, n - 20, n));
	assert_int_equal(f->cap.n, 0);	/* nothing refers to it yet */
	sample_at(f, 200, PID, JIT + 0x1010);
	assert_int_equal(f->cap.n, 4);
	assert_int_equal(f->cap.recs[1]->type, JT_REC_METHOD);
	assert_int_equal(f->cap.recs[2]->type, JT_REC_INLINE);
	assert_int_equal(f->cap.recs[3]->type, JT_REC_SAMPLE);
	m = (const void *)f->cap.recs[1];
	r = nth_inline(f, 0, m->id);
	assert_int_equal(r->h.size, jt_round8(offsetof(struct jt_rec_inline, head) + n));
	assert_memory_equal(&r->head, payload, n);
	assert_log_promises(f);
}

/*
 * Code loaded over code at the same address (the JVMTI agent unloads the old first) brings
 * its own scopes: each after its method, the old method's kept for the samples before.
 */
static void inline_scopes_follow_the_code_live_at_their_time(void **state)
{
	struct fx *f = *state;
	unsigned char one[128], two[128];
	size_t n1 = inline_payload(one, 0x80, "Mix.mix(long)", 9);
	size_t n2 = inline_payload(two, 0x40, "Add.add(int)", 20);
	const struct jt_rec_inline *r;

	send(f, ev_load(100, PID, 11, JIT + 0x1000, 0x100, JT_SRC_AGENT, "Outer.run()"));
	sample_at(f, 150, PID, JIT + 0x1010);
	send(f, ev_inline(160, PID, 11, one, 0, n1, n1));	/* defined: written at once */
	send(f, ev_call(JT_EV_CODE_UNLOAD, 199, PID, PID, 11));
	send(f, ev_load(200, PID, 12, JIT + 0x1000, 0x100, JT_SRC_AGENT, "Outer.run()"));
	send(f, ev_inline(201, PID, 12, two, 0, n2, n2));
	sample_at(f, 300, PID, JIT + 0x1010);
	assert_int_equal(count_type(f, JT_REC_METHOD), 2);
	assert_int_equal(count_type(f, JT_REC_INLINE), 2);
	r = nth_inline(f, 0, frame_method(&nth_sample(f, 0)->frames[0]));
	assert_int_equal(r->h.ts, 160);
	assert_memory_equal(&r->head, one, n1);
	r = nth_inline(f, 1, frame_method(&nth_sample(f, 1)->frames[0]));
	assert_memory_equal(&r->head, two, n2);
	assert_true(nth_sample(f, 0)->frames[0].ref != nth_sample(f, 1)->frames[0].ref);
	assert_log_promises(f);
}

/* A piece out of place (one before it lost) drops the payload; an unknown id is ignored. */
static void inline_with_a_piece_missing_is_dropped(void **state)
{
	struct fx *f = *state;
	unsigned char payload[128];
	size_t n = inline_payload(payload, 0x80, "Mix.mix(long)", 9);

	send(f, ev_load(100, PID, 11, JIT + 0x1000, 0x100, JT_SRC_AGENT, "Outer.run()"));
	send(f, ev_inline(101, PID, 11, payload, 0, 20, n));
	send(f, ev_inline(102, PID, 11, payload, 24, n - 24, n));	/* 20..24 lost */
	send(f, ev_inline(103, PID, 11, payload, 20, n - 20, n));	/* no start any more */
	send(f, ev_inline(104, PID, 99, payload, 0, n, n));		/* no such code */
	sample_at(f, 200, PID, JIT + 0x1010);
	assert_int_equal(count_type(f, JT_REC_METHOD), 1);
	assert_int_equal(count_type(f, JT_REC_INLINE), 0);
	assert_log_promises(f);
}

static void recollect(struct fx *f, const struct jt_collector_opts *o)
{
	jt_collector__free(f->c);
	f->c = jt_collector__new(o, &f->sink);
	assert_non_null(f->c);
}

/*
 * Inlined scopes waiting for their method's definition are charged to the memory bound:
 * past it they are counted (memory_scopes) and not kept; written, or gone with their
 * process, they give their bytes back. Pieces half-sent are charged too.
 */
static void inline_scopes_past_the_memory_bound_are_counted_not_kept(void **state)
{
	struct jt_membound mem = { 0 };
	struct jt_collector_opts o = { .proc_root = PROC_ROOT, .mem = &mem };
	struct jt_collector_stats st;
	unsigned char payload[128];
	size_t n = inline_payload(payload, 0x80, "Mix.mix(long)", 9);
	struct fx *f = *state;
	uint64_t methods;

	recollect(f, &o);
	send(f, ev_load(100, PID, 11, JIT + 0x1000, 0x100, JT_SRC_AGENT, "Outer.run()"));
	send(f, ev_load(100, PID, 12, JIT + 0x2000, 0x100, JT_SRC_AGENT, "Outer.two()"));
	methods = mem.used;
	mem.limit = methods + 3 * n / 2;	/* room for one payload and its header */
	send(f, ev_inline(101, PID, 11, payload, 0, n, n));
	assert_true(mem.used > methods);
	send(f, ev_inline(102, PID, 12, payload, 0, 20, n));	/* no room for a second */
	send(f, ev_inline(103, PID, 12, payload, 20, n - 20, n));
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.memory_scopes, 1);
	sample_at(f, 200, PID, JIT + 0x1010);
	sample_at(f, 201, PID, JIT + 0x2010);
	assert_int_equal(count_type(f, JT_REC_INLINE), 1);
	assert_int_equal(mem.used, methods);	/* written: given back */
	send(f, ev_inline(300, PID, 12, payload, 0, 20, n));	/* half-sent at the exit */
	assert_true(mem.used > methods);
	send(f, ev_exit(400, PID));
	assert_log_promises(f);
	jt_collector__free(f->c);
	f->c = NULL;
	assert_int_equal(mem.used, 0);	/* every charge given back */
}

/* Perf-map lines f0 .. f(n-1), 0x100 apart from JIT at times 100 on: the first k of PID,
 * the rest of pid. */
static void send_map_lines(struct fx *f, uint64_t n, uint64_t k, uint32_t pid)
{
	char name[24];
	uint64_t i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%llu", (unsigned long long)i);
		send(f, ev_load(100 + i, i < k ? PID : pid, 0, JIT + i * 0x100, 0x40,
				JT_SRC_PERFMAP, name));
	}
}

/* A line g1 over f1 of PID at 210: a sample at 220 (the second) is named by it. */
static void replace_f1(struct fx *f)
{
	send(f, ev_load(210, PID, 0, JIT + 0x100, 0x40, JT_SRC_PERFMAP, "g1"));
	sample_at(f, 220, PID, JIT + 0x100 + 8);
	assert_method_named(f, frame_method(&nth_sample(f, 1)->frames[0]), "g1");
}

/*
 * A process's perf map holds as many lines as it likes: past the cap a line at new addresses
 * is counted and not kept, while one that replaces live code still is (else samples there
 * would be named by the stale code); code that leaves (exec) makes room again.
 */
static void perfmap_methods_past_the_cap_are_counted_not_kept(void **state)
{
	struct jt_collector_opts o = { .proc_root = PROC_ROOT, .max_perfmap_methods = 4 };
	struct jt_collector_stats st;
	struct fx *f = *state;
	char name[16];
	uint64_t i;

	recollect(f, &o);
	send_map_lines(f, 6, 6, PID);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.perfmap_capped, 2);	/* f4 and f5 */
	sample_at(f, 200, PID, JIT + 4 * 0x100 + 8);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 0)->frames[0].ref), JT_FRAME_USER);
	replace_f1(f);	/* keeps the count at the cap: applied */
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.perfmap_capped, 2);
	/* agent code does not count against the perf map's cap */
	send(f, ev_load(230, PID, 7, JIT + 0x10000, 0x40, JT_SRC_AGENT, "agent_code"));
	sample_at(f, 240, PID, JIT + 0x10000 + 8);
	assert_method_named(f, frame_method(&nth_sample(f, 2)->frames[0]), "agent_code");
	/* a new program: its map starts from nothing */
	send(f, ev_exec(300, PID, "jitapp\0\0\0\0\0\0\0\0\0", "/usr/bin/jitapp"));
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "h%llu", (unsigned long long)i);
		send(f, ev_load(310 + i, PID, 0, JIT + i * 0x100, 0x40, JT_SRC_PERFMAP, name));
	}
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.perfmap_capped, 2);
	assert_log_promises(f);
}

/*
 * One memory bound over every process: past it code at new addresses is counted by its
 * source and not kept, code that replaces live code still is; what leaves (exec) gives its
 * bytes back, and once the collector is gone the account is empty again.
 */
static void methods_past_the_memory_bound_are_counted_not_kept(void **state)
{
	struct jt_membound mem = { .limit = 4 * jt_method__cost(2) };
	struct jt_collector_opts o = { .proc_root = PROC_ROOT, .mem = &mem };
	struct jt_collector_stats st;
	struct fx *f = *state;

	recollect(f, &o);
	send_map_lines(f, 5, 3, PID + 1);	/* processes share one account */
	send(f, ev_load(110, PID + 2, 7, JIT + 0x10000, 0x40, JT_SRC_AGENT, "ag"));
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.memory_perfmap, 1);	/* f4 */
	assert_int_equal(st.memory_code, 1);	/* ag */
	assert_int_equal(mem.used, mem.limit);
	sample_at(f, 200, PID + 1, JIT + 4 * 0x100 + 8);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 0)->frames[0].ref), JT_FRAME_USER);
	replace_f1(f);	/* applied, over the bound for as long as both are held */
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.memory_perfmap, 1);
	/* a new program: its code leaves, and makes room for the other process's */
	send(f, ev_exec(300, PID, "jitapp\0\0\0\0\0\0\0\0\0", "/usr/bin/jitapp"));
	send(f, ev_load(310, PID + 1, 0, JIT + 4 * 0x100, 0x40, JT_SRC_PERFMAP, "f4"));
	sample_at(f, 320, PID + 1, JIT + 4 * 0x100 + 8);
	assert_method_named(f, frame_method(&nth_sample(f, 2)->frames[0]), "f4");
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.memory_perfmap, 1);
	assert_log_promises(f);
	jt_collector__free(f->c);
	f->c = NULL;
	assert_int_equal(mem.used, 0);	/* every charge given back */
}

/* -p with a thread id records its process: the thread's status names the thread group. */
static void thread_id_resolves_to_its_process(void **state)
{
	uint32_t tgid = 0;

	(void)state;
	assert_int_equal(jt_procfs__read_tgid(PROC_ROOT, 4243, &tgid), 0);
	assert_int_equal(tgid, 4242);
	assert_int_equal(jt_procfs__read_tgid(PROC_ROOT, 4242, &tgid), 0);
	assert_int_equal(tgid, 4242);
	assert_int_equal(jt_procfs__read_tgid(PROC_ROOT, 4244, &tgid), -ENOENT);
}

static void enter_and_leave_reference_the_method_log_id(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_call *en, *lv;
	struct jt_collector_stats st;
	uint64_t id;

	send(f, ev_load(100, PID, 0x5151, JIT, 0x100, JT_SRC_AGENT, "Calls.me"));
	send(f, ev_call(JT_EV_ENTER, 110, PID, PID + 3, 0x5151));
	send(f, ev_call(JT_EV_LEAVE, 120, PID, PID + 3, 0x5151));
	assert_int_equal(count_type(f, JT_REC_METHOD), 1);
	en = (const void *)f->cap.recs[nth_index(f, JT_REC_ENTER, 0)];
	lv = (const void *)f->cap.recs[nth_index(f, JT_REC_LEAVE, 0)];
	id = en->id;
	assert_method_named(f, id, "Calls.me");
	assert_true(method_def_index(f, id) < nth_index(f, JT_REC_ENTER, 0));
	assert_int_equal(method_def(f, id)->agent_id, 0x5151);
	assert_int_equal(en->h.ts, 110);
	assert_int_equal(en->pid, PID);
	assert_int_equal(en->tid, PID + 3);
	assert_int_equal(en->h.size, sizeof(*en));
	assert_int_equal(lv->id, id);
	assert_int_equal(lv->h.ts, 120);
	assert_int_equal(lv->tid, PID + 3);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.calls, 2);
	assert_int_equal(st.unknown_ids, 0);
	assert_log_promises(f);
}

/* Methods loaded before recording began still get a name, defined once. */
static void enter_of_unknown_id_defines_a_stand_in_once(void **state)
{
	struct fx *f = *state;
	struct jt_collector_stats st;
	uint64_t id;

	send(f, ev_call(JT_EV_ENTER, 10, PID, PID, 77));
	send(f, ev_call(JT_EV_ENTER, 11, PID, PID, 77));
	send(f, ev_call(JT_EV_LEAVE, 12, PID, PID, 77));
	send(f, ev_call(JT_EV_LEAVE, 13, PID, PID, 77));
	assert_int_equal(count_type(f, JT_REC_METHOD), 1);
	id = ((const struct jt_rec_call *)f->cap.recs[nth_index(f, JT_REC_ENTER, 0)])->id;
	assert_method_named(f, id, "[unknown method 77]");
	assert_int_equal(method_def(f, id)->agent_id, 77);
	assert_int_equal(method_def(f, id)->pid, PID);
	assert_int_equal(((const struct jt_rec_call *)
			  f->cap.recs[nth_index(f, JT_REC_LEAVE, 1)])->id, id);
	jt_collector__stats(f->c, &st);
	assert_true(st.unknown_ids >= 1);
	assert_int_equal(st.calls, 4);
	/* another id is another stand-in */
	send(f, ev_call(JT_EV_ENTER, 14, PID, PID, 78));
	assert_int_equal(count_type(f, JT_REC_METHOD), 2);
	assert_method_named(f, ((const struct jt_rec_call *)
				f->cap.recs[nth_index(f, JT_REC_ENTER, 2)])->id,
			    "[unknown method 78]");
	assert_log_promises(f);
}

/* The stand-in only fills in until the runtime says what the id is. */
static void load_after_a_stand_in_names_the_loaded_method(void **state)
{
	struct fx *f = *state;

	send(f, ev_call(JT_EV_ENTER, 10, PID, PID, 5));
	send(f, ev_load(20, PID, 5, JIT, 0x100, JT_SRC_AGENT, "Real.name"));
	send(f, ev_call(JT_EV_ENTER, 30, PID, PID, 5));
	sample_at(f, 40, PID, JIT + 0x10);
	assert_method_named(f, ((const struct jt_rec_call *)
				f->cap.recs[nth_index(f, JT_REC_ENTER, 0)])->id,
			    "[unknown method 5]");
	assert_method_named(f, ((const struct jt_rec_call *)
				f->cap.recs[nth_index(f, JT_REC_ENTER, 1)])->id, "Real.name");
	assert_method_named(f, frame_method(&nth_sample(f, 0)->frames[0]), "Real.name");
	assert_log_promises(f);
}

static void unload_of_defined_method_writes_unload(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_call *u;
	uint64_t id;

	send(f, ev_load(10, PID, 3, JIT, 0x40, JT_SRC_AGENT, "gone"));
	sample_at(f, 20, PID, JIT + 4);
	id = frame_method(&nth_sample(f, 0)->frames[0]);
	send(f, ev_call(JT_EV_CODE_UNLOAD, 30, PID, PID + 1, 3));
	assert_int_equal(count_type(f, JT_REC_UNLOAD), 1);
	u = (const void *)f->cap.recs[f->cap.n - 1];
	assert_int_equal(u->h.type, JT_REC_UNLOAD);
	assert_int_equal(u->id, id);
	assert_int_equal(u->pid, PID);
	assert_int_equal(u->tid, PID + 1);
	assert_int_equal(u->h.ts, 30);
	/* and the code is no longer there */
	sample_at(f, 40, PID, JIT + 4);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 1)->frames[0].ref), JT_FRAME_USER);
	/* a second unload of the same id has nothing to unload */
	send(f, ev_call(JT_EV_CODE_UNLOAD, 50, PID, PID, 3));
	assert_int_equal(count_type(f, JT_REC_UNLOAD), 1);
	assert_log_promises(f);
}

/*
 * A call can name its method after the unload: the leave of a call whose code went while
 * it ran, a thread's sums read at its exit. It is filed under the method it named, not a
 * stand-in "[unknown method N]", whether the method was defined before its unload or not.
 */
static void calls_after_an_unload_name_the_unloaded_method(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_call *enter, *leave;
	const struct jt_rec_callsum *sum;
	evbuf b;

	send(f, ev_load(10, PID, 3, JIT, 0x40, JT_SRC_AGENT, "ran.while.unloaded"));
	send(f, ev_load(11, PID, 4, JIT + 0x40, 0x40, JT_SRC_AGENT, "summed.after.unload"));
	send(f, ev_call(JT_EV_ENTER, 20, PID, PID, 3));
	send(f, ev_call(JT_EV_CODE_UNLOAD, 30, PID, PID, 3));
	send(f, ev_call(JT_EV_CODE_UNLOAD, 31, PID, PID, 4));
	send(f, ev_call(JT_EV_LEAVE, 40, PID, PID, 3));
	b = ev_base(50, JT_EV_CALL_SUM, PID, PID + 1);
	b.ev.sum_of = 4;
	b.ev.sum_calls = 7;
	send(f, b);
	enter = (const void *)f->cap.recs[nth_index(f, JT_REC_ENTER, 0)];
	leave = (const void *)f->cap.recs[nth_index(f, JT_REC_LEAVE, 0)];
	sum = (const void *)f->cap.recs[nth_index(f, JT_REC_CALLSUM, 0)];
	assert_int_equal(leave->id, enter->id);
	assert_method_named(f, enter->id, "ran.while.unloaded");
	assert_method_named(f, sum->id, "summed.after.unload");
	assert_int_equal(sum->calls, 7);
	assert_int_equal(count_type(f, JT_REC_METHOD), 2);
	assert_log_promises(f);
}

static void unload_of_undefined_method_writes_nothing(void **state)
{
	struct fx *f = *state;

	send(f, ev_load(10, PID, 3, JIT, 0x40, JT_SRC_AGENT, "never.sampled"));
	send(f, ev_call(JT_EV_CODE_UNLOAD, 20, PID, PID, 3));
	send(f, ev_call(JT_EV_CODE_UNLOAD, 30, PID, PID, 999));	/* never loaded */
	assert_int_equal(f->cap.n, 0);
	sample_at(f, 40, PID, JIT + 4);
	assert_int_equal(count_type(f, JT_REC_METHOD), 0);
	assert_log_promises(f);
}

static void each_method_is_defined_once_across_many_samples(void **state)
{
	struct fx *f = *state;
	struct jt_collector_stats st;
	uint64_t ts = 100, i;

	send(f, ev_load(ts++, PID, 1, JIT + 0x000, 0x100, JT_SRC_AGENT, "one"));
	send(f, ev_load(ts++, PID, 2, JIT + 0x100, 0x100, JT_SRC_AGENT, "two"));
	send(f, ev_load(ts++, PID, 3, JIT + 0x200, 0x100, JT_SRC_AGENT, "three"));
	for (i = 0; i < 3000; i++) {
		__u64 ips[4] = { JIT + (i % 3) * 0x100 + i % 0x100, JIT + 0x1ff,
				 LIBC_X + 0x100, JIT + 0x2ff };

		send(f, ev_sample(ts++, PID, 0, 1 + i % 4, ips));
		if (i % 7 == 0)
			send(f, ev_call(JT_EV_ENTER, ts++, PID, PID, 1 + i % 2));
	}
	assert_int_equal(count_type(f, JT_REC_METHOD), 3);
	assert_int_equal(count_type(f, JT_REC_MODULE), 1);
	assert_int_equal(count_type(f, JT_REC_PROC), 1);
	assert_int_equal(count_type(f, JT_REC_SAMPLE), 3000);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.methods, 3);
	assert_int_equal(st.samples, 3000);
	assert_log_promises(f);
}

static void exec_resets_the_process_code(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_exec *e;

	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "before.exec"));
	sample_at(f, 20, PID, JIT + 0x10);
	send(f, ev_exec(30, PID, "newimage\0\0\0\0\0\0\0", "/usr/bin/newimage"));
	e = (const void *)f->cap.recs[f->cap.n - 1];
	assert_int_equal(e->h.type, JT_REC_EXEC);
	assert_int_equal(e->h.ts, 30);
	assert_int_equal(e->pid, PID);
	assert_string_equal(e->comm, "newimage");
	assert_int_equal(e->path_len, strlen("/usr/bin/newimage"));
	assert_memory_equal(e->path, "/usr/bin/newimage", e->path_len);
	assert_int_equal(e->h.size, jt_round8(sizeof(*e) + e->path_len));
	sample_at(f, 40, PID, JIT + 0x10);
	frame_method(&nth_sample(f, 0)->frames[0]);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 1)->frames[0].ref), JT_FRAME_USER);
	/* the old id names nothing of the new image */
	send(f, ev_call(JT_EV_ENTER, 50, PID, PID, 1));
	assert_method_named(f, ((const struct jt_rec_call *)
				f->cap.recs[f->cap.n - 1])->id, "[unknown method 1]");
	/* the process is described again, under its new name, before its next sample */
	assert_true(nth_index(f, JT_REC_PROC, 1) > nth_index(f, JT_REC_EXEC, 0));
	assert_true(nth_index(f, JT_REC_PROC, 1) < nth_index(f, JT_REC_SAMPLE, 1));
	assert_string_equal(((const struct jt_rec_proc *)
			     f->cap.recs[nth_index(f, JT_REC_PROC, 1)])->comm, "newimage");
	assert_log_promises(f);
}

static void perfmap_load_of_agent_process_is_skipped(void **state)
{
	struct fx *f = *state;
	struct jt_collector_stats st;

	assert_false(jt_collector__has_agent(f->c, PID));
	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "agent.said"));
	assert_true(jt_collector__has_agent(f->c, PID));
	send(f, ev_load(20, PID, 0, JIT + 0x1000, 0x100, JT_SRC_PERFMAP, "map.said"));
	/* even one over the agent's code: the agent's word stands */
	send(f, ev_load(21, PID, 0, JIT, 0x100, JT_SRC_PERFMAP, "map.overwrite"));
	sample_at(f, 30, PID, JIT + 0x1010);
	sample_at(f, 31, PID, JIT + 0x10);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 0)->frames[0].ref), JT_FRAME_USER);
	assert_method_named(f, frame_method(&nth_sample(f, 1)->frames[0]), "agent.said");
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.perfmap_skipped, 2);
	/* a process without the agent keeps its perf map code */
	assert_false(jt_collector__has_agent(f->c, OTHER_PID));
	send(f, ev_load(40, OTHER_PID, 0, JIT, 0x100, JT_SRC_PERFMAP, "node.fn"));
	sample_at(f, 50, OTHER_PID, JIT + 0x10);
	assert_method_named(f, frame_method(&nth_sample(f, 2)->frames[0]), "node.fn");
	assert_log_promises(f);
}

/* Only perf map lines are a backup of the agent's word; a runtime's USDT probe is not. */
static void usdt_load_of_agent_process_is_not_skipped(void **state)
{
	struct fx *f = *state;
	struct jt_collector_stats st;

	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "agent.said"));
	send(f, ev_load(20, PID, 2, JIT + 0x1000, 0x100, JT_SRC_USDT, "usdt.said"));
	sample_at(f, 30, PID, JIT + 0x1010);
	assert_method_named(f, frame_method(&nth_sample(f, 0)->frames[0]), "usdt.said");
	assert_int_equal(method_def(f, frame_method(&nth_sample(f, 0)->frames[0]))->src,
			 JT_SRC_USDT);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.perfmap_skipped, 0);
	assert_log_promises(f);
}

/* The agent writes the perf map as well: the map's line may be read first. */
static void same_code_from_perfmap_then_agent_is_one_method(void **state)
{
	struct fx *f = *state;
	uint64_t id;

	send(f, ev_load(10, PID, 0, JIT + 0x400, 0x80, JT_SRC_PERFMAP, "Dup.code"));
	send(f, ev_load(11, PID, 42, JIT + 0x400, 0x80, JT_SRC_AGENT, "Dup.code"));
	sample_at(f, 20, PID, JIT + 0x410);
	send(f, ev_call(JT_EV_ENTER, 21, PID, PID, 42));
	sample_at(f, 22, PID, JIT + 0x420);
	assert_int_equal(count_type(f, JT_REC_METHOD), 1);
	id = frame_method(&nth_sample(f, 0)->frames[0]);
	assert_method_named(f, id, "Dup.code");
	assert_int_equal(((const struct jt_rec_call *)
			  f->cap.recs[nth_index(f, JT_REC_ENTER, 0)])->id, id);
	assert_int_equal(frame_method(&nth_sample(f, 1)->frames[0]), id);
	/* the agent's unload reaches the one method */
	send(f, ev_call(JT_EV_CODE_UNLOAD, 30, PID, PID, 42));
	assert_int_equal(((const struct jt_rec_call *)
			  f->cap.recs[nth_index(f, JT_REC_UNLOAD, 0)])->id, id);
	sample_at(f, 31, PID, JIT + 0x410);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 2)->frames[0].ref), JT_FRAME_USER);
	assert_log_promises(f);
}

static void fork_copies_live_code_to_child(void **state)
{
	const uint32_t child = PID + 1;
	struct fx *f = *state;
	uint64_t pa, ca, cb;

	send(f, ev_load(10, PID, 1, JIT + 0x000, 0x100, JT_SRC_AGENT, "A"));
	send(f, ev_load(11, PID, 2, JIT + 0x100, 0x100, JT_SRC_AGENT, "B"));
	send(f, ev_load(12, PID, 3, JIT + 0x200, 0x100, JT_SRC_AGENT, "C"));
	send(f, ev_call(JT_EV_CODE_UNLOAD, 13, PID, PID, 3));	/* not live at fork */
	sample_at(f, 14, PID, JIT + 0x10);
	send(f, ev_fork(20, PID, child));
	send(f, ev_call(JT_EV_CODE_UNLOAD, 21, PID, PID, 1));	/* parent's, not child's */
	send(f, ev_load(22, PID, 4, JIT + 0x300, 0x100, JT_SRC_AGENT, "D"));	/* after */
	sample_at(f, 30, child, JIT + 0x10);
	sample_at(f, 31, child, JIT + 0x110);
	sample_at(f, 32, child, JIT + 0x210);
	sample_at(f, 33, child, JIT + 0x310);
	pa = frame_method(&nth_sample(f, 0)->frames[0]);
	ca = frame_method(&nth_sample(f, 1)->frames[0]);
	cb = frame_method(&nth_sample(f, 2)->frames[0]);
	assert_int_not_equal(pa, ca);
	assert_method_named(f, ca, "A");
	assert_method_named(f, cb, "B");
	assert_int_equal(method_def(f, ca)->pid, child);
	assert_int_equal(method_def(f, cb)->pid, child);
	assert_int_equal(method_def(f, ca)->start, JIT);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 3)->frames[0].ref), JT_FRAME_USER);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 4)->frames[0].ref), JT_FRAME_USER);
	/* the child's agent ids name its own copies */
	send(f, ev_call(JT_EV_ENTER, 40, child, child, 2));
	assert_int_equal(((const struct jt_rec_call *)f->cap.recs[f->cap.n - 1])->id, cb);
	assert_log_promises(f);
}

/*
 * A process may hold code from its perf map (read before the agent's first event) and from
 * the agent at once; its child runs all of it.
 */
static void fork_copies_perfmap_code_alongside_agent_code(void **state)
{
	const uint32_t child = PID + 1;
	struct fx *f = *state;

	send(f, ev_load(10, PID, 0, JIT + 0x800, 0x100, JT_SRC_PERFMAP, "from.map"));
	send(f, ev_load(11, PID, 1, JIT + 0x100, 0x100, JT_SRC_AGENT, "from.agent"));
	sample_at(f, 12, PID, JIT + 0x810);
	assert_method_named(f, frame_method(&nth_sample(f, 0)->frames[0]), "from.map");
	send(f, ev_fork(20, PID, child));
	sample_at(f, 30, child, JIT + 0x110);
	sample_at(f, 31, child, JIT + 0x810);
	assert_method_named(f, frame_method(&nth_sample(f, 1)->frames[0]), "from.agent");
	assert_method_named(f, frame_method(&nth_sample(f, 2)->frames[0]), "from.map");
	assert_log_promises(f);
}

static void exit_writes_exit_and_reused_pid_forgets_old_code(void **state)
{
	__u64 ips[2] = { JIT + 0x10, LIBC_X + 0x10 };
	struct fx *f = *state;
	const struct jt_rec_exit *x;
	struct jt_collector_stats st;
	uint64_t libc_old, libc_new;

	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "old.process"));
	send(f, ev_sample(20, PID, 0, 2, ips));
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.procs, 1);
	send(f, ev_exit(30, PID));
	x = (const void *)f->cap.recs[f->cap.n - 1];
	assert_int_equal(x->h.type, JT_REC_EXIT);
	assert_int_equal(x->h.ts, 30);
	assert_int_equal(x->pid, PID);
	assert_int_equal(x->h.size, sizeof(*x));
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.procs, 0);
	/* the pid comes back as another process */
	send(f, ev_sample(40, PID, 0, 2, ips));
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 1)->frames[0].ref), JT_FRAME_USER);
	libc_old = JT_FRAME_ID(nth_sample(f, 0)->frames[1].ref);
	libc_new = JT_FRAME_ID(nth_sample(f, 1)->frames[1].ref);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 1)->frames[1].ref), JT_FRAME_MODULE);
	assert_int_not_equal(libc_old, libc_new);	/* its own mapping, defined anew */
	assert_true(nth_index(f, JT_REC_PROC, 1) < nth_index(f, JT_REC_SAMPLE, 1));
	send(f, ev_call(JT_EV_ENTER, 50, PID, PID, 1));
	assert_method_named(f, ((const struct jt_rec_call *)
				f->cap.recs[f->cap.n - 1])->id, "[unknown method 1]");
	assert_log_promises(f);
}

/*
 * Exit records can be lost (the ring buffer was full): a fork must still start its child
 * with its parent's code and nothing else, whatever an earlier process of that pid had.
 */
static void fork_gives_the_child_only_its_parents_code(void **state)
{
	const uint32_t child = 6000;
	struct fx *f = *state;

	send(f, ev_load(10, child, 1, JIT, 0x100, JT_SRC_AGENT, "stale.process"));
	sample_at(f, 11, child, JIT + 0x10);
	/* its exit was lost; the pid is reused by a child of a process with no JIT code */
	send(f, ev_fork(20, PID, child));
	sample_at(f, 30, child, JIT + 0x10);
	assert_method_named(f, frame_method(&nth_sample(f, 0)->frames[0]), "stale.process");
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 1)->frames[0].ref), JT_FRAME_USER);
	assert_log_promises(f);
}

/* /proc/PID/maps is read again after a miss; mappings that did not change keep their id. */
static void unchanged_mapping_keeps_its_module_after_maps_are_reread(void **state)
{
	struct fx *f = *state;
	const uint64_t s = 1000000000ULL;

	sample_at(f, 1 * s, PID, LIBC_X + 0x10);
	sample_at(f, 3 * s, PID, 0x10000);	/* a miss, long after the first read */
	sample_at(f, 3 * s + 1, PID, LIBC_X + 0x20);
	sample_at(f, 5 * s, PID, 0x10000);
	sample_at(f, 5 * s + 1, PID, LIBC_X + 0x30);
	assert_int_equal(JT_FRAME_ID(nth_sample(f, 2)->frames[0].ref),
			 JT_FRAME_ID(nth_sample(f, 0)->frames[0].ref));
	assert_int_equal(count_type(f, JT_REC_MODULE), 1);
	assert_log_promises(f);
}

static void drop_writes_a_drop_record(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_drop *d;

	assert_int_equal(jt_collector__drop(f->c, JT_DROP_RB_SAMPLE, 0, 17, 99), 0);
	assert_int_equal(f->cap.n, 1);
	d = (const void *)f->cap.recs[0];
	assert_int_equal(d->h.type, JT_REC_DROP);
	assert_int_equal(d->h.size, sizeof(*d));
	assert_int_equal(d->h.ts, 99);
	assert_int_equal(d->what, JT_DROP_RB_SAMPLE);
	assert_int_equal(d->count, 17);
}

/*
 * A size-0 load (the agent passes sizes through) covers no address: it must neither hide
 * the code around it nor leave anything behind once unloaded (run under valgrind too).
 */
static void zero_size_code_load_does_not_hide_the_code_around_it(void **state)
{
	struct fx *f = *state;

	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "around"));
	send(f, ev_load(20, PID, 2, JIT + 0x80, 0, JT_SRC_AGENT, "empty"));
	sample_at(f, 30, PID, JIT + 0x80);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 0)->frames[0].ref), JT_FRAME_METHOD);
	send(f, ev_call(JT_EV_CODE_UNLOAD, 40, PID, PID, 2));
	send(f, ev_load(50, PID, 3, JIT + 0x1000, 0x100, JT_SRC_AGENT, "later"));
	sample_at(f, 60, PID, JIT + 0x10);
	sample_at(f, 61, PID, JIT + 0x1010);
	assert_method_named(f, frame_method(&nth_sample(f, 1)->frames[0]), "around");
	assert_method_named(f, frame_method(&nth_sample(f, 2)->frames[0]), "later");
	assert_log_promises(f);
}

/*
 * A size-0 load covers no address; once unloaded it must leave nothing behind in the code
 * map (the collector frees it then). Run under valgrind too: a stale pointer shows there.
 */
static void unloaded_zero_size_code_leaves_nothing_behind(void **state)
{
	struct fx *f = *state;

	send(f, ev_load(10, PID, 1, JIT + 0x80, 0, JT_SRC_AGENT, "empty"));
	send(f, ev_call(JT_EV_CODE_UNLOAD, 20, PID, PID, 1));
	send(f, ev_load(30, PID, 2, JIT + 0x1000, 0x100, JT_SRC_AGENT, "later"));
	send(f, ev_load(31, PID, 3, JIT, 0x100, JT_SRC_AGENT, "over"));
	sample_at(f, 40, PID, JIT + 0x1010);
	sample_at(f, 41, PID, JIT + 0x80);
	assert_method_named(f, frame_method(&nth_sample(f, 0)->frames[0]), "later");
	assert_method_named(f, frame_method(&nth_sample(f, 1)->frames[0]), "over");
	assert_log_promises(f);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/*
 * A random workload over 16 slots of JIT memory: loads (with and without unloading what
 * was there), unloads, enters and samples. A model says what each sample and enter must
 * name; the log's promises must hold throughout.
 */
static void random_workload_names_what_a_model_expects(void **state)
{
	enum { SLOTS = 16, OPS = 20000 };
	struct fx *f = *state;
	struct slot {
		uint64_t id, size;	/* id 0: nothing live */
	} slot[SLOTS] = { 0 };
	uint64_t *want = calloc(OPS, sizeof(*want));	/* per sample/enter: agent id or 0 */
	size_t nwant = 0, op, i, w;
	uint64_t seed = 4242, ts = 1000, next_id = 1;
	char name[32];

	assert_non_null(want);
	for (op = 0; op < OPS; op++) {
		uint64_t r = rnd(&seed);
		size_t k = r % SLOTS;
		uint64_t base = JIT + 0x10000 + k * 0x100;

		ts += (r >> 8) % 3;	/* equal timestamps happen */
		switch ((r >> 16) % 8) {
		case 0:
		case 1:		/* (re)compile into slot k, maybe without unloading first */
			if (slot[k].id && (r >> 24) % 2)
				send(f, ev_call(JT_EV_CODE_UNLOAD, ts, PID, PID, slot[k].id));
			slot[k].id = next_id++;
			slot[k].size = 0x10 + (r >> 32) % 0xf0;
			snprintf(name, sizeof(name), "m%llu", (unsigned long long)slot[k].id);
			send(f, ev_load(ts, PID, slot[k].id, base, slot[k].size, JT_SRC_AGENT,
					name));
			break;
		case 2:
			if (slot[k].id)
				send(f, ev_call(JT_EV_CODE_UNLOAD, ts, PID, PID, slot[k].id));
			slot[k].id = 0;
			break;
		case 3:
			if (slot[k].id) {
				send(f, ev_call(JT_EV_ENTER, ts, PID, PID, slot[k].id));
				want[nwant++] = slot[k].id;
			}
			break;
		default: {
			uint64_t off = (r >> 32) % 0x100;

			sample_at(f, ts, PID, base + off);
			want[nwant++] = slot[k].id && off < slot[k].size ? slot[k].id : 0;
			break;
		}
		}
	}
	assert_log_promises(f);
	for (i = 0, w = 0; i < f->cap.n; i++) {
		const struct jt_rec_hdr *h = f->cap.recs[i];
		uint64_t got = 0;

		if (h->type == JT_REC_SAMPLE) {
			const struct jt_frame *fr = &((const struct jt_rec_sample *)h)->frames[0];

			if (JT_FRAME_KIND(fr->ref) == JT_FRAME_METHOD)
				got = method_def(f, JT_FRAME_ID(fr->ref))->agent_id;
			else
				assert_int_equal(JT_FRAME_KIND(fr->ref), JT_FRAME_USER);
		} else if (h->type == JT_REC_ENTER) {
			got = method_def(f, ((const struct jt_rec_call *)h)->id)->agent_id;
		} else {
			continue;
		}
		assert_true(w < nwant);
		if (got != want[w])
			fail_msg("reference %zu (record %zu, ts %llu) names agent id %llu, "
				 "not %llu", w, i, (unsigned long long)h->ts,
				 (unsigned long long)got, (unsigned long long)want[w]);
		w++;
	}
	assert_int_equal(w, nwant);
	free(want);
}

/* The name of the method a record's frame 0 (sample) or id (enter) names, or NULL. */
static const char *named_by(const struct fx *f, const struct jt_rec_hdr *h, uint32_t *len)
{
	const struct jt_rec_method *m;
	uint64_t id;

	if (h->type == JT_REC_SAMPLE) {
		const struct jt_frame *fr = &((const struct jt_rec_sample *)h)->frames[0];

		if (JT_FRAME_KIND(fr->ref) != JT_FRAME_METHOD)
			return NULL;
		id = JT_FRAME_ID(fr->ref);
	} else {
		id = ((const struct jt_rec_call *)h)->id;
	}
	m = method_def(f, id);
	*len = m->name_len;
	return m->name;
}

/*
 * Who holds a method: its process, while its code is live or an id names it. A random
 * workload where ids are reused without unloading (the old code stays live, reachable by
 * no id), enters of ids never loaded (stand-ins, later replaced), forks (the child gets
 * the live code and the ids that name it) and execs (everything goes). A model says what
 * each sample and enter names; AddressSanitizer (the san build) sees every method freed
 * exactly once, none used after, none leaked.
 */
static void methods_held_by_code_or_id_live_until_both_let_go(void **state)
{
	enum { SLOTS = 8, IDS = 6, OPS = 20000, CHILD = 4343 };
	struct fx *f = *state;
	/* per slot and per id: the load (op number + 1) live there / named by it, 0: none;
	 * an id named by a stand-in holds UINT64_MAX; gone[id]: what it named at its last
	 * unload, which an enter of it names until it is loaded again (JT_UNLOADED_KEPT) */
	uint64_t slot[SLOTS] = { 0 }, id_of[IDS + 1] = { 0 }, gone[IDS + 1] = { 0 };
	uint64_t ts = 1000, seed = 99;
	char (*want)[32] = calloc(OPS, sizeof(*want));	/* per sample/enter: its name, or "" */
	size_t nwant = 0, op, i, w = 0;
	char name[32];

	assert_non_null(want);
	for (op = 0; op < OPS; op++) {
		uint64_t r = rnd(&seed), id = 1 + (r >> 40) % IDS;
		size_t k = r % SLOTS, j;
		uint64_t base = JIT + 0x10000 + k * 0x100;

		ts++;
		switch ((r >> 16) % 16) {
		case 0: case 1: case 2: case 3:	/* load id into slot k: no unload before */
			snprintf(name, sizeof(name), "m%zu", op + 1);
			send(f, ev_load(ts, PID, id, base, 0x100, JT_SRC_AGENT, name));
			slot[k] = op + 1;
			id_of[id] = op + 1;
			break;
		case 4:		/* unload id: its code, if still live, goes */
			send(f, ev_call(JT_EV_CODE_UNLOAD, ts, PID, PID, id));
			for (j = 0; j < SLOTS; j++)
				if (id_of[id] != UINT64_MAX && slot[j] == id_of[id])
					slot[j] = 0;
			if (id_of[id])
				gone[id] = id_of[id];
			id_of[id] = 0;
			break;
		case 5: case 6: {	/* enter: the method the id names or named, or a stand-in */
			uint64_t named;

			send(f, ev_call(JT_EV_ENTER, ts, PID, PID, id));
			if (!id_of[id] && !gone[id])
				id_of[id] = UINT64_MAX;
			named = id_of[id] ? id_of[id] : gone[id];
			if (named == UINT64_MAX)
				snprintf(want[nwant++], 32, "[unknown method %llu]",
					 (unsigned long long)id);
			else
				snprintf(want[nwant++], 32, "m%llu", (unsigned long long)named);
			break;
		}
		case 7:		/* a child sees the live code, then is gone */
			send(f, ev_fork(ts, PID, CHILD));
			sample_at(f, ts, CHILD, base + 0x10);
			if (slot[k])
				snprintf(want[nwant++], 32, "m%llu", (unsigned long long)slot[k]);
			else
				want[nwant++][0] = 0;
			send(f, ev_exit(ts, CHILD));
			break;
		case 8:		/* now and then a new program: nothing of the old one stays */
			if ((r >> 24) % 64)
				break;
			send(f, ev_exec(ts, PID, "jitapp\0\0\0\0\0\0\0\0\0\0", BIN));
			memset(slot, 0, sizeof(slot));
			memset(id_of, 0, sizeof(id_of));
			memset(gone, 0, sizeof(gone));
			break;
		default:
			sample_at(f, ts, PID, base + 0x10);
			if (slot[k])
				snprintf(want[nwant++], 32, "m%llu", (unsigned long long)slot[k]);
			else
				want[nwant++][0] = 0;
			break;
		}
	}
	assert_log_promises(f);
	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_hdr *h = f->cap.recs[i];
		const char *got;
		uint32_t len = 0;

		if (h->type != JT_REC_SAMPLE && h->type != JT_REC_ENTER)
			continue;
		got = named_by(f, h, &len);
		assert_true(w < nwant);
		if (!got ? want[w][0] != 0 : len != strlen(want[w]) || memcmp(got, want[w], len))
			fail_msg("reference %zu (record %zu, ts %llu) names \"%.*s\", not \"%s\"",
				 w, i, (unsigned long long)h->ts, (int)len, got ? got : "",
				 want[w]);
		w++;
	}
	assert_int_equal(w, nwant);
	free(want);
}

/* ---- executable mappings as they are made (JT_EV_MMAP) ---- */

/* This test program's own file: a real ELF with symbols, for mapping events to name. */
struct self_file {
	char path[4096];
	struct stat st;
	uint64_t sym_off;	/* file offset of one function symbol */
	char sym[256];
};

static void self_file(struct self_file *sf)
{
	const struct jt_sym *sym = NULL;
	struct jt_elfsyms *es;
	ssize_t n = readlink("/proc/self/exe", sf->path, sizeof(sf->path) - 1);
	size_t idx;
	uint64_t off;
	int fd, err;

	assert_true(n > 0);
	sf->path[n] = 0;
	assert_int_equal(stat(sf->path, &sf->st), 0);
	fd = open(sf->path, O_RDONLY);
	assert_true(fd >= 0);
	es = jt_elfsyms__load(fd, -1, &err);
	close(fd);
	assert_non_null(es);
	/* any sized function symbol will do: the first found from the start */
	for (off = 0x1000; off < (uint64_t)sf->st.st_size && !sym; off += 16) {
		sym = jt_elfsyms__find(es, off, &idx);
		if (sym && (!sym->size || sym->start != off))
			sym = NULL;
	}
	assert_non_null(sym);
	sf->sym_off = sym->start;
	snprintf(sf->sym, sizeof(sf->sym), "%s", sym->name);
	jt_elfsyms__free(es);
}

static evbuf ev_mmap(uint64_t ts, uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
		     const struct self_file *sf, uint64_t ino)
{
	evbuf b = ev_base(ts, JT_EV_MMAP, pid, pid);

	b.ev.map_start = start;
	b.ev.map_end = end;
	b.ev.map_pgoff = pgoff;
	b.ev.map_dev = sf->st.st_dev;
	b.ev.map_ino = ino;
	put_str(&b, sf->path);
	return b;
}

static evbuf ev_exec_args(uint64_t ts, uint32_t pid, const char *comm, const char *path,
			  const char *args)
{
	evbuf b = ev_exec(ts, pid, comm, path);
	char *t = (char *)b.ev.tail + b.ev.str_len + 1;

	b.ev.args_len = strlen(args);
	memcpy(t, args, b.ev.args_len + 1);
	b.ev.len = jt_event__size(b.ev.str_len + 1 + b.ev.args_len + 1);
	return b;
}

static const char *symbol_name(const struct fx *f, uint64_t id, uint32_t *len)
{
	size_t i;

	for (i = 0; i < f->cap.n; i++) {
		const struct jt_rec_symbol *y = (const void *)f->cap.recs[i];

		if (y->h.type == JT_REC_SYMBOL && y->id == id) {
			*len = y->name_len;
			return y->name;
		}
	}
	fail_msg("symbol %llu is not defined", (unsigned long long)id);
	return NULL;
}

#define MAP_AT 0x5600000000ULL

/*
 * A process with no /proc entry (it exited before its samples were joined): its mapping,
 * sent as it was made, still names its frames by the file's symbols, read by path.
 */
static void mapping_event_names_frames_of_a_process_already_gone(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_sample *s;
	struct self_file sf;
	uint32_t len;
	const char *name;

	self_file(&sf);
	send(f, ev_exec_args(10, OTHER_PID, "blip\0\0\0\0\0\0\0\0\0\0\0\0", "./blip",
			     "./blip --fast"));
	send(f, ev_mmap(11, OTHER_PID, MAP_AT, MAP_AT + 0x100000, 0, &sf, sf.st.st_ino));
	sample_at(f, 20, OTHER_PID, MAP_AT + sf.sym_off + 1);
	s = nth_sample(f, 0);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_SYMBOL);
	assert_int_equal(s->frames[0].off, 1);
	name = symbol_name(f, JT_FRAME_ID(s->frames[0].ref), &len);
	assert_int_equal(len, strlen(sf.sym));
	assert_memory_equal(name, sf.sym, len);
	/* the module record carries the mapped file's path (path_len bytes, no NUL) */
	assert_int_equal(module_def(f, 1)->path_len, strlen(sf.path));
	assert_memory_equal(module_def(f, 1)->path, sf.path, strlen(sf.path));
	/* and the process its exec's comm and command line */
	assert_string_equal(((const struct jt_rec_proc *)
			     f->cap.recs[nth_index(f, JT_REC_PROC, 0)])->comm, "blip");
	assert_string_equal(((const struct jt_rec_proc *)
			     f->cap.recs[nth_index(f, JT_REC_PROC, 0)])->cmdline, "./blip --fast");
	assert_log_promises(f);
}

/* A file replaced at its path since (another inode) does not name the old mapping. */
static void mapping_of_a_replaced_file_stays_file_and_offset(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_sample *s;
	struct self_file sf;

	self_file(&sf);
	send(f, ev_mmap(11, OTHER_PID, MAP_AT, MAP_AT + 0x100000, 0, &sf, sf.st.st_ino + 1));
	sample_at(f, 20, OTHER_PID, MAP_AT + sf.sym_off + 1);
	s = nth_sample(f, 0);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_MODULE);
	assert_int_equal(s->frames[0].off, sf.sym_off + 1);
	assert_log_promises(f);
}

/* A later mapping over the same addresses replaces the earlier one; a fork inherits both
 * the mappings and their names. */
static void mappings_replace_what_they_overlap_and_forks_inherit_them(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_sample *s;
	struct self_file sf;

	self_file(&sf);
	send(f, ev_mmap(11, OTHER_PID, MAP_AT, MAP_AT + 0x100000, 0, &sf, sf.st.st_ino));
	/* the same pages, now from file offset 0x1000: the symbol moved down a page */
	send(f, ev_mmap(12, OTHER_PID, MAP_AT, MAP_AT + 0x100000, 0x1000, &sf, sf.st.st_ino));
	send(f, ev_fork(13, OTHER_PID, OTHER_PID + 1));
	sample_at(f, 20, OTHER_PID, MAP_AT + sf.sym_off - 0x1000 + 1);
	sample_at(f, 21, OTHER_PID + 1, MAP_AT + sf.sym_off - 0x1000 + 1);
	s = nth_sample(f, 0);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_SYMBOL);
	assert_int_equal(s->frames[0].off, 1);
	s = nth_sample(f, 1);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_SYMBOL);
	assert_int_equal(s->frames[0].off, 1);
	/* each process has its own module record */
	assert_int_equal(count_type(f, JT_REC_MODULE), 2);
	assert_log_promises(f);
}

/*
 * A program started through a wrapper (taskset, env, nice: a second exec of one pid). A miss
 * in the wrapper's last second read /proc/PID/maps then; the new image's exec mappings leave
 * out part of its code (node's text is its second executable segment). Its first miss must
 * read /proc again at once, not a second after the wrapper's read.
 */
static void first_miss_after_exec_rereads_maps_at_once(void **state)
{
	struct fx *f = *state;
	const uint64_t s = 1000000000ULL;
	struct self_file sf;

	self_file(&sf);
	sample_at(f, 2 * s, PID, LIBC_X + 0x10);	/* the wrapper's: /proc read */
	sample_at(f, 2 * s + 1000, PID, 0x10000);	/* a miss: too soon to read again */
	send(f, ev_exec(2 * s + 10000, PID, "jitapp\0\0\0\0\0\0\0\0\0", BIN));
	/* what the exec program sent: a mapping, not the one the code runs in */
	send(f, ev_mmap(2 * s + 10001, PID, MAP_AT, MAP_AT + 0x1000, 0, &sf, sf.st.st_ino));
	sample_at(f, 2 * s + 20000, PID, BIN_X + 0x400);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 2)->frames[0].ref), JT_FRAME_MODULE);
	assert_int_equal(nth_sample(f, 2)->frames[0].off, BIN_PGOFF + 0x400);
	assert_log_promises(f);
}

#define MEMFD_JIT 0x7f3a50000000ULL	/* the fixture's memfd:doublemapper mapping */

/*
 * .NET's JIT code in its memfd double mapping ("/memfd:doublemapper (deleted)") is JIT memory
 * as anonymous memory is: a bare address in a module named "[dotnet jit]" (whatever the
 * process's name), never "file and offset" (each process has its own memfd), and code a
 * perf map names there is named; the same from /proc/PID/maps and from a mapping event.
 */
static void memfd_double_mapping_is_dotnet_jit_memory(void **state)
{
	struct fx *f = *state;
	struct self_file sf;
	const struct jt_rec_sample *s;
	const struct jt_rec_module *m;
	evbuf b;

	self_file(&sf);
	sample_at(f, 10, PID, MEMFD_JIT + 0x1234);
	send(f, ev_load(20, PID, 0, MEMFD_JIT + 0x2000, 0x100, JT_SRC_PERFMAP, "Hot.Big()"));
	sample_at(f, 30, PID, MEMFD_JIT + 0x2010);
	/* another process's memfd of the same name at the same offset, as an event shows it */
	b = ev_mmap(40, OTHER_PID, MAP_AT, MAP_AT + 0x10000, 0x10000, &sf, 0);	/* decoded */
	memset(b.ev.tail, 0, sizeof(sf.path));
	put_str(&b, "/memfd:doublemapper");
	send(f, b);
	sample_at(f, 50, OTHER_PID, MAP_AT + 0x1234);
	s = nth_sample(f, 0);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_USER);
	assert_int_equal(s->frames[0].off, MEMFD_JIT + 0x1234);
	m = module_def(f, JT_FRAME_ID(s->frames[0].ref));
	assert_int_equal(m->path_len, strlen("[dotnet jit]"));
	assert_memory_equal(m->path, "[dotnet jit]", m->path_len);
	assert_method_named(f, frame_method(&nth_sample(f, 1)->frames[0]), "Hot.Big()");
	s = nth_sample(f, 2);
	assert_int_equal(JT_FRAME_KIND(s->frames[0].ref), JT_FRAME_USER);
	assert_int_equal(s->frames[0].off, MAP_AT + 0x1234);
	m = module_def(f, JT_FRAME_ID(s->frames[0].ref));
	assert_int_equal(m->pid, OTHER_PID);
	assert_memory_equal(m->path, "[dotnet jit]", m->path_len);
	assert_int_equal(count_type(f, JT_REC_SYMBOL), 0);
	assert_log_promises(f);
}

/* ---- broken stacks ---- */

/* A frame-pointer loop: the kernel walks the same frame until it stops, at 127 frames. */
static void looping_stack_is_cut_to_one_turn_and_counted(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_sample *s;
	struct jt_collector_stats st;
	__u64 ips[JT_MAX_FRAMES];
	unsigned int i;

	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "spin"));
	send(f, ev_load(11, PID, 2, JIT + 0x100, 0x100, JT_SRC_AGENT, "loop"));
	ips[0] = JIT + 0x10;
	for (i = 1; i < JT_MAX_FRAMES; i++)
		ips[i] = JIT + 0x110;
	send(f, ev_sample(20, PID, 0, JT_MAX_FRAMES, ips));
	/* a two-frame cycle */
	for (i = 1; i < JT_MAX_FRAMES; i++)
		ips[i] = i % 2 ? JIT + 0x110 : JIT + 0x20;
	send(f, ev_sample(21, PID, 0, JT_MAX_FRAMES, ips));
	s = nth_sample(f, 0);
	assert_int_equal(s->nr_frames, 3);	/* the leaf, one turn, [truncated] */
	assert_int_equal(JT_FRAME_KIND(s->frames[1].ref), JT_FRAME_METHOD);
	assert_int_equal(JT_FRAME_KIND(s->frames[2].ref), JT_FRAME_TRUNCATED);
	assert_int_equal(s->frames[2].off, JT_MAX_FRAMES - 2);
	s = nth_sample(f, 1);
	assert_int_equal(s->nr_frames, 4);
	assert_int_equal(JT_FRAME_KIND(s->frames[3].ref), JT_FRAME_TRUNCATED);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.broken_stacks, 2);
	assert_log_promises(f);
}

/* A recursion that ends before the walk's limit is a real stack: nothing is cut. */
static void shallow_recursion_is_kept_whole(void **state)
{
	struct fx *f = *state;
	struct jt_collector_stats st;
	__u64 ips[40];
	unsigned int i;

	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "fib"));
	for (i = 0; i < 40; i++)
		ips[i] = JIT + 0x30;
	send(f, ev_sample(20, PID, 0, 40, ips));
	assert_int_equal(nth_sample(f, 0)->nr_frames, 40);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.broken_stacks, 0);
}

/*
 * A sample with a copy of its stack top (record --unwind cfi): leaf ip, the registers, and
 * len bytes of the words at SYN_SP; the kernel's frame-pointer walk gave the leaf alone.
 */
#define SYN_SP 0x7ffd00010000ULL

static evbuf ev_sample_copy(uint64_t ts, uint64_t leaf, uint64_t bp, const __u64 *words,
			    size_t len)
{
	__u64 ips[1] = { leaf };
	evbuf b = ev_sample(ts, PID, 0, 1, ips);

	b.ev.off_sp = SYN_SP;
	b.ev.off_bp = bp;
	b.ev.off_stack_len = len;
	memcpy((char *)b.ev.tail + 8, words, len);
	b.ev.len = jt_event__size(8 + len);
	return b;
}

/*
 * A sample's copied stack is unwound (JIT code by its frame pointers) into the whole chain;
 * a walk that cannot go on (a frame pointer below the stack pointer, the copy's end with
 * nothing to splice on) ends in [truncated] and is counted, never a guessed frame.
 */
static void copied_stack_is_unwound_and_a_walk_that_stops_is_cut(void **state)
{
	struct fx *f = *state;
	struct jt_collector_stats st;
	const struct jt_rec_sample *s;
	__u64 words[16] = { 0 };
	unsigned int k;

	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "a"));
	send(f, ev_load(11, PID, 2, JIT + 0x100, 0x100, JT_SRC_AGENT, "b"));
	send(f, ev_load(12, PID, 3, JIT + 0x200, 0x100, JT_SRC_AGENT, "c"));
	/* a's frame at sp + 0x20 (its caller b's return address above), b's at sp + 0x40 */
	words[4] = SYN_SP + 0x40;
	words[5] = JIT + 0x110;
	words[8] = 0;			/* c's rbp: the outermost frame */
	words[9] = JIT + 0x210;
	send(f, ev_sample_copy(20, JIT + 0x10, SYN_SP + 0x20, words, sizeof(words)));
	words[4] = SYN_SP + 0x8;	/* b's rbp below the stack pointer: no frame */
	send(f, ev_sample_copy(21, JIT + 0x10, SYN_SP + 0x20, words, sizeof(words)));
	words[4] = SYN_SP + 0x40;
	send(f, ev_sample_copy(22, JIT + 0x10, SYN_SP + 0x20, words, 0x30));	/* cut at b */

	s = nth_sample(f, 0);
	assert_int_equal(s->nr_frames, 3);
	for (k = 0; k < 3; k++) {
		assert_int_equal(JT_FRAME_KIND(s->frames[k].ref), JT_FRAME_METHOD);
		assert_int_equal(s->frames[k].off, 0x10);
	}
	for (k = 1; k < 3; k++) {
		s = nth_sample(f, k);
		assert_int_equal(s->nr_frames, 3);	/* a, b, [truncated] */
		assert_int_equal(JT_FRAME_KIND(s->frames[1].ref), JT_FRAME_METHOD);
		assert_int_equal(JT_FRAME_KIND(s->frames[2].ref), JT_FRAME_TRUNCATED);
	}
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.broken_stacks, 2);
	assert_log_promises(f);
}

/* A chain that reaches an address no user code can have is cut there. */
static void stack_is_cut_where_it_leaves_user_space(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_sample *s;
	__u64 ips[5] = { JIT + 0x10, JIT + 0x20, 0x10, JIT + 0x30, JIT + 0x40 };

	send(f, ev_load(10, PID, 1, JIT, 0x100, JT_SRC_AGENT, "m"));
	send(f, ev_sample(20, PID, 0, 5, ips));
	ips[2] = 0xffff880000001000ULL;
	send(f, ev_sample(21, PID, 0, 5, ips));
	s = nth_sample(f, 0);
	assert_int_equal(s->nr_frames, 3);
	assert_int_equal(JT_FRAME_KIND(s->frames[2].ref), JT_FRAME_TRUNCATED);
	assert_int_equal(s->frames[2].off, 3);
	assert_int_equal(nth_sample(f, 1)->nr_frames, 3);
	assert_log_promises(f);
}

/* ---- late names: perf-map lines read after samples met their code ---- */

static evbuf ev_line(uint64_t ts, uint32_t pid, uint64_t start, uint64_t size, const char *name)
{
	evbuf b = ev_load(ts, pid, 0, start, size, JT_SRC_PERFMAP, name);

	b.ev.flags = JT_EVENT_LATE_OK;
	return b;
}

static const struct jt_rec_late *nth_late(const struct fx *f, size_t k)
{
	size_t i = nth_index(f, JT_REC_LATE, k);

	return i == SIZE_MAX ? NULL : (const void *)f->cap.recs[i];
}

/*
 * The perf map's line may be joined before the agent's own report of the same code (it is
 * timed from the map's previous read, the agent's event from its uprobe): the method keeps
 * the line's origin and takes the agent's id. A child forked then calls it by that id.
 */
static void fork_carries_the_agent_id_of_code_the_map_named_first(void **state)
{
	const uint32_t child = PID + 1;
	struct fx *f = *state;
	const struct jt_rec_call *c;

	send(f, ev_line(10, PID, JIT + 0x100, 0x40, "callers_child"));
	send(f, ev_load(11, PID, 4, JIT + 0x100, 0x40, JT_SRC_AGENT, "callers_child"));
	send(f, ev_fork(20, PID, child));
	send(f, ev_call(JT_EV_ENTER, 30, child, child, 4));
	c = (const void *)f->cap.recs[f->cap.n - 1];
	assert_int_equal(c->h.type, JT_REC_ENTER);
	assert_method_named(f, c->id, "callers_child");
	assert_int_equal(method_def(f, c->id)->pid, child);
	assert_log_promises(f);
}

/* A line that appears after samples met its code names them, back to the process's start. */
static void line_read_late_names_the_samples_before_it(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_late *l;
	struct jt_collector_stats st;

	send(f, ev_exec(5, OTHER_PID, "mono\0\0\0\0\0\0\0\0\0\0\0\0", "/usr/bin/mono"));
	sample_at(f, 10, OTHER_PID, JIT + 0x10);
	sample_at(f, 11, OTHER_PID, JIT + 0x20);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 0)->frames[0].ref), JT_FRAME_USER);
	send(f, ev_line(20, OTHER_PID, JIT, 0x100, "Hot:Spin ()"));
	assert_null(nth_late(f, 0));	/* held until the lines read with it are in */
	sample_at(f, 30, OTHER_PID, JIT + 0x10);	/* named by the line, as ever */
	l = nth_late(f, 0);
	assert_non_null(l);
	assert_int_equal(l->h.ts, 20);
	assert_int_equal(l->pid, OTHER_PID);
	assert_int_equal(l->start, JIT);
	assert_int_equal(l->size, 0x100);
	assert_int_equal(l->from_ts, 5);	/* its exec */
	assert_method_named(f, l->method, "Hot:Spin ()");
	assert_true(method_def_index(f, l->method) < nth_index(f, JT_REC_LATE, 0));
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 2)->frames[0].ref), JT_FRAME_METHOD);
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.late_names, 1);
	assert_log_promises(f);
}

/*
 * Two lines for the same addresses read together: the code there changed while nothing
 * named it, and which ran when cannot be told. Neither names the earlier samples.
 */
static void reused_address_is_never_named_late(void **state)
{
	struct fx *f = *state;
	struct jt_collector_stats st;

	sample_at(f, 10, OTHER_PID, JIT + 0x10);
	sample_at(f, 12, OTHER_PID, JIT + 0x10);
	send(f, ev_line(20, OTHER_PID, JIT, 0x100, "old_fn"));
	send(f, ev_line(20, OTHER_PID, JIT, 0x100, "new_fn"));
	sample_at(f, 30, OTHER_PID, JIT + 0x10);
	assert_int_equal(jt_collector__flush(f->c), 0);
	assert_null(nth_late(f, 0));
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.late_names, 0);
	assert_int_equal(st.late_conflicts, 1);
	/* the same line twice is one line */
	sample_at(f, 40, OTHER_PID, JIT + 0x1010);
	send(f, ev_line(50, OTHER_PID, JIT + 0x1000, 0x100, "twice"));
	send(f, ev_line(50, OTHER_PID, JIT + 0x1000, 0x100, "twice"));
	assert_int_equal(jt_collector__flush(f->c), 0);
	assert_non_null(nth_late(f, 0));
	assert_null(nth_late(f, 1));
	assert_log_promises(f);
}

/* Code known at the addresses, then gone: a late line names only what came after it went. */
static void late_name_reaches_back_only_to_the_code_before_it(void **state)
{
	struct fx *f = *state;

	send(f, ev_line(5, OTHER_PID, JIT, 0x100, "a"));
	send(f, ev_line(8, OTHER_PID, JIT, 0x40, "b"));	/* a is gone at 8 */
	sample_at(f, 10, OTHER_PID, JIT + 0x80);
	send(f, ev_line(20, OTHER_PID, JIT + 0x80, 0x40, "c"));
	assert_int_equal(jt_collector__flush(f->c), 0);
	assert_non_null(nth_late(f, 0));
	assert_int_equal(nth_late(f, 0)->from_ts, 8);
	assert_method_named(f, nth_late(f, 0)->method, "c");
	/* met unnamed before d was read: d names it late, f (after d left) does not */
	sample_at(f, 31, OTHER_PID, JIT + 0x2080);
	send(f, ev_line(32, OTHER_PID, JIT + 0x2000, 0x100, "d"));
	send(f, ev_line(33, OTHER_PID, JIT + 0x2000, 0x10, "e"));	/* d gone at 33 */
	send(f, ev_line(40, OTHER_PID, JIT + 0x2080, 0x40, "f"));
	assert_int_equal(jt_collector__flush(f->c), 0);
	assert_non_null(nth_late(f, 1));
	assert_method_named(f, nth_late(f, 1)->method, "d");
	assert_null(nth_late(f, 2));
	assert_log_promises(f);
}

/*
 * HotSpot's map at exit spells and measures again what its probes told exactly: such a line
 * over probed code changes nothing (no unsure frames, the probe's name kept).
 */
static void perfmap_line_over_exact_code_is_kept_as_told(void **state)
{
	struct fx *f = *state;
	struct jt_collector_stats st;

	send(f, ev_load(10, OTHER_PID, 7, JIT, 0x180, JT_SRC_USDT, "Hot.a(long)"));
	send(f, ev_line(20, OTHER_PID, JIT, 0x1b0, "long Hot.a(long)"));
	send(f, ev_line(20, OTHER_PID, JIT + 0x1000, 0x40, "Interpreter"));
	sample_at(f, 30, OTHER_PID, JIT + 0x10);
	sample_at(f, 31, OTHER_PID, JIT + 0x1010);
	assert_int_equal(jt_collector__flush(f->c), 0);
	assert_method_named(f, JT_FRAME_ID(nth_sample(f, 0)->frames[0].ref), "Hot.a(long)");
	assert_method_named(f, JT_FRAME_ID(nth_sample(f, 1)->frames[0].ref), "Interpreter");
	jt_collector__stats(f->c, &st);
	assert_int_equal(st.unsure_frames, 0);
	assert_int_equal(st.perfmap_skipped, 1);
	assert_log_promises(f);
}

/*
 * HotSpot's probe measures a method's instructions, its map the whole method: the stubs and
 * handlers after them. The map's line makes the method so long (the probe's name kept), and
 * names late what samples met there since the method was made; not over other code.
 */
static void perfmap_line_past_exact_code_grows_it(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_late *l;
	const struct jt_rec_sample *s;
	__u64 ips[2] = { JIT + 0x1010, JIT + 0x199 };

	send(f, ev_load(10, OTHER_PID, 7, JIT, 0x180, JT_SRC_USDT, "Hot.a(long)"));
	send(f, ev_load(11, OTHER_PID, 8, JIT + 0x1000, 0x80, JT_SRC_USDT, "Hot.b(long)"));
	send(f, ev_load(12, OTHER_PID, 9, JIT + 0x1100, 0x80, JT_SRC_USDT, "Hot.c(long)"));
	send(f, ev_sample(15, OTHER_PID, 0, 2, ips));	/* a return address in a's tail */
	s = nth_sample(f, 0);
	assert_int_equal(s->frames[1].ref, JT_FRAME_REF(JT_FRAME_USER, 0));
	/* other code in that page goes since: a was there all along, so it does not matter */
	send(f, ev_load(16, OTHER_PID, 10, JIT + 0x200, 0x40, JT_SRC_USDT, "d"));
	send(f, ev_load(17, OTHER_PID, 11, JIT + 0x200, 0x40, JT_SRC_USDT, "e"));
	send(f, ev_line(20, OTHER_PID, JIT, 0x1b0, "long Hot.a(long)"));
	send(f, ev_line(20, OTHER_PID, JIT + 0x1000, 0x1100, "long Hot.b(long)"));	/* over c */
	send(f, ev_sample(30, OTHER_PID, 0, 2, ips));
	ips[0] = JIT + 0x1090;	/* past b as its probe told: not b's */
	send(f, ev_sample(31, OTHER_PID, 0, 1, ips));
	assert_int_equal(jt_collector__flush(f->c), 0);
	s = nth_sample(f, 1);
	assert_method_named(f, JT_FRAME_ID(s->frames[1].ref), "Hot.a(long)");
	assert_int_equal(s->frames[1].off, 0x199);
	assert_int_equal(JT_FRAME_KIND(nth_sample(f, 2)->frames[0].ref), JT_FRAME_USER);
	l = nth_late(f, 0);
	assert_non_null(l);
	assert_method_named(f, l->method, "Hot.a(long)");
	assert_int_equal(l->start, JIT);
	assert_int_equal(l->size, 0x1b0);
	assert_int_equal(l->from_ts, 10);	/* the method's making */
	assert_int_equal(l->h.ts, 20);
	assert_null(nth_late(f, 1));
	assert_int_equal(count_type(f, JT_REC_METHOD), 2);	/* a and b, as their probes told */
	assert_log_promises(f);
}

/* A thread's name is written before its first sample, and again only when it changes. */
static void thread_names_are_written_when_new_or_changed(void **state)
{
	struct fx *f = *state;
	const struct jt_rec_thread *t;
	__u64 ips[1] = { JIT + 0x10 };
	const char *names[] = { "main", "main", "worker-a", "worker-a" };
	size_t i;

	for (i = 0; i < 4; i++) {
		evbuf b = ev_sample(10 + i, PID, 0, 1, ips);

		memcpy(b.ev.thread, names[i], strlen(names[i]) + 1);
		send(f, b);
	}
	assert_int_equal(count_type(f, JT_REC_THREAD), 2);
	t = (const void *)f->cap.recs[nth_index(f, JT_REC_THREAD, 0)];
	assert_int_equal(t->pid, PID);
	assert_int_equal(t->tid, PID + 1);	/* ev_sample's tid */
	assert_string_equal(t->comm, "main");
	assert_true(nth_index(f, JT_REC_THREAD, 0) < nth_index(f, JT_REC_SAMPLE, 0));
	t = (const void *)f->cap.recs[nth_index(f, JT_REC_THREAD, 1)];
	assert_string_equal(t->comm, "worker-a");
	assert_true(nth_index(f, JT_REC_THREAD, 1) < nth_index(f, JT_REC_SAMPLE, 2));
	assert_true(nth_index(f, JT_REC_THREAD, 1) > nth_index(f, JT_REC_SAMPLE, 1));
	assert_log_promises(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(sample_in_loaded_method_is_named_after_its_definition),
		T(methods_held_by_code_or_id_live_until_both_let_go),
		T(proc_record_carries_comm_and_command_line),
		T(sample_after_exit_names_the_process_by_its_main_thread),
		T(special_mappings_name_their_frames),
		T(mapping_event_names_frames_of_a_process_already_gone),
		T(looping_stack_is_cut_to_one_turn_and_counted),
		T(line_read_late_names_the_samples_before_it),
		T(perfmap_line_over_exact_code_is_kept_as_told),
		T(perfmap_line_past_exact_code_grows_it),
		T(thread_names_are_written_when_new_or_changed),
		T(reused_address_is_never_named_late),
		T(late_name_reaches_back_only_to_the_code_before_it),
		T(shallow_recursion_is_kept_whole),
		T(stack_is_cut_where_it_leaves_user_space),
		T(copied_stack_is_unwound_and_a_walk_that_stops_is_cut),
		T(mapping_of_a_replaced_file_stays_file_and_offset),
		T(memfd_double_mapping_is_dotnet_jit_memory),
		T(mappings_replace_what_they_overlap_and_forks_inherit_them),
		T(first_miss_after_exec_rereads_maps_at_once),
		T(frame_in_libc_is_a_module_frame_with_file_offset),
		T(frames_in_one_module_share_one_module_record),
		T(offcpu_record_joins_its_stack_and_keeps_its_times),
		T(unknown_address_is_a_user_frame),
		T(kernel_frames_come_first),
		T(return_address_just_past_a_method_names_that_method),
		T(return_address_just_past_a_mapping_names_that_module),
		T(address_reuse_names_the_code_live_at_each_sample),
		T(code_loaded_over_live_code_replaces_it),
		T(inline_pieces_are_joined_after_the_method_definition),
		T(inline_scopes_follow_the_code_live_at_their_time),
		T(inline_with_a_piece_missing_is_dropped),
		T(inline_scopes_past_the_memory_bound_are_counted_not_kept),
		T(perfmap_methods_past_the_cap_are_counted_not_kept),
		T(methods_past_the_memory_bound_are_counted_not_kept),
		cmocka_unit_test(thread_id_resolves_to_its_process),
		T(enter_and_leave_reference_the_method_log_id),
		T(enter_of_unknown_id_defines_a_stand_in_once),
		T(load_after_a_stand_in_names_the_loaded_method),
		T(unload_of_defined_method_writes_unload),
		T(calls_after_an_unload_name_the_unloaded_method),
		T(unload_of_undefined_method_writes_nothing),
		T(each_method_is_defined_once_across_many_samples),
		T(exec_resets_the_process_code),
		T(perfmap_load_of_agent_process_is_skipped),
		T(usdt_load_of_agent_process_is_not_skipped),
		T(same_code_from_perfmap_then_agent_is_one_method),
		T(fork_copies_live_code_to_child),
		T(fork_copies_perfmap_code_alongside_agent_code),
		T(fork_carries_the_agent_id_of_code_the_map_named_first),
		T(exit_writes_exit_and_reused_pid_forgets_old_code),
		T(fork_gives_the_child_only_its_parents_code),
		T(unchanged_mapping_keeps_its_module_after_maps_are_reread),
		T(drop_writes_a_drop_record),
		T(zero_size_code_load_does_not_hide_the_code_around_it),
		T(unloaded_zero_size_code_leaves_nothing_behind),
		T(random_workload_names_what_a_model_expects),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
