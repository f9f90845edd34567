// SPDX-License-Identifier: GPL-2.0
/* A directory of segments: each a complete log, rotated, the oldest deleted to bound it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log/log.h"
#include "base/membound.h"
#include "base/outfile.h"
#include "log/segment.h"
#include "log/segment_defs.h"
#include "base/util.h"

#define PART ".part"
#define SEQ_DIGITS 6
/* Look at the directory at least this often while writing: the notes grow beside us. */
#define RELIST_NS 1000000000ULL
/* What a definition kept holds beside its bytes: its entry, hash slot and malloc headers. */
#define DEF_OVERHEAD 96

struct jt_segment {
	struct jt_segment_opts o;
	struct jt_log_header hdr;	/* the next segment's; start_ns set as each begins */
	int dirfd;			/* locked: one recorder a directory */
	struct jt_segdefs *defs;
	struct jt_log_writer *w;	/* the open segment */
	struct jt_sink w_sink;
	char name[JT_SEGMENT_NAME_MAX];	/* its final name */
	char *shown;			/* DIR/NAME.part, for messages */
	uint64_t seq;			/* the next segment's number */
	uint64_t began;			/* CLOCK_MONOTONIC when the open one began */
	uint64_t last_ts;		/* the latest record's time */
	uint64_t records;		/* written to closed segments */
	uint64_t listed;		/* the directory's bytes when last looked at */
	uint64_t listed_open;		/* the open segment's bytes then */
	uint64_t listed_ns;		/* CLOCK_MONOTONIC then (0: never) */
	uint64_t charged;		/* to o.mem, for the definitions kept */
	struct jt_segment_stats st;
};

bool jt_segment__is_name(const char *name)
{
	size_t n = strlen(name), p = strlen(JT_SEGMENT_PREFIX), x = strlen(JT_SEGMENT_SUFFIX);

	return n > p + x && !strncmp(name, JT_SEGMENT_PREFIX, p) &&
	       !strcmp(name + n - x, JT_SEGMENT_SUFFIX);
}

/* The number a segment's name ends in (jitrace-DATE-TIME-SEQ.jtl[.part]), 0 if none. */
static uint64_t name_seq(const char *name)
{
	const char *dash = strrchr(name, '-');
	unsigned long long v;

	if (strncmp(name, JT_SEGMENT_PREFIX, strlen(JT_SEGMENT_PREFIX)) || !dash ||
	    sscanf(dash + 1, "%llu", &v) != 1)
		return 0;
	return v;
}

/* A closed segment in the directory. */
struct entry {
	char name[JT_SEGMENT_NAME_MAX];
	uint64_t bytes;
	int64_t mtime_ns;		/* CLOCK_REALTIME: when it was closed */
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

typedef void (*each_fn)(struct jt_segment *s, const char *name, const struct stat *st,
			void *ctx);

/* Call fn for every entry in the directory but . and .. 0 or -errno (reported). */
static int each_file(struct jt_segment *s, each_fn fn, void *ctx)
{
	int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		err = -errno;
		jt_err("%s: cannot list: %s", s->o.dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		fn(s, de->d_name, &st, ctx);
	}
	closedir(d);
	return 0;
}

/* At open: the next number, and what a recorder that died left open renamed. */
static void take_over(struct jt_segment *s, const char *name, const struct stat *st, void *ctx)
{
	size_t n = strlen(name), x = strlen(PART);
	char closed[JT_SEGMENT_NAME_MAX];
	uint64_t seq = name_seq(name);

	(void)ctx;
	if (!S_ISREG(st->st_mode))
		return;
	if (jt_segment__is_name(name) && seq >= s->seq)
		s->seq = seq + 1;
	if (n <= x || n - x >= sizeof(closed) || strcmp(name + n - x, PART))
		return;
	memcpy(closed, name, n - x);
	closed[n - x] = '\0';
	if (!jt_segment__is_name(closed))
		return;
	if (seq >= s->seq)
		s->seq = seq + 1;
	if (renameat(s->dirfd, name, s->dirfd, closed))
		jt_err("%s/%s: cannot rename it %s: %s", s->o.dir, name, closed, strerror(errno));
	else
		jt_err("%s/%s: left open by a recorder that stopped; kept as %s (read up to its "
		       "last whole block)", s->o.dir, name, closed);
}

struct listing {
	struct entry *v;
	size_t n, cap;
	uint64_t total;			/* every entry's bytes, as du counts them */
	int err;
};

static void list_one(struct jt_segment *s, const char *name, const struct stat *st, void *ctx)
{
	struct listing *l = ctx;
	size_t n = strlen(name), x = strlen(JT_SEGMENT_PUSHED);
	char seg[JT_SEGMENT_NAME_MAX];

	l->total += st->st_size;
	if (!S_ISREG(st->st_mode))
		return;
	if (jt_segment__is_name(name) && n < JT_SEGMENT_NAME_MAX) {
		if (jt_array_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v))) {
			l->err = -ENOMEM;
			return;
		}
		memcpy(l->v[l->n].name, name, n + 1);
		l->v[l->n].bytes = st->st_size;
		l->v[l->n].mtime_ns = st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
		l->n++;
		return;
	}
	/* a marker of a segment already deleted (the pusher was at it then) */
	if (n > x && n - x < sizeof(seg) && !strcmp(name + n - x, JT_SEGMENT_PUSHED)) {
		memcpy(seg, name, n - x);
		seg[n - x] = '\0';
		if (jt_segment__is_name(seg) &&
		    faccessat(s->dirfd, seg, F_OK, AT_SYMLINK_NOFOLLOW) &&
		    !unlinkat(s->dirfd, name, 0))
			l->total -= st->st_size;
	}
}

