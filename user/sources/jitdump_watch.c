// SPDX-License-Identifier: GPL-2.0
/*
 * The jitdump source: the watcher's format for jitdump files (watch.c says which processes
 * to look at and when): finding the file a process announced by mapping it, reading its
 * records as they are appended, and a code event of each load and move, timed by the
 * record's own timestamp.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/jitdump.h"
#include "sources/jitdump_watch.h"
#include "sources/watch.h"
#include "jt_log_format.h"
#include "host/procfs.h"
#include "sources/safeopen.h"
#include "base/util.h"

/* a process's file is looked for this long after it is seen or execs (watch.c: how often) */
#define LOOK_NS 30000000000ULL
#define READ_MAX (16u << 20)		/* bytes of records read from one file per poll */
/* bytes of a code load read: its header, fields and a name of up to 4 KiB, not its code */
#define PREFIX_MAX (JT_JITDUMP_REC_HDR + 40 + 4096)
#define DEBUG_MAX (256u << 10)		/* a larger debug-info record gives no lines */
#define CLOCK_SLACK_NS 10000000000ULL	/* a record this far ahead of now: another clock */
/* a record unfinished at the end this long, the file no longer open: never to be finished */
#define STUCK_NS 1000000000ULL

struct jfile {
	struct jt_watch_proc p;	/* first: the watcher's (refused: said why once, not read) */
	bool running;		/* running when recording began: its file is there or never */
	int fd;			/* while open (-1 once closed) */
	uint64_t off;		/* next record; 0: the header is not read yet */
	struct jt_event *lines;	/* lines from debug info, waiting for the code they describe */
	uint64_t lines_addr;	/* its address */
	bool unannounced;	/* found by its name alone, not mapped: its header must say its pid */
	uint32_t nspid;		/* the pid it names, its process's in its own namespace */
	uint64_t stuck_size;	/* its size when a record at its end was last seen unfinished */
	uint64_t stuck_ts;	/* since when */
	char path[160];		/* for messages */
};

struct jt_jitwatch {
	struct jt_watch w;	/* first: the watcher, whose format is jitdump_format */
	const char *proc_root;
	struct jt_jitwatch_stats st;	/* files: the watcher's count */
	char buf[DEBUG_MAX];
};

static const struct jt_watch_format jitdump_format;

static struct jfile *to_jfile(struct jt_watch_proc *p)
{
	return (struct jfile *)p;
}

struct jt_jitwatch *jt_jitwatch__new(const char *proc_root)
{
	struct jt_jitwatch *jw = calloc(1, sizeof(*jw));

	if (!jw) {
		jt_err("out of memory");
		return NULL;
	}
	jt_watch__init(&jw->w, &jitdump_format, NULL, NULL);
	jw->proc_root = proc_root ? proc_root : "/proc";
	return jw;
}

static void file_close(struct jt_watch *w, struct jt_watch_proc *p)
{
	struct jfile *f = to_jfile(p);

	(void)w;
	free(f->lines);
	f->lines = NULL;
	close(f->fd);
	f->fd = -1;
}

void jt_jitwatch__free(struct jt_jitwatch *jw)
{
	if (!jw)
		return;
	jt_watch__fini(&jw->w);
	free(jw);
}

void jt_jitwatch__notice(struct jt_jitwatch *jw, uint32_t pid)
{
	jt_watch__notice(&jw->w, pid);
}

void jt_jitwatch__running(struct jt_jitwatch *jw, uint32_t pid)
{
	struct jt_watch_proc *p = jt_watch__get(&jw->w, pid);

	if (p && !p->wanted) {
		p->wanted = true;
		to_jfile(p)->running = true;
	}
}

void jt_jitwatch__see(struct jt_jitwatch *jw, const struct jt_event *ev)
{
	jt_watch__see(&jw->w, ev);
}

/* The new program writes its own file, or none (the watcher closed the old one). */
static void file_exec(struct jt_watch_proc *p, uint64_t ts)
{
	struct jfile *f = to_jfile(p);

	(void)ts;
	f->running = false;
	f->off = 0;
}

