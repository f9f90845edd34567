// SPDX-License-Identifier: GPL-2.0
/*
 * The perf-map source: which maps to open, when to read them, and the time of each line.
 * Each line read becomes a code-load event, handed on; nothing comes back.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "sources/perfmap_watch.h"
#include "base/membound.h"
#include "sources/safeopen.h"
#include "base/util.h"

/* look again for a map that was not there: soon at first, then less and less often */
#define RETRY_MIN_NS 50000000ULL
#define RETRY_MAX_NS 2000000000ULL
/* how often a followed map's name is looked up again: replaced by rename, or unlinked and
 * created again, it is another file */
#define RECHECK_NS 1000000000ULL

/* What is known of one process's map. */
struct watch {
	uint32_t pid;
	bool wanted;		/* its frames need names: follow its map */
	bool refused;		/* reported once, or its agent reports its code: not read */
	bool gone;		/* it exited: read what is left, then let it go */
	uint32_t uid;		/* the process's owner: its map must be root's or this */
	uint64_t checked_ts;	/* the map's name last looked up (0: at the next read) */
	uint64_t tried_ts;
	uint64_t retry_ns;	/* wait before trying again */
	uint64_t polled_ts;	/* every line written before this was read */
	uint64_t exec_ts;	/* the program writing the map started then */
	uint64_t agent_ts;	/* its agent's first code report since then (0: none) */
	struct jt_perfmap_file *f;
	bool site_taken;	/* where its map is, known while it lived */
	struct jt_mapsite site;
};

struct jt_mapwatch {
	struct jt_hash watches;	/* pid -> struct watch */
	jt_clock_fn clock;
	void *clock_ctx;
	struct jt_membound *mem;	/* each map followed is charged to it (NULL: none) */
	size_t following;
	uint64_t bad_lines_gone;	/* bad lines of maps no longer followed */
	uint64_t skipped;		/* lines of processes whose agent reports their code */
	bool said_denied;		/* a process's root refused us: said once */
	struct watch **dead;		/* gone, freed at the end of a poll */
	size_t ndead, cap_dead;
	size_t cursor;			/* the slot the last poll ran out of time at */
	uint64_t until;			/* this poll's end */
	bool late;			/* it has come */
};

static uint64_t real_clock(void *ctx)
{
	(void)ctx;
	return jt_now_ns();
}

struct jt_mapwatch *jt_mapwatch__new(jt_clock_fn clock, void *clock_ctx)
{
	struct jt_mapwatch *mw = calloc(1, sizeof(*mw));

	if (!mw) {
		jt_err("out of memory");
		return NULL;
	}
	mw->clock = clock ? clock : real_clock;
	mw->clock_ctx = clock_ctx;
	return mw;
}

void jt_mapwatch__bound(struct jt_mapwatch *mw, struct jt_membound *mem)
{
	mw->mem = mem;
}

static void watch_close(struct jt_mapwatch *mw, struct watch *w)
{
	if (!w->f)
		return;
	mw->bad_lines_gone += jt_perfmap_file__bad_lines(w->f);
	jt_perfmap_file__free(w->f);
	jt_membound__give(mw->mem, JT_PERFMAP_FILE_BYTES);
	w->f = NULL;
	mw->following--;
}

static void watch_free(struct jt_mapwatch *mw, struct watch *w)
{
	jt_hash__del(&mw->watches, w->pid);
	watch_close(mw, w);
	free(w);
}

void jt_mapwatch__free(struct jt_mapwatch *mw)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	if (!mw)
		return;
	while (jt_hash__next(&mw->watches, &pos, &key, &val)) {
		watch_close(mw, val);
		free(val);
	}
	jt_hash__fini(&mw->watches);
	free(mw->dead);
	free(mw);
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

/* pid's map path for a message; the host's spelling once the process is gone. */
static void map_path(uint32_t pid, char *buf, size_t len)
{
	if (jt_perfmap__path(pid, buf, len))
		snprintf(buf, len, "/proc/%u/root/tmp/perf-%u.map", (unsigned int)pid,
			 (unsigned int)pid);
}

/* Whether the process's agent reports its code, as far as the join already knows (the
 * join ignores its map lines then; see jt_collector__event). */
static bool agent_known(const struct watch *w, uint64_t floor)
{
	return w->agent_ts && w->agent_ts <= floor && w->exec_ts <= floor;
}

/* Hand on what w's map gained since the last read, each line a code load timed lo, until
 * the poll's time is up. */
