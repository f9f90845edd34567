// SPDX-License-Identifier: GPL-2.0
/* The agents' calls regions of a live session: taken, drained into the pipeline, given back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jt_callbuf.h"
#include "sources/callbuf.h"
#include "sources/tscclock.h"
#include "host/procfs.h"
#include "session/calls.h"
#include "base/util.h"

/* Connections a tick accepts at most: a flood of them never holds the loop. */
#define RECEIVE_MAX 64
/* How far up a process's parents the command is looked for. */
#define ANCESTRY_MAX 64

/* Enters and leaves handed to the pipeline at once (a run costs it what one call would). */
#define RUN_MAX 256

/* How many ticks a connection that has sent nothing yet is given. */
#define WAIT_TICKS 10

struct waiting {
	int fd;
	int ticks;
};

/* Calls a thread lost to its full ring since the last tick's drop records. */
struct thread_lost {
	uint32_t tid;
	uint64_t n;
};

struct jt_calls {
	struct jt_pipeline *pl;
	uint32_t me;
	uint32_t *roots;		/* the processes traced with their children */
	int nr_roots;			/* 0: every process's regions */
	int sock;			/* -1: not listening */
	ino_t sock_ino;			/* ours at JT_CALLBUF_SOCK, to remove only ours */
	ino_t want_ino;			/* ours at JT_CALLBUF_WANT, 0: none */
	struct waiting waiting[RECEIVE_MAX];	/* connections that sent nothing yet */
	int nr_waiting;
	struct jt_callbuf **v;		/* taken, one a process */
	int n, cap;
	uint64_t full, bad;		/* of regions dropped */
	struct jt_tscclock *tsc;	/* the pipeline's, taken at the first region that counts it */
	bool sum;			/* summary mode asked of every region */
	uint64_t min_ns;		/* its calls this long one by one; UINT64_MAX: none */
	uint64_t no_sums;		/* regions whose agent keeps no sums: calls one by one */
	uint64_t spilled;		/* of regions dropped */
	struct thread_lost *lost;	/* found since the last tick, one a thread */
	int nr_lost, cap_lost;
	/* enters and leaves of the drain under way, not yet handed on (JT_EVENT_CALL_LEN each) */
	char *run;
	size_t nr_run;
	/*
	 * Every exit and exec the ring held before this time has been handled (the ring was
	 * read to its end since): sums read at another moment are timed here, before any
	 * exit or exec still in the ring. 0: not known now; such sums are not read.
	 */
	uint64_t ring_at;
};

/*
 * Keep what tid lost for this tick's drop records; without room it is only in the total,
 * written as lost by no thread in particular.
 */
static void on_lost(void *ctx, uint32_t tid, uint64_t n)
{
	struct jt_calls *c = ctx;
	int i;

	for (i = 0; i < c->nr_lost; i++) {
		if (c->lost[i].tid == tid) {
			c->lost[i].n += n;
			return;
		}
	}
	if (c->nr_lost == c->cap_lost) {
		int cap = c->cap_lost ? 2 * c->cap_lost : 16;
		struct thread_lost *v = realloc(c->lost, cap * sizeof(*v));

		if (!v)
			return;
		c->lost = v;
		c->cap_lost = cap;
	}
	c->lost[c->nr_lost++] = (struct thread_lost){ tid, n };
}

/* Hand the run of calls gathered on: 0, or -errno when the log failed. */
static int run_out(struct jt_calls *c)
{
	size_t n = c->nr_run;

	c->nr_run = 0;
	return n ? jt_pipeline__calls(c->pl, c->run, n) : 0;
}

/* A drain's enter or leave, made an event at the end of the run. */
static int take_call(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t id, bool leave)
{
	struct jt_calls *c = ctx;
	struct jt_event *to = (struct jt_event *)(c->run + c->nr_run * JT_EVENT_CALL_LEN);

	/* its first JT_EVENT_CALL_LEN bytes only: the whole struct is longer */
	to->ts = ts;
	to->len = JT_EVENT_CALL_LEN;
	to->type = leave ? JT_EV_LEAVE : JT_EV_ENTER;
	to->src = 0;
	to->pid = pid;
	to->tid = tid;
	to->str_len = 0;
	to->flags = 0;
	to->id = id;
	return ++c->nr_run == RUN_MAX ? run_out(c) : 0;
}