/* Say once why f's file is not read, and stop reading it. */
static void refuse(struct jt_jitwatch *jw, struct jfile *f, const char *why)
{
	jt_err("not reading %s (pid %u): %s", f->path, (unsigned int)f->p.pid, why);
	jw->st.bad++;
	jt_watch__close(&jw->w, &f->p);
	f->p.refused = true;
}

/* The process's jitdump: the file named jit-N.dump that it maps executable. */
static bool find_path(struct jt_jitwatch *jw, struct jfile *f)
{
	struct jt_vmas vm = { 0 };
	bool found = false;
	size_t i;

	if (jt_procfs__read_maps(jw->proc_root, f->p.pid, &vm))
		return false;
	for (i = 0; i < vm.n && !found; i++) {
		const char *base = strrchr(vm.v[i].path, '/');
		unsigned int n;
		char tail[8];

		base = base ? base + 1 : vm.v[i].path;
		if (sscanf(base, "jit-%u.dump%7s", &n, tail) == 1 &&
		    strlen(vm.v[i].path) < sizeof(f->path)) {
			strcpy(f->path, vm.v[i].path);
			found = true;
		}
	}
	jt_vmas__free(&vm);
	return found;
}

/* Look for f's file and open it; proc NULL: the process is gone. */
static bool file_open(struct jt_watch *w, struct jt_watch_proc *p, const struct stat *proc,
		      uint64_t now)
{
	struct jt_jitwatch *jw = (struct jt_jitwatch *)w;
	struct jfile *f = to_jfile(p);
	int fd;

	(void)now;
	if (!proc)
		return false;
	fd = jt_safeopen__perfmap(p->pid, proc->st_uid);
	if (fd >= 0) {
		/* it writes a perf map too (BEAM's +JPperf true, .NET's PerfMapEnabled=1):
		 * its code is named from that, as it was before jitdumps were read */
		close(fd);
		p->refused = true;
		return false;
	}
	f->unannounced = false;
	if (find_path(jw, f)) {
		f->fd = jt_safeopen__in_root(p->pid, f->path, proc->st_uid);
	} else {
		/*
		 * Not mapped (any more): a writer that stopped early unmaps it, as .NET 10 does
		 * two records in under DOTNET_PerfMapEnabled=2, within its first milliseconds.
		 * Its /tmp/jit-N.dump written since it started is still its own, and says so.
		 */
		f->fd = jt_safeopen__jitdump(p->pid, proc->st_uid, f->path, sizeof(f->path));
		if (f->fd < 0 || sscanf(f->path, "/tmp/jit-%u.dump", &f->nspid) != 1) {
			/* nothing it announced is the process's to say anything of; a runtime
			 * maps its file as it starts: one running already has it, or never
			 * will (looking again would read every process's maps for 30 s
			 * under -a) */
			if (f->fd >= 0)
				close(f->fd);
			f->fd = -1;
			p->refused = f->running;
			return false;
		}
		f->unannounced = true;
	}
	if (f->fd < 0) {
		if (errno != ENOENT && errno != ESRCH)
			refuse(jw, f, strerror(errno));
		return false;
	}
	f->off = 0;
	return true;
}

/* Read the header once it is all there. Returns false while it is not. */
static bool read_header(struct jt_jitwatch *jw, struct jfile *f, uint64_t size)
{
	struct jt_jitdump_header h;
	ssize_t n = pread(f->fd, jw->buf, size < 4096 ? size : 4096, 0);
	int err = n < 0 ? -errno : jt_jitdump__header(jw->buf, (size_t)n, &h);

	if (err == -EAGAIN)
		return false;
	if (f->unannounced && (err || h.pid != f->nspid)) {
		/* not announced, and not its own by what it says: another's, nothing to say */
		jt_watch__close(&jw->w, &f->p);
		f->p.refused = true;
		return false;
	}
	if (err == -EPROTO)
		refuse(jw, f, "written in the other byte order");
	else if (err)
		refuse(jw, f, n < 0 ? strerror(-err) : "not a version 1 jitdump file");
	else if (h.flags & JT_JITDUMP_FLAG_ARCH_TS)
		refuse(jw, f, "its times are the CPU's time stamp counter, not CLOCK_MONOTONIC "
		       "(a JVMTI agent asked for it; leave that option off)");
	else
		f->off = h.size;
	return !err && f->off;
}

