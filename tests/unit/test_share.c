// SPDX-License-Identifier: GPL-2.0
/*
 * host/share: sessions' shares of what jitrace turns on in a process, counted with flocks in
 * a lock directory, against a fixture /proc and callbacks that count what they are asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/share.h"
#include "scratch.h"

#define PID 4242

/* What the runtime's part was asked, and what it answers. */
struct fake {
	int firsts, lasts;
	bool ours;		/* the last first's */
	int answer;		/* first's */
};

static int fake_first(void *ctx, uint32_t pid, bool ours)
{
	struct fake *f = ctx;

	assert_int_equal(pid, PID);
	f->firsts++;
	f->ours = ours;
	return f->answer;
}

static void fake_last(void *ctx, uint32_t pid)
{
	assert_int_equal(pid, PID);
	((struct fake *)ctx)->lasts++;
}

static const struct jt_share_ops ops = { .kind = "test", .first = fake_first, .last = fake_last };

struct tree {
	char root[256];
	char proc[300];
	char locks[300];
};

/* PID's stat in t's /proc, started at start (clock ticks; a ')' in its name). */
static void set_start(struct tree *t, unsigned long long start)
{
	char path[400], text[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", t->proc, PID);
	snprintf(text, sizeof(text), "%d (a b) c) S 1 1 1 0 -1 4194560 1 0 0 0 2 3 0 0 20 0 9 0 "
		 "%llu 1000 10 0\n", PID, start);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void tree_make(struct tree *t)
{
	char dir[400];

	assert_int_equal(scratch_make(t->root, sizeof(t->root), "share"), 0);
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->root);
	snprintf(t->locks, sizeof(t->locks), "%s/locks", t->root);
	snprintf(dir, sizeof(dir), "%s/%d", t->proc, PID);
	assert_int_equal(mkdir(t->proc, 0755), 0);
	assert_int_equal(mkdir(t->locks, 0700), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	set_start(t, 777);
}

static void tree_free(struct tree *t)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	assert_int_equal(system(cmd), 0);
}

/* Whether the share file of PID started at start is in t's lock directory. */
static bool share_file(const struct tree *t, unsigned long long start)
{
	char path[400];
	struct stat st;

	snprintf(path, sizeof(path), "%s/test-%d-%llu", t->locks, PID, start);
	return !stat(path, &st);
}

/* The last share of PID (started at 777) let go: lasts undone in all, no share file left. */
static void drop_last(struct tree *t, struct jt_share *s, struct fake *f, int lasts)
{
	jt_share__drop(t->locks, t->proc, s, &ops, f);
	assert_int_equal(f->lasts, lasts);
	assert_false(share_file(t, 777));
	tree_free(t);
}

/* The first in turns on, the second joins, the first out leaves it, the last undoes it. */
static void test_first_in_turns_on_and_last_out_undoes(void **state)
{
	struct fake f = { .answer = 1 };
	struct jt_share a, b;
	struct tree t;

	(void)state;
	tree_make(&t);
	assert_int_equal(jt_share__take(t.locks, t.proc, PID, &ops, &f, &a), 1);
	assert_int_equal(f.firsts, 1);
	assert_false(f.ours);
	assert_int_equal(jt_share__take(t.locks, t.proc, PID, &ops, &f, &b), 1);
	assert_int_equal(f.firsts, 1);		/* held already: joined */
	jt_share__drop(t.locks, t.proc, &a, &ops, &f);
	assert_int_equal(f.lasts, 0);		/* b still needs it */
	assert_true(share_file(&t, 777));
	drop_last(&t, &b, &f, 1);
}

/* What the process had by itself: not held, never undone, nothing left behind. */
static void test_the_processs_own_is_not_held(void **state)
{
	struct fake f = { .answer = 0 };
	struct jt_share a;
	struct tree t;

	(void)state;
	tree_make(&t);
	assert_int_equal(jt_share__take(t.locks, t.proc, PID, &ops, &f, &a), 0);
	assert_int_equal(f.firsts, 1);
	assert_false(share_file(&t, 777));
	assert_int_equal(jt_share__take(t.locks, t.proc, PID + 1, &ops, &f, &a), 0);	/* none */
	assert_int_equal(f.firsts, 1);
	tree_free(&t);
}

/* A session that died with its guard left "on" and no share: the next takes it over as
 * jitrace's, and undoes it at its end. */
static void test_a_dead_sessions_share_is_taken_over(void **state)
{
	struct fake f = { .answer = 1 };
	struct jt_share a, b;
	struct tree t;

	(void)state;
	tree_make(&t);
	assert_int_equal(jt_share__take(t.locks, t.proc, PID, &ops, &f, &a), 1);
	close(a.fd);	/* as a SIGKILL of session and guard would */
	f.answer = 0;	/* what is on now would pass for the process's own, but for the mark */
	assert_int_equal(jt_share__take(t.locks, t.proc, PID, &ops, &f, &b), 0);
	assert_int_equal(f.firsts, 2);
	assert_true(f.ours);
	f.answer = 1;
	assert_int_equal(jt_share__take(t.locks, t.proc, PID, &ops, &f, &b), 1);
	assert_true(f.ours);
	drop_last(&t, &b, &f, 1);
}

/* A pid reused by another process before the last out: the new one is never undone. */
static void test_a_reused_pid_is_not_undone(void **state)
{
	struct fake f = { .answer = 1 };
	struct jt_share a;
	struct tree t;

	(void)state;
	tree_make(&t);
	assert_int_equal(jt_share__take(t.locks, t.proc, PID, &ops, &f, &a), 1);
	set_start(&t, 778);
	jt_share__drop(t.locks, t.proc, &a, &ops, &f);
	assert_int_equal(f.lasts, 0);
	assert_false(share_file(&t, 777));	/* the gone one's share goes too */
	/* not counted (no lock directory): the same */
	assert_int_equal(jt_share__take(NULL, t.proc, PID, &ops, &f, &a), 1);
	assert_int_equal(a.fd, -1);
	set_start(&t, 779);
	jt_share__drop(NULL, t.proc, &a, &ops, &f);
	assert_int_equal(f.lasts, 0);
	assert_int_equal(jt_share__take(NULL, t.proc, PID, &ops, &f, &a), 1);
	jt_share__drop(NULL, t.proc, &a, &ops, &f);
	assert_int_equal(f.lasts, 1);
	tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_in_turns_on_and_last_out_undoes),
		cmocka_unit_test(test_the_processs_own_is_not_held),
		cmocka_unit_test(test_a_dead_sessions_share_is_taken_over),
		cmocka_unit_test(test_a_reused_pid_is_not_undone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