/* Delete a closed segment and what was noted of its push: the bytes that freed. */
static uint64_t delete_segment(struct jt_segment *s, const struct entry *e)
{
	char marker[JT_SEGMENT_NAME_MAX + 16];
	uint64_t freed = e->bytes;
	struct stat st;

	if (unlinkat(s->dirfd, e->name, 0) && errno != ENOENT) {
		jt_err("%s/%s: cannot delete: %s", s->o.dir, e->name, strerror(errno));
		return 0;
	}
	snprintf(marker, sizeof(marker), "%s%s", e->name, JT_SEGMENT_PUSHED);
	if (!fstatat(s->dirfd, marker, &st, AT_SYMLINK_NOFOLLOW) && !unlinkat(s->dirfd, marker, 0))
		freed += st.st_size;
	s->st.deleted++;
	return freed;
}

/* Whether the directory, at bytes, is within the size bound with its slack to spare. */
static bool fits(const struct jt_segment *s, uint64_t bytes)
{
	return !s->o.max_bytes || bytes + JT_SEGMENT_SLACK(s->o.max_bytes) <= s->o.max_bytes;
}

/*
 * Keep the directory within its bounds, oldest whole segments first: those that ended
 * max_age ago or more, then as many as the size bound needs for the directory, as du counts
 * it (the directory itself, the open segment and the push notes included), to take need
 * bytes more and the slack. -ENOSPC (reported) if it cannot, no closed segment being left;
 * else 0 or -errno.
 */
static int bound(struct jt_segment *s, uint64_t need)
{
	struct listing l = { 0 };
	struct timespec now;
	struct stat dst;
	uint64_t total;
	int64_t cutoff;
	size_t i;
	int err = each_file(s, list_one, &l);

	if (!err && l.err) {
		err = l.err;
		jt_err("%s: out of memory listing its segments", s->o.dir);
	}
	if (err) {
		free(l.v);
		return err;
	}
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_entry);
	clock_gettime(CLOCK_REALTIME, &now);
	cutoff = now.tv_sec * 1000000000LL + now.tv_nsec - (int64_t)s->o.max_age_ns;
	total = l.total + (fstat(s->dirfd, &dst) ? 0 : (uint64_t)dst.st_size);
	for (i = 0; i < l.n; i++) {
		bool old = s->o.max_age_ns && l.v[i].mtime_ns <= cutoff;
		bool big = !fits(s, total + need);

		if (!old && !big)
			break;
		total -= delete_segment(s, &l.v[i]);
	}
	s->st.kept = l.n - i;
	s->st.bytes = total;
	s->listed = total;
	s->listed_open = s->w ? jt_logw__bytes(s->w) : 0;
	s->listed_ns = jt_now_ns();
	free(l.v);
	if (!fits(s, total + need)) {
		jt_err("%s: --max-size %" PRIu64 " bytes: no room for %" PRIu64 " bytes more of "
		       "the open segment, its %" PRIu64 " bytes and %" PRIu64 " of the directory's "
		       "own, with no closed segment left to delete; give a larger bound", s->o.dir,
		       s->o.max_bytes, need, s->listed_open, total - s->listed_open);
		return -ENOSPC;
	}
	return 0;
}

