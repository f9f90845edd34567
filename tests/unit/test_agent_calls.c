// SPDX-License-Identifier: GPL-2.0
/*
 * libjitrace-agent's calls region (agent/calls.c), read as a collector would: a sealed
 * memfd of mode 0600; nothing written while no collector wants calls; every call in the
 * calling thread's slot, in order and timed, once one does; a full ring counted, never
 * waited on; a thread's slot given back at its exit; a forked child writing into a region
 * of its own, never its parent's. No root needed; each case runs in a child process, for a
 * fresh agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <x86intrin.h>

#include "jitrace/agent.h"
#include "jt_callbuf.h"
#include "../kernelclock.h"

#define FAKE_COLLECTOR 77	/* any pid: the agent only asks whether one is set */

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);          \
			return 1;                                                           \
		}                                                                           \
	} while (0)

static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* This process's region as its maps show it, and the file's inode; NULL if none. */
static struct jt_callbuf_hdr *own_region(unsigned long *ino)
{
	char line[512];
	unsigned long start = 0, i;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/memfd:" JT_CALLBUF_NAME) &&
		    sscanf(line, "%lx-%*x %*s %*s %*s %lu", &start, &i) == 2 && ino)
			*ino = i;
	fclose(f);
	return (struct jt_callbuf_hdr *)start;
}

static struct jt_callbuf_slot *slot(struct jt_callbuf_hdr *r, int i)
{
	return (struct jt_callbuf_slot *)((char *)r + JT_CALLBUF_HDR_SIZE +
					   (size_t)i * r->slot_size);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* Now in the clock the region's records count. */
static uint64_t now_in(const struct jt_callbuf_hdr *r)
{
	return r->clock == JT_CALLBUF_CLOCK_TSC ? __rdtsc() : now_ns();
}

/* The agent with a method, its region found; no collector of a running jitrace meddles. */
static struct jt_callbuf_hdr *start(uint64_t *id)
{
	setenv("JITRACE_CALLS_SOCK", "", 1);
	*id = jitrace_code_load(NULL, 0, "test_method");
	return own_region(NULL);
}

static int region_is_private_and_sealed(void)
{
	char path[64];
	struct stat st;
	struct timespec now;
	uint64_t id;
	struct jt_callbuf_hdr *r = start(&id);
	int fd, seals;

	CHECK(r);
	CHECK(r->magic == JT_CALLBUF_MAGIC && r->version == JT_CALLBUF_VERSION);
	CHECK(r->nr_slots == JT_CALLBUF_SLOTS && r->nr_recs == JT_CALLBUF_RECS);
	CHECK(r->owner == (uint32_t)getpid() && r->collector == 0);
	/* when it was made, on the clock exec records count: a collector tells images apart */
	clock_gettime(CLOCK_MONOTONIC, &now);
	CHECK(r->made && r->made <= (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec);
	/* the memfd itself, through our own mapping's link */
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)r,
		 (unsigned long)r + JT_CALLBUF_SIZE);
	fd = open(path, O_RDONLY);
	if (fd < 0 && errno == EPERM)
		return 0;	/* map_files needs CAP_SYS_ADMIN: checked as root only */
	CHECK(fd >= 0 && !fstat(fd, &st));
	CHECK((st.st_mode & 0777) == 0600);
	CHECK(st.st_size == (off_t)JT_CALLBUF_SIZE);
	seals = fcntl(fd, F_GET_SEALS);
	CHECK(seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_GROW) &&
	      (seals & F_SEAL_SEAL));
	close(fd);
	return 0;
}

static void test_region_is_private_and_sealed(void **state)
{
	(void)state;
	assert_int_equal(in_child(region_is_private_and_sealed), 0);
}

