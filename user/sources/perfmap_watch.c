// SPDX-License-Identifier: GPL-2.0
/*
 * The perf-map source: the watcher's format for perf maps (watch.c says which processes to
 * look at and when): opening a process's map safely, the time of each line read. Each line
 * read becomes a code-load event, handed on; nothing comes back.
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
#include "sources/safeopen.h"
#include "base/util.h"

/* how often a followed map's name is looked up again: replaced by rename, or unlinked and
 * created again, it is another file */
#define RECHECK_NS 1000000000ULL

/* What is known of one process's map. */
struct map {
	struct jt_watch_proc p;	/* first: the watcher's (wanted: its frames need names; refused:
				 * reported once, or its agent reports its code) */
	uint32_t uid;		/* the process's owner: its map must be root's or this */
	uint64_t checked_ts;	/* the map's name last looked up (0: at the next read) */
	uint64_t polled_ts;	/* every line written before this was read */
	uint64_t exec_ts;	/* the program writing the map started then */
	uint64_t agent_ts;	/* its agent's first code report since then (0: none) */
	struct jt_perfmap_file *f;
	bool site_taken;	/* where its map is, known while it lived */
	struct jt_mapsite site;
};

struct jt_mapwatch {
	struct jt_watch w;		/* first: the watcher, whose format is perfmap_format */
	uint64_t bad_lines_gone;	/* bad lines of maps no longer followed */
	uint64_t skipped;		/* lines of processes whose agent reports their code */
	bool said_denied;		/* a process's root refused us: said once */
};

static const struct jt_watch_format perfmap_format;

static struct map *to_map(struct jt_watch_proc *p)
{
	return (struct map *)p;
}

struct jt_mapwatch *jt_mapwatch__new(jt_clock_fn clock, void *clock_ctx)
{
	struct jt_mapwatch *mw = calloc(1, sizeof(*mw));

	if (!mw) {
		jt_err("out of memory");
		return NULL;
	}
	jt_watch__init(&mw->w, &perfmap_format, clock, clock_ctx);
	return mw;
}

void jt_mapwatch__bound(struct jt_mapwatch *mw, struct jt_membound *mem)
{
	jt_watch__bound(&mw->w, mem);
}

static void map_close(struct jt_watch *w, struct jt_watch_proc *p)
{
	struct jt_mapwatch *mw = (struct jt_mapwatch *)w;
	struct map *m = to_map(p);

	mw->bad_lines_gone += jt_perfmap_file__bad_lines(m->f);
	jt_perfmap_file__free(m->f);
	m->f = NULL;
}