/*
 * The open segment is about to grow by bytes: make room for them first. The directory is
 * looked at again only when what is known of it says the bound could be near, or a second
 * has passed (the push notes grow beside us).
 */
static int room(void *ctx, uint64_t bytes)
{
	struct jt_segment *s = ctx;
	uint64_t grown = s->w ? jt_logw__bytes(s->w) - s->listed_open : 0;

	if (!s->o.max_bytes)
		return 0;
	if (fits(s, s->listed + grown + bytes) && jt_now_ns() - s->listed_ns < RELIST_NS)
		return 0;
	return bound(s, bytes);
}

static int finish(struct jt_segment *s);
static int begin(struct jt_segment *s, uint64_t now);

/* Whether the open segment holds a quarter of the size bound: closed, whole ones can go. */
static bool over_quarter(const struct jt_segment *s)
{
	return s->o.max_bytes && jt_logw__bytes(s->w) > s->o.max_bytes / 4;
}

/* Keep the memory account up with the definitions kept for the next segment. */
static void charge_defs(struct jt_segment *s)
{
	struct jt_segdefs_stats d;
	uint64_t cost;

	if (!s->o.mem)
		return;
	jt_segdefs__stats(s->defs, &d);
	cost = d.held_bytes + d.held * DEF_OVERHEAD;
	if (cost > s->charged)
		jt_membound__charge(s->o.mem, cost - s->charged);
	else
		jt_membound__give(s->o.mem, s->charged - cost);
	s->charged = cost;
}

static int seg_record(void *ctx, const struct jt_rec_hdr *rec)
{
	struct jt_segment *s = ctx;
	int err;

	if (!s->w)	/* a close failed: the recording stops with that error */
		return -EIO;
	/* a poll may bring megabytes: the quarter is kept at every record, not every tick */
	if (over_quarter(s) && (err = finish(s) ?: bound(s, 0) ?: begin(s, jt_now_ns())))
		return err;
	s->last_ts = rec->ts;
	err = jt_segdefs__record(s->defs, rec);
	charge_defs(s);
	return err;
}

/* Begin the next segment at the time of the last record. */
static int begin(struct jt_segment *s, uint64_t now)
{
	time_t t;
	struct tm tm;
	char stamp[32], part[JT_SEGMENT_NAME_MAX + 8];
	size_t len;

	s->hdr.start_ns = s->last_ts;
	t = (time_t)((int64_t)(s->hdr.start_ns + s->hdr.realtime_offset_ns) / 1000000000LL);
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(s->name, sizeof(s->name), JT_SEGMENT_PREFIX "%s-%0*" PRIu64 JT_SEGMENT_SUFFIX,
		 stamp, SEQ_DIGITS, s->seq++);
	snprintf(part, sizeof(part), "%s" PART, s->name);
	free(s->shown);
	len = strlen(s->o.dir) + strlen(part) + 2;
	s->shown = malloc(len);
	if (!s->shown) {
		jt_err("%s: out of memory", s->o.dir);
		return -ENOMEM;
	}
	snprintf(s->shown, len, "%s/%s", s->o.dir, part);
	if (room(s, JT_LOG_HEADER_SIZE))	/* the header is written as it is made */
		return -ENOSPC;
	s->w = jt_logw__create_at(s->dirfd, part, s->shown, &s->hdr);
	if (!s->w)
		return -EIO;
	jt_logw__set_room(s->w, room, s);
	s->w_sink = jt_logw__sink(s->w);
	s->began = now;
	jt_segdefs__begin(s->defs, &s->w_sink);
	return 0;
}