static int every_call_in_order_once_wanted(void)
{
	uint64_t id, t0, t1, i;
	struct jt_callbuf_hdr *r = start(&id);
	struct jt_callbuf_slot *s;

	CHECK(r);
	for (i = 0; i < 100; i++) {	/* no collector: the stubs, nothing written */
		jitrace_method_enter(id);
		jitrace_method_leave(id);
	}
	s = slot(r, 0);
	CHECK(s->state == JT_CALLBUF_FREE && s->head == 0);
	r->collector = FAKE_COLLECTOR;
	t0 = now_in(r);
	for (i = 0; i < 1000; i++) {
		jitrace_method_enter(id + i);
		jitrace_method_leave(id + i);
	}
	t1 = now_in(r);
	CHECK(s->state == JT_CALLBUF_CLAIMED && s->tid == (uint32_t)gettid());
	CHECK(s->head == 2000 && s->dropped == 0);
	for (i = 0; i < 2000; i++) {
		const struct jt_callbuf_rec *rec = &s->recs[i];

		CHECK(rec->id_kind == ((id + i / 2) | (i % 2 ? JT_CALLBUF_LEAVE : 0)));
		CHECK(rec->ts >= t0 && rec->ts <= t1);
		CHECK(!i || rec->ts >= s->recs[i - 1].ts);
	}
	return 0;
}

static void test_every_call_in_order_once_wanted(void **state)
{
	(void)state;
	assert_int_equal(in_child(every_call_in_order_once_wanted), 0);
	setenv("JITRACE_CALLS_CLOCK", "monotonic", 1);
	assert_int_equal(in_child(every_call_in_order_once_wanted), 0);
	unsetenv("JITRACE_CALLS_CLOCK");
}

/* The region says the TSC where the kernel keeps time by it, CLOCK_MONOTONIC when told. */
static int clock_is_said(void)
{
	uint64_t id;
	struct jt_callbuf_hdr *r = start(&id);
	bool mono = getenv("JITRACE_CALLS_CLOCK") != NULL;

	CHECK(r);
	CHECK(r->clock == (!mono && test_kernel_clock_is_tsc() ? JT_CALLBUF_CLOCK_TSC :
							     JT_CALLBUF_CLOCK_MONO));
	return 0;
}

static void test_clock_is_said_once_a_region(void **state)
{
	(void)state;
	assert_int_equal(in_child(clock_is_said), 0);
	setenv("JITRACE_CALLS_CLOCK", "monotonic", 1);
	assert_int_equal(in_child(clock_is_said), 0);
	unsetenv("JITRACE_CALLS_CLOCK");
}

/* The sums of method id in slot s, or NULL. */
static const struct jt_callbuf_sum *sum_of(const struct jt_callbuf_slot *s, uint64_t id)
{
	int i;

	for (i = 0; i < JT_CALLBUF_SUMS; i++)
		if (s->sums[i].id == id)
			return &s->sums[i];
	return NULL;
}

static int summary_mode_sums_every_call(void)
{
	uint64_t a, i;
	struct jt_callbuf_hdr *r = start(&a);
	const uint64_t b = a + 1, c = a + 2, rec = a + 3;
	const struct jt_callbuf_sum *sa, *sb, *sc, *sr;
	struct jt_callbuf_slot *s;

	CHECK(r && r->nr_sums == JT_CALLBUF_SUMS && r->min == UINT64_MAX);
	jitrace_method_enter(a);	/* entered before summary mode: its leave is written */
	r->mode = JT_CALLBUF_MODE_SUM;
	r->collector = FAKE_COLLECTOR;
	jitrace_method_leave(a);
	for (i = 0; i < 100; i++) {	/* a calls b: nested */
		jitrace_method_enter(a);
		jitrace_method_enter(b);
		jitrace_method_leave(b);
		jitrace_method_leave(a);
	}
	/* an exception: a's leave closes c and b, which never left */
	jitrace_method_enter(a);
	jitrace_method_enter(b);
	jitrace_method_enter(c);
	jitrace_method_leave(a);
	/* recursion: two calls, the time of the outer one */
	jitrace_method_enter(rec);
	jitrace_method_enter(rec);
	jitrace_method_leave(rec);
	jitrace_method_leave(rec);
	s = slot(r, 0);
	sa = sum_of(s, a);
	sb = sum_of(s, b);
	sc = sum_of(s, c);
	sr = sum_of(s, rec);
	CHECK(sa && sb && sc && sr);
	CHECK(sa->calls == 101 && sb->calls == 101 && sc->calls == 1 && sr->calls == 2);
	CHECK(!sa->open && !sb->open && !sc->open && !sr->open && s->depth == 0);
	/* a's own time is its time less b's, b's less c's (c ran inside b) */
	CHECK(sa->incl >= sb->incl && sa->excl == sa->incl - sb->incl);
	CHECK(sb->incl >= sc->incl && sb->excl == sb->incl - sc->incl);
	CHECK(sr->excl == sr->incl);	/* inner's own time + outer's own time, once */
	/* the one leave written is the one before summary mode */
	CHECK(s->head == 1 && s->recs[0].id_kind == (a | JT_CALLBUF_LEAVE));
	CHECK(s->spilled == 0);
	return 0;
}