/* A drain's other events (a span, sums): after the run before them, in the order drained. */
static int emit_call(void *ctx, const struct jt_event *ev)
{
	struct jt_calls *c = ctx;

	return run_out(c) ?: jt_pipeline__event(c->pl, ev);
}

/*
 * Drain cb (max records at most, timed upto at the latest) into the pipeline: the records
 * taken, or -1 (log failed).
 */
static long drain(struct jt_calls *c, struct jt_callbuf *cb, uint64_t max, uint64_t upto)
{
	long n = jt_callbuf__drain_calls(cb, max, upto, take_call, emit_call, c);

	return run_out(c) ? -1 : n;
}

/* What cb's threads summed since last read (timed at at at the latest): 0, or -EIO. */
static int drain_sums(struct jt_calls *c, struct jt_callbuf *cb, uint64_t at)
{
	int err = jt_callbuf__drain_sums(cb, at, emit_call, c);

	return run_out(c) || err ? -EIO : 0;
}

/*
 * Give region i back (the agent's calls go to the stubs again), deliver all it holds then,
 * its sums timed at `at` (UINT64_MAX: now), and drop it.
 */
static int drop_region(struct jt_calls *c, int i, uint64_t at)
{
	struct jt_callbuf *cb = c->v[i];
	struct jt_callbuf_stats st;
	long n;

	jt_callbuf__release(cb);
	jt_callbuf__sums_at(cb, at);
	n = drain(c, cb, UINT64_MAX, UINT64_MAX);
	if (n >= 0 && c->sum && drain_sums(c, cb, at))
		n = -1;
	jt_callbuf__stats(cb, &st);
	c->full += st.full;
	c->bad += st.bad;
	c->spilled += st.spilled;
	jt_callbuf__close(cb);
	c->v[i] = c->v[--c->n];
	return n < 0 ? -EIO : 0;
}

/*
 * Keep the region open at fd as pid's: its calls come through it from now on (and went
 * through the stubs' uprobes until now, unless handed over from the first). One pid has
 * already is kept if it is the same file, else beside it: it is pid's old image's (an exec
 * made pid a new program), which the exec's record, maybe still in the ring, drops, its
 * sums put before the exec.
 */
static void keep_region(struct jt_calls *c, int fd, uint32_t pid, uid_t uid, bool fresh)
{
	struct jt_callbuf *cb;
	uint64_t dev, ino;
	struct stat st;
	int i, err;

	if (fstat(fd, &st))
		return;
	for (i = 0; i < c->n; i++) {
		if (jt_callbuf__pid(c->v[i]) != pid)
			continue;
		jt_callbuf__file(c->v[i], &dev, &ino);
		if (dev == st.st_dev && ino == st.st_ino)
			return;	/* announced and handed over both */
	}
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 16;
		struct jt_callbuf **v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			jt_err("warning: pid %u's calls go through uprobes: out of memory", pid);
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	/*
	 * A region marked handed over is ours from its first record if it is new (handed to
	 * our socket, or announced since we run: a forked child's, written from its first
	 * call); one found at start may be a recording's gone before us.
	 */
	cb = jt_callbuf__map(fd, pid, uid, c->me, fresh);
	if (!cb)
		return;
	if (jt_callbuf__uses_tsc(cb) && !c->tsc && !(c->tsc = jt_pipeline__tscclock(c->pl))) {
		jt_err("warning: pid %u's calls go through uprobes: out of memory", pid);
		jt_callbuf__close(cb);
		return;
	}
	jt_callbuf__set_tscclock(cb, c->tsc);
	jt_callbuf__on_lost(cb, on_lost, c);
	if (c->sum) {
		err = jt_callbuf__want_sums(cb, c->min_ns);
		if (err == -ENOMEM) {
			jt_err("warning: pid %u's calls go through uprobes: out of memory", pid);
			jt_callbuf__close(cb);
			return;
		}
		c->no_sums += err != 0;	/* its agent keeps none: one by one, said at the end */
	} else {
		jt_callbuf__want_each(cb);
	}
	c->v[c->n++] = cb;
}