void jt_mapwatch__free(struct jt_mapwatch *mw)
{
	if (!mw)
		return;
	jt_watch__fini(&mw->w);
	free(mw);
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
static bool agent_known(const struct map *m, uint64_t floor)
{
	return m->agent_ts && m->agent_ts <= floor && m->exec_ts <= floor;
}

/* Hand on what m's map gained since the last read, each line a code load timed lo, until
 * the poll's time is up. */
static enum jt_watch_read map_read(struct jt_watch *w, struct jt_watch_proc *p, uint64_t now,
				   uint64_t floor, uint64_t until, jt_event_push_fn push,
				   void *ctx)
{
	struct jt_mapwatch *mw = (struct jt_mapwatch *)w;
	struct map *m = to_map(p);
	bool skip = agent_known(m, floor), late = false;
	uint64_t lo = m->polled_ts;
	struct jt_perfmap_entry e;
	union jt_event_buf b;
	int n;

	if (lo < m->exec_ts)
		lo = m->exec_ts;
	if (now - m->checked_ts >= RECHECK_NS) {
		int fd = jt_safeopen__perfmap(p->pid, m->uid);

		m->checked_ts = now;
		/* another file now has its name: read that one from its start (its lines may
		 * be from any time since the last read) */
		if (fd >= 0)
			jt_perfmap_file__replace(m->f, fd);
	}
	n = jt_perfmap_file__begin(m->f);
	while (!n && (n = jt_perfmap_file__next(m->f, &e)) > 0) {
		n = 0;
		if (skip) {
			mw->skipped++;
			continue;
		}
		jt_event__code(&b.ev, lo, p->pid, e.name, e.name_len);
		b.ev.start = e.start;
		b.ev.size = e.size;
		b.ev.src = JT_SRC_PERFMAP;
		b.ev.flags = JT_EVENT_LATE_OK;
		/* the clock is read after the bytes of this line were: a later read is safe,
		 * an earlier one (say once per poll, before a later chunk) would not be */
		b.ev.latest_ts = w->clock(w->clock_ctx);
		if (b.ev.latest_ts < lo)
			b.ev.latest_ts = lo;
		if (push(ctx, &b.ev))
			break;	/* the log failed: reported there, and everything stops */
		if (b.ev.latest_ts >= until) {
			late = true;	/* the rest at the next poll, from the next line */
			break;
		}
	}
	if (n < 0) {
		char path[128];

		map_path(p->pid, path, sizeof(path));
		jt_err("reading %s: %s; no longer following it", path, strerror(-n));
		jt_watch__close(w, p);
		p->refused = true;
		return JT_WATCH_READ_ON;
	}
	/* a read cut short by the budget leaves lines that may be as old as the last time */
	if (jt_perfmap_file__at_end(m->f))
		m->polled_ts = now;
	if (skip) {		/* its buffer is 64 KiB: a host of agents need not pay it */
		jt_watch__close(w, p);
		p->refused = true;	/* until it execs */
	}
	return late ? JT_WATCH_READ_LATE : JT_WATCH_READ_ON;
}

/* Open m's map if it has one now; proc NULL: the process is gone. */
static bool map_open(struct jt_watch *w, struct jt_watch_proc *p, const struct stat *proc,
		     uint64_t now)
{
	struct jt_mapwatch *mw = (struct jt_mapwatch *)w;
	struct map *m = to_map(p);
	char path[128];

	if (!proc) {
		/* a map written as it ended (-XX:+DumpPerfMapAtExit): found where it was */
		if (m->site_taken)
			m->f = jt_perfmap_file__open_gone(&m->site, m->uid);
		return m->f;
	}
	if (!m->site_taken && !jt_safeopen__mapsite(p->pid, &m->site)) {
		m->site_taken = true;
		m->uid = proc->st_uid;
	}
	m->f = jt_perfmap_file__open_pid(p->pid, proc->st_uid);
	if (!m->f && p->gone && m->site_taken)	/* exiting: its root may be gone already */
		m->f = jt_perfmap_file__open_gone(&m->site, m->uid);
	if (!m->f) {
		int err = errno;

		if ((err == EACCES || err == EPERM) && !mw->said_denied && geteuid()) {
			/*
			 * capabilities without root: say what is missing, once. Root refused
			 * is a process of another namespace's or an LSM's: not for us to say.
			 */
			map_path(p->pid, path, sizeof(path));
			jt_err("cannot read %s: %s: the perf maps of processes jitrace may not "
			       "trace are not read and their JIT frames stay addresses (reading "
			       "another user's process needs CAP_SYS_PTRACE; or run as root)", path,
			       strerror(err));
			mw->said_denied = true;
		}
		/* no map, a process gone, one we may not enter (said above), or a map an earlier
		 * process of that pid left (looked at again): nothing more */
		if (err != ENOENT && err != ESRCH && err != EACCES && err != ENOTDIR &&
		    err != ESTALE && !p->refused) {
			map_path(p->pid, path, sizeof(path));
			jt_err("not reading %s: %s (only a regular file owned by root or uid %u, "
			       "reached without symlinks, is read)", path, strerror(err),
			       (unsigned int)proc->st_uid);
			p->refused = true;
		}
		return false;
	}
	m->uid = proc->st_uid;
	m->checked_ts = now;
	m->polled_ts = 0;	/* lines there now may be as old as the process */
	return true;
}

/* All of a gone process's map is read (a read cut short goes on next time). */
static bool map_drained(const struct jt_watch_proc *p)
{
	return jt_perfmap_file__at_end(((const struct map *)p)->f);
}

/* A new program: nothing in the map now describes an older one; it may write its map anew. */
static void map_exec(struct jt_watch_proc *p, uint64_t ts)
{
	struct map *m = to_map(p);

	m->exec_ts = ts;
	m->agent_ts = 0;
	m->checked_ts = 0;
}

/* An agent's or a jitdump's code load: exact times, its map not needed. */
static void map_see(struct jt_watch *w, const struct jt_event *ev)
{
	struct jt_watch_proc *p;
	struct map *m;

	if (ev->type != JT_EV_CODE_LOAD || (ev->src != JT_SRC_AGENT && ev->src != JT_SRC_JITDUMP))
		return;
	p = jt_watch__get(w, ev->pid);
	if (!p)
		return;
	m = to_map(p);
	if (!m->agent_ts || m->agent_ts < m->exec_ts)
		m->agent_ts = ev->ts;
}

/* A map is followed while its process lives and has no agent; it keeps its name's file. */
static const struct jt_watch_format perfmap_format = {
	.proc_size = sizeof(struct map),
	.file_bytes = JT_PERFMAP_FILE_BYTES,	/* past the account's limit a map waits */
	.open = map_open, .read = map_read, .drained = map_drained, .close = map_close,
	.exec = map_exec, .see = map_see,
};

void jt_mapwatch__notice(struct jt_mapwatch *mw, uint32_t pid)
{
	jt_watch__notice(&mw->w, pid);
}

void jt_mapwatch__see(struct jt_mapwatch *mw, const struct jt_event *ev)
{
	jt_watch__see(&mw->w, ev);
}

void jt_mapwatch__poll(struct jt_mapwatch *mw, uint64_t now, uint64_t floor, uint64_t until,
		       jt_event_push_fn push, void *ctx)
{
	jt_watch__poll(&mw->w, now, floor, until, push, ctx);
}

size_t jt_mapwatch__following(const struct jt_mapwatch *mw)
{
	return mw->w.following;
}

uint64_t jt_mapwatch__bad_lines(const struct jt_mapwatch *mw)
{
	size_t pos = 0;
	uint64_t key, n = mw->bad_lines_gone;
	void *val;

	while (jt_hash__next(&mw->w.procs, &pos, &key, &val)) {
		const struct map *m = val;

		if (m->f)
			n += jt_perfmap_file__bad_lines(m->f);
	}
	return n;
}

uint64_t jt_mapwatch__skipped(const struct jt_mapwatch *mw)
{
	return mw->skipped;
}
