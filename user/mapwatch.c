// SPDX-License-Identifier: GPL-2.0
/* Perf map following: which maps to open, when to read them, and the time of each line. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hash.h"
#include "mapwatch.h"
#include "util.h"

/* look again for a map that was not there: soon at first, then less and less often */
#define RETRY_MIN_NS 50000000ULL
#define RETRY_MAX_NS 2000000000ULL

struct watch {
	uint32_t pid;
	bool refused;		/* reported once: a map we will not read */
	bool drop;		/* close the map after this read (jt_mapwatch__drop) */
	uint64_t tried_ts;
	uint64_t retry_ns;	/* wait before trying again */
	uint64_t polled_ts;	/* every line written before this was read */
	uint64_t exec_ts;	/* the program writing the map started then */
	struct jt_perfmap_file *f;
};

struct jt_mapwatch {
	struct jt_hash watches;	/* pid -> struct watch */
	jt_mapwatch_cb cb;
	void *ctx;
	jt_clock_fn clock;
	void *clock_ctx;
	size_t following;
	uint64_t bad_lines_gone;	/* bad lines of maps no longer followed */
	bool said_denied;		/* a process's root refused us: said once */
	/* set for the duration of one poll, for on_entry */
	uint32_t cur_pid;
	uint64_t cur_ts;
};

static uint64_t real_clock(void *ctx)
{
	(void)ctx;
	return jt_now_ns();
}

struct jt_mapwatch *jt_mapwatch__new(jt_mapwatch_cb cb, void *ctx, jt_clock_fn clock,
				     void *clock_ctx)
{
	struct jt_mapwatch *mw = calloc(1, sizeof(*mw));

	if (!mw) {
		jt_err("out of memory");
		return NULL;
	}
	mw->cb = cb;
	mw->ctx = ctx;
	mw->clock = clock ? clock : real_clock;
	mw->clock_ctx = clock_ctx;
	return mw;
}

static void watch_free(struct jt_mapwatch *mw, struct watch *w)
{
	if (w->f) {
		mw->bad_lines_gone += jt_perfmap_file__bad_lines(w->f);
		jt_perfmap_file__free(w->f);
		mw->following--;
	}
	free(w);
}

void jt_mapwatch__free(struct jt_mapwatch *mw)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	if (!mw)
		return;
	while (jt_hash__next(&mw->watches, &pos, &key, &val))
		watch_free(mw, val);
	jt_hash__fini(&mw->watches);
	free(mw);
}

/* pid's map path for a message; the host's spelling once the process is gone. */
static void map_path(uint32_t pid, char *buf, size_t len)
{
	if (jt_perfmap__path(pid, buf, len))
		snprintf(buf, len, "/proc/%u/root/tmp/perf-%u.map", (unsigned int)pid,
			 (unsigned int)pid);
}

static void on_entry(void *ctx, const struct jt_perfmap_entry *e)
{
	struct jt_mapwatch *mw = ctx;

	/* the clock is read after the bytes of this line were: a later read is safe, an
	 * earlier one (say once per poll, before a later chunk) would not be */
	mw->cb(mw->ctx, mw->cur_pid, mw->cur_ts, mw->clock(mw->clock_ctx), e);
}

static void poll_one(struct jt_mapwatch *mw, struct watch *w, uint64_t now)
{
	int n;

	mw->cur_pid = w->pid;
	mw->cur_ts = w->polled_ts > w->exec_ts ? w->polled_ts : w->exec_ts;
	n = jt_perfmap_file__poll(w->f, on_entry, mw);
	if (n < 0) {
		char path[128];

		map_path(w->pid, path, sizeof(path));
		jt_err("reading %s: %s; no longer following it", path, strerror(-n));
		mw->bad_lines_gone += jt_perfmap_file__bad_lines(w->f);
		jt_perfmap_file__free(w->f);
		w->f = NULL;
		w->refused = true;
		mw->following--;
		return;
	}
	/* a read cut short by the budget leaves lines that may be as old as the last time */
	if (jt_perfmap_file__at_end(w->f))
		w->polled_ts = now;
	if (w->drop) {		/* its buffer is 64 KiB: a host of agents need not pay it */
		mw->bad_lines_gone += jt_perfmap_file__bad_lines(w->f);
		jt_perfmap_file__free(w->f);
		w->f = NULL;
		w->refused = true;	/* until it execs */
		w->drop = false;
		mw->following--;
	}
}