int jt_calls__add(struct jt_calls *c, uint32_t pid, bool fresh)
{
	uid_t uid;
	int fd = jt_callbuf__find("/proc", pid, &uid);

	if (fd < 0)
		return 0;
	keep_region(c, fd, pid, uid, fresh);
	close(fd);
	return 0;
}

void jt_calls__scan_all(struct jt_calls *c)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		unsigned long v = strtoul(d->d_name, NULL, 10);

		if (v && v < JT_PID_LIMIT && v != c->me)
			jt_calls__add(c, v, false);
	}
	closedir(dir);
}

/*
 * Whether pid is one of the roots or descends from one (within ANCESTRY_MAX generations); a
 * process already gone is given the benefit of the doubt: a child that called and ended
 * within a tick must not have its calls lost.
 */
static bool descends(const struct jt_calls *c, uint32_t pid)
{
	char buf[512], *p;
	int i, k;

	for (i = 0; i < ANCESTRY_MAX && pid > 1; i++) {
		for (k = 0; k < c->nr_roots; k++)
			if (pid == c->roots[k])
				return true;
		if (jt_procfs__read_raw("/proc", pid, "stat", buf, sizeof(buf)) < 0)
			return i == 0;
		p = strrchr(buf, ')');	/* the name may hold anything but this, last */
		if (!p || sscanf(p + 1, " %*c %u", &pid) != 1)
			return false;
	}
	return false;
}

/*
 * The region sent on connection conn: 1 when done with conn (taken, refused or noise),
 * 0 when nothing was sent yet (the agent connected between two of its instructions).
 */
static int receive_on(struct jt_calls *c, int conn)
{
	uint32_t pid;
	uid_t uid;
	int fd = jt_callbuf__receive(conn, &pid, &uid);

	if (fd == -EAGAIN || fd == -EWOULDBLOCK)
		return 0;
	if (fd < 0)
		return 1;	/* not a region: anyone may send noise; it costs no call */
	/* a process the recording does not trace: its calls are not ours to log (its region
	 * stays handed over, and a recording that traces it takes it) */
	if (!c->nr_roots || descends(c, pid))
		keep_region(c, fd, pid, uid, true);
	close(fd);
	return 1;
}

/*
 * Regions agents handed over since the last tick, RECEIVE_MAX connections at most; one
 * that has sent nothing yet waits a few ticks more.
 */
static int receive(struct jt_calls *c)
{
	int i, conn, ret, err = 0;

	for (i = 0; i < c->nr_waiting && !err; i++) {
		ret = receive_on(c, c->waiting[i].fd);
		if (ret == 0 && ++c->waiting[i].ticks < WAIT_TICKS)
			continue;
		close(c->waiting[i].fd);
		c->waiting[i--] = c->waiting[--c->nr_waiting];
		err = ret < 0 ? ret : 0;
	}
	for (i = 0; i < RECEIVE_MAX && !err && c->nr_waiting < RECEIVE_MAX; i++) {
		conn = jt_callbuf__accept(c->sock);
		if (conn < 0)
			break;
		ret = receive_on(c, conn);
		if (ret == 0) {
			c->waiting[c->nr_waiting++] = (struct waiting){ conn, 0 };
			continue;
		}
		close(conn);
		err = ret < 0 ? ret : 0;
	}
	return err;
}

void jt_calls__ring_read(struct jt_calls *c, uint64_t ts)
{
	c->ring_at = ts;
}