static void test_summary_mode_sums_every_call(void **state)
{
	(void)state;
	assert_int_equal(in_child(summary_mode_sums_every_call), 0);
}

/* A table with no room, a stack too deep: those calls one by one, none lost. */
static int summary_mode_spills_what_it_cannot_hold(void)
{
	uint64_t id, i, k, enters = 0, leaves = 0;
	struct jt_callbuf_hdr *r = start(&id);
	struct jt_callbuf_slot *s;

	CHECK(r);
	r->mode = JT_CALLBUF_MODE_SUM;
	r->collector = FAKE_COLLECTOR;
	for (i = 1; i <= 2 * JT_CALLBUF_SUMS; i++) {	/* more methods than the table holds */
		jitrace_method_enter(i);
		jitrace_method_leave(i);
	}
	for (i = 0; i < JT_CALLBUF_DEPTH + 3; i++)	/* deeper than the stack */
		jitrace_method_enter(1);
	for (i = 0; i < JT_CALLBUF_DEPTH + 3; i++)
		jitrace_method_leave(1);
	s = slot(r, 0);
	for (k = 0, i = 0; i < JT_CALLBUF_SUMS; i++)
		k += s->sums[i].calls;
	for (i = 0; i < s->head; i++) {
		enters += !(s->recs[i].id_kind & JT_CALLBUF_LEAVE);
		leaves += !!(s->recs[i].id_kind & JT_CALLBUF_LEAVE);
	}
	/* every call summed or written: 512 + 259 */
	CHECK(enters == leaves && k + enters == 2 * JT_CALLBUF_SUMS + JT_CALLBUF_DEPTH + 3);
	CHECK(s->spilled == enters - 3 && s->spilled > 0);
	CHECK(s->depth == 0 && s->deep == 0);
	return 0;
}

static void test_summary_mode_spills_what_it_cannot_hold(void **state)
{
	(void)state;
	assert_int_equal(in_child(summary_mode_spills_what_it_cannot_hold), 0);
}

/* --calls-min: a call that took min or more is a span in the ring, not a sum. */
static int long_calls_are_spans(void)
{
	uint64_t id;
	struct jt_callbuf_hdr *r = start(&id);
	struct timespec ms = { 0, 1000000 };
	const struct jt_callbuf_sum *e;
	struct jt_callbuf_slot *s;

	CHECK(r);
	r->min = 100000;	/* 100 us in ns, 30-40 us in TSC ticks here: 1 ms is more */
	r->mode = JT_CALLBUF_MODE_SUM;
	r->collector = FAKE_COLLECTOR;
	jitrace_method_enter(id);	/* long: 1 ms */
	jitrace_method_enter(id + 1);	/* short */
	jitrace_method_leave(id + 1);
	nanosleep(&ms, NULL);
	jitrace_method_leave(id);
	s = slot(r, 0);
	e = sum_of(s, id + 1);
	CHECK(e && e->calls == 1);
	e = sum_of(s, id);
	CHECK(e && e->calls == 0);
	CHECK(s->head == 2);
	CHECK(s->recs[0].id_kind == (id | JT_CALLBUF_SPAN));
	CHECK(s->recs[1].ts < s->recs[0].ts);	/* entered before it left */
	CHECK(s->recs[1].id_kind <= s->recs[0].ts - s->recs[1].ts);	/* its own time */
	return 0;
}

static void test_long_calls_are_spans(void **state)
{
	(void)state;
	assert_int_equal(in_child(long_calls_are_spans), 0);
}