static void read_map(struct jt_mapwatch *mw, struct watch *w, uint64_t now, uint64_t floor,
		     jt_event_push_fn push, void *ctx)
{
	bool skip = agent_known(w, floor);
	uint64_t lo = w->polled_ts;
	struct jt_perfmap_entry e;
	union jt_event_buf b;
	int n;

	if (lo < w->exec_ts)
		lo = w->exec_ts;
	if (now - w->checked_ts >= RECHECK_NS) {
		int fd = jt_safeopen__perfmap(w->pid, w->uid);

		w->checked_ts = now;
		/* another file now has its name: read that one from its start (its lines may
		 * be from any time since the last read) */
		if (fd >= 0)
			jt_perfmap_file__replace(w->f, fd);
	}
	n = jt_perfmap_file__begin(w->f);
	while (!n && (n = jt_perfmap_file__next(w->f, &e)) > 0) {
		n = 0;
		if (skip) {
			mw->skipped++;
			continue;
		}
		jt_event__code(&b.ev, lo, w->pid, e.name, e.name_len);
		b.ev.start = e.start;
		b.ev.size = e.size;
		b.ev.src = JT_SRC_PERFMAP;
		b.ev.flags = JT_EVENT_LATE_OK;
		/* the clock is read after the bytes of this line were: a later read is safe,
		 * an earlier one (say once per poll, before a later chunk) would not be */
		b.ev.latest_ts = mw->clock(mw->clock_ctx);
		if (b.ev.latest_ts < lo)
			b.ev.latest_ts = lo;
		if (push(ctx, &b.ev))
			break;	/* the log failed: reported there, and everything stops */
		if (b.ev.latest_ts >= mw->until) {
			mw->late = true;	/* the rest at the next poll, from the next line */
			break;
		}
	}
	if (n < 0) {
		char path[128];

		map_path(w->pid, path, sizeof(path));
		jt_err("reading %s: %s; no longer following it", path, strerror(-n));
		watch_close(mw, w);
		w->refused = true;
		return;
	}
	/* a read cut short by the budget leaves lines that may be as old as the last time */
	if (jt_perfmap_file__at_end(w->f))
		w->polled_ts = now;
	if (skip) {		/* its buffer is 64 KiB: a host of agents need not pay it */
		watch_close(mw, w);
		w->refused = true;	/* until it execs */
	}
}

/* Open w's map if it has one now. Returns false if the process is gone. */
static bool try_open(struct jt_mapwatch *mw, struct watch *w, uint64_t now)
{
	char dir[64], path[128];
	struct stat st;

	w->tried_ts = now;
	w->retry_ns = w->retry_ns ? 2 * w->retry_ns : RETRY_MIN_NS;
	if (w->retry_ns > RETRY_MAX_NS)
		w->retry_ns = RETRY_MAX_NS;
	snprintf(dir, sizeof(dir), "/proc/%u", w->pid);
	if (stat(dir, &st)) {
		/* a map written as it ended (-XX:+DumpPerfMapAtExit): found where it was */
		if (w->site_taken && (w->f = jt_perfmap_file__open_gone(&w->site, w->uid)))
			mw->following++;
		return false;
	}
	if (!w->site_taken && !jt_safeopen__mapsite(w->pid, &w->site)) {
		w->site_taken = true;
		w->uid = st.st_uid;
	}
	w->f = jt_perfmap_file__open_pid(w->pid, st.st_uid);
	if (!w->f && w->gone && w->site_taken)	/* exiting: its root may be gone already */
		w->f = jt_perfmap_file__open_gone(&w->site, w->uid);
	if (!w->f) {
		int err = errno;

		if ((err == EACCES || err == EPERM) && !mw->said_denied && geteuid()) {
			/*
			 * capabilities without root: say what is missing, once. Root refused
			 * is a process of another namespace's or an LSM's: not for us to say.
			 */
			map_path(w->pid, path, sizeof(path));
			jt_err("cannot read %s: %s: the perf maps of processes jitrace may not "
			       "trace are not read and their JIT frames stay addresses (reading "
			       "another user's process needs CAP_SYS_PTRACE; or run as root)", path,
			       strerror(err));
			mw->said_denied = true;
		}
		/* no map, a process gone, one we may not enter (said above), or a map an earlier
		 * process of that pid left (looked at again): nothing more */
		if (err != ENOENT && err != ESRCH && err != EACCES && err != ENOTDIR &&
		    err != ESTALE && !w->refused) {
			map_path(w->pid, path, sizeof(path));
			jt_err("not reading %s: %s (only a regular file owned by root or uid %u, "
			       "reached without symlinks, is read)", path, strerror(err),
			       (unsigned int)st.st_uid);
			w->refused = true;
		}
		return true;
	}
	mw->following++;
	w->uid = st.st_uid;
	w->checked_ts = now;
	w->polled_ts = 0;	/* lines there now may be as old as the process */
	return true;
}