int jt_calls__tick(struct jt_calls *c, uint64_t max, uint64_t upto, bool check,
		   uint64_t *drained)
{
	uint64_t full = c->full, bad = c->bad, at = c->ring_at;
	struct jt_callbuf_stats st;
	int i, err = c->sock >= 0 ? receive(c) : 0;
	long n;

	*drained = 0;
	/*
	 * Sums read now are timed at, not now: a process that exited or exec'd since at has
	 * its record still in the ring, and its threads' sums must come before it, while
	 * their methods are known. Without at they wait (counters lose nothing by it).
	 */
	for (i = 0; i < c->n && !err; i++) {
		if (check && at && kill((pid_t)jt_callbuf__pid(c->v[i]), 0) && errno == ESRCH) {
			err = drop_region(c, i--, at);
			continue;
		}
		/* once a second, what threads summed; an exited one's at once, by drain */
		if (check && c->sum && at && drain_sums(c, c->v[i], at)) {
			err = -EIO;
			break;
		}
		jt_callbuf__sums_at(c->v[i], at);
		n = drain(c, c->v[i], max, upto);
		if (n < 0)
			err = -EIO;
		else
			*drained += n;
		if (check)
			jt_callbuf__trim(c->v[i]);
	}
	for (i = 0; i < c->n; i++) {
		jt_callbuf__stats(c->v[i], &st);
		full += st.full;
		bad += st.bad;
	}
	/* each thread's share first, named; the total's record says the rest, if any */
	for (i = 0; i < c->nr_lost && !err; i++)
		if (c->lost[i].tid)
			err = jt_pipeline__thread_drops(c->pl, JT_DROP_CALLS_FULL, c->lost[i].tid,
							c->lost[i].n);
	c->nr_lost = 0;
	jt_pipeline__source_drops(c->pl, JT_DROP_CALLS_FULL, full);
	jt_pipeline__source_drops(c->pl, JT_DROP_CALLS_BAD, bad);
	return err;
}

/* What pid's region holds, its sums timed at ts at the latest: 1 if it has one. */
static int drain_pid(struct jt_calls *c, uint32_t pid, uint64_t ts)
{
	int i, found = 0;

	for (i = 0; i < c->n; i++) {
		if (jt_callbuf__pid(c->v[i]) != pid)
			continue;
		found = 1;
		jt_callbuf__sums_at(c->v[i], ts);
		if ((c->sum && drain_sums(c, c->v[i], ts)) || drain(c, c->v[i], UINT64_MAX, UINT64_MAX) < 0)
			return -EIO;
	}
	return found;
}

int jt_calls__exiting(struct jt_calls *c, uint32_t pid, uint64_t ts)
{
	int ret = drain_pid(c, pid, ts);

	/* a process gone within a tick may have handed its region over unread yet */
	if (!ret && c->sock >= 0)
		ret = receive(c) ?: drain_pid(c, pid, ts);
	return ret < 0 ? ret : 0;
}

/*
 * Whether region i is the old image's of pid, which exec'd at ts: made before it, as its
 * agent says; or, when it does not say, one pid no longer maps (exec took its memory away;
 * the region lives on in our mapping). A new image's, already handed over, stays.
 */
static bool old_image(struct jt_calls *c, int i, uint32_t pid, uint64_t ts)
{
	uint64_t dev, ino, made = jt_callbuf__made(c->v[i]);
	struct stat st;
	uid_t uid;
	int fd;
	bool gone;

	if (made)
		return made < ts;
	fd = jt_callbuf__find("/proc", pid, &uid);
	if (fd < 0)
		return true;	/* no region mapped now (or pid gone: its exit follows) */
	jt_callbuf__file(c->v[i], &dev, &ino);
	gone = fstat(fd, &st) || st.st_dev != dev || st.st_ino != ino;
	close(fd);
	return gone;
}

int jt_calls__exec(struct jt_calls *c, uint32_t pid, uint64_t ts)
{
	int i, err = 0;

	for (i = 0; i < c->n && !err; i++)
		if (jt_callbuf__pid(c->v[i]) == pid && old_image(c, i, pid, ts))
			/* timed before the exec, while the old image's methods are known */
			err = drop_region(c, i--, ts);
	return err;
}

/*
 * Tell agents handing their regions to our socket what we want of them from their first
 * call (JT_CALLBUF_WANT: sums, or nothing there for each call). Not said: they start call
 * by call, and summary mode begins when we take their region.
 */