static void try_open(struct jt_mapwatch *mw, struct watch *w, uint64_t now)
{
	char dir[64], path[128];
	struct stat st;

	w->tried_ts = now;
	w->retry_ns = w->retry_ns ? 2 * w->retry_ns : RETRY_MIN_NS;
	if (w->retry_ns > RETRY_MAX_NS)
		w->retry_ns = RETRY_MAX_NS;
	snprintf(dir, sizeof(dir), "/proc/%u", w->pid);
	if (stat(dir, &st))
		return;		/* gone */
	w->f = jt_perfmap_file__open_pid(w->pid, st.st_uid);
	if (!w->f) {
		int err = errno;

		if ((err == EACCES || err == EPERM) && !mw->said_denied) {
			/* capabilities without root: say what is missing, once */
			map_path(w->pid, path, sizeof(path));
			jt_err("cannot read %s: %s: the perf maps of processes jitrace may not "
			       "trace are not read and their JIT frames stay addresses (reading "
			       "another user's process needs CAP_SYS_PTRACE; or run as root)", path,
			       strerror(err));
			mw->said_denied = true;
		}
		/* no map, a process gone, or one we may not enter (said above): nothing more */
		if (err != ENOENT && err != ESRCH && err != EACCES && err != ENOTDIR &&
		    !w->refused) {
			map_path(w->pid, path, sizeof(path));
			jt_err("not reading %s: %s (only a regular file owned by root or uid %u, "
			       "reached without symlinks, is read)", path, strerror(err),
			       (unsigned int)st.st_uid);
			w->refused = true;
		}
		return;
	}
	mw->following++;
	w->polled_ts = 0;	/* lines there now may be as old as the process */
	poll_one(mw, w, now);
}

static struct watch *watch_get(struct jt_mapwatch *mw, uint32_t pid)
{
	struct watch *w = jt_hash__get(&mw->watches, pid);

	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w || jt_hash__put(&mw->watches, pid, w)) {
		free(w);
		return NULL;	/* memory is short: this map can wait */
	}
	w->pid = pid;
	return w;
}

void jt_mapwatch__notice(struct jt_mapwatch *mw, uint32_t pid, uint64_t now)
{
	(void)now;
	watch_get(mw, pid);	/* opened at the next poll, once its exec is known too */
}

void jt_mapwatch__exec(struct jt_mapwatch *mw, uint32_t pid, uint64_t ts)
{
	struct watch *w = watch_get(mw, pid);

	if (!w)
		return;
	w->exec_ts = ts;
	/* nothing in the map now describes an older program */
	if (!w->f) {		/* a new program: it may write a map soon */
		w->tried_ts = 0;
		w->retry_ns = 0;
		w->refused = false;
	}
}

void jt_mapwatch__scan(struct jt_mapwatch *mw, uint64_t now)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d) {
		jt_err("listing /proc: %s", strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid)
			continue;
		jt_mapwatch__notice(mw, pid, now);
	}
	closedir(d);
	jt_mapwatch__poll(mw, now);
}

void jt_mapwatch__poll(struct jt_mapwatch *mw, uint64_t now)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&mw->watches, &pos, &key, &val)) {
		struct watch *w = val;

		if (w->f)
			poll_one(mw, w, now);
		else if (!w->refused && (!w->tried_ts || now - w->tried_ts >= w->retry_ns))
			try_open(mw, w, now);
	}
}

void jt_mapwatch__forget(struct jt_mapwatch *mw, uint32_t pid, uint64_t now)
{
	struct watch *w = jt_hash__del(&mw->watches, pid);

	if (!w)
		return;
	if (w->f)	/* the fd still reads the file after the process is gone */
		poll_one(mw, w, now);
	watch_free(mw, w);
}

void jt_mapwatch__drop(struct jt_mapwatch *mw, uint32_t pid)
{
	struct watch *w = jt_hash__get(&mw->watches, pid);

	if (w && w->f)
		w->drop = true;
}

uint64_t jt_mapwatch__exec_ts(const struct jt_mapwatch *mw, uint32_t pid)
{
	const struct watch *w = jt_hash__get(&mw->watches, pid);

	return w ? w->exec_ts : 0;
}

size_t jt_mapwatch__following(const struct jt_mapwatch *mw)
{
	return mw->following;
}

uint64_t jt_mapwatch__bad_lines(const struct jt_mapwatch *mw)
{
	size_t pos = 0;
	uint64_t key, n = mw->bad_lines_gone;
	void *val;

	while (jt_hash__next(&mw->watches, &pos, &key, &val)) {
		const struct watch *w = val;

		if (w->f)
			n += jt_perfmap_file__bad_lines(w->f);
	}
	return n;
}
