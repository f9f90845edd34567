// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the watcher of per-process files (user/sources/watch.c) under a format of
 * the test's own: when it looks for a file again, what it charges to the memory account,
 * where a poll cut short goes on, and when it lets a process go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/membound.h"
#include "base/util.h"
#include "sources/watch.h"

#define MS 1000000ULL
#define BYTES 1000

/* What the test's format saw and is to answer. */
struct fake {
	struct jt_watch w;	/* first: the watcher */
	bool file_there;	/* open finds a file */
	enum jt_watch_read answer[8];	/* what each read says, in turn (then ON) */
	size_t nanswers;
	uint32_t read[32];	/* pids read, in order */
	size_t nread;
	size_t opens, closes;
};

struct fproc {
	struct jt_watch_proc p;
};

static bool fake_open(struct jt_watch *w, struct jt_watch_proc *p, const struct stat *proc,
		      uint64_t now)
{
	struct fake *f = (struct fake *)w;

	(void)p;
	(void)now;
	f->opens++;
	return proc && f->file_there;
}

static enum jt_watch_read fake_read(struct jt_watch *w, struct jt_watch_proc *p, uint64_t now,
				    uint64_t floor, uint64_t until, jt_event_push_fn push,
				    void *ctx)
{
	struct fake *f = (struct fake *)w;
	size_t i = f->nread;

	(void)now, (void)floor, (void)until, (void)push, (void)ctx;
	if (f->nread < 32)
		f->read[f->nread++] = p->pid;
	return i < f->nanswers ? f->answer[i] : JT_WATCH_READ_ON;
}

static void fake_close(struct jt_watch *w, struct jt_watch_proc *p)
{
	(void)p;
	((struct fake *)w)->closes++;
}

static void fake_exec(struct jt_watch_proc *p, uint64_t ts)
{
	(void)p;
	(void)ts;
}

static const struct jt_watch_format fake_format = {
	.proc_size = sizeof(struct fproc),
	.file_bytes = BYTES,
	.open = fake_open, .read = fake_read, .close = fake_close, .exec = fake_exec,
};

static uint64_t ticks;

/* A clock that moves 1 ns each time it is read. */
static uint64_t ticking_clock(void *ctx)
{
	(void)ctx;
	return ++ticks;
}

static void fake_init(struct fake *f)
{
	*f = (struct fake){ 0 };
	jt_watch__init(&f->w, &fake_format, ticking_clock, NULL);
}

static int no_push(void *ctx, const struct jt_event *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

static void poll_at(struct fake *f, uint64_t now)
{
	jt_watch__poll(&f->w, now, 0, UINT64_MAX, no_push, NULL);
}

static void see(struct fake *f, uint32_t type, uint32_t pid)
{
	union jt_event_buf b = { .ev = { .ts = 1, .len = JT_EVENT_FIXED, .type = type,
					 .pid = pid, .tid = pid } };

	jt_watch__see(&f->w, &b.ev);
}

/* A process with no file yet is looked for at once, then after 50 ms, 100, 200... up to 2 s. */
static void test_watch_looks_for_a_missing_file_less_and_less_often(void **state)
{
	static const uint64_t at[] = { 0, 50, 150, 350, 750, 1550, 3150, 5150, 7150 };
	const uint64_t t0 = 1000 * MS;
	struct fake f;
	size_t i;

	(void)state;
	fake_init(&f);
	jt_watch__notice(&f.w, getpid());
	poll_at(&f, t0);
	assert_int_equal(f.opens, 1);
	for (i = 1; i < JT_ARRAY_SIZE(at); i++) {
		poll_at(&f, t0 + at[i] * MS - 1);	/* just before its time: not yet */
		assert_int_equal(f.opens, i);
		poll_at(&f, t0 + at[i] * MS);
		assert_int_equal(f.opens, i + 1);
	}
	jt_watch__fini(&f.w);
}

/* Each file followed is charged; past the limit the next one waits for room, which the file
 * of a process that exited gives back once it is let go. */
static void test_watch_charges_each_file_and_opens_the_next_when_there_is_room(void **state)
{
	struct jt_membound mem = { .limit = 2 * BYTES };
	uint32_t pids[3] = { (uint32_t)getpid(), (uint32_t)getppid(), 1 };
	struct fake f;
	size_t i;

	(void)state;
	fake_init(&f);
	f.file_there = true;
	jt_watch__bound(&f.w, &mem);
	for (i = 0; i < 3; i++)
		jt_watch__notice(&f.w, pids[i]);
	poll_at(&f, 1000 * MS);
	assert_int_equal(f.w.following, 2);
	assert_int_equal(f.opens, 2);
	assert_int_equal(mem.used, 2 * BYTES);
	/* one of those open exits: what is left is read, then it is let go */
	see(&f, JT_EV_EXIT, f.read[0]);
	poll_at(&f, 1001 * MS);
	assert_int_equal(f.closes, 1);
	assert_int_equal(f.w.following, 1);
	assert_int_equal(mem.used, BYTES);
	poll_at(&f, 1002 * MS);		/* the one that waited */
	assert_int_equal(f.opens, 3);
	assert_int_equal(f.w.following, 2);
	assert_int_equal(mem.used, 2 * BYTES);
	jt_watch__fini(&f.w);
	assert_int_equal(f.closes, 3);
	assert_int_equal(mem.used, 0);
}

/* A read whose time ran out within its file has the next poll begin with that file; one
 * whose time ran out after it, with the next. */
static void test_watch_poll_goes_on_where_the_format_says(void **state)
{
	struct fake f;
	uint32_t first;

	(void)state;
	fake_init(&f);
	f.file_there = true;
	jt_watch__notice(&f.w, getpid());
	jt_watch__notice(&f.w, getppid());
	f.answer[0] = JT_WATCH_READ_CUT;
	f.answer[1] = JT_WATCH_READ_LATE;
	f.nanswers = 2;
	poll_at(&f, 1000 * MS);
	assert_int_equal(f.nread, 1);		/* cut within the first */
	first = f.read[0];
	poll_at(&f, 1001 * MS);
	assert_int_equal(f.nread, 2);		/* the same one again, late after it */
	assert_int_equal(f.read[1], first);
	poll_at(&f, 1002 * MS);
	assert_int_equal(f.nread, 4);		/* the other first, then round */
	assert_int_not_equal(f.read[2], first);
	assert_int_equal(f.read[3], first);
	jt_watch__fini(&f.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_looks_for_a_missing_file_less_and_less_often),
		cmocka_unit_test(
			test_watch_charges_each_file_and_opens_the_next_when_there_is_room),
		cmocka_unit_test(test_watch_poll_goes_on_where_the_format_says),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