static int by_off(const void *a, const void *b)
{
	const struct jt_line *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The index of file among the names so far, added if new; -1 when there is no room. */
static int name_index(char *names, uint32_t *len, const char *file, size_t flen)
{
	uint32_t at = 0;
	int i = 0;

	while (at < *len) {
		size_t n = strlen(names + at);

		if (n == flen && !memcmp(names + at, file, flen))
			return i;
		at += n + 1;
		i++;
	}
	if (*len + flen + 1 > JT_LINES_NAMES_MAX || memchr(file, 0, flen))
		return -1;
	memcpy(names + *len, file, flen);
	names[*len + flen] = 0;
	*len += flen + 1;
	return i;
}

/*
 * A debug-info record: its lines, as the event that will follow the load of the code they
 * describe (the record comes before the load). Entries before the code are left out.
 */
static void take_lines(struct jfile *f, const struct jt_jitdump_rec *r)
{
	size_t cap = JT_EVENT_FIXED + JT_LINES_MAX * sizeof(struct jt_line) + JT_LINES_NAMES_MAX;
	struct jt_event *ev = malloc(cap);
	struct jt_line *lines;
	struct jt_jitdump_line l;
	uint32_t n = 0, names_len = 0;
	char names[JT_LINES_NAMES_MAX];
	int file = -1;
	size_t pos = 0;

	free(f->lines);
	f->lines = NULL;
	if (!ev)
		return;		/* memory is short: this code goes without lines */
	lines = (struct jt_line *)ev->tail;
	while (n < JT_LINES_MAX && jt_jitdump__line(r, &pos, &l)) {
		/* "\xff" names the file of the entry before (the spec's shorthand) */
		if (!(l.file_len == 1 && (unsigned char)l.file[0] == 0xff && file >= 0))
			file = name_index(names, &names_len, l.file, l.file_len);
		if (file < 0 || l.addr < r->addr || l.addr - r->addr > UINT32_MAX)
			continue;
		lines[n++] = (struct jt_line){ .off = (uint32_t)(l.addr - r->addr),
					       .line = l.line, .file = (uint32_t)file };
	}
	if (!n) {
		free(ev);
		return;
	}
	qsort(lines, n, sizeof(*lines), by_off);
	memset(ev, 0, JT_EVENT_FIXED);
	ev->type = JT_EV_CODE_LINES;
	ev->pid = ev->tid = f->p.pid;
	ev->nr_lines = n;
	ev->names_len = names_len;
	memcpy((char *)(lines + n), names, names_len);
	ev->len = jt_event__size(n * sizeof(*lines) + names_len);
	memset((char *)(lines + n) + names_len, 0,
	       ev->len - JT_EVENT_FIXED - n * sizeof(*lines) - names_len);
	f->lines = ev;
	f->lines_addr = r->addr;
}

/* After the load of code at addr with id, at ts: the lines waiting for it, if they are its. */
static int push_lines(struct jfile *f, uint64_t addr, uint64_t id, uint64_t ts,
		      jt_event_push_fn push, void *ctx)
{
	struct jt_event *ev = f->lines;
	int err;

	if (!ev || f->lines_addr != addr)
		return 0;
	f->lines = NULL;
	ev->ts = ts;
	ev->flags = JT_EVENT_LATE_OK;
	ev->lines_of = id;
	err = push(ctx, ev);
	free(ev);
	return err;
}

/*
 * One record at f->off, size bytes, whose first have bytes the caller read into jw->buf:
 * handed on if it is a load or a move, kept if it is debug info.
 */
static int take_record(struct jt_jitwatch *jw, struct jfile *f, uint32_t size, size_t have,
		       uint64_t now, jt_event_push_fn push, void *ctx)
{
	size_t want = size < have ? size : have;
	struct jt_jitdump_rec r;
	union jt_event_buf b;
	uint32_t type;
	ssize_t n;
	int err;

	memcpy(&type, jw->buf, sizeof(type));
	if (type == JT_JITDUMP_CODE_DEBUG_INFO && size <= DEBUG_MAX && size > have) {
		n = pread(f->fd, jw->buf, size, (off_t)f->off);	/* all of it: its lines */
		if (n < 0)
			return -errno;
		want = (size_t)n == size ? size : 0;
	} else if (type != JT_JITDUMP_CODE_LOAD && type != JT_JITDUMP_CODE_MOVE &&
		   type != JT_JITDUMP_CODE_DEBUG_INFO) {
		return 0;	/* unwinding info, close: not needed */
	} else if (type == JT_JITDUMP_CODE_DEBUG_INFO && size > DEBUG_MAX) {
		return 0;	/* too large to keep: that code goes without lines */
	}
	if (!want || jt_jitdump__rec(jw->buf, want, &r)) {
		jw->st.bad++;
		return 0;
	}
	if (r.ts > now + CLOCK_SLACK_NS) {
		refuse(jw, f, "its times are not CLOCK_MONOTONIC's");
		return -EPROTO;
	}
	if (r.type == JT_JITDUMP_CODE_DEBUG_INFO) {
		take_lines(f, &r);
		return 0;
	}
	if (r.type == JT_JITDUMP_CODE_LOAD) {
		jt_event__code(&b.ev, r.ts, f->p.pid, r.name, r.name_len);
	} else {
		memset(&b.ev, 0, JT_EVENT_FIXED);
		b.ev = (struct jt_event){ .ts = r.ts, .len = JT_EVENT_FIXED,
					  .type = JT_EV_CODE_MOVE, .pid = f->p.pid,
					  .tid = f->p.pid };
	}
	b.ev.tid = r.tid ? r.tid : f->p.pid;
	b.ev.src = JT_SRC_JITDUMP;
	b.ev.flags = JT_EVENT_LATE_OK;	/* read after the fact: still true when read */
	b.ev.id = JT_JITDUMP_ID_BIT | r.index;
	b.ev.start = r.addr;
	b.ev.size = r.code_size;
	jw->st.records++;
	err = push(ctx, &b.ev);
	if (!err && r.type == JT_JITDUMP_CODE_LOAD)
		err = push_lines(f, r.addr, b.ev.id, r.ts, push, ctx);
	return err;
}

/*
 * A record left unfinished at the end of f's file (off its start, size what it claims, 0 if
 * not even its header is whole), the file size bytes long: its writer stopped there if the
 * process is gone, or if the file has not grown for STUCK_NS and the process no longer has it
 * open. Then that is said, naming the file and the offset, and counted; what was read before
 * stays. Returns true if so (the file is let go).
 */
static bool cut_short(struct jt_jitwatch *jw, struct jfile *f, uint64_t size, uint32_t claims,
		      uint64_t now)
{
	const char *hint = "";
	uint32_t type;

	if (size != f->stuck_size || !f->stuck_ts) {
		f->stuck_size = size;
		f->stuck_ts = now;
	}
	if (!f->p.gone && (now - f->stuck_ts < STUCK_NS ||
			   jt_procfs__holds_fd(jw->proc_root, f->p.pid, f->fd) != 0))
		return false;
	memcpy(&type, jw->buf, sizeof(type));
	if (claims && type == JT_JITDUMP_CODE_LOAD && size - f->off > JT_JITDUMP_REC_HDR + 40 &&
	    !strncmp(jw->buf + JT_JITDUMP_REC_HDR + 40, "stub ", 5))
		hint = " (.NET stops so at a stub block under DOTNET_PerfMapEnabled=2: "
		       "add DOTNET_PerfMapStubGranularity=2, or use a perf map, =3)";
	if (claims)
		jt_err("%s (pid %u) ends at offset %llu inside a record that claims %u bytes, "
		       "%llu of them written: its writer stopped there, and its code after that "
		       "is unnamed%s", f->path, (unsigned int)f->p.pid,
		       (unsigned long long)f->off, claims, (unsigned long long)(size - f->off),
		       hint);
	else
		jt_err("%s (pid %u) ends at offset %llu inside a record's header: its writer "
		       "stopped there, and its code after that is unnamed", f->path,
		       (unsigned int)f->p.pid, (unsigned long long)f->off);
	jw->st.bad++;
	jt_watch__close(&jw->w, &f->p);
	f->p.refused = true;
	return true;
}

/* Read what f gained, up to READ_MAX bytes of records or until the poll's time is up
 * (then the next poll begins with it). */
static enum jt_watch_read file_read(struct jt_watch *w, struct jt_watch_proc *p, uint64_t now,
				    uint64_t floor, uint64_t until, jt_event_push_fn push,
				    void *ctx)
{
	struct jt_jitwatch *jw = (struct jt_jitwatch *)w;
	struct jfile *f = to_jfile(p);
	uint64_t budget = READ_MAX;
	struct stat st;
	int err = 0;

	(void)floor;
	if (fstat(f->fd, &st)) {
		refuse(jw, f, strerror(errno));
		return JT_WATCH_READ_ON;
	}
	if ((uint64_t)st.st_size < f->off)
		f->off = 0;	/* truncated, written anew: from its header again */
	if (!f->off && !read_header(jw, f, (uint64_t)st.st_size))
		return JT_WATCH_READ_ON;
	while (!err && budget && f->fd >= 0 && (uint64_t)st.st_size > f->off) {
		uint64_t left = (uint64_t)st.st_size - f->off;
		uint32_t size = 0, took;
		ssize_t n;

		/* the header and, in the same read, a code load's fields and name */
		n = pread(f->fd, jw->buf, left < PREFIX_MAX ? left : PREFIX_MAX, (off_t)f->off);
		if (n < JT_JITDUMP_REC_HDR) {	/* not all written yet, or never will be */
			cut_short(jw, f, (uint64_t)st.st_size, 0, now);
			break;
		}
		size = jt_jitdump__rec_size(jw->buf, (size_t)n);
		if (!size) {	/* nothing after it can be found */
			refuse(jw, f, "a record's size cannot be right");
			return JT_WATCH_READ_ON;
		}
		if (f->off + size > (uint64_t)st.st_size) {
			cut_short(jw, f, (uint64_t)st.st_size, size, now);
			break;	/* not all written yet, or never will be */
		}
		err = take_record(jw, f, size, (size_t)n, now, push, ctx);
		f->off += size;
		took = size < PREFIX_MAX ? size : PREFIX_MAX;	/* the code bytes are not read */
		budget = took < budget ? budget - took : 0;
		if (w->clock(w->clock_ctx) >= until)	/* the rest can wait for the next poll */
			return JT_WATCH_READ_CUT;
	}
	if (err && err != -EPROTO)
		refuse(jw, f, strerror(-err));
	return JT_WATCH_READ_ON;
}

/* A file is looked for a while after its process is seen or execs; an exec lets it go. */
static const struct jt_watch_format jitdump_format = {
	.proc_size = sizeof(struct jfile),
	.look_ns = LOOK_NS,
	.exec_closes = true,
	.open = file_open, .read = file_read, .close = file_close, .exec = file_exec,
};

void jt_jitwatch__poll(struct jt_jitwatch *jw, uint64_t now, uint64_t until,
		       jt_event_push_fn push, void *ctx)
{
	jt_watch__poll(&jw->w, now, 0, until, push, ctx);
}

void jt_jitwatch__stats(const struct jt_jitwatch *jw, struct jt_jitwatch_stats *st)
{
	*st = jw->st;
	st->files = jw->w.following;
}
