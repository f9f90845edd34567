// SPDX-License-Identifier: GPL-2.0
/* Counted shares, across sessions, of what jitrace turns on in a process: flocks in /run/jitrace. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "host/procfs.h"
#include "host/share.h"
#include "base/util.h"

/*
 * The share file KIND-PID-START (START its start time: a reused pid is another process) is
 * held locked shared by each session that needs what it names; it says "on" while a session
 * turned it on. Whoever looks at or changes it first locks the gate (KIND.lock) whole, for
 * as long as that takes: so the first in turns it on, the last out (nobody else holds a
 * share) turns it off, and what the process had by itself (on, and not "on" by jitrace) is
 * never touched. A session that died with its guard leaves "on" with no share held: the
 * next one takes it over.
 */
static int gate_lock(const char *lock_dir, const char *kind)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.lock", lock_dir, kind);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		jt_err("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void gate_unlock(int gate)
{
	flock(gate, LOCK_UN);
	close(gate);
}

/* PROC_ROOT/PID's start time (field 22 of its stat): 0, or -errno (-ESRCH: gone). */
static int start_of(const char *proc_root, uint32_t pid, unsigned long long *start)
{
	char buf[1024];
	int n = jt_procfs__read_raw(proc_root, pid, "stat", buf, sizeof(buf));

	return n < 0 ? n : jt_procfs__stat_num(buf, 22, start);
}

static void share_path(const char *lock_dir, const char *kind, uint32_t pid,
		       unsigned long long start, char *path, size_t len)
{
	snprintf(path, len, "%s/%s-%u-%llu", lock_dir, kind, pid, start);
}

/* s's process still there, the same one: its pid not reused. */
static bool still(const char *proc_root, const struct jt_share *s)
{
	unsigned long long start;

	return !start_of(proc_root, s->pid, &start) && start == s->start;
}

int jt_share__take(const char *lock_dir, const char *proc_root, uint32_t pid,
		   const struct jt_share_ops *ops, void *ctx, struct jt_share *s)
{
	char path[PATH_MAX], mark[2] = { 0 };
	int gate, share, err;
	bool alone;

	*s = (struct jt_share){ .pid = pid, .fd = -1 };
	err = start_of(proc_root, pid, &s->start);
	if (err == -ENOENT || err == -ESRCH)
		return 0;	/* gone: nothing to hold */
	if (err) {
		jt_err("%s/%u/stat: no start time: %s", proc_root, pid, strerror(-err));
		return err;
	}
	if (!lock_dir)
		return ops->first(ctx, pid, false);
	share_path(lock_dir, ops->kind, pid, s->start, path, sizeof(path));
	gate = gate_lock(lock_dir, ops->kind);
	if (gate < 0)
		return -EIO;
	share = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (share < 0) {
		err = -errno;
		jt_err("%s: %s", path, strerror(-err));
		goto out;
	}
	alone = !flock(share, LOCK_EX | LOCK_NB);
	if (pread(share, mark, 2, 0) < 0)
		mark[0] = 0;
	if (alone) {
		err = ops->first(ctx, pid, mark[0] == 'o');
		if (err == 1 && mark[0] != 'o' && pwrite(share, "on", 2, 0) != 2)
			jt_err("%s: %s", path, strerror(errno));
	} else {
		err = 1;	/* others hold it: on, by one of them */
	}
	if (err == 1 && flock(share, LOCK_SH)) {
		err = -errno;
		jt_err("%s: %s", path, strerror(-err));
	}
	if (err == 1) {
		s->fd = share;
		share = -1;
	} else if (alone && mark[0] != 'o') {
		unlink(path);	/* nothing of jitrace's there */
	}
	if (share >= 0)
		close(share);
out:
	gate_unlock(gate);
	return err;
}

void jt_share__drop(const char *lock_dir, const char *proc_root, const struct jt_share *s,
		    const struct jt_share_ops *ops, void *ctx)
{
	char path[PATH_MAX];
	int gate;

	if (s->fd < 0) {	/* not counted: this session's alone */
		if (still(proc_root, s))
			ops->last(ctx, s->pid);
		return;
	}
	gate = gate_lock(lock_dir, ops->kind);
	flock(s->fd, LOCK_UN);
	if (!flock(s->fd, LOCK_EX | LOCK_NB)) {	/* nobody else holds one */
		if (still(proc_root, s))
			ops->last(ctx, s->pid);
		/* its file goes with it, or (gone) is reused by no one: a pid's next process has
		 * another start time */
		share_path(lock_dir, ops->kind, s->pid, s->start, path, sizeof(path));
		if (unlink(path) && errno != ENOENT)
			jt_err("%s: %s", path, strerror(errno));
	}
	close(s->fd);
	if (gate >= 0)
		gate_unlock(gate);
}