void jt_mapwatch__notice(struct jt_mapwatch *mw, uint32_t pid)
{
	struct watch *w = watch_get(mw, pid);

	if (w)
		w->wanted = true;	/* opened at the next poll, once its exec is known too */
}

void jt_mapwatch__see(struct jt_mapwatch *mw, const struct jt_event *ev)
{
	struct watch *w;

	switch (ev->type) {
	case JT_EV_SAMPLE:
		if (ev->nr_user)	/* opened at the next poll, before the sample is joined */
			jt_mapwatch__notice(mw, ev->pid);
		return;
	case JT_EV_EXEC:
		w = watch_get(mw, ev->pid);
		if (!w)
			return;
		/* a new program: nothing in the map now describes an older one, and it may
		 * write a map soon */
		w->wanted = true;
		w->gone = false;
		w->exec_ts = ev->ts;
		w->agent_ts = 0;
		w->checked_ts = 0;	/* the new program may write its map anew */
		if (!w->f) {
			w->tried_ts = 0;
			w->retry_ns = 0;
			w->refused = false;
		}
		return;
	case JT_EV_EXIT:
		w = watch_get(mw, ev->pid);
		if (w)
			w->gone = true;
		return;
	case JT_EV_CODE_LOAD:	/* an agent, or a jitdump: exact times, its map not needed */
		if (ev->src != JT_SRC_AGENT && ev->src != JT_SRC_JITDUMP)
			return;
		w = watch_get(mw, ev->pid);
		if (w && (!w->agent_ts || w->agent_ts < w->exec_ts))
			w->agent_ts = ev->ts;
		return;
	default:
		return;
	}
}

static void keep_dead(struct jt_mapwatch *mw, struct watch *w)
{
	if (mw->ndead == mw->cap_dead) {
		size_t cap = mw->cap_dead ? 2 * mw->cap_dead : 16;
		struct watch **d = realloc(mw->dead, cap * sizeof(*d));

		if (!d)
			return;	/* memory is short: let it go at a later poll */
		mw->dead = d;
		mw->cap_dead = cap;
	}
	mw->dead[mw->ndead++] = w;
}

void jt_mapwatch__poll(struct jt_mapwatch *mw, uint64_t now, uint64_t floor, uint64_t until,
		       jt_event_push_fn push, void *ctx)
{
	size_t first = mw->cursor, pos = first;
	bool wrapped = false;
	uint64_t key;
	void *val;

	mw->until = until;
	mw->late = false;
	mw->cursor = 0;
	/* from where the last poll ran out of time, round to it: every map has its turn */
	while (jt_hash__next_round(&mw->watches, first, &pos, &wrapped, &key, &val)) {
		struct watch *w = val;

		if (mw->late || mw->clock(mw->clock_ctx) >= until) {
			mw->cursor = pos - 1;	/* this one first next time */
			break;
		}
		if (!w->f && w->wanted && !w->refused &&
		    (w->gone || !w->tried_ts || now - w->tried_ts >= w->retry_ns) &&
		    jt_membound__take(mw->mem, JT_PERFMAP_FILE_BYTES)) {
			if (!try_open(mw, w, now))
				w->gone = true;		/* nothing more of it will come */
			if (!w->f)
				jt_membound__give(mw->mem, JT_PERFMAP_FILE_BYTES);
		}
		if (w->f)	/* the fd still reads the file after the process is gone */
			read_map(mw, w, now, floor, push, ctx);
		/* gone: let go once what it left is read (a read cut short goes on next time) */
		if (w->gone && (!w->f || jt_perfmap_file__at_end(w->f)))
			keep_dead(mw, w);
	}
	/* let them go after the walk: the hash may not change under it */
	for (size_t i = 0; i < mw->ndead; i++)
		watch_free(mw, mw->dead[i]);
	mw->ndead = 0;
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

uint64_t jt_mapwatch__skipped(const struct jt_mapwatch *mw)
{
	return mw->skipped;
}