static int full_ring_counts_and_goes_on(void)
{
	uint64_t id, i;
	struct jt_callbuf_hdr *r = start(&id);
	struct jt_callbuf_slot *s;

	CHECK(r);
	r->collector = FAKE_COLLECTOR;	/* that never drains */
	for (i = 0; i < JT_CALLBUF_RECS + 500; i++)
		jitrace_method_enter(id);
	s = slot(r, 0);
	CHECK(s->head == JT_CALLBUF_RECS && s->dropped == 500);
	s->tail = 100;	/* the collector read some: room again */
	jitrace_method_leave(id);
	CHECK(s->head == JT_CALLBUF_RECS + 1 && s->dropped == 500);
	return 0;
}

static void test_full_ring_counts_and_goes_on(void **state)
{
	(void)state;
	assert_int_equal(in_child(full_ring_counts_and_goes_on), 0);
}

static uint64_t thread_id;
static pid_t thread_tid;

static void *calls(void *arg)
{
	(void)arg;
	thread_tid = gettid();
	jitrace_method_enter(thread_id);
	jitrace_method_leave(thread_id);
	return NULL;
}

static int exited_threads_slot_is_given_back(void)
{
	struct jt_callbuf_hdr *r = start(&thread_id);
	struct jt_callbuf_slot *s;
	pthread_t t;

	CHECK(r);
	r->collector = FAKE_COLLECTOR;
	CHECK(!pthread_create(&t, NULL, calls, NULL) && !pthread_join(t, NULL));
	s = slot(r, 0);
	CHECK(s->tid == (uint32_t)thread_tid && s->head == 2);
	CHECK(s->state == JT_CALLBUF_EXITED);
	/* the collector drains it and frees it: the next thread takes it again */
	s->tail = s->head;
	s->state = JT_CALLBUF_FREE;
	CHECK(!pthread_create(&t, NULL, calls, NULL) && !pthread_join(t, NULL));
	CHECK(s->tid == (uint32_t)thread_tid && s->head == 4);
	CHECK(slot(r, 1)->state == JT_CALLBUF_FREE);
	return 0;
}

static void test_exited_threads_slot_is_given_back(void **state)
{
	(void)state;
	assert_int_equal(in_child(exited_threads_slot_is_given_back), 0);
}

static int forked_child_writes_its_own(void)
{
	unsigned long ino_parent = 0, ino_child = 0;
	uint64_t id;
	struct jt_callbuf_hdr *r = start(&id), *mine;
	int status;
	pid_t pid;

	CHECK(r);
	own_region(&ino_parent);
	r->collector = FAKE_COLLECTOR;
	jitrace_method_enter(id);
	CHECK(slot(r, 0)->head == 1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		mine = own_region(&ino_child);
		/* a region of its own, no collector yet: its calls go to the stubs */
		if (!mine || ino_child == ino_parent || mine->collector ||
		    mine->owner != (uint32_t)getpid())
			_exit(3);
		jitrace_method_leave(id);
		mine->collector = FAKE_COLLECTOR;
		jitrace_method_enter(id);
		_exit(slot(mine, 0)->head == 1 && slot(mine, 0)->tid == (uint32_t)gettid() ?
		      0 : 4);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	CHECK(WEXITSTATUS(status) == 0);
	CHECK(slot(r, 0)->head == 1);	/* nothing of the child's in the parent's */
	return 0;
}

static void test_forked_child_writes_its_own(void **state)
{
	(void)state;
	assert_int_equal(in_child(forked_child_writes_its_own), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region_is_private_and_sealed),
		cmocka_unit_test(test_every_call_in_order_once_wanted),
		cmocka_unit_test(test_clock_is_said_once_a_region),
		cmocka_unit_test(test_summary_mode_sums_every_call),
		cmocka_unit_test(test_summary_mode_spills_what_it_cannot_hold),
		cmocka_unit_test(test_long_calls_are_spans),
		cmocka_unit_test(test_full_ring_counts_and_goes_on),
		cmocka_unit_test(test_exited_threads_slot_is_given_back),
		cmocka_unit_test(test_forked_child_writes_its_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