/* Close the open segment: every kind of loss accounted for, the end record, its name. */
static int finish(struct jt_segment *s)
{
	char part[JT_SEGMENT_NAME_MAX + 8];
	int err;

	err = jt_segdefs__end(s->defs, s->last_ts);
	if (err) {
		jt_logw__flush(s->w);
		jt_logw__abort(s->w);
		s->w = NULL;
		return err;
	}
	s->records += jt_logw__records(s->w) + 1;	/* its end record too */
	err = jt_logw__close(s->w);
	s->w = NULL;
	snprintf(part, sizeof(part), "%s" PART, s->name);
	if (renameat(s->dirfd, part, s->dirfd, s->name)) {
		err = err ?: -errno;
		jt_err("%s: cannot rename it %s: %s", s->shown, s->name, strerror(errno));
		return err;
	}
	if (fsync(s->dirfd))	/* the name survives a crash too */
		jt_err("%s: fsync: %s", s->o.dir, strerror(errno));
	if (err)
		return err;
	s->st.closed++;
	if (s->o.closed)
		s->o.closed(s->o.ctx, s->name);
	return 0;
}

struct jt_segment *jt_segment__open(const struct jt_segment_opts *o)
{
	struct jt_segment *s = calloc(1, sizeof(*s));

	if (!s) {
		jt_err("%s: out of memory", o->dir);
		return NULL;
	}
	s->o = *o;
	s->hdr = *o->hdr;
	s->last_ts = o->hdr->start_ns;
	s->seq = 1;
	s->dirfd = jt_outfile__dir(o->dir);
	if (s->dirfd < 0)
		goto fail;
	if (flock(s->dirfd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			jt_err("%s: another jitrace records into it; give each its own directory",
			       o->dir);
		else
			jt_err("%s: cannot lock: %s", o->dir, strerror(errno));
		goto fail;
	}
	s->defs = jt_segdefs__new();
	if (!s->defs || each_file(s, take_over, NULL) || bound(s, 0) || begin(s, jt_now_ns()))
		goto fail;
	return s;
fail:
	jt_segment__free(s);
	return NULL;
}

struct jt_sink jt_segment__sink(struct jt_segment *s)
{
	return (struct jt_sink){ seg_record, s };
}

int jt_segment__tick(struct jt_segment *s, uint64_t now, bool close_now)
{
	bool due;

	if (!s->w)	/* a close failed: the recording stops with that error */
		return -EIO;
	due = now - s->began >= s->o.rotate_ns || over_quarter(s);

	/* the push notes grow beside us: the bound is kept on them too */
	if (!due && !close_now)
		return now - s->listed_ns >= RELIST_NS ? bound(s, 0) : 0;
	return finish(s) ?: bound(s, 0) ?: begin(s, now);
}

int jt_segment__flush(struct jt_segment *s)
{
	return s->w ? jt_logw__flush(s->w) : 0;
}

int jt_segment__close(struct jt_segment *s)
{
	if (!s->w)
		return 0;
	return finish(s) ?: bound(s, 0);
}

void jt_segment__free(struct jt_segment *s)
{
	char part[JT_SEGMENT_NAME_MAX + 8];

	if (!s)
		return;
	if (s->w) {
		bool empty = !jt_logw__records(s->w);

		jt_logw__flush(s->w);
		jt_logw__abort(s->w);
		snprintf(part, sizeof(part), "%s" PART, s->name);
		if (empty)	/* nothing recorded: nothing to keep */
			unlinkat(s->dirfd, part, 0);
		else if (!renameat(s->dirfd, part, s->dirfd, s->name))
			jt_err("%s/%s: kept as it is (read up to its last whole block)", s->o.dir,
			       s->name);
	}
	if (s->dirfd >= 0)
		close(s->dirfd);
	jt_membound__give(s->o.mem, s->charged);
	jt_segdefs__free(s->defs);
	free(s->shown);
	free(s);
}

void jt_segment__stats(const struct jt_segment *s, struct jt_segment_stats *st)
{
	struct jt_segdefs_stats d;

	jt_segdefs__stats(s->defs, &d);
	*st = s->st;
	st->records = s->records + (s->w ? jt_logw__records(s->w) : 0);
	st->rewritten = d.rewritten;
	st->held_bytes = d.held_bytes;
}

const char *jt_segment__dir(const struct jt_segment *s)
{
	return s->o.dir;
}