static void say_want(struct jt_calls *c)
{
	struct stat st;
	int fd;

	/* the newest listener wins the socket, and with it what new regions are asked */
	if (unlink(JT_CALLBUF_WANT) && errno != ENOENT)
		jt_err("warning: %s: %s", JT_CALLBUF_WANT, strerror(errno));
	if (!c->sum)
		return;
	fd = open(JT_CALLBUF_WANT, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "sum\n", 4) != 4 || fchmod(fd, 0644) || fstat(fd, &st)) {
		jt_err("warning: new processes' calls go one by one until jitrace takes their "
		       "buffers: writing %s: %s", JT_CALLBUF_WANT, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(JT_CALLBUF_WANT);
		}
		return;
	}
	c->want_ino = st.st_ino;
	close(fd);
}

/* Stop listening: the socket's file goes if it is still ours. */
static void unlisten(struct jt_calls *c)
{
	struct stat st;

	while (c->nr_waiting)
		close(c->waiting[--c->nr_waiting].fd);
	if (c->sock < 0)
		return;
	if (!stat(JT_CALLBUF_SOCK, &st) && st.st_ino == c->sock_ino)
		unlink(JT_CALLBUF_SOCK);
	if (c->want_ino && !stat(JT_CALLBUF_WANT, &st) && st.st_ino == c->want_ino)
		unlink(JT_CALLBUF_WANT);
	close(c->sock);
	c->sock = -1;
}

int jt_calls__finish(struct jt_calls *c)
{
	int err = c->sock >= 0 ? receive(c) : 0;
	struct jt_tscclock_stats ts;
	uint64_t n;

	unlisten(c);	/* agents starting now keep their calls to the stubs */
	while (!err && c->n)
		err = drop_region(c, c->n - 1, UINT64_MAX);
	if (c->spilled)
		jt_err("calls summary: %llu calls were logged one by one: their thread's table of "
		       "sums (%u methods) had no room for their method",
		       (unsigned long long)c->spilled, JT_CALLBUF_SUMS);
	if (c->no_sums)
		jt_err("calls summary: %llu processes' agents keep no sums: their calls were "
		       "logged one by one", (unsigned long long)c->no_sums);
	if (c->tsc) {
		jt_tscclock__stats(c->tsc, &ts);
		jt_err("calls timed by the TSC, put on CLOCK_MONOTONIC by %llu pairs of ours: "
		       "within %llu ns of it (the farthest a pair fell from the line before it; "
		       "pairs %llu ns wide at most)", (unsigned long long)ts.points,
		       (unsigned long long)ts.max_err_ns, (unsigned long long)ts.max_width_ns);
	}
	return err ?: jt_calls__tick(c, 0, UINT64_MAX, false, &n);	/* the totals */
}

struct jt_calls *jt_calls__new(struct jt_pipeline *pl, bool listen, const uint32_t *roots,
			       int nr_roots, bool sum, uint64_t min_ns)
{
	struct jt_calls *c = calloc(1, sizeof(*c));
	struct stat st;

	if (c && nr_roots) {
		c->roots = malloc(nr_roots * sizeof(*roots));
		if (c->roots)
			memcpy(c->roots, roots, nr_roots * sizeof(*roots));
	}
	if (c)
		c->run = malloc(RUN_MAX * JT_EVENT_CALL_LEN);
	if (!c || (nr_roots && !c->roots) || !c->run) {
		jt_err("out of memory");
		if (c) {
			free(c->roots);
			free(c->run);
		}
		free(c);
		return NULL;
	}
	c->pl = pl;
	c->me = (uint32_t)getpid();
	c->nr_roots = nr_roots;
	c->sum = sum;
	c->min_ns = min_ns ?: UINT64_MAX;
	c->sock = listen ? jt_callbuf__listen(JT_CALLBUF_SOCK) : -1;
	if (listen && c->sock < 0)
		jt_err("warning: calls before jitrace finds a new process's buffers go through "
		       "uprobes: listening on %s: %s", JT_CALLBUF_SOCK, strerror(-c->sock));
	if (c->sock >= 0 && !stat(JT_CALLBUF_SOCK, &st))
		c->sock_ino = st.st_ino;
	if (c->sock >= 0)
		say_want(c);
	return c;
}

void jt_calls__free(struct jt_calls *c)
{
	if (!c)
		return;
	unlisten(c);
	while (c->n)
		jt_callbuf__close(c->v[--c->n]);
	free(c->v);
	free(c->lost);
	free(c->run);
	free(c->roots);
	free(c);
}
